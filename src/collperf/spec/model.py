"""Requests on the model and the schedules: predict (PredictSpec), NCCL's own choice (NcclPredictSpec), the
sizes where the best algorithm changes (CrossoverSpec), one schedule (ScheduleSpec) and the verification of
every schedule over a range of rank counts (VerifySpec)."""

from __future__ import annotations

from dataclasses import dataclass, field

from collperf import units
from collperf.collectives import get_collective
from collperf.errors import UsageError
from collperf.model.network import Network
from collperf.spec.checks import SizesArg, cli_option, sizes, whole
from collperf.spec.network import HardwareSpec, NetworkSpec

COLLECTIVES_HELP = "allreduce, allgather, reducescatter, broadcast, reduce, alltoall, scatter, gather or sendrecv."
# the two-level algorithms' phases, as predict, crossover and plan take them
INTRA_ALGORITHM = cli_option("--intra-algorithm", help="Algorithm of the intra-node phases (or best).")
INTER_ALGORITHM = cli_option("--inter-algorithm", help="Algorithm of the inter-node phase (or best).")


@dataclass(frozen=True, kw_only=True)
class PredictSpec:
    """`collperf predict`: every algorithm's time (or those of `algorithm`: a name, a comma list or all) of
    `collective` at each size on `network` (a NetworkSpec, or a Network already resolved). With `expected`,
    also what NCCL on the catalogue system (network.cluster) is expected to take per size; `sharp` (None: the
    catalogue's default) says whether that system's InfiniBand switches reduce (SHARP, NCCL's CollNet): it changes
    NCCL's band and the system's bound, never our algorithms, whose schedules reduce on the GPUs."""

    collective: str = field(metadata=cli_option(help=COLLECTIVES_HELP))
    size: SizesArg = field(
        default="1M,64M,1G",
        metadata=cli_option("--size", "-s", type=str, help="Sizes (nccl-tests convention), comma list."),
    )
    network: NetworkSpec | Network = field(default_factory=NetworkSpec)
    algorithm: str | list[str] = field(
        default="all",
        metadata=cli_option(
            "--algorithm",
            "-A",
            type=str,
            help=(
                "An algorithm, a comma list, or all (allreduce: single-hop is Blink's single-hop trees, an alias of mesh)."
            ),
        ),
    )
    intra_algorithm: str = field(default="best", metadata=INTRA_ALGORITHM)
    inter_algorithm: str = field(default="best", metadata=INTER_ALGORITHM)
    segments: int | None = field(
        default=None,
        metadata=cli_option(  # None: the best per size when pipelined
            "--segments", type=int, help="Pipeline segments for chain/double-binary-tree (default: the best per size)."
        ),
    )
    expected: bool = False
    sharp: bool | None = field(
        default=None,
        metadata=cli_option(
            "--sharp/--no-sharp",
            type=bool,
            help=(
                "InfiniBand SHARP (in-network reduction, NCCL's CollNet) on or off on the --cluster system: changes NCCL's "
                "expected band and the system's bound printed below our algorithms (with --nccl: NCCL prices CollNet), not "
                "our algorithms (their schedules reduce on the GPUs)."
            ),
        ),
    )

    def __post_init__(self) -> None:
        get_collective(self.collective)
        self.sizes_bytes  # parsed now: a bad size fails here
        if self.segments is not None:
            whole("segments", self.segments, flag="--segments")
        if self.expected and (not isinstance(self.network, NetworkSpec) or self.network.cluster is None):
            raise UsageError("NCCL's expected time is priced on a catalogue system: give --cluster SYSTEM")
        if (
            self.sharp is not None
            and not self.expected
            and isinstance(self.network, NetworkSpec)
            and self.network.cluster is not None
        ):
            object.__setattr__(self, "expected", True)  # SHARP says something only about NCCL's band
        if self.sharp is not None and not self.expected:
            flag = "--sharp" if self.sharp else "--no-sharp"
            raise UsageError(
                f"{flag}: in-network reduction (SHARP) is a property of a catalogue system's InfiniBand "
                "switches, priced in NCCL's expected band and the system's bound: give --cluster "
                f"SYSTEM --nodes N (our algorithms reduce on the GPUs and do not change with {flag})"
            )

    @property
    def sizes_bytes(self) -> list[int]:
        return sizes(self.size)


@dataclass(frozen=True, kw_only=True)
class NcclPredictSpec:
    """`collperf predict --nccl`: NCCL's chosen algorithm/protocol, time and runner-up per size on a catalogue
    system (hardware.cluster or hardware.gpu), sized to `ranks` and hardware.nodes."""

    collective: str
    size: SizesArg = "1M,64M,1G"
    hardware: HardwareSpec = field(default_factory=lambda: HardwareSpec(cluster="dgx-h100"))
    ranks: int | None = None

    def __post_init__(self) -> None:
        get_collective(self.collective)
        if self.ranks is not None:
            whole("ranks", self.ranks, flag="--ranks")
        self.sizes_bytes

    @property
    def sizes_bytes(self) -> list[int]:
        return sizes(self.size)


