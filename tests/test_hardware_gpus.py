"""The NVIDIA data-centre rows of the parts table and the names tools print for them.

Every name below was printed by a real tool, as found in public logs and lists: the NVIDIA driver's list of
supported products (the names nvidia-smi and cudaGetDeviceProperties print), nvidia-smi tables, PyTorch's
collect_env and get_device_name, TensorFlow's device log, CUDA's deviceQuery, Kineto traces; the last group is
what users type for --gpu."""

import dataclasses

import pytest

from collperf.errors import UsageError
from collperf.model.hardware.gpus import BY_KEY, GPUS
from collperf.model.hardware.gpus_other import OTHER_GPUS
from collperf.model.hardware.names import find_gpu, gpu_part, normalize
from collperf.model.hardware.parts import figure_in

DRIVER = "NVIDIA driver's supported-products list"

# (printed name, row key, where it was printed), sorted by generation
NAMES = [
    ("Tesla P100-PCIE-12GB", "p100-pcie-12gb", "CUDA deviceQuery; TensorFlow device log"),
    ("Tesla P100-PCIE-16GB", "p100-pcie-16gb", "nvidia-smi -L in a public setup note"),
    ("Tesla P100-SXM2-16GB", "p100-sxm2-16gb", "nvidia-smi table; cudaGetDeviceProperties name"),
    ("Tesla V100-PCIE-16GB", "v100-pcie-16gb", "nvidia-smi / PyTorch get_device_name"),
    ("Tesla V100-PCIE-32GB", "v100-pcie-32gb", "nvidia-smi / PyTorch get_device_name"),
    ("Tesla V100S-PCIE-32GB", "v100s-pcie-32gb", "TensorFlow physical_device_desc"),
    ("Tesla V100-SXM2-16GB", "v100-sxm2-16gb", "Kineto trace deviceProperties"),
    ("Tesla V100-SXM2-32GB", "v100-sxm2-32gb", "Linux kernel PCI id comment; nvidia-smi"),
    ("Tesla V100-SXM3-32GB", "v100-sxm3-32gb", "PyTorch collect_env on a DGX-2"),
    ("Tesla T4", "t4", DRIVER),
    ("NVIDIA A100-PCIE-40GB", "a100-pcie-40gb", DRIVER),
    ("NVIDIA A100 80GB PCIe", "a100-pcie-80gb", DRIVER),
    ("NVIDIA A100-SXM4-40GB", "a100-sxm4-40gb", DRIVER),
    ("NVIDIA A100-PG509-200", "a100-sxm4-40gb", "Kineto trace deviceProperties; driver list: PCI device 20B0"),
    ("NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb", DRIVER),
    ("NVIDIA PG509-210", "a100-sxm4-80gb", "driver list: PCI device 20B2, the A100-SXM4-80GB's"),
    ("NVIDIA A800-SXM4-80GB", "a800-sxm4-80gb", DRIVER),
    ("NVIDIA A800 80GB PCIe", "a800-pcie-80gb", DRIVER),
    ("NVIDIA A800 80GB PCIe LC", "a800-pcie-80gb", DRIVER),
    ("NVIDIA A30", "a30", DRIVER),
    ("NVIDIA A10", "a10", DRIVER),
    ("NVIDIA A10G", "a10g", DRIVER),
    ("NVIDIA A40", "a40", DRIVER),
    ("NVIDIA A16", "a16", DRIVER),
    ("NVIDIA A2", "a2", DRIVER),
    ("NVIDIA RTX A6000", "rtx-a6000", DRIVER),
    ("NVIDIA L4", "l4", DRIVER),
    ("NVIDIA L40", "l40", DRIVER),
    ("NVIDIA L40S", "l40s", DRIVER),
    ("NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada", DRIVER),
    ("NVIDIA H100 PCIe", "h100-pcie", DRIVER),
    ("NVIDIA H100 80GB HBM3", "h100-sxm5-80gb", DRIVER),
    ("NVIDIA H100", "h100-sxm5-80gb", DRIVER),
    ("NVIDIA H100 NVL", "h100-nvl", DRIVER),
    ("NVIDIA H800", "h800-sxm5", DRIVER),
    ("NVIDIA H800 PCIe", "h800-pcie", DRIVER),
    ("NVIDIA H20", "h20", DRIVER),
    ("NVIDIA H200", "h200-sxm", DRIVER),
    ("NVIDIA H200 NVL", "h200-nvl", DRIVER),
    ("NVIDIA GH200 480GB", "gh200-96gb", "nvidia-smi on a GH200 host; PyTorch get_device_name"),
    ("NVIDIA GH200 120GB", "gh200-96gb", DRIVER),
    ("NVIDIA GH200 144G HBM3e", "gh200-144gb", DRIVER),
    ("NVIDIA B200", "b200", DRIVER),
    ("NVIDIA GB200", "gb200", DRIVER),
    ("NVIDIA B300 SXM6 AC", "b300", DRIVER),
    ("NVIDIA GB300", "gb300", DRIVER),
    ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "rtx-pro-6000-ws", DRIVER),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000-server", DRIVER),
    ("NVIDIA GB10", "gb10", DRIVER),
    # what users type for --gpu
    ("H100", "h100-sxm5-80gb", "--gpu"),
    ("h100-sxm", "h100-sxm5-80gb", "--gpu"),
    ("H100 PCIe", "h100-pcie", "--gpu"),
    ("V100", "v100-sxm2-32gb", "--gpu"),
    ("V100 PCIe", "v100-pcie-32gb", "--gpu"),
    ("A100", "a100-sxm4-80gb", "--gpu"),
    ("H200", "h200-sxm", "--gpu"),
    ("B200", "b200", "--gpu"),
    ("GH200", "gh200-96gb", "--gpu"),
    ("H20", "h20", "--gpu"),
    ("p100", "p100-sxm2-16gb", "--gpu"),
]


