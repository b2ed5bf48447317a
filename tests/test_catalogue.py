"""The one hardware catalogue: each entry's figures against its data sheet (values typed here from the sheets,
not from the code), every old name, one NIC capacity however it is split, one name space for all commands."""

import pytest

from collperf.errors import UsageError
from collperf.model.nccl import expect, system_bound
from collperf.model.hardware.presets import PRESETS, get_preset
from collperf.diagnose import assume
from collperf.model.hardware.catalogue import (
    ALIASES,
    CATALOGUE,
    FABRIC_NCCL_SETTINGS,
    get_system,
    resolve_name,
    system_for_instance,
)
from collperf.spec import HardwareSpec, NetworkSpec
from collperf.cli import app

# name: (GPUs per node, NVLink/xGMI GB/s per GPU both directions, NICs, Gb/s each, fabric, GPUDirect RDMA,
#        words of the data sheet's title)
DATASHEETS = {
    "dgx-a100": (8, 600, 8, 200, "ib", True, "DGX A100"),  # 8x ConnectX-6 HDR 200 Gb/s
    "dgx-h100": (8, 900, 8, 400, "ib", True, "DGX H100"),  # 8x ConnectX-7 400 Gb/s
    "dgx-h200": (8, 900, 8, 400, "ib", True, "DGX H200"),
    "dgx-b200": (8, 1800, 8, 400, "ib", True, "DGX B200"),  # NVLink5 1.8 TB/s per GPU
    "gb200-nvl72": (72, 1800, 72, 400, "ib", True, "GB200 NVL72"),  # 72 GPUs on one NVLink domain
    "gb300-nvl72": (72, 1800, 72, 800, "ib", True, "GB300 NVL72"),  # ConnectX-8 800 Gb/s per GPU
    "mi300x": (8, 896, 8, 400, "ib", True, "MI300X"),  # Infinity Fabric 896 GB/s peer-to-peer
    "mi325x": (8, 896, 8, 400, "roce", True, "MI325X"),  # same 896 GB/s mesh; Thor 2 400G RoCE
    "gcp-a3-high": (8, 900, 4, 200, "tcpx", False, "Google Cloud"),  # 4x 200 Gb/s GPU NICs, GPUDirect-TCPX
    "gcp-a3-mega": (8, 900, 8, 200, "tcpxo", False, "Google Cloud"),  # 8x 200 Gb/s, GPUDirect-TCPXO
    "gcp-a3-ultra": (8, 900, 8, 400, "roce", True, "Google Cloud"),  # 8x 400 Gb/s ConnectX-7 RoCE
    "gcp-a4": (8, 1800, 8, 400, "roce", True, "Google Cloud"),
    "aws-p4d": (8, 600, 4, 100, "efa", True, "P4"),  # 400 Gbps EFA
    "aws-p5": (8, 900, 32, 100, "efa", True, "P5"),  # 3200 Gbps EFAv2
    "aws-p5en": (8, 900, 16, 200, "efa", True, "P5"),  # 3200 Gbps EFAv3
    "aws-g4dn-12xlarge": (4, 0, 1, 50, "efa", False, "G4"),  # 4x T4, 50 Gbps
    "aws-g4dn-metal": (8, 0, 1, 100, "efa", False, "G4"),  # 8x T4, 100 Gbps
    "azure-nd-a100-v4": (8, 600, 8, 200, "ib", True, "NDasrA100_v4"),  # 8x 200 Gb/s HDR
    "azure-nd-h100-v5": (8, 900, 8, 400, "ib", True, "ND H100 v5"),  # 8x 400 Gb/s NDR
    "oci-bm-gpu-h100": (8, 900, 16, 200, "roce", True, "OCI"),  # 16x 200 Gb/s RoCE v2
    "oci-bm-gpu-b200": (8, 1800, 8, 400, "roce", True, "OCI"),  # 8x 400 Gb/s RoCE
}


@pytest.mark.parametrize("name", sorted(DATASHEETS))
def test_entry_matches_its_data_sheet(name):
    gpus, nvlink_bidir, nics, rate, fabric, gdr, title = DATASHEETS[name]
    s = get_system(name)
    assert s.gpus_per_node == gpus
    assert 2 * s.nvlink_GBps == pytest.approx(nvlink_bidir) if nvlink_bidir else s.nvlink_links == 0
    assert (s.nics_per_node, s.nic_Gbps, s.fabric, s.net_gdr) == (nics, rate, fabric, gdr)
    for value in ("gpu", "gpus_per_node", "nics_per_node", "nic_Gbps", "fabric"):
        assert "(" in s.sources[value] and "." in s.sources[value], (name, value)  # a title and an address
    assert title in s.source


def test_node_network_capacity():
    # the one number a node's NICs give, whatever the split: 3.2 Tb/s on every H100/H200 cloud instance but A3
    for name in ("dgx-h100", "aws-p5", "aws-p5en", "oci-bm-gpu-h100", "azure-nd-h100-v5", "gcp-a3-ultra"):
        assert get_system(name).node_network_Bps == pytest.approx(3200e9 / 8)
    assert get_system("gcp-a3-mega").node_network_Bps == pytest.approx(1600e9 / 8)
    assert get_system("gcp-a3-high").node_network_Bps == pytest.approx(800e9 / 8)


def test_one_capacity_however_split_gives_one_expectation_and_one_bound():
    sizes = [1 << 20, 64 << 20, 1 << 30, 8 << 30]
    base = get_system("dgx-h100", nodes=2)
    split16 = base.with_(nics_per_node=16, nic_Gbps=200.0)
    split32 = base.with_(nics_per_node=32, nic_Gbps=100.0)
    for other in (split16, split32):
        want = expect("allreduce", sizes, base).time_s
        assert list(expect("allreduce", sizes, other).time_s) == pytest.approx(list(want))
        assert list(system_bound("allreduce", sizes, other).time_s) == pytest.approx(
            list(system_bound("allreduce", sizes, base).time_s)
        )


