"""Events mode at scale: classes of like transfers (exact against the per-transfer loop), the fabrics
of large clusters, oversubscription by hand, the estimate and the refusal before a run."""

import json

import pytest
from hypothesis import given, settings, strategies as st
from typer.testing import CliRunner

from collperf import api
from collperf import topology as T
from collperf.cli import app
from collperf.errors import UsageError
from collperf.model.algorithms import ALGORITHMS
from collperf.model.costs import cost
from collperf.model.network import Cluster, Link
from collperf.model.two_level.build import build_array, build_hierarchical_array
from collperf.simulate import simulate
from collperf.spec import SimulateSpec

LINK = Link(2e-6, 10e9, 40e9)
INTRA, NIC = Link(1e-6, 100e9), Link(4e-6, 10e9)


def _both(s, topo, size=1e6, gamma_Bps=40e9):
    """Events mode on classes (forced) and transfer by transfer."""
    grouped = simulate(s, topo, size, "events", gamma_Bps, engine="grouped")
    single = simulate(s, topo, size, "events", gamma_Bps, engine="per-transfer")
    assert grouped.engine == "grouped" and single.engine == "per-transfer"
    return grouped, single


def _fabrics(nodes: int, gpn: int, nics: int) -> list:
    c = Cluster(nodes, gpn, INTRA, NIC, nics_per_node=nics)
    return [
        T.two_level(c),
        T.two_level(c, oversubscription=3),
        T.rail_fat_tree(c, su_nodes=2),
        T.fat_tree(c, rack_nodes=2, pod_racks=2, oversubscription=2, core_oversubscription=2),
        T.dragonfly(c, routers=2, router_nodes=1),
    ]


@pytest.mark.parametrize("alg", ALGORITHMS, ids=lambda a: f"{a.collective}-{a.name}")
def test_classes_of_like_transfers_time_every_algorithm_exactly(alg):
    # the grouped loop is an exact quotient: the same times, step by step, as one flow per transfer
    for p, tops in ((6, [T.full_mesh(6, LINK), T.ring(6, LINK)]), (8, _fabrics(4, 2, 2)), (8, _fabrics(8, 1, 1))):
        if alg.unavailable(p):
            continue
        s = build_array(alg.collective, alg.name, p, segments=3)
        for topo in tops:
            grouped, single = _both(s, topo)
            assert grouped.time_s == pytest.approx(single.time_s, rel=1e-9), topo.name
            assert grouped.step_end_s == pytest.approx(single.step_end_s, rel=1e-9, abs=1e-15)


@settings(max_examples=25, deadline=None)
@given(
    nodes=st.integers(2, 6),
    gpn=st.sampled_from([1, 2, 4]),
    nics=st.sampled_from([1, 2]),
    inter=st.sampled_from(["ring", "rhd", "double-binary-tree", "mesh"]),
    fabric=st.integers(0, 4),
)
def test_hierarchical_grouped_equals_per_transfer(nodes, gpn, nics, inter, fabric):
    s = build_hierarchical_array("allreduce", nodes, gpn, "ring", inter)
    topo = _fabrics(nodes, gpn, min(nics, gpn))[fabric]
    grouped, single = _both(s, topo, 1e8)
    assert grouped.time_s == pytest.approx(single.time_s, rel=1e-9)


def test_a_symmetric_run_is_a_handful_of_classes_and_agrees_with_rounds():
    # 64 ranks, hierarchical ring/ring on one NIC per GPU: every rank alike, one flow per step;
    # nothing contends, so events mode is rounds mode
    topo = T.two_level(Cluster(16, 4, INTRA, NIC, nics_per_node=4))
    s = build_hierarchical_array("allreduce", 16, 4, "ring", "ring")
    events = simulate(s, topo, 1e9, "events")
    rounds = simulate(s, topo, 1e9, "rounds")
    assert events.engine == "grouped" and events.estimate.flows == s.step_count
    assert events.time_s == pytest.approx(rounds.time_s, rel=1e-9)


def test_oversubscribed_racks_halve_a_ring_that_leaves_every_rack():
    # fattree:4x1,rack=1: each ring hop leaves its rack; a rack's uplink is 1 NIC x 10 GB/s / 2 =
    # 5 GB/s, so the ring runs at half the NIC rate: 2(p - 1) x (4 us + (n/p) / 5 GB/s)
    c = Cluster(4, 1, INTRA, NIC, nics_per_node=1)
    s = build_array("allreduce", "ring", 4)
    for over, rate in ((1, 10e9), (2, 5e9)):
        topo = T.fat_tree(c, rack_nodes=1, pod_racks=4, oversubscription=over)
        want = 2 * 3 * (4e-6 + 1e9 / 4 / rate)
        for mode in ("rounds", "events"):
            assert simulate(s, topo, 1e9, mode).time_s == pytest.approx(want, rel=1e-9)
        assert want == pytest.approx(float(cost("allreduce", "ring", 4, [1e9], Link(4e-6, rate)).total_s[0]))


