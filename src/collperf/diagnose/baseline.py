"""A run against a baseline of healthy runs of the same system: per size, degraded or within the noise.

The public band must hold healthy runs of many machines 1.7x apart, so it cannot tell a cluster two rails down
from a healthy one (docs/doctor.md). A baseline of the same system can, as tightly as the runs' own noise
allows. The rule, per size that both hold (docs/doctor.md "The baseline verdict"):

- speed = 1 / time (at one size, busbw and algbw are proportional to it; the time column keeps its precision
  where a printed busbw of 0.00 does not);
- the baseline's reference is the median speed of all its rows at that size (in-place, out-of-place, every run,
  every repeat), the new run's speed the median of its own;
- noise: the largest relative deviation from that median among the baseline's rows, plus the same among the new
  run's rows (the new run's own in-place vs out-of-place spread is noise it brings with it);
- threshold: that noise, and never below FLOOR (SuperBench's 5 %) unless the user sets it;
- degraded at a size when the new run is below the reference by more than the threshold.

Operators' gates use fixed fractions: SuperBench's rules fail a metric 5 % below its baseline (`criteria: lambda x:
x < -0.05` on the relative difference, docs/user-tutorial/data-diagnosis.md); AMD CVS fails at 0.95 x an expected
value per size. A fixed floor is right where the noise is below it and false alarms where it is not (latency-bound
sizes jitter by tens of %); the measured noise widens it only there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from collperf import units
from collperf.errors import UsageError
from collperf.ingest.table import Table

# SuperBench's data-diagnosis rules fail a metric 5 % below its baseline (the variance rule with criteria
# x < -0.05, microsoft/superbenchmark docs/user-tutorial/data-diagnosis.md); AMD CVS's 0.95 x expected is the same.
FLOOR = 0.05


@dataclass(frozen=True)
class SizeCompare:
    """One size: the baseline's reference and noise, the new run's speed, the call."""

    size_bytes: int
    baseline_time_s: float  # the time of the baseline's median speed
    time_s: float  # the new run's, likewise
    baseline_samples: int
    samples: int
    baseline_noise: float  # largest |speed / median - 1| among the baseline's rows
    noise: float  # the same among the new run's rows
    threshold: float  # max(floor, baseline_noise + noise)
    shortfall: float  # 1 - new speed / reference speed (negative: faster)

    @property
    def degraded(self) -> bool:
        return self.shortfall > self.threshold


@dataclass
class BaselineVerdict:
    """One (collective, ranks) of the new run against the baseline's tables of the same."""

    collective: str
    ranks: int | None
    sources: list[str]
    baseline_sources: list[str]
    floor: float
    sizes: list[SizeCompare] = field(default_factory=list)

    @property
    def degraded_sizes(self) -> list[SizeCompare]:
        return [s for s in self.sizes if s.degraded]

    @property
    def label(self) -> str:
        return "degraded" if self.degraded_sizes else "healthy"

    @property
    def degraded_by(self) -> float:
        """The median shortfall over the degraded sizes (0 when healthy)."""
        bad = self.degraded_sizes
        return float(np.median([s.shortfall for s in bad])) if bad else 0.0

    @property
    def worst(self) -> SizeCompare:
        """The size nearest to (or furthest beyond) its threshold."""
        return max(self.sizes, key=lambda s: s.shortfall / s.threshold)

    @property
    def verdict(self) -> str:
        every = [s.size_bytes for s in self.sizes]
        if self.degraded_sizes:
            bad = self.degraded_sizes
            limits = sorted({units.format_percent(s.threshold, "") for s in bad})
            return (
                f"degraded by {units.format_percent(self.degraded_by)} at sizes "
                f"{units.size_ranges([s.size_bytes for s in bad], every)} ({len(bad)} of {len(every)} sizes "
                f"below the baseline by more than the threshold of {'/'.join(limits)}; worst "
                f"{units.format_percent(max(s.shortfall for s in bad))} at "
                f"{units.format_size(max(bad, key=lambda s: s.shortfall).size_bytes)})"
            )
        w = self.worst
        typical = float(np.median([s.threshold for s in self.sizes]))
        where = (
            f"at most {units.format_percent(w.shortfall)} below the baseline, at {units.format_size(w.size_bytes)}"
            f"{'' if w.threshold == typical else f' where the noise allows {units.format_percent(w.threshold)}'}"
            if w.shortfall > 0
            else "nowhere below the baseline"
        )
        return (
            f"healthy (within the run-to-run noise of {units.format_percent(typical)}: {where}; "
            f"{len(every)} sizes compared)"
        )

    def to_json(self) -> dict:
        return {
            "collective": self.collective,
            "ranks": self.ranks,
            "sources": self.sources,
            "baseline_sources": self.baseline_sources,
            "verdict": self.verdict,
            "verdict_label": self.label,
            "degraded_by": self.degraded_by,
            "floor": self.floor,
            "sizes": [{**vars(s), "degraded": s.degraded} for s in self.sizes],
        }


