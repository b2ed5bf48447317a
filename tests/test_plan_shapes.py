"""The planner on published shapes: GQA, uneven pipelines, DeepSeek-style MoE, ZeRO-3 as DeepSpeed and
FSDP run it, the shape-dependent compute model, the checks, the newcomer path and the published runs
(benchmarks/plan_vs_published.py), each against hand arithmetic in the comments or a published figure."""

import importlib.util
import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from collperf.cli import app
from collperf.errors import UsageError
from collperf.model.hardware.presets import get_preset
from collperf.plan import (
    GPU,
    Layout,
    ModelSpec,
    get_model,
    gpu_of,
    layer_time,
    modelled_compute,
    plan,
    search,
    stage_layers,
)
from collperf.plan.comms import demands
from collperf.plan.zero3 import exposed_per_layer

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "plan_vs_published.py"


def cp_items(model, layout):
    return [d for d in demands(model, layout) if d.kind == "CP"]


# --- shapes ----------------------------------------------------------------------------------------------


def test_gqa_shrinks_context_parallel_kv_traffic_by_heads_over_kv_heads():
    gqa = get_model("llama3-8b")  # 32 heads, 8 K/V heads of 128
    mha = replace(gqa, kv_heads=None)
    layout = Layout(tp=2, cp=4, micro_batches=1)
    (ring,) = cp_items(gqa, layout)
    # K and V of 8192 / 4 tokens x (8 x 128 / 2) per tp rank x 2 bytes: 2 x 2048 x 512 x 2
    assert ring.size_bytes == 2 * 2048 * 512 * 2 == 4_194_304
    (ring_mha,) = cp_items(mha, layout)
    assert ring_mha.size_bytes == 2 * 2048 * 4096 / 2 * 2
    assert ring_mha.size_bytes / ring.size_bytes == 32 / 8
    # Llama 3's all-gather CP: one allgather of all cp shards forward, one reducescatter backward
    gathered = cp_items(gqa, replace(layout, cp_allgather=True))
    assert [(d.collective, d.count, d.size_bytes) for d in gathered] == [
        ("allgather", 32, 4 * 4_194_304),
        ("reducescatter", 32, 4 * 4_194_304),
    ]


def test_presets_count_their_published_parameters():
    ds = get_model("deepseek-v3")  # DeepSeek-V3 report: 671B total, 37B activated per token
    assert ds.params == pytest.approx(671e9, rel=0.005) and ds.active_params == pytest.approx(37e9, rel=0.03)
    mixtral = get_model("mixtral-8x7b")  # Mixtral paper: 46.7B, 12.9B active
    assert mixtral.params == pytest.approx(46.7e9, rel=0.005) and mixtral.active_params == pytest.approx(
        12.9e9, rel=0.01
    )
    for name, total in (("llama3-8b", 8.03e9), ("llama3-70b", 70.6e9), ("llama3-405b", 405.9e9)):
        assert get_model(name).params == pytest.approx(total, rel=0.005)


def test_llama3_405b_plans_126_layers_over_16_stages():
    model = get_model("llama3-405b")
    layout = Layout(tp=8, pp=16, dp=1, micro_batches=16, sequence_parallel=True)
    assert stage_layers(model, layout) == (7,) + (8,) * 14 + (7,)  # Dubey et al. 2024 §3.3.2
    p = plan(model, layout, get_preset("dgx-h100", 16))
    ag = [i for i in p.items if i.kind == "TP" and i.collective == "allgather"]
    assert ag[0].count == 4 * 8 * 16  # 4 per layer x the busiest stage's 8 layers x 16 micro-batches
    explicit = replace(layout, first_stage_layers=6, last_stage_layers=8)
    assert stage_layers(model, explicit) == (6,) + (8,) * 14 + (8,)
    with pytest.raises(UsageError, match="must split evenly"):
        stage_layers(model, replace(layout, first_stage_layers=5, last_stage_layers=8))


