"""Every valid layout for a GPU count, ranked by step time: (tp, pp, interleave depth, dp, ZeRO stage,
micro-batch size, recompute, sequence parallel) at a fixed global batch, only those that fit the GPU's
memory. tp divides the attention heads and the K/V heads (or they divide it); pp need not divide the
layers (stages are uneven, pipeline.stage_layers); the interleave depth v is tried at 1, 2 and 4
where micro_batches is a multiple of pp and every chunk keeps a layer.

Fast because nothing is priced twice: the memory check (closed form) drops what does not fit first,
then all collectives of all layouts go to one `Pricer`, which prices each (collective, group network)
once, vectorized over its sizes (benchmarks/plan_search_speed.py measures it).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from collperf.errors import UsageError
from collperf.model.network import Cluster
from collperf.plan.comms import demands
from collperf.plan.core import Plan, assemble
from collperf.plan.dead_ends import explain_empty
from collperf.plan.gpus import require_gpu
from collperf.plan.kernels import modelled_compute
from collperf.plan.layout import Layout, group_shape
from collperf.plan.memory import gpu_memory_of, memory
from collperf.plan.pipeline import compute_time
from collperf.plan.pricing import Pricer, placed


@dataclass
class SearchResult:
    plans: list[Plan]  # the layouts that fit, fastest first
    considered: int  # valid layouts enumerated
    too_big: int  # of those, how many do not fit the GPU
    seconds: float = 0.0  # wall time of the search
    notes: list[str] = field(default_factory=list)
    gpu_bytes: float | None = None  # one GPU's memory and the share of it kept free (memory.py: HEADROOM)
    headroom: float = 0.0
    why_empty: str | None = None  # no plan: why (dead_ends.py), the fewest nodes that fit, the tightest layout
    min_nodes: int | None = None
    tightest: tuple | None = None  # (layout text, total bytes per GPU) of the layout nearest to fitting

    @property
    def best(self) -> Plan | None:
        return self.plans[0] if self.plans else None

    def to_json(self) -> dict:
        return {
            "considered": self.considered,
            "too_big": self.too_big,
            "seconds": self.seconds,
            "notes": self.notes,
            "gpu_bytes": self.gpu_bytes,
            "memory_headroom": self.headroom,
            "why_empty": self.why_empty,
            "min_nodes": self.min_nodes,
            "tightest": None
            if self.tightest is None
            else {"layout": self.tightest[0], "total_bytes": self.tightest[1]},
            "plans": [p.to_json() for p in self.plans],
        }


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def candidates(
    model,
    gpus: int,
    ranks_per_node: int,
    global_batch: int,
    micro_batch_sizes,
    tp_options,
    pp_options,
    zero_stages,
    recompute,
    sequence_parallel,
    base: Layout,
    virtual_stages=(1,),
):
    """(model with its micro-batch size, layout) for every combination that divides evenly."""
    tps = tp_options or [
        t for t in _divisors(ranks_per_node) if gpus % t == 0 and _splits_heads(model, t, base.replicate_kv)
    ]
    pps = pp_options or [p for p in _divisors(gpus) if p <= model.layers]
    for tp in tps:
        for pp in pps:
            if gpus % (tp * pp):
                continue
            dp = gpus // (tp * pp)
            for b in micro_batch_sizes:
                if global_batch % (dp * b):
                    continue
                m = global_batch // (dp * b)
                if pp > 1 and m < pp:
                    continue  # fewer micro-batches than stages: the pipeline is never full
                sized = replace(model, micro_batch=b)
                depths = [v for v in virtual_stages if v == 1 or (pp > 1 and m % pp == 0 and model.layers >= pp * v)]
                for zero in zero_stages:
                    if dp == 1 and zero:
                        continue
                    for rc in recompute:
                        for sp in sequence_parallel if tp > 1 else (False,):
                            for v in depths:
                                yield (
                                    sized,
                                    replace(
                                        base,
                                        tp=tp,
                                        pp=pp,
                                        dp=dp,
                                        zero=zero,
                                        micro_batches=m,
                                        recompute=rc,
                                        sequence_parallel=sp,
                                        keep_params=False,
                                        virtual_stages=v,
                                    ),
                                )


def _splits_heads(model, tp: int, replicate_kv: bool) -> bool:
    kv = model.n_kv_heads
    return model.n_heads % tp == 0 and (kv % tp == 0 or (replicate_kv and tp % kv == 0))


def search(
    model,
    gpus: int,
    cluster: Cluster,
    global_batch: int,
    flops_per_rank: float | None = None,
    *,
    micro_batch_sizes=(1, 2, 4),
    tp_options=None,
    pp_options=None,
    zero_stages=(0, 1, 2, 3),
    recompute=("none", "selective", "full"),
    sequence_parallel=(True,),
    virtual_stages=(1, 2, 4),
    base: Layout | None = None,
    gpu_memory_bytes: float | None = None,
    algorithm: str = "best",
    top: int | None = None,
    on_step=None,
) -> SearchResult:
    """Rank every valid layout of `gpus` GPUs on `cluster` (its ranks_per_node and links; the node count
    follows from gpus) that fits memory, by step time at `global_batch` sequences per step. Compute
    comes from `flops_per_rank` (one rate for every layout) or, when None, from the shape-dependent
    model of the cluster's GPU (kernels.py). on_step(text, done, total) hears how far the search is: layouts
    considered (total unknown until the end), then plans assembled out of those that fit."""
    start = time.perf_counter()
    tell = on_step or (lambda text, done, total: None)
    rpn = cluster.ranks_per_node
    if gpus % rpn:
        raise UsageError(f"gpus({gpus}) is not a multiple of ranks_per_node({rpn}) of {cluster.name or 'the cluster'}")
    if not isinstance(global_batch, int) or global_batch < 1:
        raise UsageError(f"global batch {global_batch!r}: expected a whole number of sequences >= 1")
    cluster = replace(cluster, nodes=gpus // rpn)
    gpu = gpu_memory_bytes if gpu_memory_bytes is not None else gpu_memory_of(cluster)
    base = base or Layout()
    pricer = Pricer(algorithm)
    networks: dict = {}
    kept, considered, too_big = [], 0, 0
    gpu_model = require_gpu(cluster) if flops_per_rank is None else None
    for sized, layout in candidates(
        model,
        gpus,
        rpn,
        global_batch,
        micro_batch_sizes,
        tp_options,
        pp_options,
        zero_stages,
        recompute,
        sequence_parallel,
        base,
        virtual_stages,
    ):
        considered += 1
        if considered % 64 == 0:
            tell(f"considered {considered} layouts", considered, None)
        if memory(sized, layout, gpu).fits is False:
            too_big += 1
            continue
        wanted = []
        for d in demands(sized, layout):
            key = (d.dim, d.collective, group_shape(layout, d.dim, rpn), layout.dp)
            if key not in networks:
                networks[key] = placed(cluster, layout, d.dim, d.collective)
            wanted.append((d, networks[key]))
            pricer.request(d.collective, networks[key][0], d.size_bytes)
        kept.append((sized, layout, wanted))
    tell(f"pricing the collectives of {len(kept)} layouts that fit", 0, len(kept))
    pricer.resolve()
    plans = []
    for sized, layout, wanted in kept:
        plans.append(
            assemble(
                sized,
                layout,
                cluster,
                wanted,
                pricer,
                compute_time(sized, layout, flops_per_rank)
                if gpu_model is None
                else modelled_compute(sized, layout, gpu_model),
                None,
            )
        )
        tell(f"planned {len(plans)}/{len(kept)} layouts", len(plans), len(kept))
    plans.sort(key=lambda p: p.step_s)
    notes = [] if gpu else ["no GPU memory known for this cluster: nothing was rejected (give gpu_memory_bytes)"]
    result = SearchResult(
        plans[:top] if top else plans,
        considered,
        too_big,
        time.perf_counter() - start,
        notes,
        gpu,
        base.memory_headroom,
    )
    if not plans:  # say why, and what would fit: the same enumeration at other GPU counts
        explain_empty(
            result,
            model,
            gpus,
            rpn,
            global_batch,
            gpu,
            lambda n: candidates(
                model,
                n,
                rpn,
                global_batch,
                micro_batch_sizes,
                tp_options,
                pp_options,
                zero_stages,
                recompute,
                sequence_parallel,
                base,
                virtual_stages,
            ),
        )
    return result
