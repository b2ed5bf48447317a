"""The pipeline schedule's idle time and the compute a step needs.

1F1B (PipeDream-Flush; Narayanan et al. 2021 §2.2.1): with p stages and m micro-batches each stage is
idle (p - 1) forward+backward slots out of m, a bubble of (p - 1) / m of the ideal compute time; the
interleaved schedule with v model chunks per rank cuts it to (p - 1) / (v m) (§2.2.2) at the cost of
v times the stage-boundary messages.
"""

from __future__ import annotations

from dataclasses import dataclass

from collperf.errors import UsageError


def bubble_fraction(layout) -> float:
    """Idle time of the pipeline as a fraction of its compute time: (p - 1) / (v m)."""
    return (layout.pp - 1) / (layout.virtual_stages * layout.micro_batches)


def recompute_flops_per_token(model, recompute: str) -> float:
    """Extra FLOPs per token that recomputation adds to the backward. Full: one more forward of every
    layer, 2 x (parameters outside the embedding) + 4 L s h (Korthikanti et al. 2022 §5, the 4/3 of
    model FLOPs); selective: the forward of the attention core only, QK^T and the weighted sum,
    4 L s h (§4.3: the part that recomputes cheaply)."""
    attention = 4.0 * model.layers * model.seq_len * model.hidden
    if recompute == "full":
        return 2.0 * (model.active_params - model.vocab * model.hidden) + attention
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
