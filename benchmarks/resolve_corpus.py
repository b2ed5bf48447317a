"""How well the hardware resolver (expect/resolve.py `assume`) reads a log's hardware from the log alone,
measured on the corpus of public runs (src/collperf/data/corpus: <id>.txt and index.csv, the curated hardware).

Per log: the person-written lines are stripped (below), the rest is parsed from memory (`ingest.parse(text, id)`,
no collective, no rank count) and resolved with no flags (`assume(table)`, the first table of the log); the
resolved system is compared with the index on five fields:

  GPU            the index's gpu string and the resolved GPU resolve to the same part of the parts table
                 (`model.hardware.names.find_gpu`), or, where either is not one part (e.g. the index's bare
                 "A100", which is ambiguous between SXM and PCIe), to the same catalogue family (`gpu_family`:
                 dgx-a100 for any A100). A different memory size of one part is the same part.
  GPUs per node  index gpus_per_node vs system.gpus_per_node
  nodes          index nodes vs system.nodes. GB200/GB300: the model's node is an NVLink domain (one rack's 72
                 GPUs), the index counts 4-GPU trays; either count matches (nodes and GPUs per node), and both
                 are taken as shown only where the fabric is (whether the trays share a domain)
  fabric         index fabric vs system.fabric_class
  NICs per node  the index nic field's count ("8x400G-ib" -> 8) vs system.nics_per_node

Each field is compared only where the log itself shows it; otherwise it is "not in the log" (a correct
"not known", counted apart and not a mismatch; the resolver's guess is still printed). What "shows" means, read
here from the stripped text independently of the resolver:

  GPU            the device lines name a GPU model, or a host name names a cloud instance type
  GPUs per node, nodes
                 the device lines give the hosts (every rank's line, none elided), or an NCCL INFO line gives
                 nNodes
  fabric         one node: the GPU is shown (the node's links follow from it; pcie-p2p against pcie-host
                 only where a 'via P2P/' or 'via SHM/' line shows which: the driver decides); several nodes:
                 an NCCL INFO line names the network (NET/IB, NET/OFI, NET/Socket, gIB, TCPX/FasTrak, 'Using
                 network ...'); a rack-scale NVLink run (index fabric nvl72): the GPU is shown
  NICs per node  several nodes, and an NCCL INFO line lists the NICs ('NET/IB : Using [0]mlx5_0:1/IB ...') or
                 counts them ('found 4 nics')

What is stripped: every line starting with '#' that is not one of the lines nccl-tests or rccl-tests print
themselves (`TOOL_COMMENTS`: the nThread header, '# Using devices', the device lines, the column header, '# Out
of bounds', '# Avg bus bandwidth', '# Errors with asterisks ...', '# Collective test starting/concluded', '# nccl-tests
version', '# Reducing maxBytes', rccl-tests' '# Testing N cycle(s)', a bare '#'). That removes the corpus's
'# source:' and '# hardware:' lines and the comments of the scripts the authors pasted ('# Two nodes', '# Build
rccl-tests'). Lines not starting with '#' (shell commands, mpirun lines, NCCL INFO lines, rccl-tests' 'RCCL
version' block) are the published log and are kept. The same run with the '# hardware:' line kept (only '#
source:' stripped) is printed for contrast, on the same fields: the resolver reads a GPU and node count from a
comment when the device lines name none. A launcher's prefix ('[1,0]<stdout>:', '0: ') is looked through.

    PYTHONPATH=src python benchmarks/resolve_corpus.py [--quiet]
"""

from __future__ import annotations

import csv
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from collperf.diagnose import assume
from collperf.expect.loglines import read_facts
from collperf.errors import UsageError
from collperf.ingest import parse
from collperf.model.hardware.names import find_gpu
from collperf.model.hardware.catalogue import _GPU_PATTERNS

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "src" / "collperf" / "data" / "corpus"
FIELDS = ("gpu", "gpus_per_node", "nodes", "fabric", "nics")
LABELS = {"gpu": "GPU", "gpus_per_node": "GPUs per node", "nodes": "nodes", "fabric": "fabric", "nics": "NICs per node"}
NOT_SHOWN = "not in the log"

