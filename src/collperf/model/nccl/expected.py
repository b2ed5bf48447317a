"""What NCCL does on a System, per size: the chosen (algorithm, protocol), its time split into latency
and bandwidth terms, the runner-up; and the expected time of a real run (NCCL's model plus the host
launch overhead, never below the physical lower bound).

`select` is NCCL's own choice and time (tuning.cc + enqueue.cc topoGetAlgoInfo: argmin over the
enabled table, first entry wins ties). `expect` is what diagnose should compare a measurement with.
AlltoAll and send/recv are point-to-point in NCCL (no tuning table): `expect` prices them from
per-peer link rates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from collperf.collectives import busbw_factor, check_ranks, get_collective
from collperf.errors import UsageError
from collperf.model.bounds import TwoLevelBound, bound_coefficients, two_level_bound
from collperf.model.nccl import constants as C
from collperf.model.nccl.channels import comm_channels
from collperf.model.nccl.graphs import search_graphs
from collperf.model.nccl.transport import host_staged_time
from collperf.model.nccl.tuning import entry_times_us, tuning_table, TuningTable
from collperf.model.hardware.system import System


@dataclass(frozen=True)
class NcclPrediction:
    """Per size: choice, time and its split. Arrays all have the shape of size_bytes."""

    collective: str
    ranks: int
    nodes: int
    size_bytes: npt.NDArray[np.float64]
    algorithm: np.ndarray  # str per size ("ring", "tree", "nvls-tree", ..., "p2p")
    protocol: np.ndarray  # "LL" / "LL128" / "Simple"
    latency_s: npt.NDArray[np.float64]  # the chosen entry's latency term (+ launch overhead in expect)
    bandwidth_s: npt.NDArray[np.float64]  # the chosen entry's size / bandwidth term
    runner_up_algorithm: np.ndarray
    runner_up_protocol: np.ndarray
    runner_up_time_s: npt.NDArray[np.float64]  # inf where nothing else is enabled
    bound_s: npt.NDArray[np.float64] | None = None  # the physical lower bound (expect only)

    @property
    def time_s(self) -> npt.NDArray[np.float64]:
        t = self.latency_s + self.bandwidth_s
        return t if self.bound_s is None else np.maximum(t, self.bound_s)

    @property
    def algbw_Bps(self) -> npt.NDArray[np.float64]:
        return self.size_bytes / self.time_s

    @property
    def busbw_Bps(self) -> npt.NDArray[np.float64]:
        return self.algbw_Bps * busbw_factor(self.collective, self.ranks)

    @property
    def regime(self) -> np.ndarray:
        """'latency' or 'bandwidth' per size from the chosen algorithm's own terms, 'bound' where the
        physical bound, not NCCL's model, sets the expectation."""
        out = np.where(self.latency_s >= self.bandwidth_s, "latency", "bandwidth").astype(object)
        if self.bound_s is not None:
            out[self.bound_s > self.latency_s + self.bandwidth_s] = "bound"
        return out

    @property
    def choice(self) -> list[str]:
        return [f"{a}/{p}" for a, p in zip(self.algorithm, self.protocol)]


def _sizes(size_bytes: npt.ArrayLike) -> np.ndarray:
    n = np.atleast_1d(np.asarray(size_bytes, dtype=float))
    if n.ndim != 1 or np.any(~np.isfinite(n)) or np.any(n < 0):
        raise UsageError(f"sizes {size_bytes!r}: expected sizes in bytes >= 0")
    return n


def select(
    collective: str, size_bytes: npt.ArrayLike, system: "System", table: TuningTable | None = None
) -> NcclPrediction:
    """NCCL's choice per size and its model time (no launch overhead, no bound)."""
    name = get_collective(collective).name
    n = _sizes(size_bytes)
    table = table or tuning_table(name, system)
    lat_us, bw_us = entry_times_us(table, system, n)
    total = lat_us + bw_us
    entries = TuningTable.entries()
    if np.all(np.isnan(total)):
        raise UsageError(
            f"no NCCL algorithm is enabled for {name} on {system.describe()} "
            f"(protocols {system.protocols}); check the system's protocols and ranks"
        )
    masked = np.where(np.isnan(total), np.inf, total)
    order = np.argsort(masked, axis=0, kind="stable")  # stable: NCCL's loop order breaks ties
    best, second = order[0], order[1]
    cols = np.arange(n.size)
    names_a = np.array([a for a, _ in entries], dtype=object)
    names_p = np.array([p for _, p in entries], dtype=object)
    return NcclPrediction(
        name,
        system.ranks,
        system.nodes,
        n,
        names_a[best],
        names_p[best],
        lat_us[best, cols] * 1e-6,
        bw_us[best, cols] * 1e-6,
        names_a[second],
        names_p[second],
        masked[second, cols] * 1e-6,
    )


