"""The inputs that describe a system rather than a sweep (ingest/inputs.py, diagnose/inputs.py): real samples read,
their facts and check-first items with the line behind each, per-link verdicts with hand-computed numbers, and the
collective of a table that does not name its test read from the table or left undecided with the flag."""

import json
from pathlib import Path

import pytest

from collperf import api, ingest
from collperf.errors import UsageError
from collperf.ingest import link_tests, nccl_debug, nvsmi_topo, topo_xml
from collperf.spec import HardwareSpec

INPUTS = Path(__file__).parent / "fixtures" / "inputs"


def _read(name):
    with pytest.raises(ingest.OtherInput) as e:
        ingest.load(INPUTS / name)
    return e.value.value


def test_a_standalone_nccl_log_is_read_not_refused():
    log = _read("nccl_debug_h800_socket.log")
    assert isinstance(log, nccl_debug.NcclDebugLog)
    assert (log.ranks, log.nodes, log.ranks_per_node) == (4, 1, 4)
    report = api.diagnose_input(str(INPUTS / "nccl_debug_h800_socket.log"))
    what, line = report.check_first[0]
    assert "TCP sockets" in what and line.endswith("NCCL INFO Using network Socket")
    assert ("network between nodes", "TCP sockets (NET/Socket)", line) in report.chose
    json.dumps(report.to_json())


def test_an_nccl_log_counts_its_nics_and_devices():
    report = api.diagnose_input(str(INPUTS / "nccl_debug_ib_4nic.log"))
    facts = {what: value for what, value, _ in report.facts}
    assert facts["NICs per node"] == "4" and facts["network"] == "ib" and facts["ranks per node"] == "4"
    assert any("--gpu" in n for n in report.notes)  # NCCL's lines name no GPU: the flag that gives it


def test_nccl_log_choices_from_tuning_lines_and_forced_settings():
    lines = "\n".join(
        f"h1:1:2 [0] NCCL INFO {x}"
        for x in (
            "comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0",
            "NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>",
            "Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0",
            "NCCL_ALGO set by environment to Ring",
            "Channel 00 : 0[0] -> 1[1] via SHM/direct/direct",
            "AllReduce: 1024 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}",
            "AllReduce: 2048 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}",
            "AllReduce: 1048576 Bytes -> Algo 1 proto 2 time 24.500000",
        )
    )
    log = nccl_debug.parse(lines, "x")
    assert (log.ranks, log.nodes, log.ranks_per_node) == (16, 2, 8)
    from collperf.diagnose.nccl_choices import report

    r = report(log)
    chose = {a: b for a, b, _ in r.chose}
    assert chose["AllReduce 1 KiB-2 KiB"] == "Ring/LL" and chose["AllReduce 1 MiB"] == "Ring/Simple"
    said = " | ".join(w for w, _ in r.check_first)
    assert "GPUDirect RDMA is not used" in said and "via SHM" in said and "NCCL_ALGO=Ring is forced" in said
    assert "1 NIC(s) for 8 GPUs" in said


def test_topology_dump_feeds_the_resolver():
    topo = _read("nccl_topo_ibm_h100x8.xml")
    assert len(topo.gpus) == 8 and len(topo.nics) == 8 and topo.nvswitch and topo.gpu_name == "H100 80GB HBM3"
    assert {g.nvlinks for g in topo.gpus} == {18}  # 5 + 5 + 4 + 4 to the four NVSwitches
    assert topo.paths[(0, "mlx5_7")] == "PIX" and topo.paths[(0, "mlx5_3")] == "SYS"
    report = api.diagnose_input(str(INPUTS / "nccl_topo_ibm_h100x8.xml"))
    system = report.assumed.system
    assert (system.nics_per_node, system.nic_Gbps, system.gpus_per_node) == (8, 200, 8)
    assert "topology" in system.provenance["nic_Gbps"]
    assert report.check_first == []


def test_a_gpu_whose_nic_is_sys_away_and_a_slow_nic_are_named():
    text = (INPUTS / "nccl_topo_ibm_h100x8.xml").read_text()
    # move mlx5_7 off GPU 0's switch onto the other CPU's first switch, at half speed
    text = text.replace('name="mlx5_7" dev="7" speed="200000"', 'name="mlx5_7" dev="7" speed="100000"')
    topo = topo_xml.parse_topology(text.split("-->", 1)[1], "t")
    from collperf.diagnose.links import topology_report

    said = " | ".join(w for w, _ in topology_report(topo).check_first)
    assert "NIC mlx5_7 runs at 100 Gb/s where others run at 200" in said


