"""collperf.errors.run_main: a script's user mistake or failed run ends with its message, not a traceback."""

import pytest

from collperf.errors import RunError, UsageError, run_main


@pytest.mark.parametrize("error, status", [(UsageError("bad --min-time -1"), 2), (RunError("rank 1 died"), 1)])
def test_a_collperf_error_ends_with_its_message_and_status(error, status, capsys):
    def main():
        raise error

    with pytest.raises(SystemExit) as ended:
        run_main(main)
    assert ended.value.code == status
    assert capsys.readouterr().err == f"error: {error}\n"


def test_any_other_error_is_a_bug_and_keeps_its_traceback():
    def main():
        raise KeyError("x")

    with pytest.raises(KeyError):
        run_main(main)


def test_a_main_that_returns_returns():
    ran = []
    run_main(lambda: ran.append(1))
    assert ran == [1]
