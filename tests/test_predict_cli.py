"""The prediction API and the CLI on top of it: JSON shape, best, bound, crossovers, errors."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import collperf
from collperf.cli import app
from collperf.collectives import COLLECTIVES
from collperf.errors import UsageError
from collperf.model.auto.select import best_algorithm, crossovers
from collperf import cli
from collperf.lab.calibrate import save
from collperf.model.profile import profile_from
from collperf.spec.network import load_cluster

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=True)


def test_predict_json_one_size_is_one_object():
    res = run(
        "predict",
        "allreduce",
        "--size",
        "100MB",
        "--ranks",
        16,
        "--latency",
        "10us",
        "--bandwidth",
        "100GB/s",
        "--algorithm",
        "ring",
        "--json",
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["collective"] == "allreduce" and doc["size_bytes"] == 10**8 and doc["ranks"] == 16
    (ring,) = doc["algorithms"]
    assert set(ring) >= {"name", "time_s", "latency_s", "bandwidth_s", "compute_s", "algbw_GBps", "busbw_GBps"}
    assert ring["time_s"] == pytest.approx(2.175e-3)
    assert ring["latency_s"] + ring["bandwidth_s"] + ring["compute_s"] == pytest.approx(ring["time_s"])
    assert ring["busbw_GBps"] == pytest.approx(ring["algbw_GBps"] * 2 * 15 / 16)
    assert doc["best"] == "ring" and doc["lower_bound_s"] <= ring["time_s"]


def test_predict_json_several_sizes_is_a_list_with_phases_on_clusters():
    res = run("predict", "allreduce", "--size", "1M,1G", "--cluster", "dgx-h100", "--nodes", 8, "--json")
    assert res.exit_code == 0, res.output
    docs = json.loads(res.output)
    assert [d["size_bytes"] for d in docs] == [1 << 20, 1 << 30]
    for d in docs:
        names = [a["name"] for a in d["algorithms"]]
        assert "hierarchical" in names and d["ranks"] == 64
        best = min(d["algorithms"], key=lambda a: a["time_s"])
        assert d["best"] == best["name"]
        hier = next(a for a in d["algorithms"] if a["name"] == "hierarchical")
        assert [p["phase"] for p in hier["phases"]] == ["intra reducescatter", "inter allreduce", "intra allgather"]
        assert sum(p["time_s"] for p in hier["phases"]) == pytest.approx(hier["time_s"])


def test_two_level_flags_match_the_chapter():
    res = run(
        "predict",
        "allreduce",
        "--size",
        "100MB",
        "--nodes",
        4,
        "--ranks-per-node",
        4,
        "--latency",
        "10us",
        "--bandwidth",
        "100GB/s",
        "--intra-algorithm",
        "ring",
        "--inter-algorithm",
        "ring",
        "-A",
        "hierarchical",
        "--json",
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["algorithms"][0]["time_s"] == pytest.approx(1.995e-3)


def test_human_table_marks_the_best_and_lists_skipped():
    res = run("predict", "allgather", "--size", "1M", "--ranks", 12, "--latency", "5us", "--bandwidth", "50GB/s")
    assert res.exit_code == 0, res.output
    assert "* " in res.output and "lower bound" in res.output
    assert "skipped recursive-doubling" in res.output


def test_cluster_band_says_each_peers_line_once():
    # no public runs on 3 nodes of 8 H100: the same sentence at each of the three sizes is printed once
    res = run("predict", "allreduce", "--size", "1M,64M,1G", "--cluster", "dgx-h100", "--nodes", "3")
    assert res.exit_code == 0, res.output
    assert res.output.count("peers: no public runs on 3x8") == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["predict", "allreduce", "--ranks", "4"], "no network given"),
        (["predict", "allreduce", "--ranks", "4", "--latency", "5", "--bandwidth", "1GB/s"], "missing unit"),
        (["predict", "allsum", "--ranks", "4", "--latency", "5us", "--bandwidth", "1GB/s"], "unknown collective"),
        (
            [
                "predict",
                "allgather",
                "--ranks",
                "6",
                "--latency",
                "5us",
                "--bandwidth",
                "1GB/s",
                "-A",
                "recursive-doubling",
            ],
            "power-of-two",
        ),
        (
            ["predict", "allreduce", "--cluster", "dgx-h100", "--nodes", "2", "--ranks", "32"],
            "--ranks 32 on --nodes 2 puts 16 ranks on each node, but a node of --cluster dgx-h100 has 8 GPUs: give --nodes 4",
        ),
        (
            ["predict", "allreduce", "--cluster", "dgx-h100", "--nodes", "2", "--ranks", "12", "--ranks-per-node", "8"],
            "--ranks 12 is not --nodes 2 x --ranks-per-node 8 = 16: give --ranks 16",
        ),
        (["predict", "allreduce", "--cluster", "dgx-z900"], "unknown system"),
    ],
)
def test_cli_errors_are_clear_and_exit_2(args, message, capsys):
    import sys

    old = sys.argv
    sys.argv = ["collperf", *args]
    try:
        with pytest.raises(SystemExit) as info:
            cli.main()
    finally:
        sys.argv = old
    assert info.value.code == 2
    captured = capsys.readouterr()
    assert message in captured.err and "Traceback" not in captured.err


def test_crossover_matches_hand_calculation():
    # p = 4: ring 6a + 1.5 n b, recursive doubling 2a + 2 n b: equal at n = 8 a / b = 2 MB
    net = collperf.network(ranks=4, latency="5us", bandwidth="50GB/s")
    found, regimes = crossovers("allreduce", net, 1, 1 << 30, algorithm="ring,recursive-doubling")
    assert len(found) == 1
    assert found[0].from_algorithm == "recursive-doubling" and found[0].to_algorithm == "ring"
    assert found[0].size_bytes == pytest.approx(2e6, abs=1)
    assert [r.algorithm for r in regimes] == ["recursive-doubling", "ring"]


def test_crossover_sizes_are_where_the_best_changes():
    net = collperf.network(ranks=64, latency="5us", bandwidth="50GB/s")
    found, _ = crossovers("allreduce", net, algorithm="ring,rhd,double-binary-tree,recursive-doubling,reduce-broadcast")
    opts = dict(algorithm="ring,rhd,double-binary-tree,recursive-doubling,reduce-broadcast")
    for c in found:
        before, at = best_algorithm("allreduce", [c.size_bytes - 1, c.size_bytes], net, **opts)
        assert before == c.from_algorithm and at == c.to_algorithm


def test_crossover_cli_json():
    res = run(
        "crossover",
        "allreduce",
        "--ranks",
        4,
        "--latency",
        "5us",
        "--bandwidth",
        "50GB/s",
        "-A",
        "ring,recursive-doubling",
        "--json",
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["regimes"][-1]["to_bytes"] is None and doc["crossovers"][0]["to_algorithm"] == "ring"


def test_algorithms_lists_every_pair_with_a_source():
    res = run("algorithms", "--json")
    rows = json.loads(res.output)
    assert {r["collective"] for r in rows} == set(COLLECTIVES)
    assert all(r["source"] and r["formula"] for r in rows)
    assert len(rows) == len(collperf.algorithms())


def test_api_mirrors_cli():
    net = collperf.network(cluster="chapter", nodes=8)
    (p,) = collperf.predict(
        "allreduce", "2GB", net, algorithm="hierarchical", intra_algorithm="ring", inter_algorithm="ring"
    )
    phases = [ph["time_s"] * 1e3 for ph in p.algorithms[0].phases]
    assert phases == pytest.approx([5.840, 8.820, 5.840], abs=5e-4)
    with pytest.raises(UsageError):
        collperf.network(ranks=4)
    best = best_algorithm(
        "allreduce",
        np.array([1e3, 1e9]),
        collperf.network(ranks=8, latency="5us", bandwidth="50GB/s"),
        algorithm="ring,rhd",
    )
    assert list(best) == ["rhd", "rhd"]


def test_profiles_feed_predict_simulate_and_plan(tmp_path):
    raw = {
        "intra": {"latency_s": 2e-6, "bandwidth_Bps": 100e9},
        "inter": {"latency_s": 10e-6, "bandwidth_Bps": 10e9},
        "reduce_bandwidth_Bps": 50e9,
        "allreduce_alpha_s": 3e-6,
    }
    path = tmp_path / "profile.json"
    save(profile_from(raw, 2, 4), path)
    cluster = load_cluster(path)
    assert (cluster.nodes, cluster.ranks_per_node, cluster.inter_per_rank.bandwidth_Bps) == (2, 4, 10e9 / 4)
    res = run(
        "predict",
        "allreduce",
        "--size",
        "1G",
        "--profile",
        str(path),
        "-A",
        "hierarchical",
        "--intra-algorithm",
        "ring",
        "--inter-algorithm",
        "ring",
        "--json",
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    n = 2**30  # intra ring RS (with gamma) + inter ring AR on n/4 at 10 GB/s / 4 ranks + intra ring AG
    expected = (
        2 * (3 * 2e-6 + 0.75 * n / 100e9) + 0.75 * n / 50e9 + 2 * 10e-6 + (n / 4) / (10e9 / 4) + 0.5 * (n / 4) / 50e9
    )
    assert doc["ranks"] == 8 and doc["algorithms"][0]["time_s"] == pytest.approx(expected)
    res = run("simulate", "allreduce", "-A", "ring", "-s", "64M", "-t", "cluster:2x4", "--profile", str(path), "--json")
    assert res.exit_code == 0, res.output
    plan = collperf.api.plan_step("7b", tp=4, dp=2, profile=str(path), cluster=None)
    assert plan.cluster.name.startswith("profile") and plan.comm_s > 0
    with pytest.raises(UsageError, match="not a collperf profile"):
        (tmp_path / "bad.json").write_text("{}")
        load_cluster(tmp_path / "bad.json")
