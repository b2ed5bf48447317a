"""The GeForce, AMD Instinct and AWS Trainium rows of the GPU table: names tools really printed resolve to the
right row, a two-die package gives each device its share, every figure has its sheet."""

import re

import pytest

from collperf.errors import UsageError
from collperf.model.hardware.gpus import BY_KEY
from collperf.model.hardware.gpus_other import OTHER_GPUS
from collperf.model.hardware.names import find_gpu, gpu_part, normalize
from collperf.model.hardware.parts import SOURCED, figure_in

# Each name as a tool printed it (or a user typed it), and where it was seen.
PRINTED = [
    # nccl-tests "Using devices" lines on six cards, README of tinygrad's open-gpu-kernel-modules P2P fork
    ("NVIDIA GeForce RTX 4090", "geforce-rtx-4090"),
    # lspci in the same README
    ("NVIDIA Corporation AD102 [GeForce RTX 4090] (rev a1)", "geforce-rtx-4090"),
    # CUDA samples p2pBandwidthLatencyTest, "Device: 0, NVIDIA GeForce RTX 3090, pciBusID: 41"
    # (aikitoria/open-gpu-kernel-modules thread "RTX 3090 support")
    ("NVIDIA GeForce RTX 3090", "geforce-rtx-3090"),
    # CUDA samples simpleP2P, "Peer access from NVIDIA GeForce RTX 4090 (GPU0) -> NVIDIA GeForce RTX 5090 (GPU2)"
    ("NVIDIA GeForce RTX 5090", "geforce-rtx-5090"),
    # a browser test note, "Host | 2x NVIDIA GeForce GTX 1080 (driver 580.126.09)"; neofetch "GPU: ..."
    ("NVIDIA GeForce GTX 1080", "geforce-gtx-1080"),
    # a WebGL renderer string, "ANGLE (NVIDIA, NVIDIA GeForce GTX 1080 Ti, OpenGL 4.5)"
    ("ANGLE (NVIDIA, NVIDIA GeForce GTX 1080 Ti, OpenGL 4.5)", "geforce-gtx-1080-ti"),
    # BMInf's benchmark table (README), names as written there, '1080Ti' without the space
    ("NVIDIA GeForce GTX 1080Ti", "geforce-gtx-1080-ti"),
    ("NVIDIA GeForce GTX 1060", "geforce-gtx-1060-6gb"),
    ("NVIDIA GeForce GTX 2080Ti", "geforce-rtx-2080-ti"),  # sic: 'GTX' for an RTX card
    # older drivers print the name without the vendor (the nccl-tests device line of the brief)
    ("GeForce GTX 1080 Ti", "geforce-gtx-1080-ti"),
    # cudaDeviceProp.name in an Opticks log, "name : NVIDIA TITAN RTX"
    ("NVIDIA TITAN RTX", "titan-rtx"),
    # torch.cuda.get_device_name on a TITAN V, keys of a device-memory table
    ("NVIDIA TITAN V", "titan-v"),
    # nvidia-smi on one card of each memory size prints the same name: the bare name is the 10GB card
    ("NVIDIA GeForce RTX 3080", "geforce-rtx-3080"),
    # libdrm's amdgpu.ids marketing names (what rocm-smi --showproductname and PyTorch print), as copied into
    # netdata's amdgpu collector: 0x7408, 0x740C, 0x740F, 0x738C
    ("AMD Instinct MI250X", "mi250x"),
    ("AMD Instinct MI250X / MI250", "mi250x"),
    ("AMD Instinct MI210", "mi210"),
    ("AMD Instinct MI100", "mi100"),
    # `lspci` in a LUMI-style cluster note, "AMD Instinct MI250X/MI250"
    ("AMD Instinct MI250X/MI250", "mi250x"),
    # a validation note, "Platform: AMD Instinct MI250X (gfx90a:sramecc+:xnack-)"
    ("AMD Instinct MI250X (gfx90a:sramecc+:xnack-)", "mi250x"),
    # a Rust test's lookup key, peak_flops_per_sec("amd instinct mi210 gfx90a", ...): the model beats the gfx id
    ("amd instinct mi210 gfx90a", "mi210"),
    # TensorFlow's device log, "-> device: 0, name: AMD Instinct MI210, pci bus id: 0000:1b:00.0"
    ("name: AMD Instinct MI210, pci bus id: 0000:1b:00.0", "mi210"),
    # torch.cuda.get_device_name in a hardware-info script, "Device name: AMD Instinct MI300X"
    ("AMD Instinct MI300X", "mi300x"),
    ("AMD Instinct MI300X OAM", "mi300x"),
    # ROCm's compatibility table, "AMD Instinct MI300A", "MI300", "CDNA3", "gfx942"
    ("AMD Instinct MI300A", "mi300a"),
    ("AMD Instinct MI325X", "mi325x"),
    ("AMD Instinct MI355X", "mi355x"),
    # rocm-smi product names read by a Ruby exporter, when "Radeon Instinct MI50 32GB"
    ("Radeon Instinct MI50 32GB", "mi50-32gb"),
    # a ROCm issue label, "AMD Instinct MI50 (Radeon Instinct MI50 32GB)"
    ("AMD Instinct MI50 (Radeon Instinct MI50 32GB)", "mi50-32gb"),
    # an inventory tool's example output, "AMD Radeon Instinct MI50 ... Memory: 16GB HBM2": the name alone is the
    # 32GB row; the memory must be in the name for the other
    ("AMD Radeon Instinct MI50", "mi50-32gb"),
    ("AMD Radeon Instinct MI50 16GB", "mi50-16gb"),
    ("AMD Instinct MI50/MI60", "mi50-32gb"),
    ("AMD Radeon Instinct MI60", "mi60"),
    # rocm-smi "Card series: Vega 20"; LLVM targets as ROCm's tables and rocminfo print them
    ("Vega 20", "mi50-32gb"),
    ("gfx906", "mi50-32gb"),
    ("gfx908", "mi100"),
    ("gfx90a", "mi250x"),
    ("gfx90a:sramecc+:xnack-", "mi250x"),
    ("gfx942", "mi300x"),
    ("gfx950", "mi355x"),
    # AWS instance types and chips as the Neuron documentation writes them
    ("Trainium", "trainium"),
    ("trn1", "trainium"),
    ("trn1.32xlarge", "trainium"),
    ("Trainium2", "trainium2"),
    ("trn2", "trainium2"),
    # what users type
    ("4090", "geforce-rtx-4090"),
    ("RTX 4090", "geforce-rtx-4090"),
    ("rtx-5090", "geforce-rtx-5090"),
    ("GTX 1080", "geforce-gtx-1080"),
    ("MI250X", "mi250x"),
    ("mi300x", "mi300x"),
    ("mi-300x", "mi300x"),  # an alias list in a public hardware catalogue
    ("RTX 3080 12GB", "geforce-rtx-3080-12gb"),
    ("rtx 3080 ti", "geforce-rtx-3080-ti"),
    ("4080 super", "geforce-rtx-4080-super"),
    ("RTX 4060 Ti", "geforce-rtx-4060-ti"),
]


