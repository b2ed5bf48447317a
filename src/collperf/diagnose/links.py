"""A node's topology (NCCL's dump, nvidia-smi topo -m), NCCL's graphs and link tests judged.

Topologies: the GPUs, their NVLinks and the NICs with their rates fed to the resolver; to check first, a GPU whose
nearest NIC is beyond NCCL's default GPUDirect RDMA level (PXB: NCCL 2.30.7 src/graph/paths.cc ncclTopoCheckGdr), GPU
pairs beyond its default P2P level (PXB, ncclTopoCheckP2p), a GPU with fewer NVLinks than its peers, a NIC slower
than its peers or without GPUDirect RDMA, a GPU's PCIe link slower than its peers'.

Link tests: each link's measurement against the rate of its parts (a NIC's port rate, the GPU pair's NVLink or PCIe
rate per direction, model/hardware) and against the median of the same test's links. A link is slow below
RATE_FRACTION of its rate or PEER_FRACTION of its peers: the tools reach 80-97 % of the sheet rate on healthy links
(this repository's samples: 192-202 Gb/s on HDR 200 Gb/s, 26.3 GB/s on PCIe Gen4's 31.5), and the pairs of a healthy
node that cross CPU sockets stay within 20 % of the others (21.8 against 26.3 GB/s on the RTX A6000 sample)."""

from __future__ import annotations

import statistics

from collperf.expect.hints import Hints
from collperf.diagnose.inputs import InputReport, LinkKind, LinkVerdict, resolve
from collperf.ingest.topo_xml import PATHS, graph_name, link_rate
from collperf.spec import HardwareSpec

RATE_FRACTION = 0.6
PEER_FRACTION = 0.75
_GDR_LEVEL = "PXB"  # NCCL's default NCCL_NET_GDR_LEVEL and P2P level on Intel and ARM hosts


def _beyond(path: str, level: str = _GDR_LEVEL) -> bool:
    return path in PATHS and PATHS.index(path) > PATHS.index(level)


def topology_report(topo, hw: HardwareSpec | None = None) -> InputReport:
    out = InputReport(topo.source, topo.kind)
    gpus, nics = topo.gpus, topo.nics
    out.facts.append(
        ("GPUs", str(len(gpus)) + (f" ({topo.gpu_name})" if topo.gpu_name else ""), gpus[0].line if gpus else "")
    )
    counts = sorted({g.nvlinks for g in gpus})
    if any(counts):
        out.facts.append(
            (
                "NVLinks per GPU",
                "/".join(map(str, counts)) + (" to NVSwitch" if topo.nvswitch else ""),
                next(g.line for g in gpus if g.nvlinks),
            )
        )
    if nics:
        rates = sorted({n.speed_Gbps for n in nics if n.speed_Gbps})
        out.facts.append(
            ("NICs", f"{len(nics)}" + (f" at {'/'.join(f'{r:g}' for r in rates)} Gb/s" if rates else ""), nics[0].line)
        )
    for g in gpus:
        near = _nearest_nic(topo, g)
        if near is None:
            continue
        nic, path = near
        out.facts.append((f"GPU {g.index} nearest NIC", f"{nic} ({path})", g.line))
        if _beyond(path):
            out.check_first.append(
                (
                    f"GPU {g.index}'s nearest NIC ({nic}) is {path} away: beyond NCCL's default "
                    f"GPUDirect RDMA level ({_GDR_LEVEL}), its network traffic is staged through host "
                    "memory; check the NIC's slot or NCCL_NET_GDR_LEVEL",
                    g.line,
                )
            )
    most = max(counts) if counts else 0
    for g in gpus:
        if most and g.nvlinks < most:
            out.check_first.append(
                (
                    f"GPU {g.index} has {g.nvlinks} NVLinks where others have {most}: check "
                    "`nvidia-smi nvlink -s` for a link down",
                    g.line,
                )
            )
    _pcie_links(out, gpus)
    fastest = max((n.speed_Gbps for n in nics), default=0)
    for n in nics:
        if n.speed_Gbps and n.speed_Gbps < 0.9 * fastest:
            out.check_first.append(
                (
                    f"NIC {n.name} runs at {n.speed_Gbps:g} Gb/s where others run at {fastest:g}: "
                    "check its port (ibstat: Rate) and cable",
                    n.line,
                )
            )
        if not n.gdr:
            out.check_first.append(
                (f"NIC {n.name}: NCCL found no GPUDirect RDMA support (gdr=0): check nvidia-peermem or DMA-BUF", n.line)
            )
    if not topo.nvswitch and len(gpus) > 1:
        far = sorted({(min(a, b), max(a, b)) for (a, b), p in topo.paths.items() if isinstance(b, int) and _beyond(p)})
        if far:
            a, b = far[0]
            out.check_first.append(
                (
                    f"{len(far)} GPU pair(s) without NVLink and beyond PXB (e.g. GPU {a} and GPU {b}: "
                    f"{topo.paths[(a, b)]}): NCCL's default P2P level is PXB (src/graph/paths.cc; up to SYS only "
                    "for two GPUs on an AMD CPU), so they exchange data through host memory unless "
                    "NCCL_P2P_LEVEL says otherwise",
                    gpus[a].line,
                )
            )
    values = {}
    if nics and fastest:
        values = {
            "nics_per_node": (len(nics), f"from the {topo.kind} ({len(nics)} NICs)"),
            "nic_Gbps": (fastest, f"from the {topo.kind} (net speed {fastest * 1000:g} Mb/s)"),
        }
    header = {"gpus": [topo.gpu_name]} if topo.gpu_name else {}
    resolve(Hints(header, 1, len(gpus) or None, "", topo.source), hw, out, **values)
    return out


