"""Benchmark results and their writers: nccl-tests text, nccl-tests -J JSON (plus our fields), CSV.

A row is one (algorithm, size): nccl-tests' columns (size, count, type, redop, root, and for each
placement time, algbw, busbw, #wrong) plus our own: the per-iteration min and p50, the algorithm,
the model's predicted time and measured / predicted.

Conventions of the files (README, "bench"):
- text: one nccl-tests block per algorithm (`# Collective test starting: all_reduce_perf`, the nThread
  line, one `#  Rank N Group 0 Pid P on HOST device D [cpu] NAME` line per rank, the column header, the
  rows, `# Out of bounds values`, `# Avg bus bandwidth`), each row followed by three columns of ours
  (algorithm, pred(us), meas/pred) that the reader (ingest/nccltests.py) knows by their header names;
  a placement not run is four `N/A`. Lines of our own are `#` comments.
- JSON: the nccl-tests -J shape (results[].out_of_place.time/alg_bw/bus_bw/nwrong, us and GB/s) with
  `"version": "collperf"`, the collective, ranks and our fields; rewritten whole (atomically) after
  every row, so the file on disk is a complete document at any moment.
- CSV: one line per (row, placement), CSV_COLUMNS; rewritten atomically after every row too.
"""

from __future__ import annotations

import csv
import io
import json
import os
import time
from dataclasses import dataclass, field

from collperf.collectives import get_collective
from collperf.errors import RunError
from collperf.model.algorithms.modes import is_chooser
from collperf.ingest.row import PLACEMENTS, Row
from collperf.spec import output_path


class OutputError(RunError):
    """A result file could not be written (full disk, file-size limit): the run stops, its rows kept."""


@dataclass
class Results:
    collective: str
    ranks: int
    backend: str
    config: dict
    rows: list[Row]  # dicts with the rows' keys are taken too (Row.of)
    model: str = ""  # where the predictions come from
    started: float = field(default_factory=time.time)
    devices: list[dict] = field(default_factory=list)  # per rank: rank, host, pid, device, name
    peak_rss_bytes: list[int] = field(default_factory=list)  # per rank, getrusage ru_maxrss at the end
    stopped: str = ""  # "timed out after 3 rows" when the sweep ended early

    def __post_init__(self):
        self.rows = [Row.of(r) for r in self.rows]

    def algorithms(self) -> list[str]:
        return list(dict.fromkeys(r.algorithm for r in self.rows))

    def wrong_rows(self, rows=None) -> int:
        """(size, placement) tests with #wrong > 0, as nccl-tests' 'Out of bounds values'."""
        return sum(1 for r in (self.rows if rows is None else rows) for _, t in r.timings() if (t.wrong or 0) > 0)

    def to_json(self) -> dict:
        """The document `bench --json` prints (module function to_json)."""
        return to_json(self)

    def avg_busbw(self, algorithm: str) -> float:
        values = [t.busbw_GBps for r in self.rows if r.algorithm == algorithm for _, t in r.timings()]
        return sum(values) / len(values) if values else 0.0


def _float_str(value: float, width: int) -> str:
    """nccl-tests getFloatStr: %.2f if it fits the width, else %.1f, %.0f, then exponent form."""
    for fmt in ("{:.2f}", "{:.1f}", "{:.0f}"):
        text = fmt.format(value)
        if len(text) <= width:
            return text
    return f"{value:.{max(0, width - 6)}e}"


# --- nccl-tests text, block by block (so that a caller can stream it) ------------------------------------

# the names of our appended columns; ingest/nccltests.py strips columns with these names from each row
EXTRA_COLUMNS = ("algorithm", "pred(us)", "meas/pred")


