"""Lower bounds per collective: latency, bandwidth and compute (Chan et al. 2007, §3 of the reference).

Bandwidth and compute bounds (full-duplex, no in-network reduction):
  broadcast, sendrecv   n beta                       (the root's / the sender's link carries it all)
  reduce                n beta + (p-1)/p n gamma
  scatter, gather,
  allgather, alltoall   (p-1)/p n beta
  reducescatter         (p-1)/p n beta + (p-1)/p n gamma
  allreduce             2 (p-1)/p n beta + (p-1)/p n gamma   (Patarasuk & Yuan 2009)

Latency: with one message per step (single port), information doubles at best each step, so
ceil(lg p) alpha (Chan). Mesh and one-shot algorithms send to every peer in one step, sharing the
port's bandwidth, which our step model charges one alpha; under that multi-port model the bound is
one alpha. `ports="multi"` (the default, since the catalogue contains such algorithms) bounds every
algorithm; `ports="single"` is Chan's bound, which every single-port algorithm meets.
The terms bound each coefficient separately, so their sum bounds every algorithm of the model.
"""

from __future__ import annotations

import numpy as np

from collperf.collectives import check_ranks, formula_bytes, get_collective
from collperf.errors import UsageError
from collperf.model.costs import Cost
from collperf.model.network import Link
from collperf.model.trees import ceil_log2

# (bandwidth coefficient, compute coefficient) as functions of p
_TERMS = {
    "broadcast": (lambda p: 1.0, lambda p: 0.0),
    "sendrecv": (lambda p: 1.0, lambda p: 0.0),
    "reduce": (lambda p: 1.0, lambda p: (p - 1) / p),
    "scatter": (lambda p: (p - 1) / p, lambda p: 0.0),
    "gather": (lambda p: (p - 1) / p, lambda p: 0.0),
    "allgather": (lambda p: (p - 1) / p, lambda p: 0.0),
    "alltoall": (lambda p: (p - 1) / p, lambda p: 0.0),
    "reducescatter": (lambda p: (p - 1) / p, lambda p: (p - 1) / p),
    "allreduce": (lambda p: 2 * (p - 1) / p, lambda p: (p - 1) / p),
}


def bound_coefficients(collective: str, ranks: int, ports: str = "multi") -> tuple[float, float, float]:
    """(a, b, c) of the lower bound a alpha + b n beta + c n gamma."""
    name = get_collective(collective).name
    p = check_ranks(ranks)
    if ports not in ("multi", "single"):
        raise UsageError(f"ports {ports!r}: expected 'multi' or 'single'")
    if p == 1:
        return 0.0, 0.0, 0.0
    latency = 1.0 if ports == "multi" or name == "sendrecv" else float(ceil_log2(p))
    bandwidth, compute = _TERMS[name]
    return latency, bandwidth(p), compute(p)


def lower_bound(collective: str, ranks: int, size_bytes, link: Link, ports: str = "multi") -> Cost:
    a, b, c = bound_coefficients(collective, ranks, ports)
    n = np.atleast_1d(formula_bytes(collective, size_bytes)).astype(float)
    return Cost(np.full(n.shape, a * link.latency_s), b * n * link.seconds_per_byte,
                c * n * link.seconds_per_reduced_byte)
