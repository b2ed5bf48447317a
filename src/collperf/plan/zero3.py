"""ZeRO-3 as DeepSpeed and FSDP run it: what each layer gathers and reduces, in how many collectives,
and how much of it hides behind the compute of the layer before it.

Per micro-batch and layer (Rajbhandari et al. 2020 §5-7): an allgather of the layer's parameters
forward, another backward, and a reducescatter of its gradients backward (with --keep-params one
gather and one reducescatter per layer and step: FSDP's reshard_after_forward=False with no_sync).
Two implementations differ in how they issue these:
  fsdp       PyTorch FSDP (Zhao et al. 2023, "PyTorch FSDP", §3.2-3.3): one flat parameter per wrapped
             layer, so one collective per layer and direction; the next layer's allgather is issued
             ahead (backward and forward prefetch) and hides behind this layer's compute.
  deepspeed  DeepSpeed ZeRO-3 (DeepSpeed config docs: stage3_prefetch_bucket_size, default 5e7
             elements): one collective per parameter tensor (a GPT layer holds 12: QKV, projection,
             two MLP matrices, their biases, two layer norms' weights and biases), and only
             prefetch_bucket elements of the next layer are fetched ahead; the rest is fetched when
             the layer starts and waits. Over a thousand ranks the per-tensor collectives' latency
             and the unprefetched bytes stop hiding: the throughput collapse of Narayanan et al.
             2021 Table 2.
Exposed time per layer (the first layer of each pass never hides): forward g (1 - q) + max(0, q g - f),
backward g (1 - q) + max(0, q g + r - b), where g is the layer's gather time, r its reducescatter,
f and b the layer's forward and backward compute and q the prefetched share of the layer's bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from collperf.errors import UsageError


@dataclass(frozen=True)
class Zero3Impl:
    name: str
    tensors_per_layer: int  # collectives per layer and direction
    prefetch_elements: float | None  # None: the whole next layer


IMPLEMENTATIONS = {
    "fsdp": Zero3Impl("fsdp", 1, None),
    "deepspeed": Zero3Impl("deepspeed", 12, 5e7),
}


def get_impl(name: str) -> Zero3Impl:
    if name not in IMPLEMENTATIONS:
        raise UsageError(f"zero3 implementation {name!r}: expected one of {', '.join(IMPLEMENTATIONS)}")
    return IMPLEMENTATIONS[name]


def prefetched_share(impl: Zero3Impl, layer_elements: float) -> float:
    """Share of a layer's parameters gathered ahead, under the previous layer's compute."""
    if impl.prefetch_elements is None or layer_elements <= 0:
        return 1.0
    return min(1.0, impl.prefetch_elements / layer_elements)


def exposed_per_layer(gather_s: float, reduce_s: float, compute_s: float, share: float) -> float:
    """Exposed seconds of one layer's ZeRO-3 collectives behind `compute_s` of the layer before it."""
    return gather_s * (1 - share) + max(0.0, share * gather_s + reduce_s - compute_s)


def exposed_role(
    role: str, items, layers: int, micro_batches: int, forward_s: float, backward_s: float, share: float, prefetch: bool
) -> float:
    """Exposed seconds of one ZeRO-3 role (z3-fwd, z3-bwd, z3-keep-ag, z3-keep-rs) in a step."""
    total = sum(i.total_s for i in items)
    if not prefetch:
        return total
    passes = 1 if role.startswith("z3-keep") else micro_batches
    gather = sum(i.total_s for i in items if i.collective == "allgather") / (passes * layers)
    reduce = sum(i.total_s for i in items if i.collective != "allgather") / (passes * layers)
    compute = (forward_s if role in ("z3-fwd", "z3-keep-ag") else backward_s) / (micro_batches * layers)
    first = gather + reduce
    return passes * (first + (layers - 1) * exposed_per_layer(gather, reduce, compute, share))
