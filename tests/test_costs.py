"""Closed forms against hand-computed numbers, identities between algorithms, bounds, properties."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from collperf.errors import UsageError
from collperf.model import trees
from collperf.model.bounds import bound_coefficients, lower_bound
from collperf.model.algorithms import ALGORITHMS
from collperf.model.costs import NotApplicable, coefficients, cost
from collperf.model.network import Link

ALPHA, BW, RED = 10e-6, 100e9, 400e9
LINK = Link(ALPHA, BW, RED)
BETA, GAMMA = 1 / BW, 1 / RED


def t(collective, algorithm, p, n, link=LINK, **kw):
    return float(cost(collective, algorithm, p, [n], link, **kw).total_s[0])


def abc(a, b, c, n):
    return a * ALPHA + b * n * BETA + c * n * GAMMA


def test_chapter_ring_allreduce():
    # 16 ranks, 100 MB, 10 us, 100 GB/s -> 2.175 ms (cost-model chapter, exercise 1)
    assert t("allreduce", "ring", 16, 100e6, Link(10e-6, 100e9)) == pytest.approx(2.175e-3)


@pytest.mark.parametrize(
    "collective, algorithm, p, expected",
    [
        ("broadcast", "binomial", 5, (3, 3, 0)),
        ("broadcast", "scatter-allgather", 8, (6, 1.75, 0)),
        ("reduce", "binomial", 6, (3, 3, 3)),
        ("reduce", "rhd", 8, (6, 1.75, 0.875)),
        ("reduce", "rhd", 6, (2 * 2 + 1, 2 * 0.75 + 1, 0.75 + 1)),  # fold-in, p' = 4
        ("scatter", "binomial", 6, (3, 5 / 6, 0)),
        ("gather", "linear", 6, (5, 5 / 6, 0)),
        ("allgather", "ring", 8, (7, 7 / 8, 0)),
        ("allgather", "recursive-doubling", 8, (3, 7 / 8, 0)),
        ("allgather", "bruck", 6, (3, 5 / 6, 0)),
        ("allgather", "mesh", 6, (1, 5 / 6, 0)),
        ("reducescatter", "ring", 4, (3, 0.75, 0.75)),
        ("reducescatter", "recursive-halving", 8, (3, 7 / 8, 7 / 8)),
        # p=3 by hand: fold (n, reduced), halving sends 2 of 3 blocks, unfold one block of n/3
        ("reducescatter", "recursive-halving", 3, (3, 1 + 2 / 3 + 1 / 3, 1 + 2 / 3)),
        ("reducescatter", "pairwise", 5, (4, 0.8, 0.8)),
        ("reducescatter", "mesh", 5, (1, 0.8, 0.8)),
        ("allreduce", "ring", 8, (14, 1.75, 0.875)),
        ("allreduce", "recursive-doubling", 8, (3, 3, 3)),
        ("allreduce", "recursive-doubling", 6, (2 + 2, 2 + 2, 2 + 1)),
        ("allreduce", "rhd", 8, (6, 1.75, 0.875)),
        ("allreduce", "rhd", 6, (6, 3.5, 1.75)),  # (2 lg 4 + 2) a + (2*3/4 + 2) n b + (3/4 + 1) n g
        ("allreduce", "reduce-broadcast", 5, (6, 6, 3)),
        ("allreduce", "mesh", 4, (2, 1.5, 0.75)),
        ("allreduce", "one-shot", 4, (1, 3, 3)),
        ("alltoall", "pairwise", 8, (7, 7 / 8, 0)),
        ("alltoall", "bruck", 8, (3, 1.5, 0)),  # lg p * n/2
        ("alltoall", "bruck", 5, (3, 1.0, 0)),  # popcounts of 0..4 = 5 blocks of n/5
        ("alltoall", "mesh", 8, (1, 7 / 8, 0)),
        ("sendrecv", "ring", 8, (1, 1, 0)),
    ],
)
def test_hand_computed_coefficients(collective, algorithm, p, expected):
    assert coefficients(collective, algorithm, p) == pytest.approx(expected)
    n = 3e6
    assert t(collective, algorithm, p, n) == pytest.approx(abc(*expected, n))


def test_chain_broadcast_fixed_and_optimal_segments():
    n = 64e6
    # (p - 2 + k)(alpha + n beta / k) with p = 4, k = 4
    assert t("broadcast", "chain", 4, n, segments=4) == pytest.approx(6 * (ALPHA + n * BETA / 4))
    p, best = 10, cost("broadcast", "chain", 10, [n], LINK)
    k = int(best.segments[0])
    k_star = math.sqrt((p - 2) * n * BETA / ALPHA)
    assert k in (math.floor(k_star), math.ceil(k_star))
    for other in (k - 1, k + 1):
        assert float(best.total_s[0]) <= t("broadcast", "chain", p, n, segments=other)
    # close to the continuous optimum (sqrt((p-2) alpha) + sqrt(n beta))^2
    assert float(best.total_s[0]) == pytest.approx((math.sqrt((p - 2) * ALPHA) + math.sqrt(n * BETA)) ** 2, rel=1e-3)


def test_double_binary_tree_small_cases_by_hand():
    n = 1e6
    # p = 2: each rank is root of one tree and leaf of the other; n/2 per tree, one segment
    assert t("allreduce", "double-binary-tree", 2, n, segments=1) == pytest.approx(
        2 * ALPHA + n * BETA + 0.5 * n * GAMMA
    )
    assert t("broadcast", "double-binary-tree", 2, n, segments=3) == pytest.approx(3 * ALPHA + n * BETA)
    # p = 4 broadcast, k = 1: the root feeds two 3-deep chains (NCCL's btree on 3 ranks is a chain):
    # step 1 the root sends both halves (n), steps 2 and 3 one half each -> 3 alpha + 2 n beta
    assert t("broadcast", "double-binary-tree", 4, n, segments=1) == pytest.approx(3 * ALPHA + 2 * n * BETA)


def test_double_binary_tree_shapes_are_complementary():
    for p in (4, 8, 16, 24):
        a, b = trees.nccl_dtree_parents(p)
        inner_a = {r for r in range(p) if r in a}
        inner_b = {r for r in range(p) if r in b}
        assert a.count(-1) == 1 and b.count(-1) == 1
        assert not (inner_a - {0}) & (inner_b - {p - 1})  # interior in at most one tree (roots aside)


def test_double_binary_tree_bandwidth_tends_to_two_n_beta():
    big = cost("allreduce", "double-binary-tree", 64, [1e12], Link(1e-6, 1e11))
    assert float(big.bandwidth_s[0]) / (1e12 / 1e11) == pytest.approx(2.0, rel=0.02)


def test_identities():
    n = 7e6
    for p in (2, 3, 4, 7, 8, 16, 33):
        ring_ar = coefficients("allreduce", "ring", p)
        rs, ag = coefficients("reducescatter", "ring", p), coefficients("allgather", "ring", p)
        assert ring_ar == pytest.approx(tuple(x + y for x, y in zip(rs, ag)))
        mesh_ar = coefficients("allreduce", "mesh", p)
        assert mesh_ar == pytest.approx(
            tuple(x + y for x, y in zip(coefficients("reducescatter", "mesh", p), coefficients("allgather", "mesh", p)))
        )
        assert coefficients("allreduce", "reduce-broadcast", p) == pytest.approx(
            tuple(
                x + y for x, y in zip(coefficients("reduce", "binomial", p), coefficients("broadcast", "binomial", p))
            )
        )
        assert coefficients("broadcast", "scatter-allgather", p) == pytest.approx(
            tuple(x + y for x, y in zip(coefficients("scatter", "binomial", p), coefficients("allgather", "bruck", p)))
        )
    for p in (2, 4, 8, 64):  # rhd = recursive halving RS + recursive doubling AG (powers of two)
        rhd = coefficients("allreduce", "rhd", p)
        parts = zip(
            coefficients("reducescatter", "recursive-halving", p), coefficients("allgather", "recursive-doubling", p)
        )
        assert rhd == pytest.approx(tuple(x + y for x, y in parts))
    assert t("reduce", "double-binary-tree", 9, n, segments=5) >= t("broadcast", "double-binary-tree", 9, n, segments=5)


def test_two_rank_collapses():
    n = 5e6
    assert t("allreduce", "recursive-doubling", 2, n) == pytest.approx(ALPHA + n * BETA + n * GAMMA)
    for alg in ("ring", "rhd", "mesh"):
        assert t("allreduce", alg, 2, n) == pytest.approx(2 * ALPHA + n * BETA + 0.5 * n * GAMMA)
    for alg in ("ring", "recursive-doubling", "bruck", "mesh"):
        assert t("allgather", alg, 2, n) == pytest.approx(ALPHA + 0.5 * n * BETA)
    for alg in ("ring", "recursive-halving", "pairwise", "mesh"):
        assert t("reducescatter", alg, 2, n) == pytest.approx(ALPHA + 0.5 * n * BETA + 0.5 * n * GAMMA)


def test_one_rank_costs_nothing():
    for alg in ALGORITHMS:
        assert t(alg.collective, alg.name, 1, 1e6) == 0.0


def test_unavailable_algorithm_says_why():
    with pytest.raises(NotApplicable, match="recursive-doubling cannot run on 12 ranks.*power-of-two.*8 or 16"):
        cost("allgather", "recursive-doubling", 12, [1e6], LINK)
    with pytest.raises(
        UsageError, match=r"unknown algorithm 'ringg' for allreduce: did you mean ring\? expected one of ring"
    ):
        cost("allreduce", "ringg", 4, [1], LINK)
    with pytest.raises(UsageError, match="segments 0"):
        cost("broadcast", "chain", 4, [1], LINK, segments=0)


SIZES = np.geomspace(1, 1e10, 41)
RANKS = list(range(1, 65))


@pytest.mark.parametrize("alg", ALGORITHMS, ids=lambda a: f"{a.collective}-{a.name}")
def test_every_algorithm_meets_its_lower_bound(alg):
    for p in RANKS:
        if alg.unavailable(p):
            continue
        c = cost(alg.collective, alg.name, p, SIZES, LINK)
        bound = lower_bound(alg.collective, p, SIZES, LINK)
        assert np.all(c.total_s >= bound.total_s * (1 - 1e-12))
        assert np.all(c.bandwidth_s >= bound.bandwidth_s * (1 - 1e-12))
        assert np.all(c.compute_s >= bound.compute_s * (1 - 1e-12))
        assert np.all(c.latency_s >= bound.latency_s * (1 - 1e-12))
        if not alg.multiport:  # single-port algorithms also meet Chan's ceil(lg p) latency bound
            single = lower_bound(alg.collective, p, SIZES, LINK, ports="single")
            assert np.all(c.latency_s >= single.latency_s * (1 - 1e-12))


def test_bound_coefficients_by_hand():
    assert bound_coefficients("allreduce", 8) == pytest.approx((1, 1.75, 0.875))
    assert bound_coefficients("allreduce", 8, ports="single") == pytest.approx((3, 1.75, 0.875))
    assert bound_coefficients("broadcast", 5, ports="single") == pytest.approx((3, 1, 0))
    assert bound_coefficients("reducescatter", 4) == pytest.approx((1, 0.75, 0.75))


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(ALGORITHMS),
    st.integers(1, 64),
    st.floats(0, 1e-4),
    st.floats(1e8, 1e12),
    st.lists(st.floats(0, 1e10), min_size=2, max_size=12),
)
def test_monotonic_in_size(alg, p, alpha, bw, sizes):
    if alg.unavailable(p):
        return
    link = Link(alpha, bw, 2 * bw)
    ordered = np.sort(np.array(sizes))
    total = cost(alg.collective, alg.name, p, ordered, link).total_s
    assert np.all(np.diff(total) >= -1e-15 * np.maximum(total[1:], 1))