def _nearest_nic(topo, gpu):
    found = [
        (PATHS.index(p), name, p)
        for (g, name), p in topo.paths.items()
        if g == gpu.index and isinstance(name, str) and p in PATHS
    ]
    return (min(found)[1], min(found)[2]) if found else None


def _pcie_links(out: InputReport, gpus) -> None:
    rates = {g.index: link_rate(g.link) for g in gpus if g.link}
    known = [r for r in rates.values() if r]
    if len(known) < 2:
        return
    best = max(known)
    for g in gpus:
        rate = rates.get(g.index)
        if rate and rate < best:
            out.check_first.append(
                (
                    f"GPU {g.index}'s PCIe link runs at {rate:g} GT/s where others run at {best:g}: "
                    "a link trained down (reseat the card; lspci -vv: LnkSta)",
                    g.line,
                )
            )


def graphs_report(graphs) -> InputReport:
    out = InputReport(graphs.source, "NCCL graph dump")
    for g in graphs.graphs:
        if not g.channels:
            continue
        nets = f", NICs {', '.join(map(str, g.nets))}" if g.nets else ""
        out.chose.append(
            (
                f"{graph_name(g)} graph",
                f"{g.channels} channel(s), {g.speed_intra_GBps:g} GB/s within and "
                f"{g.speed_inter_GBps:g} GB/s between nodes per channel, paths {g.type_intra}/"
                f"{g.type_inter}{nets}",
                g.line,
            )
        )
        if _beyond(g.type_intra, "PXB") and g.type_intra != "NET":
            out.check_first.append(
                (
                    f"NCCL's {graph_name(g)} graph runs between GPUs over {g.type_intra} (through the "
                    "CPU): no NVLink and no PCIe switch between them",
                    g.line,
                )
            )
        if g.nets and _beyond(g.type_inter):
            out.check_first.append(
                (
                    f"NCCL's {graph_name(g)} graph reaches its NICs over {g.type_inter}: beyond "
                    f"GPUDirect RDMA's default level ({_GDR_LEVEL})",
                    g.line,
                )
            )
    return out


def _rate(measurement, system, hw: HardwareSpec | None):
    """The rate of the measured link per direction in GB/s and where it comes from; (None, why) unknown."""
    hw = hw or HardwareSpec()
    if measurement.kind == "nic":
        if hw.nic_Gbps:
            return hw.nic_Gbps / 8, f"--nic-rate {hw.nic_rate}"
        if system is not None and hw.cluster is not None:
            return system.nic_Gbps / 8, f"{system.name}'s NIC ({system.nic_Gbps:g} Gb/s)"
        return None, "give --nic-rate (the port's rate, e.g. 400Gb/s; ibstat prints it) to judge against it"
    if hw.intra_GBps:
        return hw.intra_GBps, f"--gpu-link-rate {hw.intra_bandwidth}"
    if system is None:
        return None, "give --gpu MODEL (or --gpu-link-rate) to judge against the link's rate"
    if system.nvlink_links and (system.nvswitch or system.links_per_peer):
        share = 1.0 if system.nvswitch else system.links_per_peer / system.nvlink_links
        return system.nvlink_GBps * share, (
            f"{system.gpu}'s NVLink, {system.nvlink_GBps * share:g} GB/s per direction"
            + ("" if system.nvswitch else f" ({system.links_per_peer} links per pair)")
        )
    return system.pcie_GBps, f"{system.gpu}'s PCIe Gen{system.pcie_gen} x16, {system.pcie_GBps:g} GB/s per direction"


