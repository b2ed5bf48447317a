"""Direct (mesh) algorithms: every rank talks to every peer in one step (AWS Neuron Mesh and
single-step Mesh; ASTRA-sim direct), and the pairwise exchanges that spread the same traffic over
p - 1 steps (MPICH pairwise), and the linear rooted ones."""

from __future__ import annotations

from collperf.schedule.ir import COPY, REDUCE, Transfer, concat, make, reverse, step


def allgather(p: int):
    return make("allgather", "mesh", p, p,
                [step(Transfer(r, d, (r,), COPY) for r in range(p) for d in range(p) if d != r)])


def reducescatter(p: int):
    return make("reducescatter", "mesh", p, p,
                [step(Transfer(r, d, (d,), REDUCE) for r in range(p) for d in range(p) if d != r)])


def allreduce_two_shot(p: int):
    return concat(reducescatter(p), allgather(p), "allreduce", "mesh")


def allreduce_one_shot(p: int):
    # every rank sends its whole vector to all peers and reduces what it receives; transfers read
    # the state of the step's start, so each rank sends its own input only
    return make("allreduce", "one-shot", p, 1,
                [step(Transfer(r, d, (0,), REDUCE) for r in range(p) for d in range(p) if d != r)])


def reducescatter_pairwise(p: int):
    # step s: rank r sends block r + s (reduced into the owner), receives its own block from r - s
    steps = [step(Transfer(r, (r + s) % p, ((r + s) % p,), REDUCE) for r in range(p)) for s in range(1, p)]
    return make("reducescatter", "pairwise", p, p, steps)


def alltoall_pairwise(p: int):
    steps = [step(Transfer(r, (r + s) % p, (r * p + (r + s) % p,), COPY) for r in range(p)) for s in range(1, p)]
    return make("alltoall", "pairwise", p, p * p, steps, buffer_chunks=p)


def alltoall_mesh(p: int):
    return make("alltoall", "mesh", p, p * p,
                [step(Transfer(r, d, (r * p + d,), COPY) for r in range(p) for d in range(p) if d != r)],
                buffer_chunks=p)


def scatter_linear(p: int):
    return make("scatter", "linear", p, p, [step([Transfer(0, d, (d,), COPY)]) for d in range(1, p)])


def gather_linear(p: int):
    return reverse(scatter_linear(p), "gather", "linear", reduce=False)
