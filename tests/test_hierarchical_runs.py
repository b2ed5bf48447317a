"""-A hierarchical on real ranks: the two-level schedule on the run's nodes (a testbed's hosts, torchrun's
nodes, or local ranks grouped by --nodes/--ranks-per-node), bit-exact; auto chooses it where the model
prices it fastest; the user collectives run it on a group whose network has nodes."""

import pytest

from collperf.collectives import get_collective
from collperf.errors import UsageError
from collperf.model.two_level.hierarchy import two_level_cost
from collperf.model.network import Cluster, Link, Network
from collperf.model.auto.select import auto_algorithms, auto_choices, runnable_algorithms
from collperf.model.two_level.build import DEFAULT_PHASES
from collperf.cli import app
from collperf.lab.bench import _check_ranks, run
from collperf.runtime.launch import Job, run_local
from collperf.spec import SweepSpec

# a fast node (1 us, 10 GB/s) and a thin network (100 us, 10 MB/s): moving bytes inside the node is free
# next to crossing it, so for big messages the two-level schedule (each rank crosses with 1/g of the
# data) beats every flat one (alltoall aside: its flat mesh is already at the NIC bound), and for 1 KiB the
# flat ones with fewer network steps win
TWO_BY_TWO = Network.of(Cluster(2, 2, Link(1e-6, 1e10, 1e10), Link(100e-6, 1e7, 1e10)), 4)
COLLECTIVES = ("allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall")


def test_auto_considers_hierarchical_only_where_it_can_run_it():
    assert auto_algorithms("allreduce", TWO_BY_TWO) == runnable_algorithms("allreduce", 4) + ["hierarchical"]
    flat = Network.of(Link(1e-6, 1e9), 4)
    one_per_node = Network.of(Cluster(4, 1, Link(1e-6, 1e10), Link(1e-4, 1e7)), 4)
    one_node = Network.of(Cluster(1, 4, Link(1e-6, 1e10), Link(1e-4, 1e7)), 4)
    for network in (flat, one_per_node, one_node):
        assert "hierarchical" not in auto_algorithms("allreduce", network)
    # rooted: the two-level schedule's root is rank 0
    assert "hierarchical" in auto_algorithms("broadcast", TWO_BY_TWO, root=0)
    assert "hierarchical" not in auto_algorithms("broadcast", TWO_BY_TWO, root=3)


@pytest.mark.parametrize("collective", [c for c in COLLECTIVES if c != "alltoall"])
def test_auto_prices_hierarchical_with_the_phases_the_executor_runs(collective):
    sizes = [1024, 64 << 20]
    picked = auto_choices(collective, TWO_BY_TWO, sizes)
    assert picked[-1].algorithm == "hierarchical", picked
    phase = DEFAULT_PHASES[collective]
    want = two_level_cost(collective, TWO_BY_TWO.cluster, sizes, phase, phase).total_s
    assert picked[-1].predicted_s == pytest.approx(float(want[-1]), rel=1e-12)
    assert picked[0].predicted_s <= float(want[0])
    # by hand for allreduce at 64 MiB: each rank crosses the network with n/g = 32 MiB in an allreduce of
    # 2 nodes (2 x 1/2 of it each way), 2 ranks sharing the node's one NIC: 2 x (1/2 x 32 MiB) / (1e7 / 2)
    if collective == "allreduce":
        n = 64 << 20
        assert picked[-1].predicted_s >= (n / 2) / (1e7 / 2)


def test_alltoall_flat_mesh_is_at_the_nic_bound_so_hierarchical_cannot_beat_it():
    # every byte bound off-node crosses the node's one NIC in either schedule: the flat mesh, priced per
    # level, sends it all in one step (2 ranks x 2 off-node peers x n/4 = n leave each node; the n/4 per
    # rank that stays goes over the fast link meanwhile), while the two-level one adds an intra phase
    n = 64 << 20
    picked = auto_choices("alltoall", TWO_BY_TWO, [n])[0]
    assert picked.algorithm == "mesh"
    assert picked.predicted_s == pytest.approx(100e-6 + n / 1e7, rel=1e-12)
    phase = DEFAULT_PHASES["alltoall"]
    assert two_level_cost("alltoall", TWO_BY_TWO.cluster, [n], phase, phase).total_s[0] > picked.predicted_s


