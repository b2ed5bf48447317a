"""A schedule priced with shared host links: the port model of the simulator, per host, with a per-flow cost.

The closed forms price a step by its busiest rank (model/algorithms/base.py). Where ranks share a host, every
transfer that leaves (or enters) the host crosses the same link: testbed hosts, torchrun nodes, one NIC. So a
step's bandwidth term is the busiest of
  - each rank's own port on the intra-host link: max(bytes sent, bytes received) / intra bandwidth, and
  - each host's link: max(bytes leaving, bytes entering) / host bandwidth x (1 + flow_overhead x (flows - 1)),
where `flows` is the number of concurrent transfers leaving (entering) the host in that step. The flow term is
what a shaped link does to several TCP streams at once (each stream's slow start and the shaper's queue): it is
measured on the link (runtime/auto/builtin_fit.py flow_overhead), 0 where one flow and many cost alike.

Every step term is linear in n, so a schedule is reduced once to (steps, bytes coefficient, reduce coefficient)
and priced over any number of sizes at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import numpy.typing as npt

from collperf.collectives import formula_bytes
from collperf.errors import UsageError
from collperf.model.two_level.build import build
from collperf.model.costs import Cost
from collperf.model.network import Link
from collperf.schedule.ir import REDUCE, Schedule, Transfer


@dataclass(frozen=True)
class HostLinks:
    """Ranks placed on hosts: `host_of[r]` is rank r's host; `link` is each host's link to the others (its
    latency the per-step cost across hosts); `flow_overhead` the extra time per additional concurrent flow on
    one host link, as a fraction of the link's time (0: flows share the link perfectly)."""

    host_of: tuple[int, ...]
    link: Link
    flow_overhead: float = 0.0

    def __post_init__(self) -> None:
        if not self.flow_overhead >= 0:
            raise UsageError(f"flow overhead {self.flow_overhead!r}: expected a fraction >= 0 (e.g. 0.1)")

    @classmethod
    def blocks(cls, hosts: int, ranks_per_host: int, link: Link, flow_overhead: float = 0.0) -> "HostLinks":
        """Consecutive ranks per host (the testbed's and torchrun's placement)."""
        return cls(tuple(r // ranks_per_host for r in range(hosts * ranks_per_host)), link, flow_overhead)


def _step_terms(transfers: Sequence[Transfer], ranks: int, hosts: HostLinks, intra: Link) -> tuple[float, float, float]:
    """(latency s, bandwidth s per chunk, reduced chunks) of one step; chunks counted, not bytes."""
    host = np.asarray(hosts.host_of)
    src = np.array([t.src for t in transfers], dtype=np.int64)
    dst = np.array([t.dst for t in transfers], dtype=np.int64)
    count = np.array([len(t.chunks) for t in transfers], dtype=float)
    reduced = np.array([t.op == REDUCE for t in transfers])
    if src.size == 0:
        return 0.0, 0.0, 0.0
    across = host[src] != host[dst]
    within = ~across
    # each rank's own port inside its host
    port = (
        max(
            np.bincount(src[within], count[within], ranks).max(initial=0),
            np.bincount(dst[within], count[within], ranks).max(initial=0),
        )
        * intra.seconds_per_byte
    )
    n_hosts = int(host.max()) + 1
    link_s = 0.0
    for ends in (host[src[across]], host[dst[across]]):
        if ends.size:
            load = np.bincount(ends, count[across], n_hosts)
            flows = np.bincount(ends, minlength=n_hosts)
            factor = 1.0 + hosts.flow_overhead * np.maximum(flows - 1, 0)
            link_s = max(link_s, float((load * factor).max()) * hosts.link.seconds_per_byte)
    latency = hosts.link.latency_s if across.any() else intra.latency_s
    most_reduced = np.bincount(dst[reduced], count[reduced], ranks).max(initial=0)
    return latency, max(port, link_s), float(most_reduced)


def shared_link_cost(schedule: Schedule, size_bytes: npt.ArrayLike, intra: Link, hosts: HostLinks) -> Cost:
    """The schedule's time over sizes (formula bytes n) with each host's link shared by its ranks' transfers."""
    if len(hosts.host_of) != schedule.ranks:
        raise UsageError(f"the hosts place {len(hosts.host_of)} ranks but the schedule has {schedule.ranks}")
    latency_s, per_chunk_s, reduce_chunks = 0.0, 0.0, 0.0
    for step in schedule.steps:
        a, b, c = _step_terms(step.transfers, schedule.ranks, hosts, intra)
        latency_s, per_chunk_s, reduce_chunks = latency_s + a, per_chunk_s + b, reduce_chunks + c
    n = np.atleast_1d(np.asarray(size_bytes, dtype=float))
    chunk = n / schedule.chunks_per_buffer
    return Cost(
        np.full(n.shape, latency_s), per_chunk_s * chunk, reduce_chunks * chunk * intra.seconds_per_reduced_byte
    )


def host_priced(
    collective: str,
    algorithm: str,
    sizes: npt.ArrayLike,
    segments: npt.ArrayLike | None,
    intra: Link,
    hosts: HostLinks,
    root: int = 0,
) -> Cost:
    """A flat algorithm's cost over nccl-tests sizes on shared host links: its schedule (with the segment
    count chosen per size, `segments` an array or None) priced by shared_link_cost."""
    n = formula_bytes(collective, np.atleast_1d(np.asarray(sizes, dtype=float)))
    ks = np.ones(n.shape, dtype=int) if segments is None else np.asarray(segments, dtype=int)
    latency, bandwidth, compute = np.zeros(n.shape), np.zeros(n.shape), np.zeros(n.shape)
    for k in np.unique(ks):
        at = ks == k
        c = shared_link_cost(
            build(collective, algorithm, len(hosts.host_of), root=root, segments=int(k)), n[at], intra, hosts
        )
        latency[at], bandwidth[at], compute[at] = c.latency_s, c.bandwidth_s, c.compute_s
    return Cost(latency, bandwidth, compute, segments=None if segments is None else ks)
