"""Requests that measure this machine or a testbed: calibrate (CalibrateSpec), the measured allreduce bound
(BoundSpec), the model checked against measurements (ValidateSpec) and the testbed commands (TestbedSpec,
TestbedDownSpec). A testbed is given as a
lab.testbed.Testbed or its description ('hosts=4,rate=200mbit'); the API brings it up."""

from __future__ import annotations

from dataclasses import dataclass, field

from collperf import units
from collperf.collectives import get_collective
from collperf.errors import UsageError
from collperf.spec.checks import SizesArg, cli_option, output_path, sizes, whole
from collperf.spec.runs import SweepSpec

# the options these commands share, declared once (bench's --testbed and --timeout are these too)
TESTBED_OPTION = cli_option(
    "--testbed", type=str, help="hosts=4,rate=200mbit[,ranks-per-host=2]: brought up and torn down."
)
TIMEOUT_OPTION = cli_option("--timeout", help="Seconds before the whole run is stopped.")
RANKS_OPTION = cli_option("--ranks", "-p", type=int, help="Local processes to run (or a --testbed).")


def _timeout(timeout_s: object) -> None:
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not timeout_s > 0:
        raise UsageError(f"timeout {timeout_s!r} s is not positive: give e.g. --timeout 300")


@dataclass(frozen=True, kw_only=True)
class CalibrateSpec:
    """`collperf calibrate`: alpha and bandwidth (intra and inter host) and the reduce rate of `ranks` local
    processes or of a testbed, as a profile (written to `output` when given)."""

    ranks: int | None = field(default=None, metadata=RANKS_OPTION)
    testbed: object = field(default=None, metadata=TESTBED_OPTION)  # a Testbed or its description
    timeout_s: float = field(default=300.0, metadata=TIMEOUT_OPTION)
    output: str | None = field(
        default=None, metadata=cli_option("-o", "--output", type=str, help="The profile file to write.")
    )

    def __post_init__(self) -> None:  # the rank count is checked by what runs (one rank cannot be calibrated)
        _timeout(self.timeout_s)
        output_path(self.output, "--output")


@dataclass(frozen=True, kw_only=True)
class BoundSpec:
    """`collperf bound`: the allreduce lower bound measured on `ranks` processes or a testbed, beside each
    algorithm's measured time and (with a calibrated `profile`) the model's bound."""

    collective: str = field(default="allreduce", metadata=cli_option(help="The collective (allreduce)."))
    ranks: int | None = field(default=None, metadata=RANKS_OPTION)
    size: str | int = field(default="4M", metadata=cli_option("--size", "-s", type=str, help="The message size."))
    testbed: object = field(default=None, metadata=TESTBED_OPTION)
    profile: str | None = field(
        default=None,
        metadata=cli_option(
            "--profile", type=str, help="A calibrated profile, for the model's bound beside the measured one."
        ),
    )
    timeout_s: float = field(default=300.0, metadata=TIMEOUT_OPTION)

    def __post_init__(self) -> None:
        if get_collective(self.collective).name != "allreduce":
            raise UsageError(f"the measured lower bound is defined for allreduce (got {self.collective})")
        self.size_bytes
        _timeout(self.timeout_s)

    @property
    def size_bytes(self) -> int:
        return units.parse_size(self.size)


