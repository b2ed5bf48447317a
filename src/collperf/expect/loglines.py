"""Hardware facts from what real logs carry: NCCL INFO lines (the net plugin, NICs, GPUDirect RDMA, NVLS,
P2P or SHM, channel counts, NCCL_ALGO/NCCL_PROTO echoes), the NCCL version, and host names that name a
cloud instance type. Each fact keeps the line that decided it, so provenance can quote it.

Line shapes follow NCCL 2.30.7 src/init.cc ("Using network %s", "%d coll channels, ..."),
src/transport/net_ib.cc ("NET/IB : Using [0]mlx5_0:1/IB ..."; "/RoCE" for Ethernet ports),
src/transport/net_socket.cc ("NET/Socket : Using [0]eth0:..."), src/transport/net.cc and p2p.cc
("via NET/IB/0/GDRDMA", "via P2P/IPC", "via SHM/direct/direct"), aws-ofi-nccl ("NET/OFI Selected Provider
is efa (found 4 nics)", "Setting NCCL_PROTO to \"simple\""; on HPE Slingshot 11 the provider is cxi), GCP's nccl-plugin-gpudirecttcpx
("NET/GPUDirectTCPX") and its TCPXO successor ("NET/FasTrak"), Google's gIB plugin for RoCE ("NET/gIB", its
/usr/local/gib scripts on the launch line). The launch command a log echoes
("mpirun ... -x NCCL_ALGO=ring -x NCCL_IB_HCA=mlx5_2,mlx5_8") is read as the environment NCCL ran with
(NCCL 2.30.7 src/misc/param.cc reads these names), below any INFO line that says the same; nccl-tests'
device lines ("device 0 [0000:61:00] NVIDIA L40S") give each GPU's PCI bus.

In-network reduction (InfiniBand SHARP through NCCL's CollNet) is read only from lines that show it set up or
asked for: the SHARP library's group lines ("comm.c:392] INFO [group#:0] group id:0 tree idx:0 tree_type:LLT"),
NCCL's "Connected Collnet Chains" and "rank 0 Connected CollNet" (NCCL 2.30.7 src/transport/coll_net.cc;
"Collnet Chains" and "Connected collnet + chain" in older releases), NCCL_COLLNET_ENABLE=1 (echoed on a launch
line or by INFO "set by environment to 1") and an NCCL_ALGO that enables CollNet (CollNetChain, CollNetDirect).
Not from the SHARP plugin merely being loaded ("Plugin Path : .../nccl_rdma_sharp_plugin", "NET/IB : Using
[0]mlx5_0:1/IB/SHARP"): the communicator's collnetEnable stays off unless NCCL_COLLNET_ENABLE=1 or its config
sets it (NCCL 2.30.7 src/init.cc); nor from "N collnet channels": NCCL 2.30.7 src/init.cc prints comm->nChannels
there, the coll channel count whether CollNet runs or not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# "Using network <name>" (init.cc) -> fabric class; the plugin names as their plugins register them
_NETWORK_NAMES = (
    (r"AWS Libfabric|OFI", "efa"),
    (r"FasTrak|TCPXO", "tcpxo"),
    (r"GPUDirectTCPX|TCPX", "tcpx"),
    (r"\bIB\b|IBext|sharp", "ib"),
    (r"Socket", "socket"),
)
# host names or headers that name an instance type -> catalogue system
_HOSTS = (
    (r"a3-?mega", "gcp-a3-mega"),
    (r"a3-?ultra", "gcp-a3-ultra"),
    (r"a3-?high", "gcp-a3-high"),
    (r"\ba4-?high|\ba4-\w*gpu", "gcp-a4"),
    (r"p5en", "aws-p5en"),
    (r"\bp5\.48xlarge|\bp5-", "aws-p5"),
    (r"\bp4d", "aws-p4d"),
    (r"g4dn\.12xlarge", "aws-g4dn-12xlarge"),
    (r"g4dn\.metal", "aws-g4dn-metal"),
    (r"nd96isr|ndv5|nd-?h100-?v5", "azure-nd-h100-v5"),
    (r"nd96asr|nd-?a100-?v4", "azure-nd-a100-v4"),
    (r"bm\.gpu\.h100|bm-gpu-h100", "oci-bm-gpu-h100"),
    (r"bm\.gpu\.b200|bm-gpu-b200", "oci-bm-gpu-b200"),
)


_GRAPH_TYPE = re.compile(r"Pattern \d{1,3}, crossNic \d{1,3}, nChannels \d{1,4}, .{0,60}?type ([A-Z]{2,4})/")


@dataclass
class LogFacts:
    """What a log's own lines say about the hardware: value name -> (value, the line that decided it)."""

    values: dict[str, tuple[Any, str]] = field(default_factory=dict)  # the values are of every kind

    def get(self, key: str, default: Any = None) -> Any:
        return self.values[key][0] if key in self.values else default

    def line(self, key: str) -> str:
        return self.values[key][1] if key in self.values else ""

    def __contains__(self, key: object) -> bool:
        return key in self.values

    def set(self, key: str, value: object, line: str) -> None:
        if key not in self.values:  # the first line that says it decides
            self.values[key] = (value, _short(line))


