"""A standalone NCCL debug log judged: what the system is (its INFO lines read by expect/loglines.py, the same
reader nccl-tests logs go through, then the resolver), what NCCL chose (network, GPUDirect RDMA, P2P or SHM, NVLS,
CollNet, channels, rings and trees, the TUNING lines' algorithm and protocol per size) and what to check first.

The check-first items are facts the log shows that commonly cost bandwidth (NCCL 2.30.7: src/transport/net.cc 'via
NET/.../GDRDMA', src/transport/p2p.cc and shm.cc 'via P2P/...' and 'via SHM/...', src/init.cc 'Using network'):
TCP sockets where RDMA is expected, GPUDirect RDMA not used, P2P off between a node's GPUs, several GPUs per NIC,
NCCL_ALGO/NCCL_PROTO forced (NCCL's own choice per size overridden), and NCCL's warnings."""

from __future__ import annotations

from collperf.diagnose.inputs import InputReport, resolve
from collperf.expect.hints import Hints
from collperf.expect.loglines import read_facts
from collperf.spec import HardwareSpec
from collperf.units import format_size

# GPUs sharing one NIC from which the sharing is named: DGX and HGX boards pair each GPU with its own NIC (8 NICs
# for 8 GPUs); one NIC for two GPUs is still a common cloud layout, four and more halve what each GPU gets again
_GPUS_PER_NIC = 4


def report(log, hw: HardwareSpec | None = None) -> InputReport:
    facts = read_facts(log.text)
    out = InputReport(log.source, "RCCL debug log" if log.rccl else "NCCL debug log")
    said = log.lines
    if log.ranks:
        out.facts.append(("ranks", str(log.ranks), said.get("ranks", "")))
    if log.nodes:
        out.facts.append(("nodes", str(log.nodes), said.get("nodes", "")))
    if log.ranks_per_node:
        out.facts.append(
            (
                "ranks per node",
                str(log.ranks_per_node),
                said.get("nodes")
                if "localRanks" in said.get("nodes", "")
                else said.get("ranks_per_node", "ranks / nodes"),
            )
        )
    if log.version:
        out.facts.append(("NCCL version", log.version, said["version"]))
    for key, label in (("fabric", "network"), ("nics", "NICs per node"), ("instance", "instance")):
        if key in facts:
            out.facts.append((label, str(facts.get(key)), facts.line(key)))
    _choices(out, log, facts)
    _check(out, log, facts)
    multi = (log.nodes or 1) > 1
    values = {}
    if "nics" in facts and multi:
        values["nics_per_node"] = (int(facts.get("nics")), f"from the log line '{facts.line('nics')}'")
    resolve(Hints({}, log.nodes, log.ranks, log.text, log.source), hw, out, **values)
    if out.assumed is None or out.assumed.system is None:
        out.notes.append(
            "the log names no GPU model (NCCL's INFO lines do not): give --gpu MODEL or --cluster "
            "SYSTEM for the system's rates and what it should have (NICs, GPUDirect RDMA)"
        )
    return out


def _choices(out: InputReport, log, facts) -> None:
    if "fabric" in facts:
        out.chose.append(("network between nodes", _network(facts), facts.line("fabric")))
    if "net_gdr" in facts:
        out.chose.append(("GPUDirect RDMA", "yes" if facts.get("net_gdr") else "no", facts.line("net_gdr")))
    if "p2p" in facts:
        out.chose.append(
            (
                "between a node's GPUs",
                "P2P (peer-to-peer)" if facts.get("p2p") else "SHM (through host memory)",
                facts.line("p2p"),
            )
        )
    if "nvls" in facts:
        out.chose.append(("NVLink SHARP (NVLS)", "yes" if facts.get("nvls") else "no", facts.line("nvls")))
    if "collnet" in facts:
        out.chose.append(("CollNet (SHARP)", "yes" if facts.get("collnet") else "no", facts.line("collnet")))
    if "channels" in facts:
        out.chose.append(("coll channels", str(facts.get("channels")), facts.line("channels")))
    if log.rings:
        out.chose.append(("rings", f"{log.rings} over all {log.ranks} ranks", log.lines["rings"]))
    if log.trees:
        out.chose.append(("trees", "built", log.lines["trees"]))
    for key, label in (("algorithms", "NCCL_ALGO"), ("nccl_proto", "NCCL_PROTO")):
        if key in facts:
            out.chose.append((label, str(facts.get(key)), facts.line(key)))
    for collective, runs in _tuning_runs(log.tuning):
        for first, last, algorithm, protocol, line in runs:
            sizes = _size(first) if first == last else f"{_size(first)}-{_size(last)}"
            out.chose.append((f"{collective} {sizes}", f"{algorithm}/{protocol}", line))


