"""From the corpus of public runs (collperf/data/corpus: <id>.txt logs and index.csv) to the calibration
table and the peers (the data file diagnose reads), and the leave-one-source-out check of both.

Each corpus log is judged on the hardware its source states (the index's system, nodes, fabric and NICs,
as a user would give them with --cluster/--nodes/--fabric/--nics-per-node/--nic-rate), so the ratio
measured / NCCL's model time is about the fabric, not about a guess of the hardware.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from collperf.collectives import get_collective
from collperf.diagnose.band_rule import beyond_band
from collperf.diagnose.core import diagnose
from collperf.expect.expectation import expectation
from collperf.expect.resolve import assume
from collperf.diagnose.verdict import Kind
from collperf.errors import UsageError
from collperf.fit import usable
from collperf.ingest import load
from collperf.expect.band import Sample
from collperf.expect.band_fit import fit_bands
from collperf.model.hardware.catalogue import NETWORK_FABRICS, get_system, gpu_family, resolve_name
from collperf.spec import HardwareSpec

MIB = 1 << 20


@dataclass
class CorpusLog:
    id: str
    row: dict
    table: object
    hardware: HardwareSpec
    system: object = None
    sizes: np.ndarray = field(default_factory=lambda: np.zeros(0))
    times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    busbw: np.ndarray = field(default_factory=lambda: np.zeros(0))
    model_s: np.ndarray = field(default_factory=lambda: np.zeros(0))
    bound_s: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def healthy(self) -> bool:
        return self.row.get("health", "").strip() == "healthy"

    @property
    def source(self) -> str:
        return self.row.get("source_group") or self.row.get("source_url") or self.id

    def sample(self) -> Sample:
        return Sample(
            self.id,
            self.source,
            self.system.fabric_class,
            self.sizes,
            self.times,
            self.model_s,
            self.bound_s,
            self.system.gpus_per_node,
            self.table.collective,
        )


def read_index(corpus: Path) -> list[dict]:
    with open(Path(corpus) / "index.csv", newline="") as f:
        return [dict(r) for r in csv.DictReader(f)]


def hardware_for(row: dict) -> HardwareSpec:
    """The hardware the source states, as diagnose's options."""
    values: dict = {}
    try:
        values["cluster"] = resolve_name(row.get("system", ""))
    except UsageError:
        if row.get("gpu"):
            values["gpu"] = row["gpu"]
    if row.get("nodes", "").isdigit():
        values["nodes"] = int(row["nodes"])
    fabric = row.get("fabric", "").strip()
    if fabric in NETWORK_FABRICS and fabric != "nvl72" and values.get("nodes", 1) > 1:
        values["fabric"] = fabric
    m = re.match(r"(\d+)x(\d+(?:\.\d+)?)G", row.get("nic", ""))
    if m and values.get("nodes", 1) > 1:
        nics, used = int(m.group(1)), int(row["gpus_per_node"]) if row.get("gpus_per_node", "").isdigit() else 0
        whole = get_system(values["cluster"]).gpus_per_node if "cluster" in values else 8
        if used and nics >= whole > used:  # the node's NICs, one rail per GPU: a run on fewer GPUs uses theirs
            nics = max(1, nics * used // whole)
        values["nics_per_node"], values["nic_rate"] = nics, f"{m.group(2)}Gbps"
    return HardwareSpec(**values)


def _tables(path: Path, row: dict) -> list:
    wanted = (
        {get_collective(c).name for c in re.split(r"[;| ]+", row.get("collectives", "")) if c.strip()}
        if row.get("collectives")
        else set()
    )
    # a log that names one collective in the index is read as that one (some logs print no test name)
    tables = load(path, next(iter(wanted))) if len(wanted) == 1 else load(path)
    tables = [t for t in tables if t.collective and (not wanted or t.collective in wanted)]
    ranks = int(row["ranks"]) if row.get("ranks", "").isdigit() else None
    for t in tables:
        if ranks and t.ranks != ranks:  # the index is read from the source; a paste without device lines
            t.ranks = ranks  # gets its rank count inferred from busbw / algbw, less exactly
    return tables


def read_corpus(corpus: Path) -> list[CorpusLog]:
    """Every (log, table) of the corpus with its system and NCCL's model time per size."""
    logs = []
    for row in read_index(corpus):
        path = Path(corpus) / f"{row['id']}.txt"
        for k, table in enumerate(_tables(path, row)):
            log = CorpusLog(row["id"] if k == 0 else f"{row['id']}#{k}", row, table, hardware_for(row))
            if _model(log):
                logs.append(log)
    return logs


def _model(log: CorpusLog) -> bool:
    try:
        assumed = assume(log.table, log.hardware)
    except UsageError:
        return False
    rows = sorted(
        (r for r in log.table.placement("out-of-place") or log.table.placement("in-place") if usable(r)),
        key=lambda r: r.size,
    )
    if assumed.system is None or assumed.system.ranks < 2 or len(rows) < 3:
        return False
    try:
        ex = expectation(log.table.collective, [r.size for r in rows], assumed, bands={})
    except UsageError:  # a collective NCCL's model does not price (gather, scatter)
        return False
    if ex.model_s is None:
        return False
    log.system = assumed.system
    log.sizes = np.array([r.size for r in rows], dtype=float)
    log.times = np.array([r.time_s for r in rows], dtype=float)
    log.busbw = np.array([r.busbw_GBps or np.nan for r in rows], dtype=float)
    log.model_s, log.bound_s = ex.model_s, ex.band_bound_s  # the bound the band is built on (expectation.py)
    return True


def peer_record(log: CorpusLog) -> dict:
    big = log.sizes >= MIB
    return {
        "id": log.id,
        "source_url": log.row.get("source_url", ""),
        "system": log.row.get("system", ""),
        "nic": log.row.get("nic", ""),
        "collective": log.table.collective,
        "family": gpu_family(log.system),
        "gpu": log.system.gpu,
        "fabric": log.system.fabric_class,
        "nodes": log.system.nodes,
        "gpus_per_node": log.system.gpus_per_node,
        "busbw": [[int(s), round(float(b), 3)] for s, b in zip(log.sizes[big], log.busbw[big]) if np.isfinite(b)],
    }


def build(logs: list[CorpusLog]) -> dict:
    """The data file's content: the bands fitted on every healthy log, and the healthy logs as peers."""
    healthy = [log for log in logs if log.healthy]
    return {
        "generated_by": "benchmarks/calibrate_corpus.py",
        "logs": len(healthy),
        "sources": len({log.source for log in healthy}),
        "bands": fit_bands([log.sample() for log in healthy]),
        "peers": [peer_record(log) for log in healthy],
    }


def log_error(log: CorpusLog, d) -> float | None:
    """Median |measured - typical| / measured over rows >= 1 MiB (None where no row is that large)."""
    errs = [abs(v.time_s - v.expected_s) / v.time_s for v in d.sizes if v.size_bytes >= MIB and v.expected_s]
    return float(np.median(errs)) if errs else None


def cross_validate(logs: list[CorpusLog]) -> list[dict]:
    """Leave one source out: fit on every other source's healthy logs, judge this source's logs (healthy and
    known-bad) with that fit. One result per log: error of the typical time, verdict, fabric, health."""
    out = []
    for source in sorted({log.source for log in logs}):
        rest = [log for log in logs if log.source != source and log.healthy]
        bands = fit_bands([log.sample() for log in rest])
        peers = [peer_record(log) for log in rest]
        for log in (x for x in logs if x.source == source):
            try:
                d = diagnose(log.table, hardware=log.hardware, bands=bands, peer_runs=peers)
            except UsageError:  # too few rows for diagnose's own fit: nothing to judge
                continue
            raw = [abs(t - m) / t for t, m, n in zip(log.times, log.model_s, log.sizes) if n >= MIB]
            out.append(
                {
                    "id": log.id,
                    "source": source,
                    "fabric": log.system.fabric_class,
                    "healthy": log.healthy,
                    "error": log_error(log, d),
                    "model_error": float(np.median(raw)) if raw else None,
                    "verdict": d.verdict.text,
                    "flagged": _flagged(d),
                    "beyond": _beyond(d),
                    "band_rows": band_rows(d),
                }
            )
    return out


def band_rows(d) -> dict:
    """How the log's rows >= 1 MiB that have a band fall against it, as the per-size verdicts say: inside,
    faster than its fast edge, slower than its slow edge. Over held-out healthy logs this is the band's coverage:
    a 10th-90th percentile band that is honest holds about 80 % of them."""
    counts = {"inside": 0, "faster": 0, "slower": 0}
    for v in d.sizes:
        if v.size_bytes < MIB or not v.expected_high_s:
            continue
        key = {Kind.SLOWER: "slower", Kind.FASTER_THAN_TYPICAL: "faster", Kind.AS_EXPECTED: "inside"}.get(
            v.verdict.kind
        )
        if key:
            counts[key] += 1
    return counts


def _flagged(d) -> bool:
    """A known-bad log is caught when the verdict is slower, or a dip/drop/error finding names sizes."""
    return (
        d.verdict.kind.slower
        or d.verdict.kind is Kind.ERROR
        or any(f.kind in ("dip", "tail-drop", "slower-overall", "correctness") for f in d.findings)
    )


def _beyond(d) -> float | None:
    """How far beyond the band's slow edge the bandwidth-bound sizes are, as the overall verdict measures it
    (> 1: slower than the band)."""
    big = [v for v in d.sizes if v.expected_high_s and v.regime != "latency"] or [
        v for v in d.sizes if v.expected_high_s
    ]
    return beyond_band(big) if big else None
