"""nccl-tests text logs of every vintage, as pasted from real clusters (reference/nccl-tests-format.md).

Handles: the current format (#wrong, 5 preamble fields) and the legacy one (`error` column, 3 to 5
preamble fields), `N/A`, exponent forms, `-I` (i_min i_max i_p99 i_cv% after each #wrong) and `-S`
(timestamp) columns; `mpirun --tag-output` prefixes, NCCL INFO/WARN and MPI lines inside the table,
renderers that drop the leading `#`, markdown indentation, several tests in one file, truncated files.
Rows are read from the right: the measurement groups are fixed, the preamble varies by test.
"""

from __future__ import annotations

import re

from collperf.collectives import COLLECTIVES, PROGRAMS, algbw
from collperf.ingest.table import IngestError, Row, Table

_PREFIX = re.compile(r"^\s*\[\d+,\d+\]<std(?:out|err)>:\s?")
# program name without `_perf` -> collective: one per collective (collectives.py), plus the nccl-tests
# programs that measure a collective under another name (alltoallv_perf, hypercube_perf: an allgather)
_COLLECTIVE = {program.removesuffix("_perf"): c.name for program, c in PROGRAMS.items()} | \
    {"alltoallv": "alltoall", "hypercube": "allgather"}
_BINARY = re.compile(r"\b(" + "|".join(sorted(_COLLECTIVE, key=len, reverse=True)) + r")_perf")
_DEVICE = re.compile(r"Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[[^\]]*\]\s*(.*)")
_FLAGS = re.compile(r"nThread\s+(\d+)\s+nGpus\s+(\d+)\s+minBytes\s+(\d+)\s+maxBytes\s+(\d+)(.*)")
_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
_NOISE = re.compile(r"NCCL (INFO|WARN)|^\s*\S+:\d+:\d+ \[\d+\]|mpirun|WARNING|warning|Warning|^\s*--|"
                    r"^\s*\*|^\s*(ubuntu|root)@|^\s*\$|Authorization|xpmem|btl|pml|orte|prterun|plm:")
DTYPES = {"int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16",
          "f8e4m3", "f8e5m2", "fp8_e4m3", "fp8_e5m2"}


def looks_like(text: str) -> bool:
    return bool(re.search(r"(out-of-place|in-place|Avg bus bandwidth|nThread|busbw)", text))


def _clean(line: str) -> str:
    line = _PREFIX.sub("", line)
    return line.strip()


def _number(token: str) -> bool:
    return bool(_NUMBER.match(token))