@pytest.mark.parametrize("name,key,where", NAMES, ids=[n for n, _, _ in NAMES])
def test_printed_names_resolve_to_their_part(name, key, where):
    assert where
    assert find_gpu(name).key == key


def test_at_least_45_real_printed_names():
    assert len([n for n in NAMES if n[2] != "--gpu"]) >= 45


@pytest.mark.parametrize("name", [n for n, _, _ in NAMES])
def test_no_two_rows_tie_on_a_test_name(name):
    # find_gpu raises on a tie; this names both rows if one appears
    from collperf.model.hardware.names import _matches

    found = _matches(normalize(name))
    assert len(found) == 1 or found[0][0] > found[1][0], [(n, g.key) for n, g in found[:2]]


@pytest.mark.parametrize(
    "name",
    [
        "NVIDIA H20-3e",  # driver list: the 141GB H20, no public figures, so no row
        "NVIDIA H800 NVL",  # driver list: no published sheet
        "NVIDIA A100-SXM-64GB",  # driver list: a 64GB board with no sheet; not the 80GB part
        "NVIDIA A800-SXM4-40GB",  # driver list: no 40GB A800 row; not the 80GB part
        "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",  # a lower-power edition, no row
        "GTX 9999",
        "",
    ],
)
def test_parts_without_a_row_resolve_to_none(name):
    assert find_gpu(name) is None


def test_an_unknown_name_is_a_usage_error_that_names_it():
    with pytest.raises(UsageError, match="GTX 9999.*not in the parts table"):
        gpu_part("GTX 9999")


def test_a100_pcie_without_memory_is_ambiguous_and_asks_for_it():
    with pytest.raises(UsageError, match="A100 PCIe 40GB or A100 PCIe 80GB|A100 PCIe 80GB or A100 PCIe 40GB"):
        find_gpu("A100 PCIe")


def test_keys_are_unique():
    keys = [g.key for g in GPUS]
    assert len(keys) == len(set(keys)) == len(BY_KEY)


