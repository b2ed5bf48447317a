"""Every verb that reads (read, fit, diagnose, report, trace), over every format it reads (logs; Kineto traces, plain
and gzipped; Flight Recorder JSON dumps; NCCL RAS JSON; NCCL profiler plugin traces; NCCL Inspector JSON lines as
a job's records), under seeded mutators:
what tests/test_fuzz_formats.py runs a few of and benchmarks/fuzz_campaign.py runs by the ten thousand.

A format is a few fixture files of one kind; a verb is the API call the command makes, from a file as the command
reads it (so the streamed Inspector reader, the gzip reader and the NCCL INFO lines diagnose reads are fuzzed too).
`attempt` writes one mutated input and calls one verb on it: the outcome is "ok" (a result) or "usage-error"; any
other exception propagates, for the caller to fail on or count. The mutators: the text-level ones of
test_fuzz_logs.mutate (flipped bytes, truncation, odd numbers, odd unicode, whitespace, lines dropped, duplicated or
swapped, a long line), a node of a JSON document or of one JSON-lines record replaced by a value of another type,
a huge number or nesting thousands deep (test_fuzz_traces._mutate_doc), a number token replaced by hundreds to
tens of thousands of digits or an exponent past a float's range, and a 100,000-character line of what the line
patterns repeat."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

from collperf import api
from collperf.errors import UsageError

FIXTURES = Path(__file__).parent / "fixtures"
TRACES = FIXTURES / "traces"

# format -> (fixture files, the collective and rank count a log of it does not state, or None)
LOG_FORMATS = {
    "nccl-tests text": (
        [
            "current_allreduce.txt",
            "tagged_noise.txt",
            "legacy_allreduce.txt",
            "two_tests.txt",
            "nccl_tests_v3_per_iter.txt",
        ],
        None,
    ),
    "nccl-tests -J": (["nccl_tests.json", "nccl_tests_v3.json", "nccl_tests_per_iter.json"], None),
    "inspector jsonl": (["inspector.jsonl"], None),
    "inspector prometheus": (["inspector_prom.txt"], None),
    "osu": (["osu_allreduce.txt"], None),
    "imb": (["imb_allreduce_np16.txt", "imb_allgather.txt"], None),
    "rccl-tests json": (["rccl_tests.jsonl"], None),
    "rccl-tests csv": (["rccl_tests.csv"], None),
    "collperf bench": (["collperf_bench.json", "collperf_bench.csv"], ("allreduce", 4)),
    "optimize_config csv": (["optimize_config.csv", "optimize_config_sparse.csv"], None),
    # the inputs that describe a system rather than a sweep (ingest/inputs.py): diagnose and report read them
    "nccl debug log": (["inputs/nccl_debug_h800_socket.log", "inputs/nccl_debug_ib_4nic.log"], None),
    "nccl topology and graph xml": (["inputs/nccl_topo_ibm_h100x8.xml", "inputs/nccl_graph_4gpu_2nic.xml"], None),
    "nvidia-smi topo": (["inputs/nvsmi_topo_2x5090.txt"], None),
    "link tests": (
        [
            "inputs/ib_write_bw_loopback_hdr.txt",
            "inputs/nvbandwidth_a6000x6_read_ce.txt",
            "inputs/p2p_bandwidth_6gpu_p2p_slow.txt",
        ],
        None,
    ),
}
SYSTEM_FORMATS = ("nccl debug log", "nccl topology and graph xml", "nvidia-smi topo", "link tests")
TRACE_FORMATS = {
    "kineto": False,
    "kineto gz": True,  # format -> gzipped
    "flight recorder json": False,
    "nccl ras json": False,
    "nccl profiler plugin": False,
    "nccl inspector trace": False,
}
TRACE_NAMES = ["nccl", "gloo", "rccl", "nccl_old"]
FORMATS = list(LOG_FORMATS) + list(TRACE_FORMATS)
LOG_VERBS = ("read", "fit", "diagnose", "report")
TRACE_VERBS = ("trace", "report")
PAIRS = [
    (fmt, verb) for fmt in LOG_FORMATS for verb in (("diagnose", "report") if fmt in SYSTEM_FORMATS else LOG_VERBS)
] + [(fmt, verb) for fmt in TRACE_FORMATS for verb in TRACE_VERBS]
# a log given to the trace verb and a trace to the log verbs: refused with a UsageError, never read as the other
# (an Inspector dump is both: diagnose reads its sizes, trace its calls)
CROSSED = [
    ("nccl-tests text", "trace"),
    ("osu", "trace"),
    ("kineto", "diagnose"),
    ("kineto gz", "read"),
    ("nccl profiler plugin", "diagnose"),
]

# what the line patterns repeat (tests/line_patterns.py's units, and the literals of the NCCL INFO lines)
LINE_UNITS = [
    "9",
    " ",
    "1 coll channels, ",
    "Rank 0 ",
    "NCCL INFO ",
    "NET/OFI ",
    'NCCL_A="',
    "[1,0]<stdout>:",
    "via NET/",
    "# nThread 1 ",
    "{",
    "[",
    '"a":',
    "9e9",
]


def originals(fmt: str) -> list[str]:
    """The texts of a format's fixture files (a trace's JSON text, ungzipped)."""
    if fmt == "flight recorder json":  # PyTorch Flight Recorder dumps recorded here (traces/flight/README.md)
        return [
            (TRACES / "flight" / run / "fr_json" / "rank0.json").read_text() for run in ("hang", "compute", "network")
        ]
    if fmt == "nccl ras json":  # built from NCCL's documented RAS schema (traces/make_ras.py)
        return [p.read_text() for p in sorted((TRACES / "ras").glob("*.json"))]
    if fmt == "nccl profiler plugin":  # built from NCCL's print_event.cc layout (traces/make_plugin.py)
        return [p.read_text() for p in sorted((TRACES / "plugin").glob("*/*_0.json"))]
    if fmt == "nccl inspector trace":  # built from the Inspector's v4.2 layout (traces/make_inspector.py)
        return [p.read_text() for p in sorted((TRACES / "inspector").glob("*.log"))[:2]]
    if fmt in TRACE_FORMATS:
        return [gzip.open(TRACES / name / "rank0.json.gz").read().decode() for name in TRACE_NAMES]
    return [(FIXTURES / name).read_text() for name in LOG_FORMATS[fmt][0]]


def _huge_number(text: str, rng: random.Random) -> str:
    """A number token (a run of digits) replaced by hundreds to tens of thousands of digits or an exponent past a
    float's range."""
    starts = [i for i in range(1, len(text)) if text[i].isdigit() and not text[i - 1].isdigit()]
    if not starts:
        return text
    i = rng.choice(starts)
    j = i
    while j < len(text) and text[j].isdigit():
        j += 1
    value = rng.choice(
        ["9" * rng.choice([400, 4301, 20_000]), "1e400", "-1e4000", "1" + "0" * 310, str(2**64), str(-(2**63) - 1)]
    )
    return text[:i] + value + text[j:]


