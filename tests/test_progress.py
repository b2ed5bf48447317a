"""Progress of long commands: shown on a terminal (driven here through a pseudo-terminal), nothing extra when
stderr is piped or under --json.

calibrate and validate run their real command line, API and progress; their measurements (seconds of ranks
each) are replaced by quick stand-ins in the child process, so that these tests stay fast. The testbed case
runs a real calibration on a two-host testbed where the machine allows one (root)."""

import json
import os
import pty
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import collperf
from testbed_support import bed_name, needs_root
from collperf.cli.bench_stream import BenchStream

EXAMPLES = Path(__file__).parent.parent / "examples"
LOGS = [
    str(EXAMPLES / n)
    for n in (
        "01_superbench-a100x8-allreduce.txt",
        "10_pcie-2080ti-x2-allreduce.txt",
        "14_h100-ib400-2node-16gpu-allreduce.txt",
    )
]

# the measurements behind calibrate and validate, replaced by quick stand-ins; the rest is the real program
STAND_INS = """
import sys
import collperf.lab.calibrate as calibration
import collperf.lab.validate as validation

# what runtime/measure.calibrate returns for two ranks of one host
MEASURED = {"ranks": 2, "ranks_per_host": 2, "intra": {"latency_s": 1e-5, "bandwidth_Bps": 1e9},
            "allreduce_alpha_s": 2e-5, "reduce_bandwidth_Bps": 1e10}

def calibrate(ranks=None, testbed=None, timeout_s=300.0, big_bytes=16 << 20):
    calibration.check_ranks(ranks, testbed)
    return calibration.profile_from(dict(MEASURED), 1, 2)

def validate(network, testbed=None, ranks=None, sizes=(), grid=None, iters=5, timeout_s=600.0, on_step=None):
    for collective in ("allreduce", "allgather"):
        on_step(f"measuring {collective}")
    return []

# each module that calls them holds its own name for them
import collperf.api.runs as api_runs
api_runs.calibrate_here = validation.calibrate = calibration.calibrate = calibrate
validation.validate = validate
from collperf.cli import main
sys.argv = ["collperf", *sys.argv[1:]]
main()
"""


def _drain(fd: int, chunks: list) -> None:
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError:  # EIO: the child's side of the terminal is closed
            return
        if not data:
            return
        chunks.append(data)


def run(args, terminal: bool, stand_ins: bool = False, cwd=None):
    """(exit code, stdout, stderr) of the command line, its stderr a pseudo-terminal or a pipe."""
    cmd = [sys.executable, "-c", STAND_INS, *args] if stand_ins else [sys.executable, "-m", "collperf", *args]
    # the collperf under test, whatever the child's working folder
    here = str(Path(collperf.__file__).parents[1])
    env = {
        **os.environ,
        "TERM": "xterm",
        "COLUMNS": "120",
        "PYTHONPATH": os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p),
    }
    if not terminal:
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
        return done.returncode, done.stdout, done.stderr
    main, child = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=child, stdin=subprocess.DEVNULL, env=env, cwd=cwd)
    os.close(child)
    chunks: list = []
    reader = threading.Thread(target=_drain, args=(main, chunks), daemon=True)
    reader.start()
    try:
        out, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.join(timeout=10)
        os.close(main)
    return proc.returncode, out.decode(), b"".join(chunks).decode(errors="replace")


# each case starts three CLI processes (about a second each): slow; the core keeps the in-process check below
@pytest.mark.slow
@pytest.mark.parametrize("command", ["fit", "diagnose"])
def test_many_logs_show_progress_on_a_terminal_only(command):
    code, out, tty = run([command, *LOGS], terminal=True)
    assert code == 0, tty
    assert "reading logs" in tty or "read 3/3" in tty
    assert ("fitted 3/3" if command == "fit" else "judged 3/3") in tty  # the bar's last state, drawn as it stops
    code, piped_out, piped_err = run([command, *LOGS], terminal=False)
    assert code == 0 and "read" not in piped_err and "judged" not in piped_err and "fitted" not in piped_err
    assert piped_err.strip() == ""
    code, json_out, json_tty = run([command, *LOGS, "--json"], terminal=True)
    assert code == 0 and "read 3/3" not in json_tty and "reading logs" not in json_tty
    assert len(json.loads(json_out) if command == "fit" else json.loads(json_out)["diagnoses"]) == 3


@pytest.mark.slow
def test_calibrate_shows_progress_on_a_terminal_only(tmp_path):
    code, out, tty = run(["calibrate", "--ranks", "2", "-o", "p.json"], terminal=True, stand_ins=True, cwd=tmp_path)
    assert code == 0, tty
    assert "calibrating" in tty and "profile written to p.json" in out
    code, out, err = run(["calibrate", "--ranks", "2", "-o", "q.json"], terminal=False, stand_ins=True, cwd=tmp_path)
    assert code == 0 and "calibrating" not in err and (tmp_path / "q.json").exists()


@pytest.mark.slow
def test_validate_shows_its_phases_on_a_terminal_and_nothing_under_json(tmp_path):
    args = ["validate", "--ranks", "2", "--sizes", "1K"]
    code, out, tty = run(args, terminal=True, stand_ins=True, cwd=tmp_path)
    assert code == 0, tty
    assert "measuring allgather" in tty  # the last phase, drawn as the bar stops
    code, out, tty = run([*args, "--json"], terminal=True, stand_ins=True, cwd=tmp_path)
    assert code == 0 and "measuring" not in tty and "calibrating" not in tty
    json.loads(out)
    code, out, err = run(args, terminal=False, stand_ins=True, cwd=tmp_path)
    assert code == 0 and "measuring" not in err


@needs_root
def test_calibrate_on_a_testbed_shows_progress_on_a_terminal(tmp_path):
    """The real thing: a two-host testbed, calibrated under a pseudo-terminal."""
    spec = f"hosts=2,rate=1gbit,name={bed_name('pg')}"
    code, out, tty = run(["calibrate", "--testbed", spec, "-o", "p.json"], terminal=True, cwd=tmp_path)
    assert code == 0, tty
    assert "calibrating" in tty and json.loads((tmp_path / "p.json").read_text())["inter"] is not None


@pytest.mark.slow
def test_plan_search_shows_progress_on_a_terminal_only():
    args = ["plan", "--model", "70b", "--cluster", "dgx-h100", "--nodes", "2"]
    code, out, tty = run(args, terminal=True)
    assert code == 0, tty
    assert "planned" in tty and "layouts" in tty  # the bar's last state, drawn as it stops
    code, out, err = run(args, terminal=False)
    assert code == 0 and "planned" not in err and "considered" not in err
    code, out, tty = run([*args, "--json"], terminal=True)
    assert code == 0 and "planned" not in tty
    json.loads(out)


def test_bench_stream_shows_its_bar_on_a_terminal_but_never_under_json(monkeypatch):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert BenchStream(as_json=False).progress and not BenchStream(as_json=True).progress
    assert not BenchStream(as_json=False, progress=False).progress