def test_nvidia_smi_topo_reads_nic_paths():
    text = (
        "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tNV12\tSYS\t0-7\t0\nGPU1\tNV12\t X \tPIX\t0-7"
        "\t0\nNIC0\tSYS\tPIX\t X\n\nNIC Legend:\n\n  NIC0: mlx5_0\n"
    )
    assert nvsmi_topo.looks_like(text)
    topo = nvsmi_topo.parse(text, "t")
    assert topo.paths[(0, "mlx5_0")] == "SYS" and topo.paths[(0, 1)] == "NVL" and topo.gpus[0].nvlinks == 12
    from collperf.diagnose.links import topology_report

    said = " | ".join(w for w, _ in topology_report(topo).check_first)
    assert "GPU 0's nearest NIC (mlx5_0) is SYS away" in said and "GPU 1" not in said


def test_perftest_units_and_a_slow_hca_named():
    test = _read("ib_write_bw_loopback_hdr.txt")
    (m,) = test.measurements  # server and client of one run: one device
    assert m.link == "ib0" and m.bandwidth_GBps == pytest.approx(24056.72 * 1048576 / 1e9)
    block = (
        "---\n RDMA_Write BW Test\n Device         : {d}\n Link type       : IB\n---\n"
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
        " 65536      5000             {bw}             {bw}      0.7\n---\n"
    )
    text = "".join(block.format(d=f"mlx5_{i}", bw=bw) for i, bw in enumerate((392.4, 391.9, 180.2, 392.0)))
    test = link_tests.parse(text, "t")
    from collperf.diagnose.links import link_test_report

    report = link_test_report(test, HardwareSpec(nic_rate="400Gb/s"))
    slow = [v for v in report.links if v.verdict.value == "slow"]
    assert [v.link for v in slow] == ["mlx5_2"]
    assert slow[0].rate_GBps == 50 and "45%" in slow[0].why  # 180.2 Gb/s = 22.5 GB/s of 50 GB/s
    assert report.verdict.startswith("1 of 4 link(s) slow: mlx5_2")


def test_nvbandwidth_pairs_against_pcie():
    report = api.diagnose_input(str(INPUTS / "nvbandwidth_a6000x6_read_ce.txt"), HardwareSpec(gpu="RTX A6000"))
    assert len(report.links) == 30 and all(v.rate_GBps == 31.5 for v in report.links)
    assert not [v for v in report.links if v.verdict.value == "slow"]  # 21.8 GB/s across sockets: 69 % of 31.5


def test_p2p_slower_than_host_memory_is_checked_first():
    report = api.diagnose_input(str(INPUTS / "p2p_bandwidth_6gpu_p2p_slow.txt"))
    what, line = report.check_first[0]
    assert "9.95 GB/s" in what and "22.24 GB/s" in what and line.startswith("line ")


def test_graph_dump_names_sys_paths():
    report = api.diagnose_input(str(INPUTS / "nccl_graph_4gpu_2nic.xml"))
    assert report.chose[0][0] == "ring graph" and "2 channel(s)" in report.chose[0][1]
    assert any("over SYS" in w for w, _ in report.check_first)


def test_fit_refuses_a_system_input_naming_diagnose():
    with pytest.raises(UsageError, match="collperf diagnose"):
        api.fit_logs(str(INPUTS / "nccl_topo_ibm_h100x8.xml"))


def test_diagnose_cli_prints_check_first_with_its_line(capsys, monkeypatch):
    from collperf import cli

    monkeypatch.setattr("sys.argv", ["collperf", "diagnose", str(INPUTS / "nccl_debug_h800_socket.log")])
    try:
        cli.main()
    except SystemExit as e:
        assert e.code in (0, None)
    printed = " ".join(capsys.readouterr().out.split())
    assert "check first:" in printed and "Using network Socket" in printed


_TABLE = (
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
    "#wrong\n"
)


def _rows(op, root, per, factor):
    return (
        _TABLE
        + "".join(
            f"{s:>12} {s // 4 // per:>12} float {op} {root} 100.0 {s / 1e5:.4f} "
            f"{s / 1e5 * factor:.4f} 0 100.0 {s / 1e5:.4f} {s / 1e5 * factor:.4f} 0\n"
            for s in (1 << 20, 1 << 22)
        )
        + "# Avg bus bandwidth    : 1\n"
    )


def test_sendrecv_table_is_sendrecv_not_a_two_rank_allreduce():
    (t,) = ingest.parse(_rows("none", -1, 1, 1.0), "t")
    assert t.collective == "sendrecv"


