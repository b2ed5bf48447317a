"""Which system a log (or one measurement) is judged on, and where each value came from.

Order (each later source overrides the earlier, and provenance says which one set a value):
  1. the catalogue system of the GPU model in the log's device lines (model/hardware/catalogue.py), or of a GPU
     named in the log's comment lines when it has no device lines (e.g. "# hardware: 2 nodes x 8 B200");
  2. the node count and ranks in the log (hosts in the device lines, else "N nodes" in a comment, else
     ranks / the catalogue's GPUs per node); a host name that names an instance type (a3-mega..., p5en...)
     picks that instance, and the GPU with the fabric the NCCL INFO lines name the cloud instance with both
     (H100 + GPUDirect-TCPXO: gcp-a3-mega; H200 + EFA: aws-p5en); GB200: "node" is an NVLink domain;
  3. NCCL INFO lines (expect/loglines.py: the network, NICs found, GPUDirect RDMA, P2P or SHM, NVLS,
     SHARP/CollNet set up or enabled, NCCL_PROTO) and nccl-tests' -g (launch cost), each with the line that decided it;
  4. the NCCL settings the network's transport requires, where the log echoes none (the catalogue's
     FABRIC_NCCL_SETTINGS: GPUDirect-TCPX runs NCCL_ALGO=Ring, NCCL_PROTO=Simple);
  5. the user's overrides: --cluster (a catalogue system), --gpu, --nodes, --nics-per-node, --nic-rate,
     --fabric, --pcie-switch, --nvls/--no-nvls, --sharp/--no-sharp, --gpu-link-rate, --profile.
"""

from __future__ import annotations

import copy
import functools
import re
from dataclasses import dataclass, field
from typing import Any

from collperf.expect.log_facts import apply_facts, transport_settings
from collperf.expect.shown import shown_values
from collperf.expect.hints import Hints, from_comments, gpu_from_comments, log_text_hints
from collperf.expect.loglines import LogFacts, read_facts
from collperf.expect.overrides import apply_overrides, from_profile, unused_on_one_node
from collperf.expect.suspects import suspects
from collperf.errors import UsageError
from collperf.model.hardware.names import AmbiguousGPU, find_gpu, gpu_part, normalize
from collperf.model.hardware.nodes import nics_used, nodes_for
from collperf.model.hardware.catalogue import CATALOGUE, System, get_system, system_for_gpu
from collperf.ingest.table import Table
from collperf.spec import HardwareSpec


