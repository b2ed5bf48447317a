"""When the band of healthy public runs calls a run slower than expected, or faster than typical, as a whole: the
one rule a log's overall verdict and one measured number share (docs/calibration.md "Verdicts from the band").

Each size beyond the band's slow edge is slower per size; the run is called slower only beyond the edge by more
than verdict.band_margin (wider the fewer runs the band rests on), and from a band that is not the run's own
(borrowed from other fabric classes, or holding no run of its collective) only beyond FOREIGN_FACTOR times that.
A log of one size and one measured number get the same call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from collperf import units
from collperf.diagnose import verdict as V


# A band that is not the run's own says less about it: healthy runs judged on one lie up to 1.89x beyond its slow
# edge under leave-one-source-out (an IPoIB socket run on the network group's band; an RTX 4090 pair 1.72x), where
# the margin is about 1.4x. Twice the margin keeps them "not judged" and still calls a run that is many times
# slower than every healthy run slower (a known-bad send/recv run 4.66x beyond a band with no send/recv run).
FOREIGN_FACTOR = 2.0


def beyond_band(largest) -> float:
    """How far beyond the band's slow edge the log is: the median of time / edge over its bandwidth-bound sizes,
    or over its plateau (the sizes within 16x of the largest), whichever is less. A log slow only at the mid
    sizes has a per-call overhead beyond healthy runs' (a container, a proxy: its own finding), not slower
    hardware; one slow only at the plateau may be a single bad size. Either way not the whole log."""
    top = max(v.size_bytes for v in largest)
    ratio = {v.size_bytes: v.time_s / v.expected_high_s for v in largest}
    plateau = [r for size, r in ratio.items() if size >= top / 16]
    return float(min(np.median(list(ratio.values())), np.median(plateau)))


def below_band(big) -> float:
    """How far the bandwidth-bound sizes are below the band's fast edge (median of edge / time)."""
    largest = [v for v in big if v.expected_low_s]
    return float(np.median([v.expected_low_s / v.time_s for v in largest])) if largest else 0.0


def faster_than_typical(big) -> bool:
    """Below the band's fast edge by the margin a band on that many runs needs (the slow side's, mirrored)."""
    return below_band(big) >= V.band_margin(int(np.median([v.band_logs for v in big])))


def caveat(v) -> str:
    """Why size v's band is not this run's own ('' where it is): it calls a run slower only from further."""
    if v.band_borrowed:
        return f"that band is borrowed from other fabric classes ({v.band_from})"
    if not v.band_holds:
        return f"that band was {v.band_from}"
    return ""


@dataclass(frozen=True)
class SlowCall:
    """Sizes beyond the band's slow edge: by how much, and what the band can call them."""

    beyond: float  # time / the slow edge (beyond_band)
    logs: int  # how many public runs the band rests on (the median over the sizes)
    caveat: str = ""  # why the band is not the run's own ('' where it is)
    borrowed: bool = False  # the caveat is a borrowed band (else: no run of this collective among its runs)

    @property
    def margin(self) -> float:
        return V.band_margin(self.logs)

    @property
    def foreign_margin(self) -> float:
        """How far beyond a band that is not the run's own a run must be to be called slower."""
        return FOREIGN_FACTOR * self.margin

    @property
    def label(self) -> V.Kind:
        """SLOW_END (within the margin), NOT_JUDGED (beyond it, on a band that is not the run's, yet within
        the foreign margin) or SLOWER."""
        if self.beyond < self.margin:
            return V.Kind.SLOW_END
        return V.Kind.NOT_JUDGED if self.caveat and self.beyond < self.foreign_margin else V.Kind.SLOWER

    @property
    def short_of(self) -> str:
        """On a 'not judged' call: where it is, against where a band not its own calls a run slower."""
        return (
            f"; at {self.beyond:.2f}x its slow edge, where such a band calls a run slower from "
            f"{self.foreign_margin:.2f}x"
        )

    @property
    def threshold(self) -> str:
        """On a 'slow end' call: from where this band calls a run slower (a band not the run's own: from further)."""
        if self.caveat:
            whose = "borrowed from other fabric classes" if self.borrowed else "of runs of other collectives"
            return f"a band {whose} calls a run slower from {self.foreign_margin:.2f}x its slow edge"
        return f"a band on {self.logs} runs calls a run slower from {self.margin - 1:.0%}"

    @property
    def note(self) -> str:
        """On a 'slower' call from a band that is not the run's own: which band, and from how far it calls."""
        if not self.caveat or self.label is not V.Kind.SLOWER:
            return ""
        whose = "borrowed from other fabric classes" if self.borrowed else "from runs of other collectives"
        return f" (the band is {whose}: such a band calls a run slower from {self.foreign_margin:.2f}x its slow edge)"


def slow_call(largest) -> SlowCall:
    """The call on the bandwidth-bound sizes that have a band; most of them must carry a caveat for it to count."""
    flagged = [v for v in largest if caveat(v)]
    said = flagged[-1] if len(flagged) > len(largest) / 2 else None
    return SlowCall(
        beyond_band(largest),
        int(np.median([v.band_logs for v in largest])),
        caveat(said) if said else "",
        bool(said and said.band_borrowed),
    )


def unjudged_advice(call: SlowCall, collective: str, nodes: int | None, top, log: bool) -> str:
    """What would judge a run its band cannot call slower. `top`: the size whose efficiency is quoted."""
    at = f" at {units.format_size(top.size_bytes)}" if log else ""
    share = units.format_percent(top.efficiency, "") if top.efficiency is not None else ""
    bound = (
        f"judge it by the bound instead ({share} of it{at})"
        if top.efficiency is not None
        else "judge it by the bound instead (--peak, or the system's)"
    )
    if not call.borrowed:
        return f"no public {collective} run of this class is in the corpus: {bound}"
    if nodes == 1:
        fitted = (
            "or diagnose a log of it with --model-from a healthy log of another collective on this machine"
            if not log
            else "or with --model-from a healthy log of another collective on this machine"
        )
        return f"one node uses no network, so --fabric would not change it: {bound}, {fitted}"
    network = "the log's network" if log else "the network"
    return f"give --fabric if {network} is not the one assumed"


# The band holds healthy public runs 1.7x apart, so a run within it can still be well below the runs of its own
# system. Two healthy 2x8 H100 InfiniBand runs of the corpus differ by 4 % at 512 MiB (corpus ids
# h100-ib-2x8-allreduce-gh-nccl-tests-309 and -294); a run more than 10 % below the slowest such peer is
# "well below" them, and the band cannot say so itself.
PEER_GAP = 0.10


def below_peers(verdict: V.Verdict, like) -> str:
    """What a verdict that does not call a run slower adds when the run is well below its peers: how far, and
    that a baseline of this system (diagnose --baseline) can judge what the band cannot ('' otherwise)."""
    if like is None or not like.busbw_GBps or not like.yours_busbw_GBps or verdict.kind is V.Kind.SLOWER:
        return ""
    lowest = min(like.busbw_GBps)
    if like.yours_busbw_GBps >= (1 - PEER_GAP) * lowest:
        return ""
    below = 1 - like.yours_busbw_GBps / lowest
    return (
        f"; yet {units.format_percent(below, '')} below the slowest public run on the same kind of system "
        f"({lowest:.0f} GB/s at {units.format_size(like.size)}): the band holds healthy runs of many machines "
        "and cannot tell this apart, judge it against a healthy run of this system with --baseline"
    )
