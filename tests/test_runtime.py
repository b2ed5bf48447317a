"""Real processes on gloo: every algorithm bit-exact, built-ins, failures end cleanly, the bench table."""

import json
import re
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="the runtime needs torch (pip install -e '.[run]')")

from collperf.lab.bench import run  # noqa: E402
from collperf.spec import BenchSpec, SweepSpec  # noqa: E402
from collperf.errors import UsageError  # noqa: E402
from collperf.model.algorithms import ALGORITHMS  # noqa: E402
from collperf.lab.results import to_csv, to_json, to_text  # noqa: E402
from collperf.runtime.launch import Job, RunError, RunStalled, _children_ignore_sigint, run_local  # noqa: E402
from rank_support import as_a_shell_starts_it, children as _children, pids_until_first_row  # noqa: E402
from collperf import api, ingest
from collperf.runtime import data
from collperf.runtime.channels import FileChannel
from collperf.runtime.worker import FileReporter

COLLECTIVES = (
    "allreduce",
    "allgather",
    "reducescatter",
    "broadcast",
    "reduce",
    "alltoall",
    "scatter",
    "gather",
    "sendrecv",
)
VENV_BIN = Path(sys.executable).parent


def cases_for(p: int, counts=(0, 1, 3, 7, 65)):
    """Every algorithm and built-in at sizes 0, 1 element, fewer than p, not divisible by p; then dtypes
    and ops on the reducing collectives; roots other than 0."""
    names = [(a.collective, a.name) for a in ALGORITHMS if not a.unavailable(p)] + [(c, "builtin") for c in COLLECTIVES]
    cases = [(c, a, n, "float32", "sum", 0, 2, 16, False) for c, a in names for n in counts]
    for dtype, op in [
        ("float64", "prod"),
        ("float16", "min"),
        ("bfloat16", "max"),
        ("int32", "sum"),
        ("int64", "max"),
        ("float32", "avg"),
        ("bfloat16", "sum"),
    ]:
        for c, a in names:
            if c in ("allreduce", "reduce", "reducescatter"):
                cases.append((c, a, 9, dtype, op, 0, 3, 8, False))
    for c, a in names:
        if c in ("broadcast", "reduce", "scatter", "gather"):
            cases.append((c, a, 5, "float32", "sum", p - 1, 2, 1 << 20, False))
        if c not in ("alltoall", "sendrecv"):
            cases.append((c, a, 6, "float32", "sum", 0, 1, 1 << 20, True))  # in-place
    return cases


@pytest.mark.multiprocess
@pytest.mark.parametrize("p", [1, 2, 3, 4, 6])
def test_every_algorithm_is_bit_exact(p):
    results = run_local(
        Job("collperf.runtime.measure:selftest", (cases_for(p) if p != 6 else cases_for(p, (5, 13)),)), p, timeout_s=240
    )
    wrong = [(case, w) for case, w in results if w]
    assert not wrong, wrong[:5]
    assert len(results) > 100


@pytest.mark.multiprocess
def test_a_wrong_schedule_is_counted_as_wrong(monkeypatch):
    # the check is not vacuous: a run whose result is wrong reports #wrong > 0
    results = run_local(
        Job(
            "collperf.runtime.measure:selftest", ([("allreduce", "ring", 10, "float32", "sum", 0, 1, 1 << 20, False)],)
        ),
        2,
        60,
    )
    assert results[0][1] == 0
    want = data.expected_output("allreduce", 0, 2, 10, torch.float32, "sum")
    bad = want.clone()
    bad[3] += 1
    assert data.count_wrong(bad, want) == 1


@pytest.mark.multiprocess
def test_a_rank_that_raises_ends_the_run_with_its_message():
    with pytest.raises(RunError, match=r"rank 0 of 2 failed: .*cannot read size 'bogus'"):
        run_local(Job("collperf.units:parse_size", ("bogus",)), 2, timeout_s=60)


