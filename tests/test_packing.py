"""Blink's packed trees: optimal rates by hand and against max-flow, schedules that verify and
simulate, equation 8, single-hop, the micro-benchmark patterns."""

import itertools
import math

import networkx as nx
import numpy as np
import pytest

from collperf import topology as T
from collperf.errors import UsageError
from collperf.blink import model as B, packed, patterns as P
from collperf.model.network import Link
from collperf.blink.packing import broadcast_bound, min_arborescence, pack
from collperf.schedule.verify import verify
from collperf.simulate import simulate
from collperf.schedule.ir import COPY, Transfer, make, step

G = 1e9
GiB = 2**30


def _topo(name, ranks, edges, devices=()):
    g = nx.Graph()
    g.add_nodes_from(range(ranks))
    g.add_nodes_from(devices)
    for u, v, bw in edges:
        g.add_edge(u, v, latency_s=1e-6, bandwidth_Bps=bw * G, name="x")
    return T.Topology(name, ranks, g)


TRIANGLE = _topo("triangle", 3, [(0, 1, 10), (0, 2, 4), (1, 2, 6)])
# root 0: to 1 directly 10 + via 2 min(4, 6) = 14; to 2 directly 4 + via 1 min(10, 6) = 10 -> 10
STAR = _topo("star", 3, [(0, "sw", 4), (1, "sw", 6), (2, "sw", 8)], ["sw"])
# root 0 injects 4 GB/s: 0 -> 1 -> 2 through the switch (no copy in the switch) reaches 4
SLOW_RING = _topo("ring", 4, [(0, 1, 10), (1, 2, 10), (2, 3, 10), (3, 0, 1)])
# root 0: every rank gets 10 one way round and 1 the other -> 11; the ring itself moves 1


@pytest.mark.parametrize(
    "topo, root, want", [(TRIANGLE, 0, 10), (STAR, 0, 4), (STAR, 2, 4), (SLOW_RING, 0, 11), (SLOW_RING, 2, 11)]
)
def test_hand_drawn_optimum(topo, root, want):
    pk = pack(topo, range(topo.ranks), [root])
    assert pk.rate_Bps == pytest.approx(want * G, rel=1e-9)
    assert pk.bound_Bps == pytest.approx(want * G, rel=1e-9)
    # the trees' link loads respect every capacity and add up to the rate
    for (u, v), load in pk.loads.items():
        assert load <= topo.link(u, v)["bandwidth_Bps"] * (1 + 1e-9)
    assert sum(t.rate_Bps for t in pk.trees) == pytest.approx(want * G, rel=1e-9)


def test_slow_ring_uses_both_directions():
    # reaching 11 needs the slow link at its full 1 GB/s and 0 -> 1 at its full 10 GB/s
    pk = pack(SLOW_RING, range(4), [0])
    assert pk.loads[(0, 3)] == pytest.approx(1 * G)
    assert pk.loads[(0, 1)] == pytest.approx(10 * G)


def test_min_arborescence_matches_networkx():
    rng = np.random.default_rng(7)
    for n in (3, 5, 8):
        for _ in range(20):
            cost = rng.integers(1, 20, size=(n, n)).astype(float)
            parent = min_arborescence(cost, 0)
            d = nx.DiGraph()
            d.add_weighted_edges_from((u, v, cost[u, v]) for u in range(n) for v in range(1, n) if u != v)
            want = nx.minimum_spanning_arborescence(d).size(weight="weight")
            assert sum(cost[u, v] for v, u in enumerate(parent) if u >= 0) == pytest.approx(want)


def _gomory_hu_dgx1v():
    """Pairwise max-flow of dgx1v's links, independently: full-duplex links with one rate per
    direction make the directed max-flow the undirected one, all of it in one Gomory-Hu tree."""
    topo = T.dgx1v()
    g = nx.Graph()
    for u, v, d in topo.graph.edges(data=True):
        g.add_edge(u, v, capacity=d["bandwidth_Bps"] / 1e6)
    tree = nx.gomory_hu_tree(g)

    def flow(a, b):
        path = nx.shortest_path(tree, a, b)
        return min(tree[x][y]["weight"] for x, y in itertools.pairwise(path)) * 1e6

    return topo, flow


