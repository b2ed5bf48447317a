"""What healthy systems achieve relative to NCCL's model: the calibrated expectation.

NCCL's tuning model (model/nccl) is a selection heuristic, not what real systems reach: on public healthy
nccl-tests logs the measured time is typically 1.2-2x its model time, and by how much depends on the
fabric (EFA and TCPX lose more than InfiniBand) and the size regime. So the expectation is a band:

    ratio = measured time / NCCL's expected time (model/nccl `expect`: its choice, launch overhead, bound)

per fabric class (model/system.py FABRICS) and size (one band per octave, GRID_LOG2), over the rows of
healthy public runs (the corpus in collperf/data/corpus), each log weighing the same at each size. The band
is the 10th-90th percentile of that ratio, the typical time its median. `fit_bands` computes it from samples (the offline
script benchmarks/calibrate_corpus.py writes the committed table); `band` applies a table to one
prediction. Pure: the table is data passed in.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

KIB, MIB = 1 << 10, 1 << 20
# The size regimes are one octave apart: the band at size 2^k pools the rows within WINDOW octaves of it,
# weighted by a Gaussian of SIGMA octaves, each log weighing the same (so a long sweep does not outvote a
# short one). A protocol or algorithm switch moves the ratio over an octave or two, not more.
GRID_LOG2 = tuple(range(3, 37))            # 8 B .. 64 GiB
WINDOW, SIGMA = 2.0, 1.0
LOW_Q, MID_Q, HIGH_Q = 0.10, 0.50, 0.90
# a class with fewer logs (or sources) than this at a size borrows the band of its group, then of all
MIN_LOGS, MIN_SOURCES = 3, 2
POOLED = "all"
# the groups a class borrows from: the fabrics between nodes, and those inside one node
GROUPS = {"network": ("ib", "roce", "efa", "tcpx", "tcpxo", "socket"),
          "node": ("nvswitch", "nvswitch-nvls", "nvl72", "xgmi", "pcie-p2p", "pcie-host")}


@dataclass(frozen=True)
class Sample:
    """One healthy log's rows: its fabric class, its source (the unit left out in cross-validation), sizes,
    and measured / NCCL-model time and bound / measured time per size."""

    log: str
    source: str
    fabric: str
    size_bytes: np.ndarray
    ratio: np.ndarray
    efficiency: np.ndarray
    family: str = ""          # the GPU's catalogue family (dgx-h100 for any H100): a finer class where it has data


@dataclass(frozen=True)
class Band:
    """Per size: the band of what healthy systems of this fabric take (low, typical, high: seconds) and
    where it comes from."""

    low_s: np.ndarray
    typical_s: np.ndarray
    high_s: np.ndarray
    fabric: list
    provenance: list = field(default_factory=list)
    logs: list = field(default_factory=list)       # how many public runs each size's band rests on


def _grid_index(size_bytes) -> np.ndarray:
    """The grid point (octave) of each size."""
    n = np.maximum(np.atleast_1d(np.asarray(size_bytes, dtype=float)), 1.0)
    k = np.clip(np.rint(np.log2(n)), GRID_LOG2[0], GRID_LOG2[-1]).astype(int)
    return k - GRID_LOG2[0]


def _weighted_quantiles(values: np.ndarray, weights: np.ndarray, qs) -> list[float]:
    """Quantiles of a weighted sample: the smallest value whose cumulative weight reaches q, the mean of it and the
    next value where the cumulative weight is exactly q (so ten equal logs give a median between the 5th and 6th)."""
    order = np.argsort(values, kind="stable")
    v, w = values[order], weights[order]
    cum = np.cumsum(w) / w.sum()
    out = []
    for q in qs:
        i = min(int(np.searchsorted(cum, q - 1e-9)), v.size - 1)
        exact = abs(cum[i] - q) <= 1e-9 and i + 1 < v.size
        out.append(float((v[i] + v[i + 1]) / 2 if exact else v[i]))
    return out


def _stats_at(samples: list[Sample], k: int) -> dict | None:
    """Percentiles of the ratio (and the efficiency) of the rows near size 2^k."""
    values, weights, eff, logs, sources = [], [], [], set(), set()
    for s in samples:
        d = np.log2(np.maximum(s.size_bytes, 1.0)) - k
        ok = (np.abs(d) <= WINDOW) & np.isfinite(s.ratio) & (s.ratio > 0)
        if not ok.any():
            continue
        w = np.exp(-0.5 * (d[ok] / SIGMA) ** 2)
        values.append(s.ratio[ok])
        weights.append(w / w.sum())
        eff.append(s.efficiency[ok])
        logs.add(s.log)
        sources.add(s.source)
    if not values:
        return None
    v, w, e = np.concatenate(values), np.concatenate(weights), np.concatenate(eff)
    lo, mid, hi = _weighted_quantiles(v, w, (LOW_Q, MID_Q, HIGH_Q))
    e_ok = np.isfinite(e)
    effs = _weighted_quantiles(e[e_ok], w[e_ok], (LOW_Q, MID_Q, HIGH_Q)) if e_ok.any() else [None] * 3
    return {"low": round(lo, 4), "typical": round(mid, 4), "high": round(hi, 4), "logs": len(logs),
            "sources": len(sources), "efficiency": [None if x is None else round(x, 4) for x in effs]}


def fit_bands(samples: list[Sample]) -> dict:
    """{class: {"2^k": stats}} for every fabric class in the samples, each group of GROUPS and POOLED.
    stats: low/typical/high ratio (10th/50th/90th percentile), logs, sources, efficiency percentiles."""
    classes = {f: [s for s in samples if s.fabric == f] for f in sorted({s.fabric for s in samples})}
    for fabric, family in sorted({(s.fabric, s.family) for s in samples if s.family}):
        classes[f"{fabric}:{family}"] = [s for s in samples if (s.fabric, s.family) == (fabric, family)]
    for group, members in GROUPS.items():
        classes[group] = [s for s in samples if s.fabric in members]
    classes[POOLED] = list(samples)
    return {name: {str(k): st for k in GRID_LOG2 if (st := _stats_at(group, k)) is not None}
            for name, group in classes.items() if group}


def _enough(stats: dict | None) -> bool:
    return bool(stats) and stats["logs"] >= MIN_LOGS and stats["sources"] >= MIN_SOURCES


def _pick(table: dict, fabric: str, k: int, family: str = "") -> tuple[dict | None, str]:
    key = str(k)
    mine = table.get(f"{fabric}:{family}", {}).get(key) if family else None
    if _enough(mine):
        return mine, (f"calibrated on {mine['logs']} public runs of this GPU family on this fabric class "
                      f"({family}, {fabric}) from {mine['sources']} sources")
    own = table.get(fabric, {}).get(key)
    if _enough(own):
        return own, (f"calibrated on {own['logs']} public runs of this fabric class ({fabric}) from "
                     f"{own['sources']} sources")
    group = next((g for g, members in GROUPS.items() if fabric in members), POOLED)
    have = f"{own['logs']} {fabric} run(s)" if own else f"no {fabric} runs"
    for name in (group, POOLED):
        stats = table.get(name, {}).get(key)
        if _enough(stats):
            what = "all fabric classes" if name == POOLED else f"the {name} fabric classes"
            return _widen(stats, own), (f"calibrated on {stats['logs']} public runs of {what} ({have} at this "
                                        "size, too few for a band of their own)")
    return None, "not calibrated: too few public runs near this size"


def _widen(borrowed: dict, own: dict | None) -> dict:
    """A borrowed band spans the class's own few runs too: a class unlike its group (TCPX among the network
    fabrics) is not called slow for being itself; its own runs also give the typical time where there are any."""
    if not own:
        return borrowed
    return {**borrowed, "low": min(borrowed["low"], own["low"]), "high": max(borrowed["high"], own["high"]),
            "typical": own["typical"] if WIDEN_TYPICAL else borrowed["typical"]}


WIDEN_TYPICAL = False


def band(size_bytes, model_time_s, fabric: str, table: dict, floor_s=None, family: str = "") -> Band:
    """The calibrated band of each size around NCCL's model time (never below `floor_s`, the bound): from the
    runs of the same GPU family on the fabric class where there are enough, else of the class, its group, all."""
    n = np.atleast_1d(np.asarray(size_bytes, dtype=float))
    t = np.atleast_1d(np.asarray(model_time_s, dtype=float))
    factors = np.full((3, n.size), np.nan)
    provenance, logs = [], []
    for i, g in enumerate(_grid_index(n)):
        stats, why = _pick(table, fabric, GRID_LOG2[g], family)
        provenance.append(why)
        logs.append(stats["logs"] if stats else 0)
        if stats:
            factors[:, i] = (stats["low"], stats["typical"], stats["high"])
    low, typical, high = factors[0] * t, factors[1] * t, factors[2] * t
    if floor_s is not None:
        floor = np.atleast_1d(np.asarray(floor_s, dtype=float))
        low, typical, high = (np.maximum(x, floor) for x in (low, typical, high))
    return Band(low, typical, high, [fabric] * n.size, provenance, logs)