def test_old_preset_names_and_values_still_work():
    chapter = get_preset("chapter", 4)  # the worked example: NVLink 1 us / 300 GB/s, 8x 400 Gb/s
    assert (chapter.nodes, chapter.ranks_per_node, chapter.nics_per_node) == (4, 8, 8)
    assert (chapter.intra.latency_s, chapter.intra.bandwidth_Bps) == (1e-6, 300e9)
    assert (chapter.inter.latency_s, chapter.inter.bandwidth_Bps) == (5e-6, 50e9)
    trn1 = get_preset("trn1")
    assert (trn1.ranks_per_node, trn1.inter.latency_s, trn1.inter.bandwidth_Bps) == (16, 15e-6, 100e9 / 8)
    assert get_preset("pcie-gen4").intra.bandwidth_Bps == 31.5e9
    for old in (
        "dgx-h100",
        "dgx-a100",
        "dgx-1v",
        "dgx-2",
        "trn1",
        "pcie-gen4",
        "nvlink300-400gbe",
        "chapter",
        "pcie-p2p",
        "pcie-2080ti",
        "pcie-t4",
        "dgx-b200",
    ):
        assert get_preset(old).source and get_system(old).name == resolve_name(old)


def test_predict_and_diagnose_accept_the_same_names():
    for name in list(CATALOGUE) + list(ALIASES):
        cluster = NetworkSpec(cluster=name, nodes=2).resolve_cluster()
        assert resolve_name(cluster.name) == resolve_name(name) in PRESETS
        assert HardwareSpec(cluster=name).cluster == name
    with pytest.raises(UsageError, match="unknown system 'dgx-z9'"):
        NetworkSpec(cluster="dgx-z9").resolve_cluster()
    with pytest.raises(UsageError, match="--cluster dgx-z9"):
        HardwareSpec(cluster="dgx-z9")


def test_instance_types_in_text():
    assert system_for_instance("node a3-megagpu-8g-0001").name == "gcp-a3-mega"
    assert system_for_instance("instance p5en.48xlarge").name == "aws-p5en"
    assert system_for_instance("p5.48xlarge").name == "aws-p5"
    assert system_for_instance("a plain host") is None


def test_systems_command_lists_the_catalogue_with_its_sheets():
    import json

    from typer.testing import CliRunner

    res = CliRunner().invoke(app, ["systems", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    rows = {r["name"]: r for r in doc["systems"]}
    assert set(DATASHEETS) <= set(rows) and doc["aliases"]["chapter"] == "nvlink300-400gbe"
    assert rows["aws-p5"]["node_network_Gbps"] == 3200 and "aws.amazon.com" in rows["aws-p5"]["sources"]["nic_Gbps"]


def test_a_fabrics_required_nccl_settings_come_from_the_catalogue(monkeypatch):
    tcpx = assume(None, HardwareSpec(cluster="gcp-a3-high", nodes=2), ranks=16).system
    assert (tcpx.nccl_algo, tcpx.nccl_proto) == ("Ring", "Simple")
    assert "tcpx" in tcpx.provenance["nccl_algo"] and "GPUDirect-TCPX" in tcpx.provenance["nccl_proto"]
    # one node: no network, nothing the transport requires
    one = assume(None, HardwareSpec(cluster="gcp-a3-high", nodes=1), ranks=8).system
    assert (one.nccl_algo, one.nccl_proto) == ("", "")
    # a new fabric's settings are a catalogue entry, read as they are
    monkeypatch.setitem(FABRIC_NCCL_SETTINGS, "efa", ({"nccl_proto": "LL128"}, "a test source"))
    efa = assume(None, HardwareSpec(cluster="aws-p5", nodes=2), ranks=16).system
    assert (efa.nccl_algo, efa.nccl_proto) == ("", "LL128") and "a test source" in efa.provenance["nccl_proto"]


def test_every_name_collperf_systems_prints_resolves_to_its_row():
    """The name, the instance or product name and each alias `collperf systems` prints are all --cluster values,
    whatever their case (the cloud consoles write P5.48XLARGE, Standard_ND96isr_H100_v5)."""
    import json

    from typer.testing import CliRunner

    doc = json.loads(CliRunner().invoke(app, ["systems", "--json"]).output)
    printed = (
        [(r["name"], r["name"]) for r in doc["systems"]]
        + [(r["instance"], r["name"]) for r in doc["systems"] if r["instance"]]
        + list(doc["aliases"].items())
    )
    assert ("p5.48xlarge", "aws-p5") in printed and ("Standard_ND96isr_H100_v5", "azure-nd-h100-v5") in printed
    for shown, key in printed:
        for spelled in (shown, shown.upper(), shown.lower(), f"  {shown} "):
            assert resolve_name(spelled) == key, spelled
            assert get_preset(spelled).name == key
    assert resolve_name("DGX  H100") == "dgx-h100"  # the product name, spaced as typed
    # the instance name works wherever --cluster does: predict's network and diagnose's system
    assert NetworkSpec(cluster="p5.48xlarge", nodes=2).resolve_cluster().nics_per_node == 32
    assert assume(None, HardwareSpec(cluster="P5.48XLARGE", nodes=2), ranks=16).system.name == "aws-p5"
    with pytest.raises(UsageError, match="or an instance name as `collperf systems` prints it, e.g. p4d.24xlarge"):
        resolve_name("p6.48xlarge")
