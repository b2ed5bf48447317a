"""What healthy systems achieve relative to NCCL's model: the calibrated expectation.

NCCL's tuning model (model/nccl) is a selection heuristic, not what real systems reach: on public healthy
nccl-tests logs the measured time is often 1-2x its model time, and by how much depends on the fabric (EFA
and TCPX lose more than InfiniBand), on the size (a per-call overhead NCCL's latency terms leave out weighs
on the mid sizes) and on the layout (with one or two GPUs per node NCCL's model is optimistic, while what is
achieved of the physical bound stays about the same). So per fabric class (model/hardware/system.py FABRICS) the
typical time is a two-part model with three parameters, fitted on the healthy public runs of the class
(the corpus in collperf/data/corpus):

    typical = overhead + max(model_factor x NCCL's model time, bound / bound_fraction)

(bound_fraction 0: no bound term). A run with one or two GPUs per node (a "sparse" layout) is judged at
the sparse layouts' own fraction of the bound instead, overhead + bound / sparse_fraction, one fraction for
all classes, fitted on all of them together (fit_sparse_fraction): NCCL's model prices such a ring at its
channels' line rate (its time is about the bound), which such runs reach about half of. The parameters
minimise the mean over logs of each log's median relative error over its rows >= 1 MiB (capped; each log
weighs the same, however many rows it has), searched on a grid: robust, and nothing to diverge. A class with
too few logs or sources borrows the fit of its group (the fabrics between nodes, those inside a node), then
of all classes, and says so; it keeps its own per-call overhead (one parameter, which even one run shows:
GPUDirect-TCPX's is at the grid's top, 500 us, where the network group's is 50 us), and it borrows the
group's band too. Around the typical time the band is the 10th-90th percentile, per size regime (one
octave, GRID_LOG2), of measured / typical over the class's healthy rows. expect/band_fit.py fits
the table from samples (`fit_bands`; the offline script benchmarks/calibrate_corpus.py writes the
committed one); `band` here applies it to one prediction, on the same typical time (`typical_time`).
Pure: the table is data passed in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypeGuard

import numpy as np
import numpy.typing as npt

MIB = 1 << 20
# The size regimes are one octave apart: the band at size 2^k pools the rows within WINDOW octaves of it,
# weighted by a Gaussian of SIGMA octaves, each log weighing the same (so a long sweep does not outvote a
# short one). A protocol or algorithm switch moves the ratio over an octave or two, not more.
GRID_LOG2 = tuple(range(3, 37))  # 8 B .. 64 GiB
WINDOW, SIGMA = 2.0, 1.0
LOW_Q, MID_Q, HIGH_Q = 0.10, 0.50, 0.90
# a class with fewer logs (or sources) than this borrows the fit (and, per size, the band) of its group, then of all
MIN_LOGS, MIN_SOURCES = 3, 2
# ... and its own fit only from more logs than the fit has parameters (three)
FIT_MIN_LOGS, FIT_MIN_SOURCES = 4, 2
POOLED = "all"
# the groups a class borrows from: the fabrics between nodes, and those inside one node
GROUPS = {
    "network": ("ib", "roce", "efa", "tcpx", "tcpxo", "socket", "slingshot"),
    "node": ("nvswitch", "nvswitch-nvls", "nvl72", "nvlink-mesh", "xgmi", "pcie-p2p", "pcie-host"),
}
# The two-part model's grid: per-call overhead (us), factor on NCCL's model time, fraction of the bound (0: none).
# The fit is judged on the rows the error is quoted on (>= FIT_MIN_BYTES), where the hardware shows.
# The overhead grid stops at 500 us on purpose: GPUDirect-TCPX's two runs fit at its top, but a grid up to 2 ms
# was worse under leave-one-source-out (tcpx median 16.0 -> 25.3 %, all logs' p90 36.2 -> 42.6 %).
OVERHEAD_US = np.array([0, 2, 5, 10, 15, 20, 30, 40, 50, 60, 80, 100, 130, 160, 200, 250, 300, 400, 500], float)
MODEL_FACTOR = np.round(np.arange(0.3, 5.0001, 0.05), 2)
BOUND_FRACTION = np.round(np.concatenate([[0.0], np.arange(0.1, 1.0001, 0.05)]), 2)
FIT_MIN_BYTES = MIB
# the calibration file's bands (data/calibration.json, as JSON gives it): fabric class -> {"fit": Fit's fields,
# "<log2 size>": {"logs", "sources", "low", "typical", "high", "collectives"}}
Calibration: TypeAlias = dict[str, dict[str, Any]]
FloatArray: TypeAlias = npt.NDArray[np.float64]
ERROR_CAP = 0.5
TIE_BREAK = 0.05
# the sparse layouts (module docstring): at most this many GPUs per node (4 was worse under cross-validation)
SPARSE_GPUS = 2


@dataclass(frozen=True)
class Sample:
    """One healthy log's rows: its fabric class, its source (the unit left out in cross-validation), sizes,
    measured time, NCCL's model time and the physical bound per size."""

    log: str
    source: str
    fabric: str
    size_bytes: npt.NDArray[np.float64]
    time_s: npt.NDArray[np.float64]
    model_s: npt.NDArray[np.float64]
    bound_s: npt.NDArray[np.float64]
    gpus_per_node: int = 0  # 0: not known (judged as a dense layout)
    collective: str = ""  # what the log measured ("": not said); the band records which it holds

    @property
    def sparse(self) -> bool:
        return sparse_layout(self.gpus_per_node)

    @property
    def ratio(self) -> npt.NDArray[np.float64]:
        return self.time_s / self.model_s

    @property
    def efficiency(self) -> npt.NDArray[np.float64]:
        return self.bound_s / self.time_s


