"""Fitting the calibrated expectation (expect/band.py) on healthy public runs: the two-part model's grid
search per fabric class, the borrowed fits and own overheads, the sparse layouts' fraction of the bound, and
the band table (`fit_bands`) the offline script benchmarks/calibrate_corpus.py commits.

Every setting is judged by one objective: per log, the median relative error of the typical time over its
quoted rows (>= FIT_MIN_BYTES), plus TIE_BREAK x the mean, capped at ERROR_CAP; the mean of that over logs.
The typical time is calibration.typical_time, the expression `band` applies, evaluated on the grids at once.
Pure: samples in, a table out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from collperf.expect.band import (
    BOUND_FRACTION,
    ERROR_CAP,
    FIT_MIN_BYTES,
    GRID_LOG2,
    GROUPS,
    HIGH_Q,
    LOW_Q,
    MID_Q,
    MODEL_FACTOR,
    OVERHEAD_US,
    POOLED,
    SIGMA,
    TIE_BREAK,
    WINDOW,
    Fit,
    Calibration,
    FloatArray,
    Sample,
    enough_for_fit,
    group_of,
    typical_time,
)

# the grids as broadcasting axes: overhead x model factor x bound fraction x rows
_OVERHEAD_S = OVERHEAD_US[:, None, None, None] * 1e-6
_FACTOR = MODEL_FACTOR[:, None, None]
_FRACTION = BOUND_FRACTION[:, None]


def _weighted_quantiles(values: FloatArray, weights: FloatArray, qs: Iterable[float]) -> list[float]:
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


def _quoted_rows(s: Sample) -> npt.NDArray[np.bool_]:
    """The rows a log's error is quoted on: >= FIT_MIN_BYTES, all rows if none is."""
    ok: npt.NDArray[np.bool_] = np.isfinite(s.time_s) & (s.time_s > 0) & np.isfinite(s.model_s)
    big: npt.NDArray[np.bool_] = ok & (s.size_bytes >= FIT_MIN_BYTES)
    return big if big.any() else ok


def _log_error(predicted_s: FloatArray, time_s: FloatArray, tie_break: float = TIE_BREAK) -> FloatArray:
    """One log's error over its last axis (its quoted rows): the median relative error, plus `tie_break` x the
    mean. In the grid search a little of the mean decides between settings the median cannot tell apart (a
    factor on NCCL's model where the bound term rules most rows); the sparse fraction is chosen on the median
    alone (tie_break 0), the error that is quoted: with the mean added it chose a fraction whose
    leave-one-source-out errors were worse (median 10.1 -> 10.6 %, p90 36.2 -> 46.7 % on an 89-log corpus)."""
    errors = np.abs(predicted_s - time_s) / time_s
    error: FloatArray = np.median(errors, axis=-1) + tie_break * np.mean(errors, axis=-1)
    return error


_GRID_CACHE: dict[tuple[float, str, bytes, bytes, bytes, bytes], FloatArray] = {}


def _grid_errors(s: Sample, sparse_fraction: float = 0.0) -> FloatArray:
    """The log's objective at every grid point: an array (overhead, model factor, bound fraction); a sparse
    layout's typical time at `sparse_fraction` of the bound (0: judged as dense). Kept per log content and
    fraction: cross-validation refits many times."""
    fraction = sparse_fraction if s.sparse else 0.0
    key = (fraction, s.log, s.time_s.tobytes(), s.model_s.tobytes(), s.bound_s.tobytes(), s.size_bytes.tobytes())
    if key not in _GRID_CACHE:
        rows = _quoted_rows(s)
        predicted = typical_time(_OVERHEAD_S, _FACTOR, _FRACTION, s.model_s[rows], s.bound_s[rows], fraction)
        _GRID_CACHE[key] = _log_error(predicted, s.time_s[rows])
    return _GRID_CACHE[key]


def fit_two_part(samples: list[Sample], of: str = "", sparse_fraction: float = 0.0) -> Fit:
    """The grid point with the least mean, over logs, of each log's objective capped at ERROR_CAP (a log that
    far from every setting is an outlier of the class: it should not steer the others' fit). Each log weighs
    the same, as in the band; weighing sources instead lets one odd single-log source outvote a source's
    several consistent runs (EFA: a T4 pair against p4d/p5 nodes). A sparse layout's typical time is the bound
    over `sparse_fraction`: only the overhead is the class's (where its rows have a bound)."""
    errors = np.mean([np.minimum(_grid_errors(s, sparse_fraction), ERROR_CAP) for s in samples], axis=0)
    i, j, k = np.unravel_index(int(np.argmin(errors)), errors.shape)
    return Fit(
        float(OVERHEAD_US[i]),
        float(MODEL_FACTOR[j]),
        float(BOUND_FRACTION[k]),
        len(samples),
        len({s.source for s in samples}),
        of,
        sparse_fraction,
    )


def _at(grid: FloatArray, value: float) -> int:
    return int(np.argmin(np.abs(grid - value)))


def _median_error(s: Sample, fit: Fit) -> float:
    """One log's median relative error under a fit (capped): the rows and the typical time the fit was judged on."""
    rows = _quoted_rows(s)
    predicted = fit.typical_s(s.model_s[rows], s.bound_s[rows], s.sparse)
    return min(float(_log_error(predicted, s.time_s[rows], tie_break=0.0)), ERROR_CAP)


