"""Requests on logs and measurements: read (LogSpec), diagnose (DiagnoseSpec), against a baseline (BaselineSpec),
one measured number (MeasurementSpec)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from pathlib import Path

from collperf import units
from collperf.collectives import get_collective
from collperf.errors import UsageError
from collperf.spec.checks import PathArg, cli_option, output_path, path_list, whole
from collperf.spec.network import HardwareSpec, NetworkSpec


# Reading holds a log in memory at about its size (text) and parses it in one pass; beyond this a typo'd
# path to a multi-GB capture is refused at once, with the way out, rather than read for minutes.
MAX_LOG_BYTES = 256 << 20


@dataclass(frozen=True, kw_only=True)
class LogSpec:
    """Logs to read (nccl-tests text/JSON, collperf JSON/CSV, OSU, IMB), with what the user says of them."""

    paths: Sequence[PathArg] = field(default_factory=list)  # one path (a str or Path) is read as a list of one
    collective: str | None = field(
        default=None,
        metadata=cli_option("--collective", type=str, help="Override the collective the log is taken to be."),
    )
    ranks: int | None = field(
        default=None, metadata=cli_option("--ranks", "-p", type=int, help="Rank count, where the log does not say.")
    )
    max_bytes: int | str | None = field(
        default=None,
        metadata=cli_option(  # default: MAX_LOG_BYTES
            "--max-bytes",
            type=str,
            help="Refuse a log file larger than this (default 256MiB): a log is held in "
            "memory while read; e.g. --max-bytes 2GiB.",
        ),
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "paths", path_list(self.paths))
        if not self.paths:
            raise UsageError("no log given: pass one or more files, e.g. collperf fit results.txt")
        if self.collective is not None:
            object.__setattr__(self, "collective", get_collective(self.collective).name)
        if self.ranks is not None:
            whole("ranks", self.ranks, flag="--ranks")
        if self.max_log_bytes < 1:
            raise UsageError(f"--max-bytes {self.max_bytes}: expected a positive size such as 1GiB")

    @property
    def max_log_bytes(self) -> int:
        """The largest log read (--max-bytes, parsed; default MAX_LOG_BYTES)."""
        return MAX_LOG_BYTES if self.max_bytes is None else units.parse_size(self.max_bytes)


@dataclass(frozen=True, kw_only=True)
class DiagnoseSpec:
    """Logs judged against NCCL's expected time on the hardware (from the log, `hardware` overrides it),
    the physical bound (the hardware's, or `peak` per rank), and optionally another log's fitted model.
    `network` (the shared network options) is read as hardware when `hardware` is not given."""

    logs: LogSpec
    peak: str | float | None = field(
        default=None,
        metadata=cli_option(
            "--peak",
            type=str,
            help=(
                "Per-rank busbw that is the bound, e.g. 50GB/s (with --cluster: the cluster gives the expected time, "
                "this the bound)."
            ),
        ),
    )
    network: NetworkSpec = field(default_factory=NetworkSpec)
    model_from: str | None = field(
        default=None,
        metadata=cli_option(
            "--model-from",
            type=str,
            help=("Expected times from NCCL's model fitted to this log (e.g. an allreduce log of the same machine)."),
        ),
    )
    hardware: HardwareSpec | None = None

    def __post_init__(self) -> None:
        if self.hardware is None:  # the network options read as hardware (the declared type, filled once)
            object.__setattr__(self, "hardware", HardwareSpec.from_network(self.network))
        elif self.network.given:
            raise UsageError("diagnose got both network= and hardware=: give the hardware once (HardwareSpec)")
        if self.peak_Bps is not None and not self.peak_Bps < float("inf"):
            raise UsageError(f"--peak {self.peak}: expected a finite rate per rank, e.g. 50GB/s")

    @property
    def peak_Bps(self) -> float | None:
        return units.parse_bandwidth(self.peak) if self.peak is not None else None


@dataclass(frozen=True, kw_only=True)
class BaselineSpec:
    """New logs judged against a baseline of healthy runs of the same system (diagnose/baseline.py): per size,
    degraded or within the run-to-run noise the logs show."""

    logs: LogSpec
    baseline: Sequence[PathArg] = field(
        default_factory=list,
        metadata=cli_option(
            "--baseline",
            type=list[str],
            help=(
                "Healthy runs of the same system to judge the logs against: a log, several (repeat the option) or a "
                "directory of them; the threshold per size is the noise they show, at least --threshold."
            ),
        ),
    )
    threshold: str | float = field(
        default="5%",
        metadata=cli_option(
            "--threshold",
            type=str,
            help=(
                "The least shortfall against the baseline that is called degraded where the measured noise is "
                "smaller (default 5%, SuperBench's), e.g. 3% or 0.03."
            ),
        ),
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "baseline", path_list(self.baseline))
        if not self.baseline:
            raise UsageError("no baseline given: --baseline GOOD.txt (a log, several, or a directory of them)")
        if not 0 <= self.floor < 1:
            raise UsageError(f"--threshold {self.threshold}: expected a fraction below 1 such as 5% or 0.05")

    @property
    def floor(self) -> float:
        """--threshold as a fraction: '5%' or 0.05."""
        text = str(self.threshold).strip()
        try:
            return float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            raise UsageError(f"--threshold {self.threshold!r}: expected a fraction such as 5% or 0.05") from None


@dataclass(frozen=True, kw_only=True)
class MeasurementSpec:
    """One measured number: `collective` of `size` took `time` on `ranks` GPUs (nccl-tests' size:
    the buffer per rank), judged like a row of a log on `hardware`."""

    collective: str
    size: str | int = field(
        metadata=cli_option(
            "--size", "-s", type=str, help="One measurement: its size (nccl-tests convention), e.g. 1GB."
        )
    )
    time: str | float = field(metadata=cli_option("--time", type=str, help="One measurement: its time, e.g. 500ms."))
    ranks: int | None = None
    hardware: HardwareSpec = field(default_factory=HardwareSpec)
    peak: str | float | None = None

    def __post_init__(self) -> None:
        self._refuse_a_log()
        object.__setattr__(self, "collective", get_collective(self.collective).name)
        if self.size_bytes <= 0:
            raise UsageError(f"--size {self.size}: expected a size > 0, e.g. 1GB")
        if not (0 < self.time_s < float("inf")):
            raise UsageError(f"--time {self.time}: expected a time > 0, e.g. 500ms")
        if self.ranks is not None:
            whole("ranks", self.ranks, low=2, flag="--ranks")
        if self.ranks is None and self.hardware.cluster is None:
            raise UsageError("a single measurement needs --ranks N (and --cluster SYSTEM --nodes N, or --gpu MODEL)")
        self.peak_Bps  # parsed now: a bad value fails here

    @property
    def size_bytes(self) -> int:
        return units.parse_size(self.size)

    @property
    def time_s(self) -> float:
        return units.parse_time(self.time)

    @property
    def peak_Bps(self) -> float | None:
        return units.parse_bandwidth(self.peak) if self.peak is not None else None

    def _refuse_a_log(self) -> None:
        """A log named with --size/--time is a mix-up, said as such (not as an unknown collective)."""
        try:
            get_collective(self.collective)
        except UsageError:
            if isinstance(self.collective, str) and Path(self.collective).exists():
                raise UsageError(
                    f"--size and --time judge one measurement and take no log ({self.collective} is a "
                    "file): drop --size/--time to diagnose the log, or give a collective instead, e.g. "
                    "collperf diagnose allreduce --size 1GB --time 500ms --cluster dgx-h100 --ranks 16 "
                    "--nodes 2"
                ) from None


@dataclass(frozen=True, kw_only=True)
class ReportSpec:
    """`collperf report`: one self-contained HTML page at `output`. Each input is a log path (anything diagnose
    reads, a bench JSON included), a validate JSON path, a Diagnosis, a bench's Results, a Validation, a
    profiler trace (files, a directory or a glob) or a TraceReport. `peak`, `network`, `collective` and `ranks`
    are diagnose's options for the logs; `command` is shown as what made the page (default: the API call)."""

    inputs: Sequence[Any] = field(default_factory=list)  # anything report reads; one input is read as a list of one
    output: str = field(default="report.html", metadata=cli_option("-o", "--output", help="The HTML file to write."))
    command: str | None = None
    peak: str | float | None = field(
        default=None,
        metadata=cli_option("--peak", type=str, help="Per-rank link rate busbw is judged against, e.g. 50GB/s."),
    )
    network: NetworkSpec | None = None
    collective: str | None = field(
        default=None, metadata=cli_option("--collective", type=str, help="Override the collective.")
    )
    ranks: int | None = field(
        default=None, metadata=cli_option("--ranks", "-p", type=int, help="Rank count, where a log does not say.")
    )
    title: str | None = field(default=None, metadata=cli_option("--title", type=str, help="The page's title."))

    def __post_init__(self) -> None:
        items = self.inputs if isinstance(self.inputs, (list, tuple)) else [self.inputs]
        object.__setattr__(self, "inputs", list(items))
        output_path(self.output, "--output")
