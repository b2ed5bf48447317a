"""Calibrate the expected band on the corpus of public runs, write the data file, and cross-validate it.

    python benchmarks/calibrate_corpus.py            # fit, write src/collperf/data/calibration.json, LOSO table
    python benchmarks/calibrate_corpus.py --check    # LOSO table only (the committed file is left alone)

Fit: per fabric class, a per-call overhead, a factor on NCCL's model time and an achieved fraction of the
bound (the typical time; runs with one or two GPUs per node at one fraction of the bound for all classes), and
per size regime the 10th/50th/90th percentile of measured / typical over the
rows of every healthy corpus log (expect/band.py). Leave-one-source-out: for every source group
of the index, fit on all the others and judge that source's logs with the fit; per log, the median error
of the calibrated typical time over rows >= 1 MiB (and of NCCL's model alone, side by side), the overall
verdict of healthy logs (a "slower than expected" there is a false alarm), whether known-bad logs are
still flagged, and the band's coverage: the share of the healthy rows >= 1 MiB inside the band, faster and slower
than it (an honest 10th-90th percentile band holds about 80 % of runs it was not fitted on). Prints one table per
fabric class and the totals quoted in docs/calibration.md.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from collperf.diagnose.corpus_fit import build, cross_validate, read_corpus

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "src" / "collperf" / "data" / "corpus"
OUT = ROOT / "src" / "collperf" / "data" / "calibration.json"


def _pct(values, q):
    values = [v for v in values if v is not None]
    return f"{100 * float(np.percentile(values, q)):5.1f} %" if values else "    -  "


def report(results: list[dict]) -> None:
    by = defaultdict(list)
    for r in results:
        by[r["fabric"]].append(r)
    print(
        f"{'fabric':15} {'logs':>4} {'bad':>4} {'median err':>10} {'p90 err':>8} {'NCCL model':>10} "
        f"{'false slow':>10} {'bad flagged':>11} {'in band':>7} {'faster':>6} {'slower':>6}"
    )
    for fabric in sorted(by) + ["all"]:
        rows = results if fabric == "all" else by[fabric]
        healthy = [r for r in rows if r["healthy"]]
        bad = [r for r in rows if not r["healthy"]]
        false = sum(r["verdict"].startswith("slower") for r in healthy)
        print(
            f"{fabric:15} {len(rows):4d} {len(bad):4d} {_pct([r['error'] for r in healthy], 50):>10} "
            f"{_pct([r['error'] for r in healthy], 90):>8} {_pct([r['model_error'] for r in healthy], 50):>10} "
            f"{false:10d} {sum(r['flagged'] for r in bad):5d} of {len(bad):<3d} {_coverage(healthy)}"
        )


def _coverage(healthy: list[dict]) -> str:
    """Of the healthy logs' rows >= 1 MiB, the share inside the band, faster than it and slower than it (each
    log's rows as they are: a long sweep counts more rows)."""
    counts = {k: sum(r["band_rows"][k] for r in healthy) for k in ("inside", "faster", "slower")}
    total = sum(counts.values())
    if not total:
        return f"{'-':>7} {'-':>6} {'-':>6}"
    return " ".join(f"{100 * counts[k] / total:{w}.0f} %" for k, w in (("inside", 5), ("faster", 4), ("slower", 4)))


def _dumps(data: dict) -> str:
    """The data file: the bands indented, one peer run per line (a readable diff when the corpus grows)."""
    head = json.dumps({k: v for k, v in data.items() if k != "peers"}, indent=1, sort_keys=True)
    peers = ",\n".join("  " + json.dumps(p, sort_keys=True, separators=(",", ":")) for p in data["peers"])
    return head[:-2] + ',\n "peers": [\n' + peers + "\n ]\n}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="cross-validate only; do not write the data file")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--verbose", action="store_true", help="one line per log")
    args = parser.parse_args()
    logs = read_corpus(args.corpus)
    if not args.check:
        data = build(logs)
        OUT.write_text(_dumps(data))
        print(
            f"wrote {OUT.relative_to(ROOT)}: {data['logs']} healthy logs from {data['sources']} sources, "
            f"fabric classes {', '.join(k for k in data['bands'] if k != 'all')}"
        )
        print(f"{'class':15} {'overhead':>9} {'x model':>8} {'of bound':>8}  fitted on")
        for name, entry in data["bands"].items():
            fit = entry["fit"]
            print(
                f"{name:15} {fit['overhead_us']:6.0f} us {fit['model_factor']:8.2f} {fit['bound_fraction']:8.2f}  "
                f"{fit['logs']} logs from {fit['sources']} sources ({fit['of']})"
            )
        sparse = data["bands"]["all"]["fit"].get("sparse_fraction", 0.0)
        print(
            f"runs with one or two GPUs per node (every class): {sparse:g} of the bound"
            if sparse
            else "no run with one or two GPUs per node: no sparse fraction"
        )
    results = cross_validate(logs)
    if args.verbose:
        for r in results:
            err = f"{100 * r['error']:.1f} %" if r["error"] is not None else "-"
            beyond = f"{r['beyond']:.2f}" if r["beyond"] is not None else "-"
            print(
                f"{r['id'][:48]:48} {r['fabric']:13} {'ok ' if r['healthy'] else 'BAD'} {err:>8} {beyond:>5}  "
                f"{r['verdict'][:60]}"
            )
    print(f"leave-one-source-out over {len(results)} logs from {len({r['source'] for r in results})} sources:")
    report(results)


if __name__ == "__main__":
    main()
