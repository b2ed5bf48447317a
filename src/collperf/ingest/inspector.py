"""NCCL Inspector (profiler plugin, NCCL >= 2.28.3): its JSON-lines dump and its Prometheus text export.

Facts: NCCL 2.30 plugins/profiler/inspector. A JSONL record is one collective call on one rank:
`{"header": {"id", "rank", "n_ranks", "nnodes"}, "metadata": {...}, "coll_perf": {"coll", "coll_sn",
"coll_msg_size_bytes", "coll_exec_time_us", "coll_timing_source", "coll_algobw_gbs", "coll_busbw_gbs"
[, "algo_proto"]}}`. Production traffic repeats a few sizes many times, so the records become one table
per communicator x collective, with one row per size bucket (a power of two: [2^k, 2^(k+1))) holding the
median size and the median time of the bucket's calls (medians: one slow call, a straggler, does not move
the row; the spread is kept in the table header). The Prometheus export has the metrics
`nccl_bus_bandwidth_gbs` and `nccl_collective_exec_time_microseconds` with labels comm_name, n_nodes,
nranks, collective, message_size (a bucket such as "4-5GB") and algo_proto; a row's size is
busbw / factor x time when both metrics are there (the bucket label's middle otherwise).
coll_msg_size_bytes is the type size x the API's count (ext-profiler/inspector inspector_plugin.cc, NCCL 2.30.7):
one rank's share for AllGather and ReduceScatter, whose whole buffer (nccl-tests' size) is n_ranks of them
(inspector.cc's trafficSize multiplies by the rank count), so those records are scaled by header.n_ranks.
"""

from __future__ import annotations

import json
import math
import statistics
from array import array

from collperf.collectives import busbw_factor
from collperf.ingest import validate as v
from collperf.ingest.table import Grouped, Row, Table, finish

_NAMES = {
    "allreduce": "allreduce",
    "allgather": "allgather",
    "reducescatter": "reducescatter",
    "broadcast": "broadcast",
    "reduce": "reduce",
    "alltoall": "alltoall",
    "gather": "gather",
    "scatter": "scatter",
    "sendrecv": "sendrecv",
}
_RECORD = {
    "header?": {"id?": ("string", "integer"), "rank?": "integer", "n_ranks?": "integer", "nnodes?": "integer"},
    "coll_perf": {
        "coll": "string",
        "coll_msg_size_bytes": "number",
        "coll_exec_time_us": "number",
        "coll_sn?": "number",
        "coll_timing_source?": "string",
        "coll_algobw_gbs?": ("number", None),
        "coll_busbw_gbs?": ("number", None),
        "algo_proto?": "string",
        "coll_algo?": "string",
        "coll_proto?": "string",
    },
}  # coll_algo/coll_proto: v4.2


def check_record(rec) -> None:
    """Raise validate.BadValue naming the JSON path where a collective record lacks a field or has the wrong type
    (the one schema diagnose and `collperf trace` read records by)."""
    v.check(rec, _RECORD, "$")


def numbered_records(f):
    """(line number, decoded record or an error text) for each non-blank line of an open JSON-lines file, one line
    in memory at a time."""
    return _decoded(enumerate(f, 1))


def collective_name(text: str) -> str | None:
    return _NAMES.get(text.lower().replace("_", "").replace("-", ""))


def looks_like_jsonl(first: dict) -> bool:
    return isinstance(first, dict) and "coll_perf" in first


def looks_like_prometheus(text: str) -> bool:
    head = text[:4000]
    return "nccl_collective_exec_time_microseconds" in head or "nccl_bus_bandwidth_gbs" in head


# the collectives whose coll_msg_size_bytes is one rank's share of nccl-tests' size (module docstring)
_PER_RANK = ("allgather", "reducescatter")


def _bucket(size: int) -> int:
    return size.bit_length()  # sizes in [2^(k-1), 2^k) share k; 0 bytes alone


