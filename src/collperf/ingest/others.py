"""nccl-tests JSON (-J), collperf's own bench JSON and CSV (OSU and Intel MPI Benchmarks: mpi_benchmarks.py)."""

from __future__ import annotations

import re

from collperf.collectives import COLLECTIVES
from collperf.ingest import consistency, validate as v
from collperf.ingest.nccltests import _BINARY, _COLLECTIVE
from collperf.ingest.table import Grouped, IngestError, Row, Table, finish
from collperf.ingest.row import PLACEMENTS, Row as BenchRow

# --- nccl-tests -J and collperf bench JSON ---------------------------------------------------------
# Shapes (validate.check): nccl-tests -J (NCCL tests 2.19 src/util.cu) and collperf's results.to_json.
_BW = ("number", None, "string")  # a number, null or "N/A" (checked by validate.bandwidth)
_MEASURE = {
    "time?": "number",
    "cpu_time?": "number",
    "alg_bw?": _BW,
    "bus_bw?": _BW,
    "nwrong?": ("integer", None, "number", "string"),
}
_PER_ITER = {
    "min_us?": "number",
    "max_us?": "number",
    "avg_us?": "number",
    "p50_us?": "number",
    "p95_us?": "number",
    "p99_us?": "number",
    "stdev_us?": "number",
    "cv_pct?": "number",
    "skipped_iterations?": "integer",
    "times_us?": ["number"],
    "per_process_max_times_us?": [["number"]],
}
_NCCL_DOC = {
    "results": ["any"],
    "args?": ["any"],
    "version?": "any",
    "nccl_version?": "any",
    "env?": (["any"], {}),
    "config?": {
        "devices?": [{"rank?": "integer", "hostname?": ("string", "number"), "device_info?": ("string", None)}]
    },
}
_NCCL_RESULT = {
    "size": "number",
    "count?": ("number", None),
    "type?": ("string", None),
    "redop?": ("string", None),
    "root?": ("number", "string", None),
    "out_of_place?": (_MEASURE, None),
    "in_place?": (_MEASURE, None),
}
_COLLPERF_DOC = {"version": "string", "collective": "string", "ranks": "integer", "results": ["any"]}
_COLLPERF_RESULT = {
    "algorithm": "string",
    "size": "number",
    "count?": ("number", None),
    "type?": ("string", None),
    "redop?": ("string", None),
    "root?": ("number", None),
    "out_of_place?": ({"time": "number", "alg_bw": _BW, "bus_bw": _BW, "nwrong?": ("integer", None, "number")}, None),
    "in_place?": ({"time": "number", "alg_bw": _BW, "bus_bw": _BW, "nwrong?": ("integer", None, "number")}, None),
}


def _shape(doc, shape, source: str, path: str = "$") -> None:
    try:
        v.check(doc, shape, path)
    except v.BadValue as e:
        raise IngestError(f"{source}: JSON {e}") from None


def result_lines(text: str) -> list[int]:
    """The line each element of the top-level "results" list starts on (1-based), so that a bad result is
    reported by line as well as by JSON path; [] when the list cannot be found (messages keep the path)."""
    import json

    m = re.search(r'"results"\s*:\s*\[', text)
    if m is None:
        return []
    decoder, at, out = json.JSONDecoder(), m.end(), []
    blank = re.compile(r"[\s,]*")
    counted, line = 0, 1  # newlines counted so far, up to `counted`: each character is counted once
    while True:
        at = blank.match(text, at).end()
        if at >= len(text) or text[at] == "]":
            return out
        line += text.count("\n", counted, at)
        counted = at
        out.append(line)
        try:
            at = decoder.raw_decode(text, at)[1]
        except ValueError:
            return out


