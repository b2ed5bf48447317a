"""A training step's communication: tensor, pipeline and data parallel, ZeRO, on a cluster, with overlap.

Per rank and per step (the cost-model chapter's accounting, seed 000):
  TP   per layer of its stage and per micro-batch: 2 allreduces forward and 2 backward of the
       activation (micro-batch x sequence x hidden x bytes); with sequence parallelism each becomes an
       allgather + a reducescatter of the same tensor.
  PP   per micro-batch: the activation sent forward to the next stage and its gradient sent back
       (2 x micro-batches send/recv of the activation).
  DP   ZeRO 0: the gradients (parameters / (tp x pp) x gradient bytes) allreduced in buckets;
       ZeRO 1/2: reducescatter of the gradients + allgather of the updated parameters;
       ZeRO 3: per layer, allgather of its parameters in forward and again in backward, and
       reducescatter of its gradients (1.5x the bytes of plain DP per step).
Ranks are numbered node-major (rank = node x ranks_per_node + local); the placement orders the
dimensions from innermost (TP first by default). A group inside one node is priced on the intra link,
one rank per node on the inter link (each rank's share of its node's NICs), several per node on
several nodes as a two-level collective.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from collperf.errors import UsageError
from collperf.model.network import Cluster
from collperf.model.predict import Network, best


@dataclass(frozen=True)
class ModelSpec:
    name: str
    params: float               # parameters
    layers: int
    hidden: int
    seq_len: int
    micro_batch: int = 1        # sequences per micro-batch
    param_bytes: int = 2
    grad_bytes: int = 2
    act_bytes: int = 2
    activation_bytes: float | None = None   # override of micro_batch x seq_len x hidden x act_bytes

    def __post_init__(self):
        for name in ("params", "layers", "hidden", "seq_len", "micro_batch", "param_bytes", "grad_bytes", "act_bytes"):
            if not getattr(self, name) > 0:
                raise UsageError(f"model {name} {getattr(self, name)!r} must be positive")

    @property
    def activation(self) -> float:
        """Bytes of one micro-batch's activation tensor (what TP reduces and PP sends)."""
        if self.activation_bytes is not None:
            return float(self.activation_bytes)
        return float(self.micro_batch * self.seq_len * self.hidden * self.act_bytes)


# Shapes of common open models (Llama-2 7B/13B/70B: layers, hidden size; 4096-token sequences)
MODELS = {
    "7b": ModelSpec("7b", 6.7e9, 32, 4096, 4096),
    "13b": ModelSpec("13b", 13e9, 40, 5120, 4096),
    "70b": ModelSpec("70b", 70e9, 80, 8192, 4096),
}


def get_model(name: str) -> ModelSpec:
    key = str(name).lower()
    if key not in MODELS:
        raise UsageError(f"unknown model {name!r}: expected one of {', '.join(MODELS)} (or describe it with "
                         "--params --layers --hidden --seq-len)")
    return MODELS[key]


@dataclass(frozen=True)
class Layout:
    tp: int = 1
    pp: int = 1
    dp: int = 1
    zero: int = 0
    sequence_parallel: bool = False
    micro_batches: int = 1
    bucket_bytes: float = 25e6          # PyTorch DDP's default bucket (25 MB)
    placement: tuple = ("tp", "pp", "dp")   # innermost first

    def __post_init__(self):
        for name in ("tp", "pp", "dp", "micro_batches"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"{name} {value!r} is not a whole number >= 1")
        if self.zero not in (0, 1, 2, 3):
            raise UsageError(f"zero stage {self.zero!r}: expected 0, 1, 2 or 3")
        if sorted(self.placement) != ["dp", "pp", "tp"]:
            raise UsageError(f"placement {'-'.join(self.placement)!r}: expected an order of tp, pp and dp, "
                             "innermost first, e.g. tp-pp-dp")
        if not self.bucket_bytes > 0:
            raise UsageError(f"bucket size {self.bucket_bytes} must be positive")

    @property
    def ranks(self) -> int:
        return self.tp * self.pp * self.dp

    def check(self, ranks: int, layers: int) -> None:
        if self.ranks != ranks:
            raise UsageError(f"tp({self.tp}) x pp({self.pp}) x dp({self.dp}) = {self.ranks} != ranks({ranks})")
        if layers % self.pp:
            raise UsageError(f"layers({layers}) is not a multiple of pp({self.pp})")

    def describe(self) -> str:
        text = f"tp{self.tp} x pp{self.pp} x dp{self.dp}"
        if self.zero:
            text += f" zero{self.zero}"
        if self.sequence_parallel:
            text += " sp"
        return text


