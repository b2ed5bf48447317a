"""`nvidia-smi topo -m`: the matrix of how each GPU reaches each other GPU and each NIC (NV# a bonded set of #
NVLinks; PIX, PXB, PHB, NODE, SYS through PCIe, nearest first), with its NIC legend ("NIC0: mlx5_0"). Read into the
same NodeTopology an NCCL topology dump gives (ingest/topo_xml.py); nvidia-smi's NODE (PCIe host bridges of one NUMA
node) is NCCL's PHB.

Layout (nvidia-smi's own legend, printed under the matrix): a header row of column names (GPU0 .. GPUn, NIC0 .., then
"CPU Affinity", "NUMA Affinity", "GPU NUMA ID"), one row per device starting with its name, "X" on the diagonal.
"""

from __future__ import annotations

import re

from collperf.ingest.table import IngestError
from collperf.ingest.topo_xml import NodeTopology, TopoDevice

_CELL = re.compile(r"^(X|NV\d{1,3}|PIX|PXB|PHB|NODE|SYS|SOC|C2C)$")
_LEGEND_NIC = re.compile(r"^\s*(NIC\d{1,4}|mlx\S*)\s*:\s*(\S+)")


def looks_like(text: str) -> bool:
    head = text[:20000]
    return bool(re.search(r"^\s*GPU0\s+GPU1|^\s*GPU0\s+(?:NIC0|CPU Affinity)", head, re.MULTILINE)) and bool(
        re.search(r"^\s*GPU0\s+X\b", head, re.MULTILINE)
    )


def parse(text: str, source: str = "<nvidia-smi topo -m>") -> NodeTopology:
    lines = [ln.rstrip() for ln in text.splitlines()]
    header_at = next(
        (i for i, ln in enumerate(lines) if re.match(r"^\s*GPU0\s", ln) and not re.match(r"^\s*GPU0\s+X\b", ln)), None
    )
    if header_at is None:
        raise IngestError(f"{source}: no header row (GPU0 GPU1 ... NIC0 ...): expected `nvidia-smi topo -m` output")
    columns = [c for c in lines[header_at].split() if re.match(r"^(GPU|NIC|mlx)\S*\d$", c)]
    rows: dict[str, list[str]] = {}
    for ln in lines[header_at + 1 :]:
        words = ln.split()
        if not words or words[0] not in columns:
            if rows and words and words[0].startswith("Legend"):
                break
            continue
        cells = words[1 : 1 + len(columns)]
        if len(cells) < len(columns) or not all(_CELL.match(c) for c in cells):
            raise IngestError(
                f"{source}: the row of {words[0]} has {cells[: len(columns)]}: expected one of X, NV#, "
                f"PIX, PXB, PHB, NODE, SYS for each of {len(columns)} columns"
            )
        rows[words[0]] = cells
    legend = dict(m.groups() for ln in lines if (m := _LEGEND_NIC.match(ln)) and m.group(1).startswith("NIC"))
    gpu_names = [c for c in columns if c.startswith("GPU")]
    nic_names = [c for c in columns if not c.startswith("GPU")]
    if not gpu_names or any(g not in rows for g in gpu_names):
        raise IngestError(
            f"{source}: the matrix lacks a row for {', '.join(g for g in gpu_names if g not in rows)}: "
            "give the whole `nvidia-smi topo -m` output"
        )
    paths, gpus, nics = {}, [], []
    for i, g in enumerate(gpu_names):
        cells = dict(zip(columns, rows[g]))
        nvlinks = {h: int(c[2:]) for h, c in cells.items() if c.startswith("NV")}
        for j, h in enumerate(gpu_names):
            if h != g:
                paths[(i, j)] = "NVL" if h in nvlinks else _nccl(cells[h])
        for n in nic_names:
            paths[(i, legend.get(n, n))] = _nccl(cells[n])
        gpus.append(
            TopoDevice(
                "gpu",
                i,
                g,
                0,
                (),
                nvlinks=sum(nvlinks.values()),
                nvlink_gpus={gpu_names.index(h): k for h, k in nvlinks.items()},
                line=f"{g} " + " ".join(rows[g]),
            )
        )
    for k, n in enumerate(nic_names):
        nics.append(TopoDevice("nic", k, legend.get(n, n), 0, (), line=f"{n}: {legend.get(n, '(no NIC legend)')}"))
    return NodeTopology(source, "nvidia-smi topo -m", tuple(gpus), tuple(nics), paths=paths)


def _nccl(cell: str) -> str:
    """nvidia-smi's word as NCCL's path type (NODE: NCCL's PHB; SOC: the old name of SYS)."""
    return {"NODE": "PHB", "SOC": "SYS"}.get(cell, cell)
