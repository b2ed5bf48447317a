"""Training-step plans: the chapter's worked numbers, invariants, layouts that do not fit."""

import json

import pytest
from typer.testing import CliRunner

from collperf import api
from collperf.cli import app
from collperf.errors import UsageError
from collperf.model.hardware.presets import get_preset
from collperf.plan import Layout, ModelSpec, group_shape, overlap_step, parse_layout, plan

# The chapter's 70B example, and the assumptions that give its numbers: a 64 MB (10^6) activation per
# micro-batch, 8 micro-batches, 80 layers over 8 stages (10 per stage), ring algorithms, NVLink
# 1 us / 300 GB/s inside a node and 5 us / 50 GB/s per GPU across nodes (the `chapter` preset).
CHAPTER_70B = ModelSpec("chapter-70b", 70e9, 80, 4096, 8192, activation_bytes=64e6)


def kinds(p):
    return {k: v * 1e3 for k, v in p.by_kind().items()}


def test_chapter_70b_tp_and_pp():
    p = plan(
        CHAPTER_70B, Layout(8, 8, 8, micro_batches=8, bucket_bytes=1e12), get_preset("chapter", 64), algorithm="ring"
    )
    ms = kinds(p)
    # TP: 4 allreduces x 10 layers x 8 micro-batches = 320 x (14 x 1 us + 1.75 x 64 MB / 300 GB/s)
    assert ms["TP"] == pytest.approx(320 * (14e-3 + 1.75 * 64e6 / 300e9 * 1e3), rel=1e-9)
    assert ms["TP"] == pytest.approx(123, rel=0.01)
    # PP: 2 x 8 send/recv of 64 MB across nodes: 16 x (5 us + 64 MB / 50 GB/s)
    assert ms["PP"] == pytest.approx(16 * (5e-3 + 64e6 / 50e9 * 1e3)) and ms["PP"] == pytest.approx(21, rel=0.03)
    # DP with pipeline sharding: 70e9 / (8 x 8) x 2 bytes = 2.19 GB per rank
    assert ms["DP"] == pytest.approx(14 * 5e-3 + 1.75 * 70e9 * 2 / 64 / 50e9 * 1e3)


def test_chapter_70b_dp_as_the_chapter_counts_it():
    # the chapter shards the 140 GB of gradients by TP only (17.5 GB per rank): pp = 1
    p = plan(CHAPTER_70B, Layout(8, 1, 8, bucket_bytes=1e12), get_preset("chapter", 8), algorithm="ring")
    assert kinds(p)["DP"] == pytest.approx(613, rel=0.001)


def test_cluster_shape_choice_8x8_versus_16x4():
    # a 4 GB gradient allreduce over 64 ranks, hierarchical ring/ring: 40.92 ms on 8x8, 57.66 ms on 16x4
    model = ModelSpec("4GB", 2e9, 64, 1024, 1024)
    times = []
    for nodes, rpn in ((8, 8), (16, 4)):
        cluster = get_preset("chapter", nodes, rpn)
        cluster = type(cluster)(nodes, rpn, cluster.intra, cluster.inter, rpn, "nvlink300-400gbe")
        p = plan(
            model,
            Layout(1, 1, 64, bucket_bytes=1e12),
            cluster,
            algorithm="hierarchical",
            intra_algorithm="ring",
            inter_algorithm="ring",
        )
        times.append(kinds(p)["DP"])
    assert times == pytest.approx([40.92, 57.66], abs=0.01)


def test_overlap_exercise():
    step, speedup = overlap_step(2.0, 0.6, 0.8)
    assert step == pytest.approx(2.12) and speedup == pytest.approx(1.226, abs=1e-3)
    p = plan(
        CHAPTER_70B,
        Layout(8, 8, 8, micro_batches=8),
        get_preset("chapter", 64),
        compute_s=2.0,
        overlap={"TP": 0.5, "PP": 0.0, "DP": 1.0},
    )
    by = p.by_kind()
    # 8 stages, 8 micro-batches: the 1F1B bubble is (8 - 1) / 8 of the 2 s of compute = 1.75 s
    assert p.bubble_s == pytest.approx(1.75)
    assert p.step_s == pytest.approx(2.0 + 1.75 + 0.5 * by["TP"] + by["PP"])
    assert p.speedup == pytest.approx((2.0 + 1.75 + p.comm_s) / p.step_s)


def test_dp_bucket_schedule_hides_all_but_the_last_bucket():
    p = plan(CHAPTER_70B, Layout(8, 8, 8), get_preset("chapter", 64), compute_s=10.0)
    last = min(i.time_per_op_s for i in p.items if i.kind == "DP")
    assert p.exposed["DP"] == pytest.approx(last)


