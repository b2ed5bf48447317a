"""A System composed of parts: a GPU part (gpus.py) on a board (boards.py), NICs on a fabric, every value
recording which part it came from. The catalogue's entries are such compositions, and so is the system of a GPU
the catalogue has no entry for: nothing borrows a whole system for a GPU it does not have."""

from __future__ import annotations

from typing import Any

from collperf.model.hardware.boards import Board
from collperf.model.hardware.parts import GPU
from collperf.model.hardware.system import System


def compose(
    gpu: GPU,
    board: Board,
    *,
    name: str = "",
    nodes: int = 1,
    gpus_per_node: int | None = None,
    nics: int | None = None,
    nic_Gbps: float | None = None,
    fabric: str | None = None,
    net_gdr: bool | None = None,
    instance: str = "",
    shown_gpu: str = "",
    network_source: str = "",
    **extra: Any,
) -> System:
    """The System of `nodes` nodes of `gpu` on `board`, with the board's reference network unless given."""
    per_node = gpus_per_node or board.gpus
    linked = board.kind in ("switch", "cube-mesh", "domain", "all-to-all", "bridge") and gpu.links > 0
    links = (min(board.ring_links, gpu.links) if board.ring_links else gpu.links) if linked else 0
    per_link = gpu.per_link_GBps
    fabric = fabric or board.fabric
    part_src = f"GPU part {gpu.name} ({gpu.sources.get('link_total_GBps') or gpu.sources.get('pcie_gen', '')})"
    board_src = f"board {board.name} ({board.source})"
    net_src = network_source or board_src
    values: dict[str, Any] = dict(  # System's fields, of their several types
        gpu=shown_gpu or gpu.name,
        compute_capability=gpu.compute_capability,
        gpus_per_node=per_node,
        nodes=nodes,
        nvlink_links=links,
        nvlink_GBps=links * per_link if links else 0.0,
        links_per_peer=(gpu.links if board.kind == "bridge" else board.links_per_peer) if links else 0,
        nvswitch=linked and board.kind in ("switch", "domain"),
        nvls=linked and board.nvls and gpu.compute_capability >= 90,
        pcie_gen=gpu.pcie_gen,
        p2p=True if linked else gpu.p2p,
        nics_per_node=nics or board.nics,
        nic_Gbps=nic_Gbps or board.nic_Gbps,
        fabric=fabric,
        net_gdr=(fabric != "socket") if net_gdr is None else net_gdr,
        cpu_arch=board.cpu_arch,
        cpu_vendor=board.cpu_vendor,
        nvlink_domain=board.domain,
        intra_latency_us=1.0 if linked else 2.0,
        instance=instance,
        gpu_part=gpu.key,
        board=board.key,
    )
    values.update(extra)
    from_part = ("gpu", "compute_capability", "nvlink_GBps", "pcie_gen", "p2p")
    from_net = ("nics_per_node", "nic_Gbps", "fabric", "net_gdr")
    sources = {k: part_src for k in from_part}
    sources.update({k: board_src for k in ("gpus_per_node", "nvlink_links", "nvswitch", "nvls", "links_per_peer")})
    sources.update({k: net_src for k in from_net})
    label = name or (f"{gpu.key}-box" if board.kind == "pcie" else f"{gpu.key}-{board.key}")
    said = {
        **{k: f"from the GPU part {gpu.name}" for k in from_part},
        **{k: f"the usual network of the board {board.name}" for k in from_net},
    }
    prov = {k: said.get(k, f"from the board {board.name}") for k in values}
    return System(name=label, source=f"{gpu.name} on {board.name}", sources=sources, provenance=prov, **values)


def bridged(gpu: GPU, link_GBps: float | None = None) -> dict[str, Any] | None:
    """The System values of PCIe cards joined by their NVLink bridge (H100 PCIe/NVL, A100 PCIe, RTX 3090 pairs):
    every one of the card's links to its one peer, at the part's rate per direction unless a measured or given
    `link_GBps` says otherwise; None for a card with no NVLink."""
    if not (gpu.links and gpu.link.startswith("NVLink")):
        return None
    return dict(nvlink_links=gpu.links, nvlink_GBps=link_GBps or gpu.link_GBps, links_per_peer=gpu.links, p2p=True)
