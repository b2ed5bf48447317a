"""Plain `predict --cluster X --sharp`: NCCL's expected band and the system's bound printed beside our algorithms
are the ones `diagnose ... --sharp` judges a measurement against; our algorithms do not change with it."""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from collperf import api, cli
from collperf.cli import app
from collperf.errors import UsageError
from collperf.spec import NetworkSpec, PredictSpec

SIZE = "1GB"
SIZE_BYTES = 10**9
PREDICT = ["predict", "allreduce", "--size", SIZE, "--cluster", "dgx-h100", "--nodes", "4"]
DIAGNOSE = [
    "diagnose",
    "allreduce",
    "--size",
    SIZE,
    "--time",
    "9ms",
    "--ranks",
    "32",
    "--cluster",
    "dgx-h100",
    "--nodes",
    "4",
]


def _predicted(sharp, nodes=4, size=SIZE):
    return api.predict(
        PredictSpec(
            collective="allreduce",
            size=size,
            expected=True,
            sharp=sharp,
            network=NetworkSpec(cluster="dgx-h100", nodes=nodes),
        )
    )


def _judged(sharp, nodes=4, size=SIZE):
    return api.diagnose_measurement(
        collective="allreduce", size=size, time="9ms", ranks=8 * nodes, cluster="dgx-h100", nodes=nodes, sharp=sharp
    )


def _same_expectation(band, row):
    assert band.typical_s == pytest.approx(row.expected_s, rel=1e-12)
    assert band.low_s == pytest.approx(row.expected_low_s, rel=1e-12)
    assert band.high_s == pytest.approx(row.expected_high_s, rel=1e-12)
    assert band.model_s == pytest.approx(row.model_s, rel=1e-12)
    assert band.bound_s == pytest.approx(row.bound_s, rel=1e-12)
    assert band.choice == row.choice


# 1 GB on 4 DGX H100 nodes, 8 x 400 Gb/s = 400 GB/s per node. With the switches reducing, each node sends its
# vector once and receives the result once: 1 GB / 400 GB/s = 2.5 ms. Without, the ring's 2 (N-1)/N = 1.5 of
# it per node: 3.75 ms. The NVLink term (NVLS: 1 GB over 450 GB/s = 2.22 ms) stays below both.
@pytest.mark.parametrize("sharp, bound_s", [(True, 2.5e-3), (None, 3.75e-3), (False, 3.75e-3)])
def test_predict_and_diagnose_give_one_expectation_and_the_hand_computed_bound(sharp, bound_s):
    predicted, judged = _predicted(sharp), _judged(sharp)
    assert predicted.assumed.system.collnet is bool(sharp) and judged.assumed.system.collnet is bool(sharp)
    _same_expectation(predicted.bands[0], judged.row)
    assert predicted.bands[0].bound_s == pytest.approx(bound_s)


def test_the_cli_prints_the_same_numbers_as_diagnose_with_and_without_sharp():
    for extra in (["--sharp"], []):
        pred = CliRunner().invoke(app, PREDICT + extra + ["--json"])
        diag = CliRunner().invoke(app, DIAGNOSE + extra + ["--json"])
        assert pred.exit_code == 0, pred.output
        assert diag.exit_code == 0, diag.output
        band, row = json.loads(pred.output)["nccl_expected"], json.loads(diag.output)
        for ours, theirs in (
            ("expected_s", "expected_s"),
            ("expected_low_s", "expected_low_s"),
            ("expected_high_s", "expected_high_s"),
            ("bound_s", "bound_s"),
        ):
            assert band[ours] == pytest.approx(row[theirs], rel=1e-12), (extra, ours)
        assert band["bound_s"] == pytest.approx(2.5e-3 if extra else 3.75e-3)


def test_our_algorithms_do_not_change_with_sharp():
    on, off = _predicted(True), _predicted(None)
    assert [r.to_json() for r in on] == [r.to_json() for r in off]


def test_the_lower_bound_line_is_the_lower_of_ours_and_the_sharp_bound():
    on, off = _predicted(True), _predicted(None)
    ours = on[0].lower_bound_s
    assert ours > 2.5e-3  # our schedules reduce on the GPUs: at least the ring's network term
    assert on.lower_bound_s(0) == pytest.approx(2.5e-3)
    # without SHARP the line shows the system's bound too: the ring's 1.5 x 1 GB over 8 x 400 Gb/s, 3.75 ms, which
    # ours exceeds by the network's 5 us latency alone
    assert off.lower_bound_s(0) == pytest.approx(3.75e-3) and ours == pytest.approx(3.75e-3 + 5e-6)
    assert off.bound_difference(0) == "latency" and on.bound_difference(0) == "in-network"
    assert "sharp_lower_bound_s" not in json.dumps(off.to_json())
    assert on.to_json()["sharp_lower_bound_s"] == pytest.approx(2.5e-3)
    text = CliRunner().invoke(app, PREDICT + ["--sharp"]).output
    assert "lower bound 2.5 ms with in-network reduction" in text