@pytest.mark.multiprocess
def test_hierarchical_runs_bit_exact_on_local_ranks_grouped_into_nodes():
    pytest.importorskip("torch")
    cases = []
    for nodes, g in ((2, 2), (3, 2), (2, 3)):
        for collective in COLLECTIVES:
            for count in (0, 1, 7, 100):
                cases.append(
                    (collective, "hierarchical", count, "float32", "sum", 0, 1, 1 << 20, False, None, [nodes, g])
                )
            # in place (where the collective has one), max, 64-byte slices
            in_place = get_collective(collective).in_place
            cases.append((collective, "hierarchical", 33, "float64", "max", 0, 1, 64, in_place, None, [nodes, g]))
    results = []
    for p in (4, 6):
        mine = [c for c in cases if c[-1][0] * c[-1][1] == p]
        results += run_local(Job("collperf.runtime.measure:selftest", (mine,)), p, timeout_s=300)
    assert len(results) == len(cases)
    assert not [r for r in results if r[1]], [r for r in results if r[1]][:5]


@pytest.mark.multiprocess
def test_bench_runs_hierarchical_and_auto_chooses_it_on_a_two_level_network():
    pytest.importorskip("torch")
    config = SweepSpec(
        collective="allreduce",
        algorithms="hierarchical,auto",
        min_bytes="1K",
        max_bytes="4M",
        factor=64,
        iters=1,
        warmup=0,
        progress=False,
    )
    res = run(config, ranks=4, timeout_s=180, network=TWO_BY_TWO)
    assert res.config["two_level"] == [2, 2]
    assert all(r[pl]["wrong"] == 0 for r in res.rows for pl in ("out_of_place", "in_place"))
    hier = {r["size"]: r for r in res.rows if r["algorithm"] == "hierarchical"}
    want = two_level_cost("allreduce", TWO_BY_TWO.cluster, sorted(hier), "ring", "ring").total_s
    assert [hier[s]["predicted_us"] for s in sorted(hier)] == pytest.approx(list(want * 1e6))
    auto = [r for r in res.rows if r["algorithm"] == "auto"]
    assert [r["auto"]["algorithm"] for r in auto] == [
        c.algorithm for c in auto_choices("allreduce", TWO_BY_TWO, [r["size"] for r in auto])
    ]
    assert auto[-1]["auto"]["algorithm"] == "hierarchical"


def test_hierarchical_without_nodes_or_from_another_root_is_a_usage_error():
    with pytest.raises(UsageError, match="one host.*--ranks-per-node"):
        _check_ranks(SweepSpec(collective="allreduce", algorithms="hierarchical"), 4, shape=None)
    with pytest.raises(UsageError, match="4 node.*1 rank"):
        _check_ranks(SweepSpec(collective="allreduce", algorithms="hierarchical"), 4, shape=[4, 1])
    with pytest.raises(UsageError, match="root is rank 0"):
        _check_ranks(SweepSpec(collective="broadcast", algorithms="hierarchical", root=2), 4, shape=[2, 2])
    with pytest.raises(UsageError, match="unknown algorithm 'hierarchical'"):
        SweepSpec(collective="sendrecv", algorithms="hierarchical")
    _check_ranks(SweepSpec(collective="allgather", algorithms="hierarchical"), 4, shape=[2, 2])  # fine


@pytest.mark.multiprocess
def test_the_cli_groups_local_ranks_into_nodes():
    pytest.importorskip("torch")
    from typer.testing import CliRunner

    res = CliRunner().invoke(
        app,
        [
            "bench",
            "--ranks",
            "4",
            "-A",
            "hierarchical",
            "-b",
            "1K",
            "-e",
            "1K",
            "-n",
            "1",
            "-w",
            "0",
            "--nodes",
            "2",
            "--ranks-per-node",
            "2",
            "--intra-latency",
            "1us",
            "--intra-bandwidth",
            "10GB/s",
            "--inter-latency",
            "100us",
            "--inter-bandwidth",
            "10MB/s",
        ],
        terminal_width=200,
    )
    assert res.exit_code == 0, res.output
    assert "hierarchical" in res.output and "# Out of bounds values : 0 OK" in res.output
    res = CliRunner().invoke(app, ["bench", "--ranks", "4", "-A", "hierarchical", "-b", "1K", "-e", "1K"])
    assert res.exit_code != 0 and isinstance(res.exception, UsageError) and "--ranks-per-node" in str(res.exception)


@pytest.mark.multiprocess
def test_user_collectives_run_hierarchical_on_a_group_with_nodes():
    pytest.importorskip("torch")
    cases = [
        (fn, n, "float32", "sum", a, 0)
        for fn in ("all_reduce", "all_gather", "reduce_scatter_tensor", "broadcast", "all_to_all_single")
        for n in (1, 37)
        for a in ("hierarchical", "auto")
    ]
    plan = [(None, cases, TWO_BY_TWO), ([3, 2, 1, 0], cases, TWO_BY_TWO)]
    results = run_local(Job("collperf.runtime.ops_check:selftest", (plan,)), 4, timeout_s=180)
    assert len(results) == 2 * len(cases) and not [r for r in results if r[2]]