def text_header(res: Results, algorithm: str, streaming: bool = False) -> str:
    """The lines before the rows of one algorithm's block."""
    c = res.config
    binary = get_collective(res.collective).nccl_tests_binary
    out = io.StringIO()
    out.write(f"# collperf bench: {res.collective}, algorithm {algorithm}, {res.ranks} ranks, {res.backend}\n")
    out.write(f"# Collective test starting: {binary}\n")
    out.write(
        f"# nThread 1 nGpus 1 minBytes {min(c['sizes'])} maxBytes {max(c['sizes'])} step: "
        f"{c['step']} warmup iters: {c['warmup']} iters: {c['iters']} agg iters: 1 "
        f"validation: {1 if c['check'] else 0} graph: 0\n"
    )
    out.write("#\n")
    if res.devices:
        out.write("# Using devices\n")
        for d in res.devices:
            out.write(
                f"#  Rank {d['rank']:2d} Group  0 Pid {d['pid']:6d} on {d['host']:>10s} device {d['device']:2d} "
                f"[{'cpu' if d['name'] == 'cpu' else 'gpu'}] {d['name']}\n"
            )
    if is_chooser(algorithm) and c.get("auto_network"):
        out.write(f"# auto: per size the model's fastest of our algorithms on {c['auto_network']}\n")
        for choice in c.get("auto") or []:
            m = choice.get("measured") if choice.get("decided_by") == "measured" else None
            if m:  # a close call timed before the sweep (model/auto/confirm.py)
                also = f" (also timed: {m['runner_up']['algorithm']})" if m.get("runner_up") else ""
                out.write(
                    f"# auto: {choice['size']} B decided by measurement at {m['size']} B: {m['algorithm']} "
                    f"{m['ours_us']:.0f} us vs builtin {m['builtin_us']:.0f} us{also} -> {choice['algorithm']}\n"
                )
    if res.model:
        out.write(f"# model: {res.model}\n")
    elif streaming:
        out.write("# model: fitted to this run's rows once the sweep ends (predictions after the last block)\n")
    out.write("#\n")
    out.write("#" + " " * 62 + "out-of-place                       in-place\n")
    out.write(
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong"
        "     time   algbw   busbw  #wrong  " + f"{EXTRA_COLUMNS[0]:18s}  {EXTRA_COLUMNS[1]:>8s}  "
        f"{EXTRA_COLUMNS[2]:>9s}\n"
    )
    out.write(
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)        "
        "     (us)  (GB/s)  (GB/s)\n"
    )
    return out.getvalue()


def text_row(r: Row) -> str:
    r = Row.of(r)
    out = io.StringIO()
    out.write(f"{r.size:12d}  {r.count:12d}  {r.type:>8s}  {r.redop:>6s}  {r.root:6d}")
    for pl in PLACEMENTS:
        m = getattr(r, pl)
        if m is None:
            out.write(f"  {'N/A':>7s}  {'N/A':>6s}  {'N/A':>6s}  {'N/A':>6s}")
        else:
            wrong = "N/A" if m.wrong is None else str(m.wrong)
            out.write(
                f"  {_float_str(m.time_us, 7):>7s}  {_float_str(m.algbw_GBps, 6):>6s}  "
                f"{_float_str(m.busbw_GBps, 6):>6s}  {wrong:>6s}"
            )
    pred = r.predicted_us
    ratio = r.out_of_place.time_us / pred if pred and r.out_of_place else None
    name = r.algorithm if r.auto is None else f"auto:{r.auto['algorithm']}"  # what auto ran
    out.write(
        f"  {name:18s}  {_float_str(pred, 8) if pred else 'N/A':>8s}  {_float_str(ratio, 9) if ratio else 'N/A':>9s}\n"
    )
    return out.getvalue()


def text_footer(res: Results, algorithm: str) -> str:
    """nccl-tests' footer; the block a stopped run was in when it stopped says so instead of 'concluded'
    (its counts are of the rows measured, and the reader marks the table incomplete)."""
    rows = [r for r in res.rows if r.algorithm == algorithm]
    wrong = res.wrong_rows(rows)
    binary = get_collective(res.collective).nccl_tests_binary
    cut = res.stopped and algorithm == (res.algorithms() or [algorithm])[-1]
    end = (
        f"# Collective test INCOMPLETE: {binary}: {res.stopped}\n"
        if cut
        else f"# Collective test concluded: {binary}\n"
    )
    return (
        f"# Out of bounds values : {wrong} {'OK' if wrong == 0 else 'FAILED'}"
        + (f" (of the {len(rows)} rows measured)" if cut else "")
        + "\n"
        f"# Avg bus bandwidth    : {res.avg_busbw(algorithm):g}\n#\n{end}#\n\n"
    )


