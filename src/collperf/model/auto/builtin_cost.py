"""The backend's own collective as a priced candidate of -A auto: time = alpha + size x seconds per byte.

The built-in (gloo, NCCL) is a black box to the model, so it is priced from its own measurements: a few sizes
timed on the group (runtime/auto/builtin_fit.py) and fitted with non-negative least squares on relative error, so
that the small sizes weigh as much as the big ones. `size` is the nccl-tests size column, as everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from collperf.errors import UsageError
from collperf.model.algorithms.modes import BUILTIN as BUILTIN_MODE

BUILTIN = BUILTIN_MODE.name  # the name a run and a bench row give the backend's own collective


@dataclass(frozen=True)
class BuiltinFit:
    """One collective's built-in on one group and backend: time_s(size) = latency_s + size x seconds_per_byte."""

    collective: str
    latency_s: float
    seconds_per_byte: float

    def __post_init__(self) -> None:
        if not (self.latency_s >= 0 and self.seconds_per_byte >= 0):
            raise UsageError(
                f"built-in fit of {self.collective}: latency {self.latency_s!r} s and "
                f"{self.seconds_per_byte!r} s/B must be >= 0"
            )

    def time_s(self, size_bytes: npt.ArrayLike) -> np.ndarray:
        return self.latency_s + np.asarray(size_bytes, dtype=float) * self.seconds_per_byte

    def to_json(self) -> dict[str, Any]:
        return {
            "collective": self.collective,
            "latency_us": self.latency_s * 1e6,
            "busbw_free_GBps": (1e-9 / self.seconds_per_byte) if self.seconds_per_byte else None,
        }


def fit_builtin(collective: str, sizes_bytes: npt.ArrayLike, times_s: npt.ArrayLike) -> BuiltinFit:
    """alpha and seconds per byte fitted to measured (size, time) pairs (at least two distinct sizes)."""
    n = np.asarray(sizes_bytes, dtype=float)
    t = np.asarray(times_s, dtype=float)
    if n.shape != t.shape or len(np.unique(n)) < 2 or not (t > 0).all():
        raise UsageError(
            f"built-in fit of {collective}: need positive times at two or more sizes "
            f"(got sizes {n.tolist()}, times {t.tolist()})"
        )
    from scipy.optimize import nnls

    a = np.column_stack([np.ones_like(n), n]) / t[:, None]  # relative error: each row divided by its time
    (alpha, per_byte), _ = nnls(a, np.ones_like(t))
    return BuiltinFit(collective, float(alpha), float(per_byte))