# NCCL 2.x src/graph/paths.cc ncclTopoGetNchannels: a peer across the network gets NCCL_NCHANNELS_PER_NET_PEER
# channels, "2 channels per NIC" by default; RCCL 2.26.6 prints it ("2 p2p channels per peer", the mi355x 2x1
# alltoall run's debug log in the corpus source)
P2P_CHANNELS_PER_NET_PEER = 2


def p2p_rates(system: "System") -> tuple[float, float]:
    """(on-node, network) bytes/s one GPU's point-to-point traffic gets: what the GPU sends to its node's other GPUs
    together, and what it sends across the network.

    On-node: the GPU's links as NCCL's topology search sees them and a fit scaled them (the ring graph's channels x
    per-channel bwIntra, graphs.py: NVLink/xGMI at NCCL's per-link rate, else PCIe), which is what the GPU's links
    carry in an all-to-all (every peer at once); host-staged PCIe: the host bridge shared by the node's GPUs.
    Network: the GPU's share of its node's NICs, scaled by the fitted efficiency of NCCL's channels. RCCL
    sizes a network peer's channels by a per-channel bandwidth (rccl src/graph/paths.cc, P2P_PER_CHANNEL_NET_BW:
    each p2p channel over the network is a bandwidth-limited unit), so on AMD a peer across the network gets at
    most its P2P_CHANNELS_PER_NET_PEER channels at what one of the communicator's channels carries in the ring
    (the ring graph's network total over comm_channels; a fit of an all-reduce measures it).
    """
    g = system.gpus_per_node
    k = system.bw_scale
    if system.host_bridge:
        intra_Bps = system.intra_Bps / max(1, g) * k
    else:
        graphs = search_graphs(system)
        ring = graphs["ring"]
        intra_Bps = ring.n_channels * ring.bw_intra * 1e9 if g > 1 and system.nodes == 1 else system.intra_Bps * k
    net_Bps = system.node_network_Bps / g * k
    if system.nodes > 1 and system.amd:
        graphs = search_graphs(system)
        ring = graphs["ring"]
        per_channel_Bps = ring.n_channels * ring.bw_inter * 1e9 / comm_channels(system, graphs)
        net_Bps = min(net_Bps, P2P_CHANNELS_PER_NET_PEER * per_channel_Bps)
    return intra_Bps, net_Bps


def p2p_time(collective: str, size_bytes: npt.ArrayLike, system: "System") -> tuple[np.ndarray, np.ndarray]:
    """(latency, bandwidth) seconds for alltoall / sendrecv from per-peer rates (p2p_rates).

    alltoall: each rank sends size/p to every peer at once; the (g-1)/p on-node share crosses its
    NVLink/PCIe, the (p-g)/p off-node share its NICs' share (NICs x rate / g); the slower one binds.
    sendrecv (nccl-tests: rank r sends size to r+1): a node-crossing pair uses one NIC, else the GPU link.
    Latency: NCCL's Simple base + one hop (tuning.cc Ring Simple hwLatencies), the NET hop when crossing.
    """
    n = _sizes(size_bytes)
    g, p = system.gpus_per_node, system.ranks
    hop_intra = C.HW_LATENCY_US["NVLINK" if system.nvlink_links else "PCI"]["ring"][2]
    hop_net = C.HW_LATENCY_US["NET"]["ring"][2] + 2 * system.net_latency_us
    base = C.BASE_LATENCY_US["ring"][2]
    intra_Bps, net_Bps = p2p_rates(system)
    if collective == "sendrecv":
        crosses = system.nodes > 1
        k = system.bw_scale
        rate = (
            min(system.nic_Bps * k, system.intra_Bps * k, net_Bps * g)
            if crosses
            else (intra_Bps if system.host_bridge else system.intra_Bps * k)
        )
        lat = base + (hop_net if crosses else hop_intra)
        return np.full_like(n, lat * 1e-6), n / rate
    on_node = n * (g - 1) / p / intra_Bps if g > 1 else np.zeros_like(n)
    off_node = n * (p - g) / p / net_Bps if system.nodes > 1 else np.zeros_like(n)
    lat = base + (hop_net if system.nodes > 1 else hop_intra)
    return np.full_like(n, lat * 1e-6), np.maximum(on_node, off_node)


