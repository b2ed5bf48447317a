"""collperf predict --topology: Blink's packed trees and the hybrid split (the appendix's equation 8, by hand),
single-hop trees on dgx2's switch, the API and the CLI agreeing, and clear errors."""

import json

import pytest
from typer.testing import CliRunner

from collperf import api
from collperf.cli import app
from collperf.errors import UsageError
from collperf.spec import NetworkSpec, predict_network, TopologyPredictSpec, TreesSpec

G = 1e9


def run_json(*args):
    res = CliRunner().invoke(app, [str(a) for a in args] + ["--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def run_error(*args) -> str:
    """The UsageError a command ends with (the entry point prints it without a traceback)."""
    res = CliRunner().invoke(app, [str(a) for a in args])
    assert res.exit_code != 0 and isinstance(res.exception, UsageError), (res.output, res.exception)
    return str(res.exception)


# GPUs 0,1,2 of a DGX-1V (topology.dgx1v): NVLinks 0-1 x1, 0-2 x1, 1-2 x2 (25 GB/s each). From GPU 0, GPU 1
# gets 25 direct + 25 through 2 = 50 GB/s, GPU 2 the same: BW_NVL = 50 GB/s. Over PCIe, GPU 0 leaves through
# its one x16 link to its switch (12 GB/s): BW_PCIe = 12 GB/s.
BW_NVL, BW_PCIE = 50 * G, 12 * G


def equation_8(d, t_dpa):
    """The appendix's equation 8 solved by hand: T_dpa + D_PCIe / BW_PCIe = (D - D_PCIe) / BW_NVL."""
    d_pcie = (d * BW_PCIE - t_dpa * BW_PCIE * BW_NVL) / (BW_PCIE + BW_NVL)
    return d_pcie, (d - d_pcie) / BW_NVL


def test_hybrid_split_is_equation_8_by_hand():
    d, t_dpa = 1e9, 0.5e-3
    d_pcie, t = equation_8(d, t_dpa)
    # (1e18 x 12 - 0.5e-3 x 12e9 x 50e9) / 62e9 = 1.17e19 / 6.2e10 bytes; both paths end at 16.226 ms
    assert d_pcie == pytest.approx(1.17e19 / 6.2e10) and t == pytest.approx(16.2258e-3, rel=1e-5)
    doc = run_json(
        "predict",
        "broadcast",
        "-A",
        "blink",
        "--topology",
        "dgx1v",
        "--ranks",
        "0,1,2",
        "--hybrid",
        "--t-dpa",
        "0.5ms",
        "-s",
        "1GB",
    )
    row = doc["sizes"][0]
    h = row["hybrid"]
    assert h["nvlink_Bps"] == pytest.approx(BW_NVL) and h["pcie_Bps"] == pytest.approx(BW_PCIE)
    assert h["pcie_bytes"] == pytest.approx(d_pcie) and h["nvlink_bytes"] == pytest.approx(d - d_pcie)
    assert row["time_s"] == pytest.approx(t) and h["pcie_time_s"] == pytest.approx(t) == h["nvlink_time_s"]
    assert h["nvlink_only_time_s"] == pytest.approx(d / BW_NVL) and h["gain"] == pytest.approx(20e-3 / t)
    # the API gives the same
    r = api.predict_topology(
        TopologyPredictSpec(
            collective="broadcast",
            topology="dgx1v",
            algorithm="blink",
            size="1GB",
            ranks=[0, 1, 2],
            root=None,
            hybrid=True,
            t_dpa=0.5e-3,
        )
    )
    assert r.blink[0].time_s == pytest.approx(t) and r.to_json() == doc


def test_hybrid_split_without_switching_time_adds_the_rates_and_a_large_one_keeps_pcie_off():
    r = api.predict_topology(
        TopologyPredictSpec(
            collective="broadcast", topology="dgx1v", algorithm="blink", size="1GB,1MB", ranks="0,1,2", hybrid=True
        )
    )
    assert r.blink[0].time_s == pytest.approx(1e9 / (BW_NVL + BW_PCIE))  # T_dpa 0: 62 GB/s together
    # 1 MB with T_dpa 0.5 ms: equation 8 gives D_PCIe < 0 (NVLink alone finishes in 20 us): no PCIe, no T_dpa
    r = api.predict_topology(
        TopologyPredictSpec(
            collective="broadcast",
            topology="dgx1v",
            algorithm="blink",
            size="1MB",
            ranks="0,1,2",
            hybrid=True,
            t_dpa="0.5ms",
        )
    )
    b = r.blink[0]
    assert equation_8(1e6, 0.5e-3)[0] < 0
    assert b.hybrid["pcie_bytes"] == 0 and b.time_s == pytest.approx(1e6 / BW_NVL) and b.hybrid["gain"] == 1
    assert "outweighs" in b.notes[0]


def test_blink_predictions_are_size_over_the_packed_rate():
    # GPUs 0,1,4 (docs/blink.md): 37 GB/s from GPU 0; NCCL's ring goes through PCIe and QPI at 10 GB/s
    doc = run_json("predict", "broadcast", "-A", "blink", "--topology", "dgx1v", "--ranks", "0,1,4", "-s", "1G")
    row = doc["sizes"][0]
    assert row["rate_Bps"] == pytest.approx(37 * G) and row["time_s"] == pytest.approx(2**30 / (37 * G))
    assert row["ring_kind"] == "pcie" and row["ring_time_s"] == pytest.approx(2**30 / (10 * G))
    # the other collectives agree with `collperf trees` on the same group
    for coll in ("allreduce", "allgather", "reducescatter"):
        r = api.predict_topology(
            TopologyPredictSpec(collective=coll, topology="dgx1v", algorithm="blink", size="1G", ranks="0,1,4,6")
        )
        t = api.trees(TreesSpec(topology="dgx1v", ranks="0,1,4,6", collective=coll, size="1G"))
        assert r.blink[0].time_s == pytest.approx(t.time_s), coll
    # a reduce runs the broadcast's trees reversed: the same time on full-duplex links
    r = api.predict_topology(
        TopologyPredictSpec(collective="reduce", topology="dgx1v", algorithm="blink", size="1G", ranks="0,1,4", root=4)
    )
    assert r.blink[0].roots == [4] and r.blink[0].time_s == pytest.approx(
        api.predict_topology(
            TopologyPredictSpec(
                collective="broadcast", topology="dgx1v", algorithm="blink", size="1G", ranks="0,1,4", root=4
            )
        )
        .blink[0]
        .time_s
    )


@pytest.mark.parametrize("ranks,p", [(None, 16), ("0,1,2,3", 4)])
def test_single_hop_on_dgx2_is_two_one_hop_steps(ranks, p):
    # dgx2: 1 us and 150 GB/s GPU to GPU through the switch. Single-hop trees: a one-hop reduce-scatter then a
    # one-hop allgather, 2 alpha + 2 (p-1)/p n / B
    args = ["predict", "allreduce", "-A", "single-hop,ring", "--topology", "dgx2", "-s", "1KB,1GB"]
    doc = run_json(*args, *(["--ranks", ranks] if ranks else []))
    assert doc["link"]["latency_s"] == pytest.approx(1e-6) and doc["link"]["bandwidth_Bps"] == pytest.approx(150 * G)
    for row in doc["sizes"]:
        n = row["size_bytes"]
        times = {a["name"]: a["time_s"] for a in row["algorithms"]}
        assert row["ranks"] == p
        assert times["mesh"] == pytest.approx(2e-6 + 2 * (p - 1) / p * n / (150 * G))
        assert times["ring"] == pytest.approx(2 * (p - 1) * 1e-6 + 2 * (p - 1) / p * n / (150 * G))


@pytest.mark.parametrize(
    "args,match",
    [
        (["allreduce", "-A", "single-hop", "--topology", "dgx1v"], r"needs a switch: each GPU one link"),
        (["broadcast", "-A", "blink", "--topology", "dgx1v", "--ranks", "0,1,9"], r"rank\(s\) 9 not in topology dgx1v"),
        (["allreduce", "-A", "blink", "--topology", "dgx1v", "--hybrid"], r"--hybrid is the NVLink \+ PCIe broadcast"),
        (["broadcast", "-A", "blink", "--topology", "dgx1v", "--t-dpa", "1ms"], r"add --hybrid"),
        (
            ["broadcast", "-A", "blink", "--topology", "dgx1v", "--ranks", "0,1", "--root", "3"],
            r"--root 3 is not one of",
        ),
        (["alltoall", "-A", "blink", "--topology", "dgx1v"], r"not alltoall"),
        (["allreduce", "--ranks", "0,1,2", "--latency", "1us", "--bandwidth", "1GB/s"], r"goes with --topology"),
        (
            ["allreduce", "-A", "blink", "--topology", "dgx1v", "--latency", "1us"],
            r"needs both --latency and --bandwidth",
        ),
        (
            ["allreduce", "-A", "blink", "--topology", "dgx1v", "--latency", "1us", "--bandwidth", "1GB/s"],
            r"dgx1v has its own links: drop --latency",
        ),
        (["allreduce", "--topology", "switch:4", "--cluster", "dgx-h100"], r"gives the machine: drop --cluster"),
        (["allreduce", "--topology", "dgx1v", "--nccl"], r"drop --topology or --nccl"),
        (
            ["allreduce", "--topology", "switch:4", "-A", "ring"],
            r"switch:4 needs a link: give --latency and --bandwidth",
        ),
        (["broadcast", "--t-dpa", "1ms", "--latency", "1us", "--bandwidth", "1GB/s", "-p", "4"], r"--t-dpa go with"),
        (
            ["broadcast", "--root", "1", "--transit", "any", "--latency", "1us", "--bandwidth", "1GB/s", "-p", "4"],
            r"--root, --transit go with --topology",
        ),
        (
            ["broadcast", "--hybrid", "--latency", "1us", "--bandwidth", "1GB/s", "-p", "4"],
            r"--hybrid go with --topology",
        ),
        (["broadcast", "-A", "blink", "--topology", "dgx1v", "--ranks", "3"], r"give at least 2 ranks"),
    ],
)
def test_bad_topology_predictions_are_refused(args, match):
    import re

    assert re.search(match, run_error("predict", *args)), run_error("predict", *args)


def test_predict_without_topology_still_takes_a_rank_count():
    doc = run_json(
        "predict", "allreduce", "-A", "ring", "-p", "4", "--latency", "1us", "--bandwidth", "1GB/s", "-s", "1M"
    )
    assert doc["ranks"] == 4
    with pytest.raises(UsageError, match="negative"):
        TopologyPredictSpec(collective="broadcast", topology="dgx1v", t_dpa=-1e-3, hybrid=True)


def test_a_switch_topology_takes_its_link_from_latency_and_bandwidth():
    # switch:4 on a 1 us, 10 GB/s link: every pair meets through the switch, so the closed forms apply with
    # p = 4 on that link. Ring allreduce: 2(p-1) steps of alpha + (n/p)/B = 6 us + 1.5 n / 10 GB/s.
    doc = run_json(
        "predict",
        "allreduce",
        "--topology",
        "switch:4",
        "-A",
        "ring",
        "--latency",
        "1us",
        "--bandwidth",
        "10GB/s",
        "-s",
        "1GB",
    )
    assert doc["ranks"] == [0, 1, 2, 3] and doc["link"]["bandwidth_Bps"] == pytest.approx(10 * G)
    (row,) = doc["sizes"]
    (ring,) = [a for a in row["algorithms"] if a["name"] == "ring"]
    assert ring["time_s"] == pytest.approx(6e-6 + 1.5 * 1e9 / (10 * G))
    spec = TopologyPredictSpec(
        collective="allreduce",
        topology="switch:4",
        algorithm="ring",
        size="1GB",
        network=NetworkSpec(latency="1us", bandwidth="10GB/s"),
    )
    assert api.predict_topology(spec).to_json() == doc


def test_predict_options_are_checked_by_the_spec_not_the_cli():
    # --hybrid alone (-A all) is Blink's hybrid broadcast
    assert (
        TopologyPredictSpec(collective="broadcast", topology="dgx1v", algorithm="all", hybrid=True).algorithm == "blink"
    )
    assert TopologyPredictSpec(collective="allreduce", topology="dgx1v", algorithm="all").algorithm == "all"
    # a zero switching time in any unit is the default, not a --t-dpa given without --topology
    assert predict_network(NetworkSpec(), None, t_dpa="0ms") == NetworkSpec()
    assert predict_network(NetworkSpec(), " 8 ").ranks == 8
    with pytest.raises(UsageError, match="a group of GPUs such as 0,1,2 goes with --topology"):
        predict_network(NetworkSpec(), "0,1,2")
    with pytest.raises(UsageError, match="--hybrid go with --topology"):
        predict_network(NetworkSpec(), hybrid=True)
    doc = run_json(
        "predict",
        "broadcast",
        "-A",
        "binomial",
        "-p",
        "4",
        "--latency",
        "1us",
        "--bandwidth",
        "1GB/s",
        "-s",
        "1M",
        "--t-dpa",
        "0ms",
    )
    assert doc["ranks"] == 4
