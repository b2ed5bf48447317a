"""-A auto's pricing: the built-in as a candidate from its fit, shared host links priced by the host's load."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from collperf.errors import UsageError
from collperf.model.auto.builtin_cost import BuiltinFit, fit_builtin
from collperf.model.costs import cost
from collperf.model.network import Cluster, Link, Network
from collperf.model.auto.select import auto_choices, BUILTIN_MARGIN
from collperf.model.shared_links import HostLinks, host_priced, shared_link_cost
from collperf.schedule.ir import COPY, Schedule, Step, Transfer
from collperf.model.algorithms import REGISTRY
from collperf.runtime.auto.builtin_fit import FIT_MAX_BYTES, FIT_MIN_BYTES, fit_sizes
from collperf.runtime.launch import Job, run_local

SIZES = [1 << 20, 4 << 20, 16 << 20, 64 << 20]
SLOW = Network.of(Link(1e-3, 1e8, 1e9), 4)  # 1 ms per message, 100 MB/s


def test_auto_picks_builtin_when_its_fit_is_fastest():
    fast = BuiltinFit("allreduce", latency_s=10e-6, seconds_per_byte=1e-10)  # 10 GB/s, 10 us
    for c in auto_choices("allreduce", SLOW, SIZES, builtin=fast):
        assert c.algorithm == "builtin"
        assert c.segments is None
        assert c.predicted_s == pytest.approx(10e-6 + c.size_bytes * 1e-10)  # hand: alpha + size / 10 GB/s


def test_auto_keeps_a_schedule_when_the_builtin_is_slower():
    slow = BuiltinFit("allreduce", latency_s=1.0, seconds_per_byte=1e-6)
    mine = auto_choices("allreduce", SLOW, SIZES)
    theirs = auto_choices("allreduce", SLOW, SIZES, builtin=slow)
    assert [c.algorithm for c in theirs] == [c.algorithm for c in mine]
    assert "builtin" not in {c.algorithm for c in theirs}


def test_auto_switches_to_builtin_at_the_crossover():
    # the builtin pays 2 ms but moves bytes at 10 GB/s: our best at 100 MB/s wins small sizes only
    fit = BuiltinFit("allgather", latency_s=2e-3, seconds_per_byte=1e-10)
    picked = [c.algorithm for c in auto_choices("allgather", SLOW, [1 << 10, 64 << 20], builtin=fit)]
    assert picked[0] != "builtin" and picked[1] == "builtin"


def test_fit_builtin_recovers_a_line():
    sizes = np.array([256 << 10, 1 << 20, 4 << 20])
    fit = fit_builtin("broadcast", sizes, 50e-6 + sizes * 2e-9)
    assert fit.latency_s == pytest.approx(50e-6, rel=1e-6)
    assert fit.seconds_per_byte == pytest.approx(2e-9, rel=1e-6)
    with pytest.raises(UsageError, match="two or more sizes"):
        fit_builtin("broadcast", [1 << 20, 1 << 20], [1e-3, 1e-3])


def _one_step(*transfers, ranks=4, chunks=4):
    return Schedule("allgather", "hand", ranks, chunks, (Step(tuple(transfers)),))


def test_a_step_across_hosts_is_priced_by_the_host_link_load():
    # ranks 0,1 on host 0 and 2,3 on host 1; ranks 0 and 1 each send one chunk (1 MB of n = 4 MB) to host 1
    step = _one_step(Transfer(0, 2, (0,), COPY), Transfer(1, 3, (1,), COPY))
    hosts = HostLinks.blocks(2, 2, Link(1e-3, 1e6))  # 1 MB/s host link
    intra = Link(1e-6, 1e9)
    c = shared_link_cost(step, [4e6], intra, hosts)
    # hand: host 0's link carries 2 MB at 1 MB/s = 2 s (the per-rank port model would say 1 s), + 1 ms
    assert c.total_s[0] == pytest.approx(1e-3 + 2.0)
    # two concurrent flows on the link, each extra flow +50 %: 2 s x 1.5 = 3 s
    c = shared_link_cost(step, [4e6], intra, HostLinks.blocks(2, 2, Link(1e-3, 1e6), flow_overhead=0.5))
    assert c.total_s[0] == pytest.approx(1e-3 + 3.0)


def test_a_step_inside_a_host_is_priced_by_each_rank_port():
    step = _one_step(Transfer(0, 1, (0, 1), COPY), Transfer(2, 3, (2,), COPY))
    c = shared_link_cost(step, [4e6], Link(1e-6, 1e9), HostLinks.blocks(2, 2, Link(1e-3, 1e6), 0.5))
    assert c.total_s[0] == pytest.approx(1e-6 + 2e6 / 1e9)  # rank 0's port: 2 MB at 1 GB/s


@settings(max_examples=20, deadline=None)
@given(
    st.sampled_from(["allgather", "reducescatter", "alltoall"]),
    st.sampled_from(["ring", "mesh", "pairwise"]),
    st.integers(2, 6),
)
def test_one_rank_per_host_without_flow_cost_is_the_closed_form(collective, name, p):
    if (collective, name) not in REGISTRY:
        return
    link = Link(5e-5, 2.5e7, 1e9)
    sizes = np.array([1 << 20, 16 << 20])
    mine = host_priced(collective, name, sizes, None, link, HostLinks.blocks(p, 1, link))
    closed = cost(collective, name, p, sizes, link)
    np.testing.assert_allclose(mine.total_s, closed.total_s, rtol=1e-9)
    # a flow cost only adds time, and only where a host opens several flows at once
    costly = host_priced(collective, name, sizes, None, link, HostLinks.blocks(p, 1, link, 0.2))
    assert (costly.total_s >= mine.total_s - 1e-12).all()


def test_shared_links_make_auto_leave_mesh_on_a_testbed():
    # 4 hosts x 1 rank, 25 MB/s links: with many flows costing 40 % each, mesh's 3 flows per host lose to ring
    link = Link(1e-4, 2.5e7, 1e9)
    network = Network.of(Cluster(4, 1, link, link), 4)
    hosts = HostLinks.blocks(4, 1, link, flow_overhead=0.4)
    picked = {c.algorithm for c in auto_choices("allgather", network, [16 << 20], hosts=hosts)}
    assert "mesh" not in picked


def test_ours_must_beat_the_builtin_by_the_margin():
    size = 16 << 20
    ours = auto_choices("allreduce", SLOW, [size])[0]
    # a built-in 10 % slower than our best prediction still runs (within the margin), at its own time
    near = BuiltinFit("allreduce", 0.0, ours.predicted_s * 1.1 / size)
    c = auto_choices("allreduce", SLOW, [size], builtin=near)[0]
    assert c.algorithm == "builtin" and c.predicted_s == pytest.approx(ours.predicted_s * 1.1)
    # one slower than the margin allows does not
    far = BuiltinFit("allreduce", 0.0, ours.predicted_s * BUILTIN_MARGIN * 1.01 / size)
    assert auto_choices("allreduce", SLOW, [size], builtin=far)[0].algorithm == ours.algorithm


@pytest.mark.multiprocess
def test_auto_measures_the_builtin_and_the_exchange_on_gloo_ranks():
    pytest.importorskip("torch")
    out = run_local(
        Job("collperf.runtime.auto.builtin_fit:auto_inputs", ("allreduce", [64 << 10, 1 << 20], 2)), 2, timeout_s=120
    )
    # both non-negative (the fit is non-negative least squares); no sign of the slope is asserted: at load 5.5 a
    # 64 KiB call took as long as a 1 MiB one and the fit put all the time into the latency
    assert out["builtin_latency_s"] >= 0 and out["builtin_seconds_per_byte"] >= 0
    assert out["builtin_latency_s"] + out["builtin_seconds_per_byte"] > 0
    assert out["exchange_bandwidth_Bps"] > 0 and out["exchange_latency_s"] >= 0
    assert out["flow_overhead"] == 0.0  # one host: no host link to share


def test_the_builtin_is_timed_where_the_sweep_runs():
    pytest.importorskip("torch")
    assert fit_sizes([1 << 20, 4 << 20, 16 << 20, 64 << 20]) == [1 << 20, 4 << 20, 16 << 20]  # capped at 16 MiB
    for sweep in ([1], [1 << 30], [1 << 10, 1 << 12], [3 << 20, 5 << 20]):
        sizes = fit_sizes(sweep)
        assert len(sizes) >= 2 and sizes == sorted(set(sizes))
        assert FIT_MIN_BYTES <= sizes[0] and sizes[-1] <= FIT_MAX_BYTES