def _short(line: str) -> str:
    line = re.sub(r"^\[\d{1,9},\d{1,9}\]<std\w{1,8}>:", "", line.strip())  # mpirun --tag-output prefixes
    return line if len(line) <= 160 else line[:157] + "..."


# Every pattern over a log line runs in one pass over it (a line may be megabytes of digits): digit runs are
# bounded (\d{1,9}), a rare pattern waits for its literal (`in` first), and "X.*Y" is searched from the first X
# only, with a look-ahead that cannot be backtracked into (Python's look-aheads are atomic): from every X, the
# `.*` would rescan the rest of the line once per X.
_HOST_LINE = re.compile(r"\A(?=(.*?Rank\s+\d{1,9}\s))\1.*\bon\s+\S|NCCL INFO|^\s*\S+:\d{1,9}:\d{1,9}")
_OFI_EFA = re.compile(r"\A(?=(.*?NET/OFI ))\1.*efa")
# a piece every instance-name pattern of _HOSTS holds (lower case): the line is searched for the names only
# when it holds one (13 case-blind searches on every INFO line were most of diagnose's time on a large log)
HOST_LITERALS = ("a3", "a4", "p5", "p4d", "g4dn", "nd96", "v5", "v4", "bm")
# anchored: compiled, a pattern may be searched, and a search of `\s*#` would rescan a run of blanks from each blank
_PERSON = re.compile(r"^\s*#\s*(hardware|source)\s*:")
_VERSION = re.compile(r"NCCL version (\d{1,9}\.\d{1,9}\.\d{1,9})|RCCL version (\d{1,9}\.\d{1,9}\.\d{1,9})")
_CHANNELS = re.compile(
    r"(?<!\d)(\d{1,9}) coll channels, (?:(\d{1,9}) collnet channels, )?(?:(\d{1,9}) nvls channels, )?"
    r"(\d{1,9}) p2p channels"
)


def read_facts(text: str) -> LogFacts:
    """Every fact the log's lines state (comment lines written by a person, '# hardware:', are not read)."""
    facts = LogFacts()
    lines = [ln for ln in text.splitlines() if not ("#" in ln and _PERSON.match(ln))]
    # Each reader below is called only on a line that holds the literal it needs (a line of a large log holds
    # none of them, or one): a few `in` tests per line instead of a call and its own tests per reader.
    for ln in lines:
        net = "NET/" in ln
        if net or "Using network" in ln or "TCPXO" in ln or "/usr/local/gib/" in ln:
            _network(facts, ln)
        if net or "nics" in ln:
            _nics(facts, ln)
        if "via " in ln or "NVLS" in ln or "nvls" in ln:
            _transport(facts, ln)
        if "NCCL_" in ln:
            _tuning_echoes(facts, ln)
        if "CCL version" in ln and "nccl_version" not in facts and (m := _VERSION.search(ln)):
            facts.set("nccl_version", m.group(1) or m.group(2), ln)
        if "Pattern" in ln and "type " in ln and "intra_path" not in facts:
            # the topology search's graph (NCCL 2.30.7 src/graph/search.cc ncclTopoPrintGraph): "Pattern 4, crossNic 0,
            # nChannels 12, bw 40.000000/40.000000, type NVL/PIX, sameChannels 1": the first type is the path between
            # the node's GPUs (NVL: NVLink; PIX, PXB, PHB, SYS: PCIe)
            m = _GRAPH_TYPE.search(ln)
            if m:
                facts.set("intra_path", m.group(1), ln)
        # the first line that says a fact decides it: a fact already read is not searched for again
        if "coll channels" in ln and ("channels" not in facts or "nvls" not in facts) and (m := _CHANNELS.search(ln)):
            facts.set("channels", int(m.group(1)), ln)
            if m.group(3) is not None:
                facts.set("nvls", int(m.group(3)) > 0, ln)
    if "ofi_provider" in facts:
        # libfabric's provider names the network under the OFI plugin: cxi is HPE Slingshot 11's NIC (aws-ofi-nccl
        # README: "Slingshot (cxi)"), efa AWS's; NCCL's "Using network AWS Libfabric" says only that OFI is used
        fabric = {"cxi": "slingshot", "efa": "efa"}.get(facts.get("ofi_provider"))
        if fabric:
            facts.values["fabric"] = (fabric, facts.line("ofi_provider"))
    if facts.get("plugin") == "gib" and "fabric" not in facts:  # asked for, and no NCCL line says otherwise
        facts.set("fabric", "roce", facts.line("plugin"))
    launch = _launch_vars(lines)
    _command_env(facts, lines, launch)
    _settings(facts, lines, launch)
    _collnet(facts, lines)
    _used_ports(facts, lines)
    _pci_buses(facts, lines)
    for ln in lines:
        if _has_host_piece(ln.lower()) and _HOST_LINE.search(ln):
            for pattern, key in _HOSTS:
                if re.search(pattern, ln, re.IGNORECASE):
                    facts.set("instance", key, ln)
                    return facts  # the first line that names an instance decides: no later line can change it
    return facts


