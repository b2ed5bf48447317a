"""The registry of schedule builders: one per (collective, algorithm) of the cost model."""

from __future__ import annotations

from collperf.collectives import check_ranks, get_collective
from collperf.errors import UsageError
from collperf.model.costs import REGISTRY, get_algorithm
from collperf.schedule.algorithms import bruck, hierarchical, mesh, recursive, ring, trees
from collperf.schedule.ir import Schedule, relabel

# (collective, algorithm) -> builder(p, segments)
BUILDERS = {
    ("broadcast", "binomial"): lambda p, k: trees.broadcast_binomial(p),
    ("broadcast", "scatter-allgather"): lambda p, k: bruck.broadcast_scatter_allgather(p),
    ("broadcast", "chain"): lambda p, k: trees.broadcast_chain(p, k),
    ("broadcast", "double-binary-tree"): lambda p, k: trees.broadcast_double_binary_tree(p, k),
    ("reduce", "binomial"): lambda p, k: trees.reduce_binomial(p),
    ("reduce", "rhd"): lambda p, k: recursive.reduce_rhd(p),
    ("reduce", "double-binary-tree"): lambda p, k: trees.reduce_double_binary_tree(p, k),
    ("scatter", "binomial"): lambda p, k: trees.scatter_binomial(p),
    ("scatter", "linear"): lambda p, k: mesh.scatter_linear(p),
    ("gather", "binomial"): lambda p, k: trees.gather_binomial(p),
    ("gather", "linear"): lambda p, k: mesh.gather_linear(p),
    ("allgather", "ring"): lambda p, k: ring.allgather(p),
    ("allgather", "recursive-doubling"): lambda p, k: recursive.allgather_recursive_doubling(p),
    ("allgather", "bruck"): lambda p, k: bruck.allgather(p),
    ("allgather", "mesh"): lambda p, k: mesh.allgather(p),
    ("reducescatter", "ring"): lambda p, k: ring.reducescatter(p),
    ("reducescatter", "recursive-halving"): lambda p, k: recursive.reducescatter_recursive_halving(p),
    ("reducescatter", "pairwise"): lambda p, k: mesh.reducescatter_pairwise(p),
    ("reducescatter", "mesh"): lambda p, k: mesh.reducescatter(p),
    ("allreduce", "ring"): lambda p, k: ring.allreduce(p),
    ("allreduce", "recursive-doubling"): lambda p, k: recursive.allreduce_recursive_doubling(p),
    ("allreduce", "rhd"): lambda p, k: recursive.allreduce_rhd(p),
    ("allreduce", "reduce-broadcast"): lambda p, k: trees.allreduce_reduce_broadcast(p),
    ("allreduce", "double-binary-tree"): lambda p, k: trees.allreduce_double_binary_tree(p, k),
    ("allreduce", "mesh"): lambda p, k: mesh.allreduce_two_shot(p),
    ("allreduce", "one-shot"): lambda p, k: mesh.allreduce_one_shot(p),
    ("alltoall", "pairwise"): lambda p, k: mesh.alltoall_pairwise(p),
    ("alltoall", "bruck"): lambda p, k: bruck.alltoall(p),
    ("alltoall", "mesh"): lambda p, k: mesh.alltoall_mesh(p),
    ("sendrecv", "ring"): lambda p, k: ring.sendrecv(p),
}
assert set(BUILDERS) == set(REGISTRY), "every algorithm of the cost model has a schedule"


def build(collective: str, algorithm: str, ranks: int, root: int = 0, segments: int = 1) -> Schedule:
    """The schedule of a flat algorithm on `ranks` ranks (rooted collectives: rooted at `root`)."""
    alg = get_algorithm(collective, algorithm)
    p = check_ranks(ranks)
    reason = alg.unavailable(p)
    if reason:
        raise UsageError(f"{alg.collective} {alg.name} cannot run on {p} ranks: {reason}")
    if isinstance(segments, bool) or not isinstance(segments, int) or segments < 1:
        raise UsageError(f"segments {segments!r} is not a whole number >= 1")
    if not 0 <= root < p:
        raise UsageError(f"root {root} is not a rank of 0..{p - 1}")
    schedule = BUILDERS[(alg.collective, alg.name)](p, segments)
    return relabel(schedule, root) if get_collective(alg.collective).rooted else schedule


def build_hierarchical(collective: str, nodes: int, ranks_per_node: int, intra_algorithm: str,
                       inter_algorithm: str, segments: int = 1) -> Schedule:
    """The two-level schedule (model/hierarchy.py) with the given phase algorithms."""
    name = get_collective(collective).name
    if name not in hierarchical.PLANS:
        raise UsageError(f"no two-level algorithm for {name}")

    def intra(phase_collective, ranks):
        return build(phase_collective, intra_algorithm, ranks, segments=segments)

    def inter(phase_collective, ranks):
        return build(phase_collective, inter_algorithm, ranks, segments=segments)

    return hierarchical.build(name, check_ranks(nodes), check_ranks(ranks_per_node), intra, inter)


# The default phase algorithms of a two-level schedule when none is given.
DEFAULT_PHASES = {"allreduce": "ring", "allgather": "ring", "reducescatter": "ring", "alltoall": "pairwise",
                  "broadcast": "binomial", "reduce": "binomial", "scatter": "binomial", "gather": "binomial"}
