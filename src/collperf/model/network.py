"""Network parameters: one link (alpha, bandwidth, reduction bandwidth) and two-level clusters.

The literature writes beta both as a bandwidth and as seconds per byte; we name the quantity:
`latency_s` is alpha, `bandwidth_Bps` is 1/beta, `reduce_bandwidth_Bps` is 1/gamma (infinite by
default: GPUs fuse the reduction into the copy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from collperf import units
from collperf.collectives import check_ranks
from collperf.errors import UsageError


@dataclass(frozen=True)
class Link:
    """A uniform, full-duplex network as seen by one rank (Hockney model: alpha + m * beta)."""

    latency_s: float
    bandwidth_Bps: float
    reduce_bandwidth_Bps: float = math.inf
    name: str = ""

    def __post_init__(self) -> None:
        if not (self.latency_s >= 0 and math.isfinite(self.latency_s)):
            raise UsageError(f"latency {self.latency_s!r} s is not a finite time >= 0: give e.g. --latency 5us")
        if not self.bandwidth_Bps > 0:
            raise UsageError(f"bandwidth {self.bandwidth_Bps!r} B/s is not > 0: give e.g. --bandwidth 50GB/s")
        if not self.reduce_bandwidth_Bps > 0:
            raise UsageError(
                f"reduce bandwidth {self.reduce_bandwidth_Bps!r} B/s is not > 0: "
                "give e.g. --reduce-bandwidth 500GB/s, or leave it out for infinite"
            )

    @property
    def seconds_per_byte(self) -> float:
        """beta in the papers' sense."""
        return 1.0 / self.bandwidth_Bps

    @property
    def seconds_per_reduced_byte(self) -> float:
        """gamma in the papers' sense (0 when reduction is free)."""
        return 0.0 if math.isinf(self.reduce_bandwidth_Bps) else 1.0 / self.reduce_bandwidth_Bps

    def describe(self) -> str:
        text = f"{units.format_time(self.latency_s)}, {units.format_bandwidth(self.bandwidth_Bps)}"
        if not math.isinf(self.reduce_bandwidth_Bps):
            text += f", reduce {units.format_bandwidth(self.reduce_bandwidth_Bps)}"
        return text

    @classmethod
    def parse(
        cls, latency: str | float, bandwidth: str | float, reduce_bandwidth: str | float = "inf", name: str = ""
    ) -> "Link":
        """From strings such as ('5us', '50GB/s', 'inf')."""
        return cls(
            units.parse_time(latency), units.parse_bandwidth(bandwidth), units.parse_bandwidth(reduce_bandwidth), name
        )


@dataclass(frozen=True)
class Cluster:
    """nodes x ranks_per_node ranks; an intra-node link per rank, NICs shared by a node's ranks.

    `inter` is one NIC's link. The inter-node bandwidth one rank gets when every rank of a node
    talks across nodes at once is NIC bandwidth x NICs per node / ranks per node.
    """

    nodes: int
    ranks_per_node: int
    intra: Link
    inter: Link
    nics_per_node: int = 1
    name: str = ""
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        for label, value in (
            ("nodes", self.nodes),
            ("ranks_per_node", self.ranks_per_node),
            ("nics_per_node", self.nics_per_node),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"{label} {value!r} is not a positive whole number: give e.g. --nodes 4")

    @property
    def ranks(self) -> int:
        return self.nodes * self.ranks_per_node

    @property
    def inter_per_rank(self) -> Link:
        """The inter-node link one rank sees while all ranks of its node use the network."""
        share = self.nics_per_node / self.ranks_per_node
        return replace(
            self.inter, bandwidth_Bps=self.inter.bandwidth_Bps * share, name=f"{self.inter.name or 'inter'} per rank"
        )

    @property
    def bottleneck(self) -> Link:
        """The link a flat (topology-unaware) algorithm is priced on: the slower, later one."""
        if self.nodes == 1:
            return self.intra
        if self.ranks_per_node == 1:
            return self.inter_per_rank
        inter = self.inter_per_rank
        return Link(
            max(self.intra.latency_s, inter.latency_s),
            min(self.intra.bandwidth_Bps, inter.bandwidth_Bps),
            min(self.intra.reduce_bandwidth_Bps, inter.reduce_bandwidth_Bps),
            "bottleneck",
        )

    def with_nodes(self, nodes: int) -> "Cluster":
        return replace(self, nodes=nodes)

    def describe(self) -> str:
        if self.nodes == 1:  # no network used: its NICs would only suggest a bound that plays no part
            return f"1 node x {self.ranks_per_node} ranks; intra {self.intra.describe()} (one node: no network)"
        return (
            f"{self.nodes} nodes x {self.ranks_per_node} ranks; intra {self.intra.describe()}; "
            f"inter {self.inter_per_rank.describe()} per rank "
            f"({self.nics_per_node} NIC(s) of {units.format_bandwidth(self.inter.bandwidth_Bps)} per node)"
        )


@dataclass(frozen=True)
class Network:
    """Where a collective runs: `ranks` ranks on a uniform link, or a two-level cluster."""

    ranks: int
    link: Link | None = None
    cluster: Cluster | None = None

    def __post_init__(self) -> None:
        check_ranks(self.ranks)
        if (self.link is None) == (self.cluster is None):
            raise UsageError(
                "give either a link (--latency/--bandwidth) or a cluster (--cluster or "
                "--nodes/--ranks-per-node with intra/inter links), not both or neither"
            )
        if self.cluster is not None and self.cluster.ranks != self.ranks:
            c = self.cluster
            raise UsageError(
                f"{self.ranks} ranks (--ranks) is not the cluster's {c.nodes} node(s) (--nodes) x "
                f"{c.ranks_per_node} ranks per node{f' of {c.name}' if c.name else ''} = {c.ranks}: give "
                f"--ranks {c.ranks} (or leave it out), or --nodes and --ranks-per-node that multiply to "
                f"{self.ranks}"
            )

    @classmethod
    def of(cls, link_or_cluster: Link | Cluster, ranks: int | None = None) -> "Network":
        if isinstance(link_or_cluster, Cluster):
            return cls(link_or_cluster.ranks if ranks is None else ranks, cluster=link_or_cluster)
        if ranks is None:
            raise UsageError("a uniform link needs a rank count: give --ranks")
        return cls(ranks, link=link_or_cluster)

    @property
    def flat_link(self) -> Link:
        if self.link is not None:
            return self.link
        assert self.cluster is not None  # __post_init__: a link or a cluster, exactly one
        return self.cluster.bottleneck

    def describe(self) -> str:
        if self.cluster is not None:
            return self.cluster.describe()
        assert self.link is not None  # __post_init__: a link or a cluster, exactly one
        return f"{self.ranks} ranks; {self.link.describe()}"