def _has_host_piece(low: str) -> bool:
    """Whether a lowered line holds one of HOST_LITERALS (spelt out: a generator over them cost more than the test)."""
    return (
        "a3" in low
        or "a4" in low
        or "p5" in low
        or "p4d" in low
        or "g4dn" in low
        or "nd96" in low
        or "v5" in low
        or "v4" in low
        or "bm" in low
    )


# Google's gIB NCCL plugin (RDMA over Converged Ethernet on GCP's A3 Ultra, A4 and A4X): its INFO lines say NCCL
# runs on it; its scripts on a launch line (/usr/local/gib/scripts/run_nccl_tests.sh) only that it was asked for, so
# NCCL's own network lines decide the fabric where the log has them (a plugin that fails to load leaves NCCL on
# TCP sockets, the way gIB most often breaks)


def _network(facts: LogFacts, ln: str) -> None:
    if "NET/gIB" in ln or "Using network gIB" in ln:
        facts.set("plugin", "gib", ln)
        facts.set("fabric", "roce", ln)
        return
    if "/usr/local/gib/" in ln:
        facts.set("plugin", "gib", ln)
        return
    # the name runs to the end of the line (trailing blanks do not change which name it is; `(.+?)\s*$` was
    # quadratic in them)
    m = re.search(r"Using network (.+)", ln) if "Using network" in ln else None
    if m:
        for pattern, fabric in _NETWORK_NAMES:
            if re.search(pattern, m.group(1)):
                facts.set("fabric", fabric, ln)
                return
    m = re.search(r"NET/OFI Selected [Pp]rovider is (\w{1,16})", ln) if "NET/OFI" in ln else None
    if m:
        facts.set("ofi_provider", m.group(1).lower(), ln)
    if "fabric" in facts:  # each test below only sets the fabric, which an earlier line decided
        return
    if "NET/OFI" in ln and _OFI_EFA.search(ln):
        facts.set("fabric", "efa", ln)
    elif re.search(r"NET/FasTrak|TCPXO", ln):
        facts.set("fabric", "tcpxo", ln)
    elif re.search(r"NET/GPUDirectTCPX", ln):
        facts.set("fabric", "tcpx", ln)
    elif re.search(r"NET/IB\s*:\s*Using\s*\[", ln):
        facts.set("fabric", "roce" if "/RoCE" in ln else "ib", ln)