@pytest.mark.parametrize("printed, key", PRINTED)
def test_printed_names_resolve_to_their_row(printed, key):
    assert gpu_part(printed).key == key


def test_at_least_thirty_printed_names():
    assert len(PRINTED) >= 30


@pytest.mark.parametrize("gpu", OTHER_GPUS, ids=lambda g: g.key)
def test_each_row_answers_to_its_own_name_and_key(gpu):
    assert gpu_part(gpu.name) is gpu
    assert gpu_part(gpu.key) is gpu


# Data-centre parts whose names share a word or digits with these rows: none of this module's patterns may match
# them, whatever rows gpus.py holds (an 'RTX' pattern must not take 'RTX A6000', an 'A10' must not take 'A100').
DATA_CENTRE = [
    "NVIDIA RTX A6000",
    "NVIDIA RTX 6000 Ada Generation",
    "NVIDIA RTX A4000",
    "NVIDIA RTX 4000 Ada",
    "NVIDIA RTX PRO 6000 Blackwell Server Edition",
    "NVIDIA A10",
    "NVIDIA A100-SXM4-80GB",
    "NVIDIA L40S",
    "Tesla V100-SXM2-32GB",
    "Quadro RTX 8000",
    "NVIDIA H100 80GB HBM3",
    "NVIDIA A40",
]


@pytest.mark.parametrize("name", DATA_CENTRE)
def test_no_row_here_claims_a_data_centre_name(name):
    text = normalize(name)
    claimed = [g.key for g in OTHER_GPUS for p in g.names if re.search(p, text)]
    assert claimed == []


@pytest.mark.parametrize(
    "name",
    [
        "NVIDIA GeForce RTX 4090 Laptop GPU",
        "NVIDIA GeForce RTX 2070 SUPER",
        "NVIDIA GeForce GTX 980",
        "AMD Instinct MI25",
        "Inferentia2",
    ],
)
def test_a_part_not_in_the_table_is_a_clear_usage_error(name):
    assert find_gpu(name) is None
    with pytest.raises(UsageError, match=r"is not in the parts table"):
        gpu_part(name)


