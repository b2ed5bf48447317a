"""The whole log's verdict from its rows (the band's rule over the bandwidth-bound sizes, a curve's anomalies, a
collapse of busbw across sizes) and the sizes outside the band, named: diagnose/core.py's last step."""

from __future__ import annotations


from collperf import units
from collperf.diagnose import findings as F, verdict as V
from collperf.diagnose.band_rule import faster_than_typical, slow_call, unjudged_advice


def overall(verdicts: list, found, collective: str = "", nodes: int | None = None) -> V.Verdict:
    """The table's verdict, 'label: detail': an error finding first, then above-bound, then the verdict of
    the bandwidth-bound rows (where a collective shows what the hardware gives), by the band's rule (band_rule)."""
    settled = V.settled_overall(
        verdicts, found, "some sizes beat the assumed hardware's bound, so the system assumed is wrong"
    )
    if settled is not None:
        return settled
    judged = [v for v in verdicts if v.verdict.kind.judged]
    big = [v for v in judged if v.regime != "latency"] or judged
    slow = [v for v in big if v.verdict.kind.slower]
    fast = [v for v in big if v.verdict.kind.faster]
    top = big[-1]
    implausible = [v for v in big if v.verdict.kind is V.Kind.IMPLAUSIBLE]
    if implausible:
        return V.Verdict(
            V.Kind.IMPLAUSIBLE,
            f"faster than any public run: {len(implausible)} of {len(big)} bandwidth-bound sizes "
            f"({units.size_ranges([v.size_bytes for v in implausible])}) beat every healthy public run "
            "by more than their spread; " + V.IMPLAUSIBLE.split(": ", 1)[1],
        )
    eff = f", {units.format_percent(top.efficiency, '')} of the bound" if top.efficiency is not None else ""
    banded = any(v.expected_high_s for v in big)
    against = "the band of healthy public runs" if banded else f"{V.SLOWER_FACTOR:g}x of NCCL's expected time"
    if len(slow) > len(big) / 2:
        worst = max(slow, key=lambda v: v.time_s / (v.expected_high_s or v.expected_s))
        edge = worst.expected_high_s or worst.expected_s
        if banded:
            # where the hardware shows (the bandwidth-bound sizes), against a band of the run's own fabric class
            call = slow_call([v for v in big if v.expected_high_s])
            beyond, margin = call.beyond, call.margin
            if call.label is V.Kind.NOT_JUDGED:
                return V.Verdict(
                    V.Kind.NOT_JUDGED,
                    f"not judged: {len(slow)} of {len(big)} bandwidth-bound sizes are slower than the "
                    f"band, but {call.caveat}{call.short_of}; "
                    f"{unjudged_advice(call, collective, nodes, top, log=True)}",
                )
            if call.label is V.Kind.SLOW_END:
                at, by = units.format_size(worst.size_bytes), f"{worst.time_s / edge:.2f}x the band's slow edge"
                worse = (
                    ""
                    if worst.time_s / edge < margin
                    else (
                        f"; the mid sizes are slower: up to {by} at {at} (see the findings)"
                        if worst.size_bytes < top.size_bytes / 16
                        else f"; {at} is slower: {by} (see the findings)"
                    )
                )
                # beyond <= 1: the plateau (the largest sizes) is inside the band; the slow sizes are below it
                by = (
                    f"but by {beyond - 1:.0%} (median; {call.threshold.replace('a run', 'a log')})"
                    if beyond > 1
                    else "but the largest sizes are within it"
                )
                return V.Verdict(
                    V.Kind.SLOW_END,
                    f"as expected, at the slow end of healthy runs: {len(slow)} of {len(big)} "
                    f"bandwidth-bound sizes above {against}, {by}{eff} at "
                    f"{units.format_size(top.size_bytes)}{worse}",
                )
        note = call.note if banded else ""
        return V.Verdict(
            V.Kind.SLOWER,
            f"slower than expected: {len(slow)} of {len(big)} bandwidth-bound sizes above {against}, up "
            f"to {worst.time_s / edge:.2f}x {'its slow edge' if banded else 'the expected time'} at "
            f"{units.format_size(worst.size_bytes)}{eff}{note}",
        )
    if banded and len(fast) > len(big) / 2 and faster_than_typical(big):
        return V.Verdict(
            V.Kind.FASTER_THAN_TYPICAL,
            f"faster than typical: {len(fast)} of {len(big)} bandwidth-bound sizes faster than 90 % of "
            f"healthy public runs{eff} at {units.format_size(top.size_bytes)}",
        )
    return V.Verdict(
        V.Kind.AS_EXPECTED,
        f"as expected: {len(big) - len(slow)} of {len(big)} bandwidth-bound sizes within {against}"
        f"{' or faster' if banded and fast else ''}{eff} at {units.format_size(top.size_bytes)}",
    )


