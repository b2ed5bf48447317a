"""What to check first: the paths and settings a log itself shows that cost bandwidth, each with the line that
shows it. They are facts of this run, not guesses: a verdict of 'as expected' on a run that should be faster (a
known-bad run judged on the hardware it actually used) still names them.

Read from expect/loglines.py: NCCL over TCP sockets, GPUDirect RDMA not used on hardware that has it (no
'via NET/.../GDRDMA' line at all: NCCL 2.30.7 src/transport/net.cc), fewer NICs than the system has, and the
NCCL settings a log shows set. A setting is a thing to check only on the costly side of NCCL's default and on the
transport it applies to (NCCL 2.30.7 src/graph/paths.cc ncclGetLevel, ncclTopoCheckGdr, ncclTopoCheckP2p); the
others are listed as the settings in effect, without a judgement: many guides set them on purpose (Google's TCPX
setup sets NCCL_P2P_PXN_LEVEL=0, AMD's RCCL guides NCCL_NET_GDR_LEVEL=3, i.e. PHB).
"""

from __future__ import annotations

from collperf.expect.loglines import LogFacts
from collperf.model.hardware.system import System
from collperf.model.nccl.constants import PATH_TYPES

# NCCL 2.30.7 src/graph/paths.cc: the path levels by name (graph.h's path types), and the legacy integers
# (levelsOldToNew: 0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 and 5 SYS)
_OLD_LEVELS = ("LOC", "PIX", "PXB", "PHB", "SYS", "SYS")
# the order things are said in: what changes the most first
_ORDER = (
    "NET_GDR_LEVEL",
    "NET_GDR_READ",
    "P2P_DISABLE",
    "P2P_LEVEL",
    "SHM_DISABLE",
    "NVLS_ENABLE",
    "MAX_NCHANNELS",
    "MAX_CTAS",
)
_SOCKET_ONLY = ("SOCKET_NTHREADS", "NSOCKS_PERTHREAD")  # read by the socket transport alone
_FEW_CHANNELS = 4


def path_level(value: str) -> str | None:
    """NCCL_NET_GDR_LEVEL / NCCL_P2P_LEVEL as a path name ('3' -> 'PHB'), None where NCCL would not read it."""
    v = value.strip().upper()
    if v in PATH_TYPES and v != "NET":
        return v
    if v.isdigit():
        return _OLD_LEVELS[min(int(v), len(_OLD_LEVELS) - 1)]
    return None


def _topo_hint(system: System) -> str:
    return "rocm-smi --showtopo" if getattr(system, "amd", False) else "nvidia-smi topo -m"


def _costly(name: str, value: str, system: System, facts: LogFacts) -> str | None:
    """What a setting costs on this run, where it is on the costly side of NCCL's default (None: not costly)."""
    level = path_level(value) if name in ("NET_GDR_LEVEL", "P2P_LEVEL") else None
    if name == "NET_GDR_LEVEL" and level == "LOC":
        return "GPUDirect RDMA is turned off: network data is staged through host memory"
    if name == "NET_GDR_LEVEL" and level == "SYS":
        return (
            "GPUDirect RDMA is allowed across the CPU sockets' link (NCCL's default stops at PXB): a GPU and NIC "
            f"on different sockets often do better staging through host memory; check the GPU-NIC path "
            f"({_topo_hint(system)}) and the BIOS's NUMA/PCIe settings (ACS, relaxed ordering)"
        )
    if name == "NET_GDR_READ" and value.strip() == "0":
        return "sends do not read GPU memory directly (GPUDirect RDMA for receives only)"
    if name == "P2P_DISABLE" and value.strip() == "1" or name == "P2P_LEVEL" and level == "LOC":
        return "GPUs of a node exchange data through host memory instead of NVLink/PCIe peer-to-peer"
    if name == "SHM_DISABLE" and value.strip() == "1" and facts.get("p2p") is False:
        return "the shared-memory path is off where peer-to-peer is not used: GPUs of a node go through the network"
    if name == "NVLS_ENABLE" and value.strip() == "0" and system.nvls:
        return "NVLink SHARP (in-switch reduction) is turned off on a system that has it"
    # a short run of ASCII digits: int() refuses thousands of digits, and isdigit() takes '²' and other scripts'
    count = value.strip()
    if (
        name in ("MAX_NCHANNELS", "MAX_CTAS")
        and count.isascii()
        and count.isdigit()
        and len(count) <= 9
        and int(count) <= _FEW_CHANNELS
    ):
        return f"the channel count is capped at {int(count)}: fewer channels move less at once"
    return None


