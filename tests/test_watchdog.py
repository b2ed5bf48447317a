"""The progress watchdog: every phase of a run is bounded by 'no progress from a rank for max(10 s, k x the
step's expected time)', and a stopped rank ends the run naming the rank, its pid and its phase, well before
the run's overall timeout."""

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from collperf.runtime import stall
from collperf.runtime.pace import CHECK_FACTOR, PRIOR_LATENCY_S, PRIOR_RATE_Bps, Pace
from collperf.runtime.stall import FLOOR_S, K, Ranks
from rank_support import pids_until_first_row
from collperf import ingest

VENV_BIN = Path(sys.executable).parent


class _Proc:
    def __init__(self, pid):
        self.pid = pid


class _Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    c = _Clock()
    monkeypatch.setattr(stall.time, "monotonic", c)
    return c


def _ready(ranks: Ranks) -> None:
    for r in range(len(ranks.procs)):
        ranks.heard(r, "ready", None)


def test_the_bound_is_the_floor_or_k_times_the_expected_time(clock, monkeypatch):
    monkeypatch.setattr(stall, "proc_state", lambda pid: "S")
    ranks = Ranks([_Proc(11), _Proc(12)])
    _ready(ranks)
    for r in (0, 1):
        ranks.heard(r, "progress", (1, "ring 8 B out-of-place: timed loop", 0, 0.001))
    assert ranks.bound_s(0) == FLOOR_S  # 20 x 1 ms is under the floor
    ranks.heard(1, "progress", (2, "ring 1 GB out-of-place: timed loop", 0, 3.0))
    assert ranks.bound_s(1) == K * 3.0  # 60 s: over the floor
    clock.now += FLOOR_S - 0.5
    for r in (0, 1):  # heartbeats with nothing moved: not progress
        ranks.heard(r, "beat", tuple(ranks.where[r]) + (ranks.expected_s[r],))
    assert ranks.watchdog({}, {}, {}) is None
    clock.now += 1.0  # rank 0 past its 10 s, rank 1 within its 60 s
    message, culprit = ranks.watchdog({}, {}, {})
    assert "rank 0 (pid 11)" in culprit and "timed loop" in culprit, culprit
    assert "no progress from rank 0 for 10 s" in message


def test_iterations_are_progress_and_done_ranks_are_not_judged(clock, monkeypatch):
    monkeypatch.setattr(stall, "proc_state", lambda pid: "S")
    ranks = Ranks([_Proc(11), _Proc(12)])
    _ready(ranks)
    for tick in range(1, 30):  # 29 s of one step, an iteration every second
        clock.now += 1.0
        for r in (0, 1):
            ranks.heard(r, "beat", (1, "ring 8 B out-of-place: timed loop", tick, 0.5))
        assert ranks.watchdog({}, {}, {}) is None
    clock.now += 100.0
    assert ranks.watchdog({0: None, 1: None}, {}, {}) is None  # both finished: nothing to watch


def test_a_stopped_rank_is_the_one_named_while_the_others_wait(clock, monkeypatch):
    monkeypatch.setattr(stall, "proc_state", lambda pid: "T" if pid == 12 else "S")
    ranks = Ranks([_Proc(11), _Proc(12), _Proc(13)])
    _ready(ranks)
    for r in range(3):
        ranks.heard(r, "progress", (5, "tree 4 KB in-place: check", 0, 0.01))
    clock.now += FLOOR_S + 1
    for r in (0, 2):  # the waiting ranks still beat
        ranks.heard(r, "beat", (5, "tree 4 KB in-place: check", 0, 0.01))
    message, culprit = ranks.watchdog({}, {}, {})
    assert culprit == "no progress from rank 1 (pid 12) at step 5 (tree 4 KB in-place: check)"
    assert "rank 1 (pid 12) is stopped (SIGSTOP" in message
    assert "ranks 0, 2 were waiting for it" in message


def test_while_starting_only_a_stopped_rank_is_judged(clock, monkeypatch):
    state = {"pid": "S"}
    monkeypatch.setattr(stall, "proc_state", lambda pid: state["pid"] if pid == 12 else "S")
    ranks = Ranks([_Proc(11), _Proc(12)])
    ranks.heard(0, "ready", None)
    clock.now += 100.0  # rank 1 silent (importing, holding the interpreter)
    assert ranks.watchdog({}, {}, {}) is None  # the start-up timeout's to judge
    state["pid"] = "T"
    message, culprit = ranks.watchdog({}, {}, {})
    assert "rank 1 (pid 12) is stopped" in message and "before its Python started" in culprit


def test_the_expected_time_per_iteration():
    pace = Pace()
    assert pace.expected_s(1 << 20) == pytest.approx(PRIOR_LATENCY_S + 2 * (1 << 20) / PRIOR_RATE_Bps)
    pace.measured(1000, 0.002)
    assert pace.expected_s(4000) == pytest.approx(0.008)  # linear in the size past the last one
    assert pace.expected_s(10) == pytest.approx(0.002)  # never below the last measured
    assert pace.expected_s(4000, "check") == pytest.approx(0.008 * CHECK_FACTOR)


def _release(pid: int) -> None:
    for sig in (signal.SIGCONT, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


@pytest.mark.multiprocess
def test_a_stopped_rank_ends_the_run_long_before_its_timeout(tmp_path):
    """SIGSTOP rank 1 once the first row is out, with a 600 s timeout: the watchdog ends the run (the recorded
    cause is 'stalled', not 'timed out'), and text, JSON and CSV name the rank, its pid and its phase."""
    cmd = [
        str(VENV_BIN / "collperf"),
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
        "20",
        "-w",
        "1",
        "--timeout",
        "600",
        "-J",
        str(tmp_path / "r.json"),
        "--csv",
        str(tmp_path / "r.csv"),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        pids, lines = pids_until_first_row(proc)  # the rows stream: read until the first one
        assert len(pids) == 2, "".join(lines)
        os.kill(pids[1], signal.SIGSTOP)
        rest, err = proc.communicate(timeout=590)  # a hang is caught here, below the run's own timeout
    finally:
        if pids:
            _release(pids[1])
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    out = "".join(lines) + rest
    assert proc.returncode == 1, err
    assert "Traceback" not in err
    said = " ".join(err.split())  # the error line may be wrapped to the terminal's width
    assert "did not finish within its timeout" not in said
    assert re.search(
        rf"error: stalled after \d+ rows?: no progress from rank 1 for \d+ s .*rank 1 \(pid {pids[1]}\) "
        r"is stopped \(SIGSTOP.* at step \d+ \(ring \d+ B (out-of-place|in-place): [a-z -]+\)",
        said,
    ), said
    n = int(re.search(r"stalled after (\d+) rows?", said).group(1))
    footer = f"stalled after {n} row{'s' if n != 1 else ''}: no progress from rank 1 (pid {pids[1]})"
    assert f"# collperf bench {footer}" in out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["complete"] is False and doc["stopped"].startswith(footer)
    assert footer in (tmp_path / "r.csv").read_text()
    assert sum(len(t.rows) for t in ingest.load(tmp_path / "r.csv")) == 2 * n
