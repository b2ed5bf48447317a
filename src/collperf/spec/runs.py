"""Runs on ranks: the nccl-tests-style sweep (SweepSpec), where it runs (BenchSpec: local ranks,
torchrun, a testbed) and the testbed's description."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Protocol

from collperf import units
from collperf.collectives import get_collective
from collperf.errors import UsageError, did_you_mean
from collperf.blink import algorithms as _blink_modes  # noqa: F401  (registers -A blink, blink-hybrid)
from collperf.model.algorithms import algorithms_for
from collperf.model.algorithms.modes import is_hybrid, is_runtime_only, mode_names, needs_topology, topology_collectives
from collperf.model.two_level.hierarchy import PLANS
from collperf.spec.checks import cli_option, output_path, rank_list, whole
from collperf.spec.checks import sizes as parse_size_list
from collperf.spec.network import NetworkSpec
from collperf.spec.patterns import PATTERN_COLLECTIVES, PATTERNS, refuse_unused_pattern_options

DTYPE_BYTES = {
    "float32": 4,
    "float": 4,
    "float64": 8,
    "double": 8,
    "float16": 2,
    "half": 2,
    "bfloat16": 2,
    "int32": 4,
    "int64": 8,
}
OPS = ("sum", "prod", "min", "max", "avg")


# Algorithms built on a topology rather than on p alone (Blink's packed trees, blink/runs.py): the bench
# places its local ranks on the topology's GPUs (BenchSpec.topology, .gpus) to build them
TOPOLOGY_ALGORITHMS = topology_collectives()


@dataclass(frozen=True, kw_only=True)
class SweepSpec:
    """An nccl-tests-style sweep: which collective and algorithms, which sizes, how measured and checked.
    Sizes are given as the CLI takes them ('64K') or in bytes; the `*_size_bytes` properties read them."""

    # bench also takes it as its argument (sweep_collective): the option's command-line default is None
    collective: str = field(
        default="allreduce",
        metadata=cli_option("--collective", type=str, help="The collective to measure (as the argument)."),
    )
    # 'ring,builtin' is read into the list once
    algorithms: list[str] = field(
        default_factory=lambda: ["builtin"],
        metadata=cli_option(
            "--algorithm",
            "-A",
            help="Comma list: ours, builtin, and/or auto (per size the model's fastest for the network).",
        ),
    )
    min_bytes: int | str = field(
        default="1K", metadata=cli_option("-b", "--minbytes", help="Smallest size (nccl-tests convention).")
    )
    max_bytes: int | str = field(default="1M", metadata=cli_option("-e", "--maxbytes", help="Largest size."))
    factor: int = field(default=2, metadata=cli_option("-f", "--stepfactor", help="Multiplicative step (0/1: use -i)."))
    step_bytes: int | str = field(
        default="1M", metadata=cli_option("-i", "--stepbytes", help="Additive step when -f is not > 1.")
    )
    iters: int = field(default=20, metadata=cli_option("-n", "--iters", help="Timed iterations per size."))
    warmup: int = field(default=5, metadata=cli_option("-w", "--warmup_iters", help="Untimed warm-up iterations."))
    dtype: str = field(
        default="float32", metadata=cli_option("-d", "--dtype", help="float32 float64 float16 bfloat16 int32 int64.")
    )
    op: str = field(default="sum", metadata=cli_option("-o", "--op", help="sum prod min max avg."))
    root: int = field(default=0, metadata=cli_option("-r", "--root", help="Root rank of rooted collectives."))
    check: int = field(
        default=1, metadata=cli_option("-c", "--check", help="Correctness-check iterations per size (0: off).")
    )
    average: int = field(
        default=1, metadata=cli_option("-a", "--average", help="Combine ranks' times: 0 rank 0, 1 mean, 2 min, 3 max.")
    )
    # None: 1, or per size where bench chooses (-A auto, blink, patterns)
    segments: int | None = field(
        default=None, metadata=cli_option("--segments", type=int, help="Pipeline segments of chain/double-binary-tree.")
    )
    slice_bytes: int | str = field(
        default="1M",
        metadata=cli_option(
            "--slice-bytes",
            help="Messages are cut into slices of this size (0: per message, from the per-message cost).",
        ),
    )
    in_place: bool = field(default=True, metadata=cli_option("--in-place/--no-in-place", help="Also time in-place."))
    progress: bool = True
    size_list: list[int] | None = None  # exactly these sizes (sorted, once; as --sizes elsewhere), not -b/-e/-f
    # head-to-head rounds (runtime/rounds.py): short calls get more rounds than iters, up to this long per
    # algorithm and size; 0: exactly iters rounds
    min_time_s: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "collective", get_collective(self.collective).name)
        names = self.algorithms.split(",") if isinstance(self.algorithms, str) else self.algorithms
        object.__setattr__(self, "algorithms", [a.strip() for a in names if a.strip()])
        # auto: per size, the algorithm the model predicts fastest for the run's network (lab/bench.py)
        # hierarchical: the two-level schedule on the run's nodes (lab/bench.py two_level_shape)
        known = (
            [a.name for a in algorithms_for(self.collective)]
            + mode_names("runtime_only")
            + mode_names("chooser")
            + [a for a, colls in TOPOLOGY_ALGORITHMS.items() if self.collective in colls]
            + (mode_names("two_level") if self.collective in PLANS else [])
        )
        for a in self.algorithms:  # a pattern's own schedule: set by BenchSpec(pattern=...) for its collective
            if a not in known and PATTERN_COLLECTIVES.get(a) != self.collective:
                raise UsageError(
                    f"unknown algorithm {a!r} for {self.collective}: {did_you_mean(a, known)}expected "
                    f"one of {', '.join(known)}"
                )
        if not self.algorithms:
            raise UsageError("no algorithm given: pass e.g. --algorithm ring,builtin")
        if self.size_list is not None:
            object.__setattr__(self, "size_list", sorted(set(parse_size_list(self.size_list))))
            if not self.size_list:
                raise UsageError("--sizes is empty: give sizes such as --sizes 64K,1M,4M")
        low_bytes, high_bytes = self.min_size_bytes, self.max_size_bytes
        if low_bytes > high_bytes:
            raise UsageError(f"minBytes {low_bytes} > maxBytes {high_bytes}: -b must not exceed -e")
        for name, value, low in (
            ("iters", self.iters, 1),
            ("warmup", self.warmup, 0),
            ("check", self.check, 0),
            ("segments", 1 if self.segments is None else self.segments, 1),
            ("slice bytes", self.slice_size_bytes, 0),
            ("root", self.root, 0),
        ):
            whole(name, value, low)
        if (
            isinstance(self.min_time_s, bool)
            or not isinstance(self.min_time_s, (int, float))
            or not math.isfinite(self.min_time_s)
            or self.min_time_s < 0
        ):
            raise UsageError(
                f"min time {self.min_time_s!r} s (min_time_s, --min-time): expected seconds >= 0 of "
                "rounds per algorithm and size, e.g. 1 (0: exactly the asked iterations)"
            )
        step_bytes = self.step_size_bytes
        if (self.factor > 1 or step_bytes <= 0) and self.factor < 2:
            raise UsageError(f"step factor {self.factor} with step bytes {step_bytes}: give -f 2 or -i 1M")
        if self.average not in (0, 1, 2, 3):
            raise UsageError(f"average (-a) {self.average}: expected 0 (rank 0), 1 (mean), 2 (min) or 3 (max)")
        if self.dtype not in DTYPE_BYTES:
            raise UsageError(f"unknown dtype {self.dtype!r}: expected one of {', '.join(DTYPE_BYTES)}")
        if self.op not in OPS:
            raise UsageError(f"unknown op {self.op!r}: expected one of {', '.join(OPS)}")
        if self.op == "avg" and self.dtype in ("int32", "int64"):
            raise UsageError(f"op avg needs a floating-point dtype (got {self.dtype}): use --dtype float32")

    @property
    def min_size_bytes(self) -> int:
        """-b in bytes (the smallest of --sizes when given)."""
        return self.size_list[0] if self.size_list is not None else units.parse_size(self.min_bytes)

    @property
    def max_size_bytes(self) -> int:
        """-e in bytes (the largest of --sizes when given)."""
        return self.size_list[-1] if self.size_list is not None else units.parse_size(self.max_bytes)

    @property
    def step_size_bytes(self) -> int:
        return units.parse_size(self.step_bytes)

    @property
    def slice_size_bytes(self) -> int:
        return units.parse_size(self.slice_bytes)

    def sizes(self) -> list[int]:
        if self.size_list is not None:
            return list(self.size_list)
        out, size, last, step = [], self.min_size_bytes, self.max_size_bytes, self.step_size_bytes
        while size <= last:
            out.append(size)
            size = (size * self.factor if size else 1) if self.factor > 1 else size + step
        return out


def sweep_collective(argument: str | None, option: str | None) -> str:
    """bench takes the collective as an argument, as the other commands do, or as --collective (nccl-tests'
    habit); both given must agree. Default allreduce."""
    if argument is not None and option is not None and get_collective(argument) != get_collective(option):
        raise UsageError(f"the collective is given twice, as {argument} and as --collective {option}: give one")
    return argument or option or "allreduce"


class PlacesRanks(Protocol):
    """What the spec reads of a testbed (lab.testbed.Testbed, a layer above the specs): its rank count and
    the topology it follows (None: one switch)."""

    @property
    def ranks(self) -> int: ...

    @property
    def topology(self) -> object: ...


@dataclass(frozen=True, kw_only=True)
class BenchSpec:
    """A sweep on `ranks` local processes, under torchrun, or on a testbed; predictions from `network`
    (when given) or from a link fitted to the run's own rows."""

    sweep: SweepSpec = field(default_factory=SweepSpec)
    ranks: int | None = field(
        default=None, metadata=cli_option("--ranks", "-p", type=int, help="Local processes (ignored under torchrun).")
    )
    timeout_s: float = 300.0
    network: NetworkSpec = field(default_factory=NetworkSpec)
    testbed: PlacesRanks | None = None  # a lab.testbed.Testbed (api.testbed makes one from its description)
    json_file: str | None = field(
        default=None,
        metadata=cli_option(
            "--json-file", "-J", help="Write nccl-tests -J JSON (plus our fields) to FILE, rewritten after every row."
        ),
    )
    csv_file: str | None = field(
        default=None,
        metadata=cli_option("--csv-file", "--csv", help="Write a flat CSV table to FILE, rewritten after every row."),
    )
    force: bool = field(
        default=False,
        metadata=cli_option(
            "--force",
            help="Run even when the rank count exceeds max(64, 8 x cores) or the memory estimate exceeds "
            "MemAvailable (refused otherwise).",
        ),
    )
    # -A blink / blink-hybrid and --pattern: local rank i stands for GPU gpus[i] of `topology` (default
    # dgx1v, and its first GPUs; a pattern's default GPUs are the appendix's), whose packing or pattern
    # gives the schedule the ranks run (blink/runs.py bench_schedules)
    topology: str | None = field(
        default=None,
        metadata=cli_option(
            "--topology",
            "-t",
            help="-A blink, blink-hybrid, --pattern: the machine whose GPUs the local ranks stand for (default dgx1v).",
        ),
    )
    gpus: list[int] | None = field(
        default=None,
        metadata=cli_option(  # '0,1,4' is read into the list once
            "--gpus",
            help="-A blink: the topology's GPUs, one per rank in rank order (default: the first --ranks "
            "GPUs). --pattern: the chain in order, a fan-in's sources, a fan-out's destinations (default: the "
            "appendix's, cut to --ranks).",
        ),
    )
    t_dpa: str | float = field(
        default="0", metadata=cli_option("--t-dpa", help="-A blink-hybrid: the PCIe path's switching time (eq. 8).")
    )
    pattern: str | None = field(
        default=None,
        metadata=cli_option(  # sets the collective and the algorithm
            "--pattern",
            help="A Blink micro-benchmark: chain-forward, chain-reduce-forward, chain-reduce-broadcast, "
            "fan-in-forward, fan-in-reduce-forward, fan-out-forward.",
        ),
    )
    center: int | None = field(
        default=None, metadata=cli_option("--center", type=int, help="--pattern fan-*: the center GPU.")
    )
    successor: int | None = field(
        default=None, metadata=cli_option("--successor", type=int, help="--pattern fan-in-*: the successor GPU.")
    )
    source: int | None = field(
        default=None, metadata=cli_option("--source", type=int, help="--pattern fan-out-forward: the source GPU.")
    )

    def __post_init__(self) -> None:
        output_path(self.json_file, "--json-file")  # before any work: results are never lost to a typo
        output_path(self.csv_file, "--csv-file")
        if isinstance(self.testbed, str):  # a description is made into a Testbed by the API, not by the spec
            raise UsageError(
                f"BenchSpec(testbed={self.testbed!r}) takes a Testbed: give collperf.api.testbed({self.testbed!r})"
            )
        self._placement()
        if self.testbed is not None:
            if self.ranks is not None and self.ranks != self.testbed.ranks:
                raise UsageError(f"--ranks {self.ranks} but the testbed has {self.testbed.ranks} ranks: drop --ranks")
            ranks = self.testbed.ranks
            object.__setattr__(self, "ranks", ranks)
            # before the testbed comes up (a topology testbed builds -A blink from the root then)
            if get_collective(self.sweep.collective).rooted and not 0 <= self.sweep.root < ranks:
                raise UsageError(
                    f"--root {self.sweep.root}: the testbed has {ranks} ranks: give --root between 0 and {ranks - 1}"
                )
        if self.ranks is not None:
            whole("ranks", self.ranks, flag="--ranks")
        if self.sweep.min_time_s > 0:  # bench runs nccl-tests' loop: exactly iters timed iterations
            raise UsageError(
                f"SweepSpec(min_time_s={self.sweep.min_time_s!r}) is for head-to-head rounds "
                "(runtime/measure.py head_to_head); bench times exactly --iters: drop min_time_s"
            )
        if not (isinstance(self.timeout_s, (int, float)) and self.timeout_s > 0):
            raise UsageError(f"timeout {self.timeout_s!r} s is not positive: give e.g. --timeout 300")

    @property
    def t_dpa_s(self) -> float:
        return units.parse_time(self.t_dpa)

    @property
    def placed(self) -> bool:
        """The ranks run schedules built on a topology (-A blink, blink-hybrid, --pattern) here, before any rank
        starts; not on a testbed that follows a topology, whose own hosts and routes place -A blink
        (Testbed.prebuilt_schedules)."""
        if self.testbed is not None and self.testbed.topology is not None and self.pattern is None:
            return False
        return self.pattern is not None or any(map(needs_topology, self.sweep.algorithms))

    def _placement(self) -> None:
        object.__setattr__(self, "gpus", rank_list(self.gpus, "--gpus"))
        for name in ("center", "successor", "source"):
            if getattr(self, name) is not None:
                whole(name, getattr(self, name), 0, f"--{name}")
        if any(a in PATTERNS for a in self.sweep.algorithms) and self.sweep.algorithms != [self.pattern]:
            raise UsageError(
                f"-A {','.join(self.sweep.algorithms)}: a pattern runs with --pattern NAME, "
                "e.g. --pattern chain-forward"
            )
        if self.pattern is not None:
            if self.pattern not in PATTERNS:
                raise UsageError(f"--pattern {self.pattern!r}: expected one of {', '.join(PATTERNS)}")
            algorithms = self.sweep.algorithms  # the default (the backend's own) or the pattern itself
            if algorithms != [self.pattern] and not (len(algorithms) == 1 and is_runtime_only(algorithms[0])):
                raise UsageError(
                    f"--pattern {self.pattern} runs the pattern's own schedule: drop -A "
                    f"{','.join(self.sweep.algorithms)}"
                )
            if self.sweep.root != 0:
                raise UsageError(
                    f"--root {self.sweep.root}: a pattern's root is its own (the chain's end, the "
                    "fan's source or successor); drop --root"
                )
            # the sweep's collective defaults to allreduce: any other given one contradicts the pattern
            if self.sweep.collective not in ("allreduce", PATTERN_COLLECTIVES[self.pattern]):
                raise UsageError(
                    f"--pattern {self.pattern} is checked as a {PATTERN_COLLECTIVES[self.pattern]} "
                    f"(what its destinations must hold): drop --collective {self.sweep.collective}"
                )
            object.__setattr__(
                self,
                "sweep",
                replace(self.sweep, collective=PATTERN_COLLECTIVES[self.pattern], algorithms=[self.pattern]),
            )
            refuse_unused_pattern_options(self)
        elif any(getattr(self, n) is not None for n in ("center", "successor", "source")):
            raise UsageError("--center, --successor and --source place a --pattern's GPUs: add --pattern or drop them")
        if not self.placed and (self.topology is not None or self.gpus is not None):
            raise UsageError(
                "--topology and --gpus place the ranks of -A blink, blink-hybrid or --pattern on a "
                "machine's GPUs: add one of those or drop them"
            )
        if self.t_dpa_s and not any(map(is_hybrid, self.sweep.algorithms)):
            raise UsageError(f"--t-dpa {self.t_dpa} is the hybrid split's switching time: use it with -A blink-hybrid")
        if self.placed:
            object.__setattr__(self, "topology", self.topology or "dgx1v")
            if self.testbed is not None:
                raise UsageError(
                    "-A blink runs on local ranks, torchrun or a topology testbed (--testbed "
                    "topology=dgx1v-like,group=0+1+4); --pattern on local ranks or torchrun: drop --testbed"
                )
        if self.gpus is not None and self.pattern is None:
            if self.ranks is None:
                object.__setattr__(self, "ranks", len(self.gpus))
            elif self.ranks != len(self.gpus):
                raise UsageError(
                    f"--ranks {self.ranks} but --gpus {','.join(map(str, self.gpus))} names "
                    f"{len(self.gpus)} GPUs: give one GPU per rank"
                )
