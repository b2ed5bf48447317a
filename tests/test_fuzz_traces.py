"""The trace reader and the diagnose path under attack: every fuzzer-made reproducer (fixtures/malformed_traces,
its README says where they come from) gives exit 2 with a clear message or a result, in a subprocess-free
in-process call; and seeded mutations of the Kineto fixtures (deep nesting, huge numbers, wrong types,
truncation, long strings, a corrupt gzip stream) and of the logs diagnose reads give a result or a
UsageError, never another exception."""

from __future__ import annotations

import gzip
import json
import random
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collperf import api, cli
from collperf.errors import UsageError
from collperf.trace import read_rank

FIXTURES = Path(__file__).parent / "fixtures"
REPRODUCERS = FIXTURES / "malformed_traces"
TRACES = FIXTURES / "traces"

# a piece of the message each reproducer must give, or None where it is in fact readable
EXPECTED = {
    "01_crash_diagnose_json.json": None,  # a 5,000-digit NCCL_MAX_NCHANNELS is not "few"
    "02_crash_trace_trace.json.gz": None,  # a GPU name that is a number
    "03_crash_trace_trace.json": "event 744: args True is not an object",
    "04_crash_trace_trace.json.gz": "$.deviceProperties is not an array of objects",
    "05_crash_trace_trace.json.gz": "a collective kernel of zero duration",
    "06_crash_trace_trace.json": "event 3004: dur (us)",
    "07_crash_trace_trace.json.gz": "$.distributedInfo.world_size 9223372036854775808 is out of range",
    "08_crash_trace_trace.json": "$.distributedInfo.nccl_version True is not a string",
    "09_crash_trace_trace.json.gz": "$.distributedInfo.world_size -inf is not a whole number",
    "10_crash_trace_trace.json": "args.'Process Group Ranks'",
    "11_crash_trace_trace.json.gz": "event 0: nested deeper than the reader decodes",
    "12_crash_trace_trace.json.gz": "event 14: args inf is not an object",
    "13_crash_trace_trace.json": "$.distributedInfo.pg_config is not an array",
    "14_crash_trace_trace.json.gz": "args.'Group size' 18446744073709551616 is out of range",
    "15_crash_trace_trace.json": "$.distributedInfo.pg_config[0].ranks[0] [0] is not a whole number",
    "16_crash_trace_trace.json.gz": "$.distributedInfo.pg_config[1].ranks[1] 'x' is not a whole number",
    "17_crash_trace_trace.json.gz": "event 6: a collective kernel of zero duration",
    "18_crash_trace_trace.json.gz": "the gzip stream cannot be read",
    "19_hang_diagnose_mpi.txt": None,  # a 100,000-digit line among OSU rows
    "20_hang_diagnose_text_s11.log": None,
    "21_hang_diagnose_text_s12.log": None,
    "22_hang_diagnose_text_s13.log": None,
    "23_hang_diagnose_text_s14.log": None,
    "24_hang_diagnose_text_s15.log": None,
    "25_hang_diagnose_text_s16.log": None,
    "26_hang_trace_trace.json.gz": None,  # thousands of distinct sizes: the table is capped
}


def _index() -> dict:
    return {item["file"]: item for item in json.loads((REPRODUCERS / "index.json").read_text())}


def test_every_reproducer_is_covered():
    assert sorted(_index()) == sorted(EXPECTED)
    assert sorted(p.name for p in REPRODUCERS.iterdir() if p.name not in ("index.json", "README.md")) == sorted(
        EXPECTED
    )


def _call(name: str):
    path = REPRODUCERS / name
    return api.trace(str(path)) if _index()[name]["call"] == "trace" else api.diagnose_logs(path)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_reproducer_gives_a_result_or_a_clear_error(name):
    message = EXPECTED[name]
    if message is None:
        assert _call(name)
        return
    try:
        result = _call(name)
    except UsageError as e:
        assert message in str(e) and name in str(e), str(e)
        return
    # readable where the rest is sound: the bad events are skipped and counted in a note
    notes = result.notes
    assert any(message in n and "skipped" in n for n in notes), notes


