"""Direct (mesh) algorithms: every rank talks to every peer in one step (AWS Neuron Mesh and
single-step Mesh; ASTRA-sim direct), and the pairwise exchanges that spread the same traffic over
p - 1 steps (MPICH pairwise), and the linear rooted ones."""

from __future__ import annotations

import numpy as np

from collperf.model.algorithms.base import MPICH, algorithm, const, q
from collperf.schedule.arrays import ArraySchedule, array_step, concat_arrays, make_arrays
from collperf.schedule.ir import COPY, REDUCE, Schedule, Transfer, concat, make, reverse, step

_NEURON = "AWS Neuron inter-node Mesh; ASTRA-sim direct"

# Array forms: each is the schedule of its tuple twin below (same steps, transfers, chunks, in order),
# built in numpy as schedule/arrays.py steps; tests/test_simulate_arrays.py holds them to it.


def _all_pairs(p: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (r, d), d != r, r-major, d increasing: the order of the tuple builders' loops."""
    r = np.repeat(np.arange(p), p - 1)
    d = np.tile(np.arange(p - 1), p)
    return r, d + (d >= r)


def allgather_arrays(p: int, segments: int = 1) -> ArraySchedule:
    r, d = _all_pairs(p)
    return make_arrays("allgather", "mesh", p, p, [array_step(r, d, r, r + 1, False)])


@algorithm(
    "allgather",
    "mesh",
    "alpha + (p-1)/p n beta (all peers in one step, port shared)",
    _NEURON,
    coefficients=const(1, q, 0),
    multiport=True,
    array_builder=allgather_arrays,
)
def allgather(p: int, segments: int = 1) -> Schedule:
    return make(
        "allgather", "mesh", p, p, [step(Transfer(r, d, (r,), COPY) for r in range(p) for d in range(p) if d != r)]
    )


def reducescatter_arrays(p: int, segments: int = 1) -> ArraySchedule:
    r, d = _all_pairs(p)
    return make_arrays("reducescatter", "mesh", p, p, [array_step(r, d, d, d + 1, True)])


@algorithm(
    "reducescatter",
    "mesh",
    "alpha + (p-1)/p n beta + (p-1)/p n gamma",
    _NEURON,
    coefficients=const(1, q, q),
    multiport=True,
    array_builder=reducescatter_arrays,
)
def reducescatter(p: int, segments: int = 1) -> Schedule:
    return make(
        "reducescatter",
        "mesh",
        p,
        p,
        [step(Transfer(r, d, (d,), REDUCE) for r in range(p) for d in range(p) if d != r)],
    )


def allreduce_two_shot_arrays(p: int, segments: int = 1) -> ArraySchedule:
    return concat_arrays(reducescatter_arrays(p), allgather_arrays(p), "allreduce", "mesh")


@algorithm(
    "allreduce",
    "mesh",
    "2 alpha + 2 (p-1)/p n beta + (p-1)/p n gamma (two-shot: mesh RS + mesh AG)",
    "AWS Neuron Mesh; ASTRA-sim direct (astra-sim #296)",
    coefficients=const(2, lambda p: 2 * q(p), q),
    multiport=True,
    array_builder=allreduce_two_shot_arrays,
)
def allreduce_two_shot(p: int, segments: int = 1) -> Schedule:
    return concat(reducescatter(p), allgather(p), "allreduce", "mesh")


def allreduce_one_shot_arrays(p: int, segments: int = 1) -> ArraySchedule:
    r, d = _all_pairs(p)
    return make_arrays("allreduce", "one-shot", p, 1, [array_step(r, d, 0, 1, True)])


@algorithm(
    "allreduce",
    "one-shot",
    "alpha + (p-1) n beta + (p-1) n gamma (everyone sends everything)",
    "AWS Neuron single-step Mesh",
    coefficients=const(1, lambda p: p - 1, lambda p: p - 1),
    multiport=True,
    array_builder=allreduce_one_shot_arrays,
)
def allreduce_one_shot(p: int, segments: int = 1) -> Schedule:
    # every rank sends its whole vector to all peers and reduces what it receives; transfers read
    # the state of the step's start, so each rank sends its own input only
    return make(
        "allreduce",
        "one-shot",
        p,
        1,
        [step(Transfer(r, d, (0,), REDUCE) for r in range(p) for d in range(p) if d != r)],
    )


def reducescatter_pairwise_arrays(p: int, segments: int = 1) -> ArraySchedule:
    r = np.arange(p)
    steps = [array_step(r, (r + s) % p, (r + s) % p, (r + s) % p + 1, True) for s in range(1, p)]
    return make_arrays("reducescatter", "pairwise", p, p, steps)


@algorithm(
    "reducescatter",
    "pairwise",
    "(p-1) alpha + (p-1)/p n beta + (p-1)/p n gamma",
    MPICH + "reduce_scatter_block_intra_pairwise.c",
    coefficients=const(lambda p: p - 1, q, q),
    array_builder=reducescatter_pairwise_arrays,
)
def reducescatter_pairwise(p: int, segments: int = 1) -> Schedule:
    # step s: rank r sends block r + s (reduced into the owner), receives its own block from r - s
    steps = [step(Transfer(r, (r + s) % p, ((r + s) % p,), REDUCE) for r in range(p)) for s in range(1, p)]
    return make("reducescatter", "pairwise", p, p, steps)


def alltoall_pairwise_arrays(p: int, segments: int = 1) -> ArraySchedule:
    r = np.arange(p)
    steps = [array_step(r, (r + s) % p, r * p + (r + s) % p, r * p + (r + s) % p + 1, False) for s in range(1, p)]
    return make_arrays("alltoall", "pairwise", p, p * p, steps, buffer_chunks=p)


@algorithm(
    "alltoall",
    "pairwise",
    "(p-1) alpha + (p-1)/p n beta",
    MPICH + "alltoall_intra_pairwise.c",
    coefficients=const(lambda p: p - 1, q, 0),
    array_builder=alltoall_pairwise_arrays,
)
def alltoall_pairwise(p: int, segments: int = 1) -> Schedule:
    steps = [step(Transfer(r, (r + s) % p, (r * p + (r + s) % p,), COPY) for r in range(p)) for s in range(1, p)]
    return make("alltoall", "pairwise", p, p * p, steps, buffer_chunks=p)


def alltoall_mesh_arrays(p: int, segments: int = 1) -> ArraySchedule:
    r, d = _all_pairs(p)
    return make_arrays(
        "alltoall", "mesh", p, p * p, [array_step(r, d, r * p + d, r * p + d + 1, False)], buffer_chunks=p
    )


@algorithm(
    "alltoall",
    "mesh",
    "alpha + (p-1)/p n beta (all peers at once, port shared)",
    MPICH + "alltoall_intra_scattered.c; ASTRA-sim direct",
    coefficients=const(1, q, 0),
    multiport=True,
    array_builder=alltoall_mesh_arrays,
)
def alltoall_mesh(p: int, segments: int = 1) -> Schedule:
    return make(
        "alltoall",
        "mesh",
        p,
        p * p,
        [step(Transfer(r, d, (r * p + d,), COPY) for r in range(p) for d in range(p) if d != r)],
        buffer_chunks=p,
    )


@algorithm(
    "scatter",
    "linear",
    "(p-1) alpha + (p-1)/p n beta",
    MPICH + "scatterv_allcomm_linear.c",
    coefficients=const(lambda p: p - 1, q, 0),
)
def scatter_linear(p: int, segments: int = 1) -> Schedule:
    return make("scatter", "linear", p, p, [step([Transfer(0, d, (d,), COPY)]) for d in range(1, p)])


@algorithm(
    "gather",
    "linear",
    "(p-1) alpha + (p-1)/p n beta",
    MPICH + "gatherv_allcomm_linear.c",
    coefficients=const(lambda p: p - 1, q, 0),
)
def gather_linear(p: int, segments: int = 1) -> Schedule:
    return reverse(scatter_linear(p), "gather", "linear", reduce=False)
