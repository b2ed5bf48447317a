"""Blink from the command line: collperf trees, simulate -A blink (and --hybrid), simulate --pattern,
-A single-hop, and clear errors for bad groups."""

import itertools
import json

import pytest
from typer.testing import CliRunner

from collperf import topology as T
from collperf.cli import app

from cli_support import cli_error

G = 1e9


def run_json(*args):
    res = CliRunner().invoke(app, [str(a) for a in args] + ["--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_trees_on_a_fragmented_group_reach_max_flow_and_beat_the_ring():
    # GPUs 0,1,4: NVLink 0-1 (25) and 0-4 (50), no NVLink 1-4; PCIe 0-1 through their switch (12):
    # from 0, rank 1 gets 25 + 12 = 37 GB/s, rank 4 gets 50 (direct) -> 37. NCCL: one PCIe ring whose
    # hops 1 -> 4 and 4 -> 0 cross QPI (10 GB/s)
    doc = run_json("trees", "--topology", "dgx1v", "--ranks", "0,1,4")
    assert doc["rate_Bps"] == pytest.approx(37 * G) and doc["bound_Bps"] == pytest.approx(37 * G)
    assert doc["ring_kind"] == "pcie" and doc["ring_rate_Bps"] == pytest.approx(10 * G)
    assert doc["rate_Bps"] > doc["ring_rate_Bps"]
    assert sum(t["rate_Bps"] for t in doc["trees"]) == pytest.approx(37 * G)
    for t in doc["trees"]:  # every edge's route runs from its parent to its child in topology vertices
        assert t["root"] == 0
        assert all(e["route"][0] == e["parent"] and e["route"][-1] == e["child"] for e in t["edges"])
    n = 2**30
    assert doc["time_s"] == pytest.approx(n / (37 * G)) and doc["ring_time_s"] == pytest.approx(n / (10 * G))
    assert doc["ring_allreduce_time_s"] == pytest.approx(2 * 2 / 3 * n / (10 * G))


def test_trees_best_root_and_allgather():
    doc = run_json("trees", "--ranks", "0,1,4", "--collective", "allreduce", "--root", "best", "-s", "1M")
    assert doc["roots"][0] in (0, 1, 4) and doc["time_s"] == doc["allreduce_time_s"]
    doc = run_json("trees", "--ranks", "0,1,4,6", "--collective", "allgather")
    assert sorted(doc["roots"]) == [0, 1, 4, 6] and doc["rate_Bps"] <= doc["bound_Bps"] * (1 + 1e-9)
    # NVLink only: 0-1 (25) and 0-4 (50) but nothing more into 1
    doc = run_json("trees", "--ranks", "0,1,4", "--links", "nvlink")
    assert doc["rate_Bps"] == pytest.approx(25 * G)


@pytest.mark.parametrize("mode", ["rounds", "events"])
def test_simulated_blink_broadcast_is_size_over_rate_plus_the_pipeline_fill(mode):
    k = 32
    doc = run_json(
        "simulate",
        "broadcast",
        "-A",
        "blink",
        "--topology",
        "dgx1v",
        "--ranks",
        "0,1,4",
        "-s",
        "1G",
        "--segments",
        k,
        "--mode",
        mode,
    )
    steps = len(doc["step_times_s"])  # k segments down trees of height h: k + h - 1 steps
    assert doc["ranks"] == 3 and steps >= k
    assert doc["time_s"] == pytest.approx(2**30 / (37 * G) * steps / k, rel=0.02)


def test_simulated_hybrid_broadcast_adds_the_pcie_trees():
    # GPUs 0,1,2: NVLink trees 50 GB/s, PCIe trees 12 GB/s; no T_dpa: 62 GB/s, 32 segments, height 2
    doc = run_json(
        "simulate",
        "broadcast",
        "-A",
        "blink",
        "-t",
        "dgx1v",
        "--ranks",
        "0,1,2",
        "--hybrid",
        "-s",
        "1GB",
        "--segments",
        32,
    )
    assert doc["algorithm"] == "blink-hybrid"
    assert doc["time_s"] == pytest.approx(1e9 / (62 * G) * 33 / 32, rel=0.02)
    slow = run_json(
        "simulate",
        "broadcast",
        "-A",
        "blink",
        "-t",
        "dgx1v",
        "--ranks",
        "0,1,2",
        "--hybrid",
        "--t-dpa",
        "10ms",
        "-s",
        "1GB",
        "--segments",
        32,
    )
    assert any("T_dpa" in note for note in slow["notes"])


def test_chain_throughput_is_the_slowest_link_at_large_sizes():
    topo, chain = T.dgx1v(), (0, 1, 2, 3)
    slowest = min(topo.link(a, b)["bandwidth_Bps"] for a, b in itertools.pairwise(chain))
    doc = run_json(
        "simulate",
        "--pattern",
        "chain-forward",
        "--topology",
        "dgx1v",
        "--gpus",
        "0,1,2,3",
        "-s",
        "1M,256M",
        "--segments",
        64,
    )
    small, large = doc["throughput_Bps"]
    assert large == pytest.approx(slowest, rel=0.10) and large <= slowest
    assert small < large
    doc = run_json(
        "simulate",
        "--pattern",
        "fan-in-reduce-forward",
        "-t",
        "dgx1v",
        "--gpus",
        "5,6",
        "--center",
        4,
        "--successor",
        0,
        "-s",
        "256M",
        "--segments",
        64,
    )
    assert doc["roles"] == {"sources": [5, 6], "center": 4, "successor": 0}
    assert doc["throughput_Bps"][0] == pytest.approx(
        min(topo.link(4, 0)["bandwidth_Bps"], topo.link(5, 4)["bandwidth_Bps"]), rel=0.10
    )


def test_single_hop_is_the_mesh_allreduce():
    net = ["--ranks", 16, "--latency", "1us", "--bandwidth", "150GB/s", "-s", "1K"]
    alias = run_json("predict", "allreduce", "-A", "single-hop", *net)
    mesh = run_json("predict", "allreduce", "-A", "mesh", *net)
    assert alias["algorithms"][0]["time_s"] == mesh["algorithms"][0]["time_s"]
    sim = run_json("simulate", "allreduce", "-A", "single-hop", "-t", "dgx2", "-s", "1K")
    assert sim["algorithm"] == "mesh"


def _exit_2(args, capsys):
    return cli_error(capsys, *args)


@pytest.mark.parametrize(
    "args, message",
    [
        (["trees", "--ranks", "0,1,9"], "rank(s) 9 not in topology dgx1v"),
        (["trees", "--ranks", "0,1,1"], "1 given twice"),
        (["trees", "--ranks", "0,1,4", "--root", "3"], "--root 3 is not one of --ranks 0,1,4"),
        (["trees", "--ranks", "0,1,4", "--collective", "alltoall"], "packed trees are built for"),
        (["trees", "--ranks", "0,1,4", "--collective", "allgather", "--root", "0"], "drop --root"),
        (["trees", "--ranks", "0,x"], "expected rank numbers"),
        (["simulate", "broadcast", "-A", "blink", "-t", "dgx1v", "--ranks", "0,8"], "rank(s) 8 not in topology dgx1v"),
        (["simulate", "broadcast", "-A", "blink", "-t", "dgx1v", "--ranks", "4,4"], "4 given twice"),
        (["simulate", "broadcast", "-A", "blink", "-t", "dgx1v", "--ranks", "0,1,4", "--root", "2"], "--root 2"),
        (["simulate", "allreduce", "-A", "ring", "-t", "dgx1v", "--ranks", "0,1"], "picks a group for -A blink"),
        (["simulate", "allreduce", "-A", "blink", "-t", "dgx1v", "--hybrid"], "--hybrid"),
        (["simulate", "--pattern", "chain-backward", "-t", "dgx1v"], "expected one of chain-forward"),
        (["simulate", "--pattern", "chain-forward", "-t", "dgx1v", "--gpus", "0,9"], "rank(s) 9 not in topology"),
        (["simulate", "--pattern", "chain-forward", "-t", "dgx1v", "--center", "4"], "do not apply"),
    ],
)
def test_bad_groups_exit_2_with_a_clear_message(args, message, capsys):
    assert message in _exit_2(args, capsys)