def _dgx1v_symmetries(topo):
    """The relabelings of dgx1v's ranks that map its links (rates, latencies, devices) onto themselves."""
    from networkx.algorithms import isomorphism

    g = topo.graph.copy()
    for v in g:
        g.nodes[v]["kind"] = "rank" if isinstance(v, int) else str(v).rstrip("0123456789")
    same = isomorphism.GraphMatcher(
        g,
        g,
        node_match=lambda a, b: a["kind"] == b["kind"],
        edge_match=lambda a, b: (a["bandwidth_Bps"], a["latency_s"]) == (b["bandwidth_Bps"], b["latency_s"]),
    )
    return [{u: v for u, v in m.items() if isinstance(u, int)} for m in same.isomorphisms_iter()]


@pytest.fixture(scope="module")
def dgx1v_flows():
    """dgx1v, its pairwise max-flow and its symmetries: computed once for the module."""
    topo, flow = _gomory_hu_dgx1v()
    symmetries = _dgx1v_symmetries(topo)
    assert len(symmetries) == 4  # the identity, the swap within PCIe pairs, the swap of the CPUs, both
    return topo, flow, symmetries


def _check_max_flow(dgx1v_flows, groups) -> set:
    """Every (group, root) of `groups`: the bound is the least max-flow from the root; the packing reaches it
    (packed once per class of (group, root) equal up to a symmetry: the same graph, the same packing)."""
    topo, flow, symmetries = dgx1v_flows
    packed_orbits = set()
    for group in groups:
        for root in group:
            want = min(flow(root, v) for v in group if v != root)
            assert broadcast_bound(topo, group, root) == pytest.approx(want, rel=1e-7), (group, root)
            orbit = min((tuple(sorted(m[v] for v in group)), m[root]) for m in symmetries)
            if orbit not in packed_orbits:
                packed_orbits.add(orbit)
                assert pack(topo, group, [root]).rate_Bps == pytest.approx(want, rel=1e-7), (group, root)
    return packed_orbits


def _subsets(sizes):
    return [group for k in sizes for group in itertools.combinations(range(8), k)]


# every subset of 3 to 8 ranks and every root in it, in two parts: the core takes the smallest groups, the
# largest and the whole machine; the slow part the 4 to 6 rank groups (most of the packings)
@pytest.mark.parametrize("sizes", [(3, 7, 8), pytest.param((4, 5, 6), marks=pytest.mark.slow)])
def test_every_dgx1v_subset_and_root_reaches_max_flow(dgx1v_flows, sizes):
    orbits = _check_max_flow(dgx1v_flows, _subsets(sizes))
    # sum over k of C(8, k) k pairs; no symmetry but the identity fixes a root: a quarter as many classes
    # (over both parts: 960 pairs, 240 classes)
    assert len(orbits) == sum(math.comb(8, k) * k for k in sizes) // 4


@pytest.mark.parametrize("group", [(0, 1, 4), (0, 3, 4, 5), (1, 2, 4, 7), (0, 2, 5, 6, 7), tuple(range(8))])
@pytest.mark.parametrize("transit", ["any", "devices"])
def test_packed_schedules_verify(group, transit):
    pk = pack(T.dgx1v(), group, [group[-1]], transit=transit)
    res = 2 * len(pk.trees)
    for s in (
        packed.broadcast(pk, 3, res),
        packed.reduce(pk, 3, res),
        packed.allreduce(pk, 3, res),
        packed.allreduce(pk, 3, res, overlap=False),
    ):
        verify(s)
        assert s.meta["ranks"] == list(group)


def test_allgather_and_reducescatter_verify():
    topo = T.dgx1v()
    pk = pack(topo, (0, 1, 4, 6), roots=(0, 1, 4, 6), transit="devices")
    verify(packed.allgather(pk, 2, 2 * len(pk.trees)))
    verify(packed.reducescatter(pk, 2, 2 * len(pk.trees)))
    # every rank's rate is at most its single-root bound
    assert pk.rate_Bps <= min(broadcast_bound(topo, (0, 1, 4, 6), r, transit="devices") for r in (0, 1, 4, 6)) * (
        1 + 1e-9
    )