class ResultLines:
    """Where each -J result starts, found only when a message needs it: the text of a file without a bad
    result is decoded once (by json.loads), not a second time to number its lines."""

    def __init__(self, text: str, lead: int = 0):
        self.text, self.lead, self.found = text, lead, None

    def _lines(self) -> list[int]:
        if self.found is None:
            self.found = [n + self.lead for n in result_lines(self.text)]
        return self.found

    def __getitem__(self, i: int) -> int:
        return self._lines()[i]

    def __len__(self) -> int:
        return len(self._lines())


def _at(i: int, lines) -> str:
    """'line N: ' for result i, when its line is known."""
    return f"line {lines[i]}: " if lines is not None and i < len(lines) else ""


def parse_json(doc, source: str, collective: str | None = None, lines=None) -> list[Table]:
    """nccl-tests -J or collperf bench JSON; `lines`: where each result starts (a list, or ResultLines of
    its text, which numbers them only if a result is bad), so that bad results are named by line."""
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise IngestError(
            f"{source}: JSON without a 'results' list: expected nccl-tests -J output or collperf bench -J FILE"
        )
    if doc.get("version") == "collperf":
        return _collperf_json(doc, source, collective, lines)
    _shape(doc, _NCCL_DOC, source)
    table = Table(source)
    devices = (doc.get("config") or {}).get("devices") or []
    if devices:
        ranks = {d.get("rank") for d in devices}
        if ranks == set(range(len(ranks))):
            table.ranks = len(ranks)
            table.nodes = len({str(d.get("hostname")) for d in devices})
        else:
            table.notes.append(
                f"config.devices lists ranks {sorted(r for r in ranks if r is not None)[:8]}: not "
                "0..n-1, so the rank count is not read from it"
            )
        table.header["hosts"] = sorted({str(d.get("hostname")) for d in devices})
        table.header["gpus"] = sorted({str(d.get("device_info") or "") for d in devices})
    _env(table, doc.get("env"))
    _version(table, doc)
    config = doc.get("config") or {}
    for key in ("nthreads", "ngpus"):  # as the text log's "# nThread N nGpus N" line
        if isinstance(config.get(key), int) and not isinstance(config[key], bool) and config[key] >= 1:
            table.header[key] = config[key]
    argv = " ".join(map(str, doc.get("args") or []))
    name = _BINARY.search(argv)
    table.collective = collective or (_COLLECTIVE[name.group(1)] if name else "")
    table.header["collective_from"] = "given" if collective else "log"
    if not table.collective:
        raise IngestError(f"{source}: cannot tell the collective from the JSON's args; pass --collective")
    skipped: list[str] = []
    for i, r in enumerate(doc["results"]):
        where = f"$.results[{i}]"
        try:
            v.check(r, _NCCL_RESULT, where)
            # a bad in-place measurement leaves the good out-of-place one read, then skips the rest
            rows, bad = _json_rows(r, where, i + 1)
            for key, row in rows:
                m = r[key]
                _per_iter(
                    table,
                    row,
                    r.get(f"{key}_per_iter", m.get("per_iter")),
                    f"{where}.{key}_per_iter",
                    lambda: _at(i, lines),
                )  # noqa: B023 (called at once)
                table.rows.append(row)
            if bad is not None:
                raise bad
        except v.BadValue as e:
            skipped.append(f"{_at(i, lines)}{e}")
    out = finish([table], skipped, f"{source}: the JSON has no readable results")
    _footer(table, doc)
    consistency.check_factor(table)
    consistency.note_flags(table)
    return out


def _env(table: Table, env) -> None:
    """NCCL_ALGO / NCCL_PROTO / channel bounds the run was forced with (nccl-tests -J `env`: a list of
    'KEY=VALUE' strings, or an object): what `collperf export nccl-tuner` needs to know of each log."""
    if isinstance(env, dict):
        pairs = {str(k): str(val) for k, val in env.items()}
    else:
        pairs = dict(str(e).partition("=")[::2] for e in (env or []) if isinstance(e, str) and "=" in e)
    algo, proto = pairs.get("NCCL_ALGO", "").strip().lower(), pairs.get("NCCL_PROTO", "").strip().lower()
    if algo and "," not in algo and ";" not in algo and "^" not in algo:
        table.header["nccl_algo"] = algo
    if proto and "," not in proto and ";" not in proto and "^" not in proto:
        table.header["nccl_proto"] = proto
    low, high = pairs.get("NCCL_MIN_NCHANNELS"), pairs.get("NCCL_MAX_NCHANNELS")
    if low and low == high and v.is_whole(low.strip()):
        table.header["nccl_channels"] = int(low)
    if not algo and not proto:
        table.header["nccl_default"] = True


