"""NCCL's model to the letter: each test quotes the line of NCCL 2.30.7 (tag v2.30.7-1) it follows and
computes the expected number by hand from that line."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collperf.export.tuner_model import choices
from collperf.model.nccl import constants as C
from collperf.model.nccl import search_graphs, select, tuning_table
from collperf.model.nccl.channels import channels_run, comm_channels, nvls_channels
from collperf.model.nccl.tuning import entry_times_us
from collperf.model.hardware.catalogue import CATALOGUE

KIB, MIB = 1 << 10, 1 << 20


def h100(nodes=2, **changes):
    return CATALOGUE["dgx-h100"].with_(nodes=nodes, **changes)


def t4(nodes=2, **changes):
    return CATALOGUE["pcie-t4"].with_(nodes=nodes, **changes)


def switch_bytes(system, lo=1e5, hi=1e8) -> float:
    """The size where allreduce's choice last changes below `hi` (bisection on the model)."""
    last = select("allreduce", [hi], system).choice[0]
    while hi - lo > 1:
        mid = (lo + hi) / 2
        if select("allreduce", [mid], system).choice[0] == last:
            hi = mid
        else:
            lo = mid
    return hi


# ---- 1. tuning.cc:336 `if (a == NCCL_ALGO_TREE && comm->maxTreePattern == NCCL_TOPO_PATTERN_TREE) busBw *= .85;`
def test_tree_pattern_takes_085_on_two_dgx_h100():
    # search.cc:1215-1219: on sm90+ the simpler tree is tried when the balanced tree has no path; with a
    # NIC per GPU it is what the search keeps
    s = h100()
    assert search_graphs(s)["tree"].pattern == "tree"
    # tree graph 8 x 48; tree allreduce min(384 x .92, 8 x perChMaxTreeBw[Hopper][2 nodes] 41.4) = 331.2
    tree_bus = min(8 * 48 * 0.92, 8 * 41.4)
    ll = min(tree_bus / 3.8, 39.0) * 0.85 * 0.5  # LL: min(/3.8, llMaxBw[Intel][2 nodes]) then x .85
    ll128 = min(tree_bus * 120 / 128, 8 * 36.7) * 0.85 * 0.5  # LL128: perChMaxTreeLL128Bw[Hopper][2 nodes]
    t = tuning_table("allreduce", s)
    assert t.bandwidth_GBps[("tree", "LL")] == pytest.approx(ll)
    assert t.bandwidth_GBps[("tree", "LL128")] == pytest.approx(ll128)
    # 64 KiB: log2(1024) = 10, treeCorrectionFactor[LL][10] = .6; 1 MiB: [LL128][14] = .6
    t_ll = 25.2 + 65536 / (1000 * ll * 0.6)
    t_ll128 = 48.5 + MIB / (1000 * ll128 * 0.6)
    pred = select("allreduce", [64 * KIB, MIB], s)
    assert pred.choice == ["tree/LL", "tree/LL128"]
    assert pred.time_s * 1e6 == pytest.approx([t_ll, t_ll128])
    assert pred.time_s * 1e6 == pytest.approx([31.79, 62.51], rel=0.01)  # NCCL 2.30.7 on this system
    # the switch to nvls-tree/Simple: 48.5 + n / (1000 x ll128 x .6) = 66.8 + n / (1000 x nvls-tree bw)
    nvls = t.bandwidth_GBps[("nvls-tree", "Simple")]
    n = (66.8 - 48.5) / (1 / (1000 * ll128 * 0.6) - 1 / (1000 * nvls))
    assert switch_bytes(s) == pytest.approx(n, abs=2)
    assert switch_bytes(s) == pytest.approx(1_968_826, rel=0.02)


