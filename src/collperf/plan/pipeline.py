"""The pipeline schedule's idle time and the compute a step needs.

1F1B (PipeDream-Flush; Narayanan et al. 2021 §2.2.1): with p stages and m micro-batches each stage is
idle (p - 1) forward+backward slots out of m, a bubble of (p - 1) / m of the ideal compute time; the
interleaved schedule with v model chunks per rank cuts it to (p - 1) / (v m) (§2.2.2) at the cost of
v times the stage-boundary messages.
"""

from __future__ import annotations

from dataclasses import dataclass

from collperf.errors import UsageError


def stage_layers(model, layout) -> tuple[int, ...]:
    """Transformer layers of each pipeline stage. Given first/last counts (Megatron-Core's
    --decoder-first/last-pipeline-num-layers) the rest spread evenly over the middle stages; otherwise
    layers that do not divide evenly are taken from the last and the first stage first, which also carry
    the LM head and the embedding (Llama 3's 126 layers on 16 stages: 7, 8 x 14, 7 -- Dubey et al.
    2024 §3.3.2; BLOOM's 70 on 12: 5, 6 x 10, 5)."""
    p, total = layout.pp, model.layers
    if p == 1:
        return (total,)
    first, last = layout.first_stage_layers, layout.last_stage_layers
    if first is not None or last is not None:
        middle_stages = p - (first is not None) - (last is not None)
        rest = total - (first or 0) - (last or 0)
        if middle_stages == 0:
            counts = [c for c in (first, last) if c is not None]
            if sum(counts) != total:
                raise UsageError(f"first/last stage layers ({first}, {last}) must add up to layers({total}) on pp 2")
            return tuple(counts)
        if rest < middle_stages or rest % middle_stages:
            raise UsageError(
                f"layers({total}) - first({first or 0}) - last({last or 0}) = {rest} must split evenly "
                f"over the {middle_stages} other stages (at least one layer each)"
            )
        counts = [rest // middle_stages] * middle_stages
        return tuple(([first] if first is not None else []) + counts + ([last] if last is not None else []))
    base = -(-total // p)
    counts = [base] * p
    order = [i for pair in zip(range(p - 1, -1, -1), range(p)) for i in pair]  # last, first, last-1, ...
    short, k = base * p - total, 0
    while short:
        i = order[k % len(order)]
        if counts[i] > 1:
            counts[i] -= 1
            short -= 1
        k += 1
    return tuple(counts)


def busiest_moe_layers(model, layout) -> int:
    """MoE layers of the busiest stage (most layers; of those, most MoE layers): the dense first layers of
    an MoE model sit on the first stage."""
    if model.experts == 1:
        return 0
    start, best = 0, (0, 0)
    for count in stage_layers(model, layout):
        moe = sum(1 for i in range(start, start + count) if i >= model.dense_layers)
        best = max(best, (count, moe))
        start += count
    return best[1]


def bubble_fraction(layout) -> float:
    """Idle time of the pipeline as a fraction of its compute time: (p - 1) / (v m)."""
    return (layout.pp - 1) / (layout.virtual_stages * layout.micro_batches)


def recompute_flops_per_token(model, recompute: str) -> float:
    """Extra FLOPs per token that recomputation adds to the backward. Full: one more forward of every
    layer, 2 x (parameters outside the embedding) + 4 L s h (Korthikanti et al. 2022 §5, the 4/3 of
    model FLOPs); selective: the forward of the attention core only, QK^T and the weighted sum,
    4 L s h (§4.3: the part that recomputes cheaply)."""
    attention = 4.0 * model.layers * model.seq_len * model.core_width
    if recompute == "full":
        return 2.0 * (model.active_params - model.embedding_params) + attention
    if recompute == "selective":
        return attention
    return 0.0


@dataclass(frozen=True)
class ComputeSplit:
    """One rank's compute in a step: forward and backward (recompute included in the backward)."""

    forward_s: float
    backward_s: float

    @property
    def total_s(self) -> float:
        return self.forward_s + self.backward_s


def split_compute(model, layout, compute_s: float) -> ComputeSplit:
    """Forward is 1/3 of the model FLOPs, backward 2/3; recompute is added to the backward."""
    base = model.flops_per_token()
    extra = recompute_flops_per_token(model, layout.recompute)
    forward = compute_s * (base / 3) / (base + extra)
    return ComputeSplit(forward, compute_s - forward)


def compute_time(model, layout, flops_per_rank: float) -> float:
    """Model FLOPs plus recompute of one step per rank / achieved FLOP/s: tokens = dp x micro-batches x
    micro_batch x seq_len, (6 x parameters + 12 L s h) per token (Narayanan et al. 2021 eq. 3)."""
    if not flops_per_rank > 0:
        raise UsageError(f"achieved FLOP/s {flops_per_rank} must be positive")
    tokens = layout.dp * layout.micro_batches * model.micro_batch * model.seq_len
    per_token = model.flops_per_token() + recompute_flops_per_token(model, layout.recompute)
    return per_token * tokens / (layout.ranks * flops_per_rank)


def overlap_step(compute_s: float, comm_s: float, fraction: float) -> tuple[float, float]:
    """(step time, speedup over no overlap) when `fraction` of the communication hides behind compute."""
    step = compute_s + comm_s * (1 - fraction)
    return step, (compute_s + comm_s) / step