def link_test_report(test, hw: HardwareSpec | None = None) -> InputReport:
    out = InputReport(test.source, {"perftest": "perftest (ib_write_bw / ib_read_bw)"}.get(test.tool, test.tool))
    if test.devices:
        out.facts.append(("GPUs", f"{len(test.devices)} ({test.devices[0]})", test.devices[0]))
    gpus = len(test.devices) or 1 + max((max(m.src or 0, m.dst or 0) for m in test.measurements), default=0)
    if any(m.kind == "gpu-pair" for m in test.measurements) or (hw and hw.cluster):
        header = {"gpus": [test.devices[0]]} if test.devices else {}
        resolve(Hints(header, 1, gpus, "", test.source), hw, out)
    system = out.assumed.system if out.assumed else None
    for a, b in test.no_peer[:1]:
        out.check_first.append(
            (
                f"{len(test.no_peer)} GPU pair(s) cannot access each other peer-to-peer (e.g. GPU "
                f"{a} and GPU {b}): their traffic goes through host memory",
                f"Device={a} CANNOT Access Peer Device={b}",
            )
        )
    by_test: dict[str, list] = {}
    for m in test.measurements:
        by_test.setdefault(m.test, []).append(m)
    for name, group in by_test.items():
        peers = statistics.median(m.bandwidth_GBps for m in group) if len(group) > 1 else None
        for m in group:
            out.links.append(_verdict(m, peers, system, hw, len(group)))
    _p2p_against_host(out, by_test)
    for v in out.links:
        if v.verdict is LinkKind.SLOW:
            out.check_first.append((f"{v.link} ({v.test}): {v.why}", v.line))
    return out


def _verdict(m, peers, system, hw, count: int) -> LinkVerdict:
    if m.p2p is False:  # copies staged through host memory: not the link's rate
        return LinkVerdict(
            m.link,
            m.test,
            m.bandwidth_GBps,
            None,
            "through host memory (P2P disabled)",
            peers,
            LinkKind.NOT_JUDGED,
            "P2P disabled: a copy through host memory, compared with P2P below",
            m.line,
        )
    rate, rate_from = _rate(m, system, hw)
    rate = rate * m.directions if rate else None
    reasons = []
    if rate and m.bandwidth_GBps < RATE_FRACTION * rate:
        reasons.append(
            f"{m.bandwidth_GBps:g} GB/s is {m.bandwidth_GBps / rate:.0%} of the link's {rate:g} GB/s ({rate_from})"
        )
    if peers and count > 2 and m.bandwidth_GBps < PEER_FRACTION * peers:
        reasons.append(
            f"{m.bandwidth_GBps:g} GB/s against a median of {peers:g} GB/s over the {count} links of the test"
        )
    if reasons:
        return LinkVerdict(
            m.link, m.test, m.bandwidth_GBps, rate, rate_from, peers, LinkKind.SLOW, "; ".join(reasons), m.line
        )
    if rate is None and not (peers and count > 2):
        return LinkVerdict(
            m.link, m.test, m.bandwidth_GBps, None, rate_from, peers, LinkKind.NOT_JUDGED, rate_from, m.line
        )
    why = (
        f"{m.bandwidth_GBps / rate:.0%} of {rate:g} GB/s ({rate_from})"
        if rate
        else f"within {1 - PEER_FRACTION:.0%} of the median of its {count} peers ({peers:g} GB/s); {rate_from}"
    )
    return LinkVerdict(m.link, m.test, m.bandwidth_GBps, rate, rate_from, peers, LinkKind.AS_EXPECTED, why, m.line)


def _p2p_against_host(out: InputReport, by_test) -> None:
    """p2pBandwidthLatencyTest: peer-to-peer slower than the same pairs through host memory is a broken P2P path."""
    on = [m for ms in by_test.values() for m in ms if m.p2p is True and m.directions == 1]
    off = [m for ms in by_test.values() for m in ms if m.p2p is False and m.directions == 1]
    if not on or not off:
        return
    p2p, host = statistics.median(m.bandwidth_GBps for m in on), statistics.median(m.bandwidth_GBps for m in off)
    if p2p < host:
        out.check_first.append(
            (
                f"peer-to-peer copies ({p2p:g} GB/s, median) are slower than the same copies through "
                f"host memory ({host:g} GB/s): P2P over this PCIe path is throttled (ACS or the IOMMU "
                "redirecting peer traffic, a switch without P2P support); NCCL uses P2P here, so try "
                "NCCL_P2P_DISABLE=1 and check the BIOS's ACS/IOMMU settings",
                on[0].line,
            )
        )