def parse(text: str, source: str = "<log>", collective: str | None = None) -> list[Table]:
    """Every test in an nccl-tests log, as Tables."""
    lines = text.splitlines()
    file_binary = next((m.group(0) for m in map(_BINARY.search, lines) if m), None)
    tables: list[Table] = []
    current = Table(source)
    layout: dict | None = None
    pending_header: dict = {}

    def finish():
        nonlocal current
        if current.rows:
            if not current.footer:
                current.notes.append("the table has no footer (Out of bounds / Avg bus bandwidth): the log may be "
                                     "truncated")
            tables.append(current)
        elif current.skipped and tables:
            tables[-1].skipped.extend(current.skipped)
        current = Table(source)
        current.header.update({k: v for k, v in pending_header.items()})

    for number, raw in enumerate(lines, 1):
        line = _clean(raw)
        body = line.lstrip("#").strip()
        if not body:
            continue
        if m := re.match(r"nccl-tests version (\S+)(.*)", body):
            pending_header["nccl_tests_version"] = m.group(1)
            current.header["nccl_tests_version"] = m.group(1)
            continue
        if m := re.match(r"Collective test starting:\s*(\S+)", body):
            if current.rows:
                finish()
            current.header["binary"] = m.group(1)
            continue
        if m := re.match(r"NCCL version (\S+)", body):
            pending_header["nccl_version"] = m.group(1)
            current.header["nccl_version"] = m.group(1)
            continue
        if m := _FLAGS.search(body):
            if current.rows:
                finish()
            current.header["flags"] = body
            current.header["nthreads"], current.header["ngpus"] = int(m.group(1)), int(m.group(2))
            continue
        if m := _DEVICE.search(body):
            if current.rows:
                finish()
            current.header.setdefault("devices", []).append(
                {"rank": int(m.group(1)), "host": m.group(2), "device": int(m.group(3)), "gpu": m.group(4).strip()})
            continue
        if "size" in body.split() and "time" in body.split():
            if current.rows:
                finish()
            layout = _layout(body.split())
            continue
        if m := re.match(r"Out of bounds values\s*:\s*(\d+)\s*(\w*)", body):
            current.footer["out_of_bounds"] = int(m.group(1))
            current.footer["status"] = m.group(2)
            continue
        if m := re.match(r"Avg bus bandwidth\s*:\s*(\S+)", body):
            try:
                current.footer["avg_busbw_GBps"] = float(m.group(1))
            except ValueError:
                current.skipped.append(f"line {number}: unreadable Avg bus bandwidth {m.group(1)!r}")
            continue
        if body.startswith("Collective test concluded"):
            current.footer["concluded"] = True
            continue
        if line.startswith("#") or (body.startswith("(B)")):
            continue
        tokens = body.split()
        if len(tokens) >= 2 and _number(tokens[0]) and "." not in tokens[0] and _number(tokens[1]):
            row_or_why = _row(tokens, layout, number)
            if isinstance(row_or_why, str):
                current.skipped.append(f"line {number}: {row_or_why}: {raw.strip()[:80]!r}")
            else:
                current.rows.extend(row_or_why)
            continue
        if current.rows and not _NOISE.search(line) and len(tokens) > 3:
            current.skipped.append(f"line {number}: not a row of the table: {raw.strip()[:80]!r}")
    finish()
    if not tables:
        raise IngestError(f"{source}: no nccl-tests result rows found (expected lines of "
                          "'size count type redop root time algbw busbw #wrong ...' under a column header)")
    for t in tables:
        _identify(t, collective, file_binary)
    return tables


def _layout(header: list[str]) -> dict:
    """What a column header says: error or #wrong, per-iteration columns, timestamp."""
    names = [h.lower() for h in header]
    return {"legacy": "error" in names, "per_iter": "i_min" in names, "timestamp": "timestamp" in names,
            "preamble": names[:names.index("time")] if "time" in names else []}


def _row(tokens: list[str], layout: dict | None, number: int):
    """Rows (out-of-place, in-place) from one line, or why it is not one."""
    layout = layout or {"legacy": False, "per_iter": False, "timestamp": False, "preamble": []}
    if layout["timestamp"] and len(tokens) >= 2 and re.match(r"\d{4}-\d\d-\d\d", tokens[-2]):
        tokens = tokens[:-2]
    group = 8 if layout["per_iter"] else 4
    # the measurement groups are at the end; the preamble (3 to 5 fields) in front
    for halves in (2, 1):
        n_measure = group * halves
        preamble = tokens[:len(tokens) - n_measure]
        if 2 <= len(preamble) <= 5 and len(tokens) > n_measure:
            break
    else:
        return "too few or too many fields for an nccl-tests row"
    try:
        size, count = int(preamble[0]), int(preamble[1])
    except ValueError:
        return "size and count are not whole numbers"
    dtype = next((t for t in preamble[2:] if t in DTYPES), "")
    op = next((t for t in preamble[2:] if t.isalpha() and t not in DTYPES), "")
    roots = [t for t in preamble[2:] if re.match(r"^-?\d+$", t)]
    rows = []
    for h in range(halves):
        fields = tokens[len(preamble) + h * group: len(preamble) + (h + 1) * group]
        time_text, alg_text, bus_text, wrong_text = fields[:4]
        try:
            time_us = float(time_text)
            algbw = None if alg_text == "N/A" else float(alg_text)
            busbw = None if bus_text == "N/A" else float(bus_text)
        except ValueError:
            return f"unreadable time or bandwidth ({time_text!r}, {alg_text!r}, {bus_text!r})"
        wrong = _wrong(wrong_text, layout["legacy"])
        if wrong == "bad":
            return f"unreadable #wrong/error field {wrong_text!r}"
        rows.append(Row(size, time_us * 1e-6, algbw, busbw, wrong, ("out-of-place", "in-place")[h], count, dtype, op,
                        int(roots[0]) if roots else None, number))
    return rows


