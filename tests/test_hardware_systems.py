"""Systems composed of parts: a GPU on its board with its network, resolved from what the input says, never a
whole system borrowed for a GPU it does not have; the same verdict from a log's text and from its file; flags
beyond any physical part refused or questioned; a result faster than any public run not called good."""

from pathlib import Path

import pytest

from collperf import api
from collperf.diagnose import assume, diagnose
from collperf.expect.loglines import read_facts
from collperf.errors import UsageError
from collperf.ingest import load, parse
from collperf.model.hardware.boards import BOARDS, default_board
from collperf.model.hardware.compose import compose
from collperf.model.hardware.names import gpu_part
from collperf.model.hardware.catalogue import CATALOGUE, get_system, system_for_gpu
from collperf.spec import HardwareSpec

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_an_h100_sxm_on_nvswitch_gen3_is_the_dgx_h100_hardware():
    # DGX H100 data sheet: 18 NVLink 4 links, 900 GB/s both directions per GPU, NVSwitch with SHARP, 8x 400G IB
    system = compose(gpu_part("H100 SXM5 80GB"), BOARDS["nvswitch-gen3"])
    assert (system.nvlink_links, system.nvlink_GBps, system.nvswitch, system.nvls) == (18, 450.0, True, True)
    assert (system.nics_per_node, system.nic_Gbps, system.fabric, system.pcie_gen) == (8, 400.0, "ib", 5)
    assert system.fabric_class == "nvswitch-nvls"
    assert "GPU part H100 SXM5 80GB" in system.provenance["nvlink_GBps"]
    assert "board NVSwitch gen 3" in system.provenance["nvswitch"]


def test_a_gpu_named_alone_takes_the_reference_system_only_where_the_hardware_is_the_same():
    assert system_for_gpu("NVIDIA H100 80GB HBM3").name == "dgx-h100"
    assert system_for_gpu("NVIDIA A100-SXM4-80GB").name == "dgx-a100"
    # an H800 has 8 NVLink links (400 GB/s both directions), not the H100's 18: its own composition
    h800 = system_for_gpu("NVIDIA H800")
    assert h800.name != "dgx-h100" and h800.nvlink_GBps == 200.0 and h800.nvswitch


@pytest.mark.parametrize(
    "name, fabric_class, nvlink, pcie_gen, p2p",
    [
        ("H100 PCIe", "pcie-p2p", 0, 5, True),  # a PCIe card: no NVSwitch, no NVLS
        ("Tesla V100-PCIE-32GB", "pcie-p2p", 0, 3, True),  # not a DGX-1V over NVLink
        ("NVIDIA GeForce RTX 4090", "pcie-host", 0, 4, False),  # Gen4, no peer-to-peer: not the Gen3 2080 Ti template
        ("NVIDIA GeForce RTX 5090", "pcie-host", 0, 5, False),
    ],
)
def test_pcie_cards_are_pcie_boxes_of_their_own_generation(name, fabric_class, nvlink, pcie_gen, p2p):
    system = system_for_gpu(name, gpus_per_node=4)
    assert (system.fabric_class, system.nvlink_links, system.pcie_gen, system.p2p) == (
        fabric_class,
        nvlink,
        pcie_gen,
        p2p,
    )
    assert not system.nvls


def test_gh200_four_to_a_node_on_an_nvlink_mesh_with_slingshot():
    # HPE Cray EX254n: 4 GH200, each pair on 6 NVLink links; 4x Slingshot 11 (200 Gb/s)
    system = system_for_gpu("NVIDIA GH200 480GB", nodes=2, gpus_per_node=4)
    assert system.board == "gh200-quad" and system.fabric == "slingshot"
    assert (system.nics_per_node, system.nic_Gbps, system.links_per_peer) == (4, 200.0, 6)
    assert system.fabric_class == "slingshot"
    one = system.with_("test", nodes=1)
    assert one.fabric_class == "nvlink-mesh" and not one.nvswitch and not one.nvls
    # three peers x 6 links of the GPU's 18: every link is used, at 25 GB/s per link per direction
    assert one.intra_Bps == pytest.approx(450e9)


def test_mi250x_gcds_are_the_devices_and_the_node_is_frontiers():
    system = system_for_gpu("AMD Instinct MI250X", gpus_per_node=8)
    assert system.board == "mi250x-node" and system.fabric_class == "xgmi" and system.amd
    part = gpu_part("AMD Instinct MI250X")
    assert part.gcds == 2 and part.memory_bytes == pytest.approx(part.memory_GB * 2**30 / 2)


def test_gb10_is_one_gpu_per_spark_over_200g_roce():
    system = system_for_gpu("NVIDIA GB10", nodes=2, gpus_per_node=1)
    assert (system.board, system.fabric, system.nic_Gbps, system.gpus_per_node) == ("gb10-spark", "roce", 200.0, 1)


