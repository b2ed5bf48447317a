"""Interval arithmetic on sorted numpy arrays, for overlap: unions, differences, covered time.

An interval set is an (n, 2) array of [start, end) rows; `union` returns them sorted and disjoint.
"""

from __future__ import annotations

import numpy as np


def union(intervals) -> np.ndarray:
    """Sorted, disjoint, non-empty intervals covering the same time."""
    a = np.asarray(intervals, dtype=float).reshape(-1, 2)
    a = a[a[:, 1] > a[:, 0]]
    if not len(a):
        return np.empty((0, 2))
    a = a[np.argsort(a[:, 0], kind="stable")]
    reach = np.maximum.accumulate(a[:, 1])
    # a new run starts where an interval begins after everything before it has ended
    starts = np.r_[True, a[1:, 0] > reach[:-1]]
    run = np.cumsum(starts) - 1
    ends = np.zeros(run[-1] + 1)
    np.maximum.at(ends, run, a[:, 1])
    return np.column_stack([a[starts, 0], ends])


def length(intervals) -> float:
    u = union(intervals)
    return float(np.sum(u[:, 1] - u[:, 0]))


def covered_before(u: np.ndarray, x) -> np.ndarray:
    """Time of the disjoint sorted set `u` before each point of x (its cumulative coverage)."""
    x = np.asarray(x, dtype=float)
    if not len(u):
        return np.zeros_like(x)
    done = np.r_[0.0, np.cumsum(u[:, 1] - u[:, 0])]
    i = np.searchsorted(u[:, 0], x, side="right")  # intervals that started at or before x
    partial = np.where(
        i > 0, np.clip(x - u[np.maximum(i - 1, 0), 0], 0, u[np.maximum(i - 1, 0), 1] - u[np.maximum(i - 1, 0), 0]), 0.0
    )
    return done[np.maximum(i - 1, 0)] * (i > 0) + partial


def overlapped(u: np.ndarray, intervals) -> np.ndarray:
    """Per interval [a, b): the time inside the disjoint set `u`."""
    a = np.asarray(intervals, dtype=float).reshape(-1, 2)
    return covered_before(u, a[:, 1]) - covered_before(u, a[:, 0])


def subtract(u, v) -> np.ndarray:
    """The part of set `u` outside set `v` (both any intervals), as a disjoint sorted set."""
    u, v = union(u), union(v)
    if not len(u) or not len(v):
        return u
    cuts = np.unique(np.r_[u.ravel(), v.ravel()])
    lo, hi = cuts[:-1], cuts[1:]
    mid = (lo + hi) / 2
    inside = _inside(u, mid) & ~_inside(v, mid)
    return union(np.column_stack([lo[inside], hi[inside]]))


def intersect(u, v) -> np.ndarray:
    """The time in both sets."""
    return subtract(u, subtract(u, v))


def _inside(u: np.ndarray, x: np.ndarray) -> np.ndarray:
    i = np.searchsorted(u[:, 0], x, side="right") - 1
    return (i >= 0) & (x < u[np.maximum(i, 0), 1])