@pytest.mark.parametrize("mode", ["rounds", "events"])
def test_oversubscribed_uplink_by_hand(mode):
    # fattree:4x1,rack=2: mesh allgather of S = 1 GB, each rank sends S/4 to each of 3 peers, 2 of
    # them in the other rack. A rack's uplink carries 4 such flows. 2:1 oversubscribed it runs at
    # 2 x 10 GB/s / 2 = 10 GB/s: the cross-rack flows get 2.5 GB/s each, S/4 / 2.5 GB/s = 0.1 s.
    # Non-blocking (20 GB/s) the NIC is the limit, 3 flows at 10/3 GB/s: 0.075 s. Both + 4 us.
    c = Cluster(4, 1, INTRA, NIC, nics_per_node=1)
    s = build_array("allgather", "mesh", 4)
    flat = simulate(s, T.fat_tree(c, rack_nodes=2, pod_racks=2), 1e9, mode).time_s
    over = simulate(s, T.fat_tree(c, rack_nodes=2, pod_racks=2, oversubscription=2), 1e9, mode).time_s
    assert flat == pytest.approx(0.075 + 4e-6, rel=1e-9)
    assert over == pytest.approx(0.1 + 4e-6, rel=1e-9)


def test_fabric_routes():
    rail = T.parse("rail:8x4,su=2")
    assert rail.path(0, 4) == [0, "n0.nic0", "su0.rail0", "n1.nic0", 4]  # same rail, same unit
    assert rail.path(0, 8) == [0, "n0.nic0", "su0.rail0", "spine", "su1.rail0", "n2.nic0", 8]
    assert rail.path(0, 5)[3] == "spine"  # rail 0 to rail 1
    tree = T.parse("fattree:8x1,rack=2,pod=2,oversub=4")
    assert tree.path(0, 1) == [0, "n0.nic0", "tor0", "n1.nic0", 1]
    assert tree.path(0, 3) == [0, "n0.nic0", "tor0", "pod0", "tor1", "n3.nic0", 3]
    assert "core" in tree.path(0, 7)
    assert tree.link("tor0", "pod0")["bandwidth_Bps"] == pytest.approx(2 * 50e9 / 4)
    fly = T.parse("dragonfly:32x1,routers=4,router-nodes=2")  # 4 groups of 4 routers
    for dst in range(1, 32):
        routers = [v for v in fly.path(0, dst) if str(v).startswith("g")]
        assert len(routers) <= 4 and sum(1 for a, b in zip(routers, routers[1:]) if a[:2] != b[:2]) <= 1
    nvl = T.parse("nvl72:2")
    assert nvl.ranks == 144 and nvl.shape == (2, 72) and nvl.link(0, "n0.switch")["bandwidth_Bps"] == 900e9
    for bad in ("rail:4x8,spines=2", "fattree:4x8,oversub=0.5", "rail:0x8", "rail:4x8,su=x"):
        with pytest.raises(UsageError):
            T.parse(bad)


def test_refused_before_it_starts_with_the_estimate():
    # 2 p (p - 1) = 523,264 transfers, one flow each
    spec = SimulateSpec(
        collective="allreduce",
        algorithm="ring",
        topology="cluster:64x8",
        mode="events",
        engine="per-transfer",
        memory_limit="256MiB",
    )
    with pytest.raises(UsageError, match=r"would need events mode, 523,264 flows .* over the memory limit of 256 MiB"):
        api.simulate(spec)
    # the same run grouped holds a few flows per step: it fits
    spec = SimulateSpec(
        collective="allreduce", algorithm="ring", topology="cluster:64x8", mode="events", memory_limit="256MiB"
    )
    heard, phases = [], set()
    sim = api.simulate(spec, lambda phase, done, total: phases.add(phase), heard.append)[0]
    assert sim.result.engine == "grouped" and heard[-1].engine == "grouped" and heard[-1].memory_bytes < 256 << 20
    assert phases == {"routing", "grouping like transfers", "events"}
    with pytest.raises(UsageError, match="--memory-limit"):
        SimulateSpec(collective="allreduce", algorithm="ring", topology="cluster:2x2", memory_limit="lots")


def test_simulate_cli_fabric_engine_and_refusal():
    runner = CliRunner()
    res = runner.invoke(
        app, ["simulate", "allreduce", "-A", "hierarchical", "-t", "rail:8x4,su=2", "--mode", "events", "--json"]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["engine"] == "grouped" and doc["estimate"]["engine"] == "grouped"
    res = runner.invoke(app, ["simulate", "allreduce", "-A", "ring", "-t", "cluster:8x4", "--memory-limit", "1MiB"])
    assert isinstance(res.exception, UsageError) and "memory limit of 1 MiB" in str(res.exception)
    res = runner.invoke(app, ["simulate", "allreduce", "-A", "ring", "-t", "cluster:8x4", "--engine", "fast"])
    assert isinstance(res.exception, UsageError) and "--engine 'fast'" in str(res.exception)


# Blink's packed trees route some edges through idle GPUs and PCIe switches (meta routes); the whole
# machine's allreduce is the long case
@pytest.mark.parametrize(
    "collective, ranks", [("broadcast", "0,1,4"), pytest.param("allreduce", None, marks=pytest.mark.slow)]
)
def test_schedule_given_routes_group_exactly(collective, ranks):
    times = [
        api.simulate(
            SimulateSpec(
                collective=collective,
                algorithm="blink",
                topology="dgx1v",
                size="64M",
                mode="events",
                ranks=ranks,
                engine=engine,
            )
        )[0].result.time_s
        for engine in ("grouped", "per-transfer")
    ]
    assert times[0] == pytest.approx(times[1], rel=1e-9)