@dataclass
class Assumed:
    """The system assumed (None: not enough known) and, per shown value, (label, value, source)."""

    system: System | None
    values: list[tuple[str, str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    why_none: str = ""
    suspects: list[tuple[str, str]] = field(default_factory=list)  # what to check first, the log line showing it
    settings: list[tuple[str, str]] = field(default_factory=list)  # other NCCL settings the log shows, its line

    def describe(self) -> str:
        return self.system.describe() if self.system else f"none assumed: {self.why_none}"

    @property
    def catalogued(self) -> bool:
        """The system is a catalogue entry, not one composed of parts for this input's GPU."""
        return self.system is not None and self.system.name in CATALOGUE

    def to_json(self) -> dict[str, Any]:
        return {
            "system": self.system.name if self.system else None,
            "description": self.describe(),
            "catalogue_source": self.system.source if self.system else "",
            "values": [{"name": label, "value": value, "source": src} for label, value, src in self.values],
            "notes": self.notes,
            "check_first": [{"what": what, "log_line": line} for what, line in self.suspects],
            "settings_in_effect": [{"setting": what, "log_line": line} for what, line in self.settings],
        }


# the most GPUs one PCIe server usually holds (8 double-width cards): --gpu with no more ranks is one machine
PCIE_BOX_GPUS = 8


@functools.lru_cache(maxsize=2)
def _facts(text: str) -> LogFacts:
    """read_facts once per log text (the same text object for every table of a file: its hash is cached)."""
    return read_facts(text)


def _nccl_version(table: Table | Hints, info: str) -> str | None:
    version = str(table.header.get("nccl_version", "")).split("+")[0]
    m = re.search(r"nccl-library=(\d)(\d\d)(\d\d)", info) if not version else None
    if m:
        version = f"{int(m.group(1))}.{int(m.group(2))}.{int(m.group(3))}"
    return version or None


# the GPU model's catalogue entry and the network the log names -> the one cloud instance that has both. Only
# networks one cloud has (GPUDirect-TCPX/TCPXO and gIB: Google; EFA: AWS): RoCE alone names no instance (OCI,
# Google and many clusters of one's own run H100, H200 and B200 over RoCE), so it keeps the GPU's own entry
_CLOUD = {
    ("dgx-h100", "tcpx"): "gcp-a3-high",
    ("dgx-h100", "tcpxo"): "gcp-a3-mega",
    ("dgx-h200", "gib"): "gcp-a3-ultra",
    ("dgx-b200", "gib"): "gcp-a4",
    ("dgx-a100", "efa"): "aws-p4d",
    ("dgx-h100", "efa"): "aws-p5",
    ("dgx-h200", "efa"): "aws-p5en",
    ("pcie-t4", "efa"): "pcie-t4",
}


def _cloud_base(base: System, fabric: str, why: str, per_node: int | None) -> System:
    """The cloud instance with this GPU and this network, sized like the log; `base` when none fits."""
    key = _CLOUD.get((base.name, fabric))
    if key == "pcie-t4" and per_node in (4, 8):
        key = "aws-g4dn-12xlarge" if per_node == 4 else "aws-g4dn-metal"
    if key is None or key == base.name:
        return base
    cloud = get_system(key)
    return cloud.with_(
        f"{why}: the {cloud.instance} instance",
        **{k: getattr(cloud, k) for k in ("nics_per_node", "nic_Gbps", "fabric", "net_gdr")},
    ).with_(base.provenance.get("gpu", ""), gpu=base.gpu)


def _log_gpu_nodes(
    table: Table | Hints | None, hw: HardwareSpec, comments: list[str]
) -> tuple[str | None, str, int | None, str, int | None]:
    """(GPU model, its source, nodes, their source, GPUs per node from a comment) from the log and --nodes."""
    header = table.header if table is not None else {}
    gpu, gpu_src = (header.get("gpus") or [None])[0] or None, "from GPU model in device lines"  # '' names none
    c_gpu, c_nodes, c_per, c_line = gpu_from_comments(tuple(comments))
    if gpu is None and c_gpu:
        gpu, gpu_src = c_gpu, f"from a comment line in the log ('{c_line}')"
    nodes, nodes_src = (
        (
            table.nodes,
            "from the hosts in the device lines"
            if header.get("nodes_from") is None
            else "from the host numbering of the device lines that remain",
        )
        if table is not None and table.nodes
        else (None, "")
    )
    if nodes is None and c_nodes:
        nodes, nodes_src = c_nodes, f"from a comment line in the log ('{c_line}')"
    if hw.nodes is not None:
        nodes, nodes_src = hw.nodes, "user override (--nodes)"
    return gpu, gpu_src, nodes, nodes_src, c_per


def _base(
    hw: HardwareSpec, gpu_text: str | None, gpu_src: str, facts: LogFacts, notes: list[str], per_node: int | None = None
) -> tuple[System | None, str | None, str]:
    """The catalogue system to start from: --cluster, an instance named by a host, else the GPU's entry."""
    if hw.cluster is not None:
        base = get_system(hw.cluster)
        why = f"the catalogue's {hw.cluster} (--cluster)"
        if hw.gpu is not None:
            notes.append(f"--gpu {hw.gpu} ignored: --cluster {hw.cluster} names the system")
        return base.with_(why, **{k: getattr(base, k) for k in base.sources if k != "gpu"}), base.gpu, why
    if hw.gpu is not None:
        gpu_text, gpu_src = hw.gpu, "user override (--gpu)"
    if "instance" in facts:
        base = get_system(facts.get("instance"))
        why = f"from the host name in '{facts.line('instance')}' ({base.instance})"
        return (
            base.with_(why, **{k: getattr(base, k) for k in base.sources if k != "gpu"}),
            gpu_text or base.gpu,
            gpu_src if gpu_text else why,
        )
    if gpu_text is None:
        return None, gpu_text, gpu_src
    try:
        base = system_for_gpu(gpu_text, nodes=1, per_node_seen=per_node)
        if hw.gpu is not None and normalize(hw.gpu) != normalize(gpu_part(hw.gpu).name):
            gpu_src = f"user override (--gpu), taken as the {gpu_part(hw.gpu).name}"
        return base, gpu_text, gpu_src
    except UsageError as e:
        if hw.gpu is None:
            raise
        raise type(e)(f"--gpu {hw.gpu}: {e}") from None  # an AmbiguousGPU stays one


def _same_gpu(flag: str, logged: str | None, where: str) -> None:
    """--gpu against the GPU the log's own lines name: two parts of different families is an error naming both
    (a log of H100s judged as B200s would be a verdict on hardware it never ran on); the same family with another
    memory or form (a bare 'H100' for 'H100 80GB HBM3') is taken as the flag says."""
    if not logged or not where.startswith("from GPU model in device lines"):
        return
    try:
        theirs, ours = find_gpu(logged), gpu_part(flag)
    except UsageError:
        return
    if theirs is not None and theirs.family != ours.family:
        raise UsageError(
            f"--gpu {flag} ({ours.name}) contradicts the log's device lines ({logged}: {theirs.name}): "
            "drop --gpu to judge the log on its own GPUs, or give the log of the GPUs you mean"
        )


def _nodes(
    base: System | None, nodes: int | None, nodes_src: str, ranks: int | None, hw: HardwareSpec, from_log: bool
) -> tuple[int, str]:
    fabric_flag = hw.fabric
    per_default = base.gpus_per_node if base is not None else (ranks or 1)
    if (
        base is not None
        and base.nvlink_domain
        and ranks
        and nodes
        and nodes > 1
        and ranks <= base.nvlink_domain
        and fabric_flag not in (None, "nvl72")
    ):
        # ranks that fit one NVLink domain, yet --fabric names a network: the trays sit in separate domains
        # (e.g. two node pools of a rack-scale cloud instance), so each node's GPUs reach the others over it
        return nodes, f"{nodes_src}; --fabric {fabric_flag}: each node's trays in an NVLink domain of their own"
    if base is not None and base.nvlink_domain and ranks:
        # the trays of a rack-scale system share NVSwitch: the model's "node" is one NVLink domain, as --nodes counts
        if hw.nodes is not None:
            if -(-ranks // hw.nodes) > base.nvlink_domain:
                raise UsageError(
                    f"--nodes {hw.nodes} puts {-(-ranks // hw.nodes)} GPUs in an NVLink domain of {base.name}, "
                    f"which holds {base.nvlink_domain}: give --nodes {-(-ranks // base.nvlink_domain)} or more"
                )
            return hw.nodes, f"user override (--nodes: {base.name}'s NVLink domains)"
        k = -(-ranks // base.nvlink_domain)
        while ranks % k:
            k += 1
        return k, (
            f"{ranks} GPUs on {k} NVLink domain(s) of up to {base.nvlink_domain} ({base.name}: the trays of "
            "a rack share NVSwitch" + ("; the fewest that hold them: --nodes N sets the count)" if k > 1 else ")")
        )
    one_node = "assumed: one node (the log does not say)" if from_log else "assumed: one node (--nodes not given)"
    # the system the user named: --cluster, or (one number, no --nodes) --gpu's catalogue system
    named = hw.cluster is not None or (not from_log and hw.gpu is not None and nodes is None)
    if named and ranks and base is not None:
        if hw.cluster is None and not base.nvlink_links and base.board in ("pcie", "") and ranks <= PCIE_BOX_GPUS:
            # --gpu names a PCIe card, whose catalogue template's GPUs per node is no fact about the user's box
            # (a pcie-2080ti template of 2): one measured number on a few of them is one machine unless --nodes says
            return 1, f"assumed: one node (--nodes not given; a PCIe box holds up to {PCIE_BOX_GPUS} GPUs)"
        # its nodes hold its GPUs per node, no more (model/hardware/nodes.py, as predict checks)
        said = f"--nodes {nodes}" if hw.nodes is not None else f"{nodes} node(s) ({nodes_src})" if nodes else None
        count = nodes_for(
            ranks,
            nodes,
            base.gpus_per_node,
            system=f"--cluster {hw.cluster}" if hw.cluster else f"--gpu {hw.gpu}'s {base.name}",
            ranks_said=f"the log's {ranks} ranks" if from_log else None,
            nodes_said=said,
        )
        if nodes is None:
            return count, (
                f"ranks {ranks} / {base.gpus_per_node} GPUs per node of {base.name} (assumed)"
                if count > 1
                else one_node
            )
    if nodes is None and ranks:
        if ranks > per_default and ranks % per_default == 0:
            return ranks // per_default, (
                f"ranks {ranks} / {per_default} GPUs per node of {base.name if base else 'the profile'} (assumed)"
            )
        return 1, one_node
    return nodes or 1, nodes_src or "assumed: one node"


def assume(table: Table | Hints | None = None, hw: HardwareSpec | None = None, ranks: int | None = None) -> Assumed:
    """The system a log (`table`: a Table, or Hints from another input) or a bare measurement (`ranks`) is judged
    on, with provenance."""
    hw = hw or HardwareSpec()
    notes: list[str] = []
    ranks = ranks or (table.ranks if table is not None else None)
    text, comments = log_text_hints(table) if table is not None else ("", [])
    facts = copy.deepcopy(_facts(text)) if text else LogFacts()
    if table is not None and "nccl_version" not in facts and (version := _nccl_version(table, text)):
        facts.set("nccl_version", version, "the nccl-tests header")
    gpu_log, gpu_src, nodes, nodes_src, c_per = _log_gpu_nodes(table, hw, comments)
    if hw.cluster is None and hw.gpu is None and gpu_log is None and hw.profile is None and "instance" not in facts:
        why = (
            "the log names no GPU (no device lines)" if table is not None else "no system given"
        ) + ": pass --cluster SYSTEM (or --gpu MODEL) to get NCCL's expected time and the hardware bound"
        return Assumed(None, [], notes, why)
    if hw.cluster is None and hw.gpu is None and hw.profile is None and gpu_log and _cpu(gpu_log):
        return Assumed(
            None,
            [],
            notes,
            "a CPU run (the log's devices are 'cpu'): NCCL's model and the GPU "
            "catalogue do not apply; give --peak BUSBW (e.g. the link's rate) for a "
            "bound, or --profile FILE (collperf calibrate -o FILE) for the expected time",
        )
    if hw.gpu is not None and hw.cluster is None:
        _same_gpu(hw.gpu, gpu_log, gpu_src)
    try:
        # the GPUs per node a log or a measurement shows picks between boards of one part (a GH200 alone or four to
        # a node, a bridged pair of NVL cards): ranks over nodes, else a comment's count, else the ranks of one box
        hint = (
            ranks // nodes
            if ranks and nodes and ranks % nodes == 0
            else c_per or (ranks if ranks and ranks <= PCIE_BOX_GPUS else None)
        )
        base, gpu_text, gpu_src = _base(hw, gpu_log, gpu_src, facts, notes, hint)
    except AmbiguousGPU:
        raise  # the name matches two parts: the error says which, and what settles it
    except UsageError:
        if hw.profile is None:
            gpu_said = f"--gpu {hw.gpu!r}" if hw.gpu else f"GPU model {gpu_log!r}"
            return Assumed(
                None,
                [],
                notes,
                f"{gpu_said} is not in the parts table: pass --gpu MODEL (collperf "
                "systems --gpus lists the GPUs) or --cluster SYSTEM for NCCL's expected "
                "time, or --peak BUSBW / --profile FILE for a bound",
            )
        base, gpu_text = None, gpu_log
    nodes, nodes_src = _nodes(base, nodes, nodes_src, ranks, hw, table is not None)
    if ranks and ranks % nodes:
        said = f"the log's {ranks} ranks" if table is not None else f"--ranks {ranks}"
        where = f"--nodes {nodes}" if hw.nodes is not None else f"{nodes} nodes ({nodes_src})"
        raise UsageError(f"{said} cannot be split evenly over {where}: set --nodes to a divisor of {ranks}")
    per_node = ranks // nodes if ranks else (c_per or (base.gpus_per_node if base else 1))
    base = base or get_system("pcie-p2p")  # a profile on a log that names no GPU: PCIe GPUs, P2P
    fabric = hw.fabric or (facts.get("fabric") if nodes > 1 else None)
    if hw.cluster is None and "instance" not in facts and fabric:
        why = "user override (--fabric)" if hw.fabric else f"from the log line '{facts.line('fabric')}'"
        network = fabric
        if fabric == "roce" and facts.get("plugin") == "gib":
            network, why = "gib", f"from the log line '{facts.line('plugin')}' (Google's gIB plugin)"
        base = _cloud_base(base, network, why, per_node)
    system = base.with_(nodes_src, nodes=nodes).with_(
        "from the ranks in the log / nodes" if table is not None and ranks else "from --ranks / nodes",
        gpus_per_node=per_node,
    )
    if nics_used(base.nics_per_node, base.gpus_per_node, per_node) != base.nics_per_node:
        # a run on some of a node's GPUs uses their NICs (one rail per GPU), not the whole node's
        system = system.with_(
            f"{base.nics_per_node} NICs of {base.name} scaled to the {per_node} GPU(s) per node used",
            nics_per_node=nics_used(base.nics_per_node, base.gpus_per_node, per_node),
        )
    if hw.cluster is None and gpu_text and "instance" not in facts:
        system = system.with_(gpu_src, gpu=gpu_text)
    ngpus = int((table.header if table is not None else {}).get("ngpus", 1) or 1)
    catalogue = system
    system = apply_facts(system, facts, ngpus)
    system = transport_settings(system)
    system = from_comments(system, comments, facts)
    if hw.profile is not None:
        system = from_profile(system, hw.profile)
    system = apply_overrides(system, hw)
    notes += unused_on_one_node(system, hw) + hw.questioned()
    check, settings = suspects(facts, system, catalogue)
    return Assumed(system, shown_values(system), notes, suspects=check, settings=settings)


def _cpu(device: str) -> bool:
    """A device line of a CPU run (collperf bench on gloo prints 'cpu')."""
    return device.strip().lower() in ("cpu", "cpu (gloo)")