def test_doubling_dp_keeps_bytes_per_rank_and_adds_latency():
    model = ModelSpec("m", 8e9, 32, 4096, 2048)
    small = plan(model, Layout(1, 1, 8, bucket_bytes=1e12), get_preset("chapter", 1, 8), algorithm="ring")
    big = plan(model, Layout(1, 1, 16, bucket_bytes=1e12), get_preset("chapter", 2, 8), algorithm="ring")
    (a,), (b,) = [i for i in small.items if i.kind == "DP"], [i for i in big.items if i.kind == "DP"]
    assert a.size_bytes == b.size_bytes == 8e9 * 2
    assert b.time_per_op_s > a.time_per_op_s * 0.99  # more steps of latency, no fewer bytes per rank


def test_zero3_moves_one_and_a_half_times_the_bytes_of_dp():
    model = ModelSpec("m", 8e9, 32, 4096, 2048)
    cluster = get_preset("chapter", 1, 8)
    dp = plan(model, Layout(1, 1, 8, bucket_bytes=1e12), cluster)
    z3 = plan(model, Layout(1, 1, 8, zero=3), cluster)

    def moved(p):  # bytes each rank sends: allreduce 2(p-1)/p n, allgather and reducescatter (p-1)/p n
        factor = {"allreduce": 2 * 7 / 8, "allgather": 7 / 8, "reducescatter": 7 / 8}
        return sum(i.count * i.size_bytes * factor[i.collective] for i in p.items)

    assert moved(z3) == pytest.approx(1.5 * moved(dp))


def test_sequence_parallel_swaps_allreduce_for_allgather_and_reducescatter():
    p = plan(CHAPTER_70B, Layout(8, 8, 8, sequence_parallel=True, micro_batches=8), get_preset("chapter", 64))
    tp = [i.collective for i in p.items if i.kind == "TP"]
    assert tp == ["allgather", "reducescatter"]


def test_placement_decides_intra_or_inter():
    layout = Layout(8, 8, 8)
    assert group_shape(layout, "tp", 8) == (8, 1)  # TP inside a node
    assert group_shape(layout, "dp", 8) == (1, 8)  # DP one rank per node
    assert group_shape(Layout(4, 1, 16), "dp", 8) == (2, 8)  # 2 per node on 8 nodes: two-level
    p = plan(CHAPTER_70B, Layout(4, 1, 16, micro_batches=1), get_preset("chapter", 8))
    assert {i.level for i in p.items if i.kind == "DP"} == {"two-level"}


def test_layouts_that_do_not_fit_are_rejected():
    with pytest.raises(UsageError, match=r"tp\(8\) x pp\(8\) x dp\(4\) = 256 != ranks\(512\)"):
        plan(CHAPTER_70B, Layout(8, 8, 4), get_preset("chapter", 64))
    # 80 layers on 3 stages is uneven (27, 27, 26: the last stage also holds the head), not refused;
    # more stages than layers is
    assert plan(CHAPTER_70B, Layout(8, 3, 8), get_preset("chapter", 24)).items
    with pytest.raises(UsageError, match=r"layers\(80\) < pp\(96\)"):
        plan(CHAPTER_70B, Layout(1, 96, 1), get_preset("chapter", 12))
    with pytest.raises(UsageError, match="expected TPxPPxDP"):
        parse_layout("8by8")
    assert parse_layout("tp=4,pp=2,dp=8,zero=3,sp=1").zero == 3


def test_plan_cli_compare_and_json():
    runner = CliRunner()
    res = runner.invoke(
        app,
        [
            "plan",
            "--model",
            "70b",
            "--tp",
            "8",
            "--pp",
            "8",
            "--dp",
            "8",
            "--micro-batches",
            "8",
            "--cluster",
            "dgx-h100",
            "--nodes",
            "64",
            "--flops",
            "250TFLOPS",
            "--compare",
            "8x4x16",
            "--compare",
            "8x8x8@dgx-a100:64",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert len(doc["plans"]) == 3 and doc["plans"][0]["dominant"] in ("TP", "PP", "DP")
    steps = [p["step_s"] for p in doc["plans"]]
    assert doc["fastest"] == steps.index(min(steps))
    res = runner.invoke(app, ["plan", "--tp", "8", "--pp", "8", "--dp", "4", "--nodes", "64"])
    assert res.exit_code != 0


def test_api_plan_step():
    p = api.plan_step("13b", tp=8, dp=8, cluster="dgx-a100", compute="2000ms")
    assert p.compute_s == 2.0 and set(p.by_kind()) == {"TP", "DP"} and p.step_s >= 2.0
