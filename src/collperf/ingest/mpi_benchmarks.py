"""OSU micro-benchmarks and Intel MPI Benchmarks (IMB-MPI1) output: sizes per process turned into
nccl-tests' whole-buffer sizes, bandwidths from size / time."""

from __future__ import annotations

import re

from collperf.collectives import busbw_factor
from collperf.ingest import validate as v
from collperf.ingest.table import IngestError, Row, Table, finish

# --- OSU micro-benchmarks ----------------------------------------------------------------------------

_OSU_NAMES = {
    "allreduce": "allreduce",
    "allgather": "allgather",
    "reduce_scatter": "reducescatter",
    "reduce scatter": "reducescatter",
    "alltoall": "alltoall",
    "all-to-all": "alltoall",
    "broadcast": "broadcast",
    "bcast": "broadcast",
    "reduce": "reduce",
    "gather": "gather",
    "scatter": "scatter",
}
# OSU and IMB print the message size per process; nccl-tests' size is the whole buffer for these
_PER_RANK = ("allgather", "alltoall", "gather", "scatter", "reducescatter")


def parse_osu(text: str, source: str, collective: str | None, ranks: int | None) -> list[Table]:
    lines = text.splitlines()
    title = next((line for line in lines if "OSU" in line), "")
    found = next((v for k, v in _OSU_NAMES.items() if re.search(k, title, re.IGNORECASE)), None)
    table = Table(source, collective or found or "", ranks)
    table.header["title"] = title.strip("# ").strip()[:200]
    if not table.collective:
        raise IngestError(
            f"{source}: cannot tell the collective from the OSU title {title.strip()[:80]!r}; pass --collective"
        )
    columns = None
    skipped: list[str] = []
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if "Size" in line:
                columns = [c.strip().lower() for c in re.split(r"\s{2,}", line.lstrip("# ").strip())]
            continue
        tokens = line.split()
        if len(tokens) < 2:
            skipped.append(f"line {number}: not 'size latency(us) ...': {raw.strip()[:60]!r}")
            continue
        try:
            size, latency_us = v.size_bytes(tokens[0]), v.time_us(tokens[1], "latency")
        except v.BadValue as e:
            skipped.append(f"line {number}: {e}: expected 'size latency(us) ...': {raw.strip()[:60]!r}")
            continue
        table.rows.append(Row(_total(size, table), latency_us * 1e-6, line=number))
    _note_per_rank(table, "OSU")
    table.header["columns"] = columns
    out = finish([table], skipped, f"{source}: no OSU rows found (expected '# Size  Avg Latency(us)' and number lines)")
    _bandwidths(table)
    return out


# --- Intel MPI Benchmarks ----------------------------------------------------------------------------
# IMB-MPI1 names -> collective. The point-to-point benchmarks time one message to a neighbour: PingPong's
# t[usec] is half the round trip, PingPing's one message each way at once, Sendrecv the chain shift,
# Exchange a message to each neighbour (Intel MPI Benchmarks User Guide, "MPI-1 Benchmarks").
_IMB_NAMES = {
    "allreduce": "allreduce",
    "allgather": "allgather",
    "reducescatter": "reducescatter",
    "reducescatterblock": "reducescatter",
    "alltoall": "alltoall",
    "bcast": "broadcast",
    "reduce": "reduce",
    "gather": "gather",
    "scatter": "scatter",
    "pingpong": "sendrecv",
    "pingping": "sendrecv",
    "sendrecv": "sendrecv",
    "exchange": "sendrecv",
}
# the time column, in order of preference; never Mbytes/sec
_IMB_TIME = ("t_avg[usec]", "t[usec]")


def parse_imb(text: str, source: str, collective: str | None, ranks: int | None) -> list[Table]:
    tables: list[Table] = []
    table = None
    name, procs = None, None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if m := re.match(r"#\s*Benchmarking\s+(\S+)", line):
            name = m.group(1).lower().replace("_", "")
            continue
        if m := re.match(r"#\s*#processes\s*=\s*(\S+)", line):
            try:
                procs = v.whole(m.group(1), "#processes", 1, v.MAX_RANK)
            except v.BadValue as e:
                raise IngestError(f"{source}, line {number}: {e}: expected '# #processes = N'") from None
            continue
        if line.startswith("#bytes"):
            table = _imb_table(source, name, procs, collective, ranks, line.split(), number)
            tables.append(table)
            continue
        if table is None or not line or line.startswith("#"):
            continue
        _imb_row(table, line.split(), number, raw)
    tables = [t for t in tables if t.rows]
    if not tables:
        raise IngestError(
            f"{source}: no IMB result blocks found (expected '#bytes #repetitions t_min[usec] ...' and number lines)"
        )
    for t in tables:
        if not t.collective:
            raise IngestError(f"{t.source}: unknown IMB benchmark; pass --collective")
        _note_per_rank(t, "IMB")
        _bandwidths(t)
    return tables


def _imb_table(source, name, procs, collective, ranks, columns, number) -> Table:
    time_column = next((c for c in _IMB_TIME if c in columns), None)
    if time_column is None:
        raise IngestError(
            f"{source}, line {number}: IMB header {' '.join(columns)[:80]!r} has no time column: "
            f"expected one of {', '.join(_IMB_TIME)}"
        )
    table = Table(f"{source} [{name} np={procs}]", collective or _IMB_NAMES.get(name or "", ""), procs or ranks)
    table.header.update(columns=columns, time_column=time_column, benchmark=name)
    if name in ("pingpong", "pingping", "sendrecv", "exchange"):
        both = " (each rank sends it to both neighbours)" if name == "exchange" else ""
        table.notes.append(
            f"IMB {name}: point-to-point, read as sendrecv; size is the message, time from {time_column}{both}"
        )
    return table


def _imb_row(table: Table, tokens: list[str], number: int, raw: str) -> None:
    cols = table.header["columns"]
    if len(tokens) != len(cols):
        table.skipped.append(f"line {number}: expected {len(cols)} fields ({' '.join(cols)}): {raw.strip()[:60]!r}")
        return
    try:
        size = v.size_bytes(tokens[0])
        t_us = v.time_us(tokens[cols.index(table.header["time_column"])], table.header["time_column"])
    except v.BadValue as e:
        table.skipped.append(f"line {number}: {e}: {raw.strip()[:60]!r}")
        return
    table.rows.append(Row(_total(size, table), t_us * 1e-6, line=number))


def _total(size: int, table: Table) -> int:
    return size * table.ranks if table.collective in _PER_RANK and table.ranks else size


def _note_per_rank(table: Table, tool: str) -> None:
    if table.collective in _PER_RANK:
        if table.ranks:
            table.notes.append(
                f"{tool} sizes are per process; multiplied by {table.ranks} ranks to the nccl-tests size"
            )
        else:
            table.notes.append(
                f"{tool} sizes are per process and the rank count is unknown: sizes are kept per "
                "process (pass --ranks to convert)"
            )


def _bandwidths(table: Table) -> None:
    factor = busbw_factor(table.collective, table.ranks) if table.ranks else None
    if table.collective in ("broadcast", "reduce", "sendrecv"):
        factor = 1.0  # independent of the rank count (collectives.busbw_factor)
    if factor is None and table.collective not in ("broadcast", "reduce", "sendrecv"):
        table.notes.append(
            "rank count unknown: busbw cannot be computed (its factor depends on the rank count) and "
            "is left empty; the fit works on algbw. Pass --ranks N for busbw"
        )
    for r in table.rows:
        r.algbw_GBps = r.size / r.time_s / 1e9
        r.busbw_GBps = r.algbw_GBps * factor if factor is not None else None