def _json_lines(text: str, rng: random.Random) -> str | None:
    """One record of a JSON-lines text mutated as a document (None when the text is not JSON-lines)."""
    from test_fuzz_traces import _mutate_doc

    lines = text.split("\n")
    records = [i for i, ln in enumerate(lines) if ln.startswith("{")]
    if len(records) < 2:
        return None
    i = rng.choice(records)
    try:
        doc = json.loads(lines[i])
    except (ValueError, RecursionError):  # an earlier mutation broke it, or nested it past the decoder
        return None
    try:
        lines[i] = _mutate_doc(doc, rng)
    except RecursionError:  # a record nested near the encoder's depth
        return None
    return "\n".join(lines)


def _long_line(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    unit = rng.choice(LINE_UNITS)
    lines.insert(rng.randint(0, len(lines)), unit * (100_000 // len(unit)))
    return "\n".join(lines)


def mutate_input(text: str, rng: random.Random) -> str:
    """One seeded mutation of any format's text (the kinds in this module's docstring), two or three one time in
    three (more break a JSON document everywhere, and the reader refuses it before its deeper checks)."""
    from test_fuzz_logs import mutate
    from test_fuzz_traces import _mutate_doc, _mutate_text

    for _ in range(1 if rng.random() < 2 / 3 else rng.randint(2, 3)):
        kind = rng.randrange(6)
        if kind == 0:
            text = mutate(text, rng)
        elif kind == 1:  # a node of a JSON document: another type, huge, deeply nested
            try:
                text = _mutate_doc(json.loads(text), rng)
            except (ValueError, RecursionError):
                text = _json_lines(text, rng) or _mutate_text(text, rng)
        elif kind == 2:
            text = _json_lines(text, rng) or mutate(text, rng)
        elif kind == 3:
            text = _huge_number(text, rng)
        elif kind == 4:
            text = _mutate_text(text, rng) if text else text
        else:
            text = _long_line(text, rng)
    return text


def write_input(fmt: str, seed: int, folder: Path) -> Path:
    """The seed's mutated input of `fmt`, written as the file the command would read (a trace gzipped for
    'kineto gz', its stream corrupted one time in five)."""
    rng = random.Random(seed)
    texts = originals(fmt)
    text = mutate_input(texts[seed % len(texts)], rng)
    if fmt in TRACE_FORMATS:
        gz = TRACE_FORMATS[fmt]
        path = folder / ("rank0.json.gz" if gz else "rank0.json")
        data = text.encode("utf-8", errors="surrogatepass")
        if gz:
            data = bytearray(gzip.compress(data))
            if rng.random() < 0.2:
                data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
        return path
    path = folder / Path(LOG_FORMATS[fmt][0][seed % len(LOG_FORMATS[fmt][0])]).name
    path.write_bytes(text.encode("utf-8", errors="surrogatepass"))
    return path


def call(verb: str, fmt: str, path: Path, folder: Path):
    """The verb's API call on `path`, with the collective and rank count where the format does not state them."""
    given = LOG_FORMATS.get(fmt, (None, None))[1]
    collective, ranks = given or (None, None)
    if verb == "read":
        tables = api.read_logs(str(path), collective, ranks)
        assert all(t.rows for t in tables)
        return tables
    if verb == "fit":
        return api.fit_logs(str(path), collective, ranks)
    if verb == "diagnose":
        judged = api.diagnose_logs(str(path), collective=collective, ranks=ranks)
        json.dumps(judged.to_json(), default=str)
        assert len(judged) + len(judged.not_judged) + len(judged.inputs)
        return judged.inputs or judged  # a system input's reports, else the tables' diagnoses
    if verb == "trace":
        report = api.trace(str(path))
        json.dumps(report.to_json(), default=str)
        return report
    if verb == "report":
        out = api.report([str(path)], str(folder / "report.html"), collective=collective, ranks=ranks)
        assert Path(out).stat().st_size > 0
        return out
    raise ValueError(f"no verb {verb!r}")


def attempt(fmt: str, verb: str, seed: int, folder: Path) -> str:
    """'ok' or 'usage-error' for the seed's mutated input of `fmt` through `verb`; any other exception propagates."""
    path = write_input(fmt, seed, folder)
    try:
        call(verb, fmt, path, folder)
    except UsageError as e:
        assert str(e)
        return "usage-error"
    return "ok"
