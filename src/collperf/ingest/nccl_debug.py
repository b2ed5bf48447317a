"""A standalone NCCL/RCCL debug log (NCCL_DEBUG=INFO, from a training job or any program, no nccl-tests table): who
ran (ranks, nodes, ranks per node, the hosts), the NCCL version, the rings and trees NCCL built, and the choices
NCCL_DEBUG_SUBSYS=TUNING prints per call. The hardware facts of its INFO lines (network, NICs, GPUDirect RDMA, P2P or
SHM, NVLS, channels, settings) are read by expect/loglines.py, the same reader nccl-tests logs go through.

Line shapes (NCCL 2.30.7): the prefix "host:pid:tid [cudaDev] NCCL INFO" (src/debug.cc); "comm 0x.. rank R nranks N
cudaDev D nvmlDev D busId B commId 0x.. - Init COMPLETE" and "comm 0x.. rank R nRanks N nNodes M localRanks L
localRank l MNNVL x" (src/init.cc); "Channel 00/16 :    0   1 ..." (a ring, src/graph/connect.cc); "Trees [0] ..."
(src/graph/connect.cc); "AllReduce: 1048576 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..31}" (src/enqueue.cc,
TUNING; NCCL before 2.19 printed "-> Algo 1 proto 2 time 24.500000" with the enum's numbers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# the prefix NCCL writes before each debug line (src/debug.cc: "%s:%d:%d [%d] NCCL INFO"); a launcher's tag
# ("[1,0]<stdout>:", "[155] ", "0: ") may come before it
_PREFIX = re.compile(
    r"^(?:\[\d{1,9}(?:,\d{1,9})?\](?:<std\w{1,8}>:)?\s?|\d{1,9}:\s)?\s*([\w.\-]{1,253}):(\d{1,9}):"
    r"\d{1,9} \[(\d{1,9})\] NCCL (?:INFO|WARN)"
)
_COMM = re.compile(r"\brank (\d{1,9}) n[Rr]anks (\d{1,9})\b")
_NODES = re.compile(r"\bnNodes (\d{1,9}) localRanks (\d{1,9})\b")
_RING = re.compile(r"NCCL INFO Channel (\d{1,4})/(\d{1,4}) :((?:\s+\d{1,9})+)\s*$")
_TUNING = re.compile(
    r"NCCL INFO (\w{3,32}): (\d{1,20}) Bytes -> Algo (\w{1,24}) proto (\w{1,12})(?: time ([\d.]{1,20}))?"
)
# the enums older NCCL printed as numbers (src/include/devcomm.h of 2.18: NCCL_ALGO_TREE 0, RING 1, COLLNET_DIRECT 2,
# COLLNET_CHAIN 3, NVLS 4, NVLS_TREE 5; NCCL_PROTO_LL 0, LL128 1, SIMPLE 2)
_ALGOS = ("Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree")
_PROTOS = ("LL", "LL128", "Simple")
_ALGO_NAMES = {a.upper(): a for a in _ALGOS} | {
    "COLLNET_DIRECT": "CollNetDirect",
    "COLLNET_CHAIN": "CollNetChain",
    "NVLS_TREE": "NVLSTree",
    "PAT": "PAT",
}
# the first bytes a debug log is recognised in, and how many of its lines must be NCCL's
_SNIFF_CHARS = 1 << 20
_MIN_LINES = 3


@dataclass(frozen=True)
class TuningChoice:
    """One call's choice as NCCL_DEBUG_SUBSYS=TUNING prints it on rank 0."""

    collective: str
    size_bytes: int
    algorithm: str
    protocol: str
    line: str


@dataclass(frozen=True)
class NcclDebugLog:
    """What a standalone NCCL debug log says about the run, each count with the line it came from."""

    source: str
    text: str = field(repr=False)
    ranks: int | None = None  # the largest communicator's nranks (the world; others are its splits)
    nodes: int | None = None  # nNodes, else the hosts the lines name
    ranks_per_node: int | None = None  # localRanks, else ranks / nodes where it divides
    hosts: tuple[str, ...] = ()
    version: str = ""
    rings: int = 0  # ring channels of the largest communicator ("Channel 00/16 :")
    trees: bool = False
    tuning: tuple[TuningChoice, ...] = ()
    warnings: tuple[str, ...] = ()  # NCCL WARN lines (the first few)
    lines: dict = field(default_factory=dict)  # what -> the line that decided it

    @property
    def rccl(self) -> bool:
        return "RCCL version" in self.text[:_SNIFF_CHARS]