# the comment lines nccl-tests (common.cu) and rccl-tests print themselves
TOOL_COMMENTS = re.compile(
    r"#\s*$"
    r"|#\s*nThread\s"
    r"|#\s*Using devices"
    r"|#\s*Rank\s+\d"
    r"|#\s*out-of-place\b"
    r"|#\s*size\s+count\b"
    r"|#\s*\(B\)"
    r"|#\s*Out of bounds values"
    r"|#\s*Avg bus bandwidth"
    r"|#\s*Errors with asterisks"
    r"|#\s*Collective test (?:starting|concluded)"
    r"|#\s*nccl-tests version"
    r"|#\s*Reducing maxBytes"
    r"|#\s*Testing \d+ cycles?\."
)

# NCCL INFO lines that name the network / list or count the NICs / give the node count
_NETWORK = re.compile(r"NET/(?:IB|OFI|Socket|gIB|GPUDirectTCPX|FasTrak)|Using network \w|NET/Plugin")
_NIC_LIST = re.compile(r"NET/(?:IB|Socket|GPUDirectTCPX|FasTrak|gIB)\w*\s*:\s*Using\s*\[\d|found \d+ nics\b")
_NNODES = re.compile(r"\bnNodes \d+")
_P2P_LINE = re.compile(r"via (?:P2P|SHM)/")
RACK_SCALE = ("gb200-nvl72", "gb300-nvl72")


_PREFIX = re.compile(r"^(?:\[\d+,\d+\]<std\w+>:|\d+:\s)")  # mpirun --tag-output, srun --label


def strip(text: str, keep_hardware: bool = False) -> tuple[str, list[str]]:
    """(the log without person-written comment lines, the lines removed)."""
    kept, removed = [], []
    for ln in text.splitlines():
        s = _PREFIX.sub("", ln.lstrip()).lstrip()
        if (
            s.startswith("#")
            and not TOOL_COMMENTS.match(s)
            and not (keep_hardware and re.match(r"#\s*hardware\s*:", s))
        ):
            removed.append(ln)
        else:
            kept.append(ln)
    return "\n".join(kept) + "\n", removed


def read_index() -> list[dict]:
    with open(CORPUS / "index.csv", newline="") as f:
        return list(csv.DictReader(f))


def _family(text: str) -> str | None:
    for pattern, key, _ in _GPU_PATTERNS:
        if re.search(pattern, text or "", re.IGNORECASE):
            return key
    return None


def _part(text: str):
    try:
        return find_gpu(text)
    except UsageError:  # a name two parts match equally: no one part
        return None


def _base_part(name: str) -> str:
    """A part's name without its memory size ('A100-SXM4-80GB' and 'A100-SXM4-40GB' are one part here)."""
    return re.sub(r"[\s-]*\d+\s*GB\b.*$", "", name, flags=re.IGNORECASE).strip()


def gpu_match(curated: str, resolved_gpu: str, resolved_part: str) -> bool:
    a = _part(curated)
    b = _part(resolved_part) if resolved_part else _part(resolved_gpu)
    b = b or _part(resolved_gpu)
    if a is not None and b is not None:
        return _base_part(a.name) == _base_part(b.name)
    fa, fb = _family(curated), _family(resolved_gpu) or _family(resolved_part)
    return fa is not None and fa == fb


@dataclass
class Field:
    curated: str
    resolved: str
    shown: bool
    status: str = ""  # match, MISMATCH, not in the log


@dataclass
class Result:
    id: str
    fields: dict[str, Field] = field(default_factory=dict)
    why_none: str = ""
    error: str = ""
    no_system: bool = False  # assume gave no system (no GPU named): every field it could have said is lost
    removed: list[str] = field(default_factory=list)

    @property
    def all_match(self) -> bool:
        return not self.error and all(f.status != "MISMATCH" for f in self.fields.values())