def _residual_stats(samples: list[Sample], fit: Fit, k: int) -> dict[str, Any] | None:
    """Percentiles of measured / typical (and of the efficiency) over the rows near size 2^k."""
    values: list[FloatArray] = []
    weights: list[FloatArray] = []
    eff: list[FloatArray] = []
    logs: set[str] = set()
    sources: set[str] = set()
    collectives: set[str] = set()
    for s in samples:
        d = np.log2(np.maximum(s.size_bytes, 1.0)) - k
        resid = s.time_s / fit.typical_s(s.model_s, s.bound_s, s.sparse)
        ok = (np.abs(d) <= WINDOW) & np.isfinite(resid) & (resid > 0)
        if not ok.any():
            continue
        w = np.exp(-0.5 * (d[ok] / SIGMA) ** 2)
        values.append(resid[ok])
        weights.append(w / w.sum())
        eff.append(s.efficiency[ok])
        logs.add(s.log)
        sources.add(s.source)
        collectives.add(s.collective)
    if not values:
        return None
    v, w, e = np.concatenate(values), np.concatenate(weights), np.concatenate(eff)
    lo, mid, hi = _weighted_quantiles(v, w, (LOW_Q, MID_Q, HIGH_Q))
    e_ok = np.isfinite(e)
    effs: Sequence[float | None] = (
        _weighted_quantiles(e[e_ok], w[e_ok], (LOW_Q, MID_Q, HIGH_Q)) if e_ok.any() else [None] * 3
    )
    return {
        "low": round(lo, 4),
        "typical": round(mid, 4),
        "high": round(hi, 4),
        "logs": len(logs),
        "sources": len(sources),
        "efficiency": [None if x is None else round(x, 4) for x in effs],
        # what the runs measured: a band holds the fabric's runs, not one collective's (diagnose says which)
        "collectives": sorted(collectives - {""}),
    }


def _classes(samples: list[Sample]) -> dict[str, list[Sample]]:
    """The samples of every fabric class, of each group of GROUPS and of all (POOLED)."""
    classes = {f: [s for s in samples if s.fabric == f] for f in sorted({s.fabric for s in samples})}
    for group, members in GROUPS.items():
        classes[group] = [s for s in samples if s.fabric in members]
    classes[POOLED] = list(samples)
    return classes


def _class_fits(classes: dict[str, list[Sample]], sparse_fraction: float) -> dict[str, Fit]:
    """Per class the fit it uses: its own where it has FIT_MIN_LOGS logs from FIT_MIN_SOURCES sources, else its
    group's, else the pooled one; the sparse layouts judged at `sparse_fraction` of the bound."""
    own = {name: fit_two_part(group, name, sparse_fraction) for name, group in classes.items() if group}
    fits = {}
    for name in own:
        chain = [name] + ([] if name in GROUPS or name == POOLED else [group_of(name)]) + [POOLED]
        fits[name] = next((own[c] for c in chain if c in own and enough_for_fit(own[c])), own[POOLED])
        if fits[name].of != name and name not in GROUPS and name != POOLED:
            fits[name] = _own_overhead(classes[name], fits[name], sparse_fraction)
    return fits


def _own_overhead(samples: list[Sample], fit: Fit, sparse_fraction: float) -> Fit:
    """A borrowed fit with the class's own per-call overhead: one parameter, which even one run shows (the
    overhead GPUDirect-TCPX pays per call is its own, not the network group's)."""
    j, k = _at(MODEL_FACTOR, fit.model_factor), _at(BOUND_FRACTION, fit.bound_fraction)
    errors = [np.minimum(_grid_errors(s, sparse_fraction)[:, j, k], ERROR_CAP) for s in samples]
    i = int(np.argmin(np.mean(errors, axis=0)))
    return Fit(
        float(OVERHEAD_US[i]), fit.model_factor, fit.bound_fraction, fit.logs, fit.sources, fit.of, fit.sparse_fraction
    )


def _mean_error(classes: dict[str, list[Sample]], fits: dict[str, Fit]) -> float:
    """The mean over every log of every fabric class of its median error, each judged by its class's fit."""
    errors = [
        _median_error(s, fits[name])
        for name, group in classes.items()
        if name not in GROUPS and name != POOLED
        for s in group
    ]
    return float(np.mean(errors)) if errors else 0.0


def fit_sparse_fraction(classes: dict[str, list[Sample]]) -> float:
    """The fraction of the bound (of BOUND_FRACTION's grid) with the least mean error over all logs, each judged
    by its class's fit (0 where no log has a sparse layout)."""
    if not any(s.sparse for s in classes.get(POOLED, [])):
        return 0.0
    grid = BOUND_FRACTION[BOUND_FRACTION > 0]
    errors = [_mean_error(classes, _class_fits(classes, float(f))) for f in grid]
    return float(grid[int(np.argmin(np.round(errors, 9)))])


def fit_bands(samples: list[Sample]) -> Calibration:
    """{class: {"fit": Fit as a dict, "2^k": stats}} for every fabric class in the samples, each group of GROUPS
    and POOLED (the fit: _class_fits, with the sparse layouts' fraction fitted on all); stats: low/typical/high of
    measured / the fit's typical time (10th/50th/90th percentile), logs, sources, efficiency percentiles."""
    classes = _classes(samples)
    fits = _class_fits(classes, fit_sparse_fraction(classes))
    return {
        name: {
            "fit": fit.to_json(),
            **{str(k): st for k in GRID_LOG2 if (st := _residual_stats(classes[name], fit, k)) is not None},
        }
        for name, fit in fits.items()
    }
