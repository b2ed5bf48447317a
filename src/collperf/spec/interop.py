"""Requests in other tools' formats: NCCL tuner-plugin rules (TunerSpec), an MSCCL algorithm XML written
(MscclExportSpec) and read back (MscclImportSpec), health checkers' thresholds (ThresholdSpec)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from collperf.errors import UsageError
from collperf.spec.checks import PathArg, SizesArg, cli_option, output_path, path_list
from collperf.spec.network import HardwareSpec, NetworkSpec


# the checkers whose thresholds `export thresholds` writes (export/thresholds.py says each one's fields)
THRESHOLD_FORMATS = ("superbench", "cvs", "azure", "google", "csv")


@dataclass(frozen=True, kw_only=True)
class ThresholdSpec:
    """`collperf export thresholds`: the model's expected allreduce busbw per size for one node and `nodes` nodes
    of a catalogue system (`cluster`), as `format`, with a pass mark `threshold` below it; `output` a file (a
    directory for superbench: baseline.json, rule.yaml), else printed."""

    cluster: str = field(metadata=cli_option("--cluster", help="A catalogue system (collperf systems)."))
    nodes: int = field(
        default=2, metadata=cli_option("--nodes", help="The multi-node group (one node is always there too).")
    )
    format: str = field(default="csv", metadata=cli_option("--format", help="superbench, cvs, azure, google or csv."))
    size: str | list[str | int] | None = field(
        default=None,
        metadata=cli_option("--size", "-s", type=str, help="Sizes, comma list (default 1M..16G, doubling)."),
    )
    threshold: float = field(
        default=0.05,
        metadata=cli_option(
            "--threshold", help="The shortfall allowed below the expected busbw (0.05: SuperBench's 5 %)."
        ),
    )
    output: str | None = field(
        default=None,
        metadata=cli_option(
            "--output", "-o", type=str, help="A file (a directory for superbench: baseline.json, rule.yaml)."
        ),
    )

    def __post_init__(self) -> None:
        if self.format not in THRESHOLD_FORMATS:
            raise UsageError(f"threshold format {self.format!r}: expected one of {', '.join(THRESHOLD_FORMATS)}")
        if isinstance(self.nodes, bool) or not isinstance(self.nodes, int) or not 1 <= self.nodes <= 100_000:
            raise UsageError(f"--nodes {self.nodes!r}: expected a whole number of nodes from 1, e.g. --nodes 2")
        if isinstance(self.threshold, bool) or not 0 <= self.threshold < 1:
            raise UsageError(f"--threshold {self.threshold!r}: expected a fraction below 1, e.g. 0.05 for 5 %")


@dataclass(frozen=True, kw_only=True)
class TunerSpec:
    """`collperf export nccl-tuner`: rules from one log per forced NCCL_ALGO/NCCL_PROTO (`logs`), or without
    logs from NCCL's model on `hardware`; nodes/ranks default to what the logs say; written to `output`."""

    logs: Sequence[PathArg] = field(default_factory=list)  # one path is read as a list of one
    output: str | None = field(
        default=None, metadata=cli_option("--output", "-o", type=str, help="Write the rules here.")
    )
    nodes: int | None = None
    ranks: int | None = field(
        default=None,
        metadata=cli_option("--ranks", "-p", type=int, help="nRanks of the rules (default: the logs', else -1 = any)."),
    )
    channels: int | None = field(
        default=None, metadata=cli_option("--channels", type=int, help="Channel count, where the logs do not say.")
    )
    collective: str | None = field(
        default=None,
        metadata=cli_option("--collective", type=str, help="Override the collective (model: only this one)."),
    )
    hardware: HardwareSpec = field(default_factory=HardwareSpec)

    def __post_init__(self) -> None:
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

    collective: str = field(metadata=cli_option("--collective", type=str, help="The collective."))
    algorithm: str = field(
        metadata=cli_option(
            "--algorithm",
            "-A",
            type=str,
            help="The algorithm (collperf algorithms), or blink (packed trees on --topology).",
        )
    )
    # a rank count; -A blink: the group, '0,1,4'
    ranks: int | str | None = field(
        default=None,
        metadata=cli_option(
            "--ranks", "-p", type=str, help="Rank count; -A blink: the group of the topology's GPUs, e.g. 0,1,4."
        ),
    )
    output: str | None = field(
        default=None, metadata=cli_option("--output", "-o", type=str, help="Write the XML here.")
    )
    proto: str = field(default="Simple", metadata=cli_option("--proto", help="MSCCL protocol: Simple, LL or LL128."))
    topology: str | None = field(
        default=None,
        metadata=cli_option(
            "--topology", "-t", type=str, help="-A blink: dgx1v, dgx2, switch:P, cluster:NxG or a file."
        ),
    )
    network: NetworkSpec = field(default_factory=NetworkSpec)
    root: int | None = field(
        default=None,
        metadata=cli_option(
            "--root", type=int, help="Root rank of rooted collectives (default 0; blink: the group's first)."
        ),
    )
    segments: int | None = field(
        default=None, metadata=cli_option("--segments", type=int, help="Pipeline segments (default 1; blink 16).")
    )
    nodes: int | None = field(default=None, metadata=cli_option("--nodes", type=int, help="Nodes (hierarchical)."))
    ranks_per_node: int | None = field(
        default=None, metadata=cli_option("--ranks-per-node", type=int, help="Ranks per node.")
    )
    intra_algorithm: str | None = None
    inter_algorithm: str | None = None

    def __post_init__(self) -> None:
        output_path(self.output, "--output")

    @property
    def schedule_options(self) -> dict[str, Any]:
        """The schedule's options given (None: the schedule's defaults)."""
        names = ("root", "segments", "nodes", "ranks_per_node", "intra_algorithm", "inter_algorithm")
        return {n: getattr(self, n) for n in names if getattr(self, n) is not None}


@dataclass(frozen=True, kw_only=True)
class MscclImportSpec:
    """`collperf import msccl`: an MSCCL XML read as our schedule, verified and costed; with a `topology`,
    simulated at each `size` (default 1M,64M,1G) beside every algorithm of ours on that topology."""

    path: str
    topology: str | None = None
    size: SizesArg | None = None
    mode: str = "rounds"
    network: NetworkSpec = field(default_factory=NetworkSpec)

    def __post_init__(self) -> None:
        if self.topology is None and self.size is not None:
            raise UsageError(f"--size {self.size}: the sizes to simulate at need a --topology (dgx1v, switch:8, ...)")
