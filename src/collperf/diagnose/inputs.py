"""The inputs that describe a system rather than a sweep (ingest/inputs.py): what the system is (fed to the same
resolver a log's table goes through, expect/resolve.py), what NCCL chose, the links each measured against its
rate, and a "check first" list, each item with the line of the input that shows it. One typed result, InputReport.

Standalone NCCL debug logs: diagnose/nccl_choices.py; topologies, graphs and link tests: diagnose/links.py; one
input to its report: diagnose/system_inputs.py."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum

from collperf.expect.resolve import Assumed, assume, shown_values
from collperf.expect.hints import Hints
from collperf.errors import UsageError
from collperf.spec import HardwareSpec


class LinkKind(Enum):
    """A link's verdict: code asks the kind; its value is the word the text and the JSON print."""

    AS_EXPECTED = "as expected"
    SLOW = "slow"
    NOT_JUDGED = "not judged"


@dataclass
class LinkVerdict:
    """One link's measurement against its rate and against the other links of the same test."""

    link: str
    test: str
    measured_GBps: float
    rate_GBps: float | None  # what the link carries in the measured direction(s); None: not known
    rate_from: str  # where the rate comes from
    peers_GBps: float | None  # the median of the same test's links
    verdict: LinkKind
    why: str
    line: str

    def to_json(self) -> dict:
        return {
            "link": self.link,
            "test": self.test,
            "measured_GBps": self.measured_GBps,
            "rate_GBps": self.rate_GBps,
            "rate_from": self.rate_from,
            "peers_median_GBps": self.peers_GBps,
            "verdict": self.verdict.value,
            "why": self.why,
            "line": self.line,
        }


@dataclass
class InputReport:
    """What a system input says: `facts` (label, value, the line behind it) about the system, `chose` what NCCL chose,
    `check_first` (what, the line that shows it), `links` per-link verdicts, `assumed` the resolved system (None
    where the input names no GPU and no flag does)."""

    source: str
    kind: str
    facts: list[tuple[str, str, str]] = field(default_factory=list)
    chose: list[tuple[str, str, str]] = field(default_factory=list)
    check_first: list[tuple[str, str]] = field(default_factory=list)
    links: list[LinkVerdict] = field(default_factory=list)
    assumed: Assumed | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        slow = [v for v in self.links if v.verdict is LinkKind.SLOW]
        if slow:
            return (
                f"{len(slow)} of {len(self.links)} link(s) slow: "
                + ", ".join(v.link for v in slow[:6])
                + (" ..." if len(slow) > 6 else "")
            )
        if self.check_first:
            return f"{len(self.check_first)} thing(s) to check first"
        return "nothing to check first" + (" (links as expected)" if self.links else "")

    def to_json(self) -> dict:
        return {
            "source": self.source,
            "input": self.kind,
            "verdict": self.verdict,
            "system": self.assumed.to_json() if self.assumed else None,
            "facts": [{"what": a, "value": b, "line": c} for a, b, c in self.facts],
            "nccl_chose": [{"what": a, "value": b, "line": c} for a, b, c in self.chose],
            "check_first": [{"what": a, "line": b} for a, b in self.check_first],
            "links": [v.to_json() for v in self.links],
            "notes": self.notes,
        }


def resolve(hints: Hints, hw: HardwareSpec | None, report: InputReport, **values) -> None:
    """The system the input describes, through the resolver; `values` (each (value, why)) set what the input states
    over the catalogue's defaults. A system that cannot be assumed leaves a note saying which flag gives it."""
    hw = hw or HardwareSpec()
    try:
        assumed = assume(hints, hw, hints.ranks)
    except UsageError as e:
        report.notes.append(f"no system assumed: {e}")
        return
    if assumed.system is None:
        report.notes.append(f"no system assumed: {assumed.why_none}")
        report.assumed = assumed
        return
    system = assumed.system
    for key, (value, why) in values.items():
        if getattr(system, key) != value and _not_overridden(hw, key):
            system = system.with_(why, **{key: value})
    report.assumed = replace(assumed, system=system, values=shown_values(system))
    for what, line in assumed.suspects:
        if (what, line) not in report.check_first:
            report.check_first.append((what, line))


def _not_overridden(hw: HardwareSpec, key: str) -> bool:
    flag = {"nics_per_node": hw.nics_per_node, "nic_Gbps": hw.nic_rate, "nvlink_links": hw.intra_bandwidth}
    return flag.get(key) is None and hw.cluster is None
