"""What diagnose and predict print as JSON names every number with its unit (times `_s`, sizes `_bytes`,
bandwidths `_GBps`), and a system value is `{"name": label, "value": value, "source": ...}`."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from collperf.cli import app

runner = CliRunner()
GIB = 1 << 30

# numbers whose name needs no unit: counts, fractions and ratios, flags
UNITLESS = {
    "ranks",
    "nodes",
    "rows",
    "band_logs",
    "segments",
    "efficiency",
    "bound_ratio",
    "busbw_factor",
    "r2_log_time",
    "median_rel_error",
    "worst_rel_error",
    "single_line_median_rel_error",
    "rel_error",
    "wrong",
    "skipped_lines",
}
UNITS = ("_s", "_bytes", "_GBps", "_Bps")


def _doc(*argv):
    res = runner.invoke(app, [*argv, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def _numbers(doc, key=""):
    """(key, value) of every number in a document, at any depth; a list of numbers counts under its key."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _numbers(v, k)
    elif isinstance(doc, list):
        for v in doc:
            yield from _numbers(v, key)
    elif isinstance(doc, (int, float)) and not isinstance(doc, bool):
        yield key, doc


def _keys(doc):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield k
            yield from _keys(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from _keys(v)


COMMANDS = {
    "log": ["diagnose", "examples/14_h100-ib400-2node-16gpu-allreduce.txt"],
    "logs side by side": ["diagnose", "examples/20_madeup-h100-3runs-allreduce.txt"],
    "one number": [
        "diagnose",
        "allreduce",
        "--size",
        "1GB",
        "--time",
        "9ms",
        "--ranks",
        "16",
        "--cluster",
        "dgx-h100",
        "--nodes",
        "2",
    ],
    "predict on a system": ["predict", "allreduce", "--size", "1GB,64MB", "--cluster", "dgx-h100", "--nodes", "2"],
    "predict --nccl": [
        "predict",
        "allreduce",
        "--nccl",
        "--cluster",
        "dgx-h100",
        "--nodes",
        "2",
        "-p",
        "16",
        "-s",
        "1M,1G",
    ],
}


@pytest.mark.parametrize("argv", COMMANDS.values(), ids=COMMANDS.keys())
def test_every_number_names_its_unit(argv):
    doc = _doc(*argv)
    bare = sorted(
        {
            k
            for k, _ in _numbers(doc)
            if k not in UNITLESS and not k.endswith(UNITS) and not k.startswith(("time_s_", "busbw_GBps_", "ratio_"))
        }
    )
    assert not bare, f"numbers without a unit in their name: {bare}"
    assert not {"size", "peak_size", "assumed"} & set(_keys(doc))  # "sizes" holds the rows, no number


def test_a_log_row_and_the_fit_say_bytes():
    doc = _doc("diagnose", "examples/14_h100-ib400-2node-16gpu-allreduce.txt")
    big = next(s for s in doc["sizes"] if s["size_bytes"] == GIB)
    # nccl-tests' own row: 1 GiB in 4485 us (the log), busbw = size / time x 2 (16-1)/16
    assert big["time_s"] == pytest.approx(4485e-6, rel=1e-3)
    assert big["busbw_GBps"] == pytest.approx(GIB / 4485e-6 * 2 * 15 / 16 / 1e9, rel=1e-3)
    fit = doc["fit"]
    assert fit["peak_size_bytes"] in {r["size_bytes"] for r in fit["rows"]}
    assert all(isinstance(f["sizes_bytes"], list) for f in doc["findings"])


def test_system_values_are_name_value_source():
    doc = _doc(
        "diagnose",
        "allreduce",
        "--size",
        "1GB",
        "--time",
        "9ms",
        "--ranks",
        "16",
        "--cluster",
        "dgx-h100",
        "--nodes",
        "2",
    )
    assert doc["size_bytes"] == 10**9 and doc["time_s"] == pytest.approx(9e-3)
    values = doc["system"]["values"]
    assert all(set(v) == {"name", "value", "source"} for v in values)
    assert {"name": "nodes", "value": "2", "source": "user override (--nodes)"} in values
    assert {v["name"]: v["value"] for v in values}["NIC rate"] == "400 Gb/s"


def test_predict_nccl_and_the_comparison_say_bytes():
    sizes = _doc(*COMMANDS["predict --nccl"])["sizes"]
    assert [s["size_bytes"] for s in sizes] == [1 << 20, GIB]
    comparison = _doc(*COMMANDS["logs side by side"])["comparison"]
    assert [r["size_bytes"] for r in comparison] == sorted(r["size_bytes"] for r in comparison)
    assert {64 << 20, GIB} <= {r["size_bytes"] for r in comparison}
