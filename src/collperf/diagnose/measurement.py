"""One measured number (`collperf diagnose allreduce --size 1GB --time 9ms --ranks 16 --cluster dgx-h100 --nodes 2`),
judged as a log of that one size would be: its row's verdict (core.judge_row), then the log's overall rule
(band_rule: the margin beyond the band's edges, twice it on a band that is not the run's), worded for
one number. Above the bound, it says what in the number to check first: no findings are printed beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

from collperf import units
from collperf.collectives import busbw_factor
from collperf.diagnose import verdict as V
from collperf.diagnose.band_rule import faster_than_typical, slow_call, unjudged_advice
from collperf.expect.peers import Peers, peers
from collperf.diagnose.core import Context, Measured, SizeVerdict, judge_row
from collperf.expect.expectation import expectation
from collperf.expect.resolve import Assumed, assume
from collperf.errors import UsageError
from collperf.model.nccl import tuning_model_prices


@dataclass
class Judgement:
    """One measurement judged like a log row."""

    collective: str
    ranks: int
    assumed: Assumed
    row: SizeVerdict  # the row's own verdict, as a log's size would get it
    verdict: V.Verdict  # the one-number judgement: the row's verdict under a log's overall rule
    algbw_GBps: float
    expected_from: str
    bound_from: str
    peers: Peers | None = None
    model_label: str = "NCCL's model alone"  # what the row's model_s is
    choice_from: str = ""  # whose choice the row's algorithm/protocol is

    def to_json(self) -> dict:
        return {
            "collective": self.collective,
            "ranks": self.ranks,
            "system": self.assumed.to_json(),
            "expected_from": self.expected_from,
            "bound_from": self.bound_from,
            "algbw_GBps": self.algbw_GBps,
            **self.row.to_json(),
            "verdict": self.verdict.text,
            "verdict_label": self.verdict.label,
            "model_label": self.model_label,
            "choice_from": self.choice_from,
            "peers": self.peers.to_json() if self.peers else None,
        }


def diagnose_measurement(spec) -> Judgement:
    """`spec`: a MeasurementSpec (collective, size, time, ranks, hardware, peak)."""
    name = spec.collective
    assumed = assume(None, spec.hardware, spec.ranks)
    if assumed.system is None and spec.peak_Bps is None:
        raise UsageError(f"nothing to judge against: {assumed.why_none}")
    ranks = spec.ranks or assumed.system.ranks
    if assumed.system is not None and assumed.system.ranks != ranks:
        raise UsageError(f"--ranks {ranks} but the system has {assumed.system.ranks} GPUs: set --nodes to match")
    factor = busbw_factor(name, ranks)
    ex = expectation(name, [spec.size_bytes], assumed, spec.peak_Bps, factor)
    algbw = spec.size_bytes / spec.time_s / 1e9
    nodes = assumed.system.nodes if assumed.system else 1
    row = judge_row(
        row=Measured(spec.size_bytes, spec.time_s, algbw * factor),
        expectation=ex,
        context=Context(name, "nccl", nodes, assumed.system.gpus_per_node if assumed.system else 2, one_number=True),
    )
    judged = as_a_log_would(row, name, nodes)
    if judged.kind.expected:
        row.causes = []  # within the margin: no causes of a slower run (a run the band cannot judge keeps them)
    like = peers(name, assumed.system, spec.size_bytes, algbw * factor)
    return Judgement(
        name,
        ranks,
        assumed,
        row,
        judged,
        algbw,
        ex.expected_from,
        ex.bound_from,
        like,
        ex.model_label,
        _choice_from(name, assumed),
    )


def _choice_from(collective: str, assumed: Assumed) -> str:
    """Whose algorithm/protocol the row names: NCCL's choice for the system assumed, not the public runs'."""
    if assumed.system is None:
        return ""
    if not tuning_model_prices(collective):
        return f"NCCL runs {collective} point-to-point, with no algorithm choice"
    return f"NCCL's choice on {assumed.system.name}"


def as_a_log_would(row: SizeVerdict, collective: str, nodes: int) -> V.Verdict:
    """The row's verdict as the overall verdict of a log of this one size (core.overall's rule, band_rule), in
    one number's words."""
    said = row.verdict
    if said.kind is V.Kind.ABOVE_BOUND:
        return above_bound(row, collective)
    if not (row.expected_low_s and row.expected_high_s):
        return said  # no band: NCCL's time within SLOWER_FACTOR, as for a log's sizes without one
    time = units.format_time(row.time_s)
    if said.kind.slower:
        call = slow_call([row])
        edge = units.format_time(row.expected_high_s)
        if call.label is V.Kind.NOT_JUDGED:
            return V.Verdict(
                V.Kind.NOT_JUDGED,
                f"not judged: slower than the band ({time} vs {edge}, its slow edge), "
                f"but {call.caveat}{call.short_of}; "
                f"{unjudged_advice(call, collective, nodes, row, log=False)}",
            )
        if call.label is V.Kind.SLOW_END:
            return V.Verdict(
                V.Kind.SLOW_END,
                f"as expected, at the slow end of healthy runs: {call.beyond - 1:.0%} "
                f"beyond the slow edge ({time} vs {edge}; {call.threshold})",
            )
        return said.then(call.note)
    if said.kind.faster and not faster_than_typical([row]):
        margin = V.band_margin(row.band_logs)
        return V.Verdict(
            V.Kind.AS_EXPECTED,
            f"as expected, at the fast end of healthy runs: {row.expected_low_s / row.time_s - 1:.0%} "
            f"under the fast edge ({time} vs {units.format_time(row.expected_low_s)}; a band on "
            f"{row.band_logs} runs calls a run faster than typical from {margin - 1:.0%})",
        )
    return said


def above_bound(row: SizeVerdict, collective: str) -> V.Verdict:
    """Faster than the hardware assumed allows: the bound it beat, then the number's own suspects, then the
    hardware's (a log's above-bound finding names the hardware values; one number prints no findings)."""
    time = units.format_time(row.time_s)
    total = units.format_time(row.bound_s + row.bound_latency_s)
    bound = (
        f"{units.format_time(row.bound_s)} for the data ({row.binding}) plus the links' "
        f"{units.format_time(row.bound_latency_s)} latency: {total}"
        if row.bound_latency_s
        else f"{total} ({row.binding})"
    )
    return V.Verdict(
        V.Kind.ABOVE_BOUND,
        f"above the bound: {time} is faster than the assumed hardware allows (its bound: {bound}); "
        f"{V.what_to_check(collective)}; if they are right, the hardware is not what was assumed: give "
        "the right --cluster, --nodes, --nics-per-node, --nic-rate, --nvls or --gpu-link-rate (or --peak)",
    )
