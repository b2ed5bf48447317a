"""Hardware from what real logs carry: NCCL INFO lines, device lines, host names; the provenance quotes the line
that decided each value; the flags for what no log says; the shared samples with and without their curated
'# hardware:' lines."""

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from collperf import cli
from collperf.cli import app
from collperf.diagnose import assume, diagnose
from collperf.expect.loglines import read_facts
from collperf.errors import UsageError
from collperf.ingest import load, parse
from collperf.spec import HardwareSpec
from log_support import synthetic_log

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize(
    "line, key, value",
    [
        (
            "host:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB ; OOB eth0:10.0.0.1<0>",
            "fabric",
            "ib",
        ),
        (
            "host:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB ; OOB eth0:10.0.0.1<0>",
            "nics",
            3,
        ),
        (
            "host:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_3:1/RoCE ; OOB eth0:10.0.0.1<0>",
            "fabric",
            "roce",
        ),
        ("host:1:1 [0] NCCL INFO Using network AWS Libfabric", "fabric", "efa"),
        ("host:1:1 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)", "nics", 4),
        ("host:1:1 [0] NCCL INFO NET/GPUDirectTCPX ver. 3.1.8.", "fabric", "tcpx"),
        ("host:1:1 [0] NCCL INFO Using network FasTrak", "fabric", "tcpxo"),
        ("host:1:1 [0] NCCL INFO Using network Socket", "fabric", "socket"),
        ("host:1:1 [0] NCCL INFO NCCL_PROTO set by environment to ^LL128", "protocols", ("LL", "Simple")),
        ('host:1:1 [0] NCCL INFO NET/OFI Setting NCCL_PROTO to "simple"', "protocols", ("Simple",)),
        ("host:1:1 [0] NCCL INFO NCCL_ALGO set by environment to Ring", "algorithms", "Ring"),
        (
            "host:1:1 [0] NCCL INFO 24 coll channels, 24 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p "
            "channels per peer",
            "nvls",
            True,
        ),
        (
            "host:1:1 [0] NCCL INFO 24 coll channels, 0 collnet channels, 0 nvls channels, 32 p2p channels, 2 p2p "
            "channels per peer",
            "channels",
            24,
        ),
        ("host:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct", "p2p", False),
        ("host:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC", "p2p", True),
        (
            "#  Rank  0 Group  0 Pid   1 on a3mega-a3meganodeset-0 device  0 [0x04] NVIDIA H100 80GB HBM3",
            "instance",
            "gcp-a3-mega",
        ),
        ("NCCL version 2.21.5+cuda12.4", "nccl_version", "2.21.5"),
    ],
)
def test_each_line_kind_decides_its_value_and_is_quoted(line, key, value):
    facts = read_facts(line)
    assert facts.get(key) == value
    assert line.strip()[:60] in facts.line(key)


def test_curated_hardware_lines_are_not_read():
    assert "fabric" not in read_facts("# hardware: 2 nodes, NCCL INFO Using network IB (curated)")


_log = synthetic_log


def test_a_tcpxo_log_on_h100_is_judged_as_gcp_a3_mega_with_the_line_quoted(tmp_path):
    table = _log(tmp_path, ["nodeA:1:1 [0] NCCL INFO Using network FasTrak"])
    system = assume(table).system
    assert system.name == "gcp-a3-mega" and (system.nics_per_node, system.nic_Gbps) == (8, 200.0)
    assert system.fabric_class == "tcpxo"
    assert "Using network FasTrak" in system.provenance["fabric"]
    assert system.provenance["gpu"] == "from GPU model in device lines"


def test_gpudirect_tcpx_runs_nccl_on_the_ring_with_simple_unless_the_log_says_otherwise(tmp_path):
    table = _log(tmp_path, ["nodeA:1:1 [0] NCCL INFO NET/GPUDirectTCPX ver. 3.1.8."])
    system = assume(table).system
    assert system.name == "gcp-a3-high" and (system.nccl_algo, system.nccl_proto) == ("Ring", "Simple")
    assert "GPUDirect-TCPX" in system.provenance["nccl_algo"]
    # an echoed NCCL_PROTO is what ran; GPUDirect-TCPXO (A3 Mega) keeps NCCL's own choice
    echoed = _log(
        tmp_path,
        [
            "nodeA:1:1 [0] NCCL INFO NET/GPUDirectTCPX ver. 3.1.8.",
            "nodeA:1:1 [0] NCCL INFO NCCL_PROTO set by environment to LL128",
        ],
    )
    assert (assume(echoed).system.nccl_algo, assume(echoed).system.nccl_proto) == ("Ring", "LL128")
    mega = assume(_log(tmp_path, ["nodeA:1:1 [0] NCCL INFO Using network FasTrak"])).system
    assert (mega.nccl_algo, mega.nccl_proto) == ("", "")


