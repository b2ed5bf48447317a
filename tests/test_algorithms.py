"""The algorithm registry: every algorithm is one object with both halves, and bad definitions fail."""

import pytest

from collperf.errors import UsageError
from collperf.model.algorithms import (
    ALGORITHMS,
    REGISTRY,
    Algorithm,
    RegistrationError,
    algorithms_for,
    get_algorithm,
    register,
)
from collperf.model.algorithms.base import const
from collperf.schedule.ir import Schedule

# Written by hand from the registry before algorithms became one object (model/costs.py ALGORITHMS
# and model/two_level/build.py BUILDERS, which had to agree): the move must neither add nor drop a pair,
# and the listing order (which is also the tie-break order of costs.lowest) must not change.
EXPECTED = [
    ("broadcast", "binomial"),
    ("broadcast", "scatter-allgather"),
    ("broadcast", "chain"),
    ("broadcast", "double-binary-tree"),
    ("reduce", "binomial"),
    ("reduce", "rhd"),
    ("reduce", "double-binary-tree"),
    ("scatter", "binomial"),
    ("scatter", "linear"),
    ("gather", "binomial"),
    ("gather", "linear"),
    ("allgather", "ring"),
    ("allgather", "recursive-doubling"),
    ("allgather", "bruck"),
    ("allgather", "mesh"),
    ("reducescatter", "ring"),
    ("reducescatter", "recursive-halving"),
    ("reducescatter", "pairwise"),
    ("reducescatter", "mesh"),
    ("allreduce", "ring"),
    ("allreduce", "recursive-doubling"),
    ("allreduce", "rhd"),
    ("allreduce", "reduce-broadcast"),
    ("allreduce", "double-binary-tree"),
    ("allreduce", "mesh"),
    ("allreduce", "one-shot"),
    ("alltoall", "pairwise"),
    ("alltoall", "bruck"),
    ("alltoall", "mesh"),
    ("sendrecv", "ring"),
]
PIPELINED = {
    ("broadcast", "chain"),
    ("broadcast", "double-binary-tree"),
    ("reduce", "double-binary-tree"),
    ("allreduce", "double-binary-tree"),
}
MULTIPORT = {
    ("allgather", "mesh"),
    ("reducescatter", "mesh"),
    ("allreduce", "mesh"),
    ("allreduce", "one-shot"),
    ("alltoall", "mesh"),
}


def _dummy_builder(p, segments=1):
    raise AssertionError("never built")


def test_registry_covers_exactly_the_pairs_it_covered_before():
    assert [(a.collective, a.name) for a in ALGORITHMS] == EXPECTED
    assert set(REGISTRY) == set(EXPECTED)
    assert {(a.collective, a.name) for a in ALGORITHMS if a.pipeline is not None} == PIPELINED
    assert {(a.collective, a.name) for a in ALGORITHMS if a.multiport} == MULTIPORT


@pytest.mark.parametrize("alg", ALGORITHMS, ids=lambda a: f"{a.collective}-{a.name}")
def test_every_algorithm_has_both_halves(alg):
    assert (alg.coefficients is None) != (alg.pipeline is None)
    assert callable(alg.builder) and alg.formula and alg.source
    p = 4  # every algorithm, power-of-two ones included, runs on 4 ranks
    schedule = alg.builder(p, 2)
    assert isinstance(schedule, Schedule)
    assert (schedule.collective, schedule.algorithm, schedule.ranks) == (alg.collective, alg.name, p)


def test_only_pow2_algorithm_needs_pow2():
    assert [(a.collective, a.name) for a in ALGORITHMS if a.unavailable(6)] == [("allgather", "recursive-doubling")]
    assert "power-of-two" in get_algorithm("allgather", "recursive-doubling").unavailable(6)


def test_registering_without_a_builder_raises():
    with pytest.raises(RegistrationError, match="no schedule builder"):
        Algorithm("allreduce", "ring2", "f", "s", coefficients=const(1, 1, 0))
    assert ("allreduce", "ring2") not in REGISTRY


def test_registering_without_a_cost_or_with_two_raises():
    with pytest.raises(RegistrationError, match="closed-form cost"):
        Algorithm("allreduce", "ring2", "f", "s", builder=_dummy_builder)
    with pytest.raises(RegistrationError, match="closed-form cost"):
        Algorithm(
            "allreduce",
            "ring2",
            "f",
            "s",
            coefficients=const(1, 1, 0),
            pipeline=lambda p, k: (k, k, k),
            builder=_dummy_builder,
        )


def test_registering_a_duplicate_raises_and_changes_nothing():
    before = list(ALGORITHMS)
    with pytest.raises(RegistrationError, match="registered twice"):
        register(Algorithm("allreduce", "ring", "f", "s", coefficients=const(1, 1, 0), builder=_dummy_builder))
    assert ALGORITHMS == before and REGISTRY[("allreduce", "ring")] is before[EXPECTED.index(("allreduce", "ring"))]


def test_registering_an_unlisted_name_raises():
    with pytest.raises(RegistrationError, match="ORDER"):
        register(Algorithm("allreduce", "ring2", "f", "s", coefficients=const(1, 1, 0), builder=_dummy_builder))
    assert ("allreduce", "ring2") not in REGISTRY


def test_lookup_by_collective_and_name():
    assert get_algorithm("AllReduce", " RHD ").name == "rhd"
    assert [a.name for a in algorithms_for("alltoall")] == ["pairwise", "bruck", "mesh"]
    with pytest.raises(
        UsageError,
        match="unknown algorithm 'bruck' for allreduce: expected one of ring, recursive-"
        "doubling, rhd, reduce-broadcast, double-binary-tree, mesh, one-shot",
    ):
        get_algorithm("allreduce", "bruck")
    with pytest.raises(UsageError, match="unknown collective"):
        algorithms_for("allreduse")
