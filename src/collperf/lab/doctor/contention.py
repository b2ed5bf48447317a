"""A round's tests priced together: every test's ring allreduce on the whole topology at once, in the
simulator's events mode (flows share each link max-min fairly), so that tests whose routes share a link (two
pairs across the same uplinks) are each expected at the speed they get beside the others, not alone.

One schedule holds them all: test i's ring embedded on its hosts, its steps after test i-1's. Events mode lets a
rank start its next step when its own transfers are done (simulate/events.py), and a test's ranks have none in
another test's steps, so every test starts at time 0 and runs beside the others; the end of a test's last step
is its finish. Tests of different sizes split the buffer into the least common multiple of their chunk counts,
each chunk of a p-rank ring into L/p of them, so every transfer keeps its bytes (size / p).
"""

from __future__ import annotations

import math

from collperf.model.two_level.build import build
from collperf.schedule.ir import embed, make
from collperf.simulate import simulate
from collperf.topology import Topology


def round_times_s(topo: Topology, tests: list[tuple[int, ...]], size_bytes: float) -> list[float]:
    """Each test's time (ring allreduce of size_bytes on its ranks, in their order) when all run at once on
    `topo`; a one-rank test moves nothing (0.0). Ranks are topo's ranks; tests must not share one."""
    rings = [(hosts, build("allreduce", "ring", len(hosts))) for hosts in tests if len(hosts) > 1]
    if not rings:
        return [0.0] * len(tests)
    used = [h for hosts, _ in rings for h in hosts]
    if len(set(used)) != len(used):
        raise ValueError(f"tests {tests} share a rank: a round's tests are host-disjoint")
    total = math.lcm(*(s.chunks_per_buffer for _, s in rings))
    steps, ends = [], []
    for hosts, s in rings:
        per = total // s.chunks_per_buffer
        chunk_map = [list(range(c * per, (c + 1) * per)) for c in range(s.chunks)]
        placed = embed(s, list(hosts), chunk_map, topo.ranks, total)
        steps += [st for st in placed.steps if st.transfers]
        ends.append(len(steps) - 1)
    combined = make("allreduce", "ring", topo.ranks, total, steps, buffer_chunks=total)
    result = simulate(combined, topo, size_bytes, "events", engine="per-transfer")
    finish = iter(float(result.step_end_s[e]) for e in ends)
    return [next(finish) if len(hosts) > 1 else 0.0 for hosts in tests]