def test_every_quote_holds_its_figure_and_every_sourced_field_has_a_source():
    # the rows of gpus.py only: gpus_other.py's rows have their own test
    for gpu in GPUS[: len(GPUS) - len(OTHER_GPUS)]:
        for field, quote in gpu.quotes.items():
            value = gpu.tflops[field[7:]] if field.startswith("tflops.") else getattr(gpu, field)
            assert figure_in(value, quote), (gpu.key, field)
        needed = ["memory_GB", "memory_TBps", "pcie_gen"] + [f"tflops.{d}" for d in gpu.tflops]
        needed += ["links", "link_total_GBps"] if gpu.links else []
        assert all(gpu.sources.get(f) for f in needed), gpu.key
        assert all("(" in s and ")" in s for s in gpu.sources.values()), gpu.key  # title (URL)


def test_a_wrong_quote_is_refused():
    h100 = BY_KEY["h100-sxm5-80gb"]
    with pytest.raises(UsageError, match="quote for memory_TBps"):
        dataclasses.replace(h100, quotes={**h100.quotes, "memory_TBps": "GPU memory bandwidth 3.9TB/s"})


def test_a_missing_source_is_refused():
    h100 = BY_KEY["h100-sxm5-80gb"]
    sources = {k: v for k, v in h100.sources.items() if k != "tflops.fp8"}
    with pytest.raises(UsageError, match="no source for tflops.fp8"):
        dataclasses.replace(h100, sources=sources)


def test_figures_printed_in_other_units_and_with_sparsity_are_read():
    assert figure_in(0.9, "Memory Bandwidth 900 GB/sec")  # V100: GB/s for a TB/s field
    assert figure_in(1800, "fifth-generation NVLink 1.8TB/s")  # Blackwell: TB/s for a GB/s field
    assert figure_in(2250, "FP16/BF16 Tensor Core 4.5 petaFLOPS (with sparsity)")
    assert not figure_in(2250, "FP16/BF16 Tensor Core 4.5 petaFLOPS")  # halved only where the quote says sparse
    assert not figure_in(0.9, "GPU memory 900GB")  # a size is not a rate


def test_hand_computed_figures():
    h100 = BY_KEY["h100-sxm5-80gb"]
    assert h100.link_GBps == 450 and h100.per_link_GBps == 25  # 900 / 2, over 18 links
    assert BY_KEY["a800-sxm4-80gb"].per_link_GBps == 25  # 400 / 2 / 8: NVLink3's rate
    assert BY_KEY["v100-sxm2-32gb"].per_link_GBps == 25  # 300 / 2 / 6
    assert BY_KEY["b200"].flops("bf16") == 2250e12  # 4.5 PFLOPS sparse, halved
    assert BY_KEY["v100-sxm2-32gb"].flops("bf16") == 125e12  # Volta: bf16 falls back to fp16
    b200 = BY_KEY["b200"]  # the HGX B200 column, per GPU
    assert b200.memory_bytes == 180 * 2**30 and b200.memory_Bps == 7.7e12 and b200.flops("fp64") == 37e12
    gb200 = BY_KEY["gb200"]  # one GPU of the superchip
    assert gb200.memory_bytes == 186 * 2**30 and gb200.memory_Bps == 8e12 and gb200.flops("fp4") == 10000e12
    assert BY_KEY["b300"].flops("fp4") == 14000e12  # HGX B300: '18 PFLOPS | 14 PFLOPS'
    assert BY_KEY["gb300"].flops("fp4") == 15000e12 and BY_KEY["gb300"].memory_GB == 279
    assert BY_KEY["h800-sxm5"].link_GBps == BY_KEY["a800-sxm4-80gb"].link_GBps == 200  # 400 GB/s both ways
    assert BY_KEY["rtx-pro-6000-server"].memory_TBps == 1.597  # below the Workstation's 1.792
    assert BY_KEY["a2"].pcie_GBps == 15.75  # Gen4 x8
    assert BY_KEY["gb10"].links == 0 and BY_KEY["gb10"].form == "SoC"


def test_peers_share_a_family():
    assert {g.family for g in GPUS if g.key.startswith("a100-")} == {"A100"}
    assert BY_KEY["h100-nvl"].family == BY_KEY["h100-pcie"].family == "H100"
