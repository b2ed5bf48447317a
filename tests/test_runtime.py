"""Real processes on gloo: every algorithm bit-exact, built-ins, failures end cleanly, the bench table."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="the runtime needs torch (pip install -e '.[run]')")

from collperf.bench import run  # noqa: E402
from collperf.spec import SweepSpec  # noqa: E402
from collperf.errors import UsageError  # noqa: E402
from collperf.model.algorithms import ALGORITHMS  # noqa: E402
from collperf.results import to_csv, to_json, to_text  # noqa: E402
from collperf.runtime.launch import Job, RunError, run_local  # noqa: E402

COLLECTIVES = ("allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall", "scatter", "gather",
               "sendrecv")
VENV_BIN = Path(sys.executable).parent


def cases_for(p: int, counts=(0, 1, 3, 7, 65)):
    """Every algorithm and built-in at sizes 0, 1 element, fewer than p, not divisible by p; then dtypes
    and ops on the reducing collectives; roots other than 0."""
    names = [(a.collective, a.name) for a in ALGORITHMS if not a.unavailable(p)] + [(c, "builtin") for c in COLLECTIVES]
    cases = [(c, a, n, "float32", "sum", 0, 2, 16, False) for c, a in names for n in counts]
    for dtype, op in [("float64", "prod"), ("float16", "min"), ("bfloat16", "max"), ("int32", "sum"),
                      ("int64", "max"), ("float32", "avg"), ("bfloat16", "sum")]:
        for c, a in names:
            if c in ("allreduce", "reduce", "reducescatter"):
                cases.append((c, a, 9, dtype, op, 0, 3, 8, False))
    for c, a in names:
        if c in ("broadcast", "reduce", "scatter", "gather"):
            cases.append((c, a, 5, "float32", "sum", p - 1, 2, 1 << 20, False))
        if c not in ("alltoall", "sendrecv"):
            cases.append((c, a, 6, "float32", "sum", 0, 1, 1 << 20, True))   # in-place
    return cases


@pytest.mark.parametrize("p", [1, 2, 3, 4, 6])
def test_every_algorithm_is_bit_exact(p):
    results = run_local(Job("collperf.runtime.measure:selftest", (cases_for(p) if p != 6 else cases_for(p, (5, 13)),)),
                        p, timeout_s=240)
    wrong = [(case, w) for case, w in results if w]
    assert not wrong, wrong[:5]
    assert len(results) > 100


def test_a_wrong_schedule_is_counted_as_wrong(monkeypatch):
    # the check is not vacuous: a run whose result is wrong reports #wrong > 0
    results = run_local(Job("collperf.runtime.measure:selftest",
                            ([("allreduce", "ring", 10, "float32", "sum", 0, 1, 1 << 20, False)],)), 2, 60)
    assert results[0][1] == 0
    from collperf.runtime import data
    want = data.expected_output("allreduce", 0, 2, 10, torch.float32, "sum")
    bad = want.clone()
    bad[3] += 1
    assert data.count_wrong(bad, want) == 1


def test_a_rank_that_raises_ends_the_run_with_its_message():
    start = time.monotonic()
    with pytest.raises(RunError, match=r"rank 0 of 2 failed: .*cannot read size 'bogus'"):
        run_local(Job("collperf.units:parse_size", ("bogus",)), 2, timeout_s=60)
    assert time.monotonic() - start < 60


def test_a_hung_run_is_stopped_at_its_timeout():
    start = time.monotonic()
    with pytest.raises(RunError, match=r"did not finish within its timeout of 3 s: rank\(s\) 0, 1"):
        run_local(Job("time:sleep", (120,)), 2, timeout_s=3)
    assert time.monotonic() - start < 60


def _children(pid: int) -> list[int]:
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(entry))
    return kids


def _spawned_ranks(proc, count: int, within_s: float = 90, poll_s: float = 0.5) -> list[int]:
    """The pids of the `count` ranks `proc` spawned, as soon as they all exist."""
    workers, deadline = [], time.monotonic() + within_s
    while len(workers) < count and time.monotonic() < deadline:
        time.sleep(poll_s)
        workers = [c for c in _children(proc.pid)
                   if "spawn_main" in Path(f"/proc/{c}/cmdline").read_text(errors="replace")]
    assert len(workers) == count, "the ranks did not start"
    return workers


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_killed_rank_ends_the_run_and_leaves_no_process():
    cmd = [str(VENV_BIN / "collperf"), "bench", "--ranks", "3", "--algorithm", "ring", "-b", "4M", "-e", "4M",
           "-n", "100000", "-w", "0", "--timeout", "60"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        workers = _spawned_ranks(proc, 3)
        time.sleep(4)   # let the sweep get going
        victim = sorted(workers)[1]
        os.kill(victim, signal.SIGKILL)
        start = time.monotonic()
        _, err = proc.communicate(timeout=90)
        assert time.monotonic() - start < 60
        assert proc.returncode != 0
        assert "died (SIGKILL)" in err and "rank " in err, err
        assert "Traceback" not in err
        assert not [w for w in workers if _alive(w)]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_bench_runs_rows_with_predictions_and_round_trips_through_the_table(tmp_path):
    config = SweepSpec("allreduce", "ring,rhd,builtin", 1024, 16384, 4, iters=3, warmup=1, progress=False)
    res = run(config, ranks=2, timeout_s=120)
    assert [r["size"] for r in res.rows if r["algorithm"] == "ring"] == [1024, 4096, 16384]
    assert res.wrong_rows() == 0 and res.model.startswith("fitted to this run")
    text = to_text(res)
    parsed = []
    for line in text.splitlines():
        if line and not line.startswith("#"):
            f = line.split()
            parsed.append((int(f[0]), int(f[1]), f[2], f[3], int(f[4]), float(f[5]), int(f[8]), f[13]))
    assert len(parsed) == 9
    in_print_order = [r for a in res.algorithms() for r in res.rows if r["algorithm"] == a]
    for r, (size, count, dtype, redop, root, time_us, wrong, algorithm) in zip(in_print_order, parsed):
        assert (size, count, dtype, redop, root, wrong, algorithm) == (r["size"], r["count"], "float", "sum", -1, 0,
                                                                        r["algorithm"])
        assert time_us == pytest.approx(r["out_of_place"]["time_us"], rel=0.01, abs=0.01)
        assert count * 4 == size
    doc = to_json(res)
    assert doc["out_of_bounds"] == {"count": 0, "okay": True}
    assert doc["results"][0]["out_of_place"]["nwrong"] == 0 and "predicted_us" in doc["results"][0]
    assert to_csv(res).splitlines()[0].startswith("algorithm,size,count")


def test_given_network_predictions_follow_the_model():
    from collperf import api
    config = SweepSpec("allgather", "ring,builtin", 4096, 4096, 2, iters=2, warmup=0, progress=False)
    res = run(config, ranks=2, timeout_s=120, network=api.network(ranks=2, latency="10us", bandwidth="1GB/s"))
    ring = next(r for r in res.rows if r["algorithm"] == "ring")
    assert ring["predicted_us"] == pytest.approx(10 + 4096 / 2 / 1e9 * 1e6)
    assert res.model.startswith("given")


def test_bench_cli_json_csv_and_errors(tmp_path):
    cli = str(VENV_BIN / "collperf")
    out = subprocess.run([cli, "bench", "--ranks", "2", "--collective", "reducescatter", "-A", "ring,builtin",
                          "-b", "1K", "-e", "4K", "-n", "2", "-w", "1", "--json", str(tmp_path / "r.json"),
                          "--csv", str(tmp_path / "r.csv")], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    assert "# Collective test starting: reduce_scatter_perf" in out.stdout
    doc = json.loads((tmp_path / "r.json").read_text())
    assert {r["algorithm"] for r in doc["results"]} == {"ring", "builtin"}
    assert len((tmp_path / "r.csv").read_text().splitlines()) == 1 + 3 * 2 * 2
    bad = subprocess.run([cli, "bench", "--ranks", "3", "--collective", "allgather", "-A", "recursive-doubling"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "power-of-two" in bad.stderr and "Traceback" not in bad.stderr


def test_config_errors_are_clear():
    with pytest.raises(UsageError, match="minBytes 4096 > maxBytes 1024"):
        SweepSpec(min_bytes=4096, max_bytes=1024)
    with pytest.raises(UsageError, match="op avg needs a floating-point dtype"):
        SweepSpec(dtype="int32", op="avg")
    with pytest.raises(UsageError, match="unknown algorithm 'fast'"):
        SweepSpec(algorithms="fast")
    assert SweepSpec(min_bytes=0, max_bytes=8, factor=2).sizes() == [0, 1, 2, 4, 8]


@pytest.mark.parametrize("how,when", [(signal.SIGTERM, "running"), (signal.SIGKILL, "running"),
                                      (signal.SIGKILL, "starting")])
def test_killing_the_launcher_takes_its_ranks_with_it(how, when):
    """'starting': the launcher is killed the moment its ranks exist, while they are still importing
    (before they could ask the kernel to kill them with their parent); they must leave all the same."""
    cmd = [str(VENV_BIN / "collperf"), "bench", "--ranks", "2", "--algorithm", "ring", "-b", "1M", "-e", "1M",
           "-n", "100000", "-w", "0", "--timeout", "120"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if when == "starting":
        workers = _spawned_ranks(proc, 2, poll_s=0.005)
    else:
        workers = _spawned_ranks(proc, 2)
        time.sleep(2)
    os.kill(proc.pid, how)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 120   # a loaded machine may take long to reach the parent check; never hang
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [w for w in workers if _alive(w)]
