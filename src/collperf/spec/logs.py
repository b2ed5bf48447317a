"""Requests on logs and measurements: read (LogSpec), diagnose (DiagnoseSpec), one measured number
(MeasurementSpec)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from collperf import units
from collperf.collectives import get_collective
from collperf.errors import UsageError
from collperf.spec.checks import whole
from collperf.spec.network import HardwareSpec, NetworkSpec


# Reading holds a log in memory at about its size (text) and parses it in one pass; beyond this a typo'd
# path to a multi-GB capture is refused at once, with the way out, rather than read for minutes.
MAX_LOG_BYTES = 256 << 20


@dataclass
class LogSpec:
    """Logs to read (nccl-tests text/JSON, collperf JSON/CSV, OSU, IMB), with what the user says of them."""

    paths: list = field(default_factory=list)
    collective: str | None = None
    ranks: int | None = None
    max_bytes: int | str | None = None   # refuse a larger file (default: MAX_LOG_BYTES)

    def __post_init__(self):
        if isinstance(self.paths, str) or hasattr(self.paths, "__fspath__"):
            self.paths = [self.paths]
        if not self.paths:
            raise UsageError("no log given: pass one or more files, e.g. collperf fit results.txt")
        if self.collective is not None:
            self.collective = get_collective(self.collective).name
        if self.ranks is not None:
            whole("ranks", self.ranks, flag="--ranks")
        self.max_bytes = MAX_LOG_BYTES if self.max_bytes is None else units.parse_size(self.max_bytes)
        if self.max_bytes < 1:
            raise UsageError(f"--max-bytes {self.max_bytes}: expected a positive size such as 1GiB")


@dataclass
class DiagnoseSpec:
    """Logs judged against NCCL's expected time on the hardware (from the log, `hardware` overrides it),
    the physical bound (the hardware's, or `peak` per rank), and optionally another log's fitted model.
    `network` (the shared network options) is read as hardware when `hardware` is not given."""

    logs: LogSpec
    peak: str | float | None = None
    network: NetworkSpec = field(default_factory=NetworkSpec)
    model_from: str | None = None
    hardware: HardwareSpec | None = None

    def __post_init__(self):
        if self.hardware is None:
            self.hardware = HardwareSpec.from_network(self.network)
        elif self.network.given:
            raise UsageError("diagnose got both network= and hardware=: give the hardware once (HardwareSpec)")
        self.peak_Bps = units.parse_bandwidth(self.peak) if self.peak is not None else None
        if self.peak_Bps is not None and not self.peak_Bps < float("inf"):
            raise UsageError(f"--peak {self.peak}: expected a finite rate per rank, e.g. 50GB/s")


@dataclass
class MeasurementSpec:
    """One measured number: `collective` of `size` took `time` on `ranks` GPUs (nccl-tests' size:
    the buffer per rank), judged like a row of a log on `hardware`."""

    collective: str
    size: str | int
    time: str | float
    ranks: int | None = None
    hardware: HardwareSpec = field(default_factory=HardwareSpec)
    peak: str | float | None = None

    def __post_init__(self):
        self._refuse_a_log()
        self.collective = get_collective(self.collective).name
        self.size_bytes = units.parse_size(self.size)
        if self.size_bytes <= 0:
            raise UsageError(f"--size {self.size}: expected a size > 0, e.g. 1GB")
        self.time_s = units.parse_time(self.time)
        if not (0 < self.time_s < float("inf")):
            raise UsageError(f"--time {self.time}: expected a time > 0, e.g. 500ms")
        if self.ranks is not None:
            whole("ranks", self.ranks, low=2, flag="--ranks")
        if self.ranks is None and self.hardware.cluster is None:
            raise UsageError("a single measurement needs --ranks N (and --cluster SYSTEM --nodes N, or --gpu MODEL)")
        self.peak_Bps = units.parse_bandwidth(self.peak) if self.peak is not None else None

    def _refuse_a_log(self) -> None:
        """A log named with --size/--time is a mix-up, said as such (not as an unknown collective)."""
        try:
            get_collective(self.collective)
        except UsageError:
            if isinstance(self.collective, str) and Path(self.collective).exists():
                raise UsageError(f"--size and --time judge one measurement and take no log ({self.collective} is a "
                                 "file): drop --size/--time to diagnose the log, or give a collective instead, e.g. "
                                 "collperf diagnose allreduce --size 1GB --time 500ms --cluster dgx-h100 --ranks 16 "
                                 "--nodes 2") from None