@dataclass(frozen=True)
class Fit:
    """The typical time of one fabric class relative to NCCL's model and the bound, and what it rests on."""

    overhead_us: float
    model_factor: float
    bound_fraction: float
    logs: int = 0
    sources: int = 0
    of: str = ""  # the class whose runs it was fitted on (the class itself, its group, or all)
    sparse_fraction: float = 0.0  # the fraction of the bound runs with <= SPARSE_GPUS GPUs per node reach (0: same)

    def typical_s(
        self, model_s: npt.ArrayLike, bound_s: npt.ArrayLike | None = None, sparse: bool = False
    ) -> npt.NDArray[np.float64]:
        """overhead + max(factor x model, bound / fraction); a sparse layout: overhead + bound / its fraction
        (where there is a bound)."""
        return typical_time(
            self.overhead_us * 1e-6,
            self.model_factor,
            self.bound_fraction,
            np.asarray(model_s, dtype=float),
            bound_s,
            self.sparse_fraction if sparse else 0.0,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "overhead_us": self.overhead_us,
            "model_factor": self.model_factor,
            "bound_fraction": self.bound_fraction,
            "logs": self.logs,
            "sources": self.sources,
            "of": self.of,
            "sparse_fraction": self.sparse_fraction,
        }


def typical_time(
    overhead_s: float | FloatArray,
    model_factor: float | FloatArray,
    bound_fraction: float | FloatArray,
    model_s: FloatArray,
    bound_s: npt.ArrayLike | None = None,
    sparse_fraction: float = 0.0,
) -> FloatArray:
    """The two-part typical time: overhead + max(factor x model, bound / fraction) (no bound term where the
    fraction is 0 or no bound is given, or on rows whose bound is not finite); with a sparse_fraction > 0 (a sparse layout), overhead + bound / it
    on the rows that have a bound (finite, > 0), the rest as dense. The one expression the fit searches and the
    band applies: the fit passes its grids as broadcasting arrays."""
    t: FloatArray = model_factor * model_s
    if bound_s is None:
        return overhead_s + t
    # a bound that is not finite is no bound: its term drops out (bound 0)
    b = np.nan_to_num(np.asarray(bound_s, dtype=float), nan=0.0, posinf=0.0, neginf=0.0)
    if np.any(np.asarray(bound_fraction) > 0):
        t = np.where(np.asarray(bound_fraction) > 0, np.maximum(t, b / np.maximum(bound_fraction, 1e-9)), t)
    if sparse_fraction > 0:
        t = np.where(np.isfinite(b) & (b > 0), b / sparse_fraction, t)
    return overhead_s + t