def test_simulated_broadcast_near_size_over_rate():
    topo = T.dgx1v()
    # GPUs 0,1,4 on their own links: NVLink 0-1 (25) and 0-4 (50), PCIe beside: 25 + 12 = 37 GB/s into 1
    pk = pack(topo, (0, 1, 4), [0], transit="devices")
    assert pk.rate_Bps == pytest.approx(37 * G)
    k = 32
    s = packed.broadcast(pk, k, 1024)
    height = max(max(t.depth()) for t in pk.trees)
    steps = k + height - 1
    # pipeline: (k + height - 1) segments' time, plus each step's hop latency (NVLink 1 us, PCIe 2 us)
    want = GiB / pk.rate_Bps * steps / k + steps * 2e-6
    for mode in ("rounds", "events"):
        got = simulate(s, pk.topology, GiB, mode).time_s
        assert got >= GiB / pk.rate_Bps
        assert got == pytest.approx(want, rel=0.02), mode
    # all 8 GPUs: 27 trees of unequal weights share links; rounds is the per-step bound, events adds
    # the max-min sharing between trees (see the report): within 2 % and 8 % of the pipeline model
    pk = pack(topo, range(8), [0])
    s = packed.broadcast(pk, 16, 1024)
    height = max(max(t.depth()) for t in pk.trees)
    pipe = GiB / pk.rate_Bps * (16 + height - 1) / 16
    assert GiB / pk.rate_Bps <= simulate(s, pk.topology, GiB, "rounds").time_s <= pipe * 1.02
    assert GiB / pk.rate_Bps <= simulate(s, pk.topology, GiB, "events").time_s <= pipe * 1.08


@pytest.mark.parametrize("mode", ["rounds", "events"])
def test_explicit_routes_simulate_as_in_the_reference_simulator(mode):
    import sim_reference as reference

    # 0,1,4 with transit through idle GPUs and the PCIe switches: edges routed off the topology's own routes
    pk = pack(T.dgx1v(), (0, 1, 4), [0], transit="devices")
    assert any(len(path) > 2 for t in pk.trees for path in t.routes.values())
    for s in (
        packed.broadcast(pk, 4, 16),
        packed.allreduce(pk, 4, 16),
        packed.reducescatter(pack(T.dgx1v(), (0, 1, 4), roots=(0, 1, 4), transit="devices"), 2, 8),
    ):
        want = reference.simulate(s, pk.topology, 1e8, mode).time_s
        assert simulate(s, pk.topology, 1e8, mode).time_s == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("mode", ["rounds", "events"])
def test_two_paths_between_the_same_ranks_stay_apart(mode):

    # 0 and 1 joined through two switches of 10 GB/s each; half the data each way: 2x one path's time
    topo = _topo("two-paths", 2, [(0, "a", 10), ("a", 1, 10), (0, "b", 10), ("b", 1, 10)], ["a", "b"])
    s = make("broadcast", "two-paths", 2, 2, [step([Transfer(0, 1, (0,), COPY), Transfer(0, 1, (1,), COPY)])])
    n = 1e9
    alone = simulate(s, topo, n, mode).time_s  # both halves on the topology's one route
    s.meta["routes"] = {(0, 1, COPY, 0): [0, "a", 1], (0, 1, COPY, 1): [0, "b", 1]}
    split = simulate(s, topo, n, mode).time_s
    assert alone == pytest.approx(n / 10e9 + 2e-6)
    assert split == pytest.approx(n / 2 / 10e9 + 2e-6)
    s.meta["routes"] = {(0, 1, COPY, 0): [0, "a", "b", 1]}
    with pytest.raises(UsageError, match="not a path of links"):
        simulate(s, topo, n, mode)


def test_equation_8_by_hand():
    # BW_PCIe 12, BW_NVL 50 GB/s, 1 GB, T_dpa 2 ms: D_PCIe = (1e9 12e9 - 2e-3 12e9 50e9) / 62e9
    d_pcie, d_nvl, t = B.hybrid_split(1e9, 12e9, 50e9, 2e-3)
    assert d_pcie == pytest.approx(10.8e18 / 62e9)
    assert d_nvl == pytest.approx(1e9 - 10.8e18 / 62e9)
    assert t == pytest.approx(2e-3 + d_pcie / 12e9) and t == pytest.approx(d_nvl / 50e9)
    # no switching cost: the two links add up; a switch costlier than the gain: NVLink alone
    assert B.hybrid_split(1e9, 12e9, 50e9, 0.0)[2] == pytest.approx(1e9 / 62e9)
    d_pcie, _, t = B.hybrid_split(1e9, 12e9, 50e9, 1.0)
    assert d_pcie == 0 and t == pytest.approx(1e9 / 50e9)
    with pytest.raises(UsageError):
        B.hybrid_split(1e9, 0.0, 50e9)


