"""nccl-tests text logs of every vintage, as pasted from real clusters (NCCL tests src/common.cu).

Handles: the current format (#wrong, 5 preamble fields) and the legacy one (`error` column, 3 to 5
preamble fields), `N/A`, exponent forms, `-I` (i_min i_max i_p99 i_cv% after each #wrong) and `-S`
(timestamp) columns; `mpirun --tag-output` and `srun --label` prefixes, NCCL INFO/WARN and MPI lines inside the table,
renderers that drop the leading `#`, markdown indentation, several tests in one file, truncated files.
Rows are read from the right: the measurement groups are fixed, the preamble varies by test.
"""

from __future__ import annotations

import re

from collperf.collectives import COLLECTIVES, PROGRAMS
from collperf.ingest import collective_guess, consistency, host_layout, validate as v
from collperf.ingest.table import IngestError, Row, Table

# Every pattern here is linear in its input: literal anchors, and no two adjacent quantifiers that can
# share characters. Numbers are recognised by validate.is_number (no regex: a backtracking pattern is
# quadratic on a long run of digits).
# `mpirun --tag-output` ([1,0]<stdout>:) and `srun --label` (0:) prefixes
_PREFIX = re.compile(r"^\s*(?:\[\d+,\d+\]<std(?:out|err)>:|\d+:(?=\s))\s?")
# program name without `_perf` -> collective: one per collective (collectives.py), plus the nccl-tests
# programs that measure a collective under another name (alltoallv_perf, hypercube_perf: an allgather)
_COLLECTIVE = {program.removesuffix("_perf"): c.name for program, c in PROGRAMS.items()} | {
    "alltoallv": "alltoall",
    "hypercube": "allgather",
}
_BINARY = re.compile(r"\b(" + "|".join(sorted(_COLLECTIVE, key=len, reverse=True)) + r")_perf")
_DEVICE = re.compile(r"Rank (\S+) (?:Group \S+ )?Pid \S+ on (\S+) device (\S+) \[[^\]]*\] ?(.*)")
_FLAGS = re.compile(r"nThread (\S+) nGpus (\S+) minBytes \S+ maxBytes \S+(.*)")
_NOISE = re.compile(
    r"NCCL (INFO|WARN)|^\s*\S+:\d+:\d+ \[\d+\]|mpirun|WARNING|warning|Warning|^\s*--|"
    r"^\s*\*|^\s*(ubuntu|root)@|^\s*\$|Authorization|xpmem|btl|pml|orte|prterun|plm:"
)
DTYPES = {
    "int8",
    "uint8",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "half",
    "float",
    "double",
    "bfloat16",
    "f8e4m3",
    "f8e5m2",
    "fp8_e4m3",
    "fp8_e5m2",
}
# Largest |error| a legacy (pre-2.13) nccl-tests run accepted per type: DeltaMaxValue() in its src/common.cu
# (half 5e-2, float 1e-5, double 1e-12, integer types exact). A larger value counted as an out-of-bounds test.
_DELTA_MAX = {"half": 5e-2, "bfloat16": 5e-2, "float": 1e-5, "double": 1e-12}
_ELISION = ("...", "\u2026")
_NUMBER_START = frozenset("0123456789+-.eE")  # validate.is_number's characters; isdigit's ASCII ones among them
# the lines a table's header and footer are made of, each anchored at the line's start (after the '#'); a line is
# matched against them only when it starts with their literal (most lines of an INFO-heavy log start with none)
_TESTS_VERSION = re.compile(r"nccl-tests version (\S+)(.*)")
_STARTING = re.compile(r"Collective test starting: ?(\S+)")
_NCCL_VERSION = re.compile(r"NCCL version (\S+)")
_OUT_OF_BOUNDS = re.compile(r"Out of bounds values ?: ?(\S+) ?(\w*)")
_AVG_BUSBW = re.compile(r"Avg bus bandwidth ?: ?(\S+)")
_INCOMPLETE = re.compile(r"(?:Collective test INCOMPLETE: ?\S+?:|collperf run: INCOMPLETE:) ?(.*)")
_ANCHORS = (
    "nccl-tests version ",
    "Collective test ",
    "NCCL version ",
    "Out of bounds values",
    "Avg bus bandwidth",
    "collperf run: INCOMPLETE:",
)
_COLLPERF_COLUMNS = ("algorithm", "pred(us)", "meas/pred")  # collperf bench's own, after nccl-tests' columns