def sparse_layout(gpus_per_node: int) -> bool:
    """One or two GPUs per node (a known count): the layout the sparse fraction applies to."""
    return bool(gpus_per_node) and 0 < int(gpus_per_node) <= SPARSE_GPUS


@dataclass(frozen=True)
class Band:
    """Per size: the band of what healthy systems of this fabric take (low, typical, high: seconds) and
    where it comes from."""

    low_s: npt.NDArray[np.float64]
    typical_s: npt.NDArray[np.float64]
    high_s: npt.NDArray[np.float64]
    fabric: list[str]
    provenance: list[str] = field(default_factory=list)
    logs: list[int] = field(default_factory=list)  # how many public runs each size's band rests on
    layout: str = ""  # how the run's layout is judged, where it is a sparse one
    borrowed: list[bool] = field(default_factory=list)  # per size: the band is another class's (its group's or all's)
    collectives: list[tuple[str, ...]] = field(
        default_factory=list
    )  # per size: the collectives its runs measured (() not recorded)


def _grid_index(size_bytes: npt.ArrayLike) -> npt.NDArray[np.int_]:
    """The grid point (octave) of each size."""
    n = np.maximum(np.atleast_1d(np.asarray(size_bytes, dtype=float)), 1.0)
    k: npt.NDArray[np.int_] = np.clip(np.rint(np.log2(n)), GRID_LOG2[0], GRID_LOG2[-1]).astype(int)
    return k - GRID_LOG2[0]


def _enough(stats: dict[str, Any] | None) -> TypeGuard[dict[str, Any]]:
    if not stats:
        return False
    return bool(stats["logs"] >= MIN_LOGS and stats["sources"] >= MIN_SOURCES)


def enough_for_fit(fit: Fit) -> bool:
    return fit.logs >= FIT_MIN_LOGS and fit.sources >= FIT_MIN_SOURCES


def group_of(fabric: str) -> str:
    return next((g for g, members in GROUPS.items() if fabric in members), POOLED)


def _fit_of(entry: dict[str, Any]) -> Fit:
    return Fit(**entry["fit"])


def _pick(table: Calibration, fabric: str, k: int) -> tuple[dict[str, Any] | None, Fit | None, str, bool]:
    key = str(k)
    own_entry = table.get(fabric, {})
    own = own_entry.get(key)
    # a class with too few runs for a fit of its own has too few for a band of its own
    if _enough(own) and _fit_of(own_entry).of == fabric:
        return (
            own,
            _fit_of(own_entry),
            (f"calibrated on {own['logs']} public runs of this fabric class ({fabric}) from {own['sources']} sources"),
            False,
        )
    have = f"{own['logs']} {fabric} run(s)" if own else f"no {fabric} runs"
    for name in (group_of(fabric), POOLED):
        entry = table.get(name, {})
        stats = entry.get(key)
        if _enough(stats):
            # the class's own fit (its group's with its own overhead) where it has one
            fit = _fit_of(own_entry) if "fit" in own_entry and _fit_of(own_entry).of == name else _fit_of(entry)
            return (
                _widen(stats, own, entry, own_entry),
                fit,
                (
                    f"calibrated on {stats['logs']} public runs of {_what(name)} ({have} at this size, too few for a "
                    "band of their own)"
                ),
                True,
            )
    return None, None, "not calibrated: too few public runs near this size", False


