"""bench -A blink's segments per size (the simulator's fastest candidate) and the executor's coalesced
messages (the transfers of a step between the same two ranks sent as one), bit-exact on real ranks."""

import pytest

from collperf import topology as T
from collperf.blink.runs import (
    BENCH_RESOLUTION,
    SEGMENT_CANDIDATES,
    best_segments,
    bench_schedules,
    blink_schedule,
)
from collperf.schedule.ir import COPY, REDUCE, Step, Transfer
from collperf.schedule.verify import verify
from collperf.simulate import simulate
from collperf.spec import BenchSpec, SweepSpec

torch = pytest.importorskip("torch", reason="the runtime needs torch (pip install -e '.[run]')")

from collperf.runtime.execute import coalesce, coalesced_steps  # noqa: E402
from collperf.runtime.launch import Job, run_local  # noqa: E402

DGX1V = T.dgx1v()
GROUP = [0, 1, 2, 3]


def simulated_us(coll, k, size, root=0):
    s, where, _ = blink_schedule(
        DGX1V,
        GROUP,
        coll,
        root if coll in ("broadcast", "reduce", "allreduce") else None,
        k,
        resolution=BENCH_RESOLUTION,
    )
    return simulate(s, where, size, "rounds").time_s


@pytest.mark.parametrize("coll", ["allreduce", "broadcast", "allgather"])
def test_bench_picks_the_argmin_of_the_simulated_times(coll):
    sizes = SweepSpec(collective=coll, algorithms="blink", min_bytes="1K", max_bytes="32M", factor=32).sizes()
    pl = bench_schedules(
        BenchSpec(
            sweep=SweepSpec(collective=coll, algorithms="blink", min_bytes="1K", max_bytes="32M", factor=32), ranks=4
        )
    )
    for n in sizes:
        times = [simulated_us(coll, k, n) for k in SEGMENT_CANDIDATES]
        best = SEGMENT_CANDIDATES[times.index(min(times))]  # first of equal times: the fewer segments
        assert pl.segments["blink"][n] == best
        # the schedule run at that size is the one with those segments
        root = 0 if coll in ("broadcast", "allreduce") else None
        assert (
            pl.schedules[("blink", n)].steps
            == blink_schedule(DGX1V, GROUP, coll, root, best, resolution=BENCH_RESOLUTION)[0].steps
        )
    picked = pl.segments["blink"]
    # 1 KiB: every step is latency, and the fewest steps (one segment) win; 32 MiB: the pipeline does
    assert picked[1024] == 1 and picked[32 << 20] > 1
    assert any("blink segments per size" in note for note in pl.notes)
    assert pl.to_json()["segments"]["blink"]["1024"] == 1


def test_fixed_segments_are_kept_and_hybrid_and_patterns_choose_too():
    pl = bench_schedules(
        BenchSpec(
            sweep=SweepSpec(
                collective="allreduce", algorithms="blink", min_bytes="1K", max_bytes="1M", factor=32, segments=8
            ),
            ranks=4,
        )
    )
    fixed, _, _ = blink_schedule(DGX1V, GROUP, "allreduce", 0, 8, resolution=BENCH_RESOLUTION)
    assert pl.segments == {} and all(s.steps == fixed.steps for s in pl.schedules.values())
    # --segments 1 is a choice too, not "not given": one segment at every size, even where more would be faster
    pl = bench_schedules(
        BenchSpec(
            sweep=SweepSpec(
                collective="allreduce", algorithms="blink", min_bytes="1K", max_bytes="1G", factor=1024, segments=1
            ),
            ranks=4,
        )
    )
    one, _, _ = blink_schedule(DGX1V, GROUP, "allreduce", 0, 1, resolution=BENCH_RESOLUTION)
    assert pl.segments == {} and all(s.steps == one.steps for s in pl.schedules.values())
    pl = bench_schedules(
        BenchSpec(
            sweep=SweepSpec(
                collective="broadcast", algorithms="blink-hybrid", min_bytes="1K", max_bytes="1M", factor=32
            ),
            ranks=4,
        )
    )
    assert set(pl.segments["blink-hybrid"]) == {1024, 32768, 1 << 20}
    pl = bench_schedules(
        BenchSpec(
            sweep=SweepSpec(collective="broadcast", algorithms="builtin", min_bytes="1K", max_bytes="1M", factor=32),
            ranks=4,
            pattern="chain-forward",
        )
    )
    assert pl.segments["chain-forward"][1024] == 1