def _network(facts) -> str:
    names = {
        "ib": "InfiniBand (NET/IB)",
        "roce": "RoCE (NET/IB over Ethernet)",
        "socket": "TCP sockets (NET/Socket)",
        "efa": "AWS EFA (NET/OFI)",
        "tcpx": "GPUDirect-TCPX",
        "tcpxo": "GPUDirect-TCPXO",
        "slingshot": "HPE Slingshot (NET/OFI cxi)",
    }
    return names.get(str(facts.get("fabric")), str(facts.get("fabric")))


def _tuning_runs(choices):
    """Per collective, the sizes in runs of one algorithm/protocol: (first, last, algorithm, protocol, first line)."""
    by: dict[str, dict[int, tuple[str, str, str]]] = {}
    for c in choices:
        by.setdefault(c.collective, {}).setdefault(c.size_bytes, (c.algorithm, c.protocol, c.line))
    for collective, sizes in by.items():
        runs = []
        for size in sorted(sizes):
            algorithm, protocol, line = sizes[size]
            if runs and runs[-1][2:4] == (algorithm, protocol):
                runs[-1] = (runs[-1][0], size, algorithm, protocol, runs[-1][4])
            else:
                runs.append((size, size, algorithm, protocol, line))
        yield collective, runs


def _size(n: int) -> str:
    return format_size(n)


def _check(out: InputReport, log, facts) -> None:
    multi = (log.nodes or 1) > 1
    if facts.get("fabric") == "socket":
        missing = next(
            (
                ln.strip()
                for ln in log.text.splitlines()
                if "NCCL INFO" in ln and ("NET/IB : No device found" in ln or "Failed to open libibverbs" in ln)
            ),
            "",
        )
        where = "between nodes" if multi else "on one node it carries nothing, but a run on several nodes would"
        out.check_first.append(
            (
                f"NCCL uses TCP sockets (NET/Socket), not RDMA ({where}): on hosts with InfiniBand or "
                "RoCE HCAs check NCCL_IB_DISABLE, NCCL_IB_HCA, that libibverbs loads and that "
                "ibstat shows the ports Active" + (" (NCCL found no IB device)" if missing else ""),
                missing or facts.line("fabric"),
            )
        )
    if "net_gdr" in facts and not facts.get("net_gdr"):
        out.check_first.append(
            (
                "GPUDirect RDMA is not used ('via NET/...' without GDRDMA): network data is staged "
                "through host memory; check that nvidia-peermem (or DMA-BUF) is loaded and "
                "NCCL_NET_GDR_LEVEL",
                facts.line("net_gdr"),
            )
        )
    if facts.get("p2p") is False:
        out.check_first.append(
            (
                "P2P is not used between the node's GPUs (via SHM: through host memory): check "
                "NCCL_P2P_DISABLE / NCCL_P2P_LEVEL, the PCIe path (nvidia-smi topo -m: SYS between "
                "GPUs disables it by default) and ACS/IOMMU settings",
                facts.line("p2p"),
            )
        )
    nics, per_node = facts.get("nics"), log.ranks_per_node
    if nics and per_node and facts.get("fabric") in ("ib", "roce", "efa") and per_node / int(nics) >= _GPUS_PER_NIC:
        out.check_first.append(
            (
                f"{nics} NIC(s) for {per_node} GPUs per node ({per_node // int(nics)} GPUs share each "
                "NIC): if the node has more NICs, check NCCL_IB_HCA and that each is up "
                "(ibdev2netdev)",
                facts.line("nics"),
            )
        )
    for key, name in (("algorithms", "NCCL_ALGO"), ("nccl_proto", "NCCL_PROTO")):
        if key in facts:
            out.check_first.append(
                (
                    f"{name}={facts.get(key)} is forced: NCCL's own choice per size is overridden "
                    "(unset it unless a measurement showed it helps)",
                    facts.line(key),
                )
            )
    for settings_key in sorted(k for k in facts.values if k.startswith("setting.")):  # resolve() adds the rest
        name = settings_key.split(".", 1)[1]
        if (
            name in ("P2P_DISABLE", "SHM_DISABLE")
            and str(facts.get(settings_key)) == "1"
            or name == "NET_GDR_LEVEL"
            and str(facts.get(settings_key)).upper() in ("0", "LOC")
        ):
            out.check_first.append((f"NCCL_{name}={facts.get(settings_key)} is set", facts.line(settings_key)))
    for warning in log.warnings[:2]:
        out.check_first.append(("NCCL warned", warning))
