"""Training-step plans: the spec of a plan (plan_spec), a search over layouts (plan_search), one plan
(plan), variants side by side (plan_compare) and a step from numbers (plan_step)."""

from __future__ import annotations

from dataclasses import replace

from collperf import plan as plans, units
from collperf.errors import UsageError
from collperf.api.common import as_spec
from collperf.api.trace import trace
from collperf.plan.from_trace import measured
from collperf.plan.pipeline import ComputeSplit
from collperf.spec import NetworkSpec, PlanLayoutSpec, PlanModelSpec, PlanSpec, SearchSpec, TraceSpec


DEFAULT_BATCH_TOKENS = 2**22  # 4M tokens per step: GPT-3's 3.2M and Llama 3's 4M-16M pre-training batches


def plan_spec(
    model: str | PlanModelSpec | None = None,
    dimensions: dict | None = None,
    layout: dict | PlanLayoutSpec | None = None,
    network: NetworkSpec | None = None,
    cluster: str | None = "dgx-h100",
    fill_dp: bool = False,
    **options,
) -> PlanSpec:
    """A PlanSpec from CLI-style values: a model preset (default 70b) with optional dimension overrides
    (params, layers, hidden, seq_len, heads, micro_batch, dtype_bytes, experts, top_k, kv_heads, ffn_hidden,
    vocab, grad_bytes, optimizer_bytes; `params` without a
    preset describes a custom model whose other dimensions follow plan.custom_model's rule), layout fields
    (plan.Layout's, with bucket and gpu_memory as size strings), a network (its cluster preset given apart)
    and PlanSpec's options. With `fill_dp`, dp is what fills the network's GPUs (nodes x GPUs per node).
    `model` may be a PlanModelSpec (the preset and its dimensions) and `layout` a PlanLayoutSpec, as the CLI
    gives them."""
    if isinstance(model, PlanModelSpec):
        dimensions = {**model.dimensions(), **(dimensions or {})}
        model = model.model
    if isinstance(layout, PlanLayoutSpec):
        layout = layout.layout_values()
    dims = {k: v for k, v in (dimensions or {}).items() if v is not None}
    dtype_bytes = dims.pop("dtype_bytes", None)
    if dtype_bytes:
        dims.update(param_bytes=dtype_bytes, grad_bytes=dtype_bytes, act_bytes=dtype_bytes)
    if model is not None and "params" in dims:  # a preset and a parameter count that contradicts it
        plans.check_model_flags(plans.get_model(model), dims["params"], dims.get("layers"), dims.get("hidden"))
    if model is None and "params" in dims:
        spec = plans.custom_model(
            dims.pop("params"), dims.pop("layers", None), dims.pop("hidden", None), dims.pop("seq_len", 4096), **dims
        )
    else:
        spec = plans.get_model(model or "70b")
        spec = replace(spec, **dims) if dims else spec
    lay = dict(layout or {})
    if "bucket" in lay:
        lay["bucket_bytes"] = units.parse_size(lay.pop("bucket"))
    memory = lay.pop("gpu_memory", None)
    if memory is not None:
        lay["gpu_memory_bytes"] = plans.parse_gpu_memory(memory)
    if "memory_headroom" in lay:
        lay["memory_headroom"] = plans.parse_headroom(lay["memory_headroom"])
    if isinstance(lay.get("placement"), str):
        lay["placement"] = tuple(lay["placement"].split("-"))
    net = network or NetworkSpec()
    net = replace(net, cluster=None if net.profile is not None else cluster)
    if fill_dp and "dp" not in lay and net.nodes is not None:
        lay["dp"] = _fill_dp(net, lay)
    return PlanSpec(model=spec, layout=plans.Layout(**lay), network=net, **options)


def _fill_dp(net: NetworkSpec, lay: dict) -> int:
    assert net.nodes is not None  # dp fills the nodes given
    gpus = net.nodes * (net.ranks_per_node or replace(net, nodes=1).resolve_cluster().ranks_per_node)
    model_parallel = lay.get("tp", 1) * lay.get("pp", 1) * lay.get("cp", 1)
    if gpus % model_parallel:
        raise UsageError(
            f"tp({lay.get('tp', 1)}) x pp({lay.get('pp', 1)}) x cp({lay.get('cp', 1)}) = {model_parallel} "
            f"does not divide the {gpus} GPUs of --nodes {net.nodes}: give --dp, or degrees that divide it"
        )
    return gpus // model_parallel