def run_state(res: Results) -> str:
    """The completeness marker every output carries: 'complete', or 'INCOMPLETE: <how it ended>'."""
    if res.stopped:
        return f"INCOMPLETE: {res.stopped}"
    expected = len(res.config.get("sizes") or ()) * len(res.config.get("algorithms") or ())
    return "complete" if len(res.rows) >= expected else f"INCOMPLETE: {len(res.rows)} of {expected} rows"


def text_summary(res: Results, predictions: bool = False) -> str:
    """Comment lines after the blocks: the fitted predictions (when they could not stream), peak memory,
    and how the sweep ended early. Comments, so the whole output still reads as an nccl-tests log."""
    out = io.StringIO()
    if predictions and res.model:
        out.write(f"# model: {res.model}\n")
        if any(r.predicted_us for r in res.rows):
            out.write(f"# {'algorithm':>18s}  {'size':>12s}  {'time(us)':>9s}  {'pred(us)':>9s}  {'meas/pred':>9s}\n")
            for r in res.rows:
                m, pred = r.out_of_place, r.predicted_us
                if m and pred:
                    out.write(
                        f"# {r.algorithm:>18s}  {r.size:12d}  {_float_str(m.time_us, 9):>9s}  "
                        f"{_float_str(pred, 9):>9s}  {_float_str(m.time_us / pred, 9):>9s}\n"
                    )
    if res.peak_rss_bytes:
        peak = max(res.peak_rss_bytes)
        out.write(
            f"# peak resident memory per rank (getrusage ru_maxrss): max {peak / 2**20:.0f} MiB (rank "
            f"{res.peak_rss_bytes.index(peak)}), min {min(res.peak_rss_bytes) / 2**20:.0f} MiB\n"
        )
    if res.stopped:
        out.write(f"# collperf bench {res.stopped}\n")
    out.write(f"# collperf run: {run_state(res)}\n")
    return out.getvalue()


def to_text(res: Results) -> str:
    """One nccl-tests block per algorithm (so each parses as an nccl-tests log), our columns appended."""
    out = io.StringIO()
    for algorithm in res.algorithms():
        out.write(text_header(res, algorithm))
        for r in res.rows:
            if r.algorithm == algorithm:
                out.write(text_row(r))
        out.write(text_footer(res, algorithm))
    out.write(text_summary(res))
    return out.getvalue()


class TextStream:
    """Writes the text as rows arrive: a block's header before its first row, its footer when the next
    algorithm starts or the sweep ends (`close`)."""

    def __init__(self, write):
        self.write, self.algorithm = write, None

    def row(self, res: Results, row: Row) -> None:
        if row.algorithm != self.algorithm:
            self.end_block(res)
            self.algorithm = row.algorithm
            self.write(text_header(res, self.algorithm, streaming=True))
        self.write(text_row(row))

    def end_block(self, res: Results) -> None:
        if self.algorithm is not None:
            self.write(text_footer(res, self.algorithm))
            self.algorithm = None

    def close(self, res: Results) -> None:
        self.end_block(res)
        streamed_predictions = res.model.startswith("given")
        self.write(text_summary(res, predictions=not streamed_predictions))