@pytest.mark.parametrize(
    "name",
    [
        "04_crash_trace_trace.json.gz",
        "11_crash_trace_trace.json.gz",
        "18_crash_trace_trace.json.gz",
        "26_hang_trace_trace.json.gz",
        "01_crash_diagnose_json.json",
        "22_hang_diagnose_text_s13.log",
    ],
)
def test_cli_exit_code_and_no_traceback(name, capsys, monkeypatch):
    command = _index()[name]["call"]
    monkeypatch.setattr(sys, "argv", ["collperf", command, str(REPRODUCERS / name)])
    with pytest.raises(SystemExit) as info:
        cli.main()
    captured = capsys.readouterr()
    assert info.value.code == (0 if EXPECTED[name] is None else 2), captured.err
    assert "Traceback" not in captured.err
    if EXPECTED[name] is not None:
        assert captured.err.startswith("error:") and name in captured.err


def test_zero_duration_verdict_is_not_judged():
    from collperf.diagnose.verdict import verdict

    said, efficiency = verdict(0.0, 1e-5, 1e-6, False)
    assert said.label == "not judged" and efficiency is None


def test_huge_size_is_refused_by_the_expectation():
    from collperf.diagnose import Assumed
    from collperf.expect.expectation import expectation

    with pytest.raises(UsageError, match="cannot be judged"):
        expectation("allreduce", [10**400], Assumed(None, [], [], "none"))


def test_a_channel_count_of_thousands_of_digits_is_read_safely():
    from collperf.expect.loglines import LogFacts
    from collperf.expect.suspects import _costly

    assert _costly("MAX_NCHANNELS", "9" * 5000, None, LogFacts()) is None
    assert _costly("MAX_NCHANNELS", "\u00b2", None, LogFacts()) is None
    assert "capped at 2" in _costly("MAX_NCHANNELS", "2", None, LogFacts())


# --- hand-made malformed traces ---------------------------------------------------------------------------------


def _doc(name: str = "nccl") -> dict:
    return json.loads(gzip.open(TRACES / name / "rank0.json.gz").read())


def _write(tmp_path: Path, doc_or_text, gz: bool = False) -> Path:
    text = doc_or_text if isinstance(doc_or_text, str) else json.dumps(doc_or_text)
    path = tmp_path / ("t.json.gz" if gz else "t.json")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    return path


def _first_kernel(doc: dict) -> dict:
    return next(e for e in doc["traceEvents"] if str(e.get("name", "")).startswith("nccl"))


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("ts", float("inf"), "ts (us) inf is not a finite number"),
        ("ts", 10**400, "ts (us)"),
        ("dur", -5, "dur (us) -5 is out of range"),
        ("dur", "12", "dur (us) '12' is not a number"),
        ("args", [1], "args [1] is not an object"),
        ("name", {"a": 1}, "name {'a': 1} is not a string"),
    ],
)
def test_a_bad_event_is_skipped_and_counted(tmp_path, field, value, message):
    doc = _doc()
    before = len(read_rank(_write(tmp_path, doc)).calls)
    _first_kernel(doc)[field] = value
    trace = read_rank(_write(tmp_path, doc))
    assert len(trace.calls) == before - 1
    assert any("1 event(s) skipped" in n and message in n for n in trace.notes), trace.notes


def test_an_event_nested_past_the_decoder_is_skipped(tmp_path):
    doc = _doc()
    deep = "[" * 5000 + "]" * 5000
    text = json.dumps(doc).replace('"traceEvents": [', '"traceEvents": [' + deep + ", ", 1)
    trace = read_rank(_write(tmp_path, text, gz=True))
    assert any("event 0: nested deeper" in n for n in trace.notes)
    assert trace.calls


def test_a_deep_top_level_value_is_refused_by_its_path(tmp_path):
    text = '{"deviceProperties": ' + "[" * 5000 + "]" * 5000 + ', "traceEvents": []}'
    with pytest.raises(UsageError, match=r"\$\.deviceProperties: nested deeper"):
        read_rank(_write(tmp_path, text))


def test_a_number_of_thousands_of_digits_is_skipped(tmp_path):
    doc = _doc()
    text = json.dumps(doc).replace('"traceEvents": [', '"traceEvents": [' + "9" * 5000 + ", ", 1)
    trace = read_rank(_write(tmp_path, text))
    assert any("event 0: a number of thousands of digits" in n for n in trace.notes)


def test_a_top_level_key_of_thousands_of_digits_is_refused(tmp_path):
    """Found by benchmarks/fuzz_campaign.py: the reader's signal for a value it steps over escaped as an exception."""
    text = "{" + "9" * 5000 + ': 1, "traceEvents": []}'
    with pytest.raises(UsageError, match="a key of the top-level object is a number of thousands of digits"):
        read_rank(_write(tmp_path, text))


