"""Host-staged PCIe (no P2P): the ring's traffic through host memory, worked by hand (model/nccl/transport.py)."""

from __future__ import annotations

import numpy as np
import pytest

from collperf.errors import UsageError
from collperf.model.nccl import expect, fit_system, search_graphs, select, tuning_table
from collperf.model.nccl.transport import host_staged_time, is_duplex, per_gpu_traffic
from collperf.model.hardware.catalogue import get_system, system_for_gpu
from collperf.expect.resolve import assume
from collperf.expect.loglines import read_facts
from collperf.ingest import load

GIB = float(1 << 30)
GEN3 = 12e9  # NCCL's Gen3 x16: width 16 x 60 / 80 = 12 GB/s (topo.cc; topo.h PCI_BW 12.0)


def box(gpus=2, shared=True, eff=1.0):
    return get_system("pcie-2080ti").with_(gpus_per_node=gpus, pcie_switch_shared=shared, host_duplex_efficiency=eff)


def test_traffic_per_gpu_by_hand():
    # allreduce on 2 ranks: reduce-scatter sends S/2, allgather S/2: S up and S down per GPU
    assert per_gpu_traffic("allreduce", 2) == [(1.0, 1.0), (1.0, 1.0)]
    assert per_gpu_traffic("allgather", 4) == [(0.75, 0.75)] * 4
    # broadcast chain 0 -> 1 -> 2 -> 3: the root only sends, the last only receives
    assert per_gpu_traffic("broadcast", 4) == [(1.0, 0.0), (1.0, 1.0), (1.0, 1.0), (0.0, 1.0)]
    assert is_duplex("allreduce", 2) and not is_duplex("broadcast", 2) and is_duplex("broadcast", 3)


def test_allreduce_two_gpus_behind_one_switch_by_hand():
    # each GPU writes S to host and reads S back; both GPUs' streams share the switch uplink: 2S per
    # direction at 12 GB/s -> 2 x 1 GiB / 12e9 = 0.17895 s; with a root port each, S / 12e9
    assert host_staged_time("allreduce", GIB, box())[0] == pytest.approx(2 * GIB / GEN3)
    assert host_staged_time("allreduce", GIB, box(shared=False))[0] == pytest.approx(GIB / GEN3)


def test_broadcast_two_gpus_pays_no_duplex_cost():
    # root up S, receiver down S; the uplink carries S each way: S / 12e9 whatever the duplex efficiency
    for eff in (1.0, 0.3):
        assert host_staged_time("broadcast", GIB, box(eff=eff))[0] == pytest.approx(GIB / GEN3)
    # allreduce with duplex efficiency 1/3: each GPU link S / (12e9 / 3) = 3S / 12e9 beats the uplink's 2S
    assert host_staged_time("allreduce", GIB, box(eff=1 / 3))[0] == pytest.approx(3 * GIB / GEN3)


def test_four_gpu_chain_and_allgather_by_hand():
    # broadcast, 4 GPUs, own root ports, duplex 0.5: a middle GPU moves S each way at 6 GB/s -> S / 6e9
    assert host_staged_time("broadcast", GIB, box(4, shared=False, eff=0.5))[0] == pytest.approx(GIB / 6e9)
    # behind one switch: 3 of 4 GPUs send S up the uplink -> 3S / 12e9
    assert host_staged_time("broadcast", GIB, box(4, eff=0.5))[0] == pytest.approx(3 * GIB / GEN3)
    # allgather, 4 GPUs behind one switch: 4 x 3/4 S = 3S per direction on the uplink
    assert host_staged_time("allgather", GIB, box(4))[0] == pytest.approx(3 * GIB / GEN3)


def test_p2p_and_nvlink_systems_are_not_host_staged():
    assert host_staged_time("allreduce", GIB, get_system("pcie-p2p"))[0] == 0.0
    assert host_staged_time("allreduce", GIB, get_system("dgx-a100"))[0] == 0.0


def test_expect_takes_the_slower_of_ncclmodel_and_host_path():
    s = box()
    sizes = np.array([GIB])
    pred, nccl = expect("allreduce", sizes, s), select("allreduce", sizes, s)
    assert pred.bandwidth_s[0] == pytest.approx(max(nccl.bandwidth_s[0], 2 * GIB / GEN3))
    assert pred.latency_s[0] == pytest.approx(nccl.latency_s[0] + s.launch_overhead_us * 1e-6)


def test_fit_to_allreduce_measures_the_duplex_efficiency_and_broadcast_keeps_hardware_rates():
    truth = box(eff=0.4)
    sizes = 2.0 ** np.arange(20, 31)
    fit = fit_system("allreduce", sizes, expect("allreduce", sizes, truth).time_s, box(), min_size_bytes=1 << 20)
    assert fit.system.host_duplex_efficiency == pytest.approx(0.4, rel=0.02)
    assert fit.system.provenance["host_duplex_efficiency"] == "fitted to log"
    # a 2-rank broadcast uses each GPU link one way: the fitted system predicts it as hardware alone does
    b_fit, b_hw = expect("broadcast", sizes, fit.system), expect("broadcast", sizes, box())
    np.testing.assert_allclose(b_fit.bandwidth_s, b_hw.bandwidth_s)


