"""Training-step plans: the spec of a plan (plan_spec), a search over layouts (plan_search), one plan
(plan), variants side by side (plan_compare) and a step from numbers (plan_step)."""

from __future__ import annotations

from dataclasses import replace

from collperf import units
from collperf.errors import UsageError
from collperf.api.trace import trace
from collperf.plan.from_trace import measured
from collperf.spec import NetworkSpec, PlanSpec, TraceSpec


def plan_spec(model: str | None = None, dimensions: dict | None = None, layout: dict | None = None,
              network: NetworkSpec | None = None, cluster: str | None = "dgx-h100", **options) -> PlanSpec:
    """A PlanSpec from CLI-style values: a model preset (default 70b) with optional dimension overrides
    (params, layers, hidden, seq_len, heads, micro_batch, dtype_bytes, experts, top_k; `params` without a
    preset describes a custom model whose other dimensions follow plan.custom_model's rule), layout fields
    (plan.Layout's, with bucket and gpu_memory as size strings), a network (its cluster preset given apart)
    and PlanSpec's options."""
    from collperf import plan as plans
    dims = {k: v for k, v in (dimensions or {}).items() if v is not None}
    dtype_bytes = dims.pop("dtype_bytes", None)
    if dtype_bytes:
        dims.update(param_bytes=dtype_bytes, grad_bytes=dtype_bytes, act_bytes=dtype_bytes)
    if model is None and "params" in dims:
        spec = plans.custom_model(dims.pop("params"), dims.pop("layers", None), dims.pop("hidden", None),
                                  dims.pop("seq_len", 4096), **dims)
    else:
        spec = plans.get_model(model or "70b")
        spec = replace(spec, **dims) if dims else spec
    lay = dict(layout or {})
    if "bucket" in lay:
        lay["bucket_bytes"] = units.parse_size(lay.pop("bucket"))
    memory = lay.pop("gpu_memory", None)
    if memory is not None:
        lay["gpu_memory_bytes"] = units.parse_size(memory)
    if isinstance(lay.get("placement"), str):
        lay["placement"] = tuple(lay["placement"].split("-"))
    net = network or NetworkSpec()
    net = NetworkSpec(**{**vars(net), "cluster": None if net.profile is not None else cluster})
    return PlanSpec(spec, plans.Layout(**lay), net, **options)


def plan_search(spec: PlanSpec, gpus: int | None, global_batch: int | None, **options):
    """`collperf plan --search`: every valid layout of `gpus` GPUs that fits memory, fastest first, for
    `global_batch` sequences per step; the spec gives the model, cluster preset and achieved FLOP/s."""
    from collperf import plan as plans
    if not gpus or not global_batch:
        raise UsageError(f"--search needs --gpus N and --global-batch B (got gpus={gpus}, global batch={global_batch})")
    if spec.flops_per_rank is None:
        raise UsageError("--search ranks layouts by step time: give the achieved rate per GPU, e.g. --flops 400TFLOPS")
    cluster = replace(spec.network, ranks=None, nodes=1).resolve_cluster()
    return plans.search(spec.model, gpus, cluster, global_batch, spec.flops_per_rank, base=spec.layout,
                        gpu_memory_bytes=spec.layout.gpu_memory_bytes, algorithm=spec.algorithm, **options)


def plan(spec: PlanSpec):
    """`collperf plan`: one training step's communication on a cluster."""
    from collperf import plan as plans
    net = spec.cluster_network().resolve()   # the layout is checked against it by plans.plan
    if net.cluster is None:
        raise UsageError("a plan needs a two-level cluster: give --cluster PRESET or --nodes/--ranks-per-node "
                         "with intra and inter links")
    compute_s = spec.compute_s
    if compute_s is None and spec.flops_per_rank is not None:
        compute_s = plans.compute_time(spec.model, spec.layout, spec.flops_per_rank)
    overlap, traced = spec.overlap_fractions, None
    if spec.from_trace:
        # the traced step's compute and overlap, where the user gave none
        traced = measured(trace(TraceSpec(spec.from_trace)), spec.layout)
        if compute_s is None and spec.flops_per_rank is None:
            compute_s = traced.compute_s
        overlap = {**traced.hidden, **overlap}
    result = plans.plan(spec.model, spec.layout, net.cluster, compute_s, overlap, spec.algorithm,
                        spec.intra_algorithm, spec.inter_algorithm)
    result.measured = traced
    return result


def plan_compare(spec: PlanSpec, variants=()) -> tuple[list, int]:
    """`collperf plan --compare`: the plan of `spec` and of each variant ('8x4x16', 'tp=8,pp=8,dp=8,zero=3',
    '8x8x8@dgx-a100:64'), and the index of the fastest (by step time when every plan has compute)."""
    plans = [plan(spec)] + [plan(spec.variant(v)) for v in variants]
    key = (lambda p: p.step_s) if all(p.compute_s for p in plans) else (lambda p: p.comm_s)
    return plans, min(range(len(plans)), key=lambda i: key(plans[i]))


def plan_step(model="70b", tp: int = 1, pp: int = 1, dp: int = 1, zero: int = 0, sequence_parallel: bool = False,
              micro_batches: int = 1, bucket="25MB", placement: str = "tp-pp-dp", cluster: str | None = "dgx-h100",
              compute=None, flops=None, overlap: str | None = None, algorithm: str = "best",
              intra_algorithm: str = "best", inter_algorithm: str = "best", **network_options):
    """`plan` with the layout and network as keywords (a convenience over PlanSpec)."""
    from collperf import plan as plans
    layout = plans.Layout(tp, pp, dp, zero, sequence_parallel, micro_batches, units.parse_size(bucket),
                          tuple(placement.split("-")))
    if network_options.get("profile") is not None:
        cluster = None
    return plan(PlanSpec(model, layout, NetworkSpec(cluster=cluster, **network_options), compute, flops, overlap,
                         algorithm, intra_algorithm, inter_algorithm))