def test_report_of_a_corrupt_gzip_trace_names_the_stream(tmp_path):
    """Found by benchmarks/fuzz_campaign.py: report's sniffing of a trace let zlib's error through."""
    data = bytearray(gzip.compress(json.dumps(_doc()).encode()))
    data[len(data) // 2] ^= 0xFF
    path = tmp_path / "rank0.json.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(UsageError, match="gzip stream cannot be read"):
        api.report([str(path)], str(tmp_path / "r.html"))


def test_a_cut_gzip_stream_is_named(tmp_path):
    data = (TRACES / "nccl" / "rank0.json.gz").read_bytes()
    path = tmp_path / "cut.json.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(UsageError, match="cut.json.gz"):
        read_rank(path)


# --- the seeded fuzz --------------------------------------------------------------------------------------------

_ODD = [
    None,
    True,
    -1,
    0,
    1.5,
    float("inf"),
    float("nan"),
    10**30,
    2**64,
    "",
    "x",
    "[0, x]",
    [],
    {},
    [[1]],
    {"a": [1]},
    "9" * 50,
]


def _mutate_doc(doc, rng: random.Random) -> str:
    """One JSON-level mutation: a node replaced by a value of another type, a huge number, deep nesting."""
    path, node = [], doc
    while isinstance(node, (dict, list)) and node and rng.random() < 0.85:
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path.append((node, key))
        node = node[key]
    kind = rng.randrange(3)
    value = (
        rng.choice(_ODD)
        if kind == 0
        else (10 ** rng.randint(20, 400))
        if kind == 1
        else json.loads("[" * rng.randint(50, 3000) + "]" * 0 or "0")
        if False
        else None
    )
    text_value = None
    if kind == 2:
        depth = rng.randint(50, 3000)
        text_value = "[" * depth + "]" * depth
    marker = '"__MUTATION__"'
    if path:
        parent, key = path[-1]
        parent[key] = "__MUTATION__" if text_value else value
    else:
        doc = "__MUTATION__" if text_value else value
    text = json.dumps(doc)
    return text.replace(marker, text_value, 1) if text_value else text


def _mutate_text(text: str, rng: random.Random) -> str:
    kind = rng.randrange(3)
    if kind == 0:  # truncation
        return text[: rng.randint(0, len(text))]
    if kind == 1:  # a long string or number spliced in
        i = rng.randrange(len(text))
        return text[:i] + rng.choice(["9", " ", "[", '"', "x"]) * rng.randint(1000, 100_000) + text[i:]
    chars = list(text)  # byte flips
    for _ in range(rng.randint(1, 6)):
        chars[rng.randrange(len(chars))] = chr(rng.randrange(32, 127))
    return "".join(chars)


_TRACE_NAMES = ["nccl", "gloo", "rccl", "nccl_old"]


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32 - 1), which=st.sampled_from(_TRACE_NAMES), gz=st.booleans(), text_level=st.booleans())
def test_mutated_traces_give_a_report_or_a_usage_error(tmp_path_factory, seed, which, gz, text_level):
    rng = random.Random(seed)
    doc = _doc(which)
    text = _mutate_text(json.dumps(doc), rng) if text_level else _mutate_doc(doc, rng)
    path = _write(tmp_path_factory.mktemp("f"), text, gz=gz)
    if gz and rng.random() < 0.2:  # a corrupt gzip stream
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    try:
        report = api.trace(str(path))
        json.dumps(report.to_json(), default=str)
    except UsageError as e:
        assert str(path) in str(e) or "trace" in str(e)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32 - 1))
def test_mutated_logs_through_diagnose_give_a_diagnosis_or_a_usage_error(tmp_path_factory, seed):
    """The diagnose path as the CLI runs it: from a file, so that its NCCL INFO and comment lines are read too."""
    from test_fuzz_logs import _formats, mutate

    rng = random.Random(seed)
    inputs = _formats()
    name, original = inputs[seed % len(inputs)]
    text = mutate(original, rng)
    if rng.random() < 0.5:  # a long line of what the line patterns repeat
        lines = text.split("\n")
        unit = rng.choice(["9", " ", "1 coll channels, ", "Rank 0 ", "NCCL INFO ", "NET/OFI ", 'NCCL_A="'])
        lines.insert(rng.randint(0, len(lines)), unit * (100_000 // len(unit)))
        text = "\n".join(lines)
    path = tmp_path_factory.mktemp("d") / (name if "." in name else name + ".log")
    path.write_text(text, errors="replace")
    try:
        api.diagnose_logs(path)
    except UsageError as e:
        assert str(e)
