"""Blink on real processes: the packed trees (-A blink, blink-hybrid) and the micro-benchmark patterns run
on local gloo ranks, bit-exact (#wrong = 0), and clear errors before any process starts."""

import json

import pytest
from typer.testing import CliRunner

from collperf import api, topology as T
from collperf.errors import UsageError
from collperf.blink.runs import BENCH_RESOLUTION, bench_schedules, blink_schedule, pattern_schedule
from collperf.schedule.verify import verify
from collperf.spec import BenchSpec, SweepSpec

torch = pytest.importorskip("torch", reason="the runtime needs torch (pip install -e '.[run]')")

from collperf.runtime.launch import Job, run_local  # noqa: E402
from collperf.cli import app

DGX1V = T.dgx1v()
COUNTS = (0, 1, 7, 65, 300)  # empty, one element, fewer elements than chunks, uneven splits


def blink_cases(gpus, root=0):
    """(collective, op, root, schedule) of every Blink schedule on the group `gpus` of dgx1v, as the bench
    builds them (BENCH_RESOLUTION), plus the hybrid split at a share where both tree sets carry data."""
    out = []
    for coll in ("broadcast", "reduce", "allreduce", "allgather", "reducescatter"):
        r = gpus[root] if coll in ("broadcast", "reduce", "allreduce") else None
        s, _, _ = blink_schedule(DGX1V, gpus, coll, r, 4, resolution=BENCH_RESOLUTION)
        out.append((coll, s.root, s))
    s, _, _ = blink_schedule(DGX1V, gpus, "broadcast", gpus[root], 4, hybrid_size=1e9, resolution=BENCH_RESOLUTION)
    assert 0 < s.meta["pcie_fraction"] < 1
    out.append(("broadcast", s.root, s))
    return out


def pattern_cases(p):
    """Every pattern on p local ranks (chains of p GPUs, fans with p - 2 sources or successors)."""
    chain = [0, 1, 2, 3, 7, 6, 5, 4][:p]
    fan = [5, 6, 7][: p - 2]
    scheds = [
        pattern_schedule(DGX1V, name, chain, segments=3)[0]
        for name in ("chain-forward", "chain-reduce-forward", "chain-reduce-broadcast")
    ]
    scheds += [
        pattern_schedule(DGX1V, name, fan, center=4, successor=0, segments=3)[0]
        for name in ("fan-in-forward", "fan-in-reduce-forward")
    ]
    scheds.append(pattern_schedule(DGX1V, "fan-out-forward", [0, 6, 7][: p - 2], center=4, source=5, segments=3)[0])
    return [(s.collective, s.root, s) for s in scheds]


def selftest(p, cases):
    jobs = []
    for coll, root, s in cases:
        assert s.ranks == p
        verify(s)  # symbolically first: the runtime then checks the bytes
        for n in COUNTS:
            jobs.append((coll, s.algorithm, n, "float32", "sum", root, 1, 1 << 20, False, s))
        if coll in ("reduce", "allreduce", "reducescatter"):
            jobs.append((coll, s.algorithm, 33, "float64", "max", root, 1, 1 << 20, False, s))
            jobs.append((coll, s.algorithm, 33, "int32", "prod", root, 1, 8, False, s))  # 2-element slices
        jobs.append((coll, s.algorithm, 65, "float32", "sum", root, 1, 1 << 20, True, s))  # in place
    results = run_local(Job("collperf.runtime.measure:selftest", (jobs,)), p, timeout_s=300)
    return [(case[:9], wrong) for case, wrong in results]


@pytest.mark.multiprocess
@pytest.mark.parametrize("p,gpus", [(3, [0, 1, 4]), (4, [0, 3, 4, 5])])
def test_packed_trees_and_patterns_are_bit_exact_on_real_ranks(p, gpus):
    # fragmented groups (trees through PCIe switches and QPI), a root other than the first rank, every
    # collective Blink builds, the hybrid split, and every micro-benchmark pattern
    cases = blink_cases(gpus, root=1) + pattern_cases(p)
    results = selftest(p, cases)
    assert len(results) >= len(cases) * len(COUNTS)
    wrong = [(case, w) for case, w in results if w]
    assert not wrong, wrong[:5]


@pytest.mark.multiprocess
def test_a_wrong_prebuilt_schedule_is_caught():
    # the check is not vacuous: a pattern schedule with its last transfer removed leaves data missing
    from dataclasses import replace

    s = pattern_schedule(DGX1V, "chain-forward", [0, 1, 2], segments=2)[0]
    broken = replace(s, steps=s.steps[:-1])
    results = run_local(
        Job(
            "collperf.runtime.measure:selftest",
            ([("broadcast", "chain-forward", 8, "float32", "sum", 0, 1, 1 << 20, False, broken)],),
        ),
        3,
        timeout_s=120,
    )
    assert results[0][1] > 0


