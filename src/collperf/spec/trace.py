"""A request to judge profiler traces (TraceSpec)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from collperf import units
from collperf.errors import UsageError, did_you_mean
from collperf.model.algorithms import ALGORITHMS
from collperf.spec.checks import PathArg, cli_option, path_list, whole
from collperf.spec.network import HardwareSpec


@dataclass(frozen=True, kw_only=True)
class TraceSpec:
    """Kineto traces (files, directories or globs; one file per rank), the hardware they ran on (what the
    trace says unless `hardware` overrides it) and an optional what-if: another catalogue system
    (`what_if_cluster` with `what_if_nodes` nodes) and/or our algorithms (`algorithm`, -A)."""

    paths: Sequence[PathArg] = field(default_factory=list)  # one path (a str or Path) is read as a list of one
    hardware: HardwareSpec = field(default_factory=HardwareSpec)
    what_if_cluster: str | None = field(
        default=None,
        metadata=cli_option(
            "--what-if-cluster", type=str, help="Price the same collectives on this catalogue system, e.g. dgx-h100."
        ),
    )
    what_if_nodes: int | None = field(
        default=None, metadata=cli_option("--what-if-nodes", type=int, help="Nodes of the what-if system.")
    )
    peak: str | float | None = field(
        default=None,
        metadata=cli_option(
            "--peak",
            type=str,
            help=(
                "Per-rank busbw that is the bound, e.g. 1Gbit/s for a gloo job on 1 Gbit/s links: the transfer after the "
                "last arrival is judged against it where no GPU system is known."
            ),
        ),
    )
    algorithm: list[str] | None = field(
        default=None,
        metadata=cli_option(  # 'ring,tree' read into the list once
            "--algorithm",
            "-A",
            type=str,
            help="Price with our algorithms instead of NCCL's choice, e.g. ring,rhd (the best of them per size).",
        ),
    )
    jobs: int | None = field(
        default=None,
        metadata=cli_option(
            "--jobs",
            "-j",
            type=int,
            help=(
                "Processes reading the rank files side by side (default: the cores, where the files are big enough to "
                "repay a pool; 1: one process)."
            ),
        ),
    )
    engine: str | None = field(
        default=None,
        metadata=cli_option(
            "--engine",
            type=str,
            help=(
                "Where the rank files are read: local (a process pool, the default), dask://HOST:PORT (a Dask "
                "scheduler's workers, which must see the files), local-dask (a Dask cluster here)."
            ),
        ),
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "paths", path_list(self.paths))
        if not self.paths:
            raise UsageError(
                "no trace given: pass one file per rank, a directory or a glob, e.g. collperf trace traces/"
            )
        names = self.algorithm.split(",") if isinstance(self.algorithm, str) else self.algorithm or []
        chosen = [str(a).strip() for a in names if str(a).strip()]
        object.__setattr__(self, "algorithm", chosen)
        known = sorted({a.name for a in ALGORITHMS})
        for name in chosen:
            if name not in known:  # the registry says which collectives each runs; an unknown name runs none
                raise UsageError(
                    f"-A {name}: not an algorithm collperf prices: {did_you_mean(name, known)}expected "
                    f"some of {', '.join(known)}"
                )
        if self.peak is not None:
            try:
                self.peak_Bps
            except UsageError as e:
                raise UsageError(f"--peak {self.peak}: {e}") from None
        peak_Bps = self.peak_Bps
        if peak_Bps is not None and not 0 < peak_Bps < float("inf"):
            raise UsageError(f"--peak {self.peak}: expected a finite rate per rank above zero, e.g. 1Gbit/s or 50GB/s")
        if self.jobs is not None:
            whole("--jobs", self.jobs, flag="processes reading the files, e.g. --jobs 8")
        if self.engine is not None:
            engine_address(self.engine)
        if self.what_if_nodes is not None:
            whole("what-if-nodes", self.what_if_nodes, flag="--what-if-nodes")
        if self.what_if_nodes is not None and self.what_if_cluster is None and not self.algorithm:
            raise UsageError(
                f"--what-if-nodes {self.what_if_nodes} without --what-if-cluster or -A: nothing to "
                "price; add --what-if-cluster SYSTEM (e.g. dgx-h100)"
            )

    @property
    def peak_Bps(self) -> float | None:
        return units.parse_bandwidth(self.peak) if self.peak is not None else None


LOCAL, LOCAL_DASK, DASK = "local", "local-dask", "dask://"


def engine_address(engine: str | None) -> tuple[str, str | None]:
    """--engine as ('local' | 'local-dask' | 'dask', the Dask scheduler's address)."""
    text = (engine or LOCAL).strip()
    if text in (LOCAL, LOCAL_DASK):
        return text, None
    if text.startswith(DASK) and len(text) > len(DASK):
        return "dask", "tcp://" + text[len(DASK) :]
    if text.startswith("tcp://") and len(text) > 6:
        return "dask", text
    raise UsageError(
        f"--engine {text}: expected 'local' (a process pool here), 'local-dask' (a Dask LocalCluster "
        "here) or 'dask://HOST:PORT' (a running Dask scheduler, e.g. dask://head-node:8786)"
    )
