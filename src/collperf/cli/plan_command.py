"""The training-step planner: plan (and --compare, --search)."""

from __future__ import annotations

from typing import Optional

import typer

from collperf import api
from collperf.cli import render
from collperf.cli.options import command, InterAlg, IntraAlg, Json, network_options
from collperf.cli.progress import progress
from collperf.cli.render import print_json
from collperf.errors import UsageError
from collperf.spec import NetworkSpec, SearchSpec

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
    kv_heads: Optional[int] = _o(None, "--kv-heads", panel=_MODEL, help="Grouped-query attention: K/V heads."),
    ffn_hidden: Optional[int] = _o(None, "--ffn-hidden", panel=_MODEL, help="The MLP's inner size (default 4 x hidden)."),
    vocab: Optional[int] = _o(None, "--vocab", panel=_MODEL, help="Vocabulary size (embedding and LM head)."),
    grad_bytes: Optional[int] = _o(None, "--grad-bytes", panel=_MODEL, help="Bytes per gradient (4: fp32 "
                                   "gradients beside bf16 parameters)."),
    optimizer_bytes: Optional[int] = _o(None, "--optimizer-bytes", panel=_MODEL, help="Optimizer state bytes per "
                                        "parameter (default 12: Adam's fp32 master, momentum, variance)."),
    tp: Optional[int] = _o(None, "--tp", help="Tensor parallel (leave tp, pp, dp out to search the layouts)."),
    pp: Optional[int] = _o(None, "--pp"),
    dp: Optional[int] = _o(None, "--dp", help="Data parallel (default: what fills the nodes)."),
    cp: int = _o(1, "--cp", help="Context parallel: the sequence split over this many ranks."),
    expert_parallel: int = _o(1, "--expert-parallel", help="MoE: experts spread over this many DP ranks."),
    zero: int = _o(0, "--zero", help="ZeRO stage 0-3."),
    zero3_impl: str = _o("fsdp", "--zero3-impl", help="ZeRO-3 as fsdp (a collective per layer, next layer "
                         "prefetched) or deepspeed (per tensor, 5e7-element prefetch)."),
    hsdp: Optional[int] = _o(None, "--hsdp", help="ZeRO-3 sharded over groups of this many DP ranks (FSDP "
                             "HYBRID_SHARD), replicas allreduce their gradient shards."),
    hpz: Optional[int] = _o(None, "--hpz", help="ZeRO++ hpZ: backward gathers from a copy sharded over this many "
                            "DP ranks (a node)."),
    replicate_kv: bool = _o(False, "--replicate-kv", help="tp larger than the K/V heads: copy each K/V head."),
    cp_allgather: bool = _o(False, "--cp-allgather", help="Context parallel by all-gathered K/V (Llama 3), not a ring."),
    first_stage_layers: Optional[int] = _o(None, "--first-stage-layers", help="Layers of the first pipeline stage."),
    last_stage_layers: Optional[int] = _o(None, "--last-stage-layers", help="Layers of the last pipeline stage."),
    flash_attention: bool = _o(True, "--flash-attention/--unfused-attention", help="Attention core fused "
                               "(FlashAttention) or unfused (softmax through memory)."),
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
    search: bool = _o(False, "--search", panel=_STEP, help="Rank every layout of --gpus GPUs that fits memory "
                      "(also what plan does when no --tp/--pp/--dp is given)."),
    gpus: Optional[int] = _o(None, "--gpus", panel=_STEP, help="Search: GPUs to lay the model out on (default: "
                             "--nodes x GPUs per node)."),
    global_batch: Optional[int] = _o(None, "--global-batch", panel=_STEP, help="Search: sequences per step "
                                     "(default: 4M tokens)."),
    top: Optional[int] = _o(None, "--top", panel=_STEP, help="Search: show this many layouts (default 3, 10 with "
                            "--search)."),
    require_fit: bool = _o(False, "--require-fit", panel=_STEP, help="Exit 1 when a plan does not fit in GPU memory."),
    from_trace: Optional[list[str]] = _o(None, "--from-trace", panel=_STEP, help="Profiler traces of a real step "
                                         "(files, a directory or a glob): their compute time and measured overlap "
                                         "per kind replace the estimates (--compute and --overlap still win)."),
    as_json: bool = Json, cluster: Optional[str] = typer.Option("dgx-h100", "--cluster", help="Cluster preset."),
    intra_algorithm: str = IntraAlg, inter_algorithm: str = InterAlg, network: NetworkSpec = None,
):
    """Plan one training step (TP, PP, CP, EP, DP, ZeRO) on a cluster: compute, exposed communication, the
    pipeline bubble and memory per GPU. Without --tp/--pp/--dp: the best layouts for --nodes, and why."""
    degrees = dict(tp=tp, pp=pp, dp=dp)
    searching = search or (all(v is None for v in degrees.values()) and cp == 1 and not compare and not from_trace)
    if search and from_trace:
        raise UsageError("--from-trace feeds one layout's plan: give its --tp/--pp/--dp instead of --search")
    spec = api.plan_spec(model, dict(params=params, layers=layers, hidden=hidden, seq_len=seq_len, heads=heads,
                                     micro_batch=micro_batch, dtype_bytes=dtype_bytes, experts=experts, top_k=top_k,
                                     kv_heads=kv_heads, ffn_hidden=ffn_hidden, vocab=vocab, grad_bytes=grad_bytes,
                                     optimizer_bytes=optimizer_bytes),
                         dict(**{k: v for k, v in degrees.items() if v is not None}, cp=cp,
                              expert_parallel=expert_parallel, zero=zero,
                              sequence_parallel=sp, micro_batches=micro_batches, virtual_stages=virtual_stages,
                              recompute=recompute, keep_params=keep_params,
                              reduce_every_microbatch=reduce_every_microbatch, prefetch=prefetch,
                              scatter_gather=scatter_gather, bucket=bucket, placement=placement,
                              gpu_memory=gpu_memory, zero3_impl=zero3_impl, replicate_kv=replicate_kv,
                              zero3_shard=hsdp, hpz=hpz, cp_allgather=cp_allgather,
                              first_stage_layers=first_stage_layers, last_stage_layers=last_stage_layers,
                              flash_attention=flash_attention),
                         network, cluster, compute=compute, flops=flops, overlap=overlap, algorithm=algorithm,
                         intra_algorithm=intra_algorithm, inter_algorithm=inter_algorithm, fill_dp=dp is None,
                         from_trace=from_trace)
    if searching:
        with progress("searching layouts", as_json) as steps:
            found = api.plan_search(SearchSpec(plan=spec, gpus=gpus, global_batch=global_batch, defaults=not search,
                                               top=top or (10 if search else 3)),
                                    on_step=lambda text, done, total: steps.done(done, total, text))
        print_json(found.to_json()) if as_json else render.print_search(found, why=not search)
        return
    plans, best = api.plan_compare(spec, compare or [])
    if as_json:
        docs = [p.to_json() for p in plans]
        print_json(docs[0] if len(docs) == 1 else {"plans": docs, "fastest": best})
    else:
        render.print_plans(plans, best)
    if require_fit and any(p.fits is False for p in plans):
        raise typer.Exit(1)
