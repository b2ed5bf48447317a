"""How a step is laid out on the ranks: parallel degrees, ZeRO, micro-batches, recompute, placement.

`Layout` is the one validated input of the planner besides the model and the cluster; every option
of `collperf plan` maps to one of its fields.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from collperf.errors import UsageError

RECOMPUTE = ("none", "selective", "full")
DIMS = ("tp", "cp", "pp", "dp")


@dataclass(frozen=True)
class Layout:
    tp: int = 1
    pp: int = 1
    dp: int = 1
    zero: int = 0
    sequence_parallel: bool = False
    micro_batches: int = 1  # per DP replica and step (gradient accumulation steps)
    bucket_bytes: float = 25e6  # PyTorch DDP's default bucket (25 MB)
    placement: tuple = ("tp", "pp", "dp")  # innermost first; cp, when absent, sits right after tp
    virtual_stages: int = 1  # interleaved 1F1B: model chunks per pipeline rank
    recompute: str = "none"  # none | selective | full (Korthikanti et al. 2022)
    keep_params: bool = False  # ZeRO-3: keep gathered parameters across micro-batches
    reduce_every_microbatch: bool = False  # DP/ZeRO-1: reduce gradients after every micro-batch
    prefetch: bool = True  # ZeRO-3: next layer's allgather under this layer's compute
    scatter_gather: bool = False  # Megatron's PP scatter/gather: send 1/tp of the activation
    cp: int = 1  # context parallel: sequence split, K/V exchanged in a ring
    expert_parallel: int = 1  # MoE: experts spread over this many ranks of the DP group
    gpu_memory_bytes: float | None = None  # None: from the cluster preset
    memory_headroom: float = 0.10  # fraction of the GPU's memory kept free (memory.py: HEADROOM)
    first_stage_layers: int | None = None  # Megatron's --decoder-first-pipeline-num-layers (None: the rule)
    last_stage_layers: int | None = None  # Megatron's --decoder-last-pipeline-num-layers
    zero3_shard: int | None = None  # HSDP (FSDP HYBRID_SHARD): ZeRO-3 shards over groups of this many DP
    # ranks, replicas reduce their gradient shards once per step
    hpz: int | None = None  # ZeRO++ hpZ: a secondary copy sharded over this many DP ranks (a node),
    # so the backward gathers inside it
    replicate_kv: bool = False  # tp > K/V heads: each K/V head copied on tp / kv_heads ranks
    zero3_impl: str = "fsdp"  # how ZeRO-3 issues its collectives: fsdp | deepspeed (zero3.py)
    cp_allgather: bool = False  # context parallel by all-gathered K/V (Llama 3) instead of the ring
    flash_attention: bool = True  # fused attention core (FlashAttention); False: Megatron 2021-22's
    # unfused QK^T, softmax, dropout, weighted sum

    def __post_init__(self):
        for name in ("tp", "pp", "dp", "micro_batches", "virtual_stages", "cp", "expert_parallel"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"{name} {value!r} is not a whole number >= 1")
        if self.zero not in (0, 1, 2, 3):
            raise UsageError(f"zero stage {self.zero!r}: expected 0, 1, 2 or 3")
        if self.zero3_impl not in ("fsdp", "deepspeed"):
            raise UsageError(f"zero3 implementation {self.zero3_impl!r}: expected fsdp or deepspeed")
        if self.recompute not in RECOMPUTE:
            raise UsageError(f"recompute {self.recompute!r}: expected one of {', '.join(RECOMPUTE)}")
        self.order  # validates the placement
        if not self.bucket_bytes > 0:
            raise UsageError(f"bucket size {self.bucket_bytes} must be positive")
        if self.dp % self.expert_parallel:
            raise UsageError(
                f"expert_parallel({self.expert_parallel}) must divide dp({self.dp}): experts are "
                "spread over ranks of the data-parallel group"
            )
        if self.virtual_stages > 1:
            if self.pp == 1:
                raise UsageError(f"virtual_stages({self.virtual_stages}) needs pp > 1 (pp is {self.pp})")
            if self.micro_batches % self.pp:
                raise UsageError(
                    f"interleaved schedule: micro_batches({self.micro_batches}) must be a multiple "
                    f"of pp({self.pp}) (Megatron's requirement)"
                )
        for name in ("zero3_shard", "hpz"):
            value = getattr(self, name)
            if value is None:
                continue
            if self.zero != 3:
                raise UsageError(f"{name} is a ZeRO-3 option; zero is {self.zero}")
            if isinstance(value, bool) or not isinstance(value, int) or value < 1 or self.dp % value:
                raise UsageError(f"{name}({value!r}) must be a whole number dividing dp({self.dp})")
        if self.keep_params and self.zero != 3:
            raise UsageError(f"keep_params is a ZeRO-3 option; zero is {self.zero}")
        for name in ("first_stage_layers", "last_stage_layers"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise UsageError(f"{name} {value!r} is not a whole number >= 1")
        if self.gpu_memory_bytes is not None and not self.gpu_memory_bytes > 0:
            raise UsageError(f"gpu memory {self.gpu_memory_bytes!r} bytes must be positive, e.g. --gpu-memory 80GB")
        if isinstance(self.memory_headroom, bool) or not 0 <= self.memory_headroom < 1:
            raise UsageError(
                f"memory headroom {self.memory_headroom!r}: expected a fraction of the GPU's memory in "
                "[0, 1), e.g. --memory-headroom 10%"
            )

    @property
    def order(self) -> tuple:
        """The placement with cp inserted after tp when not named: innermost first."""
        names = tuple(self.placement)
        if "cp" not in names and sorted(names) == ["dp", "pp", "tp"]:
            i = names.index("tp") + 1
            names = names[:i] + ("cp",) + names[i:]
        if sorted(names) != sorted(DIMS):
            raise UsageError(
                f"placement {'-'.join(self.placement)!r}: expected an order of tp, pp and dp "
                "(and cp), innermost first, e.g. tp-pp-dp"
            )
        return names

    @property
    def ranks(self) -> int:
        return self.tp * self.cp * self.pp * self.dp

    def check(self, ranks: int, layers: int) -> None:
        if self.ranks != ranks:
            cp = f" x cp({self.cp})" if self.cp > 1 else ""
            raise UsageError(
                f"tp({self.tp}){cp} x pp({self.pp}) x dp({self.dp}) = {self.ranks} != ranks({ranks}): "
                f"choose degrees whose product is {ranks}, or leave the layout out to search them"
            )
        if layers < self.pp * self.virtual_stages:
            raise UsageError(
                f"layers({layers}) < pp({self.pp}) x virtual_stages({self.virtual_stages}): every "
                "pipeline stage (and model chunk) must hold at least one layer"
            )

    def check_model(self, model) -> None:
        if model.experts % self.expert_parallel:
            raise UsageError(f"expert_parallel({self.expert_parallel}) must divide experts({model.experts})")
        if model.seq_len % self.cp:
            raise UsageError(f"cp({self.cp}) must divide seq_len({model.seq_len})")
        if model.n_heads % self.tp:
            raise UsageError(
                f"tp({self.tp}) must divide the attention heads({model.n_heads}): tensor parallelism "
                "splits whole heads (Megatron refuses it); choose tp from "
                f"{', '.join(str(d) for d in range(1, model.n_heads + 1) if model.n_heads % d == 0 and d <= 64)}"
            )
        kv = model.n_kv_heads
        if kv % self.tp and not (self.replicate_kv and self.tp % kv == 0):
            raise UsageError(
                f"tp({self.tp}) must divide the K/V heads({kv}) (Megatron-Core's num_query_groups rule); "
                f"with tp a multiple of {kv}, give replicate_kv (--replicate-kv) to copy each K/V head "
                f"on tp / kv_heads ranks"
            )

    def describe(self) -> str:
        text = f"tp{self.tp} x pp{self.pp} x dp{self.dp}"
        if self.cp > 1:
            text = f"tp{self.tp} x cp{self.cp} x pp{self.pp} x dp{self.dp}"
        if self.virtual_stages > 1:
            text += f" v{self.virtual_stages}"
        if self.expert_parallel > 1:
            text += f" ep{self.expert_parallel}"
        if self.zero:
            text += f" zero{self.zero}"
        if self.zero3_shard:
            text += f" hsdp{self.zero3_shard}"
        if self.hpz:
            text += f" hpz{self.hpz}"
        if self.sequence_parallel:
            text += " sp"
        if self.recompute != "none":
            text += f" recompute={self.recompute}"
        return text


def group_shape(layout: Layout, dim: str, ranks_per_node: int) -> tuple[int, int]:
    """(ranks per node, nodes) spanned by one group of dimension `dim` under the placement. Besides
    tp, cp, pp, dp: `ep` (expert parallel: the innermost expert_parallel ranks of a DP group), `edp`
    (the ranks holding the same experts: every expert_parallel-th rank of a DP group), and for ZeRO-3's
    hierarchical sharding `dps`/`dpr` (HSDP's shard group and its replicas) and `dph` (hpZ's group)."""
    sizes = {"tp": layout.tp, "cp": layout.cp, "pp": layout.pp, "dp": layout.dp}
    base = "dp" if dim in ("ep", "edp", "dps", "dpr", "dph") else dim
    stride = 1
    for d in layout.order:
        if d == base:
            break
        stride *= sizes[d]
    degree = sizes[base]
    if dim == "ep":
        degree = layout.expert_parallel
    elif dim == "edp":
        degree, stride = layout.dp // layout.expert_parallel, stride * layout.expert_parallel
    elif dim == "dps":  # HSDP: the innermost zero3_shard ranks of a DP group hold one copy, sharded
        degree = layout.zero3_shard
    elif dim == "dpr":  # HSDP: the ranks holding the same shard in each copy
        degree, stride = layout.dp // layout.zero3_shard, stride * layout.zero3_shard
    elif dim == "dph":  # hpZ: the innermost hpz ranks of a DP group
        degree = layout.hpz
    ranks = [k * stride for k in range(degree)]
    nodes = {r // ranks_per_node for r in ranks}
    return degree // len(nodes), len(nodes)


_FIELDS = {
    "tp": "tp",
    "pp": "pp",
    "dp": "dp",
    "cp": "cp",
    "ep": "expert_parallel",
    "zero": "zero",
    "sp": "sequence_parallel",
    "mb": "micro_batches",
    "v": "virtual_stages",
    "recompute": "recompute",
    "first": "first_stage_layers",
    "last": "last_stage_layers",
    "hsdp": "zero3_shard",
    "hpz": "hpz",
}
_FLAGS = {"sp"}


def parse_layout(text: str, base: Layout | None = None) -> Layout:
    """'8x8x8' (tp x pp x dp) or 'tp=8,pp=8,dp=8,zero=3,sp=1,mb=8,v=2,cp=2,ep=4,recompute=full'."""
    base = base or Layout()
    text = text.strip()
    if "=" not in text:
        try:
            tp, pp, dp = (int(x) for x in text.lower().split("x"))
        except ValueError:
            raise UsageError(f"layout {text!r}: expected TPxPPxDP such as 8x8x8, or tp=8,pp=8,dp=8") from None
        return replace(base, tp=tp, pp=pp, dp=dp)
    changes = {}
    for part in text.split(","):
        key, _, value = part.partition("=")
        key = key.strip()
        if key not in _FIELDS:
            raise UsageError(f"layout field {key!r}: expected one of {', '.join(_FIELDS)}")
        if key == "recompute":
            changes["recompute"] = value.strip()
            continue
        try:
            changes[_FIELDS[key]] = bool(int(value)) if key == "sp" else int(value)
        except ValueError:
            raise UsageError(f"layout field {part!r}: expected a whole number") from None
    return replace(base, **changes)


KINDS = {"tp": "TP", "pp": "PP", "dp": "DP", "zero": "ZeRO", "cp": "CP", "ep": "EP"}


def overlap_fractions(text: str | None) -> dict:
    """'dp=0.8,tp=0' -> {'DP': 0.8, 'TP': 0.0}."""
    if not text:
        return {}
    out = {}
    for part in text.split(","):
        key, _, value = part.partition("=")
        kind = KINDS.get(key.strip().lower())
        if kind is None:
            raise UsageError(f"overlap {part!r}: expected one of {', '.join(k + '=' for k in KINDS)} with a fraction")
        try:
            out[kind] = float(value)
        except ValueError:
            raise UsageError(f"overlap {part!r}: {value!r} is not a number") from None
    return out