def test_a_host_name_picks_the_instance(tmp_path):
    table = _log(tmp_path, [], hosts=("p5en-st-1", "p5en-st-2"), gpu="NVIDIA H200")
    system = assume(table).system
    assert system.name == "aws-p5en" and system.fabric == "efa"
    assert "p5en-st-1" in system.provenance["nics_per_node"]


def test_ib_nic_count_from_the_log_and_gdr_from_channel_lines(tmp_path):
    table = _log(
        tmp_path,
        [
            "nodeA:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB "
            "[3]mlx5_3:1/IB ; OOB eth0:10.0.0.1<0>",
            "nodeA:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA",
        ],
    )
    system = assume(table).system
    assert (system.nics_per_node, system.fabric, system.net_gdr) == (4, "ib", True)
    assert "NET/IB : Using" in system.provenance["nics_per_node"] and "GDRDMA" in system.provenance["net_gdr"]


def test_flags_for_what_no_log_says(tmp_path):
    table = _log(tmp_path, [])
    system = assume(table, HardwareSpec(fabric="efa")).system
    assert system.name == "aws-p5" and system.provenance["fabric"] == "user override (--fabric)"
    text = EXAMPLES.joinpath("10_pcie-2080ti-x2-allreduce.txt").read_text()
    pair = parse("\n".join(ln for ln in text.splitlines() if not ln.startswith("# hardware:")), "stripped.txt")[0]
    assert not assume(pair).system.pcie_switch_shared
    assert assume(pair, HardwareSpec(pcie_switch=True)).system.pcie_switch_shared
    with pytest.raises(UsageError, match="--fabric infiniband: expected one of ib|roce"):
        HardwareSpec(fabric="infiniband")
    with pytest.raises(UsageError, match="--pcie-switch"):
        assume(table, HardwareSpec(pcie_switch=True))


def test_cli_flags_and_their_errors(capsys, monkeypatch):
    sample = str(EXAMPLES / "10_pcie-2080ti-x2-allreduce.txt")
    ok = CliRunner().invoke(app, ["diagnose", sample, "--pcie-switch", "--json"])
    assert ok.exit_code == 0 and "behind one PCIe switch" in ok.output
    monkeypatch.setattr(sys, "argv", ["collperf", "diagnose", sample, "--fabric", "myrinet"])
    with pytest.raises(SystemExit) as info:
        cli.main()
    err = capsys.readouterr().err
    assert info.value.code == 2 and "--fabric myrinet" in err and "Traceback" not in err


def _stripped(path: Path, tmp_path: Path) -> Path:
    out = tmp_path / path.name
    out.write_text(
        "".join(
            ln
            for ln in path.read_text().splitlines(keepends=True)
            if not ln.lstrip("# ").lower().startswith("hardware:")
        )
    )
    return out


_RANK = {"slower": 0, "not judged": 1, "above": 1, "error": 1, "as expected": 2, "faster": 3}


def _label(verdict: str) -> int:
    return next(v for k, v in _RANK.items() if verdict.startswith(k))


# sample 19 prints no device lines: without its curated line the user names the system
_NAMED = {"19_lambda-b200-2node-16gpu-allreduce.txt": HardwareSpec(cluster="dgx-b200", nodes=2)}


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.txt")), ids=lambda p: p.name[:2])
def test_samples_without_their_hardware_lines_judge_the_same_or_better(path, tmp_path):
    with_lines = diagnose(load(path)[0])
    without = diagnose(load(_stripped(path, tmp_path))[0], hardware=_NAMED.get(path.name))
    assert _label(without.verdict.text) >= _label(with_lines.verdict.text), (with_lines.verdict, without.verdict)
    assert not without.verdict.text.startswith("slower") and not with_lines.verdict.text.startswith("slower")


@pytest.mark.parametrize(
    "line, key, value",
    [
        ("mpirun -np 4 -x NCCL_DEBUG=VERSION -x NCCL_ALGO=ring all_reduce_perf -b 8 -e 1G", "algorithms", "ring"),
        ("mpirun -np 4 -x NCCL_IB_HCA=mlx5_2,mlx5_8 all_reduce_perf -b 8 -e 1G", "nics", 2),
        ("mpirun -np 4 -x NCCL_IB_HCA==mlx5_0:1,mlx5_0:2,mlx5_3:1 all_reduce_perf", "nics", 2),
        ("mpirun -np 2 -x NCCL_IB_DISABLE=1 -x NCCL_SOCKET_IFNAME=net1 all_reduce_perf", "fabric", "socket"),
        ("NCCL_PROTO=LL128 srun all_reduce_perf -b 8 -e 1G", "protocols", ("LL128",)),
    ],
)
def test_the_echoed_launch_command_is_the_environment(line, key, value):
    facts = read_facts(line)
    assert facts.get(key) == value
    name = {
        "algorithms": "NCCL_ALGO=",
        "nics": "NCCL_IB_HCA=",
        "fabric": "NCCL_IB_DISABLE=1",
        "protocols": "NCCL_PROTO=LL128",
    }[key]
    assert name in facts.line(key) and line.split()[0] in facts.line(key)