def plan_search(
    spec: SearchSpec | PlanSpec, gpus: int | None = None, global_batch: int | None = None, on_step=None, **options
):
    """`collperf plan --search`: every valid layout of spec.gpus GPUs that fits memory, fastest first, for
    spec.global_batch sequences per step; the plan gives the model, cluster preset and achieved FLOP/s (or
    the GPU's compute model). With spec.defaults (plan without a layout): gpus = --nodes (default 1) x GPUs
    per node and a global batch of 4M tokens. on_step(text, done, total) hears how far it is. Give a
    SearchSpec, or (the convenience) a PlanSpec, gpus and global batch with the other fields as keywords.
    Returns plan.search.SearchResult (its to_json() is what --json prints)."""
    search = as_spec(SearchSpec, spec, options, plan=spec, gpus=gpus, global_batch=global_batch)
    spec, gpus, global_batch = search.plan, search.gpus, search.global_batch
    assert isinstance(spec.model, plans.ModelSpec) and spec.layout is not None  # PlanSpec made them
    if search.defaults:
        net = spec.network
        per_node = net.ranks_per_node or replace(net, ranks=None, nodes=1).resolve_cluster().ranks_per_node
        gpus = gpus or (net.nodes or 1) * per_node
        global_batch = global_batch or max(1, DEFAULT_BATCH_TOKENS // spec.model.seq_len)
    if not gpus or not global_batch:
        raise UsageError(f"--search needs --gpus N and --global-batch B (got gpus={gpus}, global batch={global_batch})")
    cluster = replace(spec.network, ranks=None, nodes=1).resolve_cluster()
    _check_against_gpu(spec, cluster)
    if spec.flops_per_rank is None and plans.gpu_of(cluster) is None:
        raise UsageError(
            f"--search ranks layouts by step time and no GPU compute rates are known for "
            f"{cluster.name or 'this network'}: give the achieved rate per GPU, e.g. --flops 400TFLOPS"
        )
    return plans.search(
        spec.model,
        gpus,
        cluster,
        global_batch,
        spec.flops_per_rank,
        base=spec.layout,
        gpu_memory_bytes=spec.layout.gpu_memory_bytes,
        algorithm=spec.algorithm,
        top=search.top,
        on_step=on_step,
    )


def _check_against_gpu(spec: PlanSpec, cluster) -> None:
    """--flops and --gpu-memory possible on the cluster's GPU (plan/limits.py says why they are refused)."""
    gpu = plans.gpu_of(cluster)
    assert spec.layout is not None  # PlanSpec made it
    plans.check_flops(spec.flops_per_rank, gpu)
    plans.check_gpu_memory(
        spec.layout.gpu_memory_bytes, plans.gpu_memory_of(cluster), gpu.name if gpu is not None else "GPU"
    )


def plan(spec: PlanSpec):
    """`collperf plan`: one training step's communication on a cluster."""
    net = spec.cluster_network().resolve()  # the layout is checked against it by plans.plan
    if net.cluster is None:
        raise UsageError(
            "a plan needs a two-level cluster: give --cluster PRESET or --nodes/--ranks-per-node "
            "with intra and inter links"
        )
    _check_against_gpu(spec, net.cluster)
    assert isinstance(spec.model, plans.ModelSpec) and spec.layout is not None  # PlanSpec made them
    compute_s: float | ComputeSplit | None = spec.compute_s
    # a traced step: its compute time and measured overlap per kind, where the user gave none
    traced = measured(trace(TraceSpec(paths=spec.from_trace)), spec.layout) if spec.from_trace else None
    overlap = {**traced.hidden, **spec.overlap_fractions} if traced else spec.overlap_fractions
    if compute_s is None and spec.flops_per_rank is not None:
        compute_s = plans.compute_time(spec.model, spec.layout, spec.flops_per_rank)
    elif compute_s is None and traced is not None and traced.compute_s:
        compute_s = traced.compute_s
    elif compute_s is None and (gpu := plans.gpu_of(net.cluster)) is not None:
        # no time or rate given: the shape-dependent compute model of the cluster's GPU
        spec.layout.check(net.cluster.ranks, spec.model.layers)
        spec.layout.check_model(spec.model)
        compute_s = plans.modelled_compute(spec.model, spec.layout, gpu)
    result = plans.plan(
        spec.model,
        spec.layout,
        net.cluster,
        compute_s,
        overlap,
        spec.algorithm,
        spec.intra_algorithm,
        spec.inter_algorithm,
    )
    result.measured = traced
    return result


def plan_compare(spec: PlanSpec, variants=()) -> tuple[list, int]:
    """`collperf plan --compare`: the plan of `spec` and of each variant ('8x4x16', 'tp=8,pp=8,dp=8,zero=3',
    '8x8x8@dgx-a100:64'), and the index of the fastest (by step time when every plan has compute)."""
    plans = [plan(spec)] + [plan(spec.variant(v)) for v in variants]
    key = (lambda p: p.step_s) if all(p.compute_s for p in plans) else (lambda p: p.comm_s)
    return plans, min(range(len(plans)), key=lambda i: key(plans[i]))


def plan_step(
    model="70b",
    tp: int = 1,
    pp: int = 1,
    dp: int = 1,
    zero: int = 0,
    sequence_parallel: bool = False,
    micro_batches: int = 1,
    bucket="25MB",
    placement: str = "tp-pp-dp",
    cluster: str | None = "dgx-h100",
    compute=None,
    flops=None,
    overlap: str | None = None,
    algorithm: str = "best",
    intra_algorithm: str = "best",
    inter_algorithm: str = "best",
    **network_options,
):
    """`plan` with the layout and network as keywords (a convenience over PlanSpec)."""
    layout = plans.Layout(
        tp=tp,
        pp=pp,
        dp=dp,
        zero=zero,
        sequence_parallel=sequence_parallel,
        micro_batches=micro_batches,
        bucket_bytes=units.parse_size(bucket),
        placement=tuple(placement.split("-")),
    )
    if network_options.get("profile") is not None:
        cluster = None
    return plan(
        PlanSpec(
            model=model,
            layout=layout,
            network=NetworkSpec(cluster=cluster, **network_options),
            compute=compute,
            flops=flops,
            overlap=overlap,
            algorithm=algorithm,
            intra_algorithm=intra_algorithm,
            inter_algorithm=inter_algorithm,
        )
    )