def shown(table, text: str) -> dict[str, bool]:
    """Which fields the (stripped) log shows, read from its lines, not from the resolver's answer."""
    info = [ln for ln in text.splitlines() if "INFO" in ln]
    devices = bool(table.nodes) and not table.header.get("devices_elided")
    gpu_named = bool(table.header.get("gpus")) and any(_part(g) or _family(g) for g in table.header["gpus"])
    gpu = gpu_named or "instance" in read_facts(text)
    placement = devices or any(_NNODES.search(ln) for ln in info)
    return {
        "gpu": gpu,
        "gpus_per_node": placement,
        "nodes": placement,
        "network": any(_NETWORK.search(ln) for ln in info),
        "p2p": any(_P2P_LINE.search(ln) for ln in info),
        "nics": any(_NIC_LIST.search(ln) for ln in info),
    }


def _domains(ranks: int, domain: int = 72) -> tuple[int, int]:
    """(NVLink domains, GPUs in each) as the resolver splits a rack-scale run (expect/resolve.py _nodes)."""
    k = -(-ranks // domain)
    while ranks % k:
        k += 1
    return k, ranks // k


def resolve(row: dict, keep_hardware: bool = False) -> Result:
    raw = (CORPUS / f"{row['id']}.txt").read_text()
    text, removed = strip(raw, keep_hardware)
    res = Result(row["id"], removed=removed)
    try:
        table = parse(text, row["id"])[0]
        assumed = assume(table)
    except UsageError as e:
        res.error = f"{type(e).__name__}: {e}"
        return res
    s = assumed.system
    res.why_none = assumed.why_none
    res.no_system = s is None
    # what the log shows is read from the fully stripped text in both runs (the same fields are compared)
    bare = strip(raw)[0] if keep_hardware else text
    show = shown(parse(bare, row["id"])[0], bare)
    nodes, per, ranks = int(row["nodes"]), int(row["gpus_per_node"]), int(row["ranks"])
    m = re.match(r"(\d+)x", row["nic"])
    curated = {
        "gpu": row["gpu"],
        "gpus_per_node": str(per),
        "nodes": str(nodes),
        "fabric": row["fabric"],
        "nics": m.group(1) if m else "",
    }
    resolved = {
        "gpu": s.gpu if s else "-",
        "gpus_per_node": str(s.gpus_per_node) if s else "-",
        "nodes": str(s.nodes) if s else "-",
        "fabric": s.fabric_class if s else "-",
        "nics": str(s.nics_per_node) if s and s.nodes > 1 else "-",
    }
    rack = _family(row["gpu"]) in RACK_SCALE
    if nodes == 1 or row["fabric"] == "nvl72":
        fabric_shown = show["gpu"]  # the node's (the rack's) links follow from the GPU
    else:
        fabric_shown = show["network"]
    is_shown = {
        "gpu": show["gpu"],
        "gpus_per_node": show["gpus_per_node"],
        "nodes": show["nodes"],
        "fabric": fabric_shown,
        "nics": nodes > 1 and row["fabric"] != "nvl72" and show["nics"],
    }
    if rack:
        # GB200/GB300: the model's node is an NVLink domain, the index counts 4-GPU trays; whether the trays
        # share a domain is what the fabric says, so the placement is shown only where the fabric is
        is_shown["nodes"] = is_shown["gpus_per_node"] = is_shown["nodes"] and fabric_shown
    for name in FIELDS:
        if name == "nics" and not curated["nics"]:
            continue  # one node or one NVLink rack: no NIC to count
        note = ""
        if name == "gpu":
            ok = s is not None and gpu_match(curated["gpu"], s.gpu, getattr(s, "gpu_part", ""))
        elif rack and name in ("nodes", "gpus_per_node") and s is not None:
            # either convention: trays as the index counts them, or NVLink domains as the model does - the latter
            # where the trays share domains: one rack (index fabric nvl72) or racks joined by the network; on a
            # network fabric within one rack's size the trays sit in domains of their own (e.g. GCP A4X Max pods)
            k, per_domain = _domains(ranks, s.nvlink_domain or 72)
            domains = {"nodes": str(k), "gpus_per_node": str(per_domain)}
            ok = resolved[name] == curated[name] or (
                resolved[name] == domains[name] and (row["fabric"] == "nvl72" or k > 1)
            )
            note = " (as NVLink domains)" if ok and resolved[name] != curated[name] else ""
        else:
            ok = curated[name] == resolved[name]
        f = Field(curated[name], resolved[name], is_shown[name])
        if (
            name == "fabric"
            and not ok
            and f.shown
            and not show["p2p"]
            and {curated[name], resolved[name]} == {"pcie-p2p", "pcie-host"}
        ):
            # the GPU shows PCIe; whether P2P works (driver, BIOS, ACS) only a 'via P2P/SHM' line shows
            f.shown, f.status = False, NOT_SHOWN + " (P2P or not: no 'via P2P/SHM' line)"
        elif f.shown:
            f.status = ("match" + note) if ok else "MISMATCH"
        else:
            f.status = NOT_SHOWN + (" (guess agrees)" if ok else "")
        res.fields[name] = f
    return res


def shares(results: list[Result]) -> tuple[float, dict[str, tuple[int, int, int]]]:
    """(share of logs whose every shown field matches, per field (matches, shown, not in the log))."""
    overall = sum(r.all_match for r in results) / len(results)
    per = {}
    for name in FIELDS:
        fs = [r.fields[name] for r in results if name in r.fields]
        on = [f for f in fs if f.shown]
        per[name] = (sum(f.status.startswith("match") for f in on), len(on), len(fs) - len(on))
    return overall, per


def run(keep_hardware: bool = False) -> list[Result]:
    return [resolve(row, keep_hardware) for row in read_index()]


# why each mismatch of the stripped run happens, read from the log and the resolver (printed with the mismatch);
# "unexplained" where it could not be told. Keyed "id:field".
_NO_SYSTEM = (
    "the log names no GPU (no device lines), so no GPU can be known - but assume() then returns no "
    "system at all, and the {what} the log does show is lost with it"
)
CAUSES: dict[str, str] = {
    "b200-nvswitch-1x2-allgather-gh-dranet-nvidia:fabric": "the catalogue's NVLS for B200 kept on a 2-GPU run; NCCL turns NVLS off when the communicator has <= 2 "
    "GPUs (src/transport/nvls.cc ncclNvlsInit: gpuCount <= 2), and the log has no NVLS line",
    "mi355x-roce-2x8-allreduce-gh-hisohara-aac14:gpus_per_node": "the device lines name no GPU (rccl-tests printed the bus id only); the parser keeps '' as the GPU model and "
    "assume() answers \"GPU model '' is not in the parts table\" with no system, losing the 2 hosts x 8 ranks the "
    "device lines show",
    "mi355x-roce-2x8-allreduce-gh-hisohara-aac14:nodes": "as for GPUs per node",
    "a100pcie-ib-2x1-gather-gh-nccl-tests-350:fabric": "'NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_2:1/IB': one RoCE and one IB port; the channels run 'via "
    "NET/IB/1' (the IB port; NET/0 sits across the CPUs at 3.1 GB/s). loglines._nics calls the fabric roce "
    "when any listed port is /RoCE",
    "a100pcie-ib-2x1-gather-gh-nccl-tests-350:nics": "loglines._nics counts every port 'NET/IB : Using' lists (2), not those the channels use (NET/IB/1 only)",
    "t4-socket-2x1-allreduce-gh-aws-do-eks:fabric": _NO_SYSTEM.format(what="network ('Using network Socket')"),
    "t4-efa-2x1-allreduce-gh-aws-do-eks:fabric": _NO_SYSTEM.format(what="network ('NET/OFI Selected Provider is efa')"),
}
# the hardware line kept: assume() fails on some logs (expect/resolve.py _gpu_from_comments)
COMMENT_NODES = (
    r"the node count read from a comment with (\d+)\s*nodes?\b takes the digits of a model name before "
    "'node(s)' ('A100 nodes' -> 100, 'A4 node' -> 4, 'A3 node' -> 3), which the ranks cannot be "
    "split over"
)
# mismatches whose cause is "assume() gives no system without a GPU": a correct "not known" of the GPU that takes
# the fields the log shows with it (counted apart in the second figure)
LOST_WITH_GPU = {
    "mi355x-roce-2x8-allreduce-gh-hisohara-aac14",
    "t4-socket-2x1-allreduce-gh-aws-do-eks",
    "t4-efa-2x1-allreduce-gh-aws-do-eks",
}


def cause(r: Result, name: str) -> str:
    return CAUSES.get(f"{r.id}:{name}") or ("no system resolved: " + r.why_none if r.no_system else "unexplained")


def report(results: list[Result], title: str, quiet: bool) -> None:
    print(f"\n=== {title} ===")
    if not quiet:
        print("field: curated / resolved / match")
        for r in results:
            print(f"\n{r.id}" + ("" if r.all_match else "   <-- mismatch"))
            if r.error:
                print(f"  read error: {r.error}")
                continue
            for name, f in r.fields.items():
                print(f"  {LABELS[name]:<14} {f.curated:<24} / {f.resolved:<28} {f.status}")
    overall, per = shares(results)
    n = len(results)
    print(
        f"\n{title}: {sum(r.all_match for r in results)} of {n} logs ({100 * overall:.1f} %) match on every field "
        "the log shows (target: 95 %)"
    )
    lost = [
        r
        for r in results
        if not r.all_match
        and r.id in LOST_WITH_GPU
        and all(f.status != "MISMATCH" or f.resolved == "-" for f in r.fields.values())
    ]
    print(
        f"  counting the fields lost only because no GPU is named (assume gives no system) as not known: "
        f"{sum(r.all_match for r in results) + len(lost)} of {n} "
        f"({100 * (sum(r.all_match for r in results) + len(lost)) / n:.1f} %)"
    )
    for name, (ok, on, off) in per.items():
        share = f"{100 * ok / on:.1f} %" if on else "-"
        print(f"  {LABELS[name]:<14} {ok:>3} of {on:>3} shown match ({share}); {off} not in the log")
    guessed = [(r, name, f) for r in results for name, f in r.fields.items() if f.status.startswith(NOT_SHOWN)]
    right = sum("agrees" in f.status for _, _, f in guessed)
    print(f"  fields not in the log: {len(guessed)}; the resolver's value agrees with the index on {right}")
    bad = [(r, name) for r in results for name, f in r.fields.items() if f.status == "MISMATCH"] + [
        (r, None) for r in results if r.error
    ]
    print(f"\nmismatches ({len(bad)}): field: curated / resolved: cause")
    for r, name in bad:
        if name is None:
            why = COMMENT_NODES if "from a comment line" in r.error else "unexplained"
            print(f"  {r.id}: not read: {r.error}\n    cause: {why}")
            continue
        f = r.fields[name]
        print(f"  {r.id}: {LABELS[name]}: {f.curated} / {f.resolved}: {cause(r, name)}")
    print(
        f"\n('{NOT_SHOWN}': the stripped log does not show the field - no device lines naming a GPU or every "
        "host, no NCCL INFO line naming the network or listing the NICs - so the resolver cannot know it; that is "
        "a correct 'not known', counted apart and not as a mismatch.)"
    )
    if not quiet:
        wrong = [(r, name, f) for r, name, f in guessed if "agrees" not in f.status and f.resolved != "-"]
        print(f"\nnot in the log, and the resolver's default differs from the index ({len(wrong)}; not counted):")
        for r, name, f in wrong:
            print(f"  {r.id}: {LABELS[name]}: {f.curated} / {f.resolved}")


def main(argv: list[str]) -> int:
    quiet = "--quiet" in argv
    stripped = run(keep_hardware=False)
    kept = run(keep_hardware=True)
    removed = sorted(
        {ln.strip()[:100] for r in stripped for ln in r.removed if not re.match(r"\s*#\s*(source|hardware)\s*:", ln)}
    )
    print("comment lines stripped besides '# source:' and '# hardware:' (not nccl-tests'/rccl-tests' output):")
    for ln in removed:
        print(f"  {ln}")
    report(stripped, "hardware line stripped", quiet)
    report(kept, "hardware line kept (for contrast; the same fields compared)", True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
