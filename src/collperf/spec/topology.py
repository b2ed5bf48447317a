"""Requests on a machine's topology: simulate (SimulateSpec), Blink's packed trees (TreesSpec), predict
--topology (TopologyPredictSpec), and the network options that go with a topology or not."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace

from collperf import units
from collperf.blink.algorithms import BLINK
from collperf.blink.packing import LINK_KINDS, TRANSIT
from collperf.collectives import get_collective
from collperf.errors import UsageError
from collperf.model.algorithms.modes import mode_of
from collperf.model.network import Link
from collperf.simulate import ENGINES
from collperf.spec.checks import SizesArg, check_mode, cli_option, rank_list, sizes, whole
from collperf.spec.network import NetworkSpec
from collperf.topology import KINDS as TOPOLOGY_KINDS


# Blink's options, in predict --topology and simulate: one declaration for both
HYBRID_OPTION = cli_option(
    "--hybrid", help="-A blink broadcast over NVLink and PCIe trees at once (the appendix's equation 8)."
)
T_DPA_OPTION = cli_option("--t-dpa", help="--hybrid: the switching overhead T_dpa, e.g. 0.5ms.")
TRANSIT_OPTION = cli_option(
    "--transit",
    help="-A blink: devices (trees on the group's GPUs, PCIe switches and CPUs) or any (idle GPUs forward too).",
)


@dataclass(frozen=True, kw_only=True)
class SimulateSpec:
    """An algorithm's schedule on a topology (dgx1v, dgx2, mesh:P, switch:P, ring:P, cluster:NxG or a file).
    Algorithm blink: Blink's packed trees on the group `ranks` of the topology (default: all its ranks),
    from `root` (a topology rank; default the group's first); `hybrid`: a broadcast split over NVLink
    and PCIe trees with the switching overhead `t_dpa` (Blink appendix A.2, equation 8)."""

    collective: str = field(metadata=cli_option(help="The collective (not with --pattern).", type=str))
    algorithm: str = field(
        metadata=cli_option(
            "--algorithm",
            "-A",
            type=str,
            help=(
                "An algorithm of the collective, hierarchical, blink (packed trees on --ranks), or single-hop "
                "(Blink's single-hop trees: an alias of the mesh allreduce)."
            ),
        )
    )
    topology: str = field(metadata=cli_option("--topology", "-t", type=str, help=f"The machine: {TOPOLOGY_KINDS}."))
    size: SizesArg = field(
        default="1G",
        metadata=cli_option("--size", "-s", type=str, help="Sizes, comma list (default 1G; --pattern: 1M,16M,256M)."),
    )
    mode: str = field(
        default="rounds", metadata=cli_option("--mode", help="rounds (fast) or events (congestion-aware).")
    )
    segments: int | None = field(
        default=None,
        metadata=cli_option(  # None: 1, or 16 for blink
            "--segments", type=int, help="Pipeline segments (default 1; blink 16; --pattern 32)."
        ),
    )
    root: int | None = field(
        default=None,
        metadata=cli_option(  # None: rank 0, or the group's first for blink
            "--root", type=int, help="Root rank (default 0; blink: the group's first)."
        ),
    )
    intra_algorithm: str | None = field(
        default=None,
        metadata=cli_option("--intra-algorithm", type=str, help="-A hierarchical: the intra-node phases' algorithm."),
    )
    inter_algorithm: str | None = field(
        default=None,
        metadata=cli_option("--inter-algorithm", type=str, help="-A hierarchical: the inter-node phase's algorithm."),
    )
    network: NetworkSpec = field(default_factory=NetworkSpec)
    ranks: list[int] | None = field(
        default=None,
        metadata=cli_option(  # '0,1,4' is read into the list once
            "--ranks", type=str, help="The group of GPUs, e.g. 0,1,4 (default: all of the topology)."
        ),
    )
    hybrid: bool = field(default=False, metadata=HYBRID_OPTION)
    t_dpa: str | float = field(default="0", metadata=T_DPA_OPTION)
    # blink: devices (the group's GPUs, switches, CPUs) or any (idle GPUs too)
    transit: str = field(default="devices", metadata=TRANSIT_OPTION)
    memory_limit: str | float | None = field(
        default=None,
        metadata=cli_option(
            "--memory-limit",
            type=str,
            help=(
                "Refuse, before it starts, a run whose estimated memory is over this (default: the memory available "
                "now), e.g. 8GiB."
            ),
        ),
    )
    engine: str = field(
        default="auto",
        metadata=cli_option(
            "--engine",
            help=("Events mode: auto (classes of like transfers where they are few), grouped, or per-transfer."),
        ),
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "collective", get_collective(self.collective).name)
        self.sizes_bytes, self.memory_limit_bytes, self.t_dpa_s  # parsed now: bad values fail here
        check_mode(self.mode)
        if self.engine not in ENGINES:
            raise UsageError(f"--engine {self.engine!r}: expected {', '.join(ENGINES)}")
        if self.segments is not None:
            whole("segments", self.segments, flag="--segments")
        if self.root is not None:
            whole("root", self.root, 0, "--root")
        object.__setattr__(self, "ranks", rank_list(self.ranks))
        blink = mode_of(self.algorithm) is BLINK
        if self.ranks is not None and not blink:
            raise UsageError(
                f"--ranks {','.join(map(str, self.ranks))} picks a group for -A blink; the other "
                "algorithms run on every rank of the topology"
            )
        if self.hybrid and not (blink and self.collective == "broadcast"):
            raise UsageError("--hybrid is the NVLink + PCIe broadcast of Blink: use it with broadcast -A blink")
        if self.t_dpa_s and not self.hybrid:
            raise UsageError(f"--t-dpa {self.t_dpa} is the hybrid split's switching time: add --hybrid")
        check_transit(self.transit)
        if blink and self.root is not None and self.ranks is not None and self.root not in self.ranks:
            raise UsageError(
                f"--root {self.root} is not one of --ranks {','.join(map(str, self.ranks))}: give a rank of the group"
            )

    @property
    def sizes_bytes(self) -> list[int]:
        """One size or a list ('1M,64M'): the schedule is built once and simulated at each."""
        return sizes(self.size)

    @property
    def memory_limit_bytes(self) -> int | None:
        return None if self.memory_limit is None else _memory(self.memory_limit)

    @property
    def t_dpa_s(self) -> float:
        return units.parse_time(self.t_dpa)


def _memory(limit: str | float) -> int:
    """--memory-limit: a size ('8GiB') or a number of bytes, above 0."""
    try:
        value = units.parse_size(
            round(limit) if isinstance(limit, (int, float)) and not isinstance(limit, bool) else limit
        )
    except UsageError as e:
        raise UsageError(f"--memory-limit {limit}: {e}") from None
    if value <= 0:
        raise UsageError(f"--memory-limit {limit}: expected a positive size such as 8GiB")
    return value


TREE_COLLECTIVES = ("broadcast", "allreduce", "allgather", "reducescatter")


def check_transit(transit: str) -> None:
    if transit not in TRANSIT:
        raise UsageError(
            f"--transit {transit!r}: expected devices (the group's GPUs, PCIe switches and CPUs) or "
            "any (idle GPUs forward too)"
        )


@dataclass(frozen=True, kw_only=True)
class TreesSpec:
    """Blink's packed spanning trees on a group of a topology's ranks (`collperf trees`)."""

    topology: str = field(
        default="dgx1v", metadata=cli_option("--topology", "-t", help="dgx1v | dgx2 | a topology file.json.")
    )
    # '0,1,4' is read into the list once; None: every rank of the topology
    ranks: list[int] | None = field(
        default=None, metadata=cli_option("--ranks", help="The group of GPUs, e.g. 0,1,4 (default: all).")
    )
    collective: str = field(
        default="broadcast",
        metadata=cli_option("--collective", help="broadcast | allreduce | allgather | reducescatter."),
    )
    # a topology rank ('3' is read as 3), 'best', or None (the group's first rank)
    root: int | str | None = field(
        default=None,
        metadata=cli_option(
            "--root", help="A rank of the group, or best (default: the group's first; not for allgather/reducescatter)."
        ),
    )
    links: str = field(
        default="all", metadata=cli_option("--links", help="all | nvlink | pcie: the links trees may use.")
    )
    # devices: trees on the group's GPUs, crossing PCIe switches and CPUs (Blink packs on its own
    # allocation, as NCCL's rings do); any: idle GPUs of the machine forward too
    transit: str = field(
        default="devices",
        metadata=cli_option(
            "--transit",
            help="devices: trees on the group's GPUs, through PCIe switches and CPUs (Blink's setting); "
            "any: idle GPUs forward too.",
        ),
    )
    size: str | int = field(
        default="1G", metadata=cli_option("--size", "-s", help="Size for the times (nccl-tests convention).")
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "collective", get_collective(self.collective).name)
        if self.collective not in TREE_COLLECTIVES:
            raise UsageError(
                f"--collective {self.collective}: packed trees are built for {', '.join(TREE_COLLECTIVES)}"
            )
        object.__setattr__(self, "ranks", rank_list(self.ranks))
        if isinstance(self.root, str) and self.root != "best":
            try:
                object.__setattr__(self, "root", int(self.root))
            except ValueError:
                raise UsageError(f"--root {self.root!r}: expected a rank of the group or best") from None
        if self.root is not None and self.collective in ("allgather", "reducescatter"):
            raise UsageError(f"--root: every rank is a root of {self.collective}; drop --root")
        if isinstance(self.root, int) and self.ranks is not None and self.root not in self.ranks:
            raise UsageError(
                f"--root {self.root} is not one of --ranks {','.join(map(str, self.ranks))}: "
                "give a rank of the group, or best"
            )
        if self.links not in LINK_KINDS:
            raise UsageError(f"--links {self.links!r}: expected one of {', '.join(LINK_KINDS)}")
        check_transit(self.transit)
        self.size_bytes  # parsed now: a bad size fails here

    @property
    def size_bytes(self) -> int:
        return units.parse_size(self.size)


@dataclass(frozen=True, kw_only=True)
class TopologyPredictSpec:
    """`collperf predict --topology`: the model on a machine's topology. -A blink: Blink's packed trees on
    the group `ranks` (bandwidth terms: size over the packing's rate; allreduce reduces up and broadcasts
    down the same trees), with `hybrid` the NVLink + PCIe broadcast split by the appendix's equation 8
    (switching time `t_dpa`). Other algorithms (single-hop, ring, ...): the closed forms on the link
    every pair of the group sees through a switch (dgx2, switch:P)."""

    collective: str
    topology: str = field(
        metadata=cli_option(
            "--topology",
            "-t",
            type=str,
            help=(
                "dgx1v | dgx2 | switch:P | file.json: -A blink prices packed trees on --ranks; other algorithms "
                "(single-hop, ring, ...) the closed forms on a switch's link."
            ),
        )
    )
    algorithm: str = "blink"
    size: SizesArg = "1M,64M,1G"
    ranks: list[int] | None = None  # the group ('0,1,2' is read into the list once); None: every rank
    root: int | None = field(
        default=None,
        metadata=cli_option(  # a topology rank of the group
            "--root", type=int, help="-A blink: the trees' root (default the group's first)."
        ),
    )
    hybrid: bool = field(default=False, metadata=HYBRID_OPTION)
    t_dpa: str | float = field(default="0", metadata=T_DPA_OPTION)
    transit: str = field(default="devices", metadata=TRANSIT_OPTION)
    network: NetworkSpec = field(default_factory=NetworkSpec)  # latency/bandwidth: the link of switch:P, ...

    def __post_init__(self) -> None:
        object.__setattr__(self, "collective", get_collective(self.collective).name)
        if self.hybrid and self.algorithm == "all":  # the hybrid split is Blink's: --hybrid alone means -A blink
            object.__setattr__(self, "algorithm", BLINK.name)
        object.__setattr__(self, "ranks", rank_list(self.ranks))
        self.sizes_bytes, self.t_dpa_s, self.link  # parsed now: bad values fail here
        if self.root is not None:
            whole("root", self.root, 0, "--root")
        blink = mode_of(self.algorithm) is BLINK
        if blink and not BLINK.serves(self.collective):
            assert BLINK.collectives is not None  # Blink prices a fixed list of collectives
            raise UsageError(f"-A blink with --topology prices {', '.join(BLINK.collectives)}; not {self.collective}")
        if self.hybrid and not (blink and self.collective == "broadcast"):
            raise UsageError("--hybrid is the NVLink + PCIe broadcast of Blink: use it with broadcast -A blink")
        if self.t_dpa_s and not self.hybrid:
            raise UsageError(f"--t-dpa {self.t_dpa} is the hybrid split's switching time: add --hybrid")
        if self.root is not None and not (blink and self.collective in ("broadcast", "reduce", "allreduce")):
            raise UsageError(
                "--root picks the packed trees' root of a broadcast, reduce or allreduce -A blink: drop it"
            )
        if self.root is not None and self.ranks is not None and self.root not in self.ranks:
            raise UsageError(
                f"--root {self.root} is not one of --ranks {','.join(map(str, self.ranks))}: give a rank of the group"
            )
        check_transit(self.transit)

    @property
    def sizes_bytes(self) -> list[int]:
        return sizes(self.size)

    @property
    def t_dpa_s(self) -> float:
        return units.parse_time(self.t_dpa)

    @property
    def link(self) -> Link | None:
        """The link --latency/--bandwidth give a switch:P, mesh:P or ring:P (None: the topology's own)."""
        return topology_link(self.network, self.topology)


# the topologies built on one given link (topology.parse): the only ones --latency/--bandwidth apply to
_LINKED_TOPOLOGY = re.compile(r"^(mesh|switch|ring):\d+$")


def topology_link(network: NetworkSpec, topology: str) -> Link | None:
    """The link --latency/--bandwidth give a mesh:P, switch:P or ring:P (None when not given); the other
    network options describe a machine, which --topology already gives: refused, not ignored."""
    machine = [
        f"--{f.name.replace('_', '-')}"
        for f in fields(network)
        if f.name not in ("ranks", "latency", "bandwidth", "reduce_bandwidth") and getattr(network, f.name) != f.default
    ]
    if machine:
        raise UsageError(
            f"--topology {topology} gives the machine: drop {', '.join(machine)} (only --latency and "
            "--bandwidth go with it, as the link of switch:P, mesh:P or ring:P)"
        )
    if network.latency is None and network.bandwidth is None:
        return None
    if network.latency is None or network.bandwidth is None:
        raise UsageError(
            f"--topology {topology}: a link needs both --latency and --bandwidth (e.g. --latency 1us "
            "--bandwidth 10GB/s)"
        )
    if not _LINKED_TOPOLOGY.match(str(topology).strip()):
        raise UsageError(
            f"--topology {topology} has its own links: drop --latency/--bandwidth (they give the link "
            "of switch:P, mesh:P or ring:P)"
        )
    return Link.parse(network.latency, network.bandwidth, network.reduce_bandwidth)


def predict_network(
    network: NetworkSpec,
    ranks: int | str | None = None,
    root: int | None = None,
    hybrid: bool = False,
    t_dpa: str | float = "0",
    transit: str = "devices",
) -> NetworkSpec:
    """`collperf predict` without --topology: refuses the options that only place Blink's packed trees on a
    topology, and takes --ranks as a rank count (a group such as 0,1,2 needs --topology)."""
    given = [
        n
        for n, v in (
            ("--root", root is not None),
            ("--hybrid", hybrid),
            ("--t-dpa", units.parse_time(t_dpa) != 0),
            ("--transit", transit != "devices"),
        )
        if v
    ]
    if given:
        raise UsageError(f"{', '.join(given)} go with --topology (Blink's packed trees): add --topology dgx1v")
    if ranks is None:
        return network
    try:
        count = int(str(ranks).strip())
    except ValueError:
        raise UsageError(
            f"--ranks {ranks}: a number of ranks; a group of GPUs such as 0,1,2 goes with --topology"
        ) from None
    return replace(network, ranks=count)
