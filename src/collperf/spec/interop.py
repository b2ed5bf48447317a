"""Requests in other tools' formats: NCCL tuner-plugin rules (TunerSpec), an MSCCL algorithm XML written
(MscclExportSpec) and read back (MscclImportSpec)."""

from __future__ import annotations

from dataclasses import dataclass, field

from collperf.errors import UsageError
from collperf.spec.checks import output_path, path_list
from collperf.spec.network import HardwareSpec, NetworkSpec


@dataclass(frozen=True, kw_only=True)
class TunerSpec:
    """`collperf export nccl-tuner`: rules from one log per forced NCCL_ALGO/NCCL_PROTO (`logs`), or without
    logs from NCCL's model on `hardware`; nodes/ranks default to what the logs say; written to `output`."""

    logs: list = field(default_factory=list)     # one path is read as a list of one
    output: str | None = None
    nodes: int | None = None
    ranks: int | None = None
    channels: int | None = None
    collective: str | None = None
    hardware: HardwareSpec = field(default_factory=HardwareSpec)

    def __post_init__(self):
        object.__setattr__(self, "logs", path_list(self.logs))
        output_path(self.output, "--output")
        for name in ("nodes", "ranks", "channels"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise UsageError(f"--{name} {value!r}: expected a whole number >= 1")


@dataclass(frozen=True, kw_only=True)
class MscclExportSpec:
    """`collperf export msccl`: a verified schedule (fields as ScheduleSpec's) as MSCCL algorithm XML, written
    to `output`. Algorithm blink: Blink's packed trees on the group `ranks` ('0,1,4') of `topology`
    (network's latency/bandwidth: the link of a switch:P, mesh:P or ring:P)."""

    collective: str
    algorithm: str
    ranks: int | str | None = None   # a rank count; -A blink: the group, '0,1,4'
    output: str | None = None
    proto: str = "Simple"
    topology: str | None = None
    network: NetworkSpec = field(default_factory=NetworkSpec)
    root: int | None = None
    segments: int | None = None
    nodes: int | None = None
    ranks_per_node: int | None = None
    intra_algorithm: str | None = None
    inter_algorithm: str | None = None

    def __post_init__(self):
        output_path(self.output, "--output")

    @property
    def schedule_options(self) -> dict:
        """The schedule's options given (None: the schedule's defaults)."""
        names = ("root", "segments", "nodes", "ranks_per_node", "intra_algorithm", "inter_algorithm")
        return {n: getattr(self, n) for n in names if getattr(self, n) is not None}


@dataclass(frozen=True, kw_only=True)
class MscclImportSpec:
    """`collperf import msccl`: an MSCCL XML read as our schedule, verified and costed; with a `topology`,
    simulated at each `size` (default 1M,64M,1G) beside every algorithm of ours on that topology."""

    path: str
    topology: str | None = None
    size: str | int | list | None = None
    mode: str = "rounds"
    network: NetworkSpec = field(default_factory=NetworkSpec)

    def __post_init__(self):
        if self.topology is None and self.size is not None:
            raise UsageError(f"--size {self.size}: the sizes to simulate at need a --topology (dgx1v, switch:8, ...)")