def _nics(facts: LogFacts, ln: str) -> None:
    m = re.search(r"found (\d{1,9}) nics\b", ln) if "nics" in ln else None
    if m:
        facts.set("nics", int(m.group(1)), ln)
        return
    # once the NICs are counted, only a line that may still change the fabric (RoCE ports, sockets) is read again
    m = (
        re.search(r"NET/(?:IB|Socket|GPUDirectTCPX|FasTrak)\w{0,32}\s*:\s*Using\s*(\[\d{1,9}\]\S.*)", ln)
        if "NET/" in ln and ("nics" not in facts or "/RoCE" in ln or "NET/Socket" in ln)
        else None
    )
    if m:
        # the devices: each "[n]name" up to the first token that is not one ("; OOB eth0:...")
        end = re.search(r"\s(?![\s\[])|\s\[(?!\d)", m.group(1))
        devices = m.group(1)[: end.start()] if end else m.group(1)
        facts.set("nics", len(re.findall(r"\[\d{1,9}\]", devices)), ln)
        if "NET/IB" in ln and "ib_ports" not in facts:
            # each listed port's link layer, by its index ("[1]mlx5_2:1/IB"): the channels' "via NET/IB/1" say
            # which of them the run uses (_used_ports)
            facts.set(
                "ib_ports",
                dict((int(i), kind) for i, kind in re.findall(r"\[(\d{1,9})\]\S{1,64}?/(RoCE|IB)\b", devices)),
                ln,
            )
        if "/RoCE" in devices:
            facts.values["fabric"] = ("roce", _short(ln))  # NET/IB over Ethernet ports is RoCE
        if "NET/Socket" in ln and "fabric" not in facts:
            facts.set("socket_devices", True, ln)


def _used_ports(facts: LogFacts, lines: list[str]) -> None:
    """Where NCCL lists RoCE and InfiniBand ports together but its channels use only some ('via NET/IB/1'), the
    NICs and the fabric are those of the ports used: a host's stray RoCE port does not make an IB run RoCE."""
    ports = facts.get("ib_ports") or {}
    if len(set(ports.values())) < 2:
        return
    used = {int(k) for ln in lines if "via NET/IB/" in ln for k in re.findall(r"via NET/IB/(\d{1,9})", ln)}
    used &= set(ports)
    if not used:
        return
    kinds = {ports[k] for k in used}
    line = facts.line("ib_ports")
    facts.values["nics"] = (len(used), f"{line} (channels use port(s) {', '.join(map(str, sorted(used)))})")
    facts.values["fabric"] = ("roce" if kinds == {"RoCE"} else "ib", facts.values["nics"][1])


def _transport(facts: LogFacts, ln: str) -> None:
    if "via NET/" in ln:
        # used if any channel shows it: a send without it ('[send] via NET/IB/0') and a receive with it is
        # GPUDirect RDMA for receives only (NCCL_NET_GDR_READ=0, or pre-Ampere PCIe GPUs: NCCL 2.30.7 paths.cc)
        if "GDRDMA" in ln and not facts.get("net_gdr", False):
            facts.values["net_gdr"] = (True, _short(ln))
        facts.set("net_gdr", "GDRDMA" in ln, ln)
    if "via P2P/" in ln:
        facts.set("p2p", True, ln)
    elif "via SHM/" in ln:
        facts.set("p2p", False, ln)
    if (
        ("NVLS" in ln or "nvls" in ln)
        and "nvls" not in facts
        and re.search(r"NVLS multicast support is available|NVLS comm|nvls channels", ln)
    ):
        if not re.search(r"0 nvls channels|not available", ln):
            facts.set("nvls", True, ln)


def _tuning_echoes(facts: LogFacts, ln: str) -> None:
    m = re.search(r"NCCL_PROTO (?:set by environment )?to \"?([\w,^]+)\"?", ln) if "NCCL_PROTO" in ln else None
    if m:
        facts.set("protocols", _protocols(m.group(1)), ln)
        facts.set("nccl_proto", m.group(1), ln)
    m = re.search(r"NCCL_ALGO (?:set by environment )?to \"?([\w,^;:]+)\"?", ln) if "NCCL_ALGO" in ln else None
    if m:
        facts.set("algorithms", m.group(1), ln)


def _protocols(value: str) -> tuple[str, ...]:
    """NCCL_PROTO's value ('simple', 'LL,LL128', '^LL128') as the protocols left enabled."""
    names = {"ll": "LL", "ll128": "LL128", "simple": "Simple"}
    exclude = value.startswith("^")
    given = [names[p.lower()] for p in value.lstrip("^").split(",") if p.lower() in names]
    kept = [p for p in ("LL", "LL128", "Simple") if (p not in given) == exclude]
    return tuple(kept) or ("LL", "LL128", "Simple")


# lines that show CollNet (SHARP) set up: the SHARP library's group lines and NCCL's CollNet connect lines
_COLLNET_SETUP = re.compile(r"tree_type:(?:LLT|SAT)\b|\bConnected collnet\b|\bCollnet Chains\b", re.IGNORECASE)


