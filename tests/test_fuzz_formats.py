"""The fuzz of the log readers (test_fuzz_logs.py) extended to the other files collperf reads: topology
files (predict/simulate --topology), calibration profiles (--profile), bench's own -J JSON in its writer's
shape, NCCL Inspector JSONL and rccl-tests. Every mutation gives a result or a UsageError, never another
exception, and no input takes more than its budget (a hang check, generous on a loaded machine)."""

import gzip
import json
import random
import time
from pathlib import Path

import pytest

import fuzz_support

from collperf import topology
from collperf import api
from collperf.errors import UsageError
from collperf.fit import fit
from collperf.ingest import parse
from collperf.spec.network import load_cluster
from collperf.lab.results import to_json

from test_bench_output import _results
from test_fuzz_logs import _json_mutation, mutate

FIXTURES = Path(__file__).parent / "fixtures"
BUDGET_S = 5.0
CASES = 300

PROFILE = {
    "kind": "collperf-profile",
    "nodes": 2,
    "ranks_per_node": 2,
    "reduce_bandwidth_Bps": 20e9,
    "intra": {"latency_s": 2e-6, "bandwidth_Bps": 400e9},
    "inter": {"latency_s": 5e-6, "bandwidth_Bps": 100e9},
}


def _topologies() -> list[str]:
    docs = [topology.dgx1v().to_json() if hasattr(topology, "dgx1v") else None]
    docs += [
        {"ranks": 4, "links": [{"a": i, "b": (i + 1) % 4, "bandwidth": "10GB/s", "latency": "2us"} for i in range(4)]}
    ]
    return [json.dumps(d, indent=1) for d in docs if d]


def _check(kind: str, call, text: str, case: int) -> str:
    started = time.perf_counter()
    try:
        call(text)
        outcome = "ok"
    except UsageError as e:
        assert str(e)
        outcome = "usage-error"
    except Exception as e:  # noqa: BLE001 - anything else is the bug this test exists to find
        pytest.fail(f"{kind} case {case}: {type(e).__name__}: {e}\n{text[:300]!r}")
    assert time.perf_counter() - started < BUDGET_S, f"{kind} case {case} over its {BUDGET_S} s budget"
    return outcome


def _topology(text: str):
    try:
        doc = json.loads(text)
    except ValueError:
        raise UsageError("not JSON") from None
    topology.from_json(doc, "fuzzed topology")


def _profile(tmp: Path):
    def read(text: str):
        path = tmp / "p.json"
        path.write_text(text, errors="replace")
        load_cluster(path)

    return read


def _log(text: str):
    for t in parse(text, "fuzzed"):
        for r in t.rows:
            assert r.size >= 0 and 0 < r.time_s < float("inf")
        try:
            fit(t)
        except UsageError:
            pass