def parse_jsonl(lines, source: str, collective: str | None = None) -> list[Table]:
    """`lines`: (line number, decoded JSON or an error string) for every non-empty line, read once (a
    generator is consumed as it goes: one record in memory at a time)."""
    groups: dict[tuple, dict] = {}
    skipped = []
    for number, rec in lines:
        try:
            if isinstance(rec, str):
                raise v.BadValue(rec)
            check_record(rec)
            perf, head = rec["coll_perf"], rec.get("header") or {}
            name = collective or collective_name(perf["coll"])
            if name is None:
                raise v.BadValue(f"coll {perf['coll'][:20]!r} is not a collective collperf knows")
            ranks = v.whole(head["n_ranks"], "n_ranks", 1, v.MAX_RANK) if "n_ranks" in head else None
            size = v.size_bytes(perf["coll_msg_size_bytes"])
            if name in _PER_RANK:
                if ranks is None:
                    raise v.BadValue(f"a {name} record without header.n_ranks: its size is one rank's share")
                size *= ranks
            time_s = v.time_us(perf["coll_exec_time_us"], "coll_exec_time_us") * 1e-6
            busbw = v.bandwidth(perf.get("coll_busbw_gbs"), "coll_busbw_gbs")
            nodes = v.whole(head["nnodes"], "nnodes", 1, v.MAX_RANK) if "nnodes" in head else None
        except v.BadValue as e:
            skipped.append(f"line {number}: {e}")
            continue
        comm = str(head.get("id", "?"))
        g = groups.setdefault(
            (comm, name),
            {
                "ranks": ranks,
                "nodes": nodes,
                "rows": {},
                "algo_proto": set(),
                "timing": set(),
                "calls": 0,
                "first_line": number,
            },
        )
        bucket = g["rows"].get(_bucket(size))
        if bucket is None:
            bucket = g["rows"][_bucket(size)] = _Calls(number)
        bucket.add(size, time_s, busbw)
        g["calls"] += 1
        if perf.get("algo_proto"):
            g["algo_proto"].add(perf["algo_proto"])
        if perf.get("coll_timing_source"):
            g["timing"].add(perf["coll_timing_source"])
    return finish(
        [_table(source, comm, name, g) for (comm, name), g in groups.items()],
        skipped,
        f"{source}: no readable NCCL Inspector records",
    )


class _Calls:
    """The calls of one size bucket, in flat arrays (24 bytes a call, not a tuple of boxed numbers: a dump
    of millions of calls stays a fraction of its file's size); busbw NaN where the record had none."""

    __slots__ = ("sizes", "times_s", "busbw", "first_line")

    def __init__(self, first_line: int):
        self.sizes, self.times_s, self.busbw, self.first_line = array("q"), array("d"), array("d"), first_line

    def add(self, size: int, time_s: float, busbw) -> None:
        self.sizes.append(size)
        self.times_s.append(time_s)
        self.busbw.append(math.nan if busbw is None else busbw)


