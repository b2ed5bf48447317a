"""Which system a log (or one measurement) is judged on, and where each value came from.

Order (each later source overrides the earlier, and provenance says which one set a value):
  1. the catalogue system of the GPU model in the log's device lines (model/systems.py), or of a GPU
     named in the log's comment lines when it has no device lines (e.g. "# hardware: 2 nodes x 8 B200");
  2. the node count and ranks in the log (hosts in the device lines, else "N nodes" in a comment, else
     ranks / the catalogue's GPUs per node);
  3. NCCL INFO lines (NICs found, NET/OFI or NET/IB, NVLS, NCCL_PROTO) and nccl-tests' -g (launch cost);
  4. the user's overrides: --cluster (a catalogue system), --gpu, --nodes, --nics-per-node, --nic-rate,
     --nvls/--no-nvls, --intra-bandwidth, --profile.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

from collperf.errors import UsageError
from collperf.model.systems import _apply_hints, get_system, hints_from_header, System, system_for_gpu
from collperf.spec import HardwareSpec
from collperf.spec.network import load_cluster

# the values the output lists, in order, with how each is shown
_SHOWN = (
    ("gpu", "GPU", lambda s: s.gpu),
    ("nodes", "nodes", lambda s: str(s.nodes)),
    ("gpus_per_node", "GPUs per node", lambda s: str(s.gpus_per_node)),
    ("nvlink_GBps", "intra-node link", lambda s: (f"{s.nvlink_links}x NVLink, {s.nvlink_GBps * s.phys_scale:g} GB/s "
                                                  f"per GPU per direction{', NVSwitch' if s.nvswitch else ''}")
     if s.nvlink_links else f"PCIe Gen{s.pcie_gen}{'' if s.p2p else ' without P2P (through host memory)'}"
                            f"{', GPUs behind one PCIe switch' if s.pcie_switch_shared else ''}"),
    ("nvls", "in-switch reduction (NVLS)", lambda s: "yes" if s.nvls else "no"),
    ("nics_per_node", "NICs per node", lambda s: str(s.nics_per_node)),
    ("nic_Gbps", "NIC rate", lambda s: f"{s.nic_Gbps:g} Gb/s"),
    ("net_gdr", "GPUDirect RDMA", lambda s: "not used (one node)" if s.nodes == 1 else
     "yes" if s.net_gdr else "no (network data staged through host memory)"),
    ("protocols", "NCCL protocols", lambda s: ", ".join(s.protocols)),
    ("launch_overhead_us", "launch overhead", lambda s: f"{s.launch_overhead_us:g} us per call"
     if s.protocol_overhead_us is None else "per call " + ", ".join(
         f"{p} {o:g} us" for p, o in zip(("LL", "LL128", "Simple"), s.protocol_overhead_us))),
)
# a shown value's provenance may sit under another field name (pcie_gen/p2p set the PCIe link)
_ALSO = {"nvlink_GBps": ("nvlink_links", "pcie_gen", "p2p", "pcie_switch_shared", "phys_scale"), "nodes": (), "gpu": ("compute_capability",)}


@dataclass
class Assumed:
    """The system assumed (None: not enough known) and, per shown value, (label, value, source)."""

    system: System | None
    values: list[tuple[str, str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    why_none: str = ""

    def describe(self) -> str:
        return self.system.describe() if self.system else f"none assumed: {self.why_none}"

    def to_json(self) -> dict:
        return {"system": self.system.name if self.system else None,
                "description": self.describe(), "catalogue_source": self.system.source if self.system else "",
                "values": [{"value": label, "assumed": value, "source": src} for label, value, src in self.values],
                "notes": self.notes}


def _values(system: System) -> list[tuple[str, str, str]]:
    out = []
    for key, label, show in _SHOWN:
        src = system.provenance.get(key)
        for other in _ALSO.get(key, ()):
            theirs = system.provenance.get(other, "")
            src = system.provenance.get(other, src) if src is None or "user" in theirs or "fitted" in theirs \
                or (other == "pcie_switch_shared" and theirs.startswith("from ")) else src
        out.append((label, show(system), src or f"default for {system.name}"))
    return out


def log_text_hints(source: str) -> tuple[str, list[str]]:
    """(NCCL INFO / version lines, comment lines) of a log file, '' and [] when it is not a readable file.
    Read once per file, line by line: a log of 1,600 tables is not read 1,600 times, and a large one is
    never held whole for this."""
    try:
        stat = Path(source).stat()
    except (OSError, ValueError):
        return "", []
    info, comments = _hints(source, stat.st_mtime_ns, stat.st_size)
    return info, list(comments)


@functools.lru_cache(maxsize=8)
def _hints(source: str, mtime_ns: int, size_bytes: int) -> tuple[str, list[str]]:
    info, comments = [], []
    try:
        with open(source, errors="replace") as lines:
            for number, line in enumerate(lines):
                line = line.rstrip("\n")
                if "NCCL INFO" in line or "NCCL version" in line or "nccl-library" in line:
                    info.append(line)
                if number < 60 and line.startswith("#"):
                    comments.append(line.lstrip("# ").strip())
    except (OSError, ValueError):
        return "", []
    return "\n".join(info), comments


_GPU_WORDS = r"(?:NVIDIA\s+)?(?:GB200|B200|B100|H200|H100[\w -]*?|H800|A100[\w-]*|A800[\w-]*|V100[\w-]*|Tesla T4|" \
             r"GeForce RTX \d{4}(?: Ti)?|RTX \d{4}(?: Ti)?)"


def _gpu_from_comments(comments: list[str]) -> tuple[str | None, int | None, int | None, str]:
    """A GPU model, node count and GPUs per node from comment lines such as
    '# hardware: 2 nodes x 8 NVIDIA B200 = 16 GPUs', with the line it came from."""
    for line in comments:
        m = re.search(_GPU_WORDS, line)
        if not m or "device" in line.lower():
            continue
        nodes = re.search(r"(\d+)\s*nodes?\b", line)
        per = re.search(r"(\d+)\s*x\s*" + _GPU_WORDS, line)
        return (m.group(0).strip(), int(nodes.group(1)) if nodes else None, int(per.group(1)) if per else None,
                line[:100])
    return None, None, None, ""


def _nccl_version(table, info: str) -> str | None:
    version = str(table.header.get("nccl_version", "")).split("+")[0]
    m = re.search(r"nccl-library=(\d)(\d\d)(\d\d)", info) if not version else None
    if m:
        version = f"{int(m.group(1))}.{int(m.group(2))}.{int(m.group(3))}"
    return version or None


def _overrides(system: System, hw) -> System:
    """Apply the user's values (HardwareSpec) on top of a system, recorded as 'user override (--flag)'."""
    changes: list[tuple[str, dict]] = []
    if hw.nics_per_node is not None:
        changes.append(("--nics-per-node", {"nics_per_node": hw.nics_per_node}))
    if hw.nic_Gbps is not None:
        changes.append(("--nic-rate", {"nic_Gbps": hw.nic_Gbps}))
    if hw.nvls is not None:
        if hw.nvls and not (system.nvswitch and system.compute_capability >= 90):
            raise UsageError(f"--nvls: {system.gpu} ({system.name}) has no NVSwitch with SHARP (NVLS needs "
                             "Hopper or later behind NVSwitch); drop --nvls or pick another --cluster")
        changes.append(("--nvls" if hw.nvls else "--no-nvls", {"nvls": bool(hw.nvls)}))
    if hw.intra_GBps is not None:
        if system.nvlink_links:
            changes.append(("--intra-bandwidth", {"nvlink_GBps": hw.intra_GBps}))
        else:   # PCIe: the generation whose x16 rate is nearest (the bound reads the rate from it)
            gen = min((3, 4, 5, 6), key=lambda g: abs({3: 15.75, 4: 31.5, 5: 63.0, 6: 126.0}[g] - hw.intra_GBps))
            changes.append((f"--intra-bandwidth (nearest PCIe x16: Gen{gen})", {"pcie_gen": gen}))
    for flag, values in changes:
        system = system.with_(f"user override ({flag})", **values)
    return system