def _per_iter(table: Table, row: Row, stats, where: str, line=lambda: "") -> None:
    """nccl-tests -I: per-iteration statistics of one measurement, kept in header['per_iter'] by
    (size, placement); every number range-checked (a bad block is dropped with a note, the row stays)."""
    if stats is None:
        return
    try:
        v.check(stats, _PER_ITER, where)
        kept = {
            k: v.real(stats[k], f"{where}.{k}", 0.0, v.MAX_TIME_US if k != "cv_pct" else 1e6)
            for k in ("min_us", "max_us", "avg_us", "p50_us", "p95_us", "p99_us", "stdev_us", "cv_pct")
            if k in stats
        }
        times = [v.time_us(x, f"{where}.times_us[]") for x in stats.get("times_us", [])]
        if "min_us" in kept and "max_us" in kept and kept["min_us"] > kept["max_us"]:
            raise v.BadValue(f"{where}: min_us {kept['min_us']:g} > max_us {kept['max_us']:g}")
    except v.BadValue as e:
        table.notes.append(f"per-iteration timing dropped: {line()}{e}")
        return
    kept["times_us"] = times
    if "skipped_iterations" in stats:
        kept["skipped_iterations"] = stats["skipped_iterations"]
    table.header.setdefault("per_iter", {})[(row.size, row.placement)] = kept


def _json_rows(r: dict, where: str, index: int) -> tuple[list[tuple[str, Row]], v.BadValue | None]:
    """The ingest rows of one JSON result: its numbers range-checked, then read as the bench row
    (ingest/row.py Row.from_json, the inverse of what bench writes) and split by placement (Row.placements).
    Returns the rows of the placements read before the first bad one, and that one's BadValue (None: all read)."""
    columns, measures, bad = {}, {}, None
    for key in PLACEMENTS:
        if r.get(key):
            try:
                columns, measures[key] = _checked(r, r[key], f"{where}.{key}")
            except v.BadValue as e:
                bad = e
                break
    if not measures:
        return [], bad
    bench = BenchRow.from_json({**r, **columns, **{key: measures.get(key) for key in PLACEMENTS}})
    rows = [Row(**record) for record in bench.placements(index)]
    for row in rows:
        if row.algbw_GBps is not None:
            exact = row.size / row.time_s / 1e9
            if abs(row.algbw_GBps - exact) > 0.005 + 1e-3 * exact:
                row.flags.append(f"alg_bw {row.algbw_GBps:g} GB/s disagrees with size / time = {exact:.4g} GB/s")
    return [(key, row) for key, row in zip([k for k in PLACEMENTS if k in measures], rows)], bad


def _checked(r: dict, m: dict, where: str) -> tuple[dict, dict]:
    """One measurement of a JSON result and the result's columns, every number range-checked (BadValue names
    the JSON path): the columns and the placement object, in the shape Row.to_json writes."""
    try:
        time = m["time"] if "time" in m else m.get("cpu_time")
        if time is None:
            raise v.BadValue("no 'time' (us)")
        for key in ("alg_bw", "bus_bw"):  # JSON carries numbers; a string other than N/A is a broken writer
            if isinstance(m.get(key), str) and m[key] != "N/A":
                raise v.BadValue(f"{key} {m[key][:20]!r} is a string: expected a number, null or 'N/A'")
        size, time_us = v.size_bytes(r["size"]), v.time_us(time)
        measure = {
            "time": time_us,
            "alg_bw": v.bandwidth(m.get("alg_bw"), "alg_bw"),
            "bus_bw": v.bandwidth(m.get("bus_bw"), "bus_bw"),
            "nwrong": v.wrong_count(m.get("nwrong")),
        }
        columns = {
            "size": size,
            "count": None if r.get("count") is None else v.whole(r["count"], "count", 0, v.MAX_COUNT),
            "type": str(r.get("type") or ""),
            "redop": str(r.get("redop") or ""),
            "root": _root(r.get("root")),
        }
    except v.BadValue as e:
        raise v.BadValue(f"{where}: {e}") from None
    return columns, measure


