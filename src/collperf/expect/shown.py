"""The values a resolved system is shown with, in order, each with where it came from (its provenance)."""

from __future__ import annotations

from collections.abc import Callable

from collperf.model.hardware.system import System

# the values the output lists, in order, with how each is shown
_SHOWN: tuple[tuple[str, str, Callable[[System], str | None]], ...] = (
    ("gpu", "GPU", lambda s: s.gpu),
    ("nodes", "nodes", lambda s: str(s.nodes)),
    ("gpus_per_node", "GPUs per node", lambda s: str(s.gpus_per_node)),
    (
        "nvlink_GBps",
        "intra-node link",
        lambda s: (
            (
                f"{s.nvlink_links}x {s.link_name}, {s.nvlink_GBps * s.phys_scale:g} "
                f"GB/s per GPU per direction{', NVSwitch' if s.nvswitch else ''}"
            )
            if s.nvlink_links
            else f"PCIe Gen{s.pcie_gen}{'' if s.p2p else ' without P2P (through host memory)'}"
            f"{', GPUs behind one PCIe switch' if s.pcie_switch_shared else ''}"
        ),
    ),
    ("nvls", "in-switch reduction (NVLS)", lambda s: "yes" if s.nvls else "no"),
    ("fabric", "fabric", lambda s: s.fabric_class),
    ("collnet", "in-network reduction (SHARP)", lambda s: ("yes" if s.collnet else "no") if s.nodes > 1 else None),
    # the network only where one is used (several nodes)
    ("nics_per_node", "NICs per node", lambda s: str(s.nics_per_node) if s.nodes > 1 else None),
    ("nic_Gbps", "NIC rate", lambda s: f"{s.nic_Gbps:g} Gb/s" if s.nodes > 1 else None),
    (
        "net_gdr",
        "GPUDirect RDMA",
        lambda s: None if s.nodes == 1 else "yes" if s.net_gdr else "no (network data staged through host memory)",
    ),
    ("protocols", "NCCL protocols", lambda s: ", ".join(s.protocols)),
    # shown where they are set or read (None: left out): NCCL_PROTO/ALGO when set, the CPU where the NVLS-tree
    # correction reads it (sm100+), the GPU-NIC path where the LL128 rule does (several nodes)
    ("nccl_proto", "NCCL_PROTO", lambda s: s.nccl_proto or None),
    ("nccl_algo", "NCCL_ALGO", lambda s: s.nccl_algo or None),
    ("cpu_arch", "CPU architecture", lambda s: s.cpu_arch if s.compute_capability >= 100 else None),
    ("nic_path", "GPU-NIC path", lambda s: s.nic_path if s.nodes > 1 else None),
    (
        "launch_overhead_us",
        "launch overhead",
        lambda s: (
            f"{s.launch_overhead_us:g} us per call"
            if s.protocol_overhead_us is None
            else "per call "
            + ", ".join(f"{p} {o:g} us" for p, o in zip(("LL", "LL128", "Simple"), s.protocol_overhead_us))
        ),
    ),
)
# a shown value's provenance may sit under another field name (pcie_gen/p2p set the PCIe link)
_ALSO = {
    "nvlink_GBps": ("nvlink_links", "pcie_gen", "p2p", "pcie_switch_shared", "phys_scale"),
    "nodes": (),
    "gpu": ("compute_capability",),
}


def shown_values(system: System) -> list[tuple[str, str, str]]:
    """The values the output lists for a system, each (label, value, provenance)."""
    out = []
    for key, label, show in _SHOWN:
        shown = show(system)
        if shown is None:
            continue
        src = system.provenance.get(key)
        for other in _ALSO.get(key, ()):
            theirs = system.provenance.get(other, "")
            src = (
                system.provenance.get(other, src)
                if src is None
                or "user" in theirs
                or "fitted" in theirs
                or (other in ("pcie_switch_shared", "p2p") and theirs.startswith("from "))
                else src
            )
        out.append((label, shown, src or f"default for {system.name}"))
    return out