@dataclass
class BaselineReport:
    """Every (collective, ranks) of the new logs judged; the overall label is degraded if any is."""

    verdicts: list[BaselineVerdict]
    not_judged: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return "degraded" if any(v.label == "degraded" for v in self.verdicts) else "healthy"

    @property
    def verdict(self) -> str:
        if len(self.verdicts) == 1:
            return self.verdicts[0].verdict
        bad = [v for v in self.verdicts if v.label == "degraded"]
        return (
            f"degraded: {', '.join(v.collective for v in bad)}"
            if bad
            else f"healthy ({len(self.verdicts)} collectives within the run-to-run noise)"
        )

    def to_json(self) -> dict:
        return {
            "verdict": self.verdict,
            "verdict_label": self.label,
            "comparisons": [v.to_json() for v in self.verdicts],
            "not_judged": self.not_judged,
        }


def _speeds(tables: list[Table]) -> dict[int, list[float]]:
    """size -> 1/time of every row with a positive time (every placement, table and repeat)."""
    out: dict[int, list[float]] = {}
    for t in tables:
        for r in t.rows:
            if r.time_s and r.time_s > 0 and np.isfinite(r.time_s):
                out.setdefault(int(r.size), []).append(1.0 / r.time_s)
    return out


def _spread(values: list[float], centre: float) -> float:
    return float(max(abs(v / centre - 1.0) for v in values))


def compare(new: list[Table], baseline: list[Table], floor: float = FLOOR) -> BaselineVerdict:
    """New tables of one collective and rank count against the baseline's tables of the same."""
    if not 0 <= floor < 1:
        raise UsageError(f"--threshold {floor:.4g}: expected a fraction in [0, 1), e.g. 5%")
    ours, theirs = _speeds(new), _speeds(baseline)
    common = sorted(set(ours) & set(theirs))
    t = new[0]
    if not common:
        have = units.size_ranges(sorted(theirs)) if theirs else "no rows"
        raise UsageError(
            f"{t.source}: no size of its {t.collective} rows is in the baseline ({have}); "
            "run the baseline's sizes (e.g. nccl-tests -b/-e as the baseline was run)"
        )
    verdict = BaselineVerdict(
        t.collective, t.ranks, sorted({x.source for x in new}), sorted({x.source for x in baseline}), floor
    )
    for size in common:
        ref, now = float(np.median(theirs[size])), float(np.median(ours[size]))
        base_noise, noise = _spread(theirs[size], ref), _spread(ours[size], now)
        verdict.sizes.append(
            SizeCompare(
                size,
                1.0 / ref,
                1.0 / now,
                len(theirs[size]),
                len(ours[size]),
                base_noise,
                noise,
                max(floor, base_noise + noise),
                1.0 - now / ref,
            )
        )
    return verdict


def _key(t: Table) -> tuple:
    return (t.collective, t.ranks)


def judge(new: list[Table], baseline: list[Table], floor: float = FLOOR) -> BaselineReport:
    """Each (collective, ranks) of the new tables against the baseline's of the same; one with no baseline is
    listed as not judged (UsageError when none can be judged, naming what the baseline holds)."""
    groups: dict[tuple, list[Table]] = {}
    for t in new:
        groups.setdefault(_key(t), []).append(t)
    report = BaselineReport([])
    held = sorted({f"{c} on {r} ranks" for c, r in map(_key, baseline)})
    for key, tables in groups.items():
        same = [b for b in baseline if _key(b) == key]
        if not same:
            report.not_judged.append(
                f"{tables[0].source}: {key[0]} on {key[1]} ranks has no baseline run "
                f"(the baseline holds {', '.join(held) or 'no table'})"
            )
            continue
        report.verdicts.append(compare(tables, same, floor))
    if not report.verdicts:
        raise UsageError("; ".join(report.not_judged))
    return report