def curve_anomalies(verdict: V.Verdict, found, verdicts=()) -> V.Verdict:
    """A good verdict still points at a dip or a tail drop in the curve: the sizes as a whole are fine, yet those
    sizes are not (a known-bad run whose busbw halves at 64 MiB and recovers reads 'as expected' otherwise). Any
    verdict, judged or not, points at a tail drop (busbw collapsing towards the largest sizes), with its factor:
    that is what the reader must see first, not a warning under the findings. Only where the verdict looks, at the
    bandwidth-bound sizes: a latency-bound size that takes longer than the next at a protocol switch is no dip in
    bandwidth (its finding still says it)."""
    if verdict.kind is V.Kind.ERROR:
        return verdict
    good = verdict.kind.expected or verdict.kind.faster
    latency = {v.size_bytes for v in verdicts if v.regime == "latency"}
    seen = []
    for f in found:
        sizes = [s for s in f.sizes_bytes if s not in latency]
        if f.kind == "dip" and sizes and good:
            seen.append(f"busbw dips at {units.size_ranges(sizes)}")
        elif f.kind == "tail-drop" and sizes:
            seen.append(_collapse(sizes, verdicts))
    joint = "; and " if "(see the findings)" in verdict.text else "; but "  # one "but" per verdict is enough
    return verdict.then(f"{joint}{' and '.join(seen)} (see the findings)" if seen else "")


def _collapse(sizes: list[int], verdicts) -> str:
    """'busbw falls 20x from 88.9 GB/s at 16 MiB to 4.4 GB/s at 2 GiB': the tail drop with its size, from the best
    busbw before it to the last size's."""
    first = min(sizes)
    before = [v for v in verdicts if v.size_bytes < first and v.busbw_GBps]
    last = max((v for v in verdicts if v.busbw_GBps), key=lambda v: v.size_bytes, default=None)
    if not before or last is None or not last.busbw_GBps:
        return f"busbw drops at the largest sizes at {units.size_ranges(sizes)}"
    best = max(before, key=lambda v: v.busbw_GBps)
    return (
        f"busbw falls {best.busbw_GBps / last.busbw_GBps:.3g}x from {best.busbw_GBps:.3g} GB/s at "
        f"{units.format_size(best.size_bytes)} to {last.busbw_GBps:.3g} GB/s at "
        f"{units.format_size(last.size_bytes)}"
    )


def outside_band(verdicts: list) -> list[F.Finding]:
    """The size-by-size view: which sizes fall outside the band of healthy public runs, and which way."""
    slow = [v.size_bytes for v in verdicts if v.expected_high_s and v.verdict.kind.slower]
    fast = [v.size_bytes for v in verdicts if v.expected_low_s and v.verdict.kind.faster]
    if not slow and not fast:
        return []
    every = [v.size_bytes for v in verdicts]
    parts = ([f"slower than the band at {units.size_ranges(slow, every)}"] if slow else []) + (
        [f"faster than typical at {units.size_ranges(fast, every)}"] if fast else []
    )
    return [
        F.Finding(
            "outside-band",
            "info",
            f"sizes outside the band of healthy public runs (10th-90th percentile): {'; '.join(parts)}",
            slow + fast,
        )
    ]
