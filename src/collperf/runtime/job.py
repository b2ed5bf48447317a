"""What the ranks of a bench sweep are sent: the sweep with its sizes in bytes, the run's two-level shape, -A auto's
choices (where the launcher made them) and the schedules built before the ranks start, as one frozen value.

`BenchJob.of(sweep)` makes it from a SweepSpec; lab/bench.py fills in what the run decides with
dataclasses.replace. `to_json()` is what Results.config echoes: nccl-tests' -J config (sizes in bytes) plus ours,
in the order the fields are declared.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from collperf.spec import SweepSpec


@dataclass(frozen=True, kw_only=True)
class BenchJob:
    # the sweep, as SweepSpec declares it, with sizes in bytes
    collective: str
    algorithms: tuple[str, ...]
    min_bytes: int
    max_bytes: int
    factor: int
    step_bytes: int
    iters: int
    warmup: int
    dtype: str
    op: str
    root: int
    check: int
    average: int
    segments: int  # 1 where --segments was not given
    slice_bytes: int
    in_place: bool
    progress: bool
    size_list: tuple[int, ...] | None
    min_time_s: float
    segments_given: bool  # --segments N fixes the segments -A auto would choose
    sizes: tuple[int, ...]  # what the ranks measure (lab/bench.py: the distinct buffers)
    step: str  # '2(factor)' or '1048576(bytes)', as nccl-tests -J reports it
    # what the run decides (lab/bench.py)
    two_level: tuple[int, int] | None = None  # (nodes, ranks per node): -A hierarchical and auto
    auto_ranks_per_host: int | None = None  # set when the sweep has -A auto: its calibration's host size
    auto_network: str | None = None  # what the launcher's choices were made on (None: the ranks choose)
    auto: tuple[dict, ...] | None = None  # AutoChoice JSON per size, or None: the ranks choose
    # prebuilt schedules keyed (algorithm, size) for what the registry cannot build from p alone (Blink's
    # packed trees and patterns); not in the JSON
    schedules: dict | None = field(default=None, repr=False)

    @classmethod
    def of(cls, sweep: SweepSpec) -> BenchJob:
        return cls(
            collective=sweep.collective,
            algorithms=tuple(sweep.algorithms),
            min_bytes=sweep.min_size_bytes,
            max_bytes=sweep.max_size_bytes,
            factor=sweep.factor,
            step_bytes=sweep.step_size_bytes,
            iters=sweep.iters,
            warmup=sweep.warmup,
            dtype=sweep.dtype,
            op=sweep.op,
            root=sweep.root,
            check=sweep.check,
            average=sweep.average,
            segments=sweep.segments or 1,
            slice_bytes=sweep.slice_size_bytes,
            in_place=sweep.in_place,
            progress=sweep.progress,
            size_list=None if sweep.size_list is None else tuple(sweep.size_list),
            min_time_s=sweep.min_time_s,
            segments_given=sweep.segments is not None,
            sizes=tuple(sweep.sizes()),
            step=f"{sweep.factor}(factor)" if sweep.factor > 1 else f"{sweep.step_size_bytes}(bytes)",
        )

    @property
    def has_auto(self) -> bool:
        return self.auto_ranks_per_host is not None

    def to_json(self) -> dict:
        """The config Results echo: every field but the schedules, the auto fields only where -A auto runs;
        tuples as lists."""
        skip = {"schedules"} | (set() if self.has_auto else {"auto_ranks_per_host", "auto_network", "auto"})
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self) if f.name not in skip}


def _plain(value):
    return [_plain(v) for v in value] if isinstance(value, tuple) else value
