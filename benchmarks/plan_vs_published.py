"""The planner against published iteration times: Korthikanti et al. 2022, "Reducing Activation
Recomputation in Large Transformer Models" (arXiv 2205.05198), Table 5, GPT models of Table 3 on
A100 80GB DGX SuperPOD nodes (the dgx-a100 preset: NVLink3 300 GB/s, 8 x HDR 200 Gb/s per node).

Setup from the paper (Table 3): sequence 2048, vocabulary 51200, micro-batch 1, data parallel 1,
    22B:  64 heads, hidden  6144,  48 layers, tp 8, pp  1,   8 GPUs, global batch   4
    175B: 96 heads, hidden 12288,  96 layers, tp 8, pp  8,  64 GPUs, global batch  64
    530B: 128 heads, hidden 20480, 105 layers, tp 8, pp 35, 280 GPUs, global batch 280
    1T:  160 heads, hidden 25600, 128 layers, tp 8, pp 64, 512 GPUs, global batch 512
"full recompute" = tensor parallel with full activation recompute; "present work" = sequence parallel
+ selective recompute. Non-interleaved 1F1B assumed (the paper's Table 5 does not say otherwise).

Published seconds per iteration. The "present work" times 1.10 / 13.75 / 37.83 / 71.49 s are checked
here against the model FLOPs utilisations the Megatron-LM README publishes for the same runs (41.5,
51.4, 56.0, 56.3 %: time = 72 B s l h^2 (1 + s/6h + V/12hl) / (GPUs x 312 TFLOP/s x MFU), printed as
"from MFU"); the full-recompute times 1.42 / 18.13 / 49.05 / 94.42 s are the paper's Table 5 as we
read it and could not be checked against a second source here.

One achieved FLOP/s per GPU for every row (ACHIEVED below, stated once, not fitted per row); the
planner adds recompute FLOPs, the 1F1B bubble and the exposed TP/PP communication.

    PYTHONPATH=src python benchmarks/plan_vs_published.py
"""

from __future__ import annotations

from collperf import plan as plans
from collperf.model.presets import get_preset

A100_PEAK = 312e12          # dense bf16/fp16 tensor-core FLOP/s (A100 datasheet)
ACHIEVED = 0.62 * A100_PEAK     # one figure for all rows: 62 % of peak in the GEMMs and attention

ROWS = [  # model, pp, GPUs, global batch, published full recompute s, published present work s, README MFU
    ("gpt3-22b", 1, 8, 4, 1.42, 1.10, 0.415),
    ("gpt3-175b", 8, 64, 64, 18.13, 13.75, 0.514),
    ("gpt3-530b", 35, 280, 280, 49.05, 37.83, 0.560),
    ("gpt3-1t", 64, 512, 512, 94.42, 71.49, 0.563),
]


def paper_model_flops(m, batch: int) -> float:
    """72 B s l h^2 (1 + s / 6h + V / 12hl): the paper's model FLOPs per iteration (§6, from Narayanan 2021)."""
    s, l, h, v = m.seq_len, m.layers, m.hidden, m.vocab
    return 72 * batch * s * l * h ** 2 * (1 + s / (6 * h) + v / (12 * h * l))


def predict(name: str, pp: int, gpus: int, batch: int, present_work: bool, achieved: float = ACHIEVED):
    model = plans.get_model(name)
    layout = plans.Layout(tp=8, pp=pp, dp=1, micro_batches=batch, sequence_parallel=present_work,
                          recompute="selective" if present_work else "full")
    cluster = get_preset("dgx-a100", gpus // 8)
    compute_s = plans.compute_time(model, layout, achieved)
    return plans.plan(model, layout, cluster, compute_s)


def main() -> None:
    print(f"achieved FLOP/s per GPU, all rows: {ACHIEVED / 1e12:.0f} TFLOP/s ({ACHIEVED / A100_PEAK:.0%} of A100 peak)")
    head = (f"{'model':10} {'setup':14} {'published':>9} {'from MFU':>8} {'planned':>8} {'error':>7} "
            f"{'compute':>8} {'bubble':>7} {'TP':>7} {'PP':>6} {'memory':>9}")
    print(head)
    errors = []
    for name, pp, gpus, batch, full_s, present_s, mfu in ROWS:
        for present, published in ((False, full_s), (True, present_s)):
            p = predict(name, pp, gpus, batch, present)
            from_mfu = paper_model_flops(p.model, batch) / (gpus * A100_PEAK * mfu) if present else None
            err = p.step_s / published - 1
            errors.append(abs(err))
            by = p.exposed
            print(f"{name:10} {'sp+selective' if present else 'full recompute':14} {published:9.2f} "
                  f"{from_mfu if from_mfu else float('nan'):8.2f} {p.step_s:8.2f} {err:+7.1%} {p.compute_s:8.2f} "
                  f"{p.bubble_s:7.2f} {by.get('TP', 0):7.2f} {by.get('PP', 0):6.3f} "
                  f"{p.memory.total_bytes / 2**30:6.1f}GiB")
    print(f"mean |error| {sum(errors) / len(errors):.1%}, worst {max(errors):.1%}")


if __name__ == "__main__":
    main()