def test_deepseek_moe_dispatch_is_node_limited_and_fp8():
    model = get_model("deepseek-v3")
    layout = Layout(pp=16, dp=64, expert_parallel=64, zero=1, micro_batches=16)
    dispatch, combine = [d for d in demands(model, layout) if d.kind == "EP"]
    # 4 layers on the busiest stage, all MoE; a token goes to min(8 experts, 4 nodes) = 4 nodes:
    # 4096 tokens x 4 copies x 7168 x 1 byte (FP8) forward; the combine and backward in 2 bytes
    assert (dispatch.count, dispatch.size_bytes) == (4 * 16, 4096 * 4 * 7168 * 1)
    assert (combine.count, combine.size_bytes) == (3 * 4 * 16, 4096 * 4 * 7168 * 2)


def test_bad_shapes_are_refused_naming_the_constraint():
    cluster = get_preset("dgx-h100", 5)
    with pytest.raises(UsageError, match=r"tp\(5\) must divide the attention heads\(96\)"):
        plan(get_model("gpt3-175b"), Layout(tp=5, dp=8), cluster)
    with pytest.raises(UsageError, match=r"tp\(3\) must divide the attention heads\(64\)"):
        plan(get_model("gpt3-22b"), Layout(tp=3, dp=8), get_preset("dgx-h100", 3))
    llama = get_model("llama3-8b")  # 32 heads, 8 K/V heads
    with pytest.raises(UsageError, match=r"tp\(16\) must divide the K/V heads\(8\).*replicate_kv"):
        plan(llama, Layout(tp=16), get_preset("dgx-h100", 2))
    assert plan(llama, Layout(tp=16, replicate_kv=True), get_preset("dgx-h100", 2)).items
    with pytest.raises(UsageError, match=r"expert_parallel\(3\) must divide experts\(8\)"):
        plan(get_model("mixtral-8x7b"), Layout(dp=24, expert_parallel=3), get_preset("dgx-h100", 3))
    with pytest.raises(UsageError, match=r"kv_heads\(5\) must divide heads\(32\)"):
        replace(get_model("llama3-8b"), kv_heads=5)
    with pytest.raises(UsageError, match="at least one layer"):
        plan(get_model("7b"), Layout(pp=64), get_preset("dgx-h100", 8))


# --- compute --------------------------------------------------------------------------------------------


def test_layer_time_is_the_roofline_by_hand():
    # a GPU whose GEMMs and fused attention run at peak (1e15) and whose HBM moves 1e12 B/s
    gpu = GPU("ideal", 1e15, 1e12, 80e9, gemm=1.0, gemm_half=0.0, flash=1.0, memory=1.0)
    model = ModelSpec("m", 1e9, 2, 1024, 1024, heads=8)  # no vocabulary: every parameter is in the layers
    t = layer_time(model, Layout(), gpu)
    tokens, h = 1024, 1024
    gemm = 2 * tokens * (1e9 / 2)  # 2 T x the layer's 5e8 parameters
    core = 0.5 * 4 * tokens * 1024 * h  # causal half of 4 T s w
    elementwise = (16 * tokens * h + 4 * tokens * 4 * h) * 2  # layer norms, dropouts, residuals; the MLP activation
    assert t.forward_s == pytest.approx((gemm + core) / 1e15 + elementwise / 1e12)
    assert t.backward_s == pytest.approx(2 * gemm / 1e15 + 2.5 * core / 1e15 + 2 * elementwise / 1e12)


def test_small_models_run_below_large_ones_on_the_same_gpu():
    gpu = gpu_of(get_preset("dgx-a100"))

    def rate(model, tp):  # achieved model FLOP/s of one layer's forward (GEMMs + attention)
        lay = Layout(tp=tp, flash_attention=False)
        flops = 2 * model.micro_batch * model.seq_len * (24 * model.hidden**2 + 2 * model.seq_len * model.hidden) / tp
        return flops / layer_time(model, lay, gpu).forward_s

    small = ModelSpec("1.7b", 1.7e9, 24, 2304, 2048, heads=24)
    large = get_model("gpt3-530b")
    assert rate(small, 1) < 0.9 * rate(large, 8)