@pytest.mark.multiprocess
def test_bench_cli_blink_on_4_ranks(tmp_path):
    # collperf bench --ranks 4 -A blink: dgx1v's first 4 GPUs, #wrong = 0, the placement in the JSON file
    out = tmp_path / "b.json"
    res = CliRunner().invoke(
        app,
        [
            "bench",
            "--collective",
            "broadcast",
            "--ranks",
            "4",
            "-A",
            "blink,blink-hybrid",
            "-b",
            "4",
            "-e",
            "4K",
            "-f",
            "32",
            "-n",
            "1",
            "-w",
            "0",
            "-J",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert {r["algorithm"] for r in doc["results"]} == {"blink", "blink-hybrid"}
    assert all(r[pl]["nwrong"] == 0 for r in doc["results"] for pl in ("out_of_place", "in_place"))
    assert doc["config"]["placement"]["gpus"] == [0, 1, 2, 3] and doc["config"]["placement"]["topology"] == "dgx1v"
    assert "ranks 0..3 stand for dgx1v GPUs 0,1,2,3" in res.output


@pytest.mark.multiprocess
def test_bench_pattern_on_3_ranks_measures_throughput():
    sweep = SweepSpec(
        collective="allreduce",
        algorithms="builtin",
        min_bytes="1K",
        max_bytes="4K",
        factor=4,
        iters=1,
        warmup=0,
        progress=False,
    )
    results = api.bench(BenchSpec(sweep=sweep, ranks=3, timeout_s=120, pattern="chain-reduce-forward"))
    assert results.collective == "reduce" and {r["algorithm"] for r in results.rows} == {"chain-reduce-forward"}
    for r in results.rows:
        m = r["out_of_place"]
        assert m["wrong"] == 0
        assert m["algbw"] == pytest.approx(r["size"] / (m["time_us"] * 1e-6) / 1e9, rel=1e-6)  # size / time
    # the chain 0 -> 1 -> 2 reduces into its end: local rank 0 is GPU 2
    assert results.config["placement"]["roles"]["chain"] == [0, 1, 2]
    assert results.config["placement"]["gpus"] == [2, 1, 0]


# --- errors, before any process ------------------------------------------------------------------------


def spec(algorithm="blink", collective="broadcast", **kw):
    return BenchSpec(sweep=SweepSpec(collective=collective, algorithms=algorithm, min_bytes="1K", max_bytes="4K"), **kw)


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(ranks=3, gpus="0,1,9"), r"rank\(s\) 9 not in topology dgx1v"),
        (dict(ranks=4, gpus="0,1"), r"--ranks 4 but --gpus 0,1 names 2 GPUs"),
        (dict(ranks=9), r"rank\(s\) 8 not in topology dgx1v"),
        (dict(ranks=3, topology="dgx2", gpus="0,1,16"), r"16 not in topology dgx2"),
    ],
)
def test_bad_placements_are_refused(kw, match):
    with pytest.raises(UsageError, match=match):
        bench_schedules(spec(**kw))


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(pattern="fan-in-forward", ranks=2), r"needs at least 3 ranks.*--ranks 2 is too few"),
        (dict(pattern="chain-forward", ranks=1), r"needs at least 2 ranks"),
        (dict(pattern="fan-out-forward", ranks=6), r"takes at most 5 ranks"),
        (dict(pattern="chain-forward", ranks=3, gpus="0,1"), r"needs 2 ranks, not --ranks 3"),
    ],
)
def test_patterns_needing_other_rank_counts_are_refused(kw, match):
    with pytest.raises(UsageError, match=match):
        bench_schedules(spec("builtin", "allreduce", **kw))


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda: spec("chain", topology="dgx1v", ranks=4), r"--topology and --gpus place the ranks"),
        (lambda: spec("blink", t_dpa="1ms", ranks=4), r"--t-dpa 1ms .* -A blink-hybrid"),
        (lambda: spec("blink", "alltoall", ranks=4), r"unknown algorithm 'blink' for alltoall"),
        (lambda: spec("blink-hybrid", "allreduce", ranks=4), r"unknown algorithm 'blink-hybrid' for allreduce"),
        (lambda: spec("ring", "allreduce", pattern="chain-forward", ranks=3), r"drop -A ring"),
        (lambda: spec("builtin", "allreduce", pattern="chains", ranks=3), r"--pattern 'chains'"),
        (lambda: spec("builtin", "allreduce", pattern="chain-forward", center=4, ranks=3), r"--center do not apply"),
        (lambda: spec("builtin", "allreduce", center=4, ranks=3), r"add --pattern"),
        (lambda: spec("builtin", "broadcast", pattern="chain-reduce-forward", ranks=3), r"checked as a reduce"),
    ],
)
def test_bad_bench_specs_are_refused(make, match):
    with pytest.raises(UsageError, match=match):
        make()


def test_bench_schedules_follow_the_defaults():
    # -A blink on --ranks 3: dgx1v's GPUs 0,1,2, root local 0; the hybrid one per size, the others shared
    pl = bench_schedules(spec("blink,blink-hybrid", ranks=3))
    assert pl.gpus == [0, 1, 2] and pl.ranks == 3
    sizes = SweepSpec(collective="broadcast", algorithms="blink", min_bytes="1K", max_bytes="4K").sizes()
    assert set(pl.schedules) == {(a, n) for a in ("blink", "blink-hybrid") for n in sizes}
    assert all(s.ranks == 3 and s.root == 0 for s in pl.schedules.values())
    # --gpus sets the rank count; root 1 is GPU 4
    pl = bench_schedules(
        BenchSpec(
            sweep=SweepSpec(collective="reduce", algorithms="blink", min_bytes="1K", max_bytes="1K", root=1),
            gpus="0,4,1",
        )
    )
    assert pl.ranks == 3 and pl.gpus == [0, 4, 1] and pl.schedules[("blink", 1024)].root == 1
    # a pattern's default GPUs on dgx1v are the appendix's: fan-in 5,6 -> 4 -> 0 on 4 ranks
    pl = bench_schedules(spec("builtin", "allreduce", pattern="fan-in-forward", ranks=4))
    assert pl.roles == {"sources": [5, 6], "center": 4, "successor": 0} and pl.gpus == [0, 4, 5, 6]
