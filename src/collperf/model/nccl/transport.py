"""Host-staged transport: PCIe GPUs without peer-to-peer (GeForce cards, P2P off) exchange data through
host memory, and that path, not NCCL's channel bandwidth, sets the bandwidth term.

NCCL diverts all GPU-to-GPU traffic of such a pair through the CPU (src/graph/paths.cc: "if (p2p == 0)
... Divert all traffic through the CPU", addInterStep) and moves it with the SHM transport: the sending
GPU writes its chunk into a host-memory buffer, the receiving GPU reads it from there. So every ring
step crosses PCIe twice: up the sender's link (GPU -> host) and down the receiver's link (host -> GPU).
Per GPU and per direction (ring algorithms, the only ones NCCL runs on such boxes for these sizes):

  allreduce                   up = down = 2 (p-1)/p S      (reduce-scatter then allgather, S = count bytes)
  allgather, reducescatter    up = down =   (p-1)/p S      (S = the whole buffer, nccl-tests' size)
  broadcast, reduce           chain root -> ... -> last: the root only sends S (up), the last only
                              receives S (down), every other rank does both

When the GPUs of a node sit behind one PCIe switch (nvidia-smi topo "PIX"), their host traffic also
shares the switch's uplink to the CPU: per direction it carries the sum over the node's GPUs. The time
of the bandwidth term is the busiest link's bytes over NCCL's rate for the PCIe generation (topo.cc
width x speed / 80: Gen3 x16 = 12 GB/s, topo.h PCI_BW). NCCL's Intel-RC P2P overhead (topo.h
INTEL_P2P_OVERHEAD, 6/5) is for peer-to-peer TLPs forwarded between root ports, not for DMA into host
memory, so it is not applied here.

Duplex: a GPU that both sends and receives through host memory at once (every rank of an allreduce,
the middle ranks of a broadcast chain) moves its two streams through one link and one SM loop that
loads from host memory, reduces and stores back to host memory. `System.host_duplex_efficiency`
(default 1: nothing assumed from hardware alone) scales that GPU's link rate; a fit to an allreduce
log measures it (model/nccl/fitting.py), and a 2-rank broadcast, whose GPUs each use one direction,
does not pay it. Reference: NCCL 2.30 src/graph/topo.h and src/graph/search.cc (the PCIe rate read from sysfs).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from collperf.model.hardware.gpus import BY_KEY
from collperf.model.nccl.constants import pcie_bw
from collperf.model.hardware.system import System


# collectives whose every rank sends and receives the same amount (per GPU, as a fraction of S)
_SYMMETRIC = {
    "allreduce": lambda p: 2.0 * (p - 1) / p,
    "allgather": lambda p: (p - 1) / p,
    "reducescatter": lambda p: (p - 1) / p,
}
_CHAIN = ("broadcast", "reduce")


def per_gpu_traffic(collective: str, ranks: int) -> list[tuple[float, float]]:
    """(up, down) bytes per byte of size for each rank of a single-node host-staged ring."""
    p = int(ranks)
    if p < 2:
        return [(0.0, 0.0)] * max(p, 1)
    if collective in _SYMMETRIC:
        f = _SYMMETRIC[collective](p)
        return [(f, f)] * p
    if collective in _CHAIN:
        # broadcast: root sends only, last receives only, the others both (reduce: the same, reversed)
        return [(1.0, 0.0)] + [(1.0, 1.0)] * (p - 2) + [(0.0, 1.0)]
    raise ValueError(f"no host-staged ring model for {collective!r}")


# The PCIe generation whose rate host-staged traffic is priced at, at most, on a card whose driver forbids
# peer-to-peer (GeForce since Turing: host memory is its only path). NCCL's SHM transport moves the data with the
# GPUs' own loads and stores to host memory ("via SHM/direct/direct", NCCL 2.30.7 src/transport/shm.cc): their
# rate is set by the outstanding PCIe reads an SM keeps in flight and by the host, not by the link's generation.
# Public runs show it on such cards: Gen4 RTX 4090 pairs reach 2.2-3.8 GB/s busbw at 1 GiB through host memory,
# Gen3 RTX 2080 Ti pairs 4.0 GB/s (the corpus's rtx4090-pcie-1x2-* and rtx2080ti-pcie-1x2-* logs). A data-centre
# card staged through host memory because its GPUs sit on two CPU sockets reaches more than a Gen3 link gives
# (a 2x2 L40S RoCE run: 9.6 GB/s busbw at 8 GiB, the corpus's l40s-roce-2x2-* log), so its own generation
# holds there, as it does where the part is not known to forbid P2P. The bound (model/bounds.py) keeps the card's
# own generation everywhere: it is a limit, this is what NCCL's path gets.
HOST_STAGED_MAX_GEN = 3


def host_staged_gen(system: System) -> int:
    """The PCIe generation host-staged traffic moves at on this system (HOST_STAGED_MAX_GEN's rule)."""
    part = BY_KEY.get(system.gpu_part)
    return min(system.pcie_gen, HOST_STAGED_MAX_GEN) if part is not None and not part.p2p else system.pcie_gen


def link_rate_Bps(system: System) -> float:
    """The rate host-staged traffic moves at through one GPU's x16 link (GB/s -> B/s): NCCL's rate of the
    generation host_staged_gen gives, times a fitted physical scale."""
    return pcie_bw(host_staged_gen(system)) * 1e9 * system.phys_scale


def host_staged_time(collective: str, size_bytes: npt.ArrayLike, system: "System") -> np.ndarray:
    """Bandwidth term (s) of a host-staged collective on one node: the busiest of the GPU links and,
    when the GPUs share a PCIe switch, the switch's uplink. Zeros where nothing is staged."""
    n = np.atleast_1d(np.asarray(size_bytes, dtype=float))
    if not system.host_bridge or system.ranks < 2 or collective not in (*_SYMMETRIC, *_CHAIN):
        return np.zeros_like(n)
    rate = link_rate_Bps(system)
    traffic = per_gpu_traffic(collective, system.ranks)
    worst = 0.0  # seconds per byte of size
    for up, down in traffic:
        duplex = up > 0 and down > 0
        eff = system.host_duplex_efficiency if duplex else 1.0
        worst = max(worst, max(up, down) / (rate * eff))
    if system.pcie_switch_shared and system.gpus_per_node > 1:
        # one node's GPUs share the uplink; with several nodes each node carries its own GPUs' share
        g = system.gpus_per_node
        local = traffic[:g] if system.nodes == 1 else traffic[:1] * g
        up_sum = sum(u for u, _ in local)
        down_sum = sum(d for _, d in local)
        worst = max(worst, max(up_sum, down_sum) / rate)
    return n * worst


def is_duplex(collective: str, ranks: int) -> bool:
    """Does some rank send and receive through host memory at once (so the duplex efficiency shows)?"""
    try:
        return any(u > 0 and d > 0 for u, d in per_gpu_traffic(collective, ranks))
    except ValueError:
        return False
