"""Test markers, and a guard that keeps them honest.

`multiprocess` marks every test that starts ranks (local processes, torchrun-style subprocesses) or a
testbed; `testbed` marks those that bring up network namespaces, and implies `multiprocess`; `slow` marks
the long cases (exhaustive sweeps, large inputs, the browser) whose quick case of the same check stays in
the core. So `pytest -m "not multiprocess and not slow"` runs the quick core, and `make test` runs all. A
test without the mark that starts a process anyway fails, naming the mark it needs: a forgotten mark cannot
slip a slow test into the core."""

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


_ORIGINAL_START = multiprocessing.process.BaseProcess.start
_ORIGINAL_POPEN = subprocess.Popen.__init__
_active: list = []  # the node id of the unmarked test now running, if any (set and cleared per phase)


def _refuse(what: str):
    pytest.fail(
        f"{_active[0]} {what}: mark it @pytest.mark.multiprocess (or testbed), so that "
        f'`pytest -m "not multiprocess"` stays the quick core',
        pytrace=False,
    )


def _start(process):
    if _active:
        _refuse(f"starts a process ({process.name})")
    return _ORIGINAL_START(process)


def _popen(popen_self, args, *rest, **kwargs):
    if _active and _starts_ranks(args):
        _refuse(f"runs `{' '.join(map(str, args)) if not isinstance(args, str) else args}`")
    return _ORIGINAL_POPEN(popen_self, args, *rest, **kwargs)


# installed once for the session and switched on per test: patching and restoring per test could leave a
# stale wrapper behind (naming an earlier test) when a test's helper thread outlived it
multiprocessing.process.BaseProcess.start = _start
subprocess.Popen.__init__ = _popen


class _Guard:
    """While an unmarked test runs: starting a process, or a subprocess that runs ranks, fails the test."""

    def __init__(self, name: str):
        self.name = name

    def __enter__(self):
        _active[:] = [self.name]
        return self

    def __exit__(self, *exc):
        _active.clear()
        return False


def _guarded(item):
    return not item.get_closest_marker("multiprocess")


def _under_guard(item):
    if _guarded(item):
        with _Guard(item.nodeid):
            yield
    else:
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    # module- and session-scoped fixtures run here: a fixture that starts ranks counts for its test
    yield from _under_guard(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    yield from _under_guard(item)
