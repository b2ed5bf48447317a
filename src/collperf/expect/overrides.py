"""The user's hardware values (--cluster aside) over the system a log or a measurement is judged on
(expect/resolve.py, the last step of its order), each recorded as 'user override (--flag)', and the
clear error where a flag cannot apply to the system assumed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from collperf.errors import UsageError
from collperf.model.hardware.compose import bridged
from collperf.model.hardware.gpus import BY_KEY
from collperf.model.hardware.parts import PCIE_X16_GBps
from collperf.model.hardware.catalogue import System
from collperf.spec.network import HardwareSpec, load_cluster


def _pcie_gen_near(rate_GBps: float) -> int:
    """The PCIe generation whose x16 rate is nearest (the bound reads the rate from the generation)."""
    return min(PCIE_X16_GBps, key=lambda g: abs(PCIE_X16_GBps[g] - rate_GBps))


def apply_overrides(system: System, hw: HardwareSpec) -> System:
    """Apply the user's values (HardwareSpec) on top of a system, recorded as 'user override (--flag)'."""
    changes: list[tuple[str, dict[str, Any]]] = []
    if hw.nics_per_node is not None:
        changes.append(("--nics-per-node", {"nics_per_node": hw.nics_per_node}))
    if hw.nic_Gbps is not None:
        changes.append(("--nic-rate", {"nic_Gbps": hw.nic_Gbps}))
    if hw.fabric is not None:
        changes.append(("--fabric", {"fabric": hw.fabric, **({"net_gdr": False} if hw.fabric == "socket" else {})}))
    for flag, name, key in (
        ("--cpu-arch", "cpu_arch", "cpu_arch"),
        ("--nic-path", "nic_path", "nic_path"),
        ("--proto", "proto", "nccl_proto"),
        ("--algo", "algo", "nccl_algo"),
    ):
        if getattr(hw, name, None) is not None:
            changes.append((flag, {key: getattr(hw, name)}))
    if hw.pcie_switch:
        if system.nvlink_links:
            raise UsageError(
                f"--pcie-switch: {system.gpu} ({system.name}) talks over NVLink, not through a PCIe "
                "switch; drop --pcie-switch or pick another --cluster/--gpu"
            )
        changes.append(("--pcie-switch", {"pcie_switch_shared": True}))
    if hw.nvls is not None:
        if hw.nvls and not (system.nvswitch and system.compute_capability >= 90):
            raise UsageError(
                f"--nvls: {system.gpu} ({system.name}) has no NVSwitch with SHARP (NVLS needs "
                "Hopper or later behind NVSwitch); drop --nvls or pick another --cluster"
            )
        changes.append(("--nvls" if hw.nvls else "--no-nvls", {"nvls": bool(hw.nvls)}))
    if hw.sharp is not None:
        if hw.sharp and (system.fabric if hw.fabric is None else hw.fabric) != "ib":
            raise UsageError(
                f"--sharp: in-network reduction (NVIDIA SHARP, NCCL's CollNet) runs in InfiniBand "
                f"switches, and the network assumed for {system.name} is "
                f"{hw.fabric or system.fabric}; drop --sharp, pick an InfiniBand system with --cluster, "
                "or (diagnose, where the log's network is wrong) say --fabric ib"
            )
        if hw.sharp and system.nodes < 2:
            # the switches reduce what nodes send each other: on one node there is nothing for them to do
            raise UsageError(
                f"--sharp: in-network reduction is between nodes; the run assumed is {system.nodes} "
                "node; add --nodes N or drop --sharp"
            )
        changes.append(("--sharp" if hw.sharp else "--no-sharp", {"collnet": bool(hw.sharp)}))
    if getattr(hw, "p2p", None) is not None:
        if system.nvlink_links:
            raise UsageError(
                f"--{'' if hw.p2p else 'no-'}p2p: {system.gpu} ({system.name}) talks over "
                f"{system.link_name}, not PCIe; drop it or pick another --gpu/--cluster"
            )
        changes.append(("--p2p" if hw.p2p else "--no-p2p", {"p2p": bool(hw.p2p)}))
    part = BY_KEY.get(system.gpu_part)
    if hw.intra_GBps is not None:
        if system.nvlink_links:
            changes.append(("--gpu-link-rate", {"nvlink_GBps": hw.intra_GBps}))
        elif part is not None and hw.intra_GBps > part.pcie_GBps and (bridge := bridged(part, hw.intra_GBps)):
            # faster than the card's PCIe: its NVLink bridge
            changes.append(("--gpu-link-rate (faster than PCIe: the card's NVLink bridge)", bridge))
        else:  # PCIe: the generation whose x16 rate is nearest (the bound reads the rate from it)
            gen = _pcie_gen_near(hw.intra_GBps)
            changes.append((f"--gpu-link-rate (nearest PCIe x16: Gen{gen})", {"pcie_gen": gen}))
    for flag, values in changes:
        system = system.with_(f"user override ({flag})", **values)
    return system


def unused_on_one_node(system: System, hw: HardwareSpec) -> list[str]:
    """The network's flags change nothing on one node (no network is used): a note naming them, where
    apply_overrides took them, instead of dropping them silently (--sharp there is an error: it asks for
    something the run cannot have)."""
    given = [
        flag
        for flag, value in (("--nics-per-node", hw.nics_per_node), ("--nic-rate", hw.nic_rate), ("--fabric", hw.fabric))
        if value is not None
    ]
    if system.nodes > 1 or not given:
        return []
    return [
        f"{', '.join(given)} {'has' if len(given) == 1 else 'have'} no effect on one node (no network is "
        "used): add --nodes N for a run across nodes"
    ]


def from_profile(system: System, path: str) -> System:
    """A calibrated profile's two levels as the system's physical rates: intra -> the GPU link, inter ->
    one NIC per node (collperf calibrate measures one path per level)."""
    c = load_cluster(path)
    why = f"user override (--profile {Path(path).name})"
    base = system.with_(why, nics_per_node=1, nic_Gbps=c.inter.bandwidth_Bps * 8 / 1e9)
    if base.nvlink_links:
        return base.with_(why, nvlink_GBps=c.intra.bandwidth_Bps / 1e9)
    return base.with_(why, pcie_gen=_pcie_gen_near(c.intra.bandwidth_Bps / 1e9))
