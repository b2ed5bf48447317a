"""Topologies and the simulator: closed form on a full mesh, contention by hand, file format."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from collperf import topology as T
from collperf.cli import app
from collperf.errors import UsageError
from collperf.model.algorithms import ALGORITHMS
from collperf.model.costs import cost
from collperf.model.network import Cluster, Link
from collperf.model.two_level.build import build
from collperf.simulate import simulate

LINK = Link(2e-6, 10e9, 40e9)
# pipelined trees have unequal step loads: in events mode ranks run ahead of the per-step model
RUNS_AHEAD = {"double-binary-tree"}


@pytest.mark.parametrize("alg", ALGORITHMS, ids=lambda a: f"{a.collective}-{a.name}")
def test_full_mesh_simulation_equals_closed_form(alg):
    for p in (2, 3, 5, 8):
        if alg.unavailable(p):
            continue
        s = build(alg.collective, alg.name, p, segments=3)
        topo = T.full_mesh(p, LINK)
        want = float(cost(alg.collective, alg.name, p, [1e6], LINK, segments=3 if alg.pipeline else None).total_s[0])
        assert simulate(s, topo, 1e6, "rounds", LINK.reduce_bandwidth_Bps).time_s == pytest.approx(want, rel=1e-9)
        events = simulate(s, topo, 1e6, "events", LINK.reduce_bandwidth_Bps).time_s
        if alg.name in RUNS_AHEAD:
            assert events <= want * (1 + 1e-9)
        else:
            assert events == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("mode", ["rounds", "events"])
def test_shared_nic_contention_by_hand(mode):
    # 2 nodes x 2 ranks, mesh allgather of 1 GB: each rank sends 250 MB to each of 3 peers.
    # One 10 GB/s NIC per node carries 4 inter-node flows = 1 GB -> 0.1 s (+ 4 us latency: two
    # NIC hops of 2 us). With one NIC per rank each NIC carries 2 flows -> 0.05 s.
    intra, nic = Link(1e-6, 1000e9), Link(4e-6, 10e9)
    s = build("allgather", "mesh", 4)
    shared = T.two_level(Cluster(2, 2, intra, nic, nics_per_node=1))
    own = T.two_level(Cluster(2, 2, intra, nic, nics_per_node=2))
    assert simulate(s, shared, 1e9, mode).time_s == pytest.approx(0.1 + 4e-6, rel=1e-9)
    assert simulate(s, own, 1e9, mode).time_s == pytest.approx(0.05 + 4e-6, rel=1e-9)


def test_oversubscription_slows_the_inter_node_phase():
    c = Cluster(2, 4, Link(1e-6, 300e9), Link(4e-6, 50e9), nics_per_node=4)
    s = build("alltoall", "pairwise", 8)
    flat = simulate(s, T.two_level(c), 1e9).time_s
    over = simulate(s, T.two_level(c, oversubscription=4), 1e9).time_s
    assert over > 1.5 * flat


def test_ring_on_a_ring_topology_and_busiest_links():
    s = build("allreduce", "ring", 6)
    r = simulate(s, T.ring(6, LINK), 6e8, reduce_bandwidth_Bps=LINK.reduce_bandwidth_Bps)
    want = float(cost("allreduce", "ring", 6, [6e8], LINK).total_s[0])
    assert r.time_s == pytest.approx(want)
    assert r.links[0].bytes == pytest.approx(2 * 5 * 1e8)  # 2(p-1) messages of n/p on each ring link
    assert len(r.step_end_s) == 10 and np.all(np.diff(r.step_end_s) > 0)


def test_dgx1v_has_six_nvlinks_per_gpu_and_routes_around_missing_links():
    topo = T.dgx1v()
    for gpu in range(8):
        nvlinks = sum(round(topo.link(gpu, v)["bandwidth_Bps"] / 25e9) for v in topo.graph[gpu] if isinstance(v, int))
        assert nvlinks == 6
    assert len(topo.path(1, 4)) == 3 and all(isinstance(v, int) for v in topo.path(1, 4))
    r = simulate(build("broadcast", "binomial", 8), topo, 1e8, "events")
    assert r.time_s > 0


def test_topology_file_round_trip(tmp_path):
    topo = T.two_level(Cluster(2, 2, Link(1e-6, 100e9), Link(4e-6, 10e9), nics_per_node=1))
    topo.routes = {(0, 3): topo.path(0, 3)}
    path = tmp_path / "t.json"
    topo.save(path)
    again = T.load(path)
    assert again.ranks == 4 and again.path(0, 3) == topo.path(0, 3)
    s = build("allgather", "ring", 4)
    # the loaded file has no router, so other routes are shortest paths; the NIC-free ring still matches
    assert simulate(s, again, 1e8).time_s > 0
    with pytest.raises(UsageError, match="missing field 'links'"):
        T.from_json({"ranks": 2})
    with pytest.raises(UsageError, match="does not exist"):
        T.load(tmp_path / "nope.json")


def test_topology_spec_errors():
    with pytest.raises(UsageError, match="needs a link"):
        T.parse("mesh:4")
    with pytest.raises(UsageError, match="unknown topology"):
        T.parse("torus:4")


def test_simulate_cli_json_and_timeline(tmp_path):
    runner = CliRunner()
    png = tmp_path / "timeline.png"
    res = runner.invoke(
        app,
        [
            "simulate",
            "allreduce",
            "-A",
            "ring",
            "-s",
            "64M",
            "-t",
            "mesh:8",
            "--latency",
            "5us",
            "--bandwidth",
            "50GB/s",
            "--json",
            "--timeline",
            str(png),
        ],
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    want = float(cost("allreduce", "ring", 8, [64 << 20], Link(5e-6, 50e9)).total_s[0])
    assert doc["time_s"] == pytest.approx(want) and len(doc["step_times_s"]) == 14
    assert doc["busbw_GBps"] == pytest.approx(doc["algbw_GBps"] * 2 * 7 / 8)
    assert png.stat().st_size > 1000
    res = runner.invoke(
        app,
        [
            "simulate",
            "allreduce",
            "-A",
            "hierarchical",
            "-s",
            "1G",
            "-t",
            "cluster:2x4",
            "--intra-algorithm",
            "ring",
            "--inter-algorithm",
            "rhd",
            "--mode",
            "events",
        ],
    )
    assert res.exit_code == 0, res.output and "busiest links" in res.output


def test_schedule_and_verify_cli():
    runner = CliRunner()
    res = runner.invoke(app, ["schedule", "allreduce", "-A", "ring", "-p", "4"])
    assert res.exit_code == 0 and "step   0: 0+>1:3" in res.output and "6 alpha + 1.5 n beta" in res.output
    res = runner.invoke(app, ["verify", "--collective", "allgather", "--max-ranks", "9", "--json"])
    rows = json.loads(res.output)
    assert res.exit_code == 0 and all(not r["failures"] for r in rows)
    assert {r["algorithm"] for r in rows} == {"ring", "recursive-doubling", "bruck", "mesh", "hierarchical"}
