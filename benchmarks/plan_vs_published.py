"""The planner against published training runs, with one fixed parameter set per GPU (plan/gpus.py,
plan/kernels.py) that no row tunes: the planner's compute model, the cluster preset's links, the
layout as the paper states it.

Sources (every row carries its citation in Row.cite; times per iteration are the paper's, or the
paper's per-GPU FLOP/s turned into seconds with the paper's own FLOP count). Each row's figures were
checked against the source text; where a figure is the benchmark's assumption, it says so here.
  N21  Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters Using
       Megatron-LM" (SC21, arXiv 2104.04473v5). Table 1 (weak scaling, GPT models, A100 80GB on
       Selene = DGX A100 nodes with 8 HDR 200 Gb/s NICs) and Table 2 (ZeRO-3 without model
       parallelism against PTD parallelism, 175B and 530B; the 530B ZeRO-3 series runs 640 GPUs at
       batch 2560, the table's starred row, then 1120 and 2240 GPUs at 2240). FLOPs per iteration,
       their eq. 3 (full recompute): 96 B s l h^2 (1 + s / 6h + V / 16lh). Sequence 2048, vocabulary
       51200, full recompute, no sequence parallelism, unfused attention (2021). Micro-batch 1 for the
       PTD rows and Table 2's stated size (4, 2, 1) for the ZeRO-3 rows. Table 1 states none: every
       Table 1 row assumes 1, an assumption only (the paper's micro-batch study, Figure 16, finds 2
       best for a 91B model at tp 8, pp 8).
  K22  Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models"
       (arXiv 2205.05198v1): Table 5's seconds per iteration, full recompute and "present work"
       (sequence parallel + selective recompute), on Table 3's GPT models and layouts: tp 8, no data
       parallelism, micro-batch 4 for 22B (its whole batch) and 1 for the others; §6 runs 175B and
       530B with the interleaved schedule, three chunks per pipeline rank.
  MT   Smith et al. 2022, "Using DeepSpeed and Megatron to Train Megatron-Turing NLG 530B"
       (arXiv 2201.11990) §2.4: batch 1920 on 280, 350 and 420 DGX A100 nodes, tp 8, pp 35:
       60.1, 50.2 and 44.4 s per iteration (126, 121, 113 TFLOP/s per GPU). Micro-batch 1 and no
       interleaving are assumptions.
  BL   BigScience 2022, "BLOOM: A 176B-Parameter Open-Access Multilingual Language Model" (arXiv
       2211.05100) §3.4 (48 nodes of 8 A100 80GB, 4 x 100 Gb/s Omni-Path per node; 70 layers,
       hidden 14336, 112 heads, vocabulary 250680, batch 2048 sequences of 2048) and the run's launch
       script (bigscience-workshop/bigscience train/tr11-176B-ml/tr11-176B-ml.slurm: tp 4, pp 12,
       micro-batch 2, activation checkpointing, BF16 optimizer "its own zero stage 1 equivalent");
       "about 150 TFLOP/s" per GPU from the BigScience 176B model page (counted as Megatron does,
       eq. 3 above).
  L3   Dubey et al. 2024, "The Llama 3 Herd of Models" (arXiv 2407.21783) §3.3.2, Table 4: Llama 3
       405B on H100 (400 Gb/s per GPU), tp 8, pp 16 with the interleaved schedule and one layer fewer
       on the first and last stages, 16M tokens per batch: 430, 400 and 380 TFLOP/s per GPU (8192
       and 16384 GPUs at sequence 8192; 16384 GPUs with cp 16 at sequence 131072). The table prints
       DP 4 on the 131072 row, which contradicts its own 16384 GPUs and 16M tokens (8 x 16 x 16 x 4
       is 8192); DP 8 satisfies both and is used. FP32 gradient reduce-scatter, FSDP sharding
       optimizer states and gradients once per step (priced as zero=1), FlashAttention; §3.3.2 says
       the 8K-sequence runs use no activation checkpointing, and none is planned for any row, though
       the planner's activation model puts these rows at about 118 GiB per GPU: the "fits" column
       says no. The number of chunks per pipeline rank is not published; 2 is assumed. FLOPs per
       token counted as PaLM's 6 N + 12 L s h (Chowdhery et al. 2022, appendix B), which the
       paper's MFU follows.

Reported: median and worst |error| over all rows, and the ZeRO-3 collapse: sequences per second per
GPU at the largest over the smallest data-parallel size, planned against published (N21 Table 2).

    PYTHONPATH=src python benchmarks/plan_vs_published.py
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace

from collperf import plan as plans
from collperf.model.network import Link
from collperf.model.hardware.presets import get_preset
from collperf.plan.gpus import GPUS
from collperf.plan.kernels import modelled_compute

V_GPT = 51200
ALGORITHM = "best"  # the planner's default: the best of what NCCL runs (plan/pricing.py)


@dataclass(frozen=True, kw_only=True)
class Row:
    source: str
    cite: str  # where the row's figures stand: arXiv id and version, table or section
    model: object  # a plans.ModelSpec
    gpus: int
    batch: int  # sequences per iteration
    layout: dict  # plans.Layout fields besides dp and micro_batches
    published_s: float
    cluster: str = "dgx-a100"
    note: str = ""
    zero3_group: str = ""  # rows of one ZeRO-3 scaling series


def gpt(layers: int, hidden: int, heads: int, seq: int = 2048, vocab: int = V_GPT, **fields):
    return plans.ModelSpec(
        f"gpt {layers}x{hidden}",
        plans.gpt_params(layers, hidden, vocab, seq),
        layers,
        hidden,
        seq,
        heads=heads,
        vocab=vocab,
        **fields,
    )


def megatron_flops(m, batch: int) -> float:
    """96 B s l h^2 (1 + s / 6h + V / 16lh): Narayanan et al. 2021 eq. 3 (with full recompute)."""
    s, n_layers, h, v = m.seq_len, m.layers, m.hidden, m.vocab
    return 96 * batch * s * n_layers * h**2 * (1 + s / (6 * h) + v / (16 * h * n_layers))


def from_tflops(m, batch: int, gpus: int, tflops: float) -> float:
    return megatron_flops(m, batch) / (gpus * tflops * 1e12)


def palm_seconds(m, batch: int, gpus: int, tflops: float) -> float:
    return batch * m.seq_len * (6 * m.params + 12 * m.layers * m.seq_len * m.hidden) / (gpus * tflops * 1e12)


OLD = dict(recompute="full", flash_attention=False)  # Megatron 2021: full recompute, unfused attention


def n21_table1() -> list[Row]:
    rows = []
    # params, heads, hidden, layers, tp, pp, GPUs, batch, achieved TFLOP/s per GPU
    for heads, hidden, layers, tp, pp, gpus, batch, tflops in (
        (24, 2304, 24, 1, 1, 32, 512, 137),
        (32, 3072, 30, 2, 1, 64, 512, 138),
        (32, 4096, 36, 4, 1, 128, 512, 142),
        (48, 6144, 40, 8, 1, 256, 1024, 135),
        (64, 8192, 48, 8, 2, 512, 1536, 138),
        (80, 10240, 60, 8, 4, 1024, 1792, 140),
        (96, 12288, 80, 8, 8, 1536, 2304, 148),
        (128, 16384, 96, 8, 16, 1920, 2160, 155),
        (128, 20480, 105, 8, 35, 2520, 2520, 163),
        (160, 25600, 128, 8, 64, 3072, 3072, 163),
    ):
        m = gpt(layers, hidden, heads)
        rows.append(
            Row(
                source="N21 T1",
                cite="arXiv 2104.04473v5 Table 1",
                model=m,
                gpus=gpus,
                batch=batch,
                layout=dict(tp=tp, pp=pp, **OLD),
                published_s=from_tflops(m, batch, gpus, tflops),
                note=f"{tflops} TFLOP/s",
            )
        )
    return rows


def n21_table2() -> list[Row]:
    rows = []
    m175, m530 = gpt(96, 12288, 96), gpt(105, 20480, 128)
    # (GPUs, batch, micro-batch, TFLOP/s per GPU) as Table 2 prints them. The 530B series starts at 640
    # GPUs with batch 2560 (the table's starred row: 560 GPUs did not fit), then 1120 and 2240 at 2240.
    for m, series in (
        (m175, ((384, 1536, 4, 144), (768, 1536, 2, 88), (1536, 1536, 1, 44))),
        (m530, ((640, 2560, 4, 138), (1120, 2240, 2, 98), (2240, 2240, 1, 48))),
    ):
        for gpus, batch, mb, tflops in series:
            rows.append(
                Row(
                    source="N21 T2 ZeRO-3",
                    cite="arXiv 2104.04473v5 Table 2",
                    model=replace(m, micro_batch=mb),
                    gpus=gpus,
                    batch=batch,
                    layout=dict(tp=1, pp=1, zero=3, zero3_impl="deepspeed", **OLD),
                    published_s=from_tflops(m, batch, gpus, tflops),
                    note=f"{tflops} TFLOP/s",
                    zero3_group=f"{m.params / 1e9:.0f}B",
                )
            )
    for m, tp, pp, batch, series in (
        (m175, 8, 12, 1536, ((384, 153), (768, 149), (1536, 141))),
        (m530, 8, 35, 2240, ((560, 171), (1120, 167), (2240, 159))),
    ):
        for gpus, tflops in series:
            rows.append(
                Row(
                    source="N21 T2 PTD",
                    cite="arXiv 2104.04473v5 Table 2",
                    model=m,
                    gpus=gpus,
                    batch=batch,
                    layout=dict(tp=tp, pp=pp, **OLD),
                    published_s=from_tflops(m, batch, gpus, tflops),
                    note=f"{tflops} TFLOP/s",
                )
            )
    return rows


def k22_table5() -> list[Row]:
    rows = []
    # Table 3's layout (tp 8, no DP, micro-batch 4 for 22B and 1 otherwise) and §6's interleaved
    # schedule with three chunks per pipeline rank for 175B and 530B; Table 5's seconds.
    cite = "arXiv 2205.05198v1 Tables 3 and 5, §6"
    for name, pp, chunks, gpus, batch, mb, full_s, present_s in (
        ("gpt3-22b", 1, 1, 8, 4, 4, 1.42, 1.10),
        ("gpt3-175b", 8, 3, 64, 64, 1, 18.13, 13.75),
        ("gpt3-530b", 35, 3, 280, 280, 1, 49.05, 37.83),
        ("gpt3-1t", 64, 1, 512, 512, 1, 94.42, 71.49),
    ):
        m = replace(plans.get_model(name), micro_batch=mb)
        rows.append(
            Row(
                source="K22 T5 full",
                cite=cite,
                model=m,
                gpus=gpus,
                batch=batch,
                layout=dict(tp=8, pp=pp, virtual_stages=chunks, **OLD),
                published_s=full_s,
            )
        )
        rows.append(
            Row(
                source="K22 T5 sp+sel",
                cite=cite,
                model=m,
                gpus=gpus,
                batch=batch,
                layout=dict(
                    tp=8,
                    pp=pp,
                    virtual_stages=chunks,
                    recompute="selective",
                    sequence_parallel=True,
                    flash_attention=False,
                ),
                published_s=present_s,
            )
        )
    return rows


def mtnlg() -> list[Row]:
    m = gpt(105, 20480, 128)
    return [
        Row(
            source="MT-NLG §2.4",
            cite="arXiv 2201.11990 §2.4",
            model=m,
            gpus=gpus,
            batch=1920,
            layout=dict(tp=8, pp=35, **OLD),
            published_s=seconds,
            note=f"{tflops} TFLOP/s",
        )
        for gpus, seconds, tflops in ((2240, 60.1, 126), (2800, 50.2, 121), (3360, 44.4, 113))
    ]


def bloom() -> list[Row]:
    m = replace(gpt(70, 14336, 112, vocab=250680), name="bloom-176b", micro_batch=2)
    return [
        Row(
            source="BLOOM §3.4",
            cite="arXiv 2211.05100 §3.4; BigScience tr11-176B-ml.slurm",
            model=m,
            gpus=384,
            batch=2048,
            cluster="jean-zay",
            layout=dict(tp=4, pp=12, zero=1, **OLD),
            published_s=from_tflops(m, 2048, 384, 150),
            note="150 TFLOP/s",
        )
    ]


def llama3() -> list[Row]:
    base = replace(plans.get_model("llama3-405b"), grad_bytes=4)
    lay = dict(tp=8, pp=16, zero=1, sequence_parallel=True, virtual_stages=2)
    rows = []
    for gpus, cp, seq, tflops in ((8192, 1, 8192, 430), (16384, 1, 8192, 400), (16384, 16, 131072, 380)):
        m = replace(base, seq_len=seq)
        batch = 16 * 2**20 // seq
        rows.append(
            Row(
                source="Llama 3 T4",
                cite="arXiv 2407.21783 Table 4, §3.3.2",
                model=m,
                gpus=gpus,
                batch=batch,
                cluster="dgx-h100",
                layout=dict(lay, cp=cp, cp_allgather=True),
                published_s=palm_seconds(m, batch, gpus, tflops),
                note=f"{tflops} TFLOP/s",
            )
        )
    return rows


def cluster_of(row: Row):
    if row.cluster == "jean-zay":  # A100 80GB nodes, NVLink inside, 4 x 100 Gb/s Omni-Path per node
        return replace(
            get_preset("dgx-a100", row.gpus // 8),
            inter=Link(5e-6, 100e9 / 8, name="Omni-Path 100G"),
            nics_per_node=4,
            name="jean-zay",
        )
    return get_preset(row.cluster, row.gpus // 8)


def predict(row: Row):
    fields = dict(row.layout)
    tp, pp, cp = fields.get("tp", 1), fields.get("pp", 1), fields.get("cp", 1)
    dp = row.gpus // (tp * pp * cp)
    m = row.batch // (dp * row.model.micro_batch)
    gpu = GPUS["dgx-h100" if row.cluster == "dgx-h100" else "dgx-a100"]
    layout = plans.Layout(dp=dp, micro_batches=m, gpu_memory_bytes=gpu.memory_bytes, **fields)
    return plans.plan(row.model, layout, cluster_of(row), modelled_compute(row.model, layout, gpu), algorithm=ALGORITHM)


def per_gpu_ratio(gpus0: int, batch0: int, time0_s: float, gpus1: int, batch1: int, time1_s: float) -> float:
    """Sequences per second per GPU at the second point over the first: the 530B ZeRO-3 series changes
    its batch (2560 at 640 GPUs, 2240 after), so GPU-seconds alone would not compare like with like."""
    return (batch1 / (gpus1 * time1_s)) / (batch0 / (gpus0 * time0_s))


def rows() -> list[Row]:
    return n21_table1() + n21_table2() + k22_table5() + mtnlg() + bloom() + llama3()


def main() -> None:
    print(
        "one parameter set per GPU (plan/gpus.py), no row tuned: "
        + "; ".join(
            f"{g.name}: GEMM {g.gemm:.0%} of {g.peak_flops / 1e12:.0f} TFLOP/s, half at edge "
            f"{g.gemm_half:.0f}, flash {g.flash:.0%}, batched {g.batched:.0%}"
            for g in (GPUS["dgx-a100"], GPUS["dgx-h100"])
        )
    )
    print(
        f"{'source':14} {'model':18} {'GPUs':>5} {'layout':34} {'published':>9} {'planned':>8} {'error':>7} "
        f"{'compute':>8} {'bubble':>7} {'exposed':>8} {'fits':>5}"
    )
    errors, series = [], {}
    for row in rows():
        p = predict(row)
        err = p.step_s / row.published_s - 1
        errors.append(abs(err))
        if row.zero3_group:
            series.setdefault(row.zero3_group, []).append((row.gpus, row.batch, row.published_s, p.step_s))
        print(
            f"{row.source:14} {row.model.name[:18]:18} {row.gpus:5} {p.layout.describe()[:34]:34} "
            f"{row.published_s:9.2f} {p.step_s:8.2f} {err:+7.1%} {p.compute_s:8.2f} {p.bubble_s:7.2f} "
            f"{p.exposed_s:8.2f} {'yes' if p.fits else 'no':>5}"
        )
    sources = len({row.source.split()[0] for row in rows()})
    print(
        f"{len(errors)} rows from {sources} sources: median |error| {statistics.median(errors):.1%}, "
        f"mean {statistics.mean(errors):.1%}, worst {max(errors):.1%}"
    )
    for group, points in series.items():
        (g0, b0, pub0, plan0), (g1, b1, pub1, plan1) = points[0], points[-1]
        published = per_gpu_ratio(g0, b0, pub0, g1, b1, pub1)
        planned = per_gpu_ratio(g0, b0, plan0, g1, b1, plan1)
        print(
            f"ZeRO-3 {group}: per-GPU throughput {g1} vs {g0} GPUs: published {published:.3f}, "
            f"planned {planned:.3f} (planned / published {planned / published:.2f})"
        )


if __name__ == "__main__":
    main()
