"""Rounds mode: a step lasts as long as its slowest transfer, which takes its route's latency plus
the most loaded resource it crosses (bytes / capacity), plus the most bytes any rank reduces x gamma.

Steps are grouped into classes: a run of like steps (arrays.ArrayStep.repeat) is one class, and
separate steps with the same transfers (src, dst, chunk count, op) join it. A class is priced
once with one sparse product (resource bytes = routes[pairs].T @ bytes per pair) and counted as
often as it occurs: a ring allreduce on p ranks is 2 classes, not 2(p - 1) steps of p transfers.
Work: O(classes x (transfers per step + resources)) plus O(steps) for the timeline.
"""

from __future__ import annotations

import numpy as np

from collperf.schedule.arrays import ArraySchedule
from collperf.simulate.network import RoutedPairs


def step_classes(s: ArraySchedule, route_of=None):
    """(class of every ArrayStep, per class: its transfers (src, dst, count, reduce, route)).
    route_of: per ArrayStep, every transfer's route id (explicit.transfer_routes); None: the
    topology's routes (route None in every class)."""
    index: dict = {}
    of_step: list[int] = []
    members: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]] = []
    for i, st in enumerate(s.steps):
        src, dst, count, red = st.transfers()
        route = None if route_of is None else route_of[i]
        key = (src.tobytes(), dst.tobytes(), count.tobytes(), red.tobytes(), None if route is None else route.tobytes())
        if key not in index:
            index[key] = len(members)
            members.append((src, dst, count, red, route))
        of_step.append(index[key])
    return of_step, members


def rounds(s: ArraySchedule, net: RoutedPairs, classes, chunk_bytes: float, gamma: float):
    """(time_s, step start, step end, bytes per resource over the whole schedule)."""
    of_step, members = classes
    occurrences = np.zeros(len(members))
    for st, k in zip(s.steps, of_step):
        occurrences[k] += st.repeat
    pattern = net.routes.copy()
    pattern.data[:] = 1.0  # a route that crossed a resource twice still waits on it once
    total = np.zeros(len(net.capacity))
    class_time = np.zeros(len(members))
    positive = net.capacity > 0
    for k, (src, dst, count, red, route) in enumerate(members):
        nbytes = count * chunk_bytes
        pairs, inverse = np.unique(net.pair_index(src, dst, route), return_inverse=True)
        per_pair = np.bincount(inverse, weights=nbytes, minlength=len(pairs))
        load = net.routes[pairs].T @ per_pair
        busy = np.zeros(len(load))
        np.divide(load, net.capacity, out=busy, where=positive)
        serial = pattern[pairs].multiply(busy[None, :]).max(axis=1).toarray().ravel()
        reduced = np.bincount(dst[red], weights=nbytes[red], minlength=s.ranks).max() if red.any() else 0.0
        class_time[k] = (net.latency[pairs] + serial).max() + reduced * gamma
        total += occurrences[k] * load
    step_time = np.repeat(class_time[of_step], [st.repeat for st in s.steps]) if of_step else np.zeros(0)
    end = np.cumsum(step_time)
    return (float(end[-1]) if len(end) else 0.0), end - step_time, end, total