@pytest.mark.parametrize(
    "cases",
    [
        pytest.param(range(CASES // 6), id="core"),
        pytest.param(range(CASES // 6, CASES), marks=pytest.mark.slow, id="rest"),
    ],
)
@pytest.mark.parametrize("kind", ["topology", "profile", "bench-json", "inspector", "rccl"])
def test_mutated_inputs_give_a_result_or_a_usage_error(kind, cases, tmp_path):
    """CASES mutations per kind, in two parts (the core runs the first sixth), each within its budget."""
    originals = {
        "topology": _topologies(),
        "profile": [json.dumps(PROFILE, indent=1)],
        "bench-json": [json.dumps(to_json(_results()), indent=1)],
        "inspector": [(FIXTURES / "inspector.jsonl").read_text()],
        "rccl": [(FIXTURES / "rccl_tests.jsonl").read_text(), (FIXTURES / "rccl_tests.csv").read_text()],
    }[kind]
    call = {"topology": _topology, "profile": _profile(tmp_path)}.get(kind, _log)
    outcomes = {"ok": 0, "usage-error": 0}
    assert _check(kind, call, originals[0], -1) == "ok"  # the unmutated input reads
    for case in cases:
        rng = random.Random(case)
        original = originals[case % len(originals)]
        text = _json_mutation(original, rng) if case % 2 else mutate(original, rng)
        outcomes[_check(kind, call, text, case)] += 1
    assert outcomes["usage-error"] > 0


# --- every verb that reads, over every format (fuzz_support.py) ---------------------------------------------------


@pytest.mark.parametrize(
    "seeds", [pytest.param(range(2), id="core"), pytest.param(range(2, 12), marks=pytest.mark.slow, id="rest")]
)
@pytest.mark.parametrize("fmt, verb", fuzz_support.PAIRS)
def test_every_verb_gives_a_result_or_a_usage_error_on_every_format(fmt, verb, seeds, tmp_path):
    """read, fit, diagnose and report over every log format, trace and report over Kineto traces (plain and
    gzipped), from a file as the commands read it: each seed's mutated input gives a result or a UsageError.
    The seeds of one pair differ from another's, so the core's two per pair try different mutators."""
    outcomes = []
    for seed in seeds:
        seed += 1000 * fuzz_support.PAIRS.index((fmt, verb))
        try:
            outcomes.append(fuzz_support.attempt(fmt, verb, seed, tmp_path))
        except Exception as e:  # noqa: BLE001 - anything else is the bug this test exists to find
            pytest.fail(f"{fmt} through {verb}, seed {seed}: {type(e).__name__}: {e}")
    assert outcomes


@pytest.mark.parametrize("fmt, verb", fuzz_support.CROSSED)
def test_a_file_of_the_other_kind_is_refused(fmt, verb, tmp_path):
    """A log given to trace, a trace given to the log verbs: a UsageError, unmutated."""
    path = tmp_path / ("rank0.json.gz" if fmt == "kineto gz" else "input.txt")
    text = fuzz_support.originals(fmt)[0]
    path.write_bytes(gzip.compress(text.encode()) if fmt == "kineto gz" else text.encode())
    with pytest.raises(UsageError):
        fuzz_support.call(verb, fmt, path, tmp_path)


@pytest.mark.parametrize("fmt", fuzz_support.FORMATS)
def test_every_format_reads_unmutated(fmt, tmp_path):
    """The fuzz starts from inputs that read: each format's fixtures give a result through its first verb."""
    verb = (
        "trace" if fmt in fuzz_support.TRACE_FORMATS else "diagnose" if fmt in fuzz_support.SYSTEM_FORMATS else "read"
    )
    for i, text in enumerate(fuzz_support.originals(fmt)):
        # a file name the format's reader takes: a Flight Recorder dump names its rank there
        path = tmp_path / (
            f"rank{i}.json.gz"
            if fmt == "kineto gz"
            else f"rank{i}.json"
            if fmt in fuzz_support.TRACE_FORMATS
            else f"{i}.log"
        )
        path.write_bytes(gzip.compress(text.encode()) if fmt == "kineto gz" else text.encode())
        assert fuzz_support.call(verb, fmt, path, tmp_path)


def test_a_huge_rank_count_in_bench_json_is_refused_by_its_path(tmp_path):
    """Found by benchmarks/fuzz_campaign.py: $.ranks of 400 digits reached busbw's factor, an OverflowError."""
    doc = json.loads((FIXTURES / "collperf_bench.json").read_text())
    doc["ranks"] = 10**400
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UsageError, match=r"\$\.ranks 100000000000\.\.\. \(a huge number\)"):
        fuzz_support.call("read", "collperf bench", path, tmp_path)


def test_flight_recorder_and_ras_values_past_a_float_are_refused_or_sizeless(tmp_path):
    """Found by the fuzz of the Flight Recorder and RAS readers: an integer past a float in a time field, a shape of
    huge dimensions, a RAS report nested past the decoder."""
    dump = json.loads((fuzz_support.TRACES / "flight" / "compute" / "fr_json" / "rank0.json").read_text())
    dump["entries"][0]["time_created_ns"] = 10**400
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "rank0.json").write_text(json.dumps(dump))
    with pytest.raises(UsageError, match=r"time_created_ns .*expected a non-negative number"):
        api.trace(str(tmp_path / "a" / "rank0.json"))
    dump = json.loads((fuzz_support.TRACES / "flight" / "compute" / "fr_json" / "rank0.json").read_text())
    dump["entries"][0]["input_sizes"] = [[10**30, 10**30]]
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "rank0.json").write_text(json.dumps(dump))
    report = api.trace(str(tmp_path / "b" / "rank0.json"))  # the call is read, its size said unknown
    assert report.collectives
    (tmp_path / "ras.json").write_text('{"communicators": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(UsageError):
        api.trace(str(tmp_path / "ras.json"))
