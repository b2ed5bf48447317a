"""Running the command line in-process for tests of its errors."""

import sys

import pytest

from collperf import cli


def cli_error(capsys, *args) -> str:
    """The message of a command that must end with a usage error (exit 2, no traceback), spaces normalised
    (the terminal wraps long lines)."""
    old = sys.argv
    sys.argv = ["collperf", *map(str, args)]
    try:
        with pytest.raises(SystemExit) as info:
            cli.main()
    finally:
        sys.argv = old
    err = capsys.readouterr().err
    assert info.value.code == 2 and "Traceback" not in err, err
    return " ".join(err.split())
