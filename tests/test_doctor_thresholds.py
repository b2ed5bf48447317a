"""`collperf export thresholds`: the model's expected busbw as each checker's file, validated field by field
against the format its project documents (export/thresholds.py cites each), and equal to the model's own."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from collperf import api
from collperf.errors import UsageError
from collperf.spec import NetworkSpec
from typer.testing import CliRunner

from collperf.cli import app
from cli_support import cli_error

G = 1 << 30


def _typical(nodes: int, size: int) -> float:
    """The model's expectation, asked directly: what every format must carry."""
    _, bands = api.expected_bands("allreduce", [size], NetworkSpec(cluster="dgx-h100", nodes=nodes))
    return bands[0].busbw_GBps(bands[0].typical_s)


def test_csv_holds_both_groups_every_size_and_the_pass_mark():
    result = api.export_thresholds(cluster="dgx-h100", nodes=2, format="csv", size="1M,1G,8G")
    text = result.files["thresholds.csv"]
    assert text.startswith("# dgx-h100: calibrated on")
    rows = list(csv.DictReader(io.StringIO(text.split("\n", 1)[1])))
    assert [(r["nodes"], r["ranks"], r["size_bytes"]) for r in rows] == [
        (n, str(8 * int(n)), s) for n in ("1", "2") for s in (str(1 << 20), str(G), str(8 * G))
    ]
    for r in rows:
        expected = float(r["expected_busbw_GBps"])
        assert expected == pytest.approx(_typical(int(r["nodes"]), int(r["size_bytes"])), abs=0.006)
        assert float(r["pass_mark_busbw_GBps"]) == pytest.approx(0.95 * expected, abs=0.01)
        assert float(r["threshold"]) == 0.05 and r["nccl_choice"]
        assert 0 < expected <= float(r["nccl_model_busbw_GBps"]) * 1.2


def test_superbench_baseline_and_rules_as_its_data_diagnosis_reads_them():
    yaml = pytest.importorskip("yaml")
    files = api.export_thresholds(cluster="dgx-h100", nodes=2, format="superbench", size="1G,8G", threshold=0.07).files
    baseline = json.loads(files["baseline.json"])
    # baseline file: {metric: number}; nccl-bw metrics are <operation>_<bytes>_busbw (GB/s)
    assert set(baseline) == {f"nccl-bw/allreduce_{G}_busbw", f"nccl-bw/allreduce_{8 * G}_busbw"}
    assert baseline[f"nccl-bw/allreduce_{G}_busbw"] == pytest.approx(_typical(2, G), abs=0.006)
    rules = yaml.safe_load(files["rule.yaml"])
    assert isinstance(rules["version"], str) and set(rules["superbench"]) == {"rules"}
    raw_metric = f"nccl-bw/allreduce_{8 * G}_busbw:0"  # a raw data column: metric:rank
    for name, rule in rules["superbench"]["rules"].items():
        # every rule: categories, a known function, a criteria that evaluates to a callable, metrics
        # benchmark/regex (data_diagnosis.py _check_and_format_rules, rule_base.py _get_metrics)
        assert set(rule) <= {"function", "criteria", "store", "categories", "metrics"} and rule["categories"]
        assert rule["function"] in ("variance", "value", "multi_rules", "failure_check")
        assert callable(eval(rule["criteria"]))  # noqa: S307 (our own output, as SuperBench evaluates it)
        assert all("/" in m for m in rule["metrics"])
    busbw = rules["superbench"]["rules"]["nccl-allreduce-busbw"]
    assert any(re.search(m, raw_metric) for m in busbw["metrics"])
    # SuperBench's baseline lookup drops the :rank suffix; variance = (raw - baseline) / baseline
    short = raw_metric.strip(raw_metric.split(":")[-1]).strip(":")
    assert short in baseline
    criteria = eval(busbw["criteria"])  # noqa: S307
    assert criteria(-0.08) and not criteria(-0.06)  # more than 7 % below is defective
    failure = rules["superbench"]["rules"]["failure-rule"]
    assert failure["function"] == "failure_check" and failure["metrics"] == ["nccl-bw/return_code"]


def test_cvs_results_are_strings_keyed_by_bytes_in_its_config_layout():
    doc = json.loads(
        api.export_thresholds(cluster="dgx-h100", nodes=4, format="cvs", size="1G,8G").files["rccl_config.json"]
    )
    assert set(doc) == {"rccl"}
    rccl = doc["rccl"]
    assert rccl["mpi_params"] == {"no_of_nodes": "4", "no_of_local_ranks": "8"}
    assert rccl["cvs_params"] == {"verify_bus_bw": "True"}
    bus_bw = rccl["results"]["all_reduce_perf"]["bus_bw"]
    assert list(bus_bw) == [str(G), str(8 * G)]
    for size, value in bus_bw.items():
        assert re.fullmatch(r"\d+\.\d\d", value)
        assert float(value) == pytest.approx(_typical(4, int(size)), abs=0.006)


def test_azure_line_is_one_node_at_16G_held_below_the_expected():
    text = api.export_thresholds(cluster="dgx-h100", nodes=2, format="azure", size="1G").files["nccl_allreduce.conf"]
    comment, line = text.strip("\n").split("\n")
    assert comment.startswith("#")
    # <hostmask> || check_nccl_allreduce EXP_BW REPEATS TOPOFILE MESSAGE_SIZE
    m = re.fullmatch(r"\s*\* \|\| check_nccl_allreduce (\d+\.\d) (\d+) (\S+) (\S+)", line)
    assert m and m.group(2) == "1" and m.group(4) == "16G"
    assert float(m.group(1)) == pytest.approx(0.95 * _typical(1, 16 * G), abs=0.06)


def test_google_threshold_is_whole_GBps_over_2G_to_8G_for_nhosts():
    text = api.export_thresholds(cluster="dgx-h100", nodes=2, format="google", size="1G").files["nccl_healthcheck.env"]
    env = dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))
    assert env.keys() == {"NHOSTS", "START_MESSAGE_SIZE", "END_MESSAGE_SIZE", "BANDWIDTH_THRESHOLD"}
    assert (env["NHOSTS"], env["START_MESSAGE_SIZE"], env["END_MESSAGE_SIZE"]) == ("2", "2G", "8G")
    mean = sum(_typical(2, s * G) for s in (2, 4, 8)) / 3
    assert int(env["BANDWIDTH_THRESHOLD"]) == int(0.95 * mean)


def test_bad_requests_are_usage_errors_and_the_command_writes_files(tmp_path, capsys):
    for kwargs, match in (
        ({"format": "xml"}, "superbench, cvs"),
        ({"nodes": 0}, "--nodes"),
        ({"threshold": 1.5}, "--threshold"),
    ):
        with pytest.raises(UsageError, match=match):
            api.export_thresholds(cluster="dgx-h100", **{"nodes": 2, **kwargs})
    assert "unknown system" in cli_error(capsys, "export", "thresholds", "--cluster", "nope")
    out = tmp_path / "sb"
    done = CliRunner().invoke(
        app,
        [
            "export",
            "thresholds",
            "--cluster",
            "dgx-h100",
            "--format",
            "superbench",
            "--size",
            "1G",
            "--output",
            str(out),
        ],
    )
    assert done.exit_code == 0 and "written to" in done.output
    assert sorted(p.name for p in out.iterdir()) == ["baseline.json", "rule.yaml"]
    done = CliRunner().invoke(app, ["export", "thresholds", "--cluster", "dgx-h100", "--size", "1G", "--json"])
    doc = json.loads(done.output)
    assert doc["format"] == "csv" and [r["nodes"] for r in doc["rows"]] == [1, 2]
