"""Flat algorithms on a two-level cluster, priced with the traffic each level carries (model/two_level/pricing.py):
hand-computed steps, the one-link cases equal to the closed form, and never below the lower bound."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from collperf.cli import app
from collperf.model.algorithms import algorithms_for
from collperf.model.costs import NotApplicable, cost
from collperf.model.network import Cluster, Link, Network
from collperf.model.predict import candidates, network_lower_bound
from collperf.model.auto.select import auto_choices
from collperf.model.two_level.build import build_array
from collperf.model.two_level.pricing import flat_cost, reference_segments, schedule_terms

NV = Link(1e-6, 200e9)  # 200 GB/s per GPU inside a node
NIC = Link(5e-6, 50e9)  # one 400 Gb/s NIC


def test_mesh_alltoall_on_eight_dgx_h100_is_the_nic_bound():
    # 8 x 8 ranks, one NIC per GPU; each rank sends n/64 to each of 63 peers in one step:
    # 7 of them on its node (7/64 n at 200 GB/s), 56 off it (56/64 n per rank, 8 x that per node over 8 NICs)
    n = 448 * 2**20
    c = Cluster(8, 8, NV, NIC, nics_per_node=8)
    intra_s, rank_s, node_s = 7 / 64 * n / 200e9, 56 / 64 * n / 50e9, 8 * 56 / 64 * n / 400e9
    expected = 5e-6 + max(intra_s, rank_s, node_s)
    assert expected == pytest.approx(8.226e-3, rel=1e-3)
    assert flat_cost("alltoall", "mesh", c, [n]).total_s[0] == pytest.approx(expected, rel=1e-12)


def test_the_cli_prices_the_two_level_mesh_at_the_nic_bound():
    res = CliRunner().invoke(
        app,
        [
            "predict",
            "alltoall",
            "--cluster",
            "dgx-h100",
            "--nodes",
            "8",
            "--intra-bandwidth",
            "200GB/s",
            "-s",
            "448M",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    mesh = next(a for a in doc["algorithms"] if a["name"] == "mesh")
    n = 448 * 2**20
    assert mesh["time_s"] == pytest.approx(7 / 8 * n / 50e9 + mesh["latency_s"], rel=1e-6)
    assert mesh["time_s"] == pytest.approx(8.226e-3, rel=1e-3)


def test_ring_allreduce_crosses_only_at_node_boundaries():
    # 2 nodes x 4 ranks, ONE 25 GB/s NIC per node. A flat ring's 2(p-1) = 14 steps each send n/8 per rank;
    # only ranks 3 -> 4 and 7 -> 0 cross, one flow per node, which gets the whole NIC (not a quarter of it)
    n = 1e9
    c = Cluster(2, 4, Link(1e-6, 100e9), Link(5e-6, 25e9), nics_per_node=1)
    step_s = 5e-6 + max(n / 8 / 100e9, n / 8 / 25e9)
    got = flat_cost("allreduce", "ring", c, [n])
    assert got.total_s[0] == pytest.approx(14 * step_s, rel=1e-12)
    assert got.latency_s[0] == pytest.approx(14 * 5e-6)
    # the bottleneck pricing charged every step at the per-rank share of the NIC, 25/4 GB/s
    assert cost("allreduce", "ring", 8, [n], c.bottleneck).total_s[0] > 3.5 * got.total_s[0]


def test_steps_inside_a_node_pay_the_intra_latency():
    # recursive doubling on 2 x 4: distances 1 and 2 stay on a node, distance 4 crosses it
    n = 1e6
    c = Cluster(2, 4, Link(1e-6, 100e9), Link(5e-6, 25e9), nics_per_node=4)
    got = flat_cost("allreduce", "recursive-doubling", c, [n])
    # every step sends the whole vector to one partner: n/100e9 twice inside, n/25e9 once across
    assert got.latency_s[0] == pytest.approx(2 * 1e-6 + 5e-6)
    assert got.bandwidth_s[0] == pytest.approx(2 * n / 100e9 + n / 25e9)


@pytest.mark.parametrize("collective", ["allreduce", "allgather", "alltoall", "broadcast", "reducescatter"])
def test_one_node_and_one_rank_per_node_equal_the_flat_formula(collective):
    sizes = np.array([1e3, 1e6, 1e9])
    one_node = Cluster(1, 8, NV, NIC, 8)
    one_per_node = Cluster(8, 1, NV, NIC, 2)
    for a in algorithms_for(collective):
        try:
            flat = cost(collective, a.name, 8, sizes, NV)
        except NotApplicable:
            continue
        assert np.allclose(flat_cost(collective, a.name, one_node, sizes).total_s, flat.total_s, rtol=1e-12)
        # one rank per node: every byte crosses, at both NICs of its node
        per_rank = cost(collective, a.name, 8, sizes, Link(5e-6, 100e9))
        assert np.allclose(flat_cost(collective, a.name, one_per_node, sizes).total_s, per_rank.total_s, rtol=1e-12)


def test_auto_prices_flat_schedules_as_predict_does():
    c = Cluster(4, 4, NV, NIC, nics_per_node=4)
    net = Network.of(c)
    sizes = [1 << 10, 1 << 20, 1 << 28]
    costs, _ = candidates("alltoall", net, sizes)
    by_name = {r.name: r.cost.total_s for r in costs}
    for i, choice in enumerate(auto_choices("alltoall", net, sizes)):
        assert choice.predicted_s == pytest.approx(by_name[choice.algorithm][i], rel=1e-12)
        assert choice.predicted_s == pytest.approx(min(t[i] for t in by_name.values()), rel=1e-12)


@settings(max_examples=30, deadline=None)
@given(
    collective=st.sampled_from(
        ["allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce", "scatter", "gather"]
    ),
    nodes=st.integers(2, 4),
    per_node=st.integers(2, 4),
    nics=st.integers(1, 8),
    intra=st.floats(10e9, 900e9),
    inter=st.floats(1e9, 100e9),
    reduce=st.sampled_from([np.inf, 50e9]),
)
def test_two_level_price_never_below_the_bound(collective, nodes, per_node, nics, intra, inter, reduce):
    c = Cluster(nodes, per_node, Link(1e-6, intra, reduce), Link(5e-6, inter, reduce), nics)
    net = Network.of(c)
    sizes = np.array([1e2, 1e5, 1e8, 1e10])
    bound = network_lower_bound(collective, net, sizes).total_s
    costs, _ = candidates(collective, net, sizes)
    for r in costs:
        assert np.all(r.cost.total_s >= bound * (1 - 1e-9)), r.name


@pytest.mark.parametrize("segments", [1, 3, 8, 16])
def test_a_pipeline_at_a_reference_count_is_its_schedule_priced_per_level(segments):
    assert reference_segments(segments) == segments
    c = Cluster(2, 4, Link(1e-6, 100e9), Link(5e-6, 25e9), nics_per_node=2)
    n = 1e8
    latency_s, seconds_per_byte = schedule_terms(
        build_array("allreduce", "double-binary-tree", 8, segments=segments), c
    )
    got = flat_cost("allreduce", "double-binary-tree", c, [n], segments=segments)
    assert got.segments[0] == segments
    assert got.latency_s[0] == pytest.approx(latency_s, rel=1e-12)
    assert got.bandwidth_s[0] == pytest.approx(seconds_per_byte * n, rel=1e-12)


def test_reference_counts_above_eight_are_powers_of_two():
    assert [reference_segments(k) for k in (9, 15, 16, 17, 63, 64, 1000)] == [8, 8, 16, 16, 32, 64, 64]


@pytest.mark.parametrize(
    "collective, algorithm, segments",
    [("broadcast", "chain", 20), ("broadcast", "chain", 100), ("allreduce", "double-binary-tree", 40)],
)
def test_a_pipeline_past_its_fill_is_exact_between_reference_counts(collective, algorithm, segments):
    # 8 ranks: the chain fills in 7 steps, the trees in a few; 16 and 32 segments are past it, so each
    # added segment is one all-edges step and the price at 20, 40 or 100 equals the schedule's own
    c = Cluster(2, 4, Link(1e-6, 100e9), Link(5e-6, 25e9), nics_per_node=2)
    n = 1e8
    latency_s, seconds_per_byte = schedule_terms(build_array(collective, algorithm, 8, segments=segments), c)
    got = flat_cost(collective, algorithm, c, [n], segments=segments)
    assert got.latency_s[0] == pytest.approx(latency_s, rel=1e-12)
    assert got.bandwidth_s[0] == pytest.approx(seconds_per_byte * n, rel=1e-12)