def _from_profile(system: System, path: str) -> System:
    """A calibrated profile's two levels as the system's physical rates: intra -> the GPU link, inter ->
    one NIC per node (collperf calibrate measures one path per level)."""
    c = load_cluster(path)
    why = f"user override (--profile {Path(path).name})"
    base = system.with_(why, nics_per_node=1, nic_Gbps=c.inter.bandwidth_Bps * 8 / 1e9)
    if base.nvlink_links:
        return base.with_(why, nvlink_GBps=c.intra.bandwidth_Bps / 1e9)
    gen = min((3, 4, 5, 6), key=lambda g: abs({3: 15.75, 4: 31.5, 5: 63.0, 6: 126.0}[g] - c.intra.bandwidth_Bps / 1e9))
    return base.with_(why, pcie_gen=gen)


def assume(table=None, hw=None, ranks: int | None = None) -> Assumed:
    """The system a log (`table`) or a bare measurement (`ranks`) is judged on, with provenance."""
    hw = hw or HardwareSpec()
    notes: list[str] = []
    ranks = ranks or (table.ranks if table is not None else None)
    header = table.header if table is not None else {}
    info, comments = log_text_hints(table.source) if table is not None else ("", [])
    gpu_log = (header.get("gpus") or [None])[0]
    gpu_src = "from GPU model in device lines"
    c_gpu, c_nodes, c_per, c_line = _gpu_from_comments(comments)
    if gpu_log is None and c_gpu:
        gpu_log, gpu_src = c_gpu, f"from a comment line in the log ('{c_line}')"
    nodes, nodes_src = (table.nodes, "from the hosts in the device lines") if table is not None and table.nodes \
        else (None, "")
    if nodes is None and c_nodes:
        nodes, nodes_src = c_nodes, f"from a comment line in the log ('{c_line}')"
    if hw.nodes is not None:
        nodes, nodes_src = hw.nodes, "user override (--nodes)"

    if hw.cluster is not None:
        base = get_system(hw.cluster)
        base = base.with_(f"user override (--cluster {base.name})",
                          **{k: getattr(base, k) for k in ("gpu", "nvlink_GBps", "nics_per_node", "nic_Gbps",
                                                           "nvls", "protocols", "pcie_gen", "p2p")})
        gpu_text, gpu_src = base.gpu, f"user override (--cluster {base.name})"
        if hw.gpu is not None:
            notes.append(f"--gpu {hw.gpu} ignored: --cluster {hw.cluster} names the system")
    else:
        gpu_text = hw.gpu or gpu_log
        if hw.gpu is not None:
            gpu_src = "user override (--gpu)"
        base = None
    if base is None and gpu_text is None and hw.profile is None:
        why = ("the log names no GPU (no device lines)" if table is not None else "no system given") + \
              ": pass --cluster SYSTEM (or --gpu MODEL) to get NCCL's expected time and the hardware bound"
        return Assumed(None, [], notes, why)
    if base is None and gpu_text is not None:
        try:
            base = system_for_gpu(gpu_text, nodes=1)
        except UsageError as e:
            base = None
            if hw.gpu is not None:   # a bare 'H100' / 'A100' from the user: the SXM part of the catalogue
                try:
                    base = system_for_gpu(f"{gpu_text} SXM", nodes=1)
                    gpu_src = "user override (--gpu), taken as the SXM part"
                except UsageError:
                    raise UsageError(f"--gpu {hw.gpu}: {e}") from None
            elif hw.profile is None:
                return Assumed(None, [], notes, f"{e}; pass --cluster SYSTEM")
    per_node_default = base.gpus_per_node if base is not None else (ranks or 1)
    if nodes is None and ranks:
        if ranks > per_node_default and ranks % per_node_default == 0:
            nodes, nodes_src = ranks // per_node_default, f"ranks {ranks} / {per_node_default} GPUs per node " \
                                                          f"of {base.name if base else 'the profile'} (assumed)"
        else:
            nodes, nodes_src = 1, "assumed: one node (the log does not say)"
    nodes = nodes or 1
    if ranks and ranks % nodes:
        raise UsageError(f"{ranks} ranks do not split over {nodes} nodes: set --nodes to a divisor of the ranks")
    per_node = ranks // nodes if ranks else (c_per or per_node_default)
    base = base or get_system("pcie-p2p")      # a profile on a log that names no GPU: PCIe GPUs, P2P
    system = base.with_(nodes_src or "assumed: one node", nodes=nodes).with_(
        "from the ranks in the log / nodes" if table is not None and ranks else "from --ranks / nodes",
        gpus_per_node=per_node)
    system = system.with_(gpu_src, gpu=gpu_text) if hw.cluster is None and gpu_text else system
    hints = hints_from_header(header, info) if info else {}
    version = _nccl_version(table, info) if table is not None else None
    if version and "nccl_version" not in hints:
        hints["nccl_version"] = version
    ngpus = int(header.get("ngpus", 1) or 1)
    if ngpus > 1:
        hints["gpus_per_thread"] = ngpus
    if hints:
        system = _apply_hints(system, hints)
        for k in ("nics_per_node", "protocols", "nvls", "launch_overhead_us", "net_gdr"):
            if system.provenance.get(k, "").startswith("from NCCL INFO"):
                what = {"launch_overhead_us": "nccl-tests -g (one thread launches every GPU)"}.get(
                    k, "NCCL INFO lines")
                system = system.with_(f"from {what}", **{k: getattr(system, k)})
    # "under a PCIe switch" / nvidia-smi topo "PIX" in the log's comments: the GPUs share the switch's
    # uplink to the CPU, which carries all their host-memory traffic when P2P is off (nccl/transport.py)
    switch_line = next((ln for ln in comments if re.search(r"\bPIX\b|PCIe switch", ln, re.IGNORECASE)), None)
    if switch_line and system.gpus_per_node > 1 and not system.nvlink_links:
        system = system.with_(f"from a comment line in the log ('{switch_line[:100]}')", pcie_switch_shared=True)
    if hw.profile is not None:
        system = _from_profile(system, hw.profile)
    system = _overrides(system, hw)
    return Assumed(system, _values(system), notes)
