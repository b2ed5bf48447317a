"""In-network reduction (InfiniBand SHARP, NCCL's CollNet): the bound, the flag, the log lines that say it,
NCCL's model pricing CollNet, and diagnose of a public SHARP run."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from collperf import api, cli
from collperf.cli import app
from collperf.diagnose.verdict import Kind, Verdict
from collperf.diagnose import assume
from collperf.diagnose.findings import above_bound
from collperf.expect.loglines import read_facts
from collperf.errors import UsageError
from collperf.model.bounds import node_network_coefficient, two_level_bound
from collperf.model.nccl.expected import select
from collperf.model.nccl.tuning import tuning_table
from collperf.model.hardware.catalogue import get_system
from collperf.spec import HardwareSpec
from log_support import synthetic_log

GIB = 1 << 30
CORPUS = Path(__file__).resolve().parents[1] / "src" / "collperf" / "data" / "corpus"
SHARP_LOG = CORPUS / "a100-ib-sharp-4x8-allreduce-gh-coreweave-2023-06.txt"


# ---- the bound ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("nodes, ring", [(2, 1.0), (4, 1.5)])
def test_allreduce_node_network_term_by_hand(nodes, ring):
    # ring (Patarasuk-Yuan): 2 (N-1)/N of the size per node; with the switches reducing, the vector up once
    # and the result down once: 1. N = 2: 2 x 1/2 = 1 either way; N = 4: 2 x 3/4 = 1.5 against 1.
    assert node_network_coefficient("allreduce", nodes, 8) == pytest.approx(ring)
    assert node_network_coefficient("allreduce", nodes, 8, in_network_reduction=True) == 1.0
    # 1 GiB over 4 x 200 Gb/s = 100 GB/s per node; the NVLink term (2 x 7/8 GiB at 300 GB/s) stays below
    b = two_level_bound("allreduce", [GIB], nodes, 8, 300e9, 100e9, in_network_reduction=True)
    assert b.network_s[0] == pytest.approx(GIB / 100e9)
    assert b.binding == ["network"]
    plain = two_level_bound("allreduce", [GIB], nodes, 8, 300e9, 100e9)
    assert plain.network_s[0] == pytest.approx(ring * GIB / 100e9)


def test_four_node_sharp_peak_busbw_by_hand():
    # 32 ranks: busbw = algbw x 2 x 31/32; the network lets 100 GB/s of algbw through: 193.75 GB/s busbw
    b = two_level_bound("allreduce", [GIB], 4, 8, 300e9, 100e9, in_network_reduction=True)
    assert b.peak_busbw_Bps == pytest.approx(193.75e9)
    # the ring's: 100 / 1.5 algbw -> 129.17 GB/s busbw
    assert two_level_bound("allreduce", [GIB], 4, 8, 300e9, 100e9).peak_busbw_Bps == pytest.approx(100e9 / 1.5 * 1.9375)


@pytest.mark.parametrize("collective", ["allgather", "reducescatter", "broadcast", "reduce", "alltoall"])
def test_only_allreduce_gains(collective):
    # allgather is bound by what a node receives, reducescatter by what it sends: (N-1)/N either way
    for nodes in (2, 4, 9):
        assert node_network_coefficient(collective, nodes, 8, True) == node_network_coefficient(collective, nodes, 8)


@settings(max_examples=50, deadline=None)
@given(nodes=st.integers(1, 64), g=st.integers(1, 8))
def test_sharp_never_raises_the_bound_and_halves_it_at_most(nodes, g):
    ring = node_network_coefficient("allreduce", nodes, g)
    sharp = node_network_coefficient("allreduce", nodes, g, in_network_reduction=True)
    assert sharp <= ring and sharp >= ring / 2 - 1e-12


# ---- log lines and the flag -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line, value, quoted",
    [
        (
            "[g2f4e7c:0:588 - comm.c:392] INFO [group#:0] group id:0 tree idx:0 tree_type:LLT rail_idx:0 group size:4",
            True,
            "tree_type:LLT",
        ),
        ("node1:12:40 [0] NCCL INFO Connected Collnet Chains  [0] 8->0->-1 [1] 8->0->-1", True, "Connected Collnet"),
        ("node1:12:40 [0] NCCL INFO Connected collnet + chain", True, "Connected collnet + chain"),
        ("node1:12:40 [0] NCCL INFO rank 0 Connected CollNet", True, "rank 0 Connected CollNet"),
        ("node1:12:40 [0] NCCL INFO NCCL_COLLNET_ENABLE set by environment to 1.", True, "set by environment to 1"),
        ("node1:12:40 [0] NCCL INFO NCCL_COLLNET_ENABLE set by environment to 0.", False, "set by environment to 0"),
        ("mpirun -np 16 -x NCCL_COLLNET_ENABLE=1 -x NCCL_IB_HCA=mlx5 ./all_reduce_perf", True, "NCCL_COLLNET_ENABLE=1"),
        ("node1:12:40 [0] NCCL INFO NCCL_ALGO set by environment to CollNetChain", True, "to CollNetChain"),
        ("mpirun -np 16 -x NCCL_ALGO=Ring,CollNetDirect ./all_reduce_perf", True, "NCCL_ALGO=Ring,CollNetDirect"),
    ],
)
def test_collnet_from_the_lines_that_show_it_with_the_line_quoted(line, value, quoted):
    facts = read_facts(line)
    assert facts.get("collnet") is value
    assert quoted in facts.line("collnet")


@pytest.mark.parametrize(
    "line",
    [
        # NCCL 2.30.7 init.cc prints comm->nChannels as the collnet channel count: not evidence
        "node1:1:1 [0] NCCL INFO 2 coll channels, 2 collnet channels, 0 nvls channels, 2 p2p channels, 2 p2p "
        "channels per peer",
        # the SHARP plugin loaded: CollNet still off unless NCCL_COLLNET_ENABLE=1
        "test1:5425:5439 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB/SHARP [RO]; OOB eno1:192.168.160.111<0>",
        "test1:1:1 [0] NCCL INFO Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so",
        "node1:1:1 [0] NCCL INFO NCCL_ALGO set by environment to ^CollNet",
        "# hardware: 4 nodes with SHARP, NCCL_ALGO=CollNetChain (a curated line)",
        # the SHARP library on a path: installed, not used
        "LD_LIBRARY_PATH=/opt/hpcx/sharp/lib/libsharp_coll.so:/usr/lib",
    ],
)
def test_lines_that_do_not_say_collnet_runs(line):
    assert "collnet" not in read_facts(line)


def _log(tmp_path, lines, nodes=4):
    return synthetic_log(tmp_path, lines, gpu="NVIDIA A100-SXM4-80GB", hosts=tuple(f"node{i}" for i in range(nodes)))


def test_assume_reads_collnet_with_provenance_and_the_flag_overrides(tmp_path):
    line = "node0:1:1 [0] NCCL INFO Connected Collnet Chains  [0] 8->0->-1"
    assumed = assume(_log(tmp_path, [line]))
    assert assumed.system.collnet and "Connected Collnet Chains" in assumed.system.provenance["collnet"]
    shown = {label: (value, src) for label, value, src in assumed.values}
    assert shown["in-network reduction (SHARP)"][0] == "yes"
    assert "Connected Collnet Chains" in shown["in-network reduction (SHARP)"][1]
    off = assume(_log(tmp_path, [line]), HardwareSpec(sharp=False)).system
    assert not off.collnet and off.provenance["collnet"] == "user override (--no-sharp)"
    on = assume(_log(tmp_path, []), HardwareSpec(sharp=True)).system
    assert on.collnet and on.provenance["collnet"] == "user override (--sharp)"
    assert not assume(_log(tmp_path, [])).system.collnet  # nothing said: off, NCCL's default


def test_one_node_does_not_show_or_take_sharp_from_the_log(tmp_path):
    assumed = assume(_log(tmp_path, ["node0:1:1 [0] NCCL INFO Connected collnet + chain"], nodes=1))
    assert not assumed.system.collnet
    assert "in-network reduction (SHARP)" not in [label for label, _, _ in assumed.values]


def test_sharp_on_a_network_without_it_is_a_clear_error(tmp_path):
    with pytest.raises(UsageError, match=r"--sharp: .*InfiniBand.*efa.*--fabric ib"):
        assume(_log(tmp_path, []), HardwareSpec(sharp=True, fabric="efa"))


def test_cli_flag_and_its_error(capsys, monkeypatch):
    res = CliRunner().invoke(
        app,
        [
            "diagnose",
            "allreduce",
            "--size",
            "1GiB",
            "--time",
            "9ms",
            "--ranks",
            "32",
            "--cluster",
            "dgx-a100",
            "--nodes",
            "4",
            "--sharp",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "in-network reduction (SHARP)" in res.output
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "collperf",
            "diagnose",
            "allreduce",
            "--size",
            "1GiB",
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
    with pytest.raises(SystemExit) as info:
        cli.main()
    err = capsys.readouterr().err
    assert info.value.code == 2 and "--sharp" in err and "Traceback" not in err


# ---- NCCL's model prices CollNet --------------------------------------------------------------------------


def _a100(collnet: bool):
    return get_system("dgx-a100").with_("test", nodes=4, nics_per_node=4, nic_Gbps=200.0, collnet=collnet)


def test_nccl_model_prices_collnet_by_tuning_cc_rules():
    table = tuning_table("allreduce", _a100(True))
    # 4 x 8 A100, 4 channels of 24 GB/s (the collnet graph: bwIntra), ppn 8. NCCL 2.30.7 src/graph/tuning.cc:
    # CollNetDirect latency = base 0 + 2 (min(1, ppn-1) x NVLINK 3.7 + (ppn-1) x 0.4) + NET 31 = 44 us;
    # bandwidth: busBw = 4 x 24 = 96, f = ppn / nChannels = 2, f -= (f-1)/2 -> 1.5, 96 / 1.5 = 64,
    # x 0.5 (bus -> algorithm, not a ring) = 32 GB/s (no 0.85: sm80)
    assert table.latency_us[("collnet-direct", "Simple")] == pytest.approx(44.0)
    assert table.bandwidth_GBps[("collnet-direct", "Simple")] == pytest.approx(32.0)
    # CollNetChain on collNetChainGraph (init.cc: the TREE pattern with the ring's 4 channels, whose bwIntra
    # the search raises to twice bwInter, 48, as the tree's): 2 (ppn-1) x NVLINK 2.8 + NET 30 = 69.2 us;
    # 4 x 48 x 0.5 = 96 GB/s; Simple only
    graphs = table.graphs
    assert (graphs["collnet-chain"].n_channels, graphs["collnet-chain"].bw_intra) == (4, 48.0)
    assert graphs["collnet-chain"].bw_intra == graphs["tree"].bw_intra
    assert table.latency_us[("collnet-chain", "Simple")] == pytest.approx(69.2)
    assert table.bandwidth_GBps[("collnet-chain", "Simple")] == pytest.approx(96.0)
    assert table.bandwidth_GBps[("collnet-chain", "LL")] == 0.0
    off = tuning_table("allreduce", _a100(False))
    assert off.bandwidth_GBps[("collnet-direct", "Simple")] == 0.0 == off.bandwidth_GBps[("collnet-chain", "Simple")]


def test_nccl_chooses_collnet_where_it_is_cheapest_and_never_without_it():
    sizes = np.array([1 << 20, 4 << 20])
    on, off = select("allreduce", sizes, _a100(True)), select("allreduce", sizes, _a100(False))
    # 1 MiB: collnet-direct 44 us + 1 MiB / 32 GB/s = 76.8 us beats collnet-chain 69.2 + 10.9 = 80.1 and
    # tree/LL128 65.5 + 31.4 = 96.9; 4 MiB: collnet-chain 69.2 + 43.7 = 112.9 beats collnet-direct 44 + 131.1
    # = 175.1 and tree/LL128 65.5 + 125.7 = 191.2
    assert list(on.algorithm) == ["collnet-direct", "collnet-chain"]
    assert on.time_s[0] == pytest.approx(76.77e-6, rel=1e-3) and on.time_s[1] == pytest.approx(112.9e-6, rel=1e-3)
    assert not any(str(a).startswith("collnet") for a in off.algorithm)
    # NCCL_ALGO=Ring still rules
    ring = select("allreduce", sizes, _a100(True).with_("test", nccl_algo="Ring"))
    assert set(ring.algorithm) == {"ring"}


# ---- diagnose of a public SHARP run -----------------------------------------------------------------------


def _judge(**hw):
    judged = api.diagnose_logs(
        str(SHARP_LOG), hardware=HardwareSpec(nodes=4, nics_per_node=4, nic_rate="200Gbps", **hw)
    )
    return json.dumps(judged.to_json())


def test_the_public_sharp_run_is_no_longer_above_the_bound():
    # 4 x 8 A100, 4 x 200 Gb/s per node (the corpus index), 160 GB/s busbw: above the ring's 129 GB/s busbw,
    # below SHARP's 193.75 GB/s; the log's SHARP group lines decide it
    text = _judge()
    assert "above the bound" not in text and "above-bound" not in text
    assert "tree_type:LLT" in text
    assert "above-bound" in _judge(sharp=False)


def test_predict_nccl_takes_sharp_from_the_cli_and_the_api():
    res = CliRunner().invoke(
        app,
        ["predict", "allreduce", "-s", "1GiB", "--cluster", "dgx-a100", "--nodes", "4", "--nccl", "--sharp", "--json"],
    )
    assert res.exit_code == 0, res.output
    assert "collnet-chain" in res.output
    assumed, pred = api.predict_nccl(
        collective="allreduce", size="1GiB", hardware=HardwareSpec(cluster="dgx-a100", nodes=4, sharp=True)
    )
    assert assumed.system.collnet and list(pred.algorithm) == ["collnet-chain"]
    plain = CliRunner().invoke(
        app, ["predict", "allreduce", "-s", "1GiB", "--cluster", "dgx-a100", "--nodes", "4", "--nccl", "--json"]
    )
    assert plain.exit_code == 0 and "collnet" not in plain.output


# ---- where in-network reduction is named: an allreduce on InfiniBand only ---------------------------------


def _above(collective, cluster="dgx-h100", **hw):
    assumed = assume(None, HardwareSpec(cluster=cluster, nodes=4, **hw), ranks=32)
    # one row faster than a 2 ms network bound: the network resources are what to check
    row = SimpleNamespace(
        verdict=Verdict(Kind.ABOVE_BOUND, "above the bound"),
        size_bytes=GIB,
        binding="network",
        bound_s=2e-3,
        time_s=1e-3,
        bound_latency_s=0.0,
    )
    [finding] = above_bound([row], assumed, None, collective)
    return " ".join(finding.message.split())


def test_the_above_bound_hint_names_sharp_only_for_an_allreduce_on_infiniband():
    allreduce = _above("allreduce")
    assert "--sharp" in allreduce and "in-network reduction (SHARP)" in allreduce
    for collective in ("allgather", "reducescatter", "broadcast", "alltoall"):
        other = _above(collective)
        assert "--sharp" not in other and "SHARP" not in other and "NIC rate" in other
    efa = _above("allreduce", cluster="aws-p5")
    assert "--sharp" not in efa and "SHARP" not in efa


@pytest.mark.parametrize("collective, named", [("allreduce", True), ("allgather", False), ("reducescatter", False)])
def test_the_bound_names_sharp_only_where_it_lowers_it(collective, named):
    judged = api.diagnose_measurement(
        collective=collective, size="1GB", time="9ms", ranks=32, cluster="dgx-h100", nodes=4, sharp=True
    )
    assert ("in-network reduction (SHARP)" in judged.to_json()["bound_from"]) is named
