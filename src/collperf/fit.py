"""Fit the alpha-beta model to a measured table, piecewise where the curve bends.

Each row's time is modelled in nccl-tests' bus terms, t = alpha + size x f / B with f the busbw factor
of the collective, so B is directly comparable with the busbw column. A segment is fitted by
non-negative least squares on relative error (every size counts alike from 8 B to 8 GB), made robust
by a few rounds of Huber reweighting. Real logs bend where NCCL changes protocol or algorithm
(LL -> LL128 -> Simple, tree -> ring), so the sizes are cut into contiguous regimes by dynamic
programming (over every row up to EXACT_ROWS sizes; beyond, over CANDIDATES evenly spread rows with
each cut then refined row by row, so that a 10,000-row sweep costs what a 1,000-row one does, ten times
over, not a hundred); the number of regimes minimises BIC = N ln(RSS/N) + k ln N with k = 3 per regime, and a
further regime must also cut the RSS to 60 % or less, so that noise does not buy regimes (on synthetic
straight lines with 0.5 % noise a spare regime buys up to a third). Rows slower than a larger size by
more than 20 % (a warm-up row, a hiccup) are anomalies: left out of the fit and named in its notes,
so that they cannot decide how many regimes the rest of the curve has. gamma is not fitted: one collective's times cannot
separate reduction from transfer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from collperf import units
from collperf.collectives import busbw_factor
from collperf.errors import UsageError
from collperf.ingest.table import Row, Table

MIN_ROWS_PER_REGIME = 4
MIN_ROWS = 3  # two points always fit a line: with fewer than three, R^2 and the regimes say nothing
MAX_REGIMES = 6
REGIME_GAIN = 0.6  # a further regime must cut the residual loss to 60 % or less
HUBER_KNEE = 0.05  # relative error where the loss turns from squared to linear
EXACT_ROWS = 96  # up to this many sizes every row is a possible cut (every published sweep has fewer)
CANDIDATES = 40  # beyond: cuts among 41 evenly spread rows, then refined row by row
REFINE_POINTS = 8  # positions tried per round when a cut is refined


@dataclass
class Regime:
    from_bytes: int
    to_bytes: int
    latency_s: float  # alpha: the time of a zero-byte op in this regime
    busbw_GBps: float  # B: the bus bandwidth of this regime (inf when no bandwidth term shows)
    rows: int


@dataclass
class Fit:
    source: str
    collective: str
    ranks: int | None
    factor: float  # busbw factor used (1 when the rank count is unknown)
    regimes: list[Regime]
    sizes: np.ndarray
    times_s: np.ndarray
    residuals: np.ndarray  # (predicted - measured) / measured, per row
    r2: float  # on log time
    peak_busbw_GBps: float
    peak_size_bytes: int
    n_half_bytes: float | None
    single: Regime  # the one-regime fit, for comparison
    single_median_error: float
    notes: list[str] = field(default_factory=list)

    @property
    def median_error(self) -> float:
        return float(np.median(np.abs(self.residuals))) if len(self.residuals) else float("nan")

    @property
    def worst_error(self) -> float:
        return float(np.max(np.abs(self.residuals))) if len(self.residuals) else float("nan")

    def regime_of(self, size: float) -> Regime:
        for r in self.regimes:
            if size <= r.to_bytes:
                return r
        return self.regimes[-1]

    def terms(self, size: float) -> tuple[float, float]:
        """(latency, bandwidth) seconds of the fitted model at `size`."""
        r = self.regime_of(size)
        return r.latency_s, size * self.factor / (r.busbw_GBps * 1e9)

    def predict(self, size: float) -> float:
        return sum(self.terms(size))

    def to_json(self) -> dict:
        return {
            "source": self.source,
            "collective": self.collective,
            "ranks": self.ranks,
            "busbw_factor": self.factor,
            "regimes": [vars(r) for r in self.regimes],
            "r2_log_time": self.r2,
            "median_rel_error": self.median_error,
            "worst_rel_error": self.worst_error,
            "single_line": vars(self.single),
            "single_line_median_rel_error": self.single_median_error,
            "peak_busbw_GBps": self.peak_busbw_GBps,
            "peak_size_bytes": self.peak_size_bytes,
            "n_half_bytes": self.n_half_bytes,
            "rows": [
                {"size_bytes": int(s), "time_s": float(t), "rel_error": float(e)}
                for s, t, e in zip(self.sizes, self.times_s, self.residuals)
            ],
            "notes": self.notes,
        }


def _segment(x: np.ndarray, t: np.ndarray) -> tuple[float, float, float]:
    """(alpha, beta, robust loss) of t = alpha + x beta, robust NNLS on relative error."""
    from scipy.optimize import nnls  # scipy where it is used: reading and judging logs stays light

    a = np.column_stack([1 / t, x / t])
    weights = np.ones(len(t))
    for _ in range(4):
        (alpha, beta), _ = nnls(a * weights[:, None], weights)
        rel = a @ np.array([alpha, beta]) - 1
        scale = 1.4826 * np.median(np.abs(rel)) or 1e-12
        weights = np.sqrt(np.minimum(1.0, 1.345 * scale / np.maximum(np.abs(rel), 1e-300)))
    rel = np.abs(a @ np.array([alpha, beta]) - 1)
    # Huber loss with a fixed 5 % knee: comparable across segmentations, and one 70 % outlier (a
    # dip, a warm-up row) cannot decide how many regimes the rest of the curve has
    loss = np.where(rel <= HUBER_KNEE, rel**2, HUBER_KNEE * (2 * rel - HUBER_KNEE))
    return float(alpha), float(beta), float(np.sum(loss))


def usable(r) -> bool:
    """A row the fit can use: a positive size, a finite positive time, no wrong results."""
    return (
        r.size > 0 and isinstance(r.time_s, (int, float)) and math.isfinite(r.time_s) and r.time_s > 0 and not r.wrong
    )


def fit_rows(table: Table, notes: list[str] | None = None):
    """The rows a fit uses: one placement's usable rows, less a minority whose columns disagree or that ran
    slowed (`notes` hears why)."""
    rows = [r for r in table.placement("out-of-place") or table.placement("in-place") if usable(r)]
    # rows whose columns disagree (ingest.consistency) are left out while they are a minority
    flagged = [r for r in rows if getattr(r, "flags", None)]
    if flagged and 2 * len(flagged) < len(rows):
        rows = [r for r in rows if not r.flags]
        if notes is not None:
            notes.append(
                f"{len(flagged)} row(s) whose columns disagree were left out of the fit (sizes "
                + ", ".join(units.format_size(r.size) for r in flagged[:5])
                + (" ..." if len(flagged) > 5 else "")
                + ")"
            )
    rows.sort(key=lambda r: r.size)
    # nccl-tests may print a size twice (e.g. two 0-byte rows); keep the first of each size
    unique: dict[int, Row] = {}
    for r in rows:
        unique.setdefault(r.size, r)
    return _without_slowed(list(unique.values()), notes)


SLOWED = 1.2  # a row at least this much slower than some larger size was disturbed (warm-up, a hiccup)


def _without_slowed(rows: list, notes: list[str] | None) -> list:
    """Rows that ran slower than a larger size by more than SLOWED are anomalies, not the curve's shape:
    they are left out of the fit (and said so) instead of bending the regimes around them."""
    later_min, fastest = [], math.inf
    for r in reversed(rows):
        later_min.append(fastest)
        fastest = min(fastest, r.time_s)
    later_min.reverse()
    slowed = [r for r, m in zip(rows, later_min) if r.time_s > SLOWED * m]
    if not slowed or 2 * len(slowed) >= len(rows):
        return rows
    if notes is not None:
        notes.append(
            f"{len(slowed)} row(s) left out of the fit: slower than a larger size by more than "
            f"{100 * (SLOWED - 1):.0f} % (sizes "
            + ", ".join(units.format_size(r.size) for r in slowed[:6])
            + (" ..." if len(slowed) > 6 else "")
            + ")"
        )
    gone = {id(r) for r in slowed}
    return [r for r in rows if id(r) not in gone]


def fit(table: Table, max_regimes: int = MAX_REGIMES) -> Fit:
    notes: list[str] = []
    rows = fit_rows(table, notes)
    if len(rows) < MIN_ROWS:
        raise UsageError(
            f"{table.source}: {len(rows)} usable row(s) (size > 0, a finite time > 0, no wrong results): "
            f"a fit needs at least {MIN_ROWS} sizes"
        )
    factor = 1.0
    if table.collective and table.ranks:
        factor = busbw_factor(table.collective, table.ranks)
    if factor == 0 or not table.ranks:
        factor = 1.0
        notes.append("rank count unknown or 1: fitted on algbw (factor 1) instead of busbw")
    sizes = np.array([r.size for r in rows], dtype=float)
    times = np.array([r.time_s for r in rows], dtype=float)
    x = sizes * factor
    n = len(rows)

    cost = _Segments(x, times)
    best_cuts = _best_cuts(cost, n, max_regimes)
    regimes = [_regime(sizes, i, j, cost(i, j)) for i, j in best_cuts]
    for k in range(len(regimes) - 1):  # a regime ends where the next begins
        regimes[k].to_bytes = int(sizes[best_cuts[k][1] - 1])
    single = _regime(sizes, 0, n, cost(0, n))
    fitted = Fit(
        table.source,
        table.collective,
        table.ranks,
        factor,
        regimes,
        sizes,
        times,
        np.zeros(n),
        0.0,
        0.0,
        0,
        None,
        single,
        0.0,
        notes,
    )
    predicted = np.array([fitted.predict(s) for s in sizes])
    fitted.residuals = (predicted - times) / times
    log_t = np.log(times)
    sst = np.sum((log_t - log_t.mean()) ** 2)
    fitted.r2 = float(1 - np.sum((np.log(predicted) - log_t) ** 2) / sst) if sst > 0 else 1.0
    single_pred = single.latency_s + x / (single.busbw_GBps * 1e9)
    fitted.single_median_error = float(np.median(np.abs((single_pred - times) / times)))
    fitted.peak_busbw_GBps, fitted.peak_size_bytes, fitted.n_half_bytes = _peak_busbw(rows, factor)
    if fitted.r2 < 0.9:
        notes.append(
            f"R2 {fitted.r2:.2f} on log time: the alpha-beta model does not describe these rows "
            "(too few sizes, or noise larger than the trend)"
        )
    if all(math.isinf(r.busbw_GBps) for r in regimes):
        notes.append("no bandwidth term shows: the sizes are too small (latency-bound throughout) to fit a bandwidth")
    return fitted


class _Segments:
    """The robust line of rows [i, j), fitted once per pair and remembered; `fits` and `rows_fitted` count
    the work (a test holds them to linear growth in the number of rows)."""

    def __init__(self, x: np.ndarray, t: np.ndarray):
        self.x, self.t = x, t
        self.done: dict[tuple[int, int], tuple[float, float, float]] = {}
        self.fits = self.rows_fitted = 0

    def __call__(self, i: int, j: int) -> tuple[float, float, float]:
        if (i, j) not in self.done:
            self.done[(i, j)] = _segment(self.x[i:j], self.t[i:j])
            self.fits += 1
            self.rows_fitted += j - i
        return self.done[(i, j)]


def _candidates(n: int) -> list[int]:
    """Where a regime may start: every row up to EXACT_ROWS rows (the exact optimum), else CANDIDATES + 1
    boundaries spread evenly over the rows, whose cuts are then refined row by row (_refine). Every pair
    of candidates is one fit, so the search costs CANDIDATES^2 fits however long the sweep is."""
    if n <= EXACT_ROWS:
        return list(range(n + 1))
    return sorted({round(c * n / CANDIDATES) for c in range(CANDIDATES + 1)})


def _best_cuts(cost: _Segments, n: int, max_regimes: int) -> list[tuple[int, int]]:
    """The regimes [(i, j), ...) with the lowest BIC among 1..max_regimes regimes, by dynamic programming
    over the candidate boundaries: least robust loss with k regimes over the first j rows."""
    starts = _candidates(n)
    exact = n <= EXACT_ROWS
    best_bic, best_cuts, best_rss = math.inf, None, math.inf
    table_rss: dict[tuple[int, int], tuple[float, list[tuple[int, int]]]] = {(0, 0): (0.0, [])}
    for k in range(1, min(max_regimes, n // MIN_ROWS_PER_REGIME) + 1):
        for j in starts:
            if j < k * MIN_ROWS_PER_REGIME:
                continue
            options = [
                (table_rss[(k - 1, i)][0] + cost(i, j)[2], table_rss[(k - 1, i)][1] + [(i, j)])
                for i in starts
                if (k - 1) * MIN_ROWS_PER_REGIME <= i <= j - MIN_ROWS_PER_REGIME and (k - 1, i) in table_rss
            ]
            if options:
                table_rss[(k, j)] = min(options, key=lambda o: o[0])
        if (k, n) not in table_rss:
            break
        rss, cuts = table_rss[(k, n)]
        if not exact:
            rss, cuts = _refine(cost, cuts, n / CANDIDATES)
        bic = n * math.log(max(rss, 1e-30) / n) + 3 * k * math.log(n)
        # noise alone can buy a third off the RSS with a spare regime; a real bend buys far more
        if not (bic < best_bic - 1e-9 and rss < REGIME_GAIN * best_rss):
            break
        best_bic, best_cuts, best_rss = bic, cuts, rss
    return best_cuts or [(0, n)]


def _refine(cost: _Segments, cuts: list[tuple[int, int]], spacing: float) -> tuple[float, list[tuple[int, int]]]:
    """Move each cut found among the candidates to its best row within a candidate spacing either side,
    the others held: a coarse-to-fine search of REFINE_POINTS positions per round, each round narrowing
    the window to one step around the best (log(spacing) rounds, not spacing fits)."""
    edges = [cuts[0][0]] + [j for _, j in cuts]
    for m in range(1, len(edges) - 1):
        lo = max(edges[m - 1] + MIN_ROWS_PER_REGIME, edges[m] - math.ceil(spacing))
        hi = min(edges[m + 1] - MIN_ROWS_PER_REGIME, edges[m] + math.ceil(spacing))

        def loss(c: int) -> float:
            return cost(edges[m - 1], c)[2] + cost(c, edges[m + 1])[2]

        best = edges[m]
        while lo <= hi:
            step = max(1, math.ceil((hi - lo) / REFINE_POINTS))
            best = min([*range(lo, hi + 1, step), hi, best], key=lambda c: (loss(c), c))
            if step == 1:
                break
            lo, hi = max(lo, best - step + 1), min(hi, best + step - 1)
        edges[m] = best
    cuts = list(zip(edges[:-1], edges[1:]))
    return sum(cost(i, j)[2] for i, j in cuts), cuts


def _regime(sizes, i, j, segment) -> Regime:
    alpha, beta, _ = segment
    return Regime(int(sizes[i]), int(sizes[j - 1]), alpha, (1 / beta / 1e9) if beta > 0 else math.inf, j - i)


def _peak_busbw(rows, factor: float) -> tuple[float, int, float | None]:
    """Peak measured busbw, the size where it occurs, and n1/2: the size that first reaches half of it
    (interpolated in log size between the bracketing rows). busbw is size x factor / time, not the printed
    column: the same number with every digit (a printed 0.00 at small sizes is not a zero bandwidth)."""
    bus = [(r.size, r.size * factor / r.time_s / 1e9) for r in rows]
    peak_size, peak = max(bus, key=lambda sb: sb[1])
    if peak <= 0:
        return 0.0, int(peak_size), None
    previous = None
    for size, value in bus:
        if value >= peak / 2:
            if previous is None or previous[1] >= value:
                return peak, int(peak_size), float(size)
            s0, v0 = previous
            frac = (peak / 2 - v0) / (value - v0)
            return peak, int(peak_size), float(math.exp(math.log(s0) + frac * (math.log(size) - math.log(s0))))
        previous = (size, value)
    return peak, int(peak_size), None
