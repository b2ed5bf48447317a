"""Requests that measure this machine or a testbed: calibrate (CalibrateSpec), the measured allreduce bound
(BoundSpec) and the model checked against measurements (ValidateSpec). A testbed is given as a
lab.testbed.Testbed or its description ('hosts=4,rate=200mbit'); the API brings it up."""

from __future__ import annotations

from dataclasses import dataclass

from collperf import units
from collperf.collectives import get_collective
from collperf.errors import UsageError
from collperf.spec.checks import output_path, whole
from collperf.spec.runs import SweepSpec


def _timeout(timeout_s) -> None:
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not timeout_s > 0:
        raise UsageError(f"timeout {timeout_s!r} s is not positive: give e.g. --timeout 300")


@dataclass(frozen=True, kw_only=True)
class CalibrateSpec:
    """`collperf calibrate`: alpha and bandwidth (intra and inter host) and the reduce rate of `ranks` local
    processes or of a testbed, as a profile (written to `output` when given)."""

    ranks: int | None = None
    testbed: object = None        # a Testbed or its description
    timeout_s: float = 300.0
    output: str | None = None

    def __post_init__(self):   # the rank count is checked by what runs (one rank cannot be calibrated)
        _timeout(self.timeout_s)
        output_path(self.output, "--output")


@dataclass(frozen=True, kw_only=True)
class BoundSpec:
    """`collperf bound`: the allreduce lower bound measured on `ranks` processes or a testbed, beside each
    algorithm's measured time and (with a calibrated `profile`) the model's bound."""

    collective: str = "allreduce"
    ranks: int | None = None
    size: str | int = "4M"
    testbed: object = None
    profile: str | None = None
    timeout_s: float = 300.0

    def __post_init__(self):
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

    testbeds: tuple = ()          # Testbeds or their descriptions
    ranks: int | None = None
    profile: str | None = None
    sizes: str | list | None = None
    iters: int = 5
    timeout_s: float = 600.0
    min_bytes: str | int = "64K"
    max_bytes: str | int = "4M"
    factor: int = 4

    def __post_init__(self):
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
        return SweepSpec(min_bytes=self.min_bytes, max_bytes=self.max_bytes, factor=self.factor,
                         size_list=self.sizes).sizes()