def test_duplex_efficiency_is_validated():
    with pytest.raises(UsageError, match="host_duplex_efficiency"):
        box(eff=0.0)
    with pytest.raises(UsageError, match="host_duplex_efficiency"):
        box(eff=1.5)


def test_pcie_switch_from_the_log_comment(tmp_path):
    src = next(p for p in (__import__("pathlib").Path(__file__).resolve().parents[1] / "examples").glob("10_*.txt"))
    text = src.read_text()
    system = assume(load(src)[0]).system
    assert system.pcie_switch_shared and "comment line" in system.provenance["pcie_switch_shared"]
    # the same log without the comment: each GPU on its own root port (nothing said, nothing assumed)
    bare = tmp_path / "bare.txt"
    bare.write_text("\n".join(ln for ln in text.splitlines() if "PIX" not in ln))
    assert not assume(load(bare)[0]).system.pcie_switch_shared


def test_b200_two_nodes_nvls_graph_and_tree_bandwidth_by_hand():
    b200 = system_for_gpu("NVIDIA B200", nodes=2, gpus_per_node=8)
    nvls = search_graphs(b200)["nvls"]
    # NVLink 18 x 40.1 = 721.8 GB/s; (8 + 1) x 80 = 720 fits (sm100 inter ladder 96, 86, 80, ...):
    # bwIntra 80; bwInter stays at the GPU->NIC path: min(400 Gb/s / 8 = 50, PCIe Gen5 x16 16 x 240 / 80 = 48)
    assert (nvls.n_channels, nvls.bw_intra, nvls.bw_inter) == (8, 80.0, 48.0)
    t = tuning_table("allreduce", b200)
    # NVLSTree: min(80 x 0.74 x 7/8 x 2 = 103.6, 48 x 2 = 96, perChMaxNVLSTreeBw[Blackwell][2 nodes] 96) = 96
    # per channel -> 8 x 96 = 768 bus GB/s, x 16/30 -> 409.6 GB/s algorithm bandwidth
    assert t.bandwidth_GBps[("nvls-tree", "Simple")] == pytest.approx(409.6)


def test_gpudirect_rdma_from_the_channel_lines():
    # NCCL appends /GDRDMA to a NET channel line that uses GPUDirect RDMA
    assert read_facts("NCCL INFO Channel 00/0 : 0[1b000] -> 8[1b000] [send] via NET/IB/0/GDRDMA").get("net_gdr")
    assert (
        read_facts("NCCL INFO Channel 00/0 : 0[35000] -> 1[f5000] [send] via NET/AWS Libfabric/0").get("net_gdr")
        is False
    )
    assert "net_gdr" not in read_facts("NCCL INFO Channel 00/0 : 0 1 via P2P/IPC")
    src = next((__import__("pathlib").Path(__file__).resolve().parents[1] / "examples").glob("09_*.txt"))
    system = assume(load(src)[0]).system
    assert system.net_gdr is False and system.provenance["net_gdr"].startswith("from the log line '")
    assert "via NET/AWS Libfabric" in system.provenance["net_gdr"]


def test_shm_path_rate_capped_at_gen3_only_on_cards_whose_driver_forbids_p2p():
    from collperf.expect.expectation import band_bound
    from collperf.model.nccl import system_bound
    from collperf.model.nccl.transport import host_staged_gen, link_rate_Bps

    geforce = system_for_gpu("NVIDIA GeForce RTX 4090", nodes=1, gpus_per_node=2).with_(p2p=False)
    l40s = system_for_gpu("NVIDIA L40S", nodes=1, gpus_per_node=2).with_(p2p=False)
    assert (geforce.pcie_gen, l40s.pcie_gen) == (4, 4)
    # NCCL's Gen4 x16: 16 x 120 / 80 = 24 GB/s; Gen3 12 GB/s (topo.h)
    assert (host_staged_gen(geforce), link_rate_Bps(geforce)) == (3, pytest.approx(GEN3))
    assert (host_staged_gen(l40s), link_rate_Bps(l40s)) == (4, pytest.approx(2 * GEN3))
    # the band's bound: the GeForce pair's at Gen3 (slower than its own link's), the L40S pair's its own
    n = np.array([GIB])
    own = system_bound("allreduce", n, geforce).time_s
    assert band_bound("allreduce", n, geforce, own)[0] > own[0]
    own = system_bound("allreduce", n, l40s).time_s
    assert band_bound("allreduce", n, l40s, own) is own
    # a card the parts table does not know keeps its own generation: nothing assumed from hardware unknown
    assert host_staged_gen(l40s.with_(gpu_part="")) == 4