def _footer(table: Table, doc: dict) -> None:
    """The summary the writer puts after "results" (util.cu writeResultFooter): as the text log's
    '# Out of bounds values' and '# Avg bus bandwidth' lines."""
    bounds, avg = doc.get("out_of_bounds"), doc.get("average_bus_bandwidth")
    try:
        if isinstance(bounds, dict) and "count" in bounds:
            table.footer["out_of_bounds"] = v.whole(bounds["count"], "$.out_of_bounds.count", 0, 1 << 63)
            table.footer["status"] = "OK" if table.footer["out_of_bounds"] == 0 else "FAILED"
        if isinstance(avg, dict) and "bandwidth" in avg:
            table.footer["avg_busbw_GBps"] = v.real(
                avg["bandwidth"], "$.average_bus_bandwidth.bandwidth", 0, v.MAX_BANDWIDTH_GBPS
            )
    except v.BadValue as e:
        table.notes.append(f"summary not read: {e}")


def _root(value) -> int | None:
    """nccl-tests' writer puts the text column's `%6i` string in "root" ("    -1", util.cu
    writeBenchmarkLinePreamble); older writers and collperf a number."""
    if value is None:
        return None
    return v.whole(value.strip() if isinstance(value, str) else value, "root", -1, v.MAX_RANK)


