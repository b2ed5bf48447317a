"""nccl-tests JSON (-J), collperf's own bench JSON and CSV, OSU and Intel MPI Benchmarks output."""

from __future__ import annotations

import csv
import io
import re

from collperf.ingest.nccltests import _BINARY, _COLLECTIVE
from collperf.ingest.table import IngestError, Row, Table

# --- nccl-tests -J and collperf bench JSON ---------------------------------------------------------


def parse_json(doc: dict, source: str, collective: str | None = None) -> list[Table]:
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise IngestError(f"{source}: JSON without a 'results' list: expected nccl-tests -J output or collperf bench --json")
    if doc.get("version") == "collperf":
        return _collperf_json(doc, source)
    table = Table(source)
    config = doc.get("config", {})
    devices = config.get("devices", [])
    if devices:
        table.ranks = len({d.get("rank") for d in devices})
        table.nodes = len({d.get("hostname") for d in devices})
        table.header["hosts"] = sorted({str(d.get("hostname")) for d in devices})
        table.header["gpus"] = sorted({str(d.get("device_info", "")) for d in devices})
    table.header["nccl_tests_version"] = doc.get("version")
    table.header["nccl_version"] = doc.get("nccl_version")
    argv = " ".join(map(str, doc.get("args", [])))
    name = _BINARY.search(argv)
    table.collective = collective or (_COLLECTIVE[name.group(1)] if name else "")
    if not table.collective:
        raise IngestError(f"{source}: cannot tell the collective from the JSON's args; pass --collective")
    for i, r in enumerate(doc["results"]):
        for key, placement in (("out_of_place", "out-of-place"), ("in_place", "in-place")):
            m = r.get(key)
            if not m:
                continue
            try:
                time_us = float(m.get("time", m.get("cpu_time")))
                table.rows.append(Row(int(r["size"]), time_us * 1e-6, _f(m.get("alg_bw")), _f(m.get("bus_bw")),
                                      _wrong(m.get("nwrong")), placement, r.get("count"), str(r.get("type", "")),
                                      str(r.get("redop", "")), r.get("root"), i + 1))
            except (KeyError, TypeError, ValueError) as e:
                table.skipped.append(f"result {i + 1} {key}: unreadable ({e})")
    if not table.rows:
        raise IngestError(f"{source}: the JSON has no readable results")
    return [table]


def _collperf_json(doc: dict, source: str) -> list[Table]:
    tables: dict[str, Table] = {}
    for i, r in enumerate(doc["results"]):
        t = tables.setdefault(r["algorithm"], Table(f"{source} [{r['algorithm']}]", doc["collective"], doc["ranks"]))
        t.header["algorithm"] = r["algorithm"]
        for key, placement in (("out_of_place", "out-of-place"), ("in_place", "in-place")):
            m = r.get(key)
            if m:
                t.rows.append(Row(int(r["size"]), float(m["time"]) * 1e-6, m["alg_bw"], m["bus_bw"], m.get("nwrong"),
                                  placement, r.get("count"), r.get("type", ""), r.get("redop", ""), r.get("root"), i + 1))
    return list(tables.values())


def parse_collperf_csv(text: str, source: str, collective: str | None, ranks: int | None) -> list[Table]:
    tables: dict[str, Table] = {}
    for number, rec in enumerate(csv.DictReader(io.StringIO(text)), 2):
        try:
            t = tables.setdefault(rec["algorithm"], Table(f"{source} [{rec['algorithm']}]", collective or "", ranks))
            t.rows.append(Row(int(rec["size"]), float(rec["time_us"]) * 1e-6, float(rec["algbw_GBps"]),
                              float(rec["busbw_GBps"]), int(rec["wrong"]) if rec["wrong"] else None,
                              rec["placement"].replace("_", "-"), int(rec["count"]), rec["type"], rec["redop"],
                              int(rec["root"]), number))
        except (KeyError, ValueError) as e:
            raise IngestError(f"{source}, line {number}: unreadable collperf CSV row ({e})") from None
    for t in tables.values():
        if not t.collective:
            t.notes.append("the CSV does not name the collective: pass --collective")
    return list(tables.values())


def _f(value):
    return None if value is None or value == "N/A" else float(value)


def _wrong(value):
    if value is None or value == "N/A":
        return None
    return int(value)


# --- OSU micro-benchmarks ----------------------------------------------------------------------------

_OSU_NAMES = {"allreduce": "allreduce", "allgather": "allgather", "reduce_scatter": "reducescatter",
              "reduce scatter": "reducescatter", "alltoall": "alltoall", "all-to-all": "alltoall",
              "broadcast": "broadcast", "bcast": "broadcast", "reduce": "reduce", "gather": "gather",
              "scatter": "scatter"}