def test_one_gpu_per_node_is_pattern_tree_and_ampere_stays_balanced():
    # search.cc:1133 `if (ngpus == 1 && graph->pattern != NCCL_TOPO_PATTERN_RING) graph->pattern = ..._TREE;`
    assert search_graphs(t4())["tree"].pattern == "tree"
    # "Try a simpler tree" is sm90+ only (search.cc:1216): two DGX A100 keep the balanced tree, no x .85
    a = CATALOGUE["dgx-a100"].with_(nodes=2)
    assert search_graphs(a)["tree"].pattern == "balanced-tree"
    g = search_graphs(a)["tree"]
    bus = min(g.n_channels * g.bw_intra * 0.92, g.n_channels * 23.6)  # perChMaxTreeBw[Ampere][2 nodes]
    assert tuning_table("allreduce", a).bandwidth_GBps[("tree", "Simple")] == pytest.approx(bus * 0.5)


# ---- 2. tuning.cc:647-648 `nBytes / (comm->nChannels * comm->nRanks) >= 64` -> lat *= 1.4
def test_ring_plateau_reads_comm_channels():
    s = h100()
    graphs = search_graphs(s)
    # connect.cc:460 `comm->nChannels = std::min(MAXCHANNELS, nChannels * 2)`: 8 -> 16; connect.cc:481 does
    # not double again (16 is not < 16)
    assert graphs["ring"].n_channels == 8 and comm_channels(s, graphs) == 16
    t = tuning_table("allreduce", s)
    i = [k for k in t.entries()].index(("ring", "Simple"))
    edge = 64 * 16 * 16  # 16384 B, not the graph's 64 x 8 x 16
    lat, _ = entry_times_us(t, s, np.array([edge - 1, edge], dtype=float))
    assert lat[i] == pytest.approx([131.6, 131.6 * 1.4])


def test_sm90_multi_node_doubles_channels_again_below_16():
    # connect.cc:481-483: minCompCap >= 90, nNodes > 1, ring bwIntra > 45.0, nChannels < 16 -> 2 x
    # six 400 Gb/s NICs: a ring of 6 x 48 (ncclTopoDupChannels keeps > 4 channels below 50 on sm90)
    s = h100(nics_per_node=6)
    graphs = search_graphs(s)
    ring = graphs["ring"]
    assert (ring.n_channels, ring.bw_intra) == (6, 48.0)
    assert comm_channels(s, graphs) == 24  # 6 -> 12 (connect.cc:460) -> 24
    # two NICs: 2 x 48 is duplicated by the search to 4 x 24 (bwIntra 24, not > 45): only 8
    s2 = h100(nics_per_node=2)
    g2 = search_graphs(s2)
    assert (g2["ring"].n_channels, g2["ring"].bw_intra, comm_channels(s2, g2)) == (4, 24.0, 8)
    # below sm90 only connect.cc:460's doubling
    a = CATALOGUE["dgx-a100"].with_(nodes=2)
    ga = search_graphs(a)
    assert comm_channels(a, ga) == 2 * min(ga["ring"].n_channels, ga["tree"].n_channels)


# ---- 3. tuning.cc:643-644 NVLS-tree correction `comm->minCompCap >= 100 && comm->cpuArch == NCCL_TOPO_CPU_ARCH_X86`
def test_nvls_tree_correction_only_on_x86():
    x86 = CATALOGUE["dgx-b200"].with_(nodes=2)
    arm = x86.with_(cpu_arch="arm")  # a Grace node (GB200)
    size = np.array([float(MIB)])  # log2(16384) = 14: Simple factor .5
    t = tuning_table("allreduce", x86)
    i = t.entries().index(("nvls-tree", "Simple"))
    _, bw_x86 = entry_times_us(t, x86, size)
    _, bw_arm = entry_times_us(tuning_table("allreduce", arm), arm, size)
    assert bw_arm[i] == pytest.approx(MIB / (1000 * t.bandwidth_GBps[("nvls-tree", "Simple")]))
    assert bw_x86[i] == pytest.approx(bw_arm[i] / C.TREE_CORRECTION[2][14])


# ---- 4. tuning.cc:518-535: LL128 per graph
def test_ll128_one_gpu_per_node_is_enabled():
    # typeIntra PATH_LOC (0) <= PATH_NVB (2); sm75 >= 70; typeInter PIX <= PXB
    t = tuning_table("allreduce", t4())
    assert search_graphs(t4())["tree"].path_intra == "LOC"
    assert t.bandwidth_GBps[("ring", "LL128")] > 0 and t.bandwidth_GBps[("tree", "LL128")] > 0