def test_info_lines_and_plugins_outrank_the_launch_command():
    ib = read_facts(
        "mpirun -x NCCL_IB_HCA=mlx5_0,mlx5_1 all_reduce_perf\n"
        "host:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>"
    )
    assert ib.get("nics") == 1 and "NET/IB : Using" in ib.line("nics")
    efa = read_facts("mpirun -x NCCL_IB_DISABLE=1 -x FI_PROVIDER=efa all_reduce_perf")
    assert "fabric" not in efa  # a plugin carries the traffic, not NCCL's sockets
    excluded = read_facts("mpirun -x NCCL_IB_HCA=^mlx5_4 all_reduce_perf")
    assert "nics" not in excluded  # '^' names the HCAs left out: the count is not known


def _pcie_pair(tmp_path, buses, extra=()):
    devices = [
        f"#  Rank {2 * h + k} Group  0 Pid {h} on node{h} device {k} [0000:{bus}:00] NVIDIA L40S"
        for h in range(2)
        for k, bus in enumerate(buses)
    ]
    rows = [
        f"{n:12d} {n // 4:12d}     float     sum      -1  {t:8.1f} 0 0 0 {t:8.1f} 0 0 0"
        for n, t in ((1 << 20, 300.0), (1 << 26, 9000.0), (1 << 30, 150000.0))
    ]
    path = tmp_path / "pair.txt"
    path.write_text(
        "\n".join(
            [
                "# nThread 1 nGpus 2 minBytes 1048576 maxBytes 1073741824 step: 64(factor)",
                "# Using devices",
                *devices,
                *extra,
                *rows,
            ]
        )
        + "\n"
    )
    return load(path)[0]


def test_pcie_gpus_on_two_cpu_sockets_go_through_host_memory(tmp_path):
    system = assume(_pcie_pair(tmp_path, ("61", "e1"))).system
    assert system.p2p is False and system.fabric_class != "pcie-p2p"
    assert "[0000:61:00]" in system.provenance["p2p"] and "[0000:e1:00]" in system.provenance["p2p"]
    assert assume(_pcie_pair(tmp_path, ("61", "62"))).system.p2p is True  # one socket: the catalogue's P2P
    said = _pcie_pair(tmp_path, ("61", "e1"), ["node0:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC"])
    assert assume(said).system.p2p is True and "via P2P/IPC" in assume(said).system.provenance["p2p"]


def test_a_network_fabric_flag_splits_a_rack_scale_run_into_its_nodes(tmp_path):
    # 2 hosts x 4 GB300: one NVLink domain unless --fabric says the trays reach each other over a network
    devices = [
        f"#  Rank {r} Group  0 Pid {r} on host{r // 4} device {r % 4} [0008:06:00] NVIDIA GB300" for r in range(8)
    ]
    rows = [
        f"{n:12d} {n // 4:12d}     float    none      -1  {t:8.1f} 0 0 N/A {t:8.1f} 0 0 N/A"
        for n, t in ((1 << 20, 60.0), (1 << 26, 900.0), (1 << 30, 9000.0))
    ]
    path = tmp_path / "gb300.txt"
    header = (
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
        "busbw #wrong"
    )
    path.write_text(
        "\n".join(
            [
                "# Collective test starting: all_gather_perf",
                "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1073741824 step: 64(factor)",
                "# Using devices",
                *devices,
                header,
                *rows,
            ]
        )
        + "\n"
    )
    table = load(path)[0]
    one = assume(table).system
    assert (one.nodes, one.fabric_class) == (1, "nvl72")
    split = assume(table, HardwareSpec(fabric="roce")).system
    assert (split.nodes, split.gpus_per_node, split.nics_per_node, split.fabric_class) == (2, 4, 4, "roce")
    assert "--fabric roce" in split.provenance["nodes"]


def test_a_prefix_or_a_json_env_list_names_no_nic_count():
    assert "nics" not in read_facts("mpirun -x NCCL_IB_HCA=mlx5 all_reduce_perf")  # every mlx5_* device
    facts = read_facts('{"env":["NCCL_IB_HCA=mlx5_0,mlx5_1","OMP_NUM_THREADS=8"],"nccl_version":23007}')
    assert facts.get("nics") == 2 and "OMP" not in facts.line("nics")
