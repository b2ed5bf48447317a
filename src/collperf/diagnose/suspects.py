"""What to check first: the settings and paths a log itself shows that commonly cost bandwidth, each with the
line that shows it. They are facts of this run, not guesses: a verdict of 'as expected' on a run that should be
faster (a known-bad run judged on the hardware it actually used) still names them.

Read from diagnose/loglines.py: GPUDirect RDMA not used ('via NET/IB/0' with no '/GDRDMA', NCCL 2.30.7
src/transport/net.cc), fewer NICs than GPUs per node, NCCL over TCP sockets, and the performance settings an
INFO echo or the launch command shows set (NCCL_NET_GDR_LEVEL, NCCL_SHM_DISABLE, NCCL_P2P_DISABLE, channel
counts, ...).
"""

from __future__ import annotations

from collperf.diagnose.loglines import LogFacts

# what a setting changes, where the few that explain most slow runs say more than "set"
_MEANING = {
    "NET_GDR_LEVEL": "the GPU-NIC distance up to which GPUDirect RDMA is used is forced: at SYS or PHB the GPU and "
                     "NIC may be a CPU-socket link apart, often slower than staging through host memory; check the "
                     "GPU-NIC path (nvidia-smi topo -m) and the BIOS's NUMA/PCIe settings (ACS, relaxed ordering)",
    "NET_GDR_READ": "whether sends read GPU memory directly (GPUDirect RDMA) is forced",
    "P2P_DISABLE": "GPUs of a node exchange data through host memory instead of NVLink/PCIe peer-to-peer",
    "SHM_DISABLE": "the shared-memory path between GPUs of a node is off",
    "NVLS_ENABLE": "NVLink SHARP (in-switch reduction) is forced on or off",
    "MIN_NCHANNELS": "the channel count is forced (fewer channels move less at once)",
    "MAX_NCHANNELS": "the channel count is capped (fewer channels move less at once)",
}


def suspects(facts: LogFacts, system, catalogue_nics: int | None = None) -> list[tuple[str, str]]:
    """(what to check, the line that shows it), most telling first. `catalogue_nics`: the NICs per node the
    catalogue's system has for the GPUs used (fewer in the log: NCCL did not find or was not given the rest)."""
    out: list[tuple[str, str]] = []
    if system is None:
        return out
    network = system.nodes > 1 and system.fabric_class in ("ib", "roce", "efa")
    if network and "net_gdr" in facts and not facts.get("net_gdr"):
        out.append(("GPUDirect RDMA is not used: network data is staged through host memory; check that "
                    "nvidia-peermem (or DMA-BUF) is loaded and NCCL_NET_GDR_LEVEL", facts.line("net_gdr")))
    if system.nodes > 1 and "nics" in facts and catalogue_nics and int(facts.get("nics")) < catalogue_nics:
        out.append((f"NCCL uses {facts.get('nics')} NIC(s) per node where {system.name} has {catalogue_nics} for "
                    f"{system.gpus_per_node} GPUs: check NCCL_IB_HCA and that every NIC is up (ibstat, ibdev2netdev)",
                    facts.line("nics")))
    if system.nodes > 1 and facts.get("fabric") == "socket":
        out.append(("NCCL runs over TCP sockets between nodes (no RDMA): if the nodes have RDMA NICs, check "
                    "NCCL_IB_DISABLE and the network plugin", facts.line("fabric")))
    for key in sorted(k for k in facts.values if k.startswith("setting.")):
        name = key.split(".", 1)[1]
        if name in ("P2P_DISABLE", "SHM_DISABLE") and (system.gpus_per_node < 2 or facts.get(key) in ("0", "")):
            continue        # a path between GPUs of a node: nothing to say with one GPU per node, or when kept on
        if name.startswith("NET_GDR") and not network:
            continue        # GPUDirect RDMA settings do nothing over sockets, TCPX or on one node
        out.append((f"NCCL_{name}={facts.get(key)} is set" + (f": {_MEANING[name]}" if name in _MEANING else ""),
                    facts.line(key)))
    return out
