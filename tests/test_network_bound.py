"""The node-level network bound of `predict` on a two-level cluster: each node's NICs carry what leaves the
node, for alltoall every rank's off-node blocks, g (N-1)/N of the size per node."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from collperf.cli import app
from collperf.model.network import Cluster, Link, Network
from collperf.model.predict import candidates, network_lower_bound


def test_alltoall_bound_on_eight_dgx_h100_by_hand():
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
    size = 448 * 2**20
    # 8 GPUs x 7/8 of their blocks leave the node through 8 NICs of 400 Gb/s = 50 GB/s: 8.22 ms, plus
    # one network latency (the node-level latency term)
    nic_s = 8 * 7 / 8 * size / (8 * 50e9)
    assert nic_s == pytest.approx(8.22e-3, rel=1e-3)
    assert doc["lower_bound_s"] == pytest.approx(nic_s, rel=1e-3)
    # every algorithm is at or above it
    assert all(a["time_s"] >= doc["lower_bound_s"] for a in doc["algorithms"])


@settings(max_examples=40, deadline=None)
@given(
    nodes=st.integers(2, 8),
    per_node=st.integers(1, 8),
    nics=st.integers(1, 8),
    intra=st.floats(10e9, 900e9),
    inter=st.floats(1e9, 100e9),
)
def test_alltoall_bound_never_above_an_algorithm(nodes, per_node, nics, intra, inter):
    c = Cluster(nodes, per_node, Link(1e-6, intra), Link(5e-6, inter), nics)
    net = Network.of(c)
    sizes = np.array([1e3, 1e6, 1e9])
    bound = network_lower_bound("alltoall", net, sizes).total_s
    # each node sends g (N-1)/N of the size over nics x inter
    assert bound == pytest.approx(5e-6 + per_node * (nodes - 1) / nodes * sizes / (nics * inter))
    results, _ = candidates("alltoall", net, sizes)
    for r in results:
        assert np.all(r.cost.total_s >= bound * (1 - 1e-9)), r.name