def looks_like(text: str) -> bool:
    return bool(re.search(r"(out-of-place|in-place|Avg bus bandwidth|nThread|busbw)", text))


def _words(line: str) -> list[str]:
    """The line's words, without the mpirun tag (joined by one space, every run of whitespace, tabs, NBSP and other
    unicode spaces included, becomes one space)."""
    first = line[:1]
    if first.isspace():
        first = line.lstrip()[:1]
    # a tag starts with '[' or a digit (isdigit holds for every \d): most lines start with a host name, no tag
    if first == "[" or first.isdigit():
        line = _PREFIX.sub("", line)
    return line.split()


def _noise(line: str) -> bool:
    """A line of NCCL, MPI or the shell, not of the table (the first literal test answers for NCCL INFO lines)."""
    return "NCCL INFO" in line or bool(_NOISE.search(line))


def _numberish(token: str) -> bool:
    """Looks like a number (a long run of digits too, so that it is reported rather than ignored)."""
    return v.is_number(token) or (token.isascii() and token.isdigit())


def parse(text: str, source: str = "<log>", collective: str | None = None) -> list[Table]:
    """Every test in an nccl-tests log, as Tables."""
    lines = text.splitlines()
    binaries = {m.group(0) for m in map(_BINARY.search, (ln for ln in lines if "_perf" in ln)) if m}
    # a table that does not name its test inherits the file's only test, never one of several
    file_binary = binaries.pop() if len(binaries) == 1 else None
    tables: list[Table] = []
    current = Table(source)
    layout: dict | None = None
    pending_header: dict = {}
    orphans: list[str] = []

    def finish():
        nonlocal current
        if current.rows:
            if not current.footer:
                current.notes.append(
                    "the table has no footer (Out of bounds / Avg bus bandwidth): the log may be truncated"
                )
                current.header.setdefault("incomplete", "the table has no footer: the log may be truncated")
            _legacy_wrong(current)
            tables.append(current)
        elif current.skipped:
            (tables[-1].skipped if tables else orphans).extend(current.skipped)
        current = Table(source)
        current.header.update({k: v for k, v in pending_header.items()})

    for number, raw in enumerate(lines, 1):
        words = _words(raw)
        line = " ".join(words)
        # the words are the body's unless the line is a comment (most lines of a log are not)
        body = line.lstrip("#").strip() if line.startswith("#") else line
        if not body:
            continue
        # each pattern below is tried only on a line that holds its literal: one test of the line's start and two
        # `in` tests answer for most lines of a log (NCCL INFO lines), in the order the patterns are tried
        anchored = body.startswith(_ANCHORS)
        if anchored or "nThread" in body or "Pid" in body:
            if anchored and (m := _TESTS_VERSION.match(body)):
                pending_header["nccl_tests_version"] = m.group(1)
                current.header["nccl_tests_version"] = m.group(1)
                continue
            if anchored and (m := _STARTING.match(body)):
                if current.rows:
                    finish()
                current.header["binary"] = m.group(1)
                continue
            if anchored and (m := _NCCL_VERSION.match(body)):
                pending_header["nccl_version"] = m.group(1)
                current.header["nccl_version"] = m.group(1)
                continue
            if "nThread" in body and (m := _FLAGS.search(body)):
                if current.rows:
                    finish()
                current.header["flags"] = body
                try:
                    current.header["nthreads"] = v.whole(m.group(1), "nThread", 1, v.MAX_RANK)
                    current.header["ngpus"] = v.whole(m.group(2), "nGpus", 1, v.MAX_RANK)
                except v.BadValue as e:
                    current.skipped.append(f"line {number}: {e}: expected '# nThread N nGpus N minBytes ...'")
                continue
            if "Pid" in body and (m := _DEVICE.search(body)):
                if current.rows:
                    finish()
                try:
                    device = {
                        "rank": v.whole(m.group(1), "device line rank", 0, v.MAX_RANK),
                        "host": m.group(2),
                        "device": v.whole(m.group(3), "device index", 0, v.MAX_RANK),
                        "gpu": m.group(4).strip(),
                    }
                except v.BadValue as e:
                    current.skipped.append(
                        f"line {number}: {e}: expected '#  Rank N Group N Pid N on HOST device N ...'"
                    )
                else:
                    current.header.setdefault("devices", []).append(device)
                continue
        if body in _ELISION and current.header.get("devices") and not current.rows:
            current.header["devices_elided"] = True
            continue
        if "size" in body and "time" in body and "size" in (names := body.split()) and "time" in names:
            if current.rows:
                finish()
            layout = _layout(names)
            current.header["columns"] = layout["preamble"]
            continue
        if anchored:
            if m := _OUT_OF_BOUNDS.match(body):
                try:
                    current.footer["out_of_bounds"] = v.whole(m.group(1), "Out of bounds values", 0, 1 << 63)
                    current.footer["status"] = m.group(2)
                except v.BadValue as e:
                    current.skipped.append(f"line {number}: {e}: expected '# Out of bounds values : N OK|FAILED'")
                continue
            if m := _AVG_BUSBW.match(body):
                try:
                    current.footer["avg_busbw_GBps"] = v.real(m.group(1), "Avg bus bandwidth", 0, v.MAX_BANDWIDTH_GBPS)
                except v.BadValue as e:
                    current.skipped.append(f"line {number}: {e}: expected '# Avg bus bandwidth : GB/s'")
                continue
            if body.startswith("Collective test concluded"):
                current.footer["concluded"] = True
                continue
            if m := _INCOMPLETE.match(body):
                # collperf bench's marker of a run that ended early (the run line follows the last block)
                (current if current.rows or not tables else tables[-1]).header["incomplete"] = m.group(1).strip()
                continue
        if line.startswith("#") or (body.startswith("(B)")):
            continue
        tokens = words if body is line else body.split()
        # a number starts with one of its characters: the test of the first one answers for most lines
        if len(tokens) >= 2 and tokens[0][0] in _NUMBER_START and _numberish(tokens[0]) and _numberish(tokens[1]):
            row_or_why = _row(tokens, layout, number)
            if layout and "algorithm" in layout.get("extra_names", ()) and len(tokens) == layout["width"]:
                position = len(tokens) - layout["extra"] + layout["extra_names"].index("algorithm")
                current.header.setdefault("algorithm", tokens[position])
            if isinstance(row_or_why, str):
                current.skipped.append(f"line {number}: {row_or_why}: {raw.strip()[:80]!r}")
            else:
                current.rows.extend(row_or_why)
            continue
        # under a column header, a line that is neither noise nor a row is reported, never dropped
        if (current.rows or layout is not None) and len(tokens) > 3 and not _noise(line):
            current.skipped.append(f"line {number}: not a row of the table: {raw.strip()[:80]!r}")
    finish()
    if not tables:
        why = f"; {orphans[0]}" if orphans else ""
        raise IngestError(
            f"{source}: no nccl-tests result rows found (expected lines of "
            f"'size count type redop root time algbw busbw #wrong ...' under a column header){why}"
        )
    if orphans:
        tables[0].skipped[:0] = orphans
    for t in tables:
        _identify(t, collective, file_binary)
    return tables


