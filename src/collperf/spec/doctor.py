"""A request for the doctor's campaign plan (DoctorPlanSpec)."""

from __future__ import annotations

from dataclasses import dataclass, field

from collperf import units
from collperf.errors import UsageError
from collperf.spec.checks import cli_option, whole


@dataclass(frozen=True, kw_only=True)
class DoctorPlanSpec:
    """What a health campaign on `nodes` hosts costs: tests, rounds and wall time per strategy."""

    nodes: int | None = field(
        default=None, metadata=cli_option("--nodes", type=int, help=("Hosts to check, e.g. 232 (--plan)."))
    )
    leaves: int | None = field(
        default=None,
        metadata=cli_option(
            "--leaves",
            type=int,
            help=(
                "Leaf switches the hosts sit under, in equal runs (the screening groups); default about sqrt(N) groups."
            ),
        ),
    )
    fault_rate: float | None = field(
        default=None,
        metadata=cli_option(
            "--fault-rate",
            type=float,
            help=("The prior: each host faulty with this probability (default 1/N, one fault expected)."),
        ),
    )
    test_time: str | float = field(
        default="30s",
        metadata=cli_option(
            "--test-time",
            type=str,
            help=(
                "Time of one test round (launch, warm-up, the timed sizes), e.g. 30s: the wall time is rounds x this."
            ),
        ),
    )

    def __post_init__(self) -> None:
        if self.nodes is None:
            raise UsageError("--plan needs --nodes N, the hosts to check, e.g. --nodes 232")
        whole("nodes", self.nodes, flag="--nodes")
        if self.nodes < 2:
            raise UsageError(f"--nodes {self.nodes}: a campaign needs at least 2 hosts")
        if self.leaves is not None:
            whole("leaves", self.leaves, flag="--leaves")
            if not 1 <= self.leaves <= self.nodes:
                raise UsageError(f"--leaves {self.leaves}: expected 1 to --nodes ({self.nodes})")
        if self.fault_rate is not None and not 0 < self.fault_rate < 1:
            raise UsageError(f"--fault-rate {self.fault_rate}: expected a probability between 0 and 1, e.g. 0.01")
        if not self.test_time_s > 0:
            raise UsageError(f"--test-time {self.test_time}: expected a positive time such as 30s")

    @property
    def test_time_s(self) -> float:
        return units.parse_time(self.test_time)
