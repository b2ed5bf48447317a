"""What `collperf plan` takes to describe a model and a layout, as given (PlanModelSpec, PlanLayoutSpec).

Each field declares its command-line option once (cli_option); api.plan_spec turns them into the
plan.ModelSpec and plan.Layout a PlanSpec holds (a preset with overrides, sizes parsed, --hsdp as
zero3_shard, --sp as sequence_parallel). Defaults are plan.Layout's (tests/test_spec_options.py checks).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from collperf.plan.model import MODELS
from collperf.spec.checks import cli_option


def _model(*flags: str, help: str | None = None, type: type = int) -> Any:  # Any: what field() gives
    return field(default=None, metadata=cli_option(*flags, help=help or "", type=type))


@dataclass(frozen=True, kw_only=True)
class PlanModelSpec:
    """A model preset (default 70b) and dimensions that override it; `params` without a preset describes a
    custom model (plan.custom_model). None: the preset's value."""

    model: str | None = _model(
        "--model", type=str, help=f"Preset: {', '.join(MODELS)} (default 70b; with --params alone: a custom model)."
    )
    params: float | None = _model("--params", type=float, help="Parameters, e.g. 70e9.")
    layers: int | None = _model("--layers")
    hidden: int | None = _model("--hidden")
    seq_len: int | None = _model("--seq-len")
    heads: int | None = _model("--heads", help="Attention heads (default hidden/128).")
    micro_batch: int | None = _model("--micro-batch", help="Sequences per micro-batch.")
    dtype_bytes: int | None = _model("--bytes", help="Bytes per parameter, gradient, activation.")
    experts: int | None = _model("--experts", help="MoE experts per MoE layer.")
    top_k: int | None = _model("--top-k", help="MoE experts each token is routed to.")
    kv_heads: int | None = _model("--kv-heads", help="Grouped-query attention: K/V heads.")
    ffn_hidden: int | None = _model("--ffn-hidden", help="The MLP's inner size (default 4 x hidden).")
    vocab: int | None = _model("--vocab", help="Vocabulary size (embedding and LM head).")
    grad_bytes: int | None = _model(
        "--grad-bytes", help="Bytes per gradient (4: fp32 gradients beside bf16 parameters)."
    )
    optimizer_bytes: int | None = _model(
        "--optimizer-bytes",
        help="Optimizer state bytes per parameter (default 12: Adam's fp32 master, momentum, variance).",
    )

    def dimensions(self) -> dict[str, int | float]:
        """The dimensions given (not None), by api.plan_spec's names."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name != "model" and getattr(self, f.name) is not None
        }


def _layout(default: object, *flags: str, help: str = "", type: type | None = None) -> Any:
    """A layout option; one whose default is None takes a whole number unless `type` says otherwise."""
    kind = type or (int if default is None else None)
    return field(default=default, metadata=cli_option(*flags, help=help, type=kind))


@dataclass(frozen=True, kw_only=True)
class PlanLayoutSpec:
    """A layout as given: the parallel degrees (tp, pp, dp None: searched, or dp filling the nodes), ZeRO and
    its variants, pipeline and recomputation choices, sizes as text ('25MB', '80GB')."""

    tp: int | None = _layout(None, "--tp", help="Tensor parallel (leave tp, pp, dp out to search the layouts).")
    pp: int | None = _layout(None, "--pp")
    dp: int | None = _layout(None, "--dp", help="Data parallel (default: what fills the nodes).")
    cp: int = _layout(1, "--cp", help="Context parallel: the sequence split over this many ranks.")
    expert_parallel: int = _layout(1, "--expert-parallel", help="MoE: experts spread over this many DP ranks.")
    zero: int = _layout(0, "--zero", help="ZeRO stage 0-3.")
    zero3_impl: str = _layout(
        "fsdp",
        "--zero3-impl",
        help="ZeRO-3 as fsdp (a collective per layer, next layer "
        "prefetched) or deepspeed (per tensor, 5e7-element prefetch).",
    )
    hsdp: int | None = _layout(
        None,
        "--hsdp",
        help="ZeRO-3 sharded over groups of this many DP ranks (FSDP "
        "HYBRID_SHARD), replicas allreduce their gradient shards.",
    )
    hpz: int | None = _layout(
        None, "--hpz", help="ZeRO++ hpZ: backward gathers from a copy sharded over this many DP ranks (a node)."
    )
    replicate_kv: bool = _layout(False, "--replicate-kv", help="tp larger than the K/V heads: copy each K/V head.")
    cp_allgather: bool = _layout(
        False, "--cp-allgather", help="Context parallel by all-gathered K/V (Llama 3), not a ring."
    )
    first_stage_layers: int | None = _layout(None, "--first-stage-layers", help="Layers of the first pipeline stage.")
    last_stage_layers: int | None = _layout(None, "--last-stage-layers", help="Layers of the last pipeline stage.")
    flash_attention: bool = _layout(
        True,
        "--flash-attention/--unfused-attention",
        help="Attention core fused (FlashAttention) or unfused (softmax through memory).",
    )
    sp: bool = _layout(False, "--sp/--no-sp", help="Sequence parallelism (TP as allgather + reducescatter).")
    micro_batches: int = _layout(1, "--micro-batches", help="Micro-batches per step (per DP replica).")
    virtual_stages: int = _layout(1, "--virtual-stages", help="Interleaved 1F1B: model chunks per pipeline rank.")
    recompute: str = _layout("none", "--recompute", help="Activation recomputation: none, selective or full.")
    keep_params: bool = _layout(
        False, "--keep-params/--no-keep-params", help="ZeRO-3: keep gathered parameters across micro-batches."
    )
    reduce_every_microbatch: bool = _layout(
        False,
        "--reduce-every-microbatch/--reduce-last-microbatch",
        help="Reduce gradients after every micro-batch (default: during the last "
        "one's backward, as DDP no_sync and Megatron do).",
    )
    prefetch: bool = _layout(True, "--prefetch/--no-prefetch", help="ZeRO-3: next layer's allgather under compute.")
    scatter_gather: bool = _layout(False, "--scatter-gather", help="Megatron's PP scatter/gather (1/tp messages).")
    bucket: str = _layout("25MB", "--bucket", help="DP gradient bucket size.")
    placement: str = _layout("tp-pp-dp", "--placement", help="Dimensions innermost first.")
    gpu_memory: str | None = _layout(
        None, "--gpu-memory", type=str, help="Memory per GPU with its unit, e.g. 80GiB (default: the cluster GPU's)."
    )
    memory_headroom: str = _layout(
        "10%",
        "--memory-headroom",
        help="Share of the GPU's memory a plan leaves free "
        "(allocator fragmentation, CUDA context, NCCL buffers), e.g. 10%.",
    )

    # the option's name where it differs from plan.Layout's field
    _LAYOUT_NAMES = {"hsdp": "zero3_shard", "sp": "sequence_parallel"}

    @property
    def degrees_given(self) -> bool:
        """Any of tp, pp, dp given (plan searches the layouts when none is, and cp and --compare are not)."""
        return any(v is not None for v in (self.tp, self.pp, self.dp))

    def layout_values(self) -> dict[str, object]:
        """The fields for api.plan_spec's `layout`: by plan.Layout's names, tp/pp/dp only when given."""
        values = {self._LAYOUT_NAMES.get(f.name, f.name): getattr(self, f.name) for f in fields(self)}
        return {k: v for k, v in values.items() if v is not None or k not in ("tp", "pp", "dp")}
