"""Nothing left behind by a killed launcher: its temporary directory names its owner (pid and start time), the
next command removes the directories of dead owners, and no semaphore is leaked (the ranks report on pipes).
Each test has its own temporary directory (TMPDIR), so that what it checks is its own."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from collperf.runtime import owned
from testbed_support import bed_name, needs_root
from rank_support import children as _children
from collperf.lab.testbed import owners, switch

VENV_BIN = Path(sys.executable).parent
CLI = str(VENV_BIN / "collperf")


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
    except OSError:  # gone meanwhile (the testbed's short `ip` commands)
        return ""


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _ours(tmp: Path) -> list[str]:
    """What runs left in the temporary directory (the testbeds' owner records directory counts when not empty)."""
    return sorted(p.name for p in tmp.iterdir() if not (p.name == "collperf-testbeds" and not any(p.iterdir())))


def _wait_for(what, within_s: float = 180, poll_s: float = 0.01):
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        got = what()
        if got:
            return got
        time.sleep(poll_s)
    raise AssertionError("the run did not get there")


def _rows_seen(proc, count: int) -> bool:
    """Read the launcher's stdout until `count` rows are out (the table streams)."""
    rows = 0
    for line in proc.stdout:
        if line.strip() and not line.startswith("#"):
            rows += 1
            if rows == count:
                return True
    return False


def _kill_at(cmd: list[str], env: dict, tmp: Path, moment: str) -> None:
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    workers = []
    try:
        if moment == "temp directory made":
            _wait_for(lambda: [p for p in tmp.iterdir() if p.name.startswith("collperf-")], poll_s=0.002)
        elif moment == "ranks spawned":
            workers = _wait_for(
                lambda: [
                    c
                    for c in _children(proc.pid)
                    if "spawn_main" in _cmdline(c) or "collperf.runtime.worker" in _cmdline(c)
                ],
                poll_s=0.002,
            )
        elif moment == "ranks ready":
            _wait_for(lambda: proc.stdout.readline().startswith("#  Rank"), poll_s=0)
        else:
            assert _rows_seen(proc, {"first row": 1, "third row": 3}[moment]), moment
        workers = workers or _children(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        _, err = proc.communicate(timeout=120)  # the ranks hold stderr until they are gone too
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # (a rank being spawned at the kill may print multiprocessing's own EOFError: its parent died mid-handover)
    assert "leaked semaphore" not in err, (moment, err)
    _wait_for(lambda: not [w for w in workers if _alive(w)], within_s=120, poll_s=0.2)


MOMENTS = ("temp directory made", "ranks spawned", "ranks ready", "first row", "third row")


@pytest.mark.multiprocess
def test_a_launcher_killed_at_five_moments_leaves_nothing_after_the_next_run(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    cmd = [
        CLI,
        "bench",
        "--ranks",
        "2",
        "-A",
        "ring",
        "-b",
        "1K",
        "-e",
        "64M",
        "-n",
        "5",
        "-w",
        "1",
        "--timeout",
        "300",
    ]
    for moment in MOMENTS:
        _kill_at(cmd, env, tmp, moment)
    assert [p for p in _ours(tmp) if p.startswith("collperf-run-")], "a killed launcher left no directory to remove"
    done = subprocess.run(
        [CLI, "bench", "--ranks", "1", "-A", "ring", "-b", "8", "-e", "8", "-n", "1", "-w", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert _ours(tmp) == []


@needs_root
def test_a_launcher_killed_on_a_testbed_leaves_nothing_after_testbed_down(tmp_path):
    from testbed_support import leftovers

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    name = bed_name("lk")
    cmd = [
        CLI,
        "bench",
        "--testbed",
        f"hosts=2,rate=1gbit,name={name}",
        "-A",
        "ring",
        "-b",
        "1K",
        "-e",
        "64M",
        "-n",
        "5",
        "-w",
        "1",
        "--timeout",
        "300",
    ]
    for moment in MOMENTS:
        _kill_at(cmd, env, tmp, moment)
    assert leftovers(name)["namespaces"], "the killed launchers left no testbed to remove"
    down = subprocess.run([CLI, "testbed", "down"], env=env, capture_output=True, text=True, timeout=300)
    assert down.returncode == 0, down.stderr
    assert _ours(tmp) == []
    assert not any(leftovers(name).values()), leftovers(name)


def test_the_sweep_removes_only_what_dead_owners_left(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    me, ticks = os.getpid(), owned.start_ticks(os.getpid())
    made = {
        "mine": tmp_path / f"collperf-run-{me}-{ticks}-abc",  # a live owner
        "reused pid": tmp_path / f"collperf-run-{me}-{ticks + 1}-abc",  # this pid, another start time
        "dead": tmp_path / f"collperf-tb-{dead.pid}-1-abc",
        "not ours": tmp_path / "collperf-testbeds",
        "other": tmp_path / "collperf-xyz",
    }
    for path in made.values():
        path.mkdir()
    # the owner file wins over the name: a live owner recorded inside a dead-looking name stays
    (made["dead"] / "owner").write_text(json.dumps({"pid": dead.pid, "start_ticks": 1}))
    inside = tmp_path / f"collperf-run-{dead.pid}-1-def"
    inside.mkdir()
    (inside / "owner").write_text(json.dumps({"pid": me, "start_ticks": ticks}))
    removed = owned.sweep(str(tmp_path))
    assert sorted(removed) == sorted([str(made["reused pid"]), str(made["dead"])])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [made["mine"].name, "collperf-testbeds", "collperf-xyz", inside.name]
    )


def test_a_run_removes_its_own_directory(tmp_path, monkeypatch):
    monkeypatch.setattr(owned.tempfile, "tempdir", str(tmp_path))
    with owned.tempdir("run") as path:
        assert json.loads((Path(path) / "owner").read_text())["pid"] == os.getpid()
    assert list(tmp_path.iterdir()) == []


def test_a_run_taking_a_testbed_removes_those_whose_holder_died(tmp_path, monkeypatch):
    monkeypatch.setattr(owners, "OWNERS_DIR", tmp_path)
    removed = []
    monkeypatch.setattr(switch, "_remove", lambda name: removed.append(name) or [])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / "gone.json").write_text(json.dumps({"pid": dead.pid, "start_ticks": 1, "by": "bench"}))
    owners.claim("kept", by="user")
    switch.take("new")
    assert removed == ["new", "gone"]  # its own name first, then the dead holder's
    assert owners.names() == ["kept", "new"]