def test_best_segments_is_the_argmin_with_ties_to_fewer():
    # one build per candidate whatever the number of sizes; per size the candidate of least simulated time
    calls = []

    def build(k):
        calls.append(k)
        return blink_schedule(DGX1V, GROUP, "broadcast", 0, k, resolution=BENCH_RESOLUTION)[:2]

    out = best_segments(build, [1024, 1 << 30], (1, 2))
    assert calls == [1, 2]  # one build per candidate, not per size
    t1, t2 = simulated_us("broadcast", 1, 1024), simulated_us("broadcast", 2, 1024)
    assert out[1024][0] == (1 if t1 <= t2 else 2) and out[1024][2] == min(t1, t2)


def test_coalesce_merges_transfers_between_the_same_ranks_of_the_same_kind():
    step = Step(
        (
            Transfer(0, 1, range(0, 2)),
            Transfer(2, 1, (7,)),
            Transfer(0, 1, (4,)),
            Transfer(0, 1, (5,), REDUCE),
            Transfer(1, 0, (3,)),
            Transfer(0, 1, range(9, 11), REDUCE),
        )
    )
    merged = coalesce(step)
    assert merged.transfers == (
        Transfer(0, 1, (0, 1, 4), COPY),
        Transfer(2, 1, (7,)),
        Transfer(0, 1, (5, 9, 10), REDUCE),
        Transfer(1, 0, (3,)),
    )
    alone = Step((Transfer(0, 1, (0,)), Transfer(1, 0, (0,))))
    assert coalesce(alone) is alone


@pytest.mark.parametrize("coll", ["broadcast", "reduce", "allreduce", "allgather", "reducescatter"])
def test_coalescing_cuts_blink_messages_and_keeps_the_schedule(coll):
    # packed trees share edges: fewer messages per step, the same chunks moved, the schedule still verifies
    from dataclasses import replace

    s, _, _ = blink_schedule(
        DGX1V, GROUP, coll, 0 if coll in ("broadcast", "reduce", "allreduce") else None, 4, resolution=BENCH_RESOLUTION
    )
    steps = coalesced_steps(s)
    assert coalesced_steps(s) is steps  # kept per schedule
    before = sum(len(st.transfers) for st in s.steps)
    after = sum(len(st.transfers) for st in steps)
    assert after < before
    for old, new in zip(s.steps, steps):
        assert len({(t.src, t.dst, t.op) for t in new.transfers}) == len(new.transfers)
        assert sorted((t.src, t.dst, t.op, c) for t in old.transfers for c in t.chunks) == sorted(
            (t.src, t.dst, t.op, c) for t in new.transfers for c in t.chunks
        )
    verify(replace(s, steps=steps))


@pytest.mark.multiprocess
@pytest.mark.parametrize("p,gpus", [(3, [0, 1, 4]), (4, [0, 1, 2, 3])])
def test_coalesced_blink_schedules_are_bit_exact_on_real_ranks(p, gpus):
    # every collective Blink builds, at the segment counts bench picks at the ends of its range (1 and 32),
    # through the executor's coalesced messages; uneven counts and slices cut across merged chunks
    jobs = []
    for coll in ("broadcast", "reduce", "allreduce", "allgather", "reducescatter"):
        root = gpus[1] if coll in ("broadcast", "reduce", "allreduce") else None
        for k in (1, 32):
            s, _, _ = blink_schedule(DGX1V, gpus, coll, root, k, resolution=BENCH_RESOLUTION)
            assert sum(len(st.transfers) for st in coalesced_steps(s)) < sum(len(st.transfers) for st in s.steps)
            for n, slice_bytes in ((0, 1 << 20), (7, 1 << 20), (300, 1 << 20), (300, 8), (5000, 0)):
                jobs.append((coll, s.algorithm, n, "float32", "sum", s.root, 1, slice_bytes, False, s))
            jobs.append((coll, s.algorithm, 65, "float32", "sum", s.root, 1, 1 << 20, True, s))  # in place
    results = run_local(Job("collperf.runtime.measure:selftest", (jobs,)), p, timeout_s=300)
    assert len(results) == len(jobs)
    wrong = [(case[:9], w) for case, w in results if w]
    assert not wrong, wrong[:5]
