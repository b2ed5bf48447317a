"""Direct (mesh) algorithms: every rank talks to every peer in one step (AWS Neuron Mesh and
single-step Mesh; ASTRA-sim direct), and the pairwise exchanges that spread the same traffic over
p - 1 steps (MPICH pairwise), and the linear rooted ones."""

from __future__ import annotations

from collperf.model.algorithms.base import MPICH, algorithm, arrays_of, const, q
from collperf.model.algorithms import vectorized
from collperf.schedule.ir import COPY, REDUCE, Transfer, concat, make, reverse, step

_NEURON = "AWS Neuron inter-node Mesh; ASTRA-sim direct"


@algorithm("allgather", "mesh", "alpha + (p-1)/p n beta (all peers in one step, port shared)", _NEURON,
           coefficients=const(1, q, 0), multiport=True,
           array_builder=arrays_of(vectorized.mesh_allgather))
def allgather(p: int, segments: int = 1):
    return make("allgather", "mesh", p, p,
                [step(Transfer(r, d, (r,), COPY) for r in range(p) for d in range(p) if d != r)])


@algorithm("reducescatter", "mesh", "alpha + (p-1)/p n beta + (p-1)/p n gamma", _NEURON,
           coefficients=const(1, q, q), multiport=True,
           array_builder=arrays_of(vectorized.mesh_reducescatter))
def reducescatter(p: int, segments: int = 1):
    return make("reducescatter", "mesh", p, p,
                [step(Transfer(r, d, (d,), REDUCE) for r in range(p) for d in range(p) if d != r)])


@algorithm("allreduce", "mesh", "2 alpha + 2 (p-1)/p n beta + (p-1)/p n gamma (two-shot: mesh RS + mesh AG)",
           "AWS Neuron Mesh; ASTRA-sim direct (astra-sim #296)", coefficients=const(2, lambda p: 2 * q(p), q),
           multiport=True,
           array_builder=arrays_of(vectorized.mesh_allreduce))
def allreduce_two_shot(p: int, segments: int = 1):
    return concat(reducescatter(p), allgather(p), "allreduce", "mesh")


@algorithm("allreduce", "one-shot", "alpha + (p-1) n beta + (p-1) n gamma (everyone sends everything)",
           "AWS Neuron single-step Mesh", coefficients=const(1, lambda p: p - 1, lambda p: p - 1), multiport=True,
           array_builder=arrays_of(vectorized.one_shot_allreduce))
def allreduce_one_shot(p: int, segments: int = 1):
    # every rank sends its whole vector to all peers and reduces what it receives; transfers read
    # the state of the step's start, so each rank sends its own input only
    return make("allreduce", "one-shot", p, 1,
                [step(Transfer(r, d, (0,), REDUCE) for r in range(p) for d in range(p) if d != r)])


@algorithm("reducescatter", "pairwise", "(p-1) alpha + (p-1)/p n beta + (p-1)/p n gamma",
           MPICH + "reduce_scatter_block_intra_pairwise.c", coefficients=const(lambda p: p - 1, q, q),
           array_builder=arrays_of(vectorized.pairwise_reducescatter))
def reducescatter_pairwise(p: int, segments: int = 1):
    # step s: rank r sends block r + s (reduced into the owner), receives its own block from r - s
    steps = [step(Transfer(r, (r + s) % p, ((r + s) % p,), REDUCE) for r in range(p)) for s in range(1, p)]
    return make("reducescatter", "pairwise", p, p, steps)


@algorithm("alltoall", "pairwise", "(p-1) alpha + (p-1)/p n beta", MPICH + "alltoall_intra_pairwise.c",
           coefficients=const(lambda p: p - 1, q, 0),
           array_builder=arrays_of(vectorized.pairwise_alltoall))
def alltoall_pairwise(p: int, segments: int = 1):
    steps = [step(Transfer(r, (r + s) % p, (r * p + (r + s) % p,), COPY) for r in range(p)) for s in range(1, p)]
    return make("alltoall", "pairwise", p, p * p, steps, buffer_chunks=p)


@algorithm("alltoall", "mesh", "alpha + (p-1)/p n beta (all peers at once, port shared)",
           MPICH + "alltoall_intra_scattered.c; ASTRA-sim direct", coefficients=const(1, q, 0), multiport=True,
           array_builder=arrays_of(vectorized.mesh_alltoall))
def alltoall_mesh(p: int, segments: int = 1):
    return make("alltoall", "mesh", p, p * p,
                [step(Transfer(r, d, (r * p + d,), COPY) for r in range(p) for d in range(p) if d != r)],
                buffer_chunks=p)


@algorithm("scatter", "linear", "(p-1) alpha + (p-1)/p n beta", MPICH + "scatterv_allcomm_linear.c",
           coefficients=const(lambda p: p - 1, q, 0))
def scatter_linear(p: int, segments: int = 1):
    return make("scatter", "linear", p, p, [step([Transfer(0, d, (d,), COPY)]) for d in range(1, p)])


@algorithm("gather", "linear", "(p-1) alpha + (p-1)/p n beta", MPICH + "gatherv_allcomm_linear.c",
           coefficients=const(lambda p: p - 1, q, 0))
def gather_linear(p: int, segments: int = 1):
    return reverse(scatter_linear(p), "gather", "linear", reduce=False)
