"""One node shows no network, and `predict --cluster` gives one bound for a system and size: the system's, the number
`diagnose` shows, with our schedules' own beside it and why they differ. Every figure below is worked by hand."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from collperf import api
from collperf.cli import app
from collperf.model.hardware.catalogue import CATALOGUE, get_system
from collperf.spec import NetworkSpec, PredictSpec

runner = CliRunner()
GB = 10**9


def _run(*argv) -> str:
    res = runner.invoke(app, list(argv), terminal_width=250)
    assert res.exit_code == 0, res.output
    return res.output


def _predicted(cluster, nodes):
    return api.predict(
        PredictSpec(
            collective="allreduce",
            size="1GB",
            expected=True,
            algorithm="ring",
            network=NetworkSpec(cluster=cluster, nodes=nodes),
        )
    )


# ---- one node: no network -------------------------------------------------------------------------


def test_the_system_line_names_the_network_only_on_several_nodes():
    assert "NIC" not in get_system("dgx-h100", nodes=1).describe()
    assert "(ib)" not in get_system("dgx-h100", nodes=1).describe()
    assert get_system("dgx-h100", nodes=2).describe().endswith("; 8x 400 Gb/s NIC per node (ib)")


def test_diagnose_of_a_one_node_log_shows_no_nic():
    text = _run("diagnose", "examples/01_superbench-a100x8-allreduce.txt")
    assert "system assumed: dgx-a100: 1 node(s) x 8 A100-SXM4-40GB; 12x NVLink (300 GB/s/dir, NVSwitch)\n" in text
    assert "bound: the intra-node bound on dgx-a100 (one node: no network)" in text
    assert "NIC" not in text and "GPUDirect RDMA" not in text and "(ib)" not in text
    doc = json.loads(_run("diagnose", "examples/01_superbench-a100x8-allreduce.txt", "--json"))
    names = {v["name"] for v in doc["system"]["values"]}
    assert not names & {"NICs per node", "NIC rate", "GPUDirect RDMA"} and {"GPU", "nodes"} <= names


def test_predict_on_one_node_shows_no_nic():
    text = _run("predict", "allreduce", "--size", "1GB", "--cluster", "dgx-h100", "-A", "ring")
    assert text.startswith("allreduce on 1 node x 8 ranks; intra 1 us, 450 GB/s (one node: no network)\n")
    assert "NIC" not in text and "(ib)" not in text and "inter " not in text


def test_two_nodes_still_show_the_network():
    text = _run("predict", "allreduce", "--size", "1GB", "--cluster", "dgx-h100", "--nodes", "2", "-A", "ring")
    assert "inter 5 us, 50 GB/s per rank (8 NIC(s) of 50 GB/s per node)" in text
    assert "8x 400 Gb/s NIC per node (ib)" in text


# ---- one bound ------------------------------------------------------------------------------------


def test_two_dgx_h100_the_same_nic_term_and_ours_adds_the_latency():
    # each node sends 2 (N-1)/N = 1 x 1 GB over 8 x 400 Gb/s = 400 GB/s: 2.5 ms; ours adds one inter-node alpha, 5 us
    p = _predicted("dgx-h100", 2)
    assert p.lower_bound_s(0) == pytest.approx(2.5e-3, rel=1e-9)
    assert p[0].lower_bound_s == pytest.approx(2.5e-3 + 5e-6, rel=1e-9)
    assert p[0].lower_bound_latency_s == pytest.approx(5e-6)
    assert p.bound_difference(0) == "latency"
    text = _run("predict", "allreduce", "--size", "1GB", "--cluster", "dgx-h100", "--nodes", "2", "-A", "ring")
    assert (
        "lower bound 2.5 ms bandwidth alone, 2.505 ms with the links' 5 us latency (ours, what x bound divides "
        "by); best: ring"
    ) in text
    assert "│ 2.5 ms │" in text  # NCCL's table: the same first number


def test_the_same_bound_as_diagnose_for_the_same_system_and_size():
    for nodes in (1, 2, 4):
        p = _predicted("dgx-h100", nodes)
        j = api.diagnose_measurement(
            collective="allreduce", size="1GB", time="9ms", ranks=8 * nodes, cluster="dgx-h100", nodes=nodes
        )
        assert p.lower_bound_s(0) == pytest.approx(j.row.bound_s, rel=1e-12)
        assert p.to_json()["nccl_expected"]["bound_s"] == pytest.approx(j.row.bound_s, rel=1e-12)


def test_one_dgx_h100_nvls_halves_what_our_schedules_must_move():
    # NVLS: each GPU sends its 7/8 once, 7/8 x 1 GB / 450 GB/s = 1.944 ms; ours reduce on the GPUs: 2 x 7/8 of it + 1 us
    p = _predicted("dgx-h100", 1)
    assert p.lower_bound_s(0) == pytest.approx(7 / 8 * GB / 450e9, rel=1e-9)
    assert p[0].lower_bound_s == pytest.approx(2 * 7 / 8 * GB / 450e9 + 1e-6, rel=1e-9)
    assert p.bound_difference(0) == "in-switch"
    text = _run("predict", "allreduce", "--size", "1GB", "--cluster", "dgx-h100", "-A", "ring")
    assert "lower bound 1.944 ms with in-switch reduction (NVLS); 3.89 ms our schedules' own" in text


def test_two_dgx_a100_the_intra_node_links_bind_the_system():
    # intra: 2 x 7/8 x 1 GB / 300 GB/s = 5.833 ms; the NICs: 1 GB / (8 x 200 Gb/s = 200 GB/s) = 5 ms, ours + 5 us
    p = _predicted("dgx-a100", 2)
    assert p.lower_bound_s(0) == pytest.approx(2 * 7 / 8 * GB / 300e9, rel=1e-9)
    assert p[0].lower_bound_s == pytest.approx(GB / 200e9 + 5e-6, rel=1e-9)
    assert p.bound_difference(0) == "intra-node"


def test_without_a_system_the_line_is_ours_alone():
    (p,) = api.predict(
        "allreduce", "100MB", NetworkSpec(ranks=16, latency="10us", bandwidth="100GB/s"), algorithm="ring"
    )
    # 2 x 15/16 x 100 MB / 100 GB/s + one alpha = 1.875 ms + 10 us
    assert p.lower_bound_s == pytest.approx(1.885e-3) and p.lower_bound_latency_s == pytest.approx(10e-6)
    text = _run(
        "predict",
        "allreduce",
        "--size",
        "100MB",
        "--ranks",
        "16",
        "--latency",
        "10us",
        "--bandwidth",
        "100GB/s",
        "-A",
        "ring",
    )
    assert "lower bound 1.885 ms; best: ring" in text


# ---- the bound line at every size, and where the priced links miss what binds ------------------------------


def test_a_small_size_says_the_systems_bandwidth_term_and_our_latency_separately():
    # two DGX A100, 1 MB allreduce: the system's bound is its intra-node term, 7/8 x 1 MB / 150 GB/s... as the
    # catalogue prices it; ours is the NICs' ring term plus one 5 us latency, the larger of the two
    text = _run("predict", "allreduce", "--size", "1MB", "--cluster", "dgx-a100", "--nodes", "2", "-A", "ring")
    line = next(ln for ln in text.splitlines() if ln.startswith("lower bound"))
    assert "bandwidth alone, where the intra-node links bind; " in line
    assert "our schedules' own (on the links priced above, with their 5 us latency" in line
    assert "NICs alone" not in line


def test_a_latency_too_small_to_print_is_said_as_its_share():
    # A3 High, 2 nodes, ring, 1 GB: 10 ms either way at four digits; the 5 us latency is 5e-6 / 10e-3 = 0.05 %
    text = _run("predict", "allreduce", "--size", "1GB", "--cluster", "gcp-a3-high", "--nodes", "2", "-A", "ring")
    assert "lower bound 10 ms (bandwidth alone; the links' 5 us latency adds 0.05 % to ours" in text


def test_pcie_without_p2p_prices_each_gpus_share_of_the_host_bridge():
    # two RTX 2080 Ti without P2P: every byte crosses the host bridge (PCIe Gen3 x16, 15.75 GB/s) they share, so
    # each GPU's link is 15.75 / 2 GB/s; 1 GB allreduce: 2 x 1/2 x 1 GB / 7.875 GB/s = 127 ms, the host-bridge
    # bound 2 (p - 1) x 1 GB / 15.75 GB/s, so no schedule is priced below it
    results = api.predict(
        PredictSpec(
            collective="allreduce", size="1GB", expected=True, network=NetworkSpec(cluster="pcie-2080ti", nodes=1)
        )
    )
    assert results.lower_bound_s(0) == pytest.approx(2 * GB / 15.75e9)
    assert results[0].lower_bound_s == pytest.approx(2 * GB / 15.75e9 + 2e-6)  # plus one 2 us latency
    assert not results.below_system_bound(0) and results.bound_difference(0) == "latency"
    # links made faster than the system allows: the note says the time below its bound is not reachable
    text = _run("predict", "allreduce", "--size", "1GB", "--cluster", "pcie-2080ti", "--intra-bandwidth", "100GB/s")
    assert "the best time is below this system's bound" in text
    assert not _predicted("dgx-h100", 2).below_system_bound(0)


@pytest.mark.parametrize("collective", ["allreduce", "allgather", "reducescatter", "broadcast", "alltoall"])
def test_no_catalogue_system_prices_a_schedule_below_its_bound(collective):
    for name in CATALOGUE:
        # nvlink300-400gbe is the textbook preset: its links priced at their line rates, where the catalogue caps
        # the NICs at the GPUs' PCIe links (the note says so there: the next test's kind of case)
        if get_system(name).gpus_per_node < 2 or name == "nvlink300-400gbe":
            continue
        for nodes in (1, 2):
            results = api.predict(
                PredictSpec(
                    collective=collective, size="1GB", expected=True, network=NetworkSpec(cluster=name, nodes=nodes)
                )
            )
            assert not results.below_system_bound(0), (name, nodes)


def test_one_rank_per_system_predicts_without_an_expected_band():
    text = _run("predict", "allreduce", "--size", "1GB", "--cluster", "pcie-t4")  # 1 GPU, 1 node: 1 rank
    assert "one rank: the collective moves no data" in text


def test_network_flags_on_one_node_are_said_to_do_nothing():
    text = _run(
        "diagnose",
        "allreduce",
        "--size",
        "1GB",
        "--time",
        "9ms",
        "--ranks",
        "8",
        "--cluster",
        "dgx-h100",
        "--nic-rate",
        "100Gb/s",
        "--nics-per-node",
        "2",
    )
    assert "--nics-per-node, --nic-rate have no effect on one node" in text
    assert "no effect" not in _run(
        "diagnose", "allreduce", "--size", "1GB", "--time", "9ms", "--ranks", "8", "--cluster", "dgx-h100"
    )


def test_sharp_lower_bound_only_where_sharp_sets_it():
    def doc(nodes):
        return api.predict(
            PredictSpec(
                collective="allreduce",
                size="1GB",
                expected=True,
                sharp=True,
                network=NetworkSpec(cluster="dgx-h100", nodes=nodes),
            )
        ).to_json()

    # 4 nodes: the ring's network term 2 x 3/4 x 1 GB over 8 x 400 Gb/s = 3.75 ms, SHARP's 1 x 1 GB = 2.5 ms
    assert doc(4)["sharp_lower_bound_s"] == pytest.approx(2.5e-3)
    # 2 nodes: the ring's 2 x 1/2 = 1 x size already, so SHARP changes nothing and the key is not there
    assert "sharp_lower_bound_s" not in doc(2)