@settings(max_examples=6, deadline=None)
@given(nodes=st.sampled_from([2, 3, 4, 8]), size=st.sampled_from(["64M", "1G", "4G"]))
def test_sharp_never_raises_the_bound_and_predict_agrees_with_diagnose(nodes, size):
    on, off = _predicted(True, nodes, size), _predicted(False, nodes, size)
    _same_expectation(on.bands[0], _judged(True, nodes, size).row)
    assert on.bands[0].bound_s <= off.bands[0].bound_s * (1 + 1e-12)
    assert on.lower_bound_s(0) <= on[0].lower_bound_s


def test_the_api_convenience_takes_sharp_and_implies_the_band():
    result = api.predict("allreduce", SIZE, NetworkSpec(cluster="dgx-h100", nodes=4), sharp=True)
    assert result.bands and result.bands[0].bound_s == pytest.approx(2.5e-3)


def _cli_error(monkeypatch, capsys, argv):
    monkeypatch.setattr(sys, "argv", ["collperf", *argv])
    with pytest.raises(SystemExit) as info:
        cli.main()
    err = capsys.readouterr().err
    assert info.value.code == 2 and "Traceback" not in err
    return " ".join(err.split())


def test_sharp_on_a_network_without_it_is_the_same_clear_error_on_both(monkeypatch, capsys):
    predict = _cli_error(
        monkeypatch, capsys, ["predict", "allreduce", "--size", SIZE, "--cluster", "aws-p5", "--nodes", "2", "--sharp"]
    )
    diagnose = _cli_error(
        monkeypatch,
        capsys,
        [
            "diagnose",
            "allreduce",
            "--size",
            SIZE,
            "--time",
            "9ms",
            "--ranks",
            "16",
            "--cluster",
            "aws-p5",
            "--nodes",
            "2",
            "--sharp",
        ],
    )
    assert predict == diagnose
    assert "--sharp" in predict and "InfiniBand" in predict and "efa" in predict and "--cluster" in predict
    with pytest.raises(UsageError, match=r"--sharp: .*InfiniBand.*efa"):
        api.predict("allreduce", SIZE, NetworkSpec(cluster="aws-p5", nodes=2), sharp=True)


def test_sharp_without_a_catalogue_system_is_a_clear_error(monkeypatch, capsys):
    text = _cli_error(
        monkeypatch,
        capsys,
        [
            "predict",
            "allreduce",
            "--size",
            SIZE,
            "--ranks",
            "8",
            "--latency",
            "1us",
            "--bandwidth",
            "10GB/s",
            "--sharp",
        ],
    )
    assert "--sharp" in text and "--cluster" in text
    no = _cli_error(
        monkeypatch,
        capsys,
        [
            "predict",
            "allreduce",
            "--size",
            SIZE,
            "--ranks",
            "8",
            "--latency",
            "1us",
            "--bandwidth",
            "10GB/s",
            "--no-sharp",
        ],
    )
    assert "--no-sharp" in no
    topo = _cli_error(
        monkeypatch,
        capsys,
        ["predict", "allreduce", "--size", SIZE, "--topology", "dgx1", "--ranks", "0,1,2,3", "--sharp"],
    )
    assert "--sharp" in topo and "--topology" in topo
    with pytest.raises(UsageError, match="--sharp.*--cluster"):
        PredictSpec(
            collective="allreduce",
            size=SIZE,
            sharp=True,
            network=NetworkSpec(ranks=8, latency="1us", bandwidth="10GB/s"),
        )


def test_sharp_on_one_node_is_the_same_clear_error_on_both(monkeypatch, capsys):
    # the switches reduce between nodes: on one node --sharp would silently change nothing
    predict = _cli_error(
        monkeypatch, capsys, ["predict", "allreduce", "--nccl", "--cluster", "dgx-a100", "-s", "1M", "--sharp"]
    )
    plain = _cli_error(
        monkeypatch, capsys, ["predict", "allreduce", "--size", SIZE, "--cluster", "dgx-h100", "--sharp"]
    )
    diagnose = _cli_error(
        monkeypatch,
        capsys,
        ["diagnose", "allreduce", "--size", SIZE, "--time", "9ms", "--ranks", "8", "--cluster", "dgx-h100", "--sharp"],
    )
    for text in (predict, plain, diagnose):
        assert "--sharp: in-network reduction is between nodes" in text and "1 node" in text
        assert "--nodes N" in text and "drop --sharp" in text
    with pytest.raises(UsageError, match="--sharp: in-network reduction is between nodes"):
        api.predict("allreduce", SIZE, NetworkSpec(cluster="dgx-h100", nodes=1), sharp=True)
    # --no-sharp on one node says what is true anyway: accepted
    assert _predicted(False, nodes=1).assumed.system.collnet is False