def looks_like(text: str) -> bool:
    """A log whose lines are NCCL's own debug output: several 'NCCL INFO' lines with NCCL's prefix."""
    head = text[:_SNIFF_CHARS]
    if head.count("NCCL INFO") < _MIN_LINES:
        return False
    found = 0
    for ln in head.splitlines():
        if "NCCL INFO" in ln and _PREFIX.match(ln):
            found += 1
            if found >= _MIN_LINES:
                return True
    return False


def parse(text: str, source: str = "<log>") -> NcclDebugLog:
    hosts: dict[str, None] = {}
    devices: dict[str, set] = {}  # host -> the CUDA devices its lines name ("[3]")
    ranks = nodes = per_node = None
    lines: dict[str, str] = {}
    rings: dict[int, set[int]] = {}  # nranks -> ring channel numbers seen for a communicator of that size
    trees = False
    version = ""
    tuning: list[TuningChoice] = []
    warnings: list[str] = []
    for ln in text.splitlines():
        if "NCCL" not in ln:
            continue
        m = _PREFIX.match(ln)
        if m:
            hosts.setdefault(m.group(1))
            devices.setdefault(m.group(1), set()).add(int(m.group(3)))
            if " NCCL WARN" in ln and len(warnings) < 5:
                warnings.append(_short(ln))
        if "version" in ln and not version and (v := re.search(r"[NR]CCL version (\d{1,4}\.\d{1,4}\.\d{1,4})", ln)):
            version = v.group(1)
            lines["version"] = _short(ln)
        if "anks" in ln and (c := _COMM.search(ln)) and (ranks is None or int(c.group(2)) > ranks):
            ranks = int(c.group(2))
            lines["ranks"] = _short(ln)
        if (
            "nNodes" in ln
            and (n := _NODES.search(ln))
            and ranks is not None
            and _COMM.search(ln)
            and int(_COMM.search(ln).group(2)) == ranks
        ):
            nodes, per_node = int(n.group(1)), int(n.group(2))
            lines["nodes"] = _short(ln)
        if "Channel" in ln and " : " in ln and (r := _RING.search(ln)):
            members = r.group(3).split()
            rings.setdefault(len(members), set()).add(int(r.group(1)))
            lines.setdefault(f"ring{len(members)}", _short(ln))
        if not trees and "Trees [" in ln:
            trees = True
            lines["trees"] = _short(ln)
        if "Bytes -> Algo" in ln and (t := _TUNING.search(ln)):
            tuning.append(
                TuningChoice(t.group(1), int(t.group(2)), _algorithm(t.group(3)), _protocol(t.group(4)), _short(ln))
            )
    host_list = tuple(hosts)
    if nodes is None and host_list:
        nodes = len(host_list)
        lines["nodes"] = f"{nodes} host name(s) in the line prefixes: {', '.join(host_list[:4])}" + (
            " ..." if len(host_list) > 4 else ""
        )
    if per_node is None and ranks and nodes and ranks % nodes == 0:
        per_node = ranks // nodes
    elif per_node is None and ranks is None and devices:
        # no communicator line: each process's device in the prefixes ("[3]") counts the GPUs a host ran on
        per_node = max(len(d) for d in devices.values())
        lines["ranks_per_node"] = f"{per_node} CUDA device(s) in the line prefixes of one host"
        if nodes:
            ranks = per_node * nodes if len({len(d) for d in devices.values()}) == 1 else None
            if ranks:
                lines["ranks"] = f"{per_node} device(s) on each of {nodes} host(s) in the line prefixes"
    ring_count = len(rings.get(ranks, ())) if ranks else 0
    if ring_count:
        lines["rings"] = lines[f"ring{ranks}"]
    return NcclDebugLog(
        source,
        text,
        ranks,
        nodes,
        per_node,
        host_list,
        version,
        ring_count,
        trees,
        tuple(tuning),
        tuple(warnings),
        lines,
    )


def _algorithm(token: str) -> str:
    if token.isdigit():
        return _ALGOS[int(token)] if int(token) < len(_ALGOS) else token
    return _ALGO_NAMES.get(token.upper(), token)


def _protocol(token: str) -> str:
    if token.isdigit():
        return _PROTOS[int(token)] if int(token) < len(_PROTOS) else token
    return {"LL": "LL", "LL128": "LL128", "SIMPLE": "Simple"}.get(token.upper(), token)


def _short(line: str) -> str:
    line = line.strip()
    return line if len(line) <= 160 else line[:157] + "..."
