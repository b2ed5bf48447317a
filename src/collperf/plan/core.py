"""One training step: the priced communication, what of it hides behind compute, the bubble, memory."""

from __future__ import annotations

from dataclasses import dataclass, field

from collperf.errors import UsageError
from collperf.model.network import Cluster
from collperf.plan.comms import Demand, demands
from collperf.plan.layout import Layout
from collperf.plan.memory import Memory, gpu_memory_of, headroom_words, memory
from collperf.plan.model import ModelSpec
from collperf.plan.pipeline import ComputeSplit, bubble_fraction, split_compute, stage_layers
from collperf.plan.pricing import Pricer, placed
from collperf.plan.zero3 import exposed_role, get_impl, prefetched_share


@dataclass
class CommItem:
    kind: str  # TP, PP, CP, EP, DP, ZeRO
    collective: str
    group_ranks: int
    level: str  # intra, inter, two-level
    count: int  # per rank per step
    size_bytes: float
    time_per_op_s: float
    algorithm: str
    role: str = ""
    reductions: int = 1

    @property
    def total_s(self) -> float:
        return self.count * self.time_per_op_s


@dataclass
class Plan:
    model: ModelSpec
    layout: Layout
    cluster: Cluster
    items: list[CommItem]
    compute_s: float | None
    overlap: dict
    exposed: dict = field(default_factory=dict)  # kind -> exposed seconds
    bubble_s: float = 0.0
    memory: Memory | None = None
    measured: object = None  # plan/from_trace.Measured: the traced step beside the plan

    def by_kind(self) -> dict:
        totals: dict = {}
        for item in self.items:
            totals[item.kind] = totals.get(item.kind, 0.0) + item.total_s
        return totals

    @property
    def comm_s(self) -> float:
        return sum(self.by_kind().values())

    @property
    def exposed_s(self) -> float:
        return sum(self.exposed.values())

    @property
    def step_s(self) -> float:
        """Compute, the pipeline bubble and the communication that does not hide."""
        return (self.compute_s or 0.0) + self.bubble_s + self.exposed_s

    @property
    def speedup(self) -> float | None:
        """Step time without overlap / with it."""
        if not self.compute_s:
            return None
        return (self.compute_s + self.bubble_s + self.comm_s) / self.step_s

    @property
    def dominant(self) -> str:
        kinds = self.by_kind()
        return max(kinds, key=kinds.get) if kinds else "none"

    @property
    def fits(self) -> bool | None:
        return None if self.memory is None else self.memory.fits

    @property
    def warnings(self) -> list[str]:
        out = []
        if self.memory is not None and self.memory.fits is False:
            m = self.memory
            out.append(
                f"does not fit: {m.total_bytes / 2**30:.1f} GiB per GPU (weights {m.weights_bytes / 2**30:.1f}"
                f" + gradients {m.grads_bytes / 2**30:.1f} + optimizer {m.optimizer_bytes / 2**30:.1f} + "
                f"activations {m.activations_bytes / 2**30:.1f}) > {m.usable_bytes / 2**30:.1f} GiB usable "
                f"({headroom_words(m)}): try --recompute selective|full, --sp, a higher --zero, more "
                "--tp/--pp, or --gpu-memory/--memory-headroom"
            )
        return out

    def to_json(self) -> dict:
        layout = {**vars(self.layout), "placement": "-".join(self.layout.placement)}
        return {
            "model": vars(self.model),
            "layout": layout,
            "cluster": self.cluster.describe(),
            "ranks": self.cluster.ranks,
            "items": [{**vars(i), "total_s": i.total_s} for i in self.items],
            "by_kind_s": self.by_kind(),
            "exposed_s": self.exposed,
            "communication_s": self.comm_s,
            "compute_s": self.compute_s,
            "bubble_s": self.bubble_s if self.compute_s else None,
            "bubble_fraction": bubble_fraction(self.layout),
            "step_s": self.step_s if self.compute_s else None,
            "speedup_from_overlap": self.speedup,
            "dominant": self.dominant,
            "memory": self.memory.to_json() if self.memory else None,
            "warnings": self.warnings,
            "from_trace": self.measured.to_json() if self.measured else None,
        }