def load_jsonl(path, source: str, collective: str | None = None) -> list[Table] | None:
    """An Inspector JSON-lines file read line by line, its text never held whole (None when the file is
    not one: its first non-blank line is not an Inspector record, or it has no second line)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        head = list(_first_lines(f, 2))
        if len(head) < 2 or not head[0].lstrip().startswith("{"):
            return None
        try:
            first = json.loads(head[0])
        except (json.JSONDecodeError, ValueError, RecursionError):
            return None
        if not looks_like_jsonl(first):
            return None
        f.seek(0)
        return parse_jsonl(_decoded(enumerate(f, 1)), source, collective)


def _first_lines(f, count: int):
    """The first `count` non-blank lines (a blank start is skipped, as the text readers do)."""
    for line in f:
        if line.strip():
            yield line
            count -= 1
            if not count:
                return


def _decoded(numbered):
    for number, line in numbered:
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except (json.JSONDecodeError, ValueError, RecursionError) as e:
            yield number, f"broken JSON ({str(e)[:60]})"


def _table(source: str, comm: str, name: str, g: dict) -> Table:
    t = Table(f"{source} [comm {comm} {name}]", name, g["ranks"], g["nodes"])
    t.header.update(
        format="NCCL Inspector JSONL",
        comm=comm,
        calls=g["calls"],
        timing_source=sorted(g["timing"]),
        algo_proto=sorted(g["algo_proto"]),
        buckets={},
    )
    _algo_proto(t, g["algo_proto"])
    factor = busbw_factor(name, g["ranks"]) if g["ranks"] and name not in ("sendrecv",) else None
    for k in sorted(g["rows"]):
        calls = g["rows"][k]
        size = int(statistics.median_low(calls.sizes))
        time_s = statistics.median(calls.times_s)
        row = Row(size, time_s, size / time_s / 1e9, line=calls.first_line)
        row.busbw_GBps = row.algbw_GBps * factor if factor else None
        reported = [b for b in calls.busbw if not math.isnan(b)]
        if reported and row.busbw_GBps:
            median_bus = statistics.median(reported)
            if abs(median_bus - row.busbw_GBps) > 0.02 * row.busbw_GBps + 0.01:
                row.flags.append(
                    f"coll_busbw_gbs {median_bus:.4g} disagrees with size x factor / time = {row.busbw_GBps:.4g} GB/s"
                )
        t.header["buckets"][size] = {
            "calls": len(calls.sizes),
            "min_time_s": min(calls.times_s),
            "max_time_s": max(calls.times_s),
        }
        t.rows.append(row)
    t.notes.append(f"{g['calls']} calls in {len(t.rows)} size buckets (powers of two): median size and time per bucket")
    return t


def _algo_proto(t: Table, seen) -> None:
    """'Ring_ll' -> nccl_algo ring, nccl_proto ll, when the whole table ran with one."""
    if len(seen) == 1:
        algo, _, proto = next(iter(seen)).partition("_")
        if algo and proto:
            t.header.update(nccl_algo=algo.lower(), nccl_proto=proto.lower())


# --- Prometheus text ------------------------------------------------------------------------------------

_METRICS = {"nccl_bus_bandwidth_gbs": "busbw", "nccl_collective_exec_time_microseconds": "time_us"}


def _labels(body: str, number: int) -> dict:
    """`a="x",b="y"` -> dict; a plain loop (no regex), quotes may hold commas."""
    out, i = {}, 0
    while i < len(body):
        eq = body.find("=", i)
        if eq < 0 or eq + 1 >= len(body) or body[eq + 1] != '"':
            raise v.BadValue(f'label list {body[:40]!r} is not name="value",...')
        end = body.find('"', eq + 2)
        while end > 0 and body[end - 1] == "\\":
            end = body.find('"', end + 1)
        if end < 0:
            raise v.BadValue(f"label list {body[:40]!r} has an unclosed quote")
        out[body[i:eq].strip().lstrip(",").strip()] = body[eq + 2 : end]
        i = end + 1
        while i < len(body) and body[i] in ", ":
            i += 1
    return out


def _bucket_middle(text: str) -> int | None:
    """'4-5GB' -> 4.5 GiB in bytes (units binary, as nccl-tests); None when it is not a range."""
    lo, sep, hi = text.partition("-")
    if not sep:
        return None
    unit = "".join(ch for ch in hi if ch.isalpha())
    low_unit = "".join(ch for ch in lo if ch.isalpha()) or unit
    scale = {"": 1, "B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}
    a, b = lo.rstrip("BKMGTkbmgt").strip(), hi.rstrip("BKMGTkbmgt").strip()
    if not (v.is_number(a) and v.is_number(b)) or low_unit.upper() not in scale or unit.upper() not in scale:
        return None
    low, high = float(a) * scale[low_unit.upper()], float(b) * scale[unit.upper()]
    return int((low + high) / 2) if 0 <= low <= high <= v.MAX_SIZE_BYTES else None


def parse_prometheus(text: str, source: str, collective: str | None = None) -> list[Table]:
    series: dict[tuple, dict] = {}
    grouped = Grouped()
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, brace, rest = line.partition("{")
        if name not in _METRICS:
            continue
        try:
            if not brace or "}" not in rest:
                raise v.BadValue("expected metric{labels} value")
            body, _, value = rest.rpartition("}")
            labels = _labels(body, number)
            tokens = value.split()
            if not tokens:
                raise v.BadValue("no value after the labels")
            what = _METRICS[name]
            x = v.time_us(tokens[0], name) if what == "time_us" else v.bandwidth(tokens[0], name)
        except v.BadValue as e:
            grouped.skipped.append(f"line {number}: {e}")
            continue
        key = tuple(sorted((k, val) for k, val in labels.items()))
        series.setdefault(key, {"line": number})[what] = x
    for key, m in series.items():
        labels = dict(key)
        try:
            _prom_row(labels, m, grouped, source, collective)
        except v.BadValue as e:
            grouped.skipped.append(f"line {m['line']}: {e}")
    out = grouped.finish(
        f"{source}: no readable NCCL Inspector Prometheus series "
        "(nccl_collective_exec_time_microseconds{comm_name=...,collective=...,message_size=...})"
    )
    for t in out:
        t.rows.sort(key=lambda r: r.size)
    return out


def _prom_row(labels: dict, m: dict, grouped: Grouped, source: str, collective: str | None) -> None:
    if "time_us" not in m:
        return  # a bandwidth without its time says nothing a row needs
    name = collective or collective_name(labels.get("collective", ""))
    if name is None:
        raise v.BadValue(f"collective {labels.get('collective', '')[:20]!r} is not one collperf knows")
    ranks = v.whole(labels["nranks"], "nranks", 1, v.MAX_RANK) if labels.get("nranks") else None
    nodes = v.whole(labels["n_nodes"], "n_nodes", 1, v.MAX_RANK) if labels.get("n_nodes") else None
    comm, algo_proto = labels.get("comm_name", "?"), labels.get("algo_proto", "")
    time_s = m["time_us"] * 1e-6
    factor = busbw_factor(name, ranks) if ranks and name != "sendrecv" else None
    note = None
    if m.get("busbw") and factor:
        size = v.size_bytes(round(m["busbw"] / factor * 1e9 * time_s))
        note = f"{labels.get('message_size', '?')[:20]}: size {size} B from busbw / factor x time"
    else:
        size = _bucket_middle(labels.get("message_size", ""))
        if size is None:
            raise v.BadValue(
                f"message_size {labels.get('message_size', '')[:20]!r} is not a range such as 4-5GB "
                "and there is no bus bandwidth to derive the size from"
            )
        size = v.size_bytes(size)
    row = Row(size, time_s, size / time_s / 1e9, line=m["line"])
    row.busbw_GBps = row.algbw_GBps * factor if factor else None
    t = grouped.table((comm, name, algo_proto), lambda: _prom_table(source, comm, name, algo_proto, ranks, nodes))
    if note:
        t.notes.append(note)
    t.rows.append(row)


def _prom_table(source: str, comm: str, name: str, algo_proto: str, ranks: int | None, nodes: int | None) -> Table:
    t = Table(f"{source} [comm {comm} {name} {algo_proto}]".replace(" ]", "]"), name, ranks, nodes)
    t.header.update(format="NCCL Inspector Prometheus", comm=comm, algo_proto=[algo_proto] if algo_proto else [])
    _algo_proto(t, {algo_proto} if algo_proto else set())
    return t


def decode_lines(text: str, start: int = 0):
    """JSON-lines, lazily: (line number, object) per non-empty line, or (line number, error message).
    A generator that slices one line at a time, so that a dump of a million calls is never held twice
    (as a list of lines and as a list of records) beside its text."""
    return _decoded(_numbered_lines(text, start))


def _numbered_lines(text: str, start: int):
    number, at, end = 0, start, len(text)
    while at < end:
        stop = text.find("\n", at)
        stop = end if stop < 0 else stop
        number += 1
        yield number, text[at:stop]
        at = stop + 1