def test_ll128_nic_path_limits_by_generation():
    # before sm90: `pEnable &= (graphs[a]->typeInter <= PATH_PXB)`; sm90+: `<= PATH_PXN`
    a100 = CATALOGUE["dgx-a100"].with_(nodes=2)
    assert tuning_table("allreduce", a100.with_(nic_path="PXB")).bandwidth_GBps[("ring", "LL128")] > 0
    assert tuning_table("allreduce", a100.with_(nic_path="PXN")).bandwidth_GBps[("ring", "LL128")] == 0
    assert tuning_table("allreduce", h100(nic_path="PXN")).bandwidth_GBps[("ring", "LL128")] > 0
    assert tuning_table("allreduce", h100(nic_path="PHB")).bandwidth_GBps[("ring", "LL128")] == 0
    # `pEnable &= (graphs[a]->typeIntra <= PATH_NVB)`: PCIe GPUs (PXB) get none
    p = CATALOGUE["pcie-p2p"]
    assert all(pr != "LL128" for _, pr in tuning_table("allreduce", p).enabled())


# ---- 5. init.cc:980-981 `graphs[] = {treeGraph, ringGraph, collNetDirect, collNetChain, nvls, nvls, treeGraph}`
def test_pat_is_priced_on_the_tree_graph():
    s = t4(protocols=("Simple",))
    graphs = search_graphs(s)
    assert graphs["tree"].bw_intra != graphs["ring"].bw_intra
    # allgather PAT on 2 nodes: bw = bwIntra (nNodes <= 2) of the tree graph x nChannels x .75, no algbw ratio
    t = tuning_table("allgather", s)
    assert t.bandwidth_GBps[("pat", "Simple")] == pytest.approx(
        graphs["tree"].n_channels * graphs["tree"].bw_intra * 0.75
    )


# ---- 6. search.cc:1279-1283 `else if (tmpGraph.bwIntra == graph->bwIntra && tmpGraph.bwIntra < tmpGraph.bwInter * 2)`
def test_tree_pass_two_with_one_gpu_per_node():
    s = t4(protocols=("Simple",))
    tree = search_graphs(s)["tree"]
    # NIC 50 Gb/s = 6.25 GB/s -> speed 6 (ladder); pass 2 raises bwIntra 6 -> 7 -> 9 -> 10 -> 12 (= 2 x 6)
    assert (tree.n_channels, tree.bw_inter, tree.bw_intra) == (1, 6.0, 12.0)
    # tree/Simple: min(12 x .92, 1 x perChMaxTreeBw[Volta][2 nodes] 18.5) x .85 (pattern TREE) x .5 = 4.692
    bw = min(12 * 0.92, 18.5) * 0.85 * 0.5
    assert tuning_table("allreduce", s).bandwidth_GBps[("tree", "Simple")] == pytest.approx(bw)
    # latency 8.4 + 2 x (0 + log2(2) x (NET tree Simple 14)) = 36.4; 64 KiB: factor[Simple][10] = .6
    t = 36.4 + 65536 / (1000 * bw * 0.6)
    pred = select("allreduce", [64 * KIB], s)
    assert pred.choice == ["tree/Simple"]
    assert pred.time_s[0] * 1e6 == pytest.approx(t) and t == pytest.approx(59.7, rel=0.02)


# ---- 7. search.cc:1236-1241 "Try again with crossNic if permitted" (NCCL_CROSS_NIC default 2, search.cc:16)
def test_cross_nic_ring_on_two_dgx_h100():
    s = h100()
    ring = search_graphs(s)["ring"]
    # NVLink total 18 x 20.6 = 370.8: a plain ring at 48 fits 7 channels (7 x 48 = 336); crossNic lets
    # each GPU send to the network over its own NIC once in 8 channels: 7 x 48 on NVLink, 8 channels
    assert (ring.n_channels, ring.bw_intra, ring.cross_nic) == (8, 48.0, True)
    # one NIC per node: no crossNic (system->nodes[NET].count > 1 is false), NIC-bound anyway
    assert not search_graphs(h100(nics_per_node=1))["ring"].cross_nic