# --- ZeRO-3 --------------------------------------------------------------------------------------------


def test_zero3_overlap_per_layer():
    # everything prefetched: the gather and the reducescatter hide behind the compute or stick out
    assert exposed_per_layer(gather_s=2.0, reduce_s=1.0, compute_s=5.0, share=1.0) == 0.0
    assert exposed_per_layer(2.0, 1.0, 2.5, 1.0) == pytest.approx(0.5)
    # nothing prefetched: the gather waits whole, only the reducescatter hides
    assert exposed_per_layer(2.0, 1.0, 5.0, 0.0) == pytest.approx(2.0)
    assert exposed_per_layer(2.0, 1.0, 0.5, 0.0) == pytest.approx(2.5)


def test_zero3_throughput_collapses_with_dp_for_deepspeed_more_than_fsdp():
    model = replace(get_model("gpt3-175b"), micro_batch=4)
    per_gpu = {}
    for impl in ("deepspeed", "fsdp"):
        for gpus, mb in ((384, 4), (1536, 1)):
            m = replace(model, micro_batch=mb)
            lay = Layout(dp=gpus, zero=3, zero3_impl=impl, recompute="full", flash_attention=False)
            cluster = get_preset("dgx-a100", gpus // 8)
            p = plan(m, lay, cluster, modelled_compute(m, lay, gpu_of(cluster)), algorithm="ring")
            per_gpu[impl, gpus] = 1536 / (gpus * p.step_s)  # sequences per GPU-second at batch 1536
    deepspeed = per_gpu["deepspeed", 1536] / per_gpu["deepspeed", 384]
    fsdp = per_gpu["fsdp", 1536] / per_gpu["fsdp", 384]
    assert deepspeed < 0.5 and deepspeed < fsdp


def test_hsdp_and_hpz_keep_gathers_inside_the_node():
    model = ModelSpec("m", 8e9, 32, 4096, 2048)
    cluster = get_preset("dgx-h100", 8)  # dp 64: 8 ranks per node, 8 nodes
    flat = plan(model, Layout(dp=64, zero=3), cluster)
    assert {(i.collective, i.level) for i in flat.items} == {("allgather", "two-level"), ("reducescatter", "two-level")}
    hsdp = plan(model, Layout(dp=64, zero=3, zero3_shard=8), cluster)
    levels = {(i.collective, i.group_ranks, i.level) for i in hsdp.items}
    assert levels == {("allgather", 8, "intra"), ("reducescatter", 8, "intra"), ("allreduce", 8, "inter")}
    # the replicas allreduce each rank's shard once per step: 8e9 x 2 bytes / 8 = 2 GB in 25 MB buckets
    reduced = [i for i in hsdp.items if i.collective == "allreduce"]
    assert sum(i.count * i.size_bytes for i in reduced) == pytest.approx(8e9 * 2 / 8)
    hpz = plan(model, Layout(dp=64, zero=3, hpz=8), cluster)
    gathers = sorted((i.role, i.level) for i in hpz.items if i.collective == "allgather")
    assert gathers == [("z3-bwd", "intra"), ("z3-fwd", "two-level")]
    assert hpz.memory.weights_bytes - flat.memory.weights_bytes == pytest.approx(2 * 8e9 / 8)  # the secondary copy
    with pytest.raises(UsageError, match=r"zero3_shard\(6\) must be a whole number dividing dp\(64\)"):
        Layout(dp=64, zero=3, zero3_shard=6)


# --- the published runs -------------------------------------------------------------------------------


def load_bench():
    spec = importlib.util.spec_from_file_location("plan_vs_published", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve the module's annotations through it
    spec.loader.exec_module(module)
    return module


def test_published_runs_within_the_stated_errors():
    bench = load_bench()
    rows = bench.rows()
    assert len(rows) >= 25 and len({r.source.split()[0] for r in rows}) >= 5
    errors, series = [], {}
    for row in rows:
        p = bench.predict(row)
        errors.append(abs(p.step_s / row.published_s - 1))
        if row.zero3_group:
            series.setdefault(row.zero3_group, []).append((row.gpus, row.batch, row.published_s, p.step_s))
    assert statistics.median(errors) <= 0.10 and max(errors) <= 0.30
    assert len(series) == 2
    for points in series.values():
        (g0, b0, pub0, plan0), (g1, b1, pub1, plan1) = points[0], points[-1]
        published = bench.per_gpu_ratio(g0, b0, pub0, g1, b1, pub1)
        planned = bench.per_gpu_ratio(g0, b0, plan0, g1, b1, plan1)
        assert published < 0.4 and planned / published == pytest.approx(1, abs=0.25)


def test_per_gpu_ratio_counts_sequences_not_gpu_seconds():
    bench = load_bench()
    # 2560 sequences on 640 GPUs in 10 s, then 2240 on 2240 GPUs in 20 s:
    # 2560 / 6400 = 0.4 and 2240 / 44800 = 0.05 sequences per GPU-second, a ratio of 0.125
    assert bench.per_gpu_ratio(640, 2560, 10.0, 2240, 2240, 20.0) == pytest.approx(0.125)
    # at one batch it is the GPU-seconds ratio: 384 x 10 / (1536 x 5) = 0.5
    assert bench.per_gpu_ratio(384, 1536, 10.0, 1536, 1536, 5.0) == pytest.approx(0.5)


def test_every_published_row_cites_an_arxiv_id_and_a_place_in_it():
    for row in load_bench().rows():
        assert "arXiv 2" in row.cite and any(w in row.cite for w in ("Table", "§")), row


# --- the CLI ------------------------------------------------------------------------------------------


def test_plan_without_a_layout_searches_and_says_why():
    res = CliRunner().invoke(app, ["plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--nodes", "1"])
    assert res.exit_code == 0, res.output
    assert "on 8 GPUs" in res.output and "3 shown" in res.output and "1. tp" in res.output
    assert "compute" in res.output and "of the step" in res.output


def test_require_fit_and_does_not_fit_first():
    args = ["plan", "--model", "70b", "--tp", "1", "--dp", "8", "--cluster", "dgx-h100", "--nodes", "1"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0 and res.output.lstrip().startswith("does not fit")
    res = CliRunner().invoke(app, args + ["--require-fit"])
    assert res.exit_code == 1


def test_dp_fills_the_nodes_and_search_tries_interleaving():
    res = CliRunner().invoke(app, ["plan", "--model", "llama3-8b", "--tp", "8", "--nodes", "2", "--json"])
    assert res.exit_code == 0, res.output
    assert '"dp": 2' in res.output
    found = search(
        get_model("gpt3-175b"),
        64,
        get_preset("dgx-a100"),
        64,
        micro_batch_sizes=(1,),
        zero_stages=(0,),
        recompute=("selective",),
    )
    assert {p.layout.virtual_stages for p in found.plans} >= {1, 2}
    assert all(96 % p.layout.tp == 0 for p in found.plans)


def test_compare_prefers_the_published_faster_layout_over_zero3_at_1536_gpus():
    # Narayanan et al. 2021 Table 2, 175B on 1536 A100s: tp8 x pp12 ran 141 TFLOP/s per GPU, ZeRO-3 44
    res = CliRunner().invoke(
        app,
        [
            "plan",
            "--model",
            "gpt3-175b",
            "--tp",
            "1",
            "--pp",
            "1",
            "--dp",
            "1536",
            "--zero",
            "3",
            "--recompute",
            "full",
            "--unfused-attention",
            "--cluster",
            "dgx-a100",
            "--nodes",
            "192",
            "--compare",
            "tp=8,pp=12,dp=16,mb=96,zero=0",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    zero3, ptd = (p["step_s"] for p in doc["plans"])
    assert doc["fastest"] == 1 and zero3 / ptd > 2