@dataclass
class CommItem:
    kind: str            # TP, PP, DP, ZeRO
    collective: str
    group_ranks: int
    level: str           # intra, inter, two-level
    count: int           # per rank per step
    size_bytes: float
    time_per_op_s: float
    algorithm: str

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
    exposed: dict = field(default_factory=dict)     # kind -> exposed seconds

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
        return (self.compute_s or 0.0) + self.exposed_s

    @property
    def speedup(self) -> float | None:
        """Step time without overlap / with it."""
        if not self.compute_s:
            return None
        return (self.compute_s + self.comm_s) / self.step_s

    @property
    def dominant(self) -> str:
        kinds = self.by_kind()
        return max(kinds, key=kinds.get) if kinds else "none"

    def to_json(self) -> dict:
        return {"model": vars(self.model), "layout": {**vars(self.layout), "placement": "-".join(self.layout.placement)},
                "cluster": self.cluster.describe(), "ranks": self.cluster.ranks,
                "items": [{**vars(i), "total_s": i.total_s} for i in self.items],
                "by_kind_s": self.by_kind(), "exposed_s": self.exposed, "communication_s": self.comm_s,
                "compute_s": self.compute_s, "step_s": self.step_s if self.compute_s else None,
                "speedup_from_overlap": self.speedup, "dominant": self.dominant}


