"""nccl-tests -J as its writer really writes it (src/util.cu, JSON_FILE_VERSION 3): read, fitted and
diagnosed exactly as its text twin (tests/fixtures/make_nccl_tests_v3.py prints both from one run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collperf import api, ingest

FIXTURES = Path(__file__).parent / "fixtures"
STEMS = ["nccl_tests_v3", "nccl_tests_v3_per_iter"]


@pytest.mark.parametrize("stem", STEMS)
def test_fixture_is_in_the_writers_shape(stem):
    raw = (FIXTURES / f"{stem}.json").read_text()
    assert "\n" not in raw and ", " not in raw and '": ' not in raw  # compact, one line
    doc = json.loads(raw)
    assert list(doc) == [
        "version",
        "start_time",
        "args",
        "env",
        "nccl_version",
        "config",
        "results",
        "out_of_bounds",
        "average_bus_bandwidth",
        "errors",
        "end_time",
    ]
    assert doc["version"] == 3 and doc["nccl_version"] == 23007
    assert all(isinstance(a, str) for a in doc["args"] + doc["env"]) and "devices" in doc["config"]
    first = doc["results"][0]
    assert first["root"] == "    -1"  # `%6i`, a string
    keys = [
        "size",
        "count",
        "type",
        "redop",
        "root",
        "out_of_place",
        "in_place",
        "actual_iterations",
        "experiment_name",
    ]
    if "-I" in doc["args"]:
        keys[6:6] = []
        keys = keys[:6] + ["out_of_place_per_iter", "in_place", "in_place_per_iter"] + keys[7:]
        assert first["out_of_place"]["nwrong"] is None  # no -c: null
    else:
        assert isinstance(first["out_of_place"]["nwrong"], float)  # -c: a double
    assert list(first) == keys


@pytest.mark.parametrize("stem", STEMS)
def test_json_reads_as_its_text_twin(stem):
    (j,) = ingest.load(FIXTURES / f"{stem}.json")
    (t,) = ingest.load(FIXTURES / f"{stem}.txt")
    assert (j.collective, j.ranks, j.nodes) == (t.collective, t.ranks, t.nodes) == ("allreduce", 16, 2)
    assert not j.skipped and not j.flagged() and not t.skipped
    assert len(j.rows) == len(t.rows) > 0
    for a, b in zip(j.rows, t.rows):
        assert (a.size, a.time_s, a.placement, a.wrong, a.root, a.count) == (
            b.size,
            b.time_s,
            b.placement,
            b.wrong,
            b.root,
            b.count,
        )
        # the text prints bandwidths with 2 decimals, the JSON with 6
        assert a.algbw_GBps == pytest.approx(b.algbw_GBps, abs=0.005)
        assert a.busbw_GBps == pytest.approx(b.busbw_GBps, abs=0.005)
    assert j.header["nccl_version"] == "2.30.7" and j.header["json_version"] == 3
    assert j.header["ngpus"] == t.header["ngpus"] == 1


def test_per_iteration_blocks_are_kept():
    (j,) = ingest.load(FIXTURES / "nccl_tests_v3_per_iter.json")
    stats = j.header["per_iter"][(4194304, "out-of-place")]
    assert len(stats["times_us"]) == 20 and stats["skipped_iterations"] == 0
    assert stats["min_us"] <= stats["p50_us"] <= stats["max_us"]
    assert stats["avg_us"] == pytest.approx(sum(stats["times_us"]) / 20, abs=1e-5)


@pytest.mark.parametrize("stem", STEMS)
def test_json_fits_and_diagnoses_as_its_text_twin(stem):
    (fit_j,) = api.fit_logs([FIXTURES / f"{stem}.json"])
    (fit_t,) = api.fit_logs([FIXTURES / f"{stem}.txt"])
    assert _numbers(fit_j.to_json()) == _numbers(fit_t.to_json())
    (diag_j,) = api.diagnose_logs([FIXTURES / f"{stem}.json"])
    (diag_t,) = api.diagnose_logs([FIXTURES / f"{stem}.txt"])
    assert diag_j.verdict == diag_t.verdict
    assert _numbers(diag_j.to_json(), skip_bw=True) == _numbers(diag_t.to_json(), skip_bw=True)


def _numbers(doc, skip_bw=False, key=""):
    """Every number of a result document by its path, without source names (they differ by suffix) and,
    for diagnose, without the measured bandwidths (2 vs 6 decimals)."""
    if isinstance(doc, dict):
        out = {}
        for k, val in doc.items():
            if k in ("source", "path", "file", "name", "log", "header"):
                continue
            if skip_bw and ("bw" in k.lower() or "bandwidth" in k.lower()):
                continue
            out.update(_numbers(val, skip_bw, f"{key}.{k}"))
        return out
    if isinstance(doc, list):
        out = {}
        for i, val in enumerate(doc):
            out.update(_numbers(val, skip_bw, f"{key}[{i}]"))
        return out
    if isinstance(doc, (int, float)) and not isinstance(doc, bool):
        return {key: round(float(doc), 6)}
    return {}