def _what(name: str) -> str:
    return "all fabric classes" if name == POOLED else f"the {name} fabric classes" if name in GROUPS else name


def _widen(
    borrowed: dict[str, Any], own: dict[str, Any] | None, entry: dict[str, Any], own_entry: dict[str, Any]
) -> dict[str, Any]:
    """A borrowed band spans the class's own few runs too (their spread measured against the borrowed typical
    time), so a class unlike its group (TCPX among the network fabrics) is not called slow for being itself."""
    if not own or _fit_of(own_entry).of != _fit_of(entry).of:
        return borrowed
    return {**borrowed, "low": min(borrowed["low"], own["low"]), "high": max(borrowed["high"], own["high"])}


def band(
    size_bytes: npt.ArrayLike,
    model_time_s: npt.ArrayLike,
    fabric: str,
    table: Calibration,
    floor_s: npt.ArrayLike | None = None,
    gpus_per_node: int = 0,
) -> Band:
    """The calibrated band of each size: the fitted typical time of the fabric class (from NCCL's model time and
    the bound `floor_s`) times the spread of healthy runs around it, never below the bound. From the runs of
    the class where there are enough, else of its group, else of all."""
    n = np.atleast_1d(np.asarray(size_bytes, dtype=float))
    t = np.atleast_1d(np.asarray(model_time_s, dtype=float))
    floor = None if floor_s is None else np.broadcast_to(np.asarray(floor_s, dtype=float), n.shape)
    low, typical, high = (np.full(n.size, np.nan) for _ in range(3))
    provenance: list[str] = []
    logs: list[int] = []
    layout = ""
    borrowed: list[bool] = []
    collectives: list[tuple[str, ...]] = []
    sparse = sparse_layout(gpus_per_node)
    for i, g in enumerate(_grid_index(n)):
        stats, fit, why, other = _pick(table, fabric, GRID_LOG2[g])
        if sparse and fit is not None and fit.sparse_fraction > 0:
            layout = (
                f"{gpus_per_node} GPU(s) per node: the typical time is the bound over "
                f"{fit.sparse_fraction:g}, what public runs with {SPARSE_GPUS} or fewer GPUs per node reach"
            )
        provenance.append(why)
        logs.append(stats["logs"] if stats else 0)
        borrowed.append(other)
        collectives.append(tuple(stats.get("collectives", ())) if stats else ())
        if stats:
            # From FIT_MIN_BYTES up the typical time is the fit itself (re-centring it on each octave's median
            # was less accurate under leave-one-source-out: median error 18.1 % against 16.8 % on a 68-log
            # corpus); below, where the fit was not judged, the octave's median of healthy runs corrects it
            # (a per-call overhead fitted on MiB sizes is not what a 64 KiB call costs on NVLink).
            assert fit is not None  # _pick gives a fit with every band it gives
            bound_i = None if floor is None else floor[i]
            base = float(fit.typical_s(t[i], bound_i, sparse))
            middle = stats["typical"] * base if n[i] < FIT_MIN_BYTES else base
            own_entry = table.get(fabric, {})
            own = own_entry.get(str(GRID_LOG2[g]))
            if n[i] < FIT_MIN_BYTES and own is not None and own is not stats and "fit" in own_entry:
                # a borrowed band still takes the typical time from the class's own few runs where it has any
                # (two H100 NVLS runs say more about a 64 KiB call on NVLS than PCIe boxes in the node group)
                middle = own["typical"] * float(_fit_of(own_entry).typical_s(t[i], bound_i, sparse))
            low[i], typical[i], high[i] = (min(stats["low"] * base, middle), middle, max(stats["high"] * base, middle))
    if floor is not None:
        low, typical, high = (np.maximum(x, floor) for x in (low, typical, high))
    return Band(low, typical, high, [fabric] * n.size, provenance, logs, layout, borrowed, collectives)
