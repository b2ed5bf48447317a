"""Training-step plans (PlanSpec): a model, a layout, a cluster, and how compute is estimated."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from collperf import plan as plans, units
from collperf.errors import UsageError
from collperf.model.hardware.presets import get_preset
from collperf.plan import parse_layout
from collperf.spec.checks import cli_option
from collperf.spec.model import INTER_ALGORITHM, INTRA_ALGORITHM
from collperf.spec.network import NetworkSpec


@dataclass(frozen=True, kw_only=True)
class PlanSpec:
    """One training step's communication: a model, a layout, a cluster, and how compute is estimated."""

    model: str | plans.ModelSpec = "70b"  # a preset name or a plan.ModelSpec (a ModelSpec once made)
    layout: plans.Layout | None = None  # a plan.Layout (default: tp=pp=dp=1; a Layout once made)
    network: NetworkSpec = field(default_factory=lambda: NetworkSpec(cluster="dgx-h100"))
    compute: str | float | None = field(
        default=None,
        metadata=cli_option(  # a time per step
            "--compute", type=str, help="Compute time per step, e.g. 2000ms."
        ),
    )
    flops: str | float | None = field(
        default=None,
        metadata=cli_option(  # or an achieved FLOP/s per rank
            "--flops", type=str, help="Achieved FLOP/s per rank, e.g. 400TFLOPS."
        ),
    )
    overlap: str | None = field(
        default=None, metadata=cli_option("--overlap", type=str, help="Fractions hidden by compute, e.g. dp=0.8,tp=0.")
    )
    algorithm: str = field(
        default="best", metadata=cli_option("--algorithm", "-A", help="Algorithm for every collective, or best.")
    )
    intra_algorithm: str = field(default="best", metadata=INTRA_ALGORITHM)
    inter_algorithm: str = field(default="best", metadata=INTER_ALGORITHM)
    from_trace: list[str] | str | None = field(
        default=None,
        metadata=cli_option(
            "--from-trace",
            type=list[str],
            help="Profiler traces of a real step (files, a directory or a glob): their "
            "compute time and measured overlap per kind replace the estimates (--compute and --overlap still win).",
        ),
    )

    def __post_init__(self) -> None:
        if not isinstance(self.model, plans.ModelSpec):  # a preset name: its ModelSpec (frozen: set once)
            object.__setattr__(self, "model", plans.get_model(self.model))
        if self.layout is None:
            object.__setattr__(self, "layout", plans.Layout())
        if self.compute is not None and self.flops is not None:
            raise UsageError(f"--compute {self.compute} and --flops {self.flops} both set the compute time: give one")
        if isinstance(self.from_trace, str):
            object.__setattr__(self, "from_trace", [self.from_trace])
        self.compute_s, self.flops_per_rank, self.overlap_fractions  # parse now: bad values fail here

    @property
    def compute_s(self) -> float | None:
        return units.parse_time(self.compute) if self.compute is not None else None

    @property
    def flops_per_rank(self) -> float | None:
        return flops(self.flops) if self.flops is not None else None

    @property
    def overlap_fractions(self) -> dict[str, float]:
        return plans.overlap_fractions(self.overlap)

    def cluster_network(self) -> NetworkSpec:
        """The network sized to the layout: preset nodes filled by the layout's ranks."""
        assert self.layout is not None  # __post_init__ made it a Layout
        net, ranks = self.network, self.layout.ranks
        if net.profile is None and net.cluster is not None and net.nodes is None:
            per_node = net.ranks_per_node or get_preset(net.cluster).ranks_per_node
            if ranks % per_node:
                lay = self.layout
                raise UsageError(
                    f"tp({lay.tp}) x pp({lay.pp}) x dp({lay.dp}) = {ranks} ranks do not fill nodes of "
                    f"{per_node}: give --nodes and --ranks-per-node"
                )
            net = replace(net, nodes=ranks // per_node)
        return net

    def variant(self, text: str) -> "PlanSpec":
        """Another layout and/or cluster to compare: '8x4x16', 'tp=8,pp=8,dp=8,zero=3', '8x8x8@dgx-a100:64'
        (nodes) or '...@dgx-a100:64x8' (nodes x ranks per node)."""
        layout_text, _, where = text.partition("@")
        assert self.layout is not None  # __post_init__ made it a Layout
        layout = parse_layout(layout_text, self.layout)
        net = self.network
        if where:
            preset, _, shape = where.partition(":")
            nodes = per_node = None
            try:
                if "x" in shape:
                    nodes, per_node = (int(x) for x in shape.split("x"))
                elif shape:
                    nodes = int(shape)
            except ValueError:
                raise UsageError(
                    f"--compare {text!r}: expected LAYOUT@PRESET[:NODES[xRANKS_PER_NODE]], e.g. 8x8x8@dgx-a100:64"
                ) from None
            net = replace(net, cluster=preset, nodes=nodes, ranks_per_node=per_node, profile=None)
        else:
            net = replace(net, nodes=None)
        return replace(self, layout=layout, network=net)


def flops(value: str | float) -> float:
    """'400TFLOPS' (or a number) -> FLOP/s."""
    import re

    if isinstance(value, (int, float)) and not isinstance(value, bool):
        rate = float(value)
    else:
        m = re.fullmatch(r"\s*([0-9.]+(?:[eE][+-]?[0-9]+)?)\s*([kMGTP]?)FLOP/?S?\s*", str(value), re.IGNORECASE)
        if not m and re.fullmatch(r"\s*[0-9.]+(?:[eE][+-]?[0-9]+)?\s*", str(value)):
            raise UsageError(
                f"--flops {value}: {str(value).strip()} what? give a unit, e.g. "
                f"{str(value).strip()}TFLOPS (achieved FLOP/s per GPU)"
            )
        if not m:
            raise UsageError(f"cannot read FLOP rate {value!r}: expected e.g. 400TFLOPS")
        rate = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "p": 1e15}[m.group(2).lower()]
    if not rate > 0 or rate == float("inf"):
        raise UsageError(f"achieved FLOP rate {value!r} must be a positive finite number, e.g. 400TFLOPS")
    return rate


@dataclass(frozen=True, kw_only=True)
class SearchSpec:
    """`collperf plan --search`: every valid layout of `gpus` GPUs that fits memory, for `global_batch`
    sequences per step, of the plan's model on its cluster (and achieved FLOP/s), the `top` fastest kept.
    With `defaults` (plan without a layout): gpus = nodes (default 1) x GPUs per node and 4M tokens per step,
    where not given."""

    plan: PlanSpec = field(default_factory=PlanSpec)
    gpus: int | None = field(
        default=None,
        metadata=cli_option(
            "--gpus", type=int, help="Search: GPUs to lay the model out on (default: --nodes x GPUs per node)."
        ),
    )
    global_batch: int | None = field(
        default=None,
        metadata=cli_option("--global-batch", type=int, help="Search: sequences per step (default: 4M tokens)."),
    )
    defaults: bool = False
    top: int | None = field(
        default=None,
        metadata=cli_option("--top", type=int, help="Search: show this many layouts (default 3, 10 with --search)."),
    )

    def __post_init__(self) -> None:
        for name in ("gpus", "global_batch", "top"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise UsageError(f"--{name.replace('_', '-')} {value!r}: expected a whole number >= 1")