# OSU and IMB print the message size per process; nccl-tests' size is the whole buffer for these
_PER_RANK = ("allgather", "alltoall", "gather", "scatter", "reducescatter")


def parse_osu(text: str, source: str, collective: str | None, ranks: int | None) -> list[Table]:
    lines = text.splitlines()
    title = next((l for l in lines if "OSU" in l), "")
    found = next((v for k, v in _OSU_NAMES.items() if re.search(k, title, re.IGNORECASE)), None)
    table = Table(source, collective or found or "", ranks)
    table.header["title"] = title.strip("# ").strip()
    if not table.collective:
        raise IngestError(f"{source}: cannot tell the collective from the OSU title {title.strip()!r}; pass --collective")
    columns = None
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if "Size" in line:
                columns = [c.strip().lower() for c in re.split(r"\s{2,}", line.lstrip("# ").strip())]
            continue
        tokens = line.split()
        try:
            size, latency_us = int(tokens[0]), float(tokens[1])
        except (IndexError, ValueError):
            table.skipped.append(f"line {number}: not 'size latency(us) ...': {raw.strip()[:60]!r}")
            continue
        table.rows.append(Row(_total(size, table), latency_us * 1e-6, line=number))
    _note_per_rank(table, "OSU")
    table.header["columns"] = columns
    if not table.rows:
        raise IngestError(f"{source}: no OSU rows found (expected '# Size  Avg Latency(us)' and number lines)")
    _bandwidths(table)
    return [table]


# --- Intel MPI Benchmarks ----------------------------------------------------------------------------

def parse_imb(text: str, source: str, collective: str | None, ranks: int | None) -> list[Table]:
    tables: list[Table] = []
    table = None
    name, procs = None, None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if m := re.match(r"#\s*Benchmarking\s+(\S+)", line):
            name = m.group(1).lower().replace("_", "")
            continue
        if m := re.match(r"#\s*#processes\s*=\s*(\d+)", line):
            procs = int(m.group(1))
            continue
        if line.startswith("#bytes"):
            coll = collective or {"allreduce": "allreduce", "allgather": "allgather", "reducescatter": "reducescatter",
                                  "reducescatterblock": "reducescatter", "alltoall": "alltoall", "bcast": "broadcast",
                                  "reduce": "reduce", "gather": "gather", "scatter": "scatter"}.get(name or "", "")
            table = Table(f"{source} [{name} np={procs}]", coll, procs or ranks)
            table.header["columns"] = line.split()
            tables.append(table)
            continue
        if table is None or not line or line.startswith("#"):
            continue
        tokens = line.split()
        cols = table.header["columns"]
        if len(tokens) != len(cols):
            table.skipped.append(f"line {number}: expected {len(cols)} fields ({' '.join(cols)}): {raw.strip()[:60]!r}")
            continue
        try:
            size = int(tokens[0])
            t_avg = float(tokens[cols.index("t_avg[usec]")]) if "t_avg[usec]" in cols else float(tokens[-1])
        except ValueError:
            table.skipped.append(f"line {number}: unreadable numbers: {raw.strip()[:60]!r}")
            continue
        table.rows.append(Row(_total(size, table), t_avg * 1e-6, line=number))
    tables = [t for t in tables if t.rows]
    if not tables:
        raise IngestError(f"{source}: no IMB result blocks found (expected '#bytes #repetitions t_min[usec] ...')")
    for t in tables:
        if not t.collective:
            raise IngestError(f"{t.source}: unknown IMB benchmark; pass --collective")
        _note_per_rank(t, "IMB")
        _bandwidths(t)
    return tables


def _total(size: int, table: Table) -> int:
    return size * table.ranks if table.collective in _PER_RANK and table.ranks else size


def _note_per_rank(table: Table, tool: str) -> None:
    if table.collective in _PER_RANK:
        if table.ranks:
            table.notes.append(f"{tool} sizes are per process; multiplied by {table.ranks} ranks to the nccl-tests size")
        else:
            table.notes.append(f"{tool} sizes are per process and the rank count is unknown: sizes are kept per "
                               "process (pass --ranks to convert)")


def _bandwidths(table: Table) -> None:
    from collperf.collectives import algbw, busbw_factor
    factor = busbw_factor(table.collective, table.ranks) if table.ranks else None
    for r in table.rows:
        if r.time_s > 0:
            r.algbw_GBps = float(algbw(r.size, r.time_s)) / 1e9
            r.busbw_GBps = r.algbw_GBps * factor if factor is not None else None