def to_json(res: Results) -> dict:
    """The nccl-tests -J document shape, with our fields added to each result."""
    c = res.config
    return {
        "version": "collperf",
        "start_time": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(res.started)),
        "collective": res.collective,
        "ranks": res.ranks,
        "backend": res.backend,
        "model": res.model,
        "config": {
            "nthreads": 1,
            "ngpus": 1,
            "minimum_bytes": min(c["sizes"]),
            "maximum_bytes": max(c["sizes"]),
            "step_factor": c.get("factor"),
            "warmup_iters": c["warmup"],
            "iterations": c["iters"],
            "aggregated_iterations": 1,
            "validation": c["check"],
            "graph": 0,
            "dtype": c["dtype"],
            "op": c["op"],
            "algorithms": c["algorithms"],
            "slice_bytes": c["slice_bytes"],
            "devices": [
                {
                    "rank": d["rank"],
                    "hostname": d["host"],
                    "pid": d["pid"],
                    "device": d["device"],
                    "device_info": d["name"],
                }
                for d in res.devices
            ],
            **({"placement": c["placement"]} if "placement" in c else {}),
        },  # -A blink, --pattern
        "results": [r.to_json() for r in res.rows],
        "out_of_bounds": {"count": res.wrong_rows(), "okay": res.wrong_rows() == 0},
        "average_bus_bandwidth": {a: res.avg_busbw(a) for a in res.algorithms()},
        "peak_rss_bytes": res.peak_rss_bytes,
        "complete": not res.stopped and len(res.rows) == len(c["sizes"]) * len(c["algorithms"]),
        "stopped": res.stopped or None,
    }


# "algorithm,size,count" first: ingest sniffs the format from it; collective and ranks let `collperf fit`
# read the file without --collective
CSV_COLUMNS = [
    "algorithm",
    "size",
    "count",
    "type",
    "redop",
    "root",
    "placement",
    "time_us",
    "min_us",
    "p50_us",
    "algbw_GBps",
    "busbw_GBps",
    "wrong",
    "predicted_us",
    "measured_over_predicted",
    "collective",
    "ranks",
    "run",
]  # run_state on every line, as of the file's last rewrite (a killed run stays INCOMPLETE)


def to_csv(res: Results) -> str:
    buffer = io.StringIO()
    state = run_state(res)
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in res.rows:
        for pl, m in r.timings():
            pred = r.predicted_us
            writer.writerow(
                [
                    r.algorithm,
                    r.size,
                    r.count,
                    r.type,
                    r.redop,
                    r.root,
                    pl,
                    f"{m.time_us:.3f}",
                    f"{m.min_us:.3f}",
                    f"{m.p50_us:.3f}",
                    f"{m.algbw_GBps:.4f}",
                    f"{m.busbw_GBps:.4f}",
                    "" if m.wrong is None else m.wrong,
                    f"{pred:.3f}" if pred else "",
                    f"{m.time_us / pred:.4f}" if pred else "",
                    res.collective,
                    res.ranks,
                    state,
                ]
            )
    return buffer.getvalue()


def _replace(path: str, text: str, flag: str) -> None:
    """Write `text` to `path` atomically (a reader sees the old file or the new one, never half of one)."""
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "w", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:  # a full disk, a file-size limit: the previous file stays, the temporary goes
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise OutputError(
            f"cannot write {path}: {e.strerror or e}; it holds the rows up to the previous one "
            "(free space or pick another path)"
        ) from None


class ResultFiles:
    """The JSON and CSV files of a run, rewritten atomically after every row (`update`), so that a run cut
    short leaves complete, readable files of the rows it measured."""

    def __init__(self, json_path: str | None = None, csv_path: str | None = None):
        output_path(json_path, "--json-file")
        output_path(csv_path, "--csv-file")
        self.json_path, self.csv_path = json_path, csv_path

    def start(self) -> None:
        """Before the run: an older file of the same name goes, so that a run stopped before its first row
        leaves no earlier run's document claiming to be this one (or complete)."""
        for path in (self.json_path, self.csv_path):
            if path and os.path.isfile(path):
                os.remove(path)

    def update(self, res: Results) -> None:
        if self.json_path:
            _replace(self.json_path, json.dumps(to_json(res), indent=1) + "\n", "--json-file")
        if self.csv_path:
            _replace(self.csv_path, to_csv(res), "--csv-file")


def write(res: Results, json_path: str | None = None, csv_path: str | None = None) -> None:
    ResultFiles(json_path, csv_path).update(res)