def test_default_board_follows_form_factor_and_link_generation():
    assert default_board(gpu_part("B200")).key == "nvswitch-gen4"
    assert default_board(gpu_part("GB200")).key == "nvl72"
    assert default_board(gpu_part("Tesla V100-SXM2-32GB")).key == "dgx1-cube-mesh"
    assert default_board(gpu_part("AMD Instinct MI300X")).key == "xgmi-mesh-8"
    assert default_board(gpu_part("GH200"), gpus_per_node=1).key == "gh200-single"


def test_a_gpu_the_table_lacks_is_not_judged_on_a_stand_in():
    with pytest.raises(UsageError, match="not in the parts table"):
        system_for_gpu("Quantum Accelerator 9000")
    table = parse(_device_log("Quantum Accelerator 9000"), "q.txt")[0]
    assumed = assume(table)
    assert assumed.system is None and "not in the parts table" in assumed.why_none


def _device_log(gpu: str, ranks: int = 2) -> str:
    devices = "".join(f"#  Rank  {r} Group  0 Pid 1 on host{r} device  0 [0x01] {gpu}\n" for r in range(ranks))
    rows = "".join(
        f"{1 << k:>12} {(1 << k) // 4:>12}     float     sum      -1   {100 + k:7.2f}   0.00   0.00      0"
        f"   {100 + k:7.2f}   0.00   0.00      0\n"
        for k in range(10, 28)
    )
    return (
        "# nThread 1 nGpus 1 minBytes 1024 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20\n"
        "#\n# Using devices\n" + devices + "#\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
        "   busbw #wrong\n" + rows
    )


def test_a_log_gives_the_same_verdict_from_its_text_and_from_its_file():
    path = EXAMPLES / "19_lambda-b200-2node-16gpu-allreduce.txt"
    from_file = diagnose(load(path)[0])
    from_text = diagnose(parse(path.read_text(), "pasted")[0])
    assert from_file.verdict == from_text.verdict and not from_text.verdict.text.startswith("not judged")
    assert [v.verdict for v in from_file.sizes] == [v.verdict for v in from_text.sizes]
    assert from_text.assumed.system.name == from_file.assumed.system.name


def test_libfabric_cxi_provider_is_slingshot():
    facts = read_facts(
        "nid001:1:1 [0] NCCL INFO NET/OFI Selected Provider is cxi (found 4 nics)\n"
        "nid001:1:1 [0] NCCL INFO Using network AWS Libfabric\n"
    )
    assert facts.get("fabric") == "slingshot" and facts.get("nics") == 4


@pytest.mark.parametrize(
    "flag, value, words",
    [
        ("nic_rate", "400GB/s", "did you mean 400Gb/s"),  # 3.2 Tb/s: no NIC
        ("intra_bandwidth", "3000GB/s", "beyond any GPU's links"),  # data sheets print both directions
        ("intra_bandwidth", "10Mb/s", "below any GPU's host link"),
    ],
)
def test_rates_beyond_any_part_are_refused_with_the_reading_meant(flag, value, words):
    with pytest.raises(UsageError, match=words):
        HardwareSpec(**{flag: value})


def test_a_gpu_link_given_in_bits_is_questioned():
    notes = HardwareSpec(intra_bandwidth="900Gb/s").questioned()
    assert len(notes) == 1 and "112.5 GB/s" in notes[0] and "900GB/s" in notes[0]
    assert HardwareSpec(intra_bandwidth="450GB/s", nic_rate="400Gb/s").questioned() == []


def test_an_impossible_time_on_nvls_is_not_called_good():
    # 1 GB in 2 ms on one DGX H100 is 875 GB/s busbw, about twice any public run: under the NVLS data-sheet
    # bound, so only the public runs can say it is not real
    result = api.diagnose_measurement(collective="allreduce", size="1GB", time="2ms", ranks=8, cluster="dgx-h100")
    assert result.verdict.text.startswith("faster than any public run")
    assert "time's unit" in result.verdict.text


def test_a_gpu_name_stands_for_its_system_wherever_a_system_is_named():
    # predict, plan and simulate read a --cluster; diagnose a --gpu: one composed system for one GPU
    key = get_system("RTX 4090").name
    assert key not in CATALOGUE and get_system(key).gpu_part == gpu_part("RTX 4090").key
    assumed = assume(None, HardwareSpec(gpu="RTX 4090"), ranks=4).system
    assert (assumed.pcie_gen, assumed.p2p, assumed.gpu_part) == (4, False, get_system(key).gpu_part)


# ---- every consumer reads the one system a GPU resolves to ------------------------------------------------


def _gh200():
    return get_system("GH200")


def test_predict_prices_the_gpus_own_links():
    from collperf.spec import NetworkSpec

    cluster = NetworkSpec(cluster="GH200", ranks=8).resolve_cluster()
    system = _gh200()
    # four GH200 per node on their NVLink mesh, 4x 200 Gb/s Slingshot NICs: the part's and the board's figures
    assert (cluster.ranks_per_node, cluster.nodes, cluster.nics_per_node) == (4, 2, 4)
    assert cluster.intra.bandwidth_Bps == pytest.approx(system.intra_Bps) == pytest.approx(450e9)
    assert cluster.inter.bandwidth_Bps == pytest.approx(200e9 / 8)
    predictions = api.predict("allreduce", size="1GiB", network=NetworkSpec(cluster="GH200", ranks=8), expected=True)
    assert predictions.assumed.system.gpu_part == system.gpu_part


