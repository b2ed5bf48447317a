"""Blink's micro-benchmarks (appendix A.1, DGX-1V) as schedules the simulator and the runtime run.

Depth tests on a chain of GPUs g0 -> g1 -> ... -> gk:
  chain_forward          g0's data forwarded hop by hop (a pipelined chain broadcast);
  chain_reduce_forward   each GPU reduces what arrives with its own data and forwards the result
                         (a pipelined chain reduce into gk);
  chain_reduce_broadcast reduce+forward one way, forward back the other (an allreduce on the chain).
Breadth tests around a center GPU (degree 1-3 on a DGX-1):
  fan_in_forward         sources send to the center, which forwards all it collected (and its own
                         data) to its successor (a gather into the successor);
  fan_in_reduce_forward  the center reduces what arrives with its own data and forwards the result
                         (a reduce into the successor; the successor adds its own data too);
  fan_out_forward        one source sends to the center, which multicasts to its successors.

Each returns (schedule, group topology view): the schedule is on local ranks (meta["ranks"] gives
the topology's GPUs), hops take the direct link when there is one, else the topology's route.
"""

from __future__ import annotations

import numpy as np

from collperf.blink import packed
from collperf.blink.packing import Packing, Tree
from collperf.errors import UsageError
from collperf.schedule.ir import COPY, make, step, Transfer
from collperf.simulate import simulate
from collperf.topology import subset


def _one_tree(topo, gpus, parent) -> Packing:
    sub = subset(topo, gpus)
    routes = {(up, child): sub.path(up, child) for child, up in enumerate(parent) if up >= 0}
    return Packing(
        tuple(gpus), (parent.index(-1),), 1.0, 1.0, (Tree(parent.index(-1), tuple(parent), routes, 1.0),), sub
    )


def _check_gpus(gpus, least: int, what: str) -> list[int]:
    gpus = [int(g) for g in gpus]
    if len(gpus) < least or len(set(gpus)) != len(gpus):
        raise UsageError(f"{what} needs at least {least} distinct GPUs, got {gpus}")
    return gpus


def chain_forward(topo, chain, segments: int = 8):
    gpus = _check_gpus(chain, 2, "a chain")
    pk = _one_tree(topo, gpus, [-1] + list(range(len(gpus) - 1)))
    return _named(packed.broadcast(pk, segments, 1), "chain-forward"), pk.topology


def chain_reduce_forward(topo, chain, segments: int = 8):
    gpus = _check_gpus(chain, 2, "a chain")[::-1]  # local 0 is the chain's end, where the sum lands
    pk = _one_tree(topo, gpus, [-1] + list(range(len(gpus) - 1)))
    return _named(packed.reduce(pk, segments, 1), "chain-reduce-forward"), pk.topology


def chain_reduce_broadcast(topo, chain, segments: int = 8):
    gpus = _check_gpus(chain, 2, "a chain")[::-1]
    pk = _one_tree(topo, gpus, [-1] + list(range(len(gpus) - 1)))
    return _named(packed.allreduce(pk, segments, 1, overlap=True), "chain-reduce-broadcast"), pk.topology


def fan_in_reduce_forward(topo, sources, center: int, successor: int, segments: int = 8):
    gpus = _check_gpus([successor, center, *sources], 3, "a fan-in")
    pk = _one_tree(topo, gpus, [-1, 0] + [1] * (len(gpus) - 2))
    return _named(packed.reduce(pk, segments, 1), "fan-in-reduce-forward"), pk.topology


def fan_out_forward(topo, source: int, center: int, successors, segments: int = 8):
    gpus = _check_gpus([source, center, *successors], 3, "a fan-out")
    pk = _one_tree(topo, gpus, [-1, 0] + [1] * (len(gpus) - 2))
    return _named(packed.broadcast(pk, segments, 1), "fan-out-forward"), pk.topology


def fan_in_forward(topo, sources, center: int, successor: int, segments: int = 8):
    """Local ranks: 0 the successor, 1 the center, 2.. the sources; block b (chunks b k .. b k + k - 1)
    is rank b's data. Step s: sources send their segment s to the center, the center sends its own
    segment s and the sources' segment s - 1 on to the successor."""
    gpus = _check_gpus([successor, center, *sources], 3, "a fan-in")
    p, k = len(gpus), segments
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise UsageError(f"segments {k!r} is not a whole number >= 1")
    steps = []
    for s in range(k + 1):
        ts = [Transfer(src, 1, (src * k + s,), COPY) for src in range(2, p) if s < k]
        ts += [Transfer(1, 0, (k + s,), COPY)] if s < k else []
        ts += [Transfer(1, 0, tuple(src * k + s - 1 for src in range(2, p)), COPY)] if s >= 1 else []
        steps.append(step(ts))
    sched = make("gather", "fan-in-forward", p, p * k, steps, 0, segments=k)
    sub = subset(topo, gpus)
    sched.meta.update(ranks=gpus, topology=sub.name)
    return sched, sub


def _named(s, name: str):
    from dataclasses import replace

    return replace(s, algorithm=name)


def throughput_Bps(schedule, topology, sizes, mode: str = "rounds", reduce_bandwidth_Bps: float = float("inf")):
    """size / simulated time for every size (bytes): the appendix's throughput curves."""
    sizes = np.atleast_1d(np.asarray(sizes, dtype=float))
    return np.array([n / simulate(schedule, topology, n, mode, reduce_bandwidth_Bps).time_s for n in sizes])


# The appendix's GPUs, on our dgx1v preset (topology.dgx1v: NVLink neighbours of GPU 4 are 0, 5, 6, 7).
DGX1V_CHAIN = (0, 1, 2, 3, 7, 6, 5, 4)  # a Hamiltonian NVLink path
DGX1V_FAN_CENTER, DGX1V_FAN_PEERS = 4, (5, 6, 7)
DGX1V_FAN_SUCCESSOR = 0