def _applies(name: str, system: System, network: bool, facts: LogFacts) -> bool:
    """Whether NCCL reads the setting on this run's transports at all."""
    if name in _SOCKET_ONLY:
        fabric: object = facts.get("fabric")
        return system.nodes > 1 and fabric == "socket"
    if name.startswith(("NET_GDR", "IB_", "CROSS_NIC", "NCHANNELS_PER_NET_PEER")):
        return network
    if name in ("P2P_DISABLE", "P2P_LEVEL", "SHM_DISABLE", "NVLS_ENABLE"):
        return system.gpus_per_node > 1
    return True


def suspects(
    facts: LogFacts, system: System | None, catalogue: System | None = None
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(what to check first, the settings in effect): each a list of (text, the log line that shows it), the first
    most telling first. `catalogue`: the system's catalogue entry before the log's facts (the NICs and GPUDirect
    RDMA the hardware has: fewer in the log means NCCL did not find or was not given them)."""
    check: list[tuple[str, str]] = []
    settings: list[tuple[str, str]] = []
    if system is None:
        return check, settings
    socket = system.nodes > 1 and facts.get("fabric") == "socket"
    network = system.nodes > 1 and system.fabric_class in ("ib", "roce", "efa")
    if socket:
        plugin = facts.get("plugin")
        check.append(
            (
                f"NCCL fell back to TCP sockets although the {plugin} plugin was asked for: check that it "
                "loads (NCCL_NET_PLUGIN, LD_LIBRARY_PATH) and its NICs"
                if plugin
                else "NCCL runs over TCP sockets between nodes (no RDMA): if the nodes have RDMA NICs, check "
                "NCCL_IB_DISABLE and the network plugin",
                facts.line("fabric"),
            )
        )
    has_gdr = bool(getattr(catalogue or system, "net_gdr", True))
    if network and has_gdr and "net_gdr" in facts and not facts.get("net_gdr"):
        check.append(
            (
                "GPUDirect RDMA is not used: network data is staged through host memory; check that "
                "nvidia-peermem (or DMA-BUF) is loaded and NCCL_NET_GDR_LEVEL",
                facts.line("net_gdr"),
            )
        )
    nics = getattr(catalogue, "nics_per_node", 0) if catalogue is not None else 0
    if network and "nics" in facts and nics and int(facts.get("nics")) < nics:
        check.append(
            (
                f"NCCL uses {facts.get('nics')} NIC(s) per node where {system.name} has {nics} for "
                f"{system.gpus_per_node} GPUs: check NCCL_IB_HCA and that every NIC is up (ibstat, "
                "ibdev2netdev)",
                facts.line("nics"),
            )
        )
    names = [k.split(".", 1)[1] for k in facts.values if k.startswith("setting.")]
    for name in sorted(names, key=lambda n: (_ORDER.index(n) if n in _ORDER else len(_ORDER), n)):
        key = f"setting.{name}"
        if not _applies(name, system, network, facts):
            continue
        cost = _costly(name, str(facts.get(key)), system, facts)
        said = f"NCCL_{name}={facts.get(key)}"
        (check if cost else settings).append((f"{said} is set: {cost}" if cost else said, facts.line(key)))
    return check, settings