def test_undecided_collective_gives_no_verdict_and_the_flag(tmp_path):
    path = tmp_path / "a.log"
    path.write_text(_rows("none", -1, 8, 7 / 8))  # allgather and alltoall print exactly this
    (t,) = ingest.load(path)
    assert t.collective == "" and t.header["collective_candidates"] == ["allgather", "alltoall"]
    with pytest.raises(UsageError, match="--collective allgather or --collective alltoall"):
        api.diagnose_logs(str(path))
    (d,) = api.diagnose_logs(str(path), collective="alltoall")
    assert d.table.ranks == 8
    path.write_text(_rows("sum", -1, 1, 1.0))  # a 2-rank allreduce or a sendrecv with an op
    with pytest.raises(UsageError, match="--collective allreduce or --collective sendrecv"):
        api.diagnose_logs(str(path))


# pci.ids 2026.08.22 (github.com/pciutils/pciids), vendor 10de: each id of the table, the name the file gives it
# (quoted in the comment) and the part of ours that name is
PCI_PARTS = {
    "0x1db1": "V100 SXM2 16GB",  # GV100GL [Tesla V100 SXM2 16GB]
    "0x1db5": "V100 SXM2 32GB",  # GV100GL [Tesla V100 SXM2 32GB]
    "0x1db4": "V100 PCIe 16GB",  # GV100GL [Tesla V100 PCIe 16GB]
    "0x1eb8": "T4",  # TU104GL [Tesla T4]
    "0x20b0": "A100 SXM4 40GB",  # GA100 [A100 SXM4 40GB]
    "0x20b2": "A100 SXM4 80GB",  # GA100 [A100 SXM4 80GB]
    "0x20f1": "A100 PCIe 40GB",  # GA100 [A100 PCIe 40GB]
    "0x20b5": "A100 PCIe 80GB",  # GA100 [A100 PCIe 80GB]
    "0x2330": "H100 SXM5 80GB",  # GH100 [H100 SXM5 80GB]
    "0x2331": "H100 PCIe 80GB",  # GH100 [H100 PCIe]
    "0x2324": "H800 SXM5 80GB",  # GH100 [H800]
    "0x2322": "H800 PCIe 80GB",  # GH100 [H800 PCIe]
    "0x2335": "H200 SXM 141GB",  # GH100 [H200 SXM 141GB]
    "0x233b": "H200 NVL 141GB",  # GH100 [H200 NVL]
    "0x2901": "B200",  # GB100 [B200]
    "0x2909": "B200",  # GB100 [HGX B200 168GB]
    "0x2941": "GB200 (per GPU: half a superchip)",  # GB100 [HGX GB200]
    "0x26b9": "L40S",  # AD102GL [L40S]
    "0x2230": "RTX A6000",  # GA102GL [RTX A6000]
    "0x2684": "GeForce RTX 4090",  # AD102 [GeForce RTX 4090]
    "0x2204": "GeForce RTX 3090",  # GA102 [GeForce RTX 3090]
    "0x1e07": "GeForce RTX 2080 Ti",
}  # TU102 [GeForce RTX 2080 Ti Rev. A]


def test_every_pci_device_id_is_the_part_pci_ids_names():
    from collperf.model.hardware.names import find_gpu

    assert set(topo_xml.PCI_GPUS) == set(PCI_PARTS)
    assert {pci_id: find_gpu(name).name for pci_id, name in topo_xml.PCI_GPUS.items()} == PCI_PARTS


@pytest.mark.parametrize(
    "name, old, new",
    [
        ("nvbandwidth_a6000x6_read_ce.txt", "           0         1", "           " + "9" * 5000 + "         1"),
        ("nvbandwidth_a6000x6_read_ce.txt", "\n 1     26.34", "\n ²     26.34"),
        ("p2p_bandwidth_6gpu_p2p_slow.txt", "   D\\D     0      1", "   D\\D     0      " + "7" * 4400),
        ("ib_write_bw_loopback_hdr.txt", " 8388608    20000", " ³8388608    20000"),
        ("ib_write_bw_loopback_hdr.txt", " 8388608    20000", " " + "8" * 4400 + "    20000"),
    ],
)
def test_a_link_test_index_or_size_past_an_int_is_no_traceback(tmp_path, name, old, new):
    """'²' passes str.isdigit and int() refuses it, as it refuses more than 4300 digits: such a token is not an
    index or a size, and the reading ends in a link test or a UsageError."""
    text = (INPUTS / name).read_text()
    assert old in text
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(UsageError):  # OtherInput (the link test read) is one
        ingest.load(path)
