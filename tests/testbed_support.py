"""What the testbed tests share: when they can run, this run's testbed names, leftover checks, a killed rank.

Two test runs (two `make test`, or a developer's run beside CI) must not share testbeds: each run names its
testbeds with a tag from its pid, and marks the ranks it starts (the environment is inherited through `ip netns
exec`) so that a leftover check counts this run's workers only."""

import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from collperf.lab.testbed import switch as T

SKIPPED_BY_USER = os.environ.get("COLLPERF_SKIP_NETNS", "") not in ("", "0")
SUPPORTED = platform.system() == "Linux" and os.geteuid() == 0 and shutil.which("ip") and shutil.which("tc")
_skip_unless_root = pytest.mark.skipif(
    not SUPPORTED or SKIPPED_BY_USER,
    reason="COLLPERF_SKIP_NETNS is set" if SKIPPED_BY_USER else "the testbed needs Linux, root and iproute2 (ip, tc)",
)


def needs_root(test):
    """A testbed test: skipped where namespaces cannot be made, marked `testbed` (so also `multiprocess`)."""
    return pytest.mark.testbed(_skip_unless_root(test))


CLI = str(Path(sys.executable).parent / "collperf")

RUN_TAG = "".join("0123456789abcdefghijklmnopqrstuvwxyz"[os.getpid() // 36**i % 36] for i in range(3))
os.environ["COLLPERF_TEST_RUN"] = RUN_TAG


def bed_name(tag: str) -> str:
    """This run's testbed `tag` (up to 3 characters): a name of at most 6, the testbed's limit."""
    assert 1 <= len(tag) <= 3
    return f"{tag}{RUN_TAG}"


def _ours(pid: str) -> bool:
    try:
        return f"COLLPERF_TEST_RUN={RUN_TAG}".encode() in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:  # gone meanwhile, or not ours to read
        return False


def leftovers(name: str) -> dict:
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    procs = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout.splitlines()
    return {
        "namespaces": T.namespaces(name),
        "veths": [v for v in links.splitlines() if f"{T.PREFIX}{name}" in v],
        "workers": [p for p in procs if "collperf.runtime.worker" in p and _ours(p.split()[0])],
    }


def nothing_left(name: str) -> bool:
    return not any(leftovers(name).values())


def kill_a_rank_mid_run(cmd: list[str], name: str, ranks: int) -> None:
    """Start `cmd` (a long bench on testbed `name`), SIGKILL one of its ranks once all have started, and check
    that the run ends with the dead rank named and leaves nothing behind."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline, pids = time.monotonic() + 90, []
        while len(pids) < ranks and time.monotonic() < deadline:
            time.sleep(0.5)
            pids = [
                p
                for n in T.namespaces(name)
                for p in subprocess.run(["ip", "netns", "pids", n], capture_output=True, text=True).stdout.split()
            ]
        assert len(pids) >= ranks, "the ranks did not start"
        time.sleep(3)
        os.kill(int(pids[-1]), signal.SIGKILL)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode != 0 and "died (SIGKILL)" in err, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert nothing_left(name)