@dataclass(frozen=True, kw_only=True)
class CrossoverSpec:
    """`collperf crossover`: where the best algorithm of `collective` changes between min_size and max_size."""

    collective: str = field(metadata=cli_option(help=COLLECTIVES_HELP))
    network: NetworkSpec | Network = field(default_factory=NetworkSpec)
    min_size: str | int = field(default="1", metadata=cli_option("--min", help="Smallest size."))
    max_size: str | int = field(default="16G", metadata=cli_option("--max", help="Largest size."))
    algorithm: str | list[str] = field(
        default="all", metadata=cli_option("--algorithm", "-A", help="Restrict to these (comma list).")
    )
    intra_algorithm: str = field(default="best", metadata=INTRA_ALGORITHM)
    inter_algorithm: str = field(default="best", metadata=INTER_ALGORITHM)

    def __post_init__(self) -> None:
        get_collective(self.collective)
        if self.min_size_bytes > self.max_size_bytes:
            raise UsageError(f"--min {self.min_size} > --max {self.max_size}: give the smaller size first")

    @property
    def min_size_bytes(self) -> int:
        return units.parse_size(self.min_size)

    @property
    def max_size_bytes(self) -> int:
        return units.parse_size(self.max_size)


@dataclass(frozen=True, kw_only=True)
class NcclCrossoverSpec:
    """`collperf crossover --nccl`: the sizes between min_size and max_size where NCCL's (algorithm, protocol)
    changes on a catalogue system (hardware.cluster or hardware.gpu), sized to `ranks` and hardware.nodes."""

    collective: str
    min_size: str | int = "1"
    max_size: str | int = "16G"
    hardware: HardwareSpec = field(default_factory=lambda: HardwareSpec(cluster="dgx-h100"))
    ranks: int | None = None

    def __post_init__(self) -> None:
        get_collective(self.collective)
        if self.ranks is not None:
            whole("ranks", self.ranks, flag="--ranks")
        if self.min_size_bytes > self.max_size_bytes:
            raise UsageError(f"--min {self.min_size} > --max {self.max_size}: give the smaller size first")
        if self.min_size_bytes == self.max_size_bytes:
            raise UsageError(
                f"--min {self.min_size} = --max {self.max_size}: a range has two ends; for one size "
                "NCCL's choice is `collperf predict --nccl -s SIZE`"
            )

    @property
    def min_size_bytes(self) -> int:
        return units.parse_size(self.min_size)

    @property
    def max_size_bytes(self) -> int:
        return units.parse_size(self.max_size)


@dataclass(frozen=True, kw_only=True)
class ScheduleSpec:
    """`collperf schedule`: one algorithm's explicit schedule on `ranks` (hierarchical: on nodes x
    ranks_per_node, with the phases' algorithms). `arrays`: the array form (schedule/arrays.py) the
    simulator takes at scale, instead of the listed transfers."""

    collective: str = field(metadata=cli_option(help=COLLECTIVES_HELP))
    algorithm: str = field(
        metadata=cli_option("--algorithm", "-A", help="An algorithm of the collective, or hierarchical.")
    )
    ranks: int | None = field(default=None, metadata=cli_option("--ranks", "-p", type=int, help="Rank count."))
    root: int = field(default=0, metadata=cli_option("--root", help="Root rank of rooted collectives."))
    segments: int = field(
        default=1, metadata=cli_option("--segments", help="Pipeline segments (chain, double-binary-tree).")
    )
    nodes: int | None = field(default=None, metadata=cli_option("--nodes", type=int, help="hierarchical: nodes."))
    ranks_per_node: int | None = field(
        default=None, metadata=cli_option("--ranks-per-node", type=int, help="hierarchical: ranks per node.")
    )
    intra_algorithm: str | None = field(
        default=None,
        metadata=cli_option(
            "--intra-algorithm", help="hierarchical: the intra-node phases' algorithm (default: the collective's)."
        ),
    )
    inter_algorithm: str | None = field(
        default=None,
        metadata=cli_option(
            "--inter-algorithm", help="hierarchical: the inter-node phase's algorithm (default: the collective's)."
        ),
    )
    arrays: bool = False

    def __post_init__(self) -> None:
        get_collective(self.collective)
        for name in ("ranks", "nodes", "ranks_per_node", "segments"):
            if getattr(self, name) is not None:
                whole(name.replace("_", "-"), getattr(self, name), flag=f"--{name.replace('_', '-')}")
        whole("root", self.root, 0, "--root")


@dataclass(frozen=True, kw_only=True)
class VerifySpec:
    """`collperf verify`: every selected algorithm built and symbolically verified for each rank count in
    min_ranks..max_ranks (pipelined ones at each of `segments`), and with `hierarchical` the two-level
    schedules on every nodes x ranks_per_node factorization."""

    collective: str | None = field(default=None, metadata=cli_option("--collective", help="Only this collective."))
    algorithm: str | None = field(default=None, metadata=cli_option("--algorithm", "-A", help="Only this algorithm."))
    max_ranks: int = field(default=64, metadata=cli_option("--max-ranks", help="The largest rank count checked."))
    min_ranks: int = field(default=1, metadata=cli_option("--min-ranks", help="The smallest rank count checked."))
    segments: tuple[int, ...] = (1, 3)
    hierarchical: bool = True

    def __post_init__(self) -> None:
        if self.collective is not None:
            get_collective(self.collective)
        if not (
            isinstance(self.min_ranks, int)
            and isinstance(self.max_ranks, int)
            and 1 <= self.min_ranks <= self.max_ranks
        ):
            raise UsageError(f"rank range {self.min_ranks}..{self.max_ranks}: expected 1 <= --min-ranks <= --max-ranks")
