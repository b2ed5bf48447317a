"""The marker guard of conftest.py: an unmarked test that starts ranks fails, naming the mark it needs."""

import multiprocessing

import pytest

from conftest import _Guard, _starts_ranks


def test_what_counts_as_starting_ranks():
    assert _starts_ranks(["/venv/bin/collperf", "bench", "--ranks", "2"])
    assert _starts_ranks(["python", "-m", "collperf", "calibrate", "--ranks", "2"])
    assert _starts_ranks(["ip", "netns", "exec", "cptb-h0", "python"])
    assert not _starts_ranks(["python", "-m", "collperf", "predict", "allreduce"])
    assert not _starts_ranks(["collperf", "bench", "--help"])
    assert not _starts_ranks("python -c 'import collperf'")


def test_the_guard_refuses_a_process_and_restores_start():
    start = multiprocessing.process.BaseProcess.start
    with pytest.raises(pytest.fail.Exception, match="mark it @pytest.mark.multiprocess"):
        with _Guard("a test"):
            multiprocessing.get_context("spawn").Process(target=print).start()
    assert multiprocessing.process.BaseProcess.start is start