def test_plan_reads_the_parts_memory_and_peaks():
    from collperf.model.hardware.presets import get_preset
    from collperf.model.hardware.gpus import BY_KEY
    from collperf.plan.gpus import gpu_of, require_gpu
    from collperf.plan.memory import gpu_memory_of

    part = gpu_part("GH200")
    gpu = gpu_of(get_preset("GH200"))
    assert gpu.peak_flops == part.flops("bf16") and gpu.memory_bytes == part.memory_bytes
    assert gpu_memory_of(get_preset("GH200")) == part.memory_bytes
    # every catalogue entry plans: memory and a bf16 (or fp16) peak from its GPU part, except where the part's sheet
    # prints neither (GB10: FP4 only), which plan refuses with the flag to give
    for name, system in CATALOGUE.items():
        assert gpu_memory_of(get_preset(name)), name
        if BY_KEY[system.gpu_part].flops("bf16"):
            assert gpu_of(get_preset(name)).peak_flops > 0, name
        else:
            with pytest.raises(UsageError, match="--flops"):
                require_gpu(get_preset(name))


def test_simulate_takes_the_same_cluster_as_predict():
    from collperf.model.hardware.catalogue import to_cluster
    from collperf.spec import NetworkSpec, SimulateSpec

    spec = SimulateSpec(
        collective="allreduce",
        algorithm="ring",
        size="64MiB",
        topology="cluster:2x4",
        network=NetworkSpec(cluster="GH200", ranks=8),
    )
    assert spec.network.resolve_cluster().intra == to_cluster(_gh200(), nodes=2).intra


def test_trace_judges_on_the_gpu_its_device_properties_name():
    from types import SimpleNamespace
    from collperf.trace.system import assume_system

    ranks = [
        SimpleNamespace(gpu="NVIDIA GH200 480GB", nccl_version="2.21.5", host=f"nid{r // 4}", world_size=8)
        for r in range(8)
    ]
    system = assume_system(ranks, HardwareSpec()).system
    assert system.gpu_part == gpu_part("GH200").key and (system.nodes, system.gpus_per_node) == (2, 4)
    assert system.name == "hpe-ex254n"


def test_export_prices_nccls_rules_on_the_same_system():
    from collperf.spec import TunerSpec

    hardware = HardwareSpec(gpu="GH200", nodes=2)
    assert assume(None, hardware, 8).system.name == "hpe-ex254n"
    rules = api.export_nccl_tuner(TunerSpec(hardware=hardware, ranks=8))
    assert rules


def test_a_gpu_flag_that_contradicts_the_logs_device_lines_is_an_error_naming_both():
    table = load(EXAMPLES / "14_h100-ib400-2node-16gpu-allreduce.txt")[0]
    with pytest.raises(UsageError, match=r"--gpu B200 \(B200\) contradicts the log's device lines .*H100"):
        assume(table, HardwareSpec(gpu="B200"))
    # the same family in other words is the flag's reading, not a contradiction
    assert assume(table, HardwareSpec(gpu="H100")).system.gpu_part == gpu_part("H100").key


@pytest.mark.parametrize(
    "gpu, system",
    [("H20", "hgx-h20"), ("H800", "hgx-h800"), ("NVIDIA A100-PG509-200", "dgx-a100"), ("GH200", "hpe-ex254n")],
)
def test_a_reference_system_is_taken_only_for_its_own_gpu_family(gpu, system):
    # an H20 has the H100's links on the same board and is still not a DGX H100 (its peers are not H100 runs)
    assert assume(None, HardwareSpec(gpu=gpu), ranks=8).system.name == system


def test_one_gpu_per_spark_whatever_the_rank_count():
    assumed = assume(None, HardwareSpec(gpu="GB10"), ranks=4).system
    assert (assumed.nodes, assumed.gpus_per_node) == (4, 1)


def test_a_name_two_parts_match_says_which_rather_than_not_known():
    # 'A100 PCIe' is the 40GB and the 80GB card alike: the error names both and what settles it, not "not in the
    # parts table"; the nvidia-smi name settles it
    with pytest.raises(
        UsageError, match=r"could mean A100 PCIe 40GB or A100 PCIe 80GB: give the form factor or memory"
    ):
        api.diagnose_measurement(collective="allreduce", size="1GiB", time="50ms", ranks=2, gpu="A100 PCIe")
    row = api.diagnose_measurement(
        collective="allreduce", size="1GiB", time="50ms", ranks=2, gpu="NVIDIA A100-PCIE-40GB"
    ).row
    assert row.expected_s is not None