def _layout(header: list[str]) -> dict:
    """What a column header says: error or #wrong, per-iteration columns, timestamp."""
    names = [h.lower() for h in header]
    # collperf bench appends columns of its own after the measurement groups (results.EXTRA_COLUMNS)
    extra = 0
    while extra < len(names) and names[len(names) - 1 - extra] in _COLLPERF_COLUMNS:
        extra += 1
    return {
        "legacy": "error" in names,
        "per_iter": "i_min" in names,
        "timestamp": "timestamp" in names,
        "preamble": names[: names.index("time")] if "time" in names else [],
        "extra": extra,
        "width": len(names),
        "extra_names": names[len(names) - extra :],
    }


def _resolution(token: str) -> float:
    """Half a unit in the last printed digit of a number token (what rounding may have taken off)."""
    mantissa, _, exponent = token.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    scale = 10.0 ** int(exponent) if exponent else 1.0
    return 0.5 * 10.0**-decimals * scale


def _time_vs_algbw(size: int, time_text: str, time_us: float, alg_text: str, algbw: float) -> str | None:
    """Why the printed algbw is not size / time within the printed digits (nccl-tests: algbw = size / 1e9 / s)."""
    dt, da = _resolution(time_text), _resolution(alg_text)
    lo = size / (time_us + dt) / 1e3 - da
    hi = (size / (time_us - dt) / 1e3 if time_us > dt else float("inf")) + da
    if lo * 0.99 - 1e-9 <= algbw <= hi * 1.01 + 1e-9:
        return None
    return (
        f"algbw {alg_text} GB/s disagrees with size / time = {size / time_us / 1e3:.4g} GB/s "
        f"(size {size} B, time {time_text} us)"
    )