def _version(table: Table, doc: dict) -> None:
    """JSON_FILE_VERSION 3 writes "version" as the file format (an integer) and "nccl_version" as NCCL's
    version code (NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z from 2.9, X*1000 + Y*100 + Z before)."""
    version, code = doc.get("version"), doc.get("nccl_version")
    if isinstance(version, int) and not isinstance(version, bool):
        table.header["json_version"] = version
    elif version is not None:
        table.header["nccl_tests_version"] = str(version)
    if isinstance(code, int) and not isinstance(code, bool) and code > 0:
        major, rest = (code // 10000, code % 10000) if code >= 10000 else (code // 1000, code % 1000)
        table.header["nccl_version"] = f"{major}.{rest // 100}.{rest % 100}"
    elif code is not None:
        table.header["nccl_version"] = str(code)


def _collperf_json(doc: dict, source: str, collective: str | None = None, lines=None) -> list[Table]:
    _shape(doc, _COLLPERF_DOC, source)
    # ranks bounded as every reader bounds them: a 400-digit count is no float, and busbw's factor divides by it
    if doc["collective"] not in COLLECTIVES or not 1 <= doc["ranks"] <= v.MAX_RANK:
        ranks = str(doc["ranks"]) if doc["ranks"] < 10**20 else f"{str(doc['ranks'])[:12]}... (a huge number)"
        raise IngestError(
            f"{source}: JSON $.collective {doc['collective']!r} / $.ranks {ranks}: expected one "
            f"of {', '.join(COLLECTIVES)} and 1 <= ranks <= {v.MAX_RANK}"
        )
    grouped = Grouped()
    for i, r in enumerate(doc["results"]):
        where = f"$.results[{i}]"
        try:
            v.check(r, _COLLPERF_RESULT, where)
            pairs, bad = _json_rows(r, where, i + 1)
            if bad is not None:
                raise bad
            rows = [row for _, row in pairs]
        except v.BadValue as e:
            grouped.skipped.append(f"{_at(i, lines)}{e}")
            continue
        t = grouped.table(
            r["algorithm"],
            lambda: Table(
                f"{source} [{r['algorithm']}]",  # noqa: B023 (called at once)
                collective or doc["collective"],
                doc["ranks"],
            ),
        )
        t.header["algorithm"] = r["algorithm"]
        t.header["collective_from"] = "given" if collective else "log"
        t.rows.extend(rows)
    out = grouped.finish(f"{source}: the collperf JSON has no readable results")
    for t in out:
        consistency.check_factor(t)
        consistency.note_flags(t)
        if doc.get("complete") is False:  # bench's marker: the run ended early, or was still running
            t.header["incomplete"] = str(doc.get("stopped") or "the run had not finished (complete: false)")
    return out


_CSV_REQUIRED = ("algorithm", "size", "placement", "time_us", "algbw_GBps", "busbw_GBps")


def parse_collperf_csv(text: str, source: str, collective: str | None, ranks: int | None) -> list[Table]:
    """collperf bench --csv (results.CSV_COLUMNS). A bad or truncated row is reported and skipped."""
    lines = text.splitlines()
    header = lines[0].split(",")
    missing = [c for c in _CSV_REQUIRED if c not in header]
    if missing:
        raise IngestError(
            f"{source}, line 1: the CSV header lacks {', '.join(missing)}: expected collperf bench "
            f"--csv columns ({', '.join(_CSV_REQUIRED)}, ...)"
        )
    grouped = Grouped()
    runs: dict[str, str] = {}
    for number, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        try:
            rec = dict(zip(header, v.csv_fields(line, header)))
            row = _csv_row(rec, number)
        except v.BadValue as e:
            grouped.skipped.append(f"line {number}: {e}")
            continue
        t = grouped.table(
            rec["algorithm"],
            lambda: Table(
                f"{source} [{rec['algorithm']}]",  # noqa: B023 (called at once)
                collective or "",
                ranks,
            ),
        )
        t.header["algorithm"] = rec["algorithm"]
        _csv_identity(t, rec, ranks)
        t.rows.append(row)
        runs[rec["algorithm"]] = rec.get("run") or "complete"  # the run column: the last line's state
    out = grouped.finish(f"{source}: no readable collperf CSV rows")
    for t in out:
        if not t.collective:
            t.notes.append("the CSV does not name the collective: pass --collective")
        if (state := runs.get(t.header.get("algorithm"), "complete")).startswith("INCOMPLETE"):
            t.header["incomplete"] = state.partition(":")[2].strip() or "the run ended early"
    return out


def _csv_identity(t: Table, rec: dict, ranks: int | None) -> None:
    """The collective and rank count from collperf's own columns (the files it writes), unless given."""
    if not t.collective and rec.get("collective") in COLLECTIVES:
        t.collective = rec["collective"]
        t.header["collective_from"] = "log"
    if t.ranks is None and ranks is None and (rec.get("ranks") or "").isdigit() and 0 < int(rec["ranks"]) <= v.MAX_RANK:
        t.ranks = int(rec["ranks"])
        t.header["ranks_from"] = "log"


def _csv_row(rec: dict, number: int) -> Row:
    placement = rec["placement"].replace("_", "-")
    if placement not in ("out-of-place", "in-place"):
        raise v.BadValue(f"placement {rec['placement'][:20]!r} is not out_of_place or in_place")
    optional = {k: rec.get(k) or None for k in ("count", "root", "wrong")}
    return Row(
        v.size_bytes(rec["size"]),
        v.time_us(rec["time_us"]) * 1e-6,
        v.bandwidth(rec["algbw_GBps"], "algbw"),
        v.bandwidth(rec["busbw_GBps"], "busbw"),
        v.wrong_count(optional["wrong"]),
        placement,
        None if optional["count"] is None else v.whole(optional["count"], "count", 0, v.MAX_COUNT),
        rec.get("type", ""),
        rec.get("redop", ""),
        None if optional["root"] is None else v.whole(optional["root"], "root", -1, v.MAX_RANK),
        number,
    )
