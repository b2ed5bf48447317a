"""The NCCL expectation model: NCCL's table and choice by hand from tuning.cc's constants
(reference/nccl-tuning-model.md), the two-level bounds by hand, the system catalogue, and the
validation against the real logs (benchmarks/nccl_model_vs_logs.py) with the issue's targets."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collperf.errors import UsageError
from collperf.model.bounds import two_level_bound
from collperf.model.nccl import Graph, expect, fit_system, select, system_bound, tuning_table
from collperf.model.hardware.catalogue import CATALOGUE, get_system, system_for_gpu

GIB, MIB = 1 << 30, 1 << 20


def a100():
    return system_for_gpu("NVIDIA A100-SXM4-80GB", nodes=1, gpus_per_node=8)


# ---- the table, by hand ------------------------------------------------------------------------
def test_a100_one_node_graph_is_twelve_channels_of_twenty():
    # 12 NVLink3 x SM80_NVLINK_BW 20 = 240 GB/s; ladder 40 fits 6 channels (6 x 40 = 240 = totalBw),
    # ncclTopoDupChannels (bw >= 25) doubles to 12 channels of 20.
    g = tuning_table("allreduce", a100()).graphs["ring"]
    assert (g.n_channels, g.bw_intra) == (12, 20.0)


def test_a100_allreduce_table_by_hand():
    t = tuning_table("allreduce", a100())
    lat, bw = t.latency_us, t.bandwidth_GBps
    # Ring LL: base 6.6 + nsteps 14 x NVLink LL 0.6 = 15.0 us; bus min(llMaxBw 87.7, 0.5 x 240) = 87.7,
    # algbw = 87.7 x 8/14 = 50.114
    assert lat[("ring", "LL")] == pytest.approx(15.0)
    assert bw[("ring", "LL")] == pytest.approx(87.7 * 8 / 14)
    # Ring LL128: 14.0 + 14 x 1.9 = 40.6; bus min(0.92 x 240, 12 x 20) = 220.8 -> x 8/14
    assert lat[("ring", "LL128")] == pytest.approx(40.6)
    assert bw[("ring", "LL128")] == pytest.approx(220.8 * 8 / 14)
    # Ring Simple: 8.4 + 14 x 3.4 = 56.0; 240 x 8/14 = 137.14
    assert lat[("ring", "Simple")] == pytest.approx(56.0)
    assert bw[("ring", "Simple")] == pytest.approx(240 * 8 / 14)
    # Tree LL: 6.8 + 2 x (7 x 0.6) = 15.2; bus min(0.92 x 240, 12 x 24) = 220.8, LL: /3.8 = 58.1 (< 87.7), x 0.5
    assert lat[("tree", "LL")] == pytest.approx(15.2)
    assert bw[("tree", "LL")] == pytest.approx(220.8 / 3.8 * 0.5)
    # Tree LL128 on one node: 220.8 x 7/9 = 171.7 (< 12 x 20), x 0.5
    assert bw[("tree", "LL128")] == pytest.approx(220.8 * 7 / 9 * 0.5)
    # A100 has no NVLS; one node has no CollNet; PAT is never an allreduce
    for a in ("nvls", "nvls-tree", "collnet-direct", "collnet-chain", "pat"):
        assert all(bw[(a, p)] == 0 for p in ("LL", "LL128", "Simple"))


def test_a100_allreduce_choice_by_hand():
    sizes = [8, MIB, 4 * MIB, GIB]
    pred = select("allreduce", sizes, a100())
    # 8 B: ring/LL 15.0 us beats tree/LL 15.2 us
    assert pred.choice[0] == "ring/LL" and pred.time_s[0] * 1e6 == pytest.approx(15.0 + 8 / 50114.29, rel=1e-6)
    assert pred.choice[0] and pred.runner_up_algorithm[0] == "tree"
    # 1 MiB: ring/LL 15 + 1048576 / 50114.3 = 35.92 us (LL128: 40.6 + 8.31 = 48.9; tree LL128 with
    # the 0.6 correction at log2(1M >> 6) = 14: 31.5 + 20.35 = 51.9)
    assert pred.choice[1] == "ring/LL" and pred.time_s[1] * 1e6 == pytest.approx(35.92, abs=0.01)
    # 4 MiB: LL 98.69, LL128 40.6 + 33.24 = 73.84, Simple 56 + 30.58 = 86.58 -> ring/LL128, runner-up Simple
    assert pred.choice[2] == "ring/LL128" and pred.time_s[2] * 1e6 == pytest.approx(73.84, abs=0.01)
    assert (pred.runner_up_algorithm[2], pred.runner_up_protocol[2]) == ("ring", "Simple")
    # 1 GiB: Simple 56 + 1073741824 / 137142.86 = 7885.4 us, bandwidth-bound by its own terms
    assert pred.choice[3] == "ring/Simple" and pred.time_s[3] * 1e6 == pytest.approx(7885.4, abs=0.1)
    # 1 MiB: 15 us latency < 20.92 us bandwidth term; 4 MiB LL128: 40.6 us latency > 33.24 us
    assert list(pred.regime) == ["latency", "bandwidth", "latency", "bandwidth"]
    assert pred.latency_s[3] == pytest.approx(56e-6)


def test_h100_two_nodes_nvls_tree_by_hand():
    h100 = system_for_gpu("NVIDIA H100 80GB HBM3", nodes=2, gpus_per_node=8)
    graphs = {
        "ring": Graph(8, 45.0, 45.0),
        "tree": Graph(8, 48.0, 45.0),
        "collnet": Graph(8, 45.0, 45.0),
        "nvls": Graph(8, 40.0, 48.0, same_channels=False),
    }
    t = tuning_table("allreduce", h100, graphs)
    # NVLSTree: intra 40 x 0.85 x 7/8 x 2 = 59.5, inter 48 x 2 = 96, cap perChMaxNVLSTreeBw[Hopper][2] 57.7
    # -> 8 x 57.7 = 461.6 bus, x 16/30 algbw; latency NVLink 25 + 2 x log2(2) x NET 20.9 = 66.8 us
    assert t.bandwidth_GBps[("nvls-tree", "Simple")] == pytest.approx(461.6 * 16 / 30)
    assert t.latency_us[("nvls-tree", "Simple")] == pytest.approx(66.8)
    # Tree LL: 6.8 + 2 x ((8-1) x 0.6 + 1 x NET 5.0) = 25.2
    assert t.latency_us[("tree", "LL")] == pytest.approx(25.2)
    # NVLS alone needs CollNet on several nodes; NVLSTree is what runs
    assert t.bandwidth_GBps[("nvls", "Simple")] == 0
    big = select("allreduce", [16 * GIB], h100, t)
    assert big.choice == ["nvls-tree/Simple"]
    # Ring Simple on 2 nodes: 8.4 + 28 x max(NVLink 3.4, 3 x 1 us net overhead) + 2 x NET 14 = 131.6 us,
    # times 1.4 (plateau) once the per-channel-per-rank share is >= 64 B
    assert t.latency_us[("ring", "Simple")] == pytest.approx(131.6)
    r = select("allreduce", [8 * 16 * 64], h100, t)
    lat_ring = 131.6 * 1.4
    assert r.runner_up_time_s[0] > 0 and lat_ring == pytest.approx(184.24)


def test_broadcast_is_ring_only_and_allgather_has_no_tree():
    t = tuning_table("broadcast", a100())
    assert {a for a, _ in t.enabled()} == {"ring"}
    # Ring broadcast with same channels: base + one hop; algbw = bus x n/n
    assert t.latency_us[("ring", "Simple")] == pytest.approx(8.4 + 3.4)
    assert t.bandwidth_GBps[("ring", "Simple")] == pytest.approx(240.0)
    assert "tree" not in {a for a, _ in tuning_table("allgather", a100()).enabled()}


def test_protocols_and_pat():
    t4 = system_for_gpu("Tesla T4", nodes=4).with_(protocols=("Simple",))  # as aws-ofi-nccl sets it
    t = tuning_table("allgather", t4)
    assert {p for _, p in t.enabled()} == {"Simple"}  # aws-ofi-nccl sets NCCL_PROTO=simple
    assert ("pat", "Simple") in t.enabled()  # one GPU per node
    # PAT: base 8 + log2(4) x (NET tree Simple 14 / 3.5) + 4 x 2.8 = 8 + 8 + 11.2 = 27.2 us
    assert t.latency_us[("pat", "Simple")] == pytest.approx(27.2)
    old = t4.with_(nccl_version="2.12.7")
    assert ("pat", "Simple") not in tuning_table("allgather", old).enabled()  # PAT appeared in 2.23
    pcie = get_system("pcie-2080ti")
    assert "LL128" not in {p for _, p in tuning_table("allreduce", pcie).enabled()}  # LL128 needs NVLink


# ---- bounds, by hand ---------------------------------------------------------------------------
def test_two_level_bound_h100_by_hand():
    # 2 nodes x 8, 8 x 400 Gb/s = 400 GB/s per node: allreduce node-level 2(2-1)/2 x S / 400e9;
    # NVLS intra 7/8 x S / 450e9 is smaller, so the network binds: 1 GiB -> 2.684 ms;
    # peak busbw = 400e9 x 2(16-1)/16 = 750e9
    b = two_level_bound("allreduce", [GIB], 2, 8, 450e9, 400e9, in_switch_reduction=True)
    assert b.time_s[0] == pytest.approx(GIB / 400e9)
    assert b.intra_s[0] == pytest.approx(GIB * 7 / 8 / 450e9)
    assert b.binding == ["network"]
    assert b.peak_busbw_Bps == pytest.approx(750e9)
    # without in-switch reduction the intra phase is 2 x 7/8 S / 450e9 = 3.48 ms > 2.68: intra binds
    nb = two_level_bound("allreduce", [GIB], 2, 8, 450e9, 400e9)
    assert nb.binding == ["intra-node"] and nb.time_s[0] == pytest.approx(GIB * 14 / 8 / 450e9)


def test_two_level_bound_allgather_and_flat():
    # allgather 4 nodes x 8, node network 200e9: (3/4) S / 200e9; intra 7/8 S / 300e9 is smaller
    b = two_level_bound("allgather", [MIB], 4, 8, 300e9, 200e9)
    assert b.time_s[0] == pytest.approx(MIB * 0.75 / 200e9)
    assert b.peak_busbw_Bps == pytest.approx(200e9 / 0.75 * 31 / 32)
    # one node: the flat Patarasuk-Yuan bound, 2(p-1)/p S / B -> peak busbw = B
    one = two_level_bound("allreduce", [GIB], 1, 8, 300e9, 25e9)
    assert one.peak_busbw_Bps == pytest.approx(300e9)
    # PCIe through host memory: allreduce 2 GPUs, 2(p-1) S cross the bridge: 15.75e9 / 2 busbw
    pc = system_bound("allreduce", [GIB], get_system("pcie-2080ti"))
    assert pc.binding == ["host bridge"] and pc.peak_busbw_Bps == pytest.approx(15.75e9 / 2)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["allreduce", "allgather", "reducescatter", "broadcast", "reduce"]),
    st.sampled_from(sorted(CATALOGUE)),
    st.integers(1, 4),
    st.floats(1e3, 1e10),
)
def test_expectation_never_beats_the_bound(collective, name, nodes, size):
    system = get_system(name, nodes=nodes)
    if system.ranks < 2:
        return
    pred = expect(collective, [size], system)
    assert pred.time_s[0] >= system_bound(collective, [size], system).time_s[0] * (1 - 1e-12)
    assert pred.time_s[0] <= pred.runner_up_time_s[0] + 1e-15 or pred.regime[0] == "bound"


# ---- catalogue ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text,name",
    [
        ("NVIDIA A100-SXM4-80GB", "dgx-a100"),
        ("A100-SXM4-40GB", "dgx-a100"),
        ("NVIDIA H100 80GB HBM3", "dgx-h100"),
        ("NVIDIA B200", "dgx-b200"),
        ("NVIDIA GeForce RTX 2080 Ti", "pcie-2080ti"),
        ("Tesla T4", "pcie-t4"),
        ("Tesla V100-SXM2-32GB", "dgx-1v"),
    ],
)
def test_gpu_model_maps_to_a_system_with_provenance(text, name):
    s = system_for_gpu(text, nodes=2, overrides={"nics_per_node": 4})
    assert s.name == name and s.nodes == 2
    assert s.provenance["gpu"] == "from GPU model in device lines"
    assert s.provenance["nics_per_node"] == "user override"
    assert s.provenance["nodes"].startswith("from node count")
    assert s.provenance["nic_Gbps"].startswith("default for")


def test_bad_inputs_are_usage_errors():
    with pytest.raises(UsageError, match="not in the parts table"):
        system_for_gpu("Radeon RX 7900 XTX")
    with pytest.raises(UsageError, match="unknown system value"):
        a100().with_(nics=3)
    with pytest.raises(UsageError, match="point-to-point"):
        tuning_table("alltoall", a100())
    with pytest.raises(UsageError, match="sizes"):
        expect("allreduce", [-1], a100())


def test_alltoall_from_link_rates_by_hand():
    h = system_for_gpu("NVIDIA H100 80GB HBM3", nodes=2, gpus_per_node=8)
    pred = expect("alltoall", [GIB], h)
    # off-node share 8/16 of S over the NIC share 8 x 50e9 / 8 = 50e9; on-node 7/16 S over 450e9
    assert pred.bandwidth_s[0] == pytest.approx(GIB * 0.5 / 50e9)
    assert pred.algorithm[0] == "p2p"


# ---- the real logs ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bench():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "nccl_model_vs_logs.py"
    spec = importlib.util.spec_from_file_location("nccl_model_vs_logs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def alone(bench):
    return bench.hardware_alone()


MEETS = [
    "01_superbench-a100x8-allreduce.txt",
    "12_pcie-2080ti-x2-broadcast.txt",
    "14_h100-ib400-2node-16gpu-allreduce.txt",
]
MISSES = {  # issue target 15 %; figures at the time of writing, kept from getting worse
    "02_superbench-a100x8-allgather.txt": 0.25,  # slow mid-size ramp NCCL's model does not have
    "09_aws-eks-efa-t4-2node-allreduce.txt": 0.55,  # g4dn.metal (100 Gb/s), no GDR: 25 Gb/s measured
    "10_pcie-2080ti-x2-allreduce.txt": 0.34,  # host-staged ring: the duplex cost is not known from hardware
    "19_lambda-b200-2node-16gpu-allreduce.txt": 0.30,  # 1-128 MiB slower than NCCL's model (pipeline)
}


@pytest.mark.parametrize("name", MEETS)
def test_hardware_alone_within_15_percent(alone, name):
    assert alone[name]["median"] <= 0.15


@pytest.mark.parametrize("name", sorted(MISSES))
def test_hardware_alone_known_misses_do_not_get_worse(alone, name):
    assert alone[name]["median"] <= MISSES[name]


@pytest.mark.parametrize("name", sorted(MISSES))
@pytest.mark.xfail(strict=True, reason="the 15 % target on every sample is not met yet; see the benchmark")
def test_hardware_alone_issue_target_on_misses(alone, name):
    assert alone[name]["median"] <= 0.15


@pytest.mark.parametrize(
    "name", ["14_h100-ib400-2node-16gpu-allreduce.txt", "19_lambda-b200-2node-16gpu-allreduce.txt"]
)
def test_measured_busbw_within_the_bound(alone, name):
    r = alone[name]
    assert r["measured_busbw"] <= r["bound_busbw"]
    assert r["bound_busbw"] == pytest.approx(750e9)  # 8 x 400 Gb/s per node, 16 ranks


def test_cross_collective(bench):
    out = bench.cross_collective()
    a100_pair = out[("01_superbench-a100x8-allreduce.txt", "02_superbench-a100x8-allgather.txt")]
    pcie_pair = out[("10_pcie-2080ti-x2-allreduce.txt", "12_pcie-2080ti-x2-broadcast.txt")]
    # issue target 10 %; measured 9.3 % and 8.0 % at the time of writing (10.9 % for 01 -> 02 with one
    # overhead for every protocol)
    assert a100_pair["median"] <= 0.10
    assert pcie_pair["median"] <= 0.10
    assert a100_pair["fit"].median_abs_error <= 0.05 and pcie_pair["fit"].median_abs_error <= 0.05


def test_fit_recovers_a_known_scale():
    # a synthetic log made by the model itself with 0.8 x bandwidth and 12 us overhead: the fit returns them
    truth = a100().with_(bw_scale=0.8, launch_overhead_us=12.0)
    sizes = 2.0 ** np.arange(10, 31)
    fit = fit_system("allreduce", sizes, expect("allreduce", sizes, truth).time_s, a100())
    assert fit.k_bw == pytest.approx(0.8, rel=0.02)
    assert fit.launch_overhead_us == pytest.approx(12.0, abs=1.0)
    assert fit.system.provenance["bw_scale"] == "fitted to log"


def test_fit_recovers_an_overhead_per_protocol_and_keeps_nccls_choice():
    # a synthetic log with a different host overhead per protocol: the fit returns each one that its rows
    # run, and NCCL's choice (made before the overhead) is the same with and without them
    truth = a100().with_(bw_scale=0.9, protocol_overhead_us=(10.0, 25.0, 60.0))
    sizes = 2.0 ** np.arange(16, 33)
    plain = expect("allreduce", sizes, a100().with_(bw_scale=0.9))
    measured = expect("allreduce", sizes, truth)
    assert list(measured.protocol) == list(plain.protocol) and {"LL", "LL128", "Simple"} <= set(plain.protocol)
    simple = plain.protocol == "Simple"
    assert measured.latency_s[simple] - plain.latency_s[simple] == pytest.approx(60e-6)
    fit = fit_system("allreduce", sizes, measured.time_s, a100())
    assert fit.k_bw == pytest.approx(0.9, rel=0.02)
    assert fit.system.protocol_overhead_us == pytest.approx((10.0, 25.0, 60.0), abs=1.0)
    assert fit.launch_overhead_us == pytest.approx(95.0 / 3, abs=1.0)
    # rows that run Simple only: one overhead, and every protocol takes it
    big = sizes[sizes >= 2**28]
    one = fit_system("allreduce", big, expect("allreduce", big, truth).time_s, a100())
    assert one.system.protocol_overhead_us is None and one.launch_overhead_us == pytest.approx(60.0, abs=2.0)
    with pytest.raises(UsageError, match="protocol_overhead_us"):
        a100().with_(protocol_overhead_us=(1.0, -2.0, 3.0))
