"""Every format `load` reads, as one ordered table of (name, looks_like, parse): the first format whose test holds
reads the text. The tests are cheap and loose (a word in the head, a header line), so several may hold for one text;
the order settles it, and the comment above each entry says what it must come before and why.

A format that is not a table of measurements (a system input: a debug log, a topology, a link test) has `describe`:
its parsed value travels as OtherInput (inputs.py), which diagnose and report read and the table commands refuse."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from collperf.ingest import (
    inspector,
    link_tests,
    mpi_benchmarks,
    nccl_debug,
    nccl_perf_csv,
    nccltests,
    nvsmi_topo,
    others,
    rccl,
    topo_xml,
)
from collperf.ingest.inputs import OtherInput
from collperf.ingest.table import IngestError, Table


@dataclass(frozen=True)
class Text:
    """One log's text as the formats test and read it: `text` with its line ends made '\\n', `stripped` the same
    without its leading blanks (and a BOM), the arguments every reader takes."""

    text: str
    stripped: str
    source: str
    collective: str | None = None  # canonical name, already checked
    ranks: int | None = None
    _once: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def of(cls, text: str, source: str = "<log>", collective: str | None = None, ranks: int | None = None) -> Text:
        if "\r" in text:  # text given directly (the API): the line ends a file's reading would have made
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        stripped = text.lstrip().lstrip("\ufeff").lstrip()  # a BOM the decoding kept (text given directly)
        return cls(text, stripped, source, collective, ranks)

    def once(self, test: Callable[[Text], Any]) -> Any:
        """test(self), computed once however many formats ask (the three link tests share one detection)."""
        if test not in self._once:
            self._once[test] = test(self)
        return self._once[test]

    @property
    def lead(self) -> int:
        """The newlines before the stripped text (json counts lines from its first non-blank one)."""
        return self.text[: len(self.text) - len(self.stripped)].count("\n")


@dataclass(frozen=True)
class Format:
    name: str
    looks_like: Callable[[Text], bool]
    parse: Callable[[Text], Any]  # the tables; for a system input, its value
    describe: Callable[[Any], str] | None = None  # a system input: what the value is, for OtherInput's message

    def read(self, t: Text) -> list[Table]:
        value = self.parse(t)
        if self.describe is not None:
            raise OtherInput(value, self.describe(value), t.source)
        return value


KINETO = '"traceEvents"'  # the key of every Kineto / Chrome trace (trace/stream.py reads them)


def trace_message(source: str) -> str:
    return (
        f"{source}: this is a PyTorch profiler (Kineto) trace, not a benchmark log: use `collperf trace "
        f"{source if source != '<stdin>' else 'FILE'}` (one file per rank, a directory or a glob)"
    )


def _refuse_trace(t: Text):
    raise IngestError(trace_message(t.source))


def _first_record(t: Text) -> dict | None:
    """The first line's object when the text is JSON-lines (an object on its first line and more lines after)."""
    first, newline, rest = t.stripped.partition("\n")
    if not first.startswith("{") or not newline or not rest or rest.isspace():
        return None
    try:
        record = json.loads(first)
    except (json.JSONDecodeError, ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def _json_lines_of(looks_like: Callable[[Any], bool]) -> Callable[[Text], bool]:
    def test(t: Text) -> bool:
        first = t.once(_first_record)
        return first is not None and looks_like(first)

    return test


def _refuse_json_lines(t: Text):
    raise IngestError(
        f"{t.source}, line 1: JSON-lines whose records are neither NCCL Inspector ('coll_perf') nor "
        f"rccl-tests ({', '.join(rccl.KEYS)})"
    )


def _json_document(t: Text) -> list[Table]:
    try:
        doc = json.loads(t.stripped)
    except json.JSONDecodeError as e:
        raise IngestError(f"{t.source}, line {e.lineno + t.lead}: broken JSON ({e.msg})") from None
    except (ValueError, RecursionError) as e:  # a 4301-digit integer, nesting deeper than Python's stack
        raise IngestError(
            f"{t.source}: unreadable JSON ({str(e)[:80]}): expected nccl-tests -J output or collperf bench -J FILE"
        ) from None
    return others.parse_json(doc, t.source, t.collective, others.ResultLines(t.stripped, t.lead))


def _link_tool(t: Text) -> str | None:
    return link_tests.detect(t.text)


def _link_test(tool: str, what: str) -> Format:
    return Format(
        what, lambda t: t.once(_link_tool) == tool, lambda t: link_tests.parse(t.text, t.source), lambda _: what
    )


def _nccl_tests(t: Text) -> list[Table]:
    try:
        return nccltests.parse(t.text, t.source, t.collective)
    except OtherInput:
        raise
    except IngestError:
        if NCCL_DEBUG_LOG.looks_like(t):  # a run that died before its table still says what NCCL chose
            NCCL_DEBUG_LOG.read(t)
        raise


NCCL_DEBUG_LOG = Format(
    "NCCL debug log",
    lambda t: nccl_debug.looks_like(t.text),
    lambda t: nccl_debug.parse(t.text, t.source),
    lambda log: f"an {'RCCL' if log.rccl else 'NCCL'} debug log (NCCL_DEBUG=INFO) with no nccl-tests table",
)

FORMATS: tuple[Format, ...] = (
    # a profiler trace is a JSON document: refused with the command that reads it, before JSON is read
    Format(
        "PyTorch profiler (Kineto) trace",
        lambda t: t.stripped.startswith("{") and KINETO in t.stripped[:65536],
        _refuse_trace,
    ),
    # JSON-lines starts with "{" as a JSON document does, and json.loads would refuse its second line; the records'
    # keys tell the two tools apart (rccl-tests' first line also holds the rccl-tests CSV test below: algBw, busBw
    # and a comma), and JSON-lines of neither is refused here, never read as one document
    Format(
        "NCCL Inspector JSON-lines",
        _json_lines_of(inspector.looks_like_jsonl),
        lambda t: inspector.parse_jsonl(inspector.decode_lines(t.stripped), t.source, t.collective),
    ),
    Format(
        "rccl-tests JSON-lines",
        _json_lines_of(rccl.looks_like_record),
        lambda t: rccl.parse_jsonl(list(inspector.decode_lines(t.stripped)), t.source, t.collective),
    ),
    Format("JSON-lines of another tool", lambda t: t.once(_first_record) is not None, _refuse_json_lines),
    # any other text that starts with "{" is one JSON document: read before the text formats, whose words
    # (nThread, busbw, OSU, #bytes, NCCL INFO) its strings may hold (an env list, a command line)
    Format("nccl-tests or collperf JSON", lambda t: t.stripped.startswith("{"), _json_document),
    # the tables told by their first line (a CSV header) or a metric name in their head: their headers and metrics
    # exclude each other; all come before nccl-tests, whose test holds for collperf's CSV (its busbw_GBps column)
    Format(
        "optimize_config.py CSV",
        lambda t: nccl_perf_csv.looks_like(t.stripped),
        lambda t: nccl_perf_csv.parse(t.stripped, t.source, t.collective),
    ),
    Format(
        "rccl-tests CSV",
        lambda t: rccl.looks_like_csv(t.stripped),
        lambda t: rccl.parse_csv(t.text, t.source, t.collective),
    ),
    Format(
        "NCCL Inspector Prometheus",
        lambda t: inspector.looks_like_prometheus(t.text),
        lambda t: inspector.parse_prometheus(t.text, t.source, t.collective),
    ),
    Format(
        "collperf CSV",
        lambda t: t.stripped.startswith("algorithm,size,count"),
        lambda t: others.parse_collperf_csv(t.text, t.source, t.collective, t.ranks),
    ),
    # the MPI benchmarks, by their title or header, before nccl-tests, whose test (one of a few words anywhere in
    # the text: busbw, in-place, nThread) is the loosest of all; "nThread" keeps a nccl-tests log that mentions
    # OSU a nccl-tests log. IMB's "#bytes #repetitions" header and perftest's "#bytes #iterations" differ
    Format(
        "OSU micro-benchmarks",
        lambda t: "OSU" in t.text[:2000] and "nThread" not in t.text,
        lambda t: mpi_benchmarks.parse_osu(t.text, t.source, t.collective, t.ranks),
    ),
    Format(
        "Intel MPI Benchmarks",
        lambda t: "#bytes" in t.text and "#repetitions" in t.text,
        lambda t: mpi_benchmarks.parse_imb(t.text, t.source, t.collective, t.ranks),
    ),
    # the system inputs: the XML dumps by their first tag (no other input starts with "<"), the link tests by a
    # header only their tool prints; before nccl-tests as the narrower tests
    Format(
        "NCCL topology dump",
        lambda t: t.stripped.startswith("<") and topo_xml.looks_like_topology(t.stripped),
        lambda t: topo_xml.parse_topology(t.stripped, t.source),
        lambda _: "an NCCL topology dump (NCCL_TOPO_DUMP_FILE)",
    ),
    Format(
        "NCCL graph dump",
        lambda t: t.stripped.startswith("<") and topo_xml.looks_like_graphs(t.stripped),
        lambda t: topo_xml.parse_graphs(t.stripped, t.source),
        lambda _: "an NCCL graph dump (NCCL_GRAPH_DUMP_FILE)",
    ),
    _link_test("perftest", "perftest (ib_write_bw/ib_read_bw) output"),
    _link_test("nvbandwidth", "nvbandwidth output"),
    _link_test("p2pBandwidthLatencyTest", "p2pBandwidthLatencyTest output"),
    # nccl-tests text, before nvidia-smi's matrix (job scripts print `nvidia-smi topo -m` above the benchmark: the
    # log is the table's) and before the NCCL debug log (its logs are full of the same NCCL INFO lines; a log whose
    # table cannot be read is then tried as a debug log: the run that died before its table)
    Format("nccl-tests text", lambda t: nccltests.looks_like(t.text), _nccl_tests),
    # nvidia-smi's matrix by its header row and its diagonal of X
    Format(
        "nvidia-smi topo -m",
        lambda t: nvsmi_topo.looks_like(t.text),
        lambda t: nvsmi_topo.parse(t.text, t.source),
        lambda _: "`nvidia-smi topo -m` output",
    ),
    NCCL_DEBUG_LOG,
)

NOT_A_LOG = (
    "not a log collperf can read: expected nccl-tests output (text or -J JSON), collperf bench JSON/CSV, OSU or "
    "Intel MPI Benchmarks output, NCCL Inspector JSONL or Prometheus, rccl-tests JSON/CSV, optimize_config.py's "
    "CSV, an NCCL debug log (NCCL_DEBUG=INFO), NCCL's topology or graph dump, nvidia-smi topo -m, ib_write_bw, "
    "nvbandwidth or p2pBandwidthLatencyTest output"
)


def find(t: Text) -> Format | None:
    """The format that reads the text: the first in FORMATS whose test holds."""
    return next((f for f in FORMATS if f.looks_like(t)), None)


def read(t: Text) -> list[Table]:
    """The text's tables; OtherInput for a system input; IngestError for a text no format reads."""
    found = find(t)
    if found is None:
        raise IngestError(f"{t.source}: {NOT_A_LOG}")
    return found.read(t)