def _row(tokens: list[str], layout: dict | None, number: int):
    """Rows (out-of-place, in-place) from one line, or why it is not one."""
    layout = layout or {"legacy": False, "per_iter": False, "timestamp": False, "preamble": []}
    extra = layout.get("extra", 0)
    if extra and len(tokens) > layout["width"] - extra:  # a row that has our columns (not one cut to nccl-tests')
        tokens = tokens[: len(tokens) - extra]
    if layout["timestamp"] and len(tokens) >= 2 and re.match(r"\d{4}-\d\d-\d\d", tokens[-2]):
        tokens = tokens[:-2]
    group = 8 if layout["per_iter"] else 4
    # the measurement groups are at the end; the preamble (3 to 5 fields) in front
    for halves in (2, 1):
        n_measure = group * halves
        preamble = tokens[: len(tokens) - n_measure]
        if 2 <= len(preamble) <= 5 and len(tokens) > n_measure:
            break
    else:
        return "too few or too many fields for an nccl-tests row"
    try:
        size, count = v.size_bytes(preamble[0]), v.whole(preamble[1], "count", 0, v.MAX_COUNT)
        roots = [v.whole(t, "root", -1, v.MAX_RANK) for t in preamble[2:] if t.lstrip("+-").isdigit()]
    except v.BadValue as e:
        return str(e)
    dtype = next((t for t in preamble[2:] if t in DTYPES), "")
    op = next((t for t in preamble[2:] if t.isalpha() and t not in DTYPES), "")
    rows = []
    for h in range(halves):
        fields = tokens[len(preamble) + h * group : len(preamble) + (h + 1) * group]
        time_text, alg_text, bus_text, wrong_text = fields[:4]
        if time_text == "N/A":  # a placement that was not run (collperf bench writes N/A for all four)
            continue
        try:
            time_us = v.time_us(time_text)
            algbw, busbw = v.bandwidth(alg_text, "algbw"), v.bandwidth(bus_text, "busbw")
            if layout["legacy"]:
                error = None if wrong_text == "N/A" else v.real(wrong_text, "error", 0.0, float("inf"))
                wrong = None
            else:
                error, wrong = None, v.wrong_count(wrong_text)
        except v.BadValue as e:
            return str(e)
        row = Row(
            size,
            time_us * 1e-6,
            algbw,
            busbw,
            wrong,
            ("out-of-place", "in-place")[h],
            count,
            dtype,
            op,
            roots[0] if roots else None,
            number,
            error,
        )
        if algbw is not None and (why := _time_vs_algbw(size, time_text, time_us, alg_text, algbw)):
            row.flags.append(why)
        rows.append(row)
    return rows or "neither placement has a time"


def _legacy_wrong(t: Table) -> None:
    """Legacy tables print max |error|, not a count: a test was wrong when it exceeded the type's tolerance."""
    legacy = [r for r in t.rows if r.max_error is not None]
    if not legacy:
        return
    footer_ok = t.footer.get("out_of_bounds") == 0
    for r in legacy:
        r.wrong = 0 if footer_ok or r.max_error <= _DELTA_MAX.get(r.dtype, 0.0) else 1
    if any(r.max_error > 0 for r in legacy):
        t.notes.append(
            "legacy 'error' column is the largest |error|, not a count: "
            + (
                "the footer says 0 out-of-bounds, so non-zero values are rounding within tolerance"
                if footer_ok
                else "values above the type's tolerance (nccl-tests DeltaMaxValue: half "
                "5e-2, float 1e-5, double 1e-12, integers 0) count as wrong"
            )
        )