def _wrong(text: str, legacy: bool):
    if text == "N/A":
        return None
    try:
        value = float(text)
    except ValueError:
        return "bad"
    if legacy:   # the legacy column is the max absolute error, not a count
        return 0 if value == 0 else 1
    return int(value)


def _identify(t: Table, collective: str | None, file_binary: str | None) -> None:
    """The collective, rank and node counts: stated, else inferred (and the inference noted)."""
    devices = t.header.get("devices", [])
    if devices:
        t.ranks = len({d["rank"] for d in devices})
        t.nodes = len({d["host"] for d in devices})
        t.header["gpus"] = sorted({d["gpu"] for d in devices})
        t.header["hosts"] = sorted({d["host"] for d in devices})
    binary = t.header.get("binary") or file_binary
    name = _BINARY.search(binary).group(1) if binary and _BINARY.search(binary) else None
    t.collective = collective or (_COLLECTIVE[name] if name else "")
    if not t.collective:
        t.collective = _guess_collective(t)
        t.notes.append(f"collective not stated in the log; inferred {t.collective} from the columns "
                       "(give --collective to override)")
    ratio = _bus_ratio(t)
    if t.ranks is None and ratio is not None:
        inferred = _ranks_from_ratio(t.collective, ratio)
        if inferred:
            t.ranks = inferred
            t.notes.append(f"rank count not in the log (no device lines); inferred {inferred} from busbw/algbw = "
                           f"{ratio:.4f}")
    if t.collective in ("allgather", "reducescatter") and ratio is not None and abs(ratio - 1) < 0.005 \
            and (t.ranks or 0) > 1:
        t.header["old_algbw_convention"] = True
        t.notes.append("busbw equals algbw: the pre-June-2020 nccl-tests convention for all_gather/reduce_scatter "
                       "(algbw printed as size x (n-1)/n / time); algbw recomputed as size / time")
        for r in t.rows:
            if r.time_s > 0:
                r.algbw_GBps = float(algbw(r.size, r.time_s)) / 1e9


def _bus_ratio(t: Table) -> float | None:
    """busbw / algbw read from the rows with the most printed digits (the largest algbw)."""
    best = max((r for r in t.rows if r.algbw_GBps and r.busbw_GBps), key=lambda r: r.algbw_GBps, default=None)
    if best is None or best.algbw_GBps < 0.1:
        return None
    return best.busbw_GBps / best.algbw_GBps


def _ranks_from_ratio(collective: str, ratio: float) -> int | None:
    try:
        n = COLLECTIVES[collective].ranks_for_busbw_factor(ratio) if collective in COLLECTIVES else None
    except ZeroDivisionError:
        return None
    if n is None:
        return None
    return int(round(n)) if 1 < n < 100000 and abs(n - round(n)) < 0.15 else None


def _guess_collective(t: Table) -> str:
    ops = {r.op for r in t.rows if r.op and r.op != "none"}
    roots = {r.root for r in t.rows if r.root is not None}
    ratio = _bus_ratio(t) or 0
    if ops:
        if roots and roots != {-1}:
            return "reduce"
        return "allreduce" if ratio >= 1 or (t.ranks and abs(ratio - 2 * (t.ranks - 1) / t.ranks) < 0.02) \
            else "reducescatter"
    if roots and roots != {-1}:
        return "broadcast"
    return "allgather"
