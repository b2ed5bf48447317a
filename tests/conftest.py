"""Test markers, and a guard that keeps them honest.

`multiprocess` marks every test that starts ranks (local processes, torchrun-style subprocesses) or a
testbed; `testbed` marks those that bring up network namespaces, and implies `multiprocess`. So
`pytest -m "not multiprocess"` runs the quick core. A test without the mark that starts a process
anyway fails, naming the mark it needs: a forgotten mark cannot slip a slow test into the core."""

import multiprocessing.process
import subprocess

import pytest

# what starts ranks or a testbed when run as a subprocess: collperf's run commands, `ip netns`
RUN_COMMANDS = {"bench", "calibrate", "validate", "bound"}


def pytest_collection_modifyitems(items):
    for item in items:
        if item.get_closest_marker("testbed") and not item.get_closest_marker("multiprocess"):
            item.add_marker(pytest.mark.multiprocess)


def _starts_ranks(argv) -> bool:
    if isinstance(argv, (str, bytes)):
        argv = str(argv).split()
    argv = [str(a) for a in argv]
    if argv[:2] == ["ip", "netns"]:
        return True
    runs_collperf = any(a == "collperf" or a.endswith("/collperf") for a in argv)
    return runs_collperf and any(a in RUN_COMMANDS for a in argv) and "--help" not in argv


class _Guard:
    """While an unmarked test runs: starting a process, or a subprocess that runs ranks, fails the test."""

    def __init__(self, name: str):
        self.name = name
        self.start = multiprocessing.process.BaseProcess.start
        self.popen = subprocess.Popen.__init__

    def _refuse(self, what: str):
        pytest.fail(f"{self.name} {what}: mark it @pytest.mark.multiprocess (or testbed), so that "
                    f"`pytest -m \"not multiprocess\"` stays the quick core", pytrace=False)

    def __enter__(self):
        guard = self

        def start(process):
            guard._refuse(f"starts a process ({process.name})")

        def popen(popen_self, args, *rest, **kwargs):
            if _starts_ranks(args):
                guard._refuse(f"runs `{' '.join(map(str, args)) if not isinstance(args, str) else args}`")
            return guard.popen(popen_self, args, *rest, **kwargs)

        multiprocessing.process.BaseProcess.start = start
        subprocess.Popen.__init__ = popen
        return self

    def __exit__(self, *exc):
        multiprocessing.process.BaseProcess.start = self.start
        subprocess.Popen.__init__ = self.popen
        return False


def _guarded(item):
    return not item.get_closest_marker("multiprocess")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    # module- and session-scoped fixtures run here: a fixture that starts ranks counts for its test
    if _guarded(item):
        with _Guard(item.nodeid):
            yield
    else:
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    if _guarded(item):
        with _Guard(item.nodeid):
            yield
    else:
        yield
