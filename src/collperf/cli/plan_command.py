"""The training-step planner: plan (and --compare, --search)."""

from __future__ import annotations

from typing import Optional

import typer

from collperf import api
from collperf.cli import render
from collperf.cli.options import command, InterAlg, IntraAlg, Json, network_options
from collperf.cli.render import print_json
from collperf.spec import NetworkSpec

_MODEL, _LAYOUT, _STEP = "Model", "Layout", "Step"


def _o(default, *names, help=None, panel=_LAYOUT):
    # a flag shows no value placeholder in --help
    return typer.Option(default, *names, help=help, rich_help_panel=panel,
                        **({"metavar": ""} if isinstance(default, bool) else {}))


@command("plan")
@network_options(exclude=("ranks", "latency", "bandwidth", "reduce_bandwidth", "cluster"))
def plan_command(
    model: Optional[str] = _o(None, "--model", panel=_MODEL, help="Preset: 7b, 13b, 70b, gpt3-22b, gpt3-175b, "
                              "gpt3-530b, gpt3-1t (default 70b; with --params alone: a custom model)."),
    params: Optional[float] = _o(None, "--params", panel=_MODEL, help="Parameters, e.g. 70e9."),
    layers: Optional[int] = _o(None, "--layers", panel=_MODEL), hidden: Optional[int] = _o(None, "--hidden", panel=_MODEL),
    seq_len: Optional[int] = _o(None, "--seq-len", panel=_MODEL),
    heads: Optional[int] = _o(None, "--heads", panel=_MODEL, help="Attention heads (default hidden/128)."),
    micro_batch: Optional[int] = _o(None, "--micro-batch", panel=_MODEL, help="Sequences per micro-batch."),
    dtype_bytes: Optional[int] = _o(None, "--bytes", panel=_MODEL, help="Bytes per parameter, gradient, activation."),
    experts: Optional[int] = _o(None, "--experts", panel=_MODEL, help="MoE experts per MoE layer."),
    top_k: Optional[int] = _o(None, "--top-k", panel=_MODEL, help="MoE experts each token is routed to."),
    tp: int = _o(1, "--tp"), pp: int = _o(1, "--pp"), dp: int = _o(1, "--dp"),
    cp: int = _o(1, "--cp", help="Context parallel: the sequence split over this many ranks."),
    expert_parallel: int = _o(1, "--expert-parallel", help="MoE: experts spread over this many DP ranks."),
    zero: int = _o(0, "--zero", help="ZeRO stage 0-3."),
    sp: bool = _o(False, "--sp/--no-sp", help="Sequence parallelism (TP as allgather + reducescatter)."),
    micro_batches: int = _o(1, "--micro-batches", help="Micro-batches per step (per DP replica)."),
    virtual_stages: int = _o(1, "--virtual-stages", help="Interleaved 1F1B: model chunks per pipeline rank."),
    recompute: str = _o("none", "--recompute", help="Activation recomputation: none, selective or full."),
    keep_params: bool = _o(False, "--keep-params/--no-keep-params", help="ZeRO-3: keep gathered parameters "
                           "across micro-batches."),
    reduce_every_microbatch: bool = _o(False, "--reduce-every-microbatch/--reduce-last-microbatch",
                                       help="Reduce gradients after every micro-batch (default: during the last "
                                            "one's backward, as DDP no_sync and Megatron do)."),
    prefetch: bool = _o(True, "--prefetch/--no-prefetch", help="ZeRO-3: next layer's allgather under compute."),
    scatter_gather: bool = _o(False, "--scatter-gather", help="Megatron's PP scatter/gather (1/tp messages)."),
    bucket: str = _o("25MB", "--bucket", help="DP gradient bucket size."),
    placement: str = _o("tp-pp-dp", "--placement", help="Dimensions innermost first."),
    gpu_memory: Optional[str] = _o(None, "--gpu-memory", help="Memory per GPU, e.g. 80GB (default: the preset's)."),
    compute: Optional[str] = _o(None, "--compute", panel=_STEP, help="Compute time per step, e.g. 2000ms."),
    flops: Optional[str] = _o(None, "--flops", panel=_STEP, help="Achieved FLOP/s per rank, e.g. 400TFLOPS."),
    overlap: Optional[str] = _o(None, "--overlap", panel=_STEP, help="Fractions hidden by compute, e.g. dp=0.8,tp=0."),
    algorithm: str = _o("best", "--algorithm", "-A", panel=_STEP, help="Algorithm for every collective, or best."),
    compare: Optional[list[str]] = _o(None, "--compare", panel=_STEP, help="Another layout or cluster to set beside: "
                                      "8x4x16, tp=8,pp=8,dp=8,zero=3, or 8x8x8@dgx-a100:64."),
    search: bool = _o(False, "--search", panel=_STEP, help="Rank every layout of --gpus GPUs that fits memory."),
    gpus: Optional[int] = _o(None, "--gpus", panel=_STEP, help="--search: GPUs to lay the model out on."),
    global_batch: Optional[int] = _o(None, "--global-batch", panel=_STEP, help="--search: sequences per step."),
    top: int = _o(10, "--top", panel=_STEP, help="--search: show this many layouts."),
    from_trace: Optional[list[str]] = _o(None, "--from-trace", panel=_STEP, help="Profiler traces of a real step "
                                         "(files, a directory or a glob): their compute time and measured overlap "
                                         "per kind replace the estimates (--compute and --overlap still win)."),
    as_json: bool = Json, cluster: Optional[str] = typer.Option("dgx-h100", "--cluster", help="Cluster preset."),
    intra_algorithm: str = IntraAlg, inter_algorithm: str = InterAlg, network: NetworkSpec = None,
):
    """Plan one training step's communication (TP, PP, CP, EP, DP, ZeRO) on a cluster: exposed time, the
    pipeline bubble and memory per GPU; compare layouts, or search them."""
    spec = api.plan_spec(model, dict(params=params, layers=layers, hidden=hidden, seq_len=seq_len, heads=heads,
                                     micro_batch=micro_batch, dtype_bytes=dtype_bytes, experts=experts, top_k=top_k),
                         dict(tp=tp, pp=pp, dp=dp, cp=cp, expert_parallel=expert_parallel, zero=zero,
                              sequence_parallel=sp, micro_batches=micro_batches, virtual_stages=virtual_stages,
                              recompute=recompute, keep_params=keep_params,
                              reduce_every_microbatch=reduce_every_microbatch, prefetch=prefetch,
                              scatter_gather=scatter_gather, bucket=bucket, placement=placement,
                              gpu_memory=gpu_memory),
                         network, cluster, compute=compute, flops=flops, overlap=overlap, algorithm=algorithm,
                         intra_algorithm=intra_algorithm, inter_algorithm=inter_algorithm, from_trace=from_trace)
    if search:
        found = api.plan_search(spec, gpus, global_batch, top=top)
        print_json(render.search_json(found)) if as_json else render.print_search(found)
        return
    plans, best = api.plan_compare(spec, compare or [])
    if as_json:
        docs = [p.to_json() for p in plans]
        print_json(docs[0] if len(docs) == 1 else {"plans": docs, "fastest": best})
    else:
        render.print_plans(plans, best)