def system_bound(collective: str, size_bytes: npt.ArrayLike, system: "System") -> "TwoLevelBound":
    """The physical lower bound on this system (bounds.two_level_bound with its rates)."""
    k = system.phys_scale
    return two_level_bound(
        collective,
        size_bytes,
        system.nodes,
        system.gpus_per_node,
        system.intra_Bps * k,
        system.node_network_Bps * k,
        in_switch_reduction=system.nvls,
        in_network_reduction=system.collnet,
        host_bridge_Bps=system.pcie_GBps * 1e9 * k if system.host_bridge else None,
    )


def system_bound_latency_s(collective: str, system: "System") -> float:
    """The bound's latency term on this system: one message over the links a collective must cross (the network
    between nodes; on one node, the intra-node link), the term `predict` adds to its bound (model/predict.py
    network_lower_bound on the system's alpha-beta view, model/hardware/catalogue.py to_cluster). system_bound is bandwidth
    alone: a time below the two together is out of reach, however small the size."""
    name = get_collective(collective).name
    if system.nodes > 1:
        return bound_coefficients(name, system.nodes)[0] * system.inter_latency_us * 1e-6
    return bound_coefficients(name, system.gpus_per_node)[0] * system.intra_latency_us * 1e-6


def tuning_model_prices(collective: str) -> bool:
    """Whether NCCL's tuning model prices this collective (its five functions, NCCL 2.30.7 src/graph/tuning.cc).
    AlltoAll and send/recv are point-to-point, with no tuning table: `expect` prices them at the links' line
    rate (p2p_time), which is not a figure of NCCL's."""
    return get_collective(collective).name in C.FUNCTIONS


def expect(collective: str, size_bytes: npt.ArrayLike, system: "System") -> NcclPrediction:
    """The expected time of an nccl-tests measurement: NCCL's choice and model time, plus the host
    launch overhead of the system, and never below the physical bound."""
    name = get_collective(collective).name
    check_ranks(system.ranks)
    n = _sizes(size_bytes)
    bound = system_bound(name, n, system).time_s
    if name in C.FUNCTIONS:
        pred = select(name, n, system)
        bandwidth_s = pred.bandwidth_s
        if system.host_bridge:
            # PCIe without P2P: the data goes through host memory (SHM transport), and the busiest PCIe
            # link of that path, not NCCL's channel bandwidth, sets the bandwidth term (transport.py)
            bandwidth_s = np.maximum(bandwidth_s, host_staged_time(name, n, system))
        # the host overhead is not in NCCL's model, so it cannot change NCCL's choice: added after it
        return NcclPrediction(
            name,
            pred.ranks,
            pred.nodes,
            n,
            pred.algorithm,
            pred.protocol,
            pred.latency_s + system.overhead_s(pred.protocol),
            bandwidth_s,
            pred.runner_up_algorithm,
            pred.runner_up_protocol,
            pred.runner_up_time_s + system.overhead_s(pred.runner_up_protocol),
            bound,
        )
    if name not in ("alltoall", "sendrecv"):
        raise UsageError(
            f"{name}: NCCL has no {name} of its own (nccl-tests builds it from send/recv); "
            "expected one of allreduce, allgather, reducescatter, broadcast, reduce, "
            "alltoall, sendrecv"
        )
    lat, bw = p2p_time(name, n, system)
    none = np.full(n.shape, "-", dtype=object)
    return NcclPrediction(
        name,
        system.ranks,
        system.nodes,
        n,
        np.full(n.shape, "p2p", dtype=object),
        np.full(n.shape, "Simple", dtype=object),
        lat + system.overhead_s(["Simple"]),
        bw,
        none,
        none,
        np.full(n.shape, np.inf),
        bound,
    )