def plan(
    model: ModelSpec,
    layout: Layout,
    cluster: Cluster,
    compute_s: float | ComputeSplit | None = None,
    overlap: dict | None = None,
    algorithm: str = "best",
    intra_algorithm: str = "best",
    inter_algorithm: str = "best",
    pricer: Pricer | None = None,
) -> Plan:
    """The communication of one training step, priced on `cluster`, with overlap against compute, the
    pipeline bubble and the memory per GPU (`plan.warnings` says when it does not fit). `compute_s` is
    a time per step (split 1:2 forward:backward plus recompute) or a ComputeSplit (kernels.py)."""
    layout.check(cluster.ranks, model.layers)
    layout.check_model(model)
    pricer = pricer or Pricer(algorithm, intra_algorithm, inter_algorithm)
    wanted = [(d, placed(cluster, layout, d.dim, d.collective)) for d in demands(model, layout)]
    for d, (net, _) in wanted:
        pricer.request(d.collective, net, d.size_bytes)
    pricer.resolve()
    return assemble(model, layout, cluster, wanted, pricer, compute_s, overlap)


def assemble(model, layout, cluster, wanted: list[tuple[Demand, tuple]], pricer: Pricer, compute_s, overlap) -> Plan:
    items = []
    for d, (net, level) in wanted:
        if d.count <= 0 or d.size_bytes <= 0 or net.ranks == 1:
            continue
        time_s, name = pricer.price(d.collective, net, d.size_bytes)
        items.append(
            CommItem(d.kind, d.collective, net.ranks, level, d.count, d.size_bytes, time_s, name, d.role, d.reductions)
        )
    split = compute_s if isinstance(compute_s, ComputeSplit) else None
    if split is not None:
        compute_s = split.total_s
    elif compute_s:
        split = split_compute(model, layout, compute_s)
    result = Plan(
        model,
        layout,
        cluster,
        items,
        compute_s,
        dict(overlap or {}),
        memory=memory(model, layout, gpu_memory_of(cluster)),
    )
    result.exposed = exposed(result, split)
    result.bubble_s = bubble_fraction(layout) * compute_s if compute_s else 0.0
    return result


def exposed(p: Plan, split: ComputeSplit | None) -> dict:
    """Exposed seconds per kind: (1 - overlap fraction) x its time where a fraction is given; else DP
    buckets and ZeRO-3 follow their schedules against compute, and TP, PP, CP, EP and the ZeRO-1/2
    parameter allgather are exposed (blocking in Megatron 2022; give --overlap to credit overlap)."""
    out = {}
    for kind, total in p.by_kind().items():
        if kind in p.overlap:
            fraction = p.overlap[kind]
            if not 0 <= fraction <= 1:
                raise UsageError(f"overlap of {kind} {fraction}: expected a fraction between 0 and 1")
            out[kind] = total * (1 - fraction)
        elif split is None:
            out[kind] = total
        else:
            out[kind] = sum(
                _exposed_role(p, [i for i in p.items if i.kind == kind and i.role == role], split)
                for role in {i.role for i in p.items if i.kind == kind}
            )
    return out


def _exposed_role(p: Plan, items: list[CommItem], split: ComputeSplit) -> float:
    role, lay = items[0].role, p.layout
    total = sum(i.total_s for i in items)
    m, layers = lay.micro_batches, max(stage_layers(p.model, lay))
    if role == "bucket":
        # DDP/Megatron: buckets go out one by one under the backward of the micro-batch after which they
        # are reduced (the last one only, unless reduced every micro-batch); the last bucket never hides.
        reductions = items[0].reductions
        window = split.backward_s / m
        last = min(i.time_per_op_s for i in items)
        return reductions * max(last, total / reductions - window)
    if not role.startswith("z3"):
        return total
    impl = get_impl(lay.zero3_impl)
    layer_elements = (p.model.dense_params + p.model.expert_params / lay.expert_parallel) / (lay.tp * lay.pp)
    share = prefetched_share(impl, layer_elements / layers)
    return exposed_role(role, items, layers, m, split.forward_s, split.backward_s, share, lay.prefetch)