def _collnet(facts: LogFacts, lines: list[str]) -> None:
    """collnet: True where a line shows CollNet set up or enabled, False where NCCL_COLLNET_ENABLE=0 is echoed."""
    for ln in lines:
        m = (
            re.search(r"NCCL_COLLNET_ENABLE(?: set by environment to |=)[\"']?(\d)", ln)
            if "NCCL_COLLNET_ENABLE" in ln
            else None
        )
        if m:
            facts.set("collnet", m.group(1) != "0", ln if "NCCL INFO" in ln else m.group(0))
        elif ("tree_type" in ln or "ollnet" in ln.lower()) and _collnet_words(ln.lower()) and _COLLNET_SETUP.search(ln):
            facts.set("collnet", True, ln)
        if "collnet" in facts:  # the first line that says it decides
            break
    algorithms = str(facts.get("algorithms", ""))
    if "collnet" not in facts and _enables_collnet(algorithms):
        # a run that completed with NCCL_ALGO naming CollNet had it enabled (else NCCL finds no algorithm)
        facts.set("collnet", True, facts.line("algorithms"))


def _collnet_words(low: str) -> bool:
    """Whether a lowered line holds a literal _COLLNET_SETUP needs (none of their letters has a case-blind match outside
    ASCII): its case-blind search of three alternatives costs far more than the three tests, and NCCL prints
    "0 collnet channels" on every communicator."""
    return "tree_type:" in low or "connected collnet" in low or "collnet cha" in low


def _enables_collnet(value: str) -> bool:
    """Whether an NCCL_ALGO value turns a CollNet algorithm on ('CollNetChain', 'ring,collnetdirect'), not off
    ('^CollNet') (NCCL 2.30.7 src/graph/tuning.cc parses it: '^' excludes the names that follow)."""
    for part in value.split(";"):
        names = part.split(":")[-1]
        if not names.startswith("^") and "collnet" in names.lower():
            return True
    return False


# NAME=value on a launch line (mpirun -x, srun --export, env, export, a leading NAME=value); not INFO's "NAME set
# by environment to", not an echo or a shell variable's default ("${NCCL_MAX_NCHANNELS:-32}")
_ENV = re.compile(r"(?<![\w${?&/=.-])(NCCL_[A-Z0-9_]{1,64})=(\"[^\"]{0,4096}\"|'[^']{0,4096}'|[^\s\"';,][^\s\"';]*)")
_LAUNCHER = re.compile(r"\b(mpirun|mpiexec|srun|torchrun|docker|kubectl|env|export)\b")
# a network plugin named anywhere: then NCCL_IB_DISABLE=1 does not mean TCP sockets
_PLUGIN = re.compile(r"NET/OFI|AWS Libfabric|FI_PROVIDER|GPUDirectTCPX|FasTrak|NCCL_NET_PLUGIN|NCCL_NET=")


def _launch_vars(lines: list[str]) -> dict[str, tuple[str, str]]:
    """NCCL_* variables the echoed launch command sets: name -> (value, the assignment as quoted, with its
    launcher). Not from INFO lines (read first, they keep precedence), echo lines, a comment line naming no
    launcher, or a value that is itself a shell expansion."""
    env: dict[str, tuple[str, str]] = {}
    for ln in lines:
        if "NCCL_" not in ln or "NCCL INFO" in ln or re.search(r"\becho\b", ln):
            continue
        launcher = _LAUNCHER.search(ln)
        if ln.lstrip().startswith("#") and not launcher:
            continue
        for name, value in _ENV.findall(ln):
            if "$" in value:
                continue
            # quoted as the assignment itself: a launch line is too long to show whole
            env.setdefault(
                name, (value.strip("\"'"), f"{launcher.group(1) + ' ... ' if launcher else ''}{name}={value}")
            )
    return env