def _identify(t: Table, collective: str | None, file_binary: str | None) -> None:
    """The collective, rank and node counts: stated, else inferred (and the inference noted)."""
    _ranks_from_devices(t)
    binary = t.header.get("binary") or file_binary
    name = _BINARY.search(binary).group(1) if binary and _BINARY.search(binary) else None
    t.collective = collective or (_COLLECTIVE[name] if name else "")
    t.header["collective_from"] = "given" if collective else ("log" if name else "inferred")
    if not t.collective:
        t.collective = _guess_collective(t)
        if not t.collective:
            t.notes.append(t.header["collective_undecided"])
            return
        t.notes.append(
            f"collective not stated in the log; inferred {t.collective} from the columns "
            "(give --collective to override)"
        )
    ratio = _bus_ratio(t)
    if t.ranks is None and ratio is not None:
        inferred = _ranks_from_ratio(t.collective, ratio)
        if inferred:
            t.ranks = inferred
            t.header["ranks_from"] = "busbw/algbw"
            why = "device lines elided with '...'" if t.header.get("devices_elided") else "no device lines"
            t.notes.append(f"rank count not in the log ({why}); inferred {inferred} from busbw/algbw = {ratio:.4f}")
    # a table-wide convention: every row's algbw is off by (n-1)/n, so look at the flagged rows too
    whole_table = consistency.ratio_of(t, flagged=True)
    if (
        t.collective in ("allgather", "reducescatter")
        and whole_table
        and abs(whole_table[0] - 1) < 0.005
        and (t.ranks or 0) > 1
    ):
        t.header["old_algbw_convention"] = True
        t.notes.append(
            "busbw equals algbw: the pre-June-2020 nccl-tests convention for all_gather/reduce_scatter "
            "(algbw printed as size x (n-1)/n / time); algbw recomputed as size / time"
        )
        for r in t.rows:
            r.flags = [f for f in r.flags if not f.startswith("algbw")]
            r.algbw_GBps = r.size / r.time_s / 1e9
    else:
        consistency.check_factor(t)
    consistency.note_flags(t)


def _ranks_from_devices(t: Table) -> None:
    """Ranks and nodes from the device lines, unless lines were elided ('...' or a gap in the rank numbers)."""
    devices = t.header.get("devices", [])
    if not devices:
        return
    ranks = {d["rank"] for d in devices}
    t.header["gpus"] = sorted({d["gpu"] for d in devices})
    t.header["hosts"] = sorted({d["host"] for d in devices})
    if t.header.get("devices_elided") or ranks != set(range(len(ranks))):
        t.header["devices_elided"] = True
        t.header["ranks_at_least"] = max(ranks) + 1
        t.notes.append(
            f"device lines are elided (ranks listed: {len(ranks)}, highest {max(ranks)}): the rank and "
            "node counts are not read from them"
        )
        # the lines that remain may still number the hosts: the layout once the rank count is known (host_layout)
        per_host, why, hosts = host_layout.read_layout(devices)
        t.header.update(gpus_per_host=per_host, host_layout=why, hosts_at_least=hosts)
        return
    t.ranks = len(ranks)
    t.nodes = len(t.header["hosts"])
    t.header["ranks_from"] = "device lines"


def _bus_ratio(t: Table) -> float | None:
    """busbw / algbw read from the rows with the most printed digits (the largest algbw)."""
    found = consistency.ratio_of(t)
    return found[0] if found else None


def _ranks_from_ratio(collective: str, ratio: float) -> int | None:
    try:
        n = COLLECTIVES[collective].ranks_for_busbw_factor(ratio) if collective in COLLECTIVES else None
    except ZeroDivisionError:
        return None
    if n is None:
        return None
    return int(round(n)) if 1 < n < 100000 and abs(n - round(n)) < 0.15 else None


def _guess_collective(t: Table) -> str:
    """From ops, roots, the count column and busbw/algbw, and only when every row agrees on busbw/algbw; '' where
    the table cannot settle it (collective_guess.undecided)."""
    found = consistency.ratio_of(t)
    ratio = found[0] if found else None
    if found and (odd := consistency.disagreeing(t, found[0], found[1])):
        r = odd[0]
        raise IngestError(
            f"{t.source}, line {r.line}: the log does not name its test and busbw/algbw differs "
            f"between rows ({r.busbw_GBps:g}/{r.algbw_GBps:g} here, {ratio:.4f} at the largest algbw): "
            "cannot infer the collective; pass --collective"
        )
    return collective_guess.guess(t, ratio or 0)