def test_the_two_die_package_gives_each_device_its_share():
    # MI250X sheet: 128 GB HBM2e at 3.2 TB/s, 383 TFLOPS FP16/BF16, 47.9 TFLOPS FP64, for the package of two
    # GCDs; ROCm and RCCL see each GCD as one device: 64 GB, 1.6 TB/s, 191.5 and 23.95 TFLOPS each. Memory is sold
    # in binary units (parts.GPU.memory_bytes): 64 GB is 64 GiB
    mi250x = BY_KEY["mi250x"]
    assert mi250x.gcds == 2
    assert mi250x.memory_bytes == pytest.approx(64 * 2**30)
    assert mi250x.memory_Bps == pytest.approx(1.6e12)
    assert mi250x.flops("bf16") == pytest.approx(191.5e12)
    assert mi250x.flops("fp64") == pytest.approx(23.95e12)
    # MI250: 362.1 TFLOPS FP16 for the package, 181.05 per GCD
    assert BY_KEY["mi250"].flops("fp16") == pytest.approx(181.05e12)
    # a one-die part keeps the sheet's figure: MI210, 64 GB and 181 TFLOPS
    assert BY_KEY["mi210"].memory_bytes == pytest.approx(64 * 2**30)
    assert BY_KEY["mi210"].flops("bf16") == pytest.approx(181e12)


def test_turing_has_no_bf16_and_falls_back_to_fp16():
    # the Turing white paper prints FP16 tensor peaks only: 56.9 TFLOPS with FP32 accumulate on the 2080 Ti FE
    assert BY_KEY["geforce-rtx-2080-ti"].flops("bf16") == pytest.approx(56.9e12)


def test_nvlink_bridges_per_direction():
    # GA102: four x4 NVLink3 links, 112.5 GB/s in both directions -> 56.25 GB/s each way, 14.0625 per link
    rtx3090 = BY_KEY["geforce-rtx-3090"]
    assert rtx3090.link_GBps == pytest.approx(56.25)
    assert rtx3090.per_link_GBps == pytest.approx(14.0625)
    # TU102: two x8 NVLink2 links, 100 GB/s both directions -> 50 GB/s each way
    assert BY_KEY["geforce-rtx-2080-ti"].link_GBps == pytest.approx(50)
    # Trainium2: 1280 GB/s per chip over four NeuronLink-v3 -> 640 each way, 160 per link
    assert BY_KEY["trainium2"].per_link_GBps == pytest.approx(160)


def test_geforce_peer_to_peer():
    # Turing and later GeForce: no PCIe peer-to-peer; Pascal: the driver default
    for gpu in OTHER_GPUS:
        if gpu.vendor == "nvidia" and gpu.arch in ("Turing", "Ampere", "Ada Lovelace", "Blackwell"):
            assert not gpu.p2p, gpu.key
    assert BY_KEY["geforce-gtx-1080-ti"].p2p


def test_compute_capability_rows():
    # NVIDIA sm; AMD: the NCCL row RCCL indexes (CDNA 4 as Blackwell, CDNA 3 as Hopper, CDNA1/2 as Ampere, GCN as
    # Volta)
    assert [
        BY_KEY[k].compute_capability
        for k in (
            "geforce-gtx-1080",
            "titan-v",
            "geforce-rtx-2080-ti",
            "geforce-rtx-3090",
            "geforce-rtx-4090",
            "geforce-rtx-5090",
        )
    ] == [61, 70, 75, 86, 89, 120]
    assert [
        BY_KEY[k].compute_capability for k in ("mi50-32gb", "mi100", "mi250x", "mi300x", "mi325x", "mi350x", "mi355x")
    ] == [70, 80, 80, 90, 90, 100, 100]


def test_pcie_per_direction():
    # RTX 4060 Ti: PCIe 4.0 x8 -> 31.5 / 2 = 15.75 GB/s; RTX 5090: Gen5 x16 -> 63 GB/s; GTX 1080: Gen3 -> 15.75
    assert BY_KEY["geforce-rtx-4060-ti"].pcie_GBps == pytest.approx(15.75)
    assert BY_KEY["geforce-rtx-5090"].pcie_GBps == pytest.approx(63.0)
    assert BY_KEY["geforce-gtx-1080"].pcie_GBps == pytest.approx(15.75)


@pytest.mark.parametrize("gpu", OTHER_GPUS, ids=lambda g: g.key)
def test_every_figure_has_a_sheet_and_every_quote_holds_its_figure(gpu):
    needed = [f for f in SOURCED if f != "tflops" and (gpu.links or f not in ("links", "link_total_GBps"))]
    needed += [f"tflops.{d}" for d in gpu.tflops]
    for name in needed:
        assert gpu.source_of(name), f"{gpu.key}: {name} has no source"
        # a sheet is named with its address
        assert "(" in gpu.source_of(name) and ")" in gpu.source_of(name), f"{gpu.key}: {name}"
    for name, quote in gpu.quotes.items():
        value = gpu.tflops[name[len("tflops.") :]] if name.startswith("tflops.") else getattr(gpu, name)
        assert figure_in(value, quote), f"{gpu.key}: {name}"


def test_keys_are_unique_across_the_table():
    keys = [g.key for g in OTHER_GPUS]
    assert len(keys) == len(set(keys))
    assert all(BY_KEY[k] is g for k, g in zip(keys, OTHER_GPUS))