def _command_env(facts: LogFacts, lines: list[str], env: dict[str, tuple[str, str]]) -> None:
    """What the launch command's NCCL_* variables (`_launch_vars`) say of the algorithms, protocols and network."""
    if "NCCL_ALGO" in env:
        facts.set("algorithms", *env["NCCL_ALGO"])
    if "NCCL_PROTO" in env:
        facts.set("protocols", _protocols(env["NCCL_PROTO"][0]), env["NCCL_PROTO"][1])
        facts.set("nccl_proto", *env["NCCL_PROTO"])
    ib_off = env.get("NCCL_IB_DISABLE", ("0", ""))[0] == "1"
    if ib_off and not any(_PLUGIN.search(ln) for ln in lines):
        # NCCL 2.30.7 src/transport/net_ib.cc: IB disabled and no plugin -> the built-in socket transport
        facts.set("fabric", "socket", env["NCCL_IB_DISABLE"][1])
    hca = env.get("NCCL_IB_HCA")
    if hca and not ib_off and not hca[0].startswith("^"):
        # "mlx5_2:1,mlx5_8" names the HCAs NCCL may use (a ':port' suffix allowed); a bare "mlx5" is a prefix
        # that matches every mlx5 device, so it says nothing about how many
        names = [d.strip() for d in hca[0].lstrip("=").split(",") if d.strip()]
        if names and all(re.fullmatch(r"\w{1,64}_\d{1,9}(?::\d{1,9})?", d) for d in names):
            facts.set("nics", len({d.split(":")[0] for d in names}), hca[1])


# the NCCL settings that change how fast a collective runs (NCCL 2.30.7 src/misc/param.cc and the transports read
# them); diagnose names the ones a log shows set (expect/suspects.py), not logging or interface names
PERF_SETTINGS = (
    "NET_GDR_LEVEL",
    "NET_GDR_READ",
    "P2P_DISABLE",
    "P2P_LEVEL",
    "SHM_DISABLE",
    "NVLS_ENABLE",
    "MIN_NCHANNELS",
    "MAX_NCHANNELS",
    "MIN_CTAS",
    "MAX_CTAS",
    "NCHANNELS_PER_NET_PEER",
    "BUFFSIZE",
    "IB_QPS_PER_CONNECTION",
    "IB_SPLIT_DATA_ON_QPS",
    "CROSS_NIC",
    "P2P_NET_CHUNKSIZE",
    "P2P_PXN_LEVEL",
    "PXN_DISABLE",
    "IB_PCI_RELAXED_ORDERING",
    "IB_ADAPTIVE_ROUTING",
    "SOCKET_NTHREADS",
    "NSOCKS_PERTHREAD",
    "DMABUF_ENABLE",
    "CUMEM_ENABLE",
    "LAUNCH_MODE",
)
_SET_BY_ENV = re.compile(r"\bNCCL_(" + "|".join(PERF_SETTINGS) + r") set by environment to ([^\s.]+(?:\.\d+)?)")


def _settings(facts: LogFacts, lines: list[str], launch: dict[str, tuple[str, str]]) -> None:
    """'setting.NAME' -> its value, for the performance settings an INFO echo ('NCCL_NET_GDR_LEVEL set by environment
    to SYS') or the echoed launch command (`_launch_vars`: '-x NCCL_SHM_DISABLE=1') shows; the INFO echo wins."""
    for ln in lines:
        m = _SET_BY_ENV.search(ln) if "set by environment" in ln and "NCCL INFO" in ln else None
        if m:
            facts.set(f"setting.{m.group(1)}", m.group(2), ln)
    for name in PERF_SETTINGS:
        if f"NCCL_{name}" in launch:
            value, quoted = launch[f"NCCL_{name}"]
            facts.set(f"setting.{name}", value.rstrip(","), quoted)


_DEVICE = re.compile(
    r"Rank\s+\d{1,9}\s+Group\s+\d{1,9}\s+Pid\s+\d{1,12}\s+on\s+(\S+)\s+device\s+\d{1,9}\s+"
    r"\[(?:0x)?(?:[0-9a-fA-F]{4}:)?([0-9a-fA-F]{2})(?::[0-9a-fA-F]{2})?(?:\.\d)?\]"
)


def _pci_buses(facts: LogFacts, lines: list[str]) -> None:
    """Two GPUs of one host on PCI buses in both halves of the bus range (0x61 and 0xe1): a two-socket
    server's second root complex starts at bus 0x80 on the common layouts, so the GPUs (and a NIC beside
    one of them) are a CPU-socket link apart: NCCL's path type SYS."""
    buses: dict[str, list[tuple[int, str]]] = {}
    for ln in lines:
        m = _DEVICE.search(ln) if "Rank" in ln else None
        if m:
            buses.setdefault(m.group(1), []).append((int(m.group(2), 16), " ".join(ln[m.start(1) : m.end()].split())))
    for host, seen in buses.items():
        low = next((ln for bus, ln in seen if bus < 0x80), None)
        high = next((ln for bus, ln in seen if bus >= 0x80), None)
        if low and high:
            facts.set("cross_socket", True, f"{low}; {high}")
            return