def group_shape(layout: Layout, dim: str, ranks_per_node: int) -> tuple[int, int]:
    """(ranks per node, nodes) spanned by one group of dimension `dim` under the placement."""
    sizes = {"tp": layout.tp, "pp": layout.pp, "dp": layout.dp}
    stride = 1
    for d in layout.placement:
        if d == dim:
            break
        stride *= sizes[d]
    degree = sizes[dim]
    ranks = [k * stride for k in range(degree)]
    nodes = {r // ranks_per_node for r in ranks}
    return degree // len(nodes), len(nodes)


def _network(cluster: Cluster, per_node: int, nodes: int) -> tuple[Network, str]:
    """The network a group sees; every rank of a node is in some group of the same dimension at once,
    so on the network each rank has its share of the node's NICs."""
    if nodes == 1:
        return Network.of(cluster.intra, per_node), "intra"
    share = cluster.inter_per_rank
    if per_node == 1:
        return Network.of(share, nodes), "inter"
    sub = Cluster(nodes, per_node, cluster.intra, share, nics_per_node=per_node, name=cluster.name)
    return Network.of(sub), "two-level"


def _price(collective, size, network, algorithm, intra_algorithm, inter_algorithm) -> tuple[float, str]:
    if network.ranks == 1:
        return 0.0, "-"
    cheapest, names = best(collective, network, [size], algorithm=algorithm if algorithm != "best" else "all",
                           intra_algorithm=intra_algorithm, inter_algorithm=inter_algorithm)
    return float(cheapest.total_s[0]), str(names[0])


def plan(model: ModelSpec, layout: Layout, cluster: Cluster, compute_s: float | None = None,
         overlap: dict | None = None, algorithm: str = "best", intra_algorithm: str = "best",
         inter_algorithm: str = "best") -> Plan:
    """The communication of one training step, priced on `cluster`, with overlap against compute."""
    layout.check(cluster.ranks, model.layers)
    g = cluster.ranks_per_node
    items: list[CommItem] = []

    def add(kind, dim, collective, count, size):
        if count <= 0 or size <= 0:
            return
        per_node, nodes = group_shape(layout, dim, g)
        net, level = _network(cluster, per_node, nodes)
        if net.ranks == 1:
            return
        time_s, name = _price(collective, size, net, algorithm if collective != "sendrecv" else "ring",
                              intra_algorithm, inter_algorithm)
        items.append(CommItem(kind, collective, net.ranks, level, count, size, time_s, name))

    act, m, stage_layers = model.activation, layout.micro_batches, model.layers // layout.pp
    if layout.tp > 1:
        ops = 4 * stage_layers * m
        if layout.sequence_parallel:
            add("TP", "tp", "allgather", ops, act)
            add("TP", "tp", "reducescatter", ops, act)
        else:
            add("TP", "tp", "allreduce", ops, act)
    if layout.pp > 1:
        # the pp-group has pp ranks, but a send/recv is one hop between neighbouring stages
        per_node, nodes = group_shape(layout, "pp", g)
        link = cluster.intra if nodes == 1 else cluster.inter_per_rank
        time_s, _ = _price("sendrecv", act, Network.of(link, 2), "ring", "best", "best")
        items.append(CommItem("PP", "sendrecv", 2, "intra" if nodes == 1 else "inter", 2 * m, act, time_s, "p2p"))
    if layout.dp > 1:
        shard = model.params / (layout.tp * layout.pp)
        grads, params = shard * model.grad_bytes, shard * model.param_bytes
        if layout.zero == 0:
            full, rest = divmod(grads, layout.bucket_bytes)
            add("DP", "dp", "allreduce", int(full), layout.bucket_bytes)
            add("DP", "dp", "allreduce", 1 if rest else 0, rest)
        elif layout.zero in (1, 2):
            add("DP", "dp", "reducescatter", 1, grads)
            add("DP", "dp", "allgather", 1, params)
        else:
            per_layer = stage_layers
            add("ZeRO", "dp", "allgather", 2 * per_layer, params / per_layer)
            add("ZeRO", "dp", "reducescatter", per_layer, grads / per_layer)
    result = Plan(model, layout, cluster, items, compute_s, dict(overlap or {}))
    result.exposed = _exposed(result)
    return result


def _exposed(p: Plan) -> dict:
    """Exposed time per kind: (1 - overlap fraction) x its time; DP without a fraction given follows
    the bucket schedule: buckets overlap backward (2/3 of compute) one by one, the last never does."""
    exposed = {}
    for kind, total in p.by_kind().items():
        if kind in p.overlap:
            fraction = p.overlap[kind]
            if not 0 <= fraction <= 1:
                raise UsageError(f"overlap of {kind} {fraction}: expected a fraction between 0 and 1")
            exposed[kind] = total * (1 - fraction)
        elif kind == "DP" and p.compute_s and p.layout.zero == 0:
            last = min((i.time_per_op_s for i in p.items if i.kind == "DP"), default=0.0)
            exposed[kind] = max(last, total - 2 / 3 * p.compute_s)
        else:
            exposed[kind] = total
    return exposed


def compute_time(model: ModelSpec, layout: Layout, flops_per_rank: float) -> float:
    """6 x parameters x tokens per step / (ranks x achieved FLOP/s): the usual dense-transformer
    estimate (forward 2, backward 4 FLOPs per parameter and token)."""
    if not flops_per_rank > 0:
        raise UsageError(f"achieved FLOP/s {flops_per_rank} must be positive")
    tokens = layout.dp * layout.micro_batches * model.micro_batch * model.seq_len
    return 6 * model.params * tokens / (layout.ranks * flops_per_rank)


def parse_layout(text: str, base: Layout | None = None) -> Layout:
    """'8x8x8' (tp x pp x dp) or 'tp=8,pp=8,dp=8,zero=3,sp=1,mb=8'."""
    base = base or Layout()
    text = text.strip()
    if "=" not in text:
        try:
            tp, pp, dp = (int(x) for x in text.lower().split("x"))
        except ValueError:
            raise UsageError(f"layout {text!r}: expected TPxPPxDP such as 8x8x8, or tp=8,pp=8,dp=8") from None
        return replace(base, tp=tp, pp=pp, dp=dp)
    keys = {"tp": "tp", "pp": "pp", "dp": "dp", "zero": "zero", "sp": "sequence_parallel", "mb": "micro_batches"}
    changes = {}
    for part in text.split(","):
        key, _, value = part.partition("=")
        if key.strip() not in keys:
            raise UsageError(f"layout field {key!r}: expected one of {', '.join(keys)}")
        try:
            changes[keys[key.strip()]] = bool(int(value)) if key.strip() == "sp" else int(value)
        except ValueError:
            raise UsageError(f"layout field {part!r}: expected a whole number") from None
    return replace(base, **changes)


def overlap_fractions(text: str | None) -> dict:
    """'dp=0.8,tp=0' -> {'DP': 0.8, 'TP': 0.0}."""
    if not text:
        return {}
    out = {}
    for part in text.split(","):
        key, _, value = part.partition("=")
        kind = {"tp": "TP", "pp": "PP", "dp": "DP", "zero": "ZeRO"}.get(key.strip().lower())
        if kind is None:
            raise UsageError(f"overlap {part!r}: expected tp=, pp=, dp= or zero= with a fraction")
        try:
            out[kind] = float(value)
        except ValueError:
            raise UsageError(f"overlap {part!r}: {value!r} is not a number") from None
    return out


def overlap_step(compute_s: float, comm_s: float, fraction: float) -> tuple[float, float]:
    """(step time, speedup over no overlap) when `fraction` of the communication hides behind compute."""
    step = compute_s + comm_s * (1 - fraction)
    return step, (compute_s + comm_s) / step


__all__ = ["ModelSpec", "Layout", "Plan", "CommItem", "MODELS", "get_model", "plan", "compute_time", "parse_layout",
           "overlap_fractions", "overlap_step", "group_shape"]
