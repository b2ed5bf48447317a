"""Schedule-given routes as per-transfer route ids.

A schedule may route some transfers itself: meta["routes"] maps (src, dst, op, first chunk) to a
path of topology vertices (packed trees whose edges cross idle GPUs, PCIe switches or the CPUs:
blink/packed.py). The simulator turns that into one route id per transfer, 0 for the topology's
own route and k >= 1 for the k-th distinct path, so that network.compile_network routes each
(src, dst, path) once as a virtual pair. Schedules without meta["routes"] skip all of this.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from collperf.schedule.arrays import ArraySchedule
from collperf.schedule.ir import COPY, REDUCE


def transfer_routes(a: ArraySchedule):
    """(schedule, route ids, paths): per ArrayStep of the returned schedule, the route id of each of
    its transfers, and the distinct paths (route id k is paths[k - 1]). A shifted run moves other
    chunks at each occurrence, so other keys: it is expanded into its occurrences first.
    (a, None, ()) when the schedule gives no routes."""
    given = a.meta.get("routes")
    if not given:
        return a, None, ()
    steps = []
    for st in a.steps:
        if st.repeat > 1 and st.shift:
            steps += [st.occurrence(i) for i in range(st.repeat)]
        else:
            steps.append(st)
    ids: dict = {}
    route_of = []
    for st in steps:
        first = st.first_rows()
        keys = zip(
            st.src[first].tolist(),
            st.dst[first].tolist(),
            np.where(st.reduce[first], REDUCE, COPY).tolist(),
            st.start[first].tolist(),
        )
        route_of.append(
            np.fromiter(
                (ids.setdefault(tuple(given[k]), len(ids) + 1) if k in given else 0 for k in keys), np.int64, len(first)
            )
        )
    return replace(a, steps=tuple(steps)), route_of, tuple(ids)
