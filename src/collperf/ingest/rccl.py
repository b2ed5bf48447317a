"""rccl-tests file output (`--output_file FILE --output_format json|csv`): one record per size and
placement, keys `#wrong, algBw, busBw, gpus, inPlace, name, redop, size, time, type`
(ROCm/rccl-tests --output_format json|csv). JSON is one object per line; CSV has the same columns under a header.
time is in us, bandwidths in GB/s (1e9 B/s), size in nccl-tests' convention (rccl-tests is a fork).
One table per (test name, gpus)."""

from __future__ import annotations

from collperf.ingest import consistency
from collperf.ingest import validate as v
from collperf.ingest.inspector import collective_name
from collperf.ingest.nccltests import _COLLECTIVE
from collperf.ingest.table import Grouped, Row, Table

KEYS = ("#wrong", "algBw", "busBw", "gpus", "inPlace", "name", "redop", "size", "time", "type")


def looks_like_record(first) -> bool:
    return isinstance(first, dict) and {"algBw", "busBw", "size", "time"} <= set(first)


def looks_like_csv(text: str) -> bool:
    first = text.lstrip().split("\n", 1)[0]
    return "algBw" in first and "busBw" in first and "," in first


def _name(text: str) -> str | None:
    key = text.strip().lower().removesuffix("_perf")
    return _COLLECTIVE.get(key) or collective_name(key)


def _row(rec: dict, number: int, collective: str | None) -> tuple[tuple, Row]:
    missing = [k for k in ("size", "time", "name", "gpus") if k not in rec or rec[k] in (None, "")]
    if missing:
        raise v.BadValue(f"the key(s) {', '.join(missing)} are missing (expected {', '.join(KEYS)})")
    name = collective or _name(str(rec["name"]))
    if name is None:
        raise v.BadValue(f"name {str(rec['name'])[:20]!r} is not a collective test")
    gpus = v.whole(rec["gpus"], "gpus", 1, v.MAX_RANK)
    in_place = str(rec.get("inPlace", "0")).strip().lower() in ("1", "true")
    row = Row(
        v.size_bytes(rec["size"]),
        v.time_us(rec["time"]) * 1e-6,
        v.bandwidth(rec.get("algBw"), "algBw"),
        v.bandwidth(rec.get("busBw"), "busBw"),
        v.wrong_count(rec.get("#wrong")),
        "in-place" if in_place else "out-of-place",
        None,
        str(rec.get("type") or ""),
        str(rec.get("redop") or ""),
        line=number,
    )
    return (name, gpus), row


def _tables(items, source: str, collective: str | None, kind: str) -> list[Table]:
    grouped = Grouped()
    for number, rec in items:
        try:
            if isinstance(rec, str):
                raise v.BadValue(rec)
            if not isinstance(rec, dict):
                raise v.BadValue("expected a JSON object per line")
            (name, gpus), row = _row(rec, number, collective)
        except v.BadValue as e:
            grouped.skipped.append(f"line {number}: {e}")
            continue
        t = grouped.table((name, gpus), lambda: _table(source, name, gpus, kind, collective))  # noqa: B023 (called at once)
        t.rows.append(row)
    out = grouped.finish(f"{source}: no readable rccl-tests {kind} records")
    for t in out:
        consistency.check_factor(t)
        consistency.note_flags(t)
    return out


def _table(source: str, name: str, gpus: int, kind: str, collective: str | None) -> Table:
    t = Table(f"{source} [{name} {gpus} gpus]", name, gpus)
    t.header.update(format=f"rccl-tests {kind}", collective_from="given" if collective else "log")
    return t


def parse_jsonl(lines: list[tuple[int, object]], source: str, collective: str | None = None) -> list[Table]:
    return _tables(lines, source, collective, "JSON")


def parse_csv(text: str, source: str, collective: str | None = None) -> list[Table]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip())
    header = [h.strip() for h in lines[start].split(",")]
    items = []
    for number, line in enumerate(lines[start + 1 :], start + 2):
        if not line.strip():
            continue
        try:
            fields = v.csv_fields(line, header)
        except v.BadValue as e:
            items.append((number, str(e)))
            continue
        items.append((number, {k: f.strip() for k, f in zip(header, fields)}))
    return _tables(items, source, collective, "CSV")