def test_hybrid_broadcast_on_dgx1v():
    topo = T.dgx1v()
    # GPUs 0,1,2: NVLink 0-1, 0-2 (25 each), 1-2 (50): 50 GB/s from 0; PCIe: 0 -> 1 -> 2 at 12 GB/s
    h = B.hybrid_broadcast(topo, (0, 1, 2), 0, 1e9, 0.0)
    assert h.nvlink_only_Bps == pytest.approx(50 * G)
    assert h.pcie.rate_Bps == pytest.approx(12 * G)
    assert h.gain_Bps == pytest.approx(12 * G)
    s = packed.hybrid_broadcast(h.nvlink, h.pcie, h.pcie_bytes / 1e9, 32, 512)
    verify(s)
    t = simulate(s, h.nvlink.topology, 1e9, "rounds").time_s
    assert t == pytest.approx(1e9 / (62 * G) * (32 + 1) / 32, rel=0.02)


def test_nccl_rings_on_dgx1v():
    topo = T.dgx1v()
    # the appendix: GPUs 0,1,3 give two NVLink rings; 0,1,4 have no NVLink between 1 and 4: PCIe
    rings = B.nccl_rings(topo, (0, 1, 3))
    assert rings.kind == "nvlink" and len(rings.rings) == 2 and rings.rate_Bps == pytest.approx(50 * G)
    rings = B.nccl_rings(topo, (0, 1, 4))
    assert rings.kind == "pcie"
    assert rings.rate_Bps == pytest.approx(10 * G)  # 1 -> 4 and 4 -> 0 cross QPI (10 GB/s) once each way


def test_single_hop_is_two_shot_mesh_and_beats_ring_at_small_sizes():
    link = Link(1e-6, 150e9)
    times = B.single_hop_vs_nccl(16, [1e3, 1e9], link)
    # 2 alpha vs the ring's 2 (p - 1) alpha at 1 KB: 15x; equal bandwidth terms (2 (p-1)/p n beta)
    assert times["single-hop"][0] == pytest.approx(2e-6 + 2 * 15 / 16 * 1e3 / 150e9)
    assert times["ring"][0] / times["single-hop"][0] == pytest.approx(
        (30e-6 + 2 * 15 / 16 * 1e3 / 150e9) / (2e-6 + 2 * 15 / 16 * 1e3 / 150e9)
    )
    assert times["single-hop"][1] <= times["ring"][1] <= times["double-binary-tree"][1]


@pytest.mark.parametrize("degree", [1, 2, 3])
def test_micro_benchmark_patterns_verify(degree):
    topo = T.dgx1v()
    peers = P.DGX1V_FAN_PEERS[:degree]
    for s, sub in (
        P.fan_in_forward(topo, peers, 4, 0),
        P.fan_in_reduce_forward(topo, peers, 4, 0),
        P.fan_out_forward(topo, 5, 4, (0, 6, 7)[:degree]),
        P.chain_forward(topo, P.DGX1V_CHAIN[: degree + 1]),
        P.chain_reduce_forward(topo, P.DGX1V_CHAIN[: degree + 1]),
        P.chain_reduce_broadcast(topo, P.DGX1V_CHAIN[: degree + 1]),
    ):
        verify(s)
        assert sub.ranks == s.ranks


def test_chain_forward_throughput_by_hand():
    # 0 -> 1 -> 3 over NV1 links (25 GB/s): k segments take (k + 1) steps of (n/k / 25e9 + 1 us)
    s, sub = P.chain_forward(T.dgx1v(), (0, 1, 3), segments=4)
    n = 1e8
    want = n / (5 * (n / 4 / 25e9 + 1e-6))
    assert P.throughput_Bps(s, sub, [n])[0] == pytest.approx(want)
    assert P.throughput_Bps(s, sub, [n], "events")[0] == pytest.approx(want)


def test_bad_groups_are_usage_errors():
    topo = T.dgx1v()
    with pytest.raises(UsageError):
        pack(topo, (0, 0, 1))
    with pytest.raises(UsageError):
        pack(topo, (0, 9))
    with pytest.raises(UsageError):
        pack(topo, (0, 1), [3])
    with pytest.raises(UsageError):
        pack(topo, (0, 1), links="infiniband")
    assert math.isinf(pack(topo, (3,)).rate_Bps)
