"""Benchmark results and their writers: nccl-tests text, nccl-tests -J JSON (plus our fields), CSV.

A row is one (algorithm, size): nccl-tests' columns (size, count, type, redop, root, and for each
placement time, algbw, busbw, #wrong) plus our own: the per-iteration min and p50, the algorithm,
the model's predicted time and measured / predicted.
"""

from __future__ import annotations

import csv
import io
import json
import time
from dataclasses import dataclass, field

from collperf.collectives import get_collective

PLACEMENTS = ("out_of_place", "in_place")


@dataclass
class Results:
    collective: str
    ranks: int
    backend: str
    config: dict
    rows: list[dict]
    model: str = ""                       # where the predictions come from
    started: float = field(default_factory=time.time)

    def algorithms(self) -> list[str]:
        return list(dict.fromkeys(r["algorithm"] for r in self.rows))

    def wrong_rows(self) -> int:
        """(size, placement) tests with #wrong > 0, as nccl-tests' 'Out of bounds values'."""
        return sum(1 for r in self.rows for pl in PLACEMENTS if r.get(pl) and (r[pl]["wrong"] or 0) > 0)

    def avg_busbw(self, algorithm: str) -> float:
        values = [r[pl]["busbw"] for r in self.rows if r["algorithm"] == algorithm for pl in PLACEMENTS if r.get(pl)]
        return sum(values) / len(values) if values else 0.0


def _float_str(value: float, width: int) -> str:
    """nccl-tests getFloatStr: %.2f if it fits the width, else %.1f, %.0f, then exponent form."""
    for fmt in ("{:.2f}", "{:.1f}", "{:.0f}"):
        text = fmt.format(value)
        if len(text) <= width:
            return text
    return f"{value:.{max(0, width - 6)}e}"


def to_text(res: Results) -> str:
    """One nccl-tests block per algorithm (so each parses as an nccl-tests log), our columns appended."""
    c = res.config
    out = io.StringIO()
    for algorithm in res.algorithms():
        rows = [r for r in res.rows if r["algorithm"] == algorithm]
        out.write(f"# collperf bench: {res.collective}, algorithm {algorithm}, {res.ranks} ranks, {res.backend}\n")
        out.write(f"# Collective test starting: {get_collective(res.collective).nccl_tests_binary}\n")
        out.write(f"# nThread 1 nGpus 1 minBytes {min(c['sizes'])} maxBytes {max(c['sizes'])} step: "
                  f"{c['step']} warmup iters: {c['warmup']} iters: {c['iters']} agg iters: 1 "
                  f"validation: {1 if c['check'] else 0} graph: 0\n")
        if res.model:
            out.write(f"# model: {res.model}\n")
        out.write("#\n")
        out.write("#" + " " * 62 + "out-of-place                       in-place\n")
        out.write("#       size         count      type   redop    root     time   algbw   busbw  #wrong"
                  "     time   algbw   busbw  #wrong  algorithm           pred(us)  meas/pred\n")
        out.write("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)        "
                  "     (us)  (GB/s)  (GB/s)\n")
        for r in rows:
            out.write(f"{r['size']:12d}  {r['count']:12d}  {r['type']:>8s}  {r['redop']:>6s}  {r['root']:6d}")
            for pl in PLACEMENTS:
                m = r.get(pl)
                if m is None:
                    out.write(f"  {'N/A':>7s}  {'N/A':>6s}  {'N/A':>6s}  {'N/A':>6s}")
                else:
                    wrong = "N/A" if m["wrong"] is None else str(m["wrong"])
                    out.write(f"  {_float_str(m['time_us'], 7):>7s}  {_float_str(m['algbw'], 6):>6s}  "
                              f"{_float_str(m['busbw'], 6):>6s}  {wrong:>6s}")
            pred = r.get("predicted_us")
            ratio = r["out_of_place"]["time_us"] / pred if pred else None
            out.write(f"  {algorithm:18s}  {_float_str(pred, 8) if pred else 'N/A':>8s}  "
                      f"{_float_str(ratio, 9) if ratio else 'N/A':>9s}\n")
        wrong = sum(1 for r in rows for pl in PLACEMENTS if r.get(pl) and (r[pl]["wrong"] or 0) > 0)
        out.write(f"# Out of bounds values : {wrong} {'OK' if wrong == 0 else 'FAILED'}\n")
        out.write(f"# Avg bus bandwidth    : {res.avg_busbw(algorithm):g}\n")
        out.write("#\n")
        out.write(f"# Collective test concluded: {get_collective(res.collective).nccl_tests_binary}\n#\n\n")
    return out.getvalue()


def to_json(res: Results) -> dict:
    """The nccl-tests -J document shape, with our fields added to each result."""
    c = res.config
    return {
        "version": "collperf", "start_time": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(res.started)),
        "collective": res.collective, "ranks": res.ranks, "backend": res.backend, "model": res.model,
        "config": {"nthreads": 1, "ngpus": 1, "minimum_bytes": min(c["sizes"]), "maximum_bytes": max(c["sizes"]),
                   "step_factor": c.get("factor"), "warmup_iters": c["warmup"], "iterations": c["iters"],
                   "aggregated_iterations": 1, "validation": c["check"], "graph": 0, "dtype": c["dtype"],
                   "op": c["op"], "algorithms": c["algorithms"], "slice_bytes": c["slice_bytes"]},
        "results": [{
            "size": r["size"], "count": r["count"], "type": r["type"], "redop": r["redop"], "root": r["root"],
            "algorithm": r["algorithm"], "predicted_us": r.get("predicted_us"),
            **{pl: None if r.get(pl) is None else {
                "time": r[pl]["time_us"], "alg_bw": r[pl]["algbw"], "bus_bw": r[pl]["busbw"],
                "nwrong": r[pl]["wrong"], "min_us": r[pl]["min_us"], "p50_us": r[pl]["p50_us"]} for pl in PLACEMENTS},
        } for r in res.rows],
        "out_of_bounds": {"count": res.wrong_rows(), "okay": res.wrong_rows() == 0},
        "average_bus_bandwidth": {a: res.avg_busbw(a) for a in res.algorithms()},
    }


CSV_COLUMNS = ["algorithm", "size", "count", "type", "redop", "root", "placement", "time_us", "min_us", "p50_us",
               "algbw_GBps", "busbw_GBps", "wrong", "predicted_us", "measured_over_predicted"]


def to_csv(res: Results) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for r in res.rows:
        for pl in PLACEMENTS:
            m = r.get(pl)
            if m is None:
                continue
            pred = r.get("predicted_us")
            writer.writerow([r["algorithm"], r["size"], r["count"], r["type"], r["redop"], r["root"], pl,
                             f"{m['time_us']:.3f}", f"{m['min_us']:.3f}", f"{m['p50_us']:.3f}", f"{m['algbw']:.4f}",
                             f"{m['busbw']:.4f}", "" if m["wrong"] is None else m["wrong"],
                             f"{pred:.3f}" if pred else "", f"{m['time_us'] / pred:.4f}" if pred else ""])
    return buffer.getvalue()


def write(res: Results, json_path: str | None = None, csv_path: str | None = None) -> None:
    if json_path:
        with open(json_path, "w") as f:
            json.dump(to_json(res), f, indent=1)
    if csv_path:
        with open(csv_path, "w", newline="") as f:
            f.write(to_csv(res))