@dataclass(frozen=True, kw_only=True)
class ValidateSpec:
    """`collperf validate`: on each testbed (or `ranks` local processes) calibrate (unless a `profile` is
    given), predict a grid of collectives from the profile alone, measure them and report the errors. The
    sizes are `sizes` (exactly those, e.g. '64K,1M') or else min_bytes to max_bytes by `factor`."""

    testbeds: tuple[object, ...] = field(
        default=(),
        metadata=cli_option(  # Testbeds or their descriptions
            "--testbed",
            type=list[str],
            help="hosts=4,rate=200mbit[,ranks-per-host=2]; repeat for several rank counts and flat/two-level shapes.",
        ),
    )
    ranks: int | None = field(default=None, metadata=RANKS_OPTION)
    profile: str | None = field(
        default=None, metadata=cli_option("--profile", type=str, help="Use this profile instead of calibrating first.")
    )
    sizes: SizesArg | None = field(
        default=None,
        metadata=cli_option("--sizes", type=str, help="Exactly these sizes, e.g. 64K,1M (instead of -b/-e/-f)."),
    )
    iters: int = field(default=5, metadata=cli_option("-n", "--iters", help="Timed iterations per size."))
    timeout_s: float = field(default=600.0, metadata=TIMEOUT_OPTION)
    min_bytes: str | int = field(
        default="64K", metadata=cli_option("-b", "--minbytes", type=str, help="Smallest size of the grid.")
    )
    max_bytes: str | int = field(
        default="4M", metadata=cli_option("-e", "--maxbytes", type=str, help="Largest size of the grid.")
    )
    factor: int = field(default=4, metadata=cli_option("-f", "--stepfactor", help="Multiplicative step from -b to -e."))

    def __post_init__(self) -> None:
        object.__setattr__(self, "testbeds", tuple(self.testbeds or ()))
        if self.ranks is not None:
            whole("ranks", self.ranks, flag="--ranks")
        whole("iters", self.iters, flag="--iters")
        _timeout(self.timeout_s)
        if not self.testbeds and not self.ranks:
            raise UsageError("give --ranks P or one or more --testbed hosts=N,rate=R")
        self.sizes_bytes

    @property
    def sizes_bytes(self) -> list[int]:
        """The grid's sizes (the sweep's reading of -b/-e/-f or --sizes)."""
        return SweepSpec(
            min_bytes=self.min_bytes,
            max_bytes=self.max_bytes,
            factor=self.factor,
            size_list=None if self.sizes is None else sizes(self.sizes),
        ).sizes()


_TESTBED_NAME = "A testbed's name: its namespaces are called after it."


@dataclass(frozen=True, kw_only=True)
class TestbedSpec:
    """`collperf testbed up`: a switch testbed (`hosts` hosts on links of `rate`) or, given `topology`, one
    whose links follow a topology (the hosts `group` ranks run on); `description` is the same testbed as
    --testbed takes it."""

    __test__ = False  # a spec, not a test class, whatever pytest makes of its name

    hosts: int = field(default=4, metadata=cli_option("--hosts", help="Hosts on the switch."))
    ranks_per_host: int = field(default=1, metadata=cli_option("--ranks-per-host", help="Ranks each host runs."))
    rate: str = field(
        default="200mbit", metadata=cli_option("--rate", help="Each host's link, each way (tc spelling).")
    )
    name: str = field(default="tb0", metadata=cli_option("--name", help=_TESTBED_NAME))
    topology: str | None = field(
        default=None,
        metadata=cli_option(
            "--topology",
            "-t",
            type=str,
            help="dgx1v-like or a topology .json: point-to-point links at their own rates, forwarding hosts.",
        ),
    )
    group: str | None = field(
        default=None,
        metadata=cli_option(
            "--group", type=str, help="With --topology: the hosts ranks run on, e.g. 0+1+4 (default all)."
        ),
    )

    def __post_init__(self) -> None:
        # hosts, rate and ranks per host are checked by the testbed the description makes (lab.testbed)
        if self.group is not None and self.topology is None:
            raise UsageError(f"--group {self.group}: only with --topology (the hosts of a topology's testbed)")

    @property
    def description(self) -> str:
        """The testbed as --testbed takes it ('hosts=4,rate=200mbit,...' or 'topology=...,group=...')."""
        if self.topology is not None:
            return f"topology={self.topology},ranks-per-host={self.ranks_per_host},name={self.name}" + (
                f",group={self.group}" if self.group else ""
            )
        return f"hosts={self.hosts},rate={self.rate},ranks-per-host={self.ranks_per_host},name={self.name}"


@dataclass(frozen=True, kw_only=True)
class TestbedDownSpec:
    """`collperf testbed down`: the testbed `name` (None: every one whose run has ended; `everything`: every
    one, those a live run or `testbed up` holds too). `collperf testbed status` takes the name alone."""

    __test__ = False

    name: str | None = field(
        default=None,
        metadata=cli_option(
            "--name",
            type=str,
            help="Only this testbed (default: every testbed whose run has ended; status: every testbed).",
        ),
    )
    everything: bool = field(
        default=False, metadata=cli_option("--all", help="Also testbeds a live run or `testbed up` holds.")
    )
