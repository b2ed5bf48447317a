"""The networks between nodes as parts: each NIC (or network) a system can carry, its line rate and fabric
class, with its source; and the physical limits a user's flag is checked against (no NIC faster than the
fastest one shipped, no GPU link faster than the fastest NVLink)."""

from __future__ import annotations

from dataclasses import dataclass

from collperf.model.hardware.parts import PCIE_X16_GBps


@dataclass(frozen=True)
class NIC:
    key: str
    name: str
    Gbps: float          # line rate of one port as sold
    fabric: str          # the fabric class it runs (model/hardware/system.py NETWORK_FABRICS)
    source: str


NICS: dict[str, NIC] = {n.key: n for n in (
    NIC("cx5-edr", "ConnectX-5 EDR InfiniBand", 100.0, "ib", "NVIDIA ConnectX-5 VPI adapter product brief"),
    NIC("cx6-hdr", "ConnectX-6 HDR InfiniBand", 200.0, "ib", "NVIDIA ConnectX-6 VPI adapter product brief"),
    NIC("cx7-ndr", "ConnectX-7 NDR InfiniBand", 400.0, "ib", "NVIDIA ConnectX-7 adapter product brief"),
    NIC("cx7-eth", "ConnectX-7 400GbE (RoCE)", 400.0, "roce", "NVIDIA ConnectX-7 adapter product brief"),
    NIC("cx8-xdr", "ConnectX-8 SuperNIC XDR / 800GbE", 800.0, "ib", "NVIDIA ConnectX-8 SuperNIC product page"),
    NIC("bf3", "BlueField-3 SuperNIC 400 Gb/s", 400.0, "roce", "NVIDIA BlueField-3 SuperNIC product brief"),
    NIC("thor2", "Broadcom BCM57608 Thor 2 400GbE", 400.0, "roce",
        "Broadcom BCM57608 (Thor 2) 400G Ethernet adapter product brief"),
    NIC("efa-100", "AWS EFA 100 Gb/s (p4d, p5)", 100.0, "efa", "Amazon EFA user guide, supported instance types"),
    NIC("efa-200", "AWS EFA 200 Gb/s (p5en)", 200.0, "efa", "Amazon EC2 P5 instances (p5en.48xlarge)"),
    NIC("gvnic-tcpx", "Google GPUDirect-TCPX NIC 200 Gb/s", 200.0, "tcpx",
        "Google Cloud accelerator-optimized machines, network (a3-highgpu-8g)"),
    NIC("gvnic-tcpxo", "Google GPUDirect-TCPXO NIC 200 Gb/s", 200.0, "tcpxo",
        "Google Cloud accelerator-optimized machines, network (a3-megagpu-8g)"),
    NIC("cassini", "HPE Slingshot 11 NIC (Cassini) 200 Gb/s", 200.0, "slingshot",
        "HPE Slingshot 11 NIC data sheet (200 Gb/s)"),
)}

# The fastest NIC port shipped (ConnectX-8 / XDR, 800 Gb/s): a --nic-rate above twice it is no NIC
MAX_NIC_Gbps = max(n.Gbps for n in NICS.values())
# The fastest GPU-to-GPU link of one GPU per direction (NVLink 5: 1.8 TB/s both directions, B200/B300/GB300)
MAX_GPU_LINK_GBps = 900.0
# The slowest host link a GPU has (PCIe Gen3 x4 as on some consumer boards): below it no GPU link
MIN_GPU_LINK_GBps = PCIE_X16_GBps[3] / 4