# ---- 8. topo.h:274-281 ncclTopoNVLinkBw; device.h:91 `#define MAXCHANNELS 64`; init.cc:1177 MAXCHANNELS / 2
def test_constants_nvlink_per_link_and_channel_limits():
    assert C.nvlink_bw_per_link(86) == 12.0  # `cudaCompCap == 86 ? SM86_NVLINK_BW`
    assert C.nvlink_bw_per_link(87) == C.nvlink_bw_per_link(89) == 20.0  # `>= 80 ? SM80_NVLINK_BW`
    assert (C.nvlink_bw_per_link(90), C.nvlink_bw_per_link(100), C.nvlink_bw_per_link(70)) == (20.6, 40.1, 20.0)
    assert C.nvlink_bw_per_link(50) == 20.0  # the fallback is SM80's
    assert C.MAX_CHANNELS == 64 and C.MAX_RING_CHANNELS == 32
    ada = CATALOGUE["dgx-a100"].with_(compute_capability=89)
    assert ada.nccl_gpu_bw == 12 * 20.0


# ---- 9. the tuner rules run what NCCL runs by default
@pytest.mark.parametrize("cluster, ring_tree, nvls_tree", [("dgx-h100", 16, 16), ("dgx-b200", 16, 32)])
def test_tuner_rules_carry_nccls_channels(cluster, ring_tree, nvls_tree):
    # enqueue.cc:2070 `int nc = comm->nChannels;` for ring/tree; enqueue.cc:2089 `nc = comm->nvlsChannels;`
    # nvls.cc:155 NVLS_NCHANNELS_SM90 16; nvls.cc:173-174 sm100 on 2 nodes with NICs >= 48 GB/s: 32
    s = CATALOGUE[cluster].with_(nodes=2)
    got = {(c.algorithm, c.channels) for c in choices(s, collectives=("allreduce",)) if c.algorithm != "default"}
    assert ("ring", ring_tree) in got and ("tree", ring_tree) in got and ("nvls_tree", nvls_tree) in got
    assert nvls_channels(s) == nvls_tree
    assert channels_run("nvls", s, search_graphs(s)) == min(nvls_tree, ring_tree)


# ---- properties of the search stand-in over many systems --------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    cluster=st.sampled_from(["dgx-a100", "dgx-h100", "dgx-b200", "dgx-1v", "pcie-t4"]),
    nodes=st.integers(1, 16),
    nics=st.integers(1, 8),
    nic_gbps=st.sampled_from([50.0, 100.0, 200.0, 400.0, 800.0]),
)
def test_graphs_stay_within_their_links(cluster, nodes, nics, nic_gbps):
    s = CATALOGUE[cluster].with_(nodes=nodes, nics_per_node=nics, nic_Gbps=nic_gbps)
    graphs = search_graphs(s)
    ring, tree = graphs["ring"], graphs["tree"]
    g = s.gpus_per_node
    assert 1 <= ring.n_channels <= C.MAX_RING_CHANNELS
    assert 1 <= comm_channels(s, graphs) <= C.MAX_CHANNELS
    # NVLink load per GPU: n x speed, or (n - n // g) x speed when a crossNic ring sends over its own NIC
    # (ncclTopoDupChannels keeps n x speed, so the duplicated ring stays within it too)
    if g > 1 and s.nvlink_links:
        load = (ring.n_channels - (ring.n_channels // g if ring.cross_nic else 0)) * ring.bw_intra
        assert load <= s.nccl_gpu_bw + 1e-6
    # pass 2 never takes a tree's bwIntra past the first rung at or above twice bwInter
    assert tree.bw_intra >= tree.bw_inter and tree.n_channels == ring.n_channels
    if nodes > 1:
        below = [x for x in C.speed_ladder(s.compute_capability, True) if x < 2 * tree.bw_inter]
        assert (
            tree.bw_intra
            <= min([x for x in C.speed_ladder(s.compute_capability, True) if x >= 2 * tree.bw_inter] or [max(below)])
            + 1e-9
        )