@pytest.mark.multiprocess
def test_a_hung_run_is_stopped_at_its_timeout():
    # a generous start-up budget: on a loaded machine importing torch can take minutes, and this test is about
    # the run's own timeout (which starts once every rank is ready), not about start-up
    with pytest.raises(RunError, match=r"did not finish within its timeout of 3 s: ranks 0, 1 still running"):
        run_local(Job("time:sleep", (120,)), 2, timeout_s=3, startup_s=900)


def _spawned_ranks(proc, count: int, within_s: float = 90, poll_s: float = 0.5) -> list[int]:
    """The pids of the `count` ranks `proc` spawned, as soon as they all exist."""
    workers, deadline = [], time.monotonic() + within_s
    while len(workers) < count and time.monotonic() < deadline:
        time.sleep(poll_s)
        workers = [
            c for c in _children(proc.pid) if "spawn_main" in Path(f"/proc/{c}/cmdline").read_text(errors="replace")
        ]
    assert len(workers) == count, "the ranks did not start"
    return workers


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.multiprocess
def test_a_killed_rank_ends_the_run_and_leaves_no_process():
    cmd = [
        str(VENV_BIN / "collperf"),
        "bench",
        "--ranks",
        "3",
        "--algorithm",
        "ring",
        "-b",
        "4M",
        "-e",
        "4M",
        "-n",
        "100000",
        "-w",
        "0",
        "--timeout",
        "60",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        workers = _spawned_ranks(proc, 3)
        time.sleep(4)  # let the sweep get going
        victim = sorted(workers)[1]
        os.kill(victim, signal.SIGKILL)
        _, err = proc.communicate(timeout=300)  # bounded, generously: a loaded machine is slow, not hung
        assert proc.returncode != 0
        assert "died (SIGKILL)" in err and "rank " in err, err
        assert "Traceback" not in err
        assert not [w for w in workers if _alive(w)]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.multiprocess
def test_bench_streams_rows_and_its_outputs_read_back(tmp_path):
    """api.bench hands each row over as it completes, in nccl-tests order (one algorithm's sizes, then the
    next); the text, JSON and CSV read back through ingest (what `collperf fit` reads) with the same sizes,
    times and algorithms; the checks pass."""
    config = SweepSpec(
        collective="allreduce",
        algorithms="ring,rhd,builtin",
        min_bytes=1024,
        max_bytes=16384,
        factor=4,
        iters=3,
        warmup=1,
        progress=False,
    )
    streamed = []
    res = api.bench(
        BenchSpec(
            sweep=config, ranks=2, timeout_s=120, json_file=str(tmp_path / "r.json"), csv_file=str(tmp_path / "r.csv")
        ),
        on_row=lambda results, row: streamed.append((row["algorithm"], row["size"], len(results.rows))),
    )
    assert streamed == [
        (a, s, i + 1)
        for i, (a, s) in enumerate((a, s) for a in ("ring", "rhd", "builtin") for s in (1024, 4096, 16384))
    ]
    assert res.wrong_rows() == 0 and res.model.startswith("fitted to this run")
    assert len(res.peak_rss_bytes) == 2 and all(b > 10 << 20 for b in res.peak_rss_bytes)
    want = {
        a: [
            (r["size"], pl, round(r[pl]["time_us"], 1))
            for r in res.rows
            if r["algorithm"] == a
            for pl in ("out_of_place", "in_place")
        ]
        for a in res.algorithms()
    }
    for name, tables in (
        ("text", ingest.parse(to_text(res), "bench.txt")),
        ("json", ingest.load(tmp_path / "r.json")),
        ("csv", ingest.load(tmp_path / "r.csv")),
    ):
        got = {
            t.header["algorithm"]: [(r.size, r.placement.replace("-", "_"), round(r.time_s * 1e6, 1)) for r in t.rows]
            for t in tables
        }
        assert got.keys() == want.keys(), name
        for a in want:  # the text prints times to 2 decimals or fewer digits: compare to 1 %
            for (s1, p1, t1), (s2, p2, t2) in zip(got[a], want[a]):
                assert (s1, p1) == (s2, p2) and t1 == pytest.approx(t2, rel=0.01, abs=0.01), (name, a)
        assert all(
            t.collective == "allreduce" and t.ranks == 2 and all(r.wrong == 0 for r in t.rows) for t in tables
        ), name
    assert to_json(res)["results"][0]["out_of_place"]["nwrong"] == 0 and to_csv(res).startswith("algorithm,size,count")


@pytest.mark.multiprocess
def test_given_network_predictions_follow_the_model():
    config = SweepSpec(
        collective="allgather",
        algorithms="ring,builtin",
        min_bytes=4096,
        max_bytes=4096,
        factor=2,
        iters=2,
        warmup=0,
        progress=False,
    )
    res = run(config, ranks=2, timeout_s=120, network=api.network(ranks=2, latency="10us", bandwidth="1GB/s"))
    ring = next(r for r in res.rows if r["algorithm"] == "ring")
    assert ring["predicted_us"] == pytest.approx(10 + 4096 / 2 / 1e9 * 1e6)
    assert res.model.startswith("given")


@pytest.mark.multiprocess
def test_bench_cli_json_and_errors(tmp_path):
    cli = str(VENV_BIN / "collperf")
    out = subprocess.run(
        [
            cli,
            "bench",
            "--ranks",
            "2",
            "--collective",
            "reducescatter",
            "-A",
            "ring,builtin",
            "-b",
            "1K",
            "-e",
            "4K",
            "-n",
            "2",
            "-w",
            "1",
            "--json",
            "--csv",
            str(tmp_path / "r.csv"),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)  # --json: the -J document on stdout, nothing else
    assert {r["algorithm"] for r in doc["results"]} == {"ring", "builtin"} and doc["complete"] is True
    assert len((tmp_path / "r.csv").read_text().splitlines()) == 1 + 3 * 2 * 2
    bad = subprocess.run(
        [cli, "bench", "--ranks", "3", "--collective", "allgather", "-A", "recursive-doubling"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "power-of-two" in bad.stderr and "Traceback" not in bad.stderr
    # refused at once, before any process starts: a path that cannot be written, a rank count beyond the machine
    for args, message in (
        (["-J", str(tmp_path / "nowhere" / "r.json")], "does not exist"),
        (["--ranks", "100000"], "more local processes than this machine can run"),
    ):
        refused = subprocess.run([cli, "bench", "--ranks", "2", *args], capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2 and message in refused.stderr and "Traceback" not in refused.stderr


def test_config_errors_are_clear():
    with pytest.raises(UsageError, match="minBytes 4096 > maxBytes 1024"):
        SweepSpec(min_bytes=4096, max_bytes=1024)
    with pytest.raises(UsageError, match="op avg needs a floating-point dtype"):
        SweepSpec(dtype="int32", op="avg")
    with pytest.raises(UsageError, match="unknown algorithm 'fast'"):
        SweepSpec(algorithms="fast")
    assert SweepSpec(min_bytes=0, max_bytes=8, factor=2).sizes() == [0, 1, 2, 4, 8]


@pytest.mark.parametrize(
    "how,when", [(signal.SIGTERM, "running"), (signal.SIGKILL, "running"), (signal.SIGKILL, "starting")]
)
@pytest.mark.multiprocess
def test_killing_the_launcher_takes_its_ranks_with_it(how, when):
    """'starting': the launcher is killed the moment its ranks exist, while they are still importing
    (before they could ask the kernel to kill them with their parent); they must leave all the same."""
    cmd = [
        str(VENV_BIN / "collperf"),
        "bench",
        "--ranks",
        "2",
        "--algorithm",
        "ring",
        "-b",
        "1M",
        "-e",
        "1M",
        "-n",
        "100000",
        "-w",
        "0",
        "--timeout",
        "120",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if when == "starting":
        workers = _spawned_ranks(proc, 2, poll_s=0.005)
    else:
        workers = _spawned_ranks(proc, 2)
        time.sleep(2)
    os.kill(proc.pid, how)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 120  # a loaded machine may take long to reach the parent check; never hang
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [w for w in workers if _alive(w)]


def test_expected_values_in_closed_form_equal_the_reduction_over_every_rank():
    """The check's reference (runtime/data.py) is a closed form of the reduction over ranks, computed chunk by
    chunk; here it is compared with the reduction of every rank's stacked input, bit for bit."""
    index = torch.arange(200)
    for op, reduce in (
        ("sum", lambda s, p: s.sum(0)),
        ("avg", lambda s, p: s.sum(0) / p),
        ("prod", lambda s, p: s.prod(0)),
        ("min", lambda s, p: s.min(0).values),
        ("max", lambda s, p: s.max(0).values),
    ):
        for p in (1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 33, 64):
            stack = torch.stack([data.values(r, index, op) for r in range(p)])
            assert torch.equal(data.reduced(p, index, op), reduce(stack, p)), (op, p)
    # pieces of at most CHUNK_ELEMENTS, in output order: allgather on 3 ranks, blocks larger than a chunk
    m = data.CHUNK_ELEMENTS + 5
    pieces = list(data.expected_chunks("allgather", 1, 3, m, torch.float32, "sum"))
    assert max(len(piece) for _, piece in pieces) <= data.CHUNK_ELEMENTS
    assert [offset for offset, _ in pieces] == [sum(len(q) for _, q in pieces[:i]) for i in range(len(pieces))]
    whole = torch.cat([data.values(r, torch.arange(m), "none").float() for r in range(3)])
    assert torch.equal(torch.cat([piece for _, piece in pieces]), whole)
    out = whole.clone()
    out[m + 2] += 1
    assert data.check_output(out, "allgather", 1, 3, m, "sum") == 1


def _stop(pid: int) -> None:
    os.kill(pid, signal.SIGSTOP)


def _release(pids) -> None:
    """Cleanup for a test that stopped a rank: never leave a stopped process behind."""
    for pid in pids:
        for sig in (signal.SIGCONT, signal.SIGKILL):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass


@pytest.mark.multiprocess
def test_a_rank_stopped_mid_sweep_is_named_and_the_rows_so_far_are_kept(tmp_path):
    """SIGSTOP one rank once the first row is out: the timeout names that rank (not all of them), the rows
    measured stay on stdout and in the files (valid, readable), the exit is non-zero, no process is left."""
    cmd = [
        str(VENV_BIN / "collperf"),
        "bench",
        "--ranks",
        "3",
        "-A",
        "ring",
        "-b",
        "1K",
        "-e",
        "64M",
        "-n",
        "50",
        "-w",
        "1",
        "--timeout",
        "8",
        "-J",
        str(tmp_path / "r.json"),
        "--csv",
        str(tmp_path / "r.csv"),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        pids, lines = pids_until_first_row(proc)  # the rows stream: read until the first one
        assert len(pids) == 3, "".join(lines)
        _stop(pids[1])
        rest, err = proc.communicate(timeout=120)
    finally:
        _release(pids.values())
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    out = "".join(lines) + rest
    assert proc.returncode == 1, err
    assert re.search(rf"rank 1 \(pid {pids[1]}\) is stopped \(SIGSTOP", err), err
    assert not re.search(r"rank [02] \(pid \d+\) is stopped", err), err
    n = int(re.search(r"timed out after (\d+) rows?", err).group(1))
    assert n >= 1 and f"# collperf bench timed out after {n} row" in out
    assert sum(len(t.rows) for t in ingest.parse(out, "stdout")) == 2 * n  # out-of-place and in-place
    for name in ("r.json", "r.csv"):
        assert sum(len(t.rows) for t in ingest.load(tmp_path / name)) == 2 * n, name
    assert json.loads((tmp_path / "r.json").read_text())["complete"] is False
    assert "Traceback" not in err
    time.sleep(0.5)
    assert not [p for p in pids.values() if _alive(p)]


@pytest.mark.multiprocess
def test_a_rank_stopped_while_starting_is_named():
    """SIGSTOP a rank the moment it exists (before torch is imported): the watchdog names it by rank and pid
    (rather than blaming rank 0 or every rank) long before the start-up timeout."""
    import threading

    victim = []

    def stop_the_first_rank():
        deadline = time.monotonic() + 60
        while not victim and time.monotonic() < deadline:
            kids = [
                c
                for c in _children(os.getpid())
                if "spawn_main" in Path(f"/proc/{c}/cmdline").read_text(errors="replace")
            ]
            if kids:
                _stop(kids[0])
                victim.append(kids[0])
            time.sleep(0.002)

    watcher = threading.Thread(target=stop_the_first_rank, daemon=True)
    watcher.start()
    try:
        with pytest.raises(RunStalled) as failure:
            run_local(Job("time:sleep", (0,)), 3, timeout_s=30, startup_s=600)
    finally:
        watcher.join(timeout=60)
        _release(victim)
    assert victim, "no rank was seen starting"
    message = str(failure.value)
    assert re.search(r"no progress from rank \d for \d+ s \(the watchdog's bound: 10 s\)", message), message
    assert "did not all start" not in message, message
    assert re.search(rf"rank \d \(pid {victim[0]}\) is stopped \(SIGSTOP", message), message
    assert message.count("is stopped (") == 1, message


@pytest.mark.multiprocess
def test_ctrl_c_keeps_the_rows_measured_so_far():
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
        "50",
        "-w",
        "1",
        "--timeout",
        "120",
    ]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=as_a_shell_starts_it
    )
    pids, lines = [], []
    try:
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("#  Rank"):
                pids.append(int(line.split()[6]))
            elif line.strip() and not line.startswith("#"):
                break
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    out = "".join(lines) + rest
    assert proc.returncode == 130, err
    n = int(re.search(r"error: interrupted after (\d+) rows?", err).group(1))
    assert n >= 1 and f"# collperf bench interrupted after {n} row" in out and "Traceback" not in err
    assert len([line for line in out.splitlines() if line.strip() and not line.startswith("#")]) == n
    time.sleep(0.5)
    assert len(pids) == 2 and not [p for p in pids if _alive(p)]


def test_the_file_channel_delivers_each_report_once_in_order(tmp_path):
    """The testbed's channel (ranks in other network namespaces report through files): per rank in the order
    sent, each once, the directory emptied as it is read."""
    import queue

    reporters = [FileReporter(str(tmp_path)) for _ in range(2)]
    for i in range(12):
        reporters[i % 2].put((i % 2, "beat", (i, "")))
    channel, got = FileChannel(str(tmp_path)), []
    while True:
        try:
            got.append(channel.get(timeout=0.01))
        except queue.Empty:
            break
    assert [m for m in got if m[0] == 0] == [(0, "beat", (i, "")) for i in range(0, 12, 2)]
    assert [m for m in got if m[0] == 1] == [(1, "beat", (i, "")) for i in range(1, 12, 2)]
    assert not os.listdir(tmp_path)


def test_sigint_is_unblocked_after_the_spawn_where_its_handler_was_set_outside_python(monkeypatch):
    """signal.signal returns None where the previous SIGINT handler was a C library's: the window must still unblock
    SIGINT and leave a handler, or every process started later inherits a blocked Ctrl-C (a bench that would not
    stop)."""
    import collperf.runtime.launch as launch

    real = signal.signal
    first = []

    def from_c(signum, handler):
        previous = real(signum, handler)
        first.append(previous)
        return None if len(first) == 1 else previous  # the first call finds a handler set outside Python

    monkeypatch.setattr(launch.signal, "signal", from_c)
    with _children_ignore_sigint():
        assert signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    monkeypatch.undo()
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_ctrl_c_taken_by_another_thread_while_ranks_spawn_still_ends_the_run():
    """The spawning window blocks SIGINT in the main thread only: a process-directed Ctrl-C is then taken by
    any other thread of the launcher (torch's, a pipe reader's). It must still end the run once the window
    closes (an ignored disposition there would drop it: the bench went on for minutes)."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)  # started before the window: SIGINT not blocked
    other.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            with _children_ignore_sigint():
                os.kill(os.getpid(), signal.SIGINT)
                for _ in range(500):  # until the kernel has handed it to a thread (not a time check)
                    if signal.SIGINT not in signal.sigpending():
                        break
                    time.sleep(0.01)
    finally:
        stop.set()
        other.join()
