"""A testbed that follows a topology: the plan (pure), packing on fixed routes, and, as root, a 3-host
triangle missing one side whose far pair is forwarded through the third host."""

import subprocess

import pytest

from collperf import api, topology as topologies
from collperf.errors import RunError, UsageError
from collperf.blink.packing import pack
from collperf.blink.routed_packing import pack_on_routes, ring_rate_Bps
from collperf.lab.testbed.layout import dgx1v_like, plan, with_routes
from testbed_support import CLI, bed_name, kill_a_rank_mid_run, needs_root, nothing_left
from collperf.cli import app
from collperf.lab import validate
from collperf.lab.testbed import (
    parse_spec,
    routed_runs,
    switch as T,
    SwitchTestbed,
    Testbed as AnyTestbed,
    TopologyTestbed,
)
from collperf.lab.testbed.routed_runs import calibrate_links, _measure_pair
from collperf.model.two_level.build import build
from collperf.spec import BenchSpec, NetworkSpec, SweepSpec

MBIT = 1e6 / 8

# hosts 1 and 2 have no link of their own: 0 forwards between them; the two links have unequal rates
TRIANGLE = {
    "name": "triangle",
    "ranks": 3,
    "links": [
        {"a": 0, "b": 1, "latency": "0us", "bandwidth": "200mbit"},
        {"a": 0, "b": 2, "latency": "0us", "bandwidth": "100mbit"},
    ],
}


def triangle():
    return topologies.from_json(TRIANGLE)


# --- the plan, without root ---------------------------------------------------------------------------


def test_plan_of_the_triangle_forwards_the_far_pair_through_the_third_host():
    p = plan(triangle(), "ab")
    assert p.route(1, 2) == [1, 0, 2] and p.route(2, 1) == [2, 0, 1] and p.route(0, 2) == [0, 2]
    assert p.next_hop[1][2] == (0, "l0") and p.next_hop[0][2] == (2, "l2")  # l<index of the far end>
    assert len(set(p.address.values())) == 3 and len(set(p.namespace.values())) == 3
    assert sorted((link.a, link.b, link.rate_Bps) for link in p.links) == [(0, 1, 200 * MBIT), (0, 2, 100 * MBIT)]
    assert p.topology.routes[(1, 2)] == [1, 0, 2]


def test_routes_that_disagree_at_a_vertex_are_refused():
    # 0 would send to 2 through 1 for one route and through 3 for the other: kernels route by destination
    doc = {
        "ranks": 5,
        "links": [
            {"a": a, "b": b, "latency": "0us", "bandwidth": "100mbit"}
            for a, b in ((0, 1), (1, 2), (2, 3), (3, 0), (4, 0))
        ],
        "routes": {"0-2": [0, 1, 2], "4-2": [4, 0, 3, 2]},
    }
    with pytest.raises(UsageError, match="different links"):
        plan(topologies.from_json(doc), "ab")


def test_dgx1v_like_scales_the_links_and_sends_pairs_without_nvlink_over_pcie():
    t = dgx1v_like()
    assert t.link(0, 3)["bandwidth_Bps"] == 200 * MBIT and t.link(0, 1)["bandwidth_Bps"] == 100 * MBIT
    assert t.link("cpu0", "cpu1")["bandwidth_Bps"] == 40 * MBIT  # QPI 10 GB/s at 100 Mbit / 25 GB/s
    assert t.path(1, 4) == [1, "plx0", "cpu0", "cpu1", "plx2", 4] and t.path(0, 4) == [0, 4]
    p = plan(t, "ab")  # the PCIe tree and direct NVLinks: routes agree everywhere
    assert len(p.namespace) == 14 and len(p.links) == 16 + 8 + 4 + 1


def test_packing_on_routes_on_the_fragmented_group_0_1_4():
    """By hand: host 1 receives over its NVLink from 0 (100 Mbit/s) and over the one route 4 -> 1 (PCIe, QPI
    40 Mbit/s): at most 140 Mbit/s, and the trees {0->1, 0->4} and {0->4, 4->1} reach it. The chain 0->1->4
    crosses QPI: 40 Mbit/s. Free routing (idle GPUs forward) would do better."""
    t = with_routes(dgx1v_like())
    pk = pack_on_routes(t, [0, 1, 4])
    assert pk.rate_Bps == pytest.approx(140 * MBIT)
    assert ring_rate_Bps(t, [0, 1, 4]) == pytest.approx(40 * MBIT)
    for tree in pk.trees:
        for (u, v), path in tree.routes.items():
            assert len(path) == len(t.path([0, 1, 4][u], [0, 1, 4][v]))  # each edge on the network's route
    assert pack(t, [0, 1, 4]).rate_Bps >= pk.rate_Bps
    assert pk.bound_Bps > pk.rate_Bps


def test_triangle_packing_is_limited_by_the_slow_side():
    pk = pack_on_routes(with_routes(triangle()), [1, 0, 2])  # from host 1: host 2 is behind 0 -> 2
    assert pk.rate_Bps == pytest.approx(100 * MBIT)


def test_specs_and_errors():
    pytest.importorskip("torch")
    bed = parse_spec("topology=dgx1v-like,group=0+1+4,name=ab")
    assert (bed.ranks, bed.hosts, [bed.host_of(r) for r in range(3)]) == (3, 3, [0, 1, 4])
    assert bed.host(4) == "cptb-ab-h4" and bed.host("cpu0").startswith("cptb-ab-d")
    with pytest.raises(UsageError, match="unknown field"):
        parse_spec("topology=dgx1v-like,rate=1gbit")
    with pytest.raises(UsageError, match="group"):
        parse_spec("topology=dgx1v-like,group=0+9")
    with pytest.raises(UsageError, match="testbed topology"):
        parse_spec("topology=nosuch")


# --- as root: the triangle brought up -------------------------------------------------------------------


def _forwarded(ns: str) -> int:
    """IP datagrams the namespace forwarded (Ip: ForwDatagrams of /proc/net/snmp)."""
    lines = subprocess.run(
        ["ip", "netns", "exec", ns, "cat", "/proc/net/snmp"], capture_output=True, text=True
    ).stdout.splitlines()
    head, values = [line.split() for line in lines if line.startswith("Ip:")][:2]
    return int(values[head.index("ForwDatagrams")])


@pytest.fixture
def triangle_file(tmp_path):
    import json

    path = tmp_path / "triangle.json"
    path.write_text(json.dumps(TRIANGLE))
    return str(path)


@needs_root
def test_the_far_pair_is_forwarded_by_the_third_host(triangle_file):
    pytest.importorskip("torch")
    with TopologyTestbed(triangle_file, name=bed_name("h1")) as bed:
        got = subprocess.run(
            ["ip", "netns", "exec", bed.host(1), "ip", "route", "get", bed.address(2)], capture_output=True, text=True
        ).stdout
        assert f"via {bed.address(0)} dev l0" in got, got
        before = _forwarded(bed.host(0))
        rate, _ = _measure_pair(bed, 1, 2, 1 << 20, 60)
        assert _forwarded(bed.host(0)) - before >= (1 << 20) // 65536  # at least that many datagrams
        assert _forwarded(bed.host(1)) == 0 and _forwarded(bed.host(2)) == 0
        links = calibrate_links(bed, 2 << 20)
    assert nothing_left(bed_name("h1"))
    # the shaping is a ceiling (5 % for timing granularity); how close to it a run gets is the machine's load
    assert {(m.a, m.b) for m in links} == {(0, 1), (0, 2)}
    assert all(0 < m.measured_Bps <= m.configured_Bps * 1.05 for m in links) and 0 < rate <= 100 * MBIT * 1.05


@needs_root
def test_packed_broadcast_over_the_forwarded_pair_is_correct(triangle_file):
    pytest.importorskip("torch")
    # group 1,0,2: local rank 0 is host 1, so the trees reach host 2 through host 0's forwarding
    out = subprocess.run(
        [
            CLI,
            "bench",
            "--collective",
            "broadcast",
            "--testbed",
            f"topology={triangle_file},group=1+0+2,name={bed_name('h2')}",
            "-A",
            "blink,chain,builtin",
            "-b",
            "256K",
            "-e",
            "512K",
            "-n",
            "2",
            "-w",
            "1",
            "--segments",
            "4",
        ],
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert out.returncode == 0, out.stderr
    # one nccl-tests block per algorithm, each with its #wrong summed over sizes and placements
    assert out.stdout.count("Out of bounds values : 0 OK") == 3, out.stdout
    assert " blink " in out.stdout and "simulated (events) on the testbed's topology triangle" in out.stdout
    assert nothing_left(bed_name("h2"))


@needs_root
def test_a_killed_rank_leaves_no_namespace_link_or_worker(triangle_file):
    pytest.importorskip("torch")
    name = bed_name("h3")
    cmd = [
        CLI,
        "bench",
        "--collective",
        "broadcast",
        "--testbed",
        f"topology={triangle_file},name={name}",
        "-A",
        "chain",
        "-b",
        "1M",
        "-e",
        "1M",
        "-n",
        "100000",
        "-w",
        "0",
        "--timeout",
        "60",
    ]
    kill_a_rank_mid_run(cmd, name, 3)


@needs_root
def test_down_cleans_a_crashed_topology_testbed_and_validate_compares_with_the_simulator(triangle_file):
    pytest.importorskip("torch")
    name = bed_name("h4")
    TopologyTestbed(triangle_file, name=name).up()  # a crash that never tore down
    subprocess.run(["ip", "link", "add", f"cptb{name}a9", "type", "veth", "peer", "name", f"cptb{name}b9"], check=True)
    assert len(T.down(bed_name("h4"))) == 3 and nothing_left(bed_name("h4"))
    v = api.validate(testbeds=[f"topology={triangle_file},name={bed_name('h5')}"], sizes="256K", iters=2)
    assert nothing_left(bed_name("h5"))
    assert {(r.collective, r.algorithm) for r in v.rows} >= {("broadcast", "chain"), ("broadcast", "blink")}
    assert all(r.measured_s > 0 and r.events_s > 0 and r.rounds_s > 0 for r in v.rows)
    assert {s["regime"] for s in v.summary} == {"events mode", "rounds mode"}


def test_the_simulator_prices_the_testbed_routes():
    """The chain 0 -> 1 -> 4 on dgx1v-like in rounds mode, by hand: 16 segments of n/16; the first step
    only crosses 0->1 (100 Mbit/s = 12.5 MB/s), the next 15 both hops, the last only 1->4, whose route
    crosses QPI (5 MB/s): n/16 x (1/12.5e6 + 16/5e6)."""
    pytest.importorskip("torch")
    bed = TopologyTestbed("dgx1v-like", [0, 1, 4], name="ab")  # not brought up: the plan is enough
    n = 16 << 20
    chain = build("broadcast", "chain", 3, segments=16)
    assert routed_runs.simulated_s(bed, chain, n, "rounds") == pytest.approx(n / 16 * (1 / 12.5e6 + 16 / 5e6))
    blink = routed_runs.blink_schedule(bed, "broadcast", 0, 16)
    floor = n / (140 * MBIT)  # the packing's rate is the most any schedule of its trees gets
    assert floor * (1 - 1e-3) <= routed_runs.simulated_s(bed, blink, n, "events") <= 1.25 * floor


# --- review fixes: auto rows, --root, calibration failures, the shared summary (no root) -----------------


def _bed_014():
    return TopologyTestbed("dgx1v-like", [0, 1, 4], name="ab")  # not brought up: the plan is enough


def test_auto_rows_are_simulated_as_the_algorithm_and_segments_auto_ran():
    """The chain 0 -> 1 -> 4 in rounds mode by hand (test above): k segments take n/k x (1/12.5e6 + k/5e6); an
    auto row that ran the chain with 16 segments is that, one with no segments of its own takes the sweep's (1)."""
    pytest.importorskip("torch")
    from types import SimpleNamespace

    n = 16 << 20
    results = SimpleNamespace(collective="broadcast", config={"root": 0, "segments": 1}, model=None)
    rows = [
        {"algorithm": "auto", "size": n, "auto": {"algorithm": "chain", "segments": 16}},
        {"algorithm": "auto", "size": n, "auto": {"algorithm": "chain", "segments": None}},
        {"algorithm": "auto", "size": n, "auto": {"algorithm": "builtin"}},
        {"algorithm": "chain", "size": n},
        {"algorithm": "builtin", "size": n},
    ]
    routed_runs.predict_rows(results, _bed_014(), rows, mode="rounds")
    assert rows[0]["predicted_us"] * 1e-6 == pytest.approx(n / 16 * (1 / 12.5e6 + 16 / 5e6))
    assert rows[1]["predicted_us"] * 1e-6 == pytest.approx(n * (1 / 12.5e6 + 1 / 5e6))
    assert rows[3]["predicted_us"] == pytest.approx(rows[1]["predicted_us"])
    assert rows[2]["predicted_us"] is None and rows[4]["predicted_us"] is None
    assert "dgx1v-like" in results.model


def test_a_root_outside_the_group_is_a_usage_error_before_the_testbed_comes_up():
    pytest.importorskip("torch")
    bed = _bed_014()
    with pytest.raises(UsageError, match=r"--root 3.*3 ranks.*between 0 and 2"):
        routed_runs.packing(bed, "broadcast", 3)
    with pytest.raises(UsageError, match=r"--root 3.*3 ranks.*between 0 and 2"):
        BenchSpec(sweep=SweepSpec(collective="broadcast", algorithms=["chain", "blink"], root=3), testbed=bed)
    assert (
        BenchSpec(sweep=SweepSpec(collective="broadcast", algorithms=["chain", "blink"], root=2), testbed=bed).ranks
        == 3
    )
    assert list(routed_runs.packing(bed, "broadcast", 2).roots) == [2]  # local ranks (host 4)


class _FakeBed:
    """Both ends of a calibration on this machine's loopback (no namespaces, no root)."""

    def address(self, h):
        return "127.0.0.1"

    def host(self, h):
        return f"ns{h}"


@pytest.fixture
def no_netns(monkeypatch):
    """Runs `ip netns exec NS cmd...` as cmd...; replace[which] (which: 'server' or 'client') swaps that end's
    program for another program (its argv before the real one's arguments)."""
    real, replace = subprocess.Popen, {}

    def popen(args, *a, **kw):
        if list(args[:3]) == ["ip", "netns", "exec"]:
            args = list(args[4:])
            which = "server" if args[2] == routed_runs._SERVER else "client" if args[2] == routed_runs._CLIENT else None
            if which in replace:  # the stand-in gets the same arguments (address, size, timeout, port)
                args = replace[which] + args[3:]
        return real(args, *a, **kw)

    monkeypatch.setattr(subprocess, "Popen", popen)
    return replace


def test_calibration_failures_are_run_errors_naming_the_link(no_netns):
    import sys

    bed = _FakeBed()
    # a receiver that never says ready: the wait for it is bounded by the timeout
    no_netns["server"] = [sys.executable, "-c", "import time; time.sleep(30)"]
    with pytest.raises(RunError, match=r"link \(0, 1\).*receiver on 1 did not start"):
        routed_runs._measure_pair(bed, 0, 1, 1 << 20, 1.0)
    # a sender that hangs: subprocess.run's TimeoutExpired becomes a RunError
    del no_netns["server"]
    no_netns["client"] = [sys.executable, "-c", "import time; time.sleep(30)"]
    with pytest.raises(RunError, match=r"link \(0, 1\).*sender on 0 ran past the timeout"):
        routed_runs._measure_pair(bed, 0, 1, 1 << 20, 1.0)
    # a sender that answers the ping-pong then closes: the receiver's first read is empty (skip was undefined)
    no_netns["client"] = [
        sys.executable,
        "-c",
        "import socket, sys\n"
        "c = socket.create_connection(('127.0.0.1', int(sys.argv[4])), timeout=10)\n"
        "for _ in range(20): c.sendall(b'p'); c.recv(1)\n"
        "print(1e-6); c.close()",
    ]
    with pytest.raises(RunError, match=r"link \(0, 1\).*receiver on 1 failed: received 0 of 1048576 bytes"):
        routed_runs._measure_pair(bed, 0, 1, 1 << 20, 10.0)


def test_calibration_on_loopback_measures_a_rate_and_a_latency(no_netns):
    rate_Bps, latency_s = routed_runs._measure_pair(_FakeBed(), 0, 1, 64 << 20, 30.0)
    assert rate_Bps > 0 and latency_s > 0


def test_the_topology_summary_is_validate_summary_s_median():
    """Errors 0.1 and 0.3 (events), -0.2 and 0.4 (rounds): medians 0.2 and 0.3 (np.median; the upper median
    was 0.3 and 0.4), the same numbers validate.summary gives for rows with those errors."""
    rows = [
        routed_runs.TopologyValidationRow("broadcast", "chain", 3, 1 << 20, 1.0, 0.8, 1.1),
        routed_runs.TopologyValidationRow("broadcast", "chain", 3, 4 << 20, 1.0, 1.4, 1.3),
    ]
    events, rounds = validate.summary(rows)
    assert events["regime"] == "events mode" and rounds["regime"] == "rounds mode"
    assert events["median_abs_error"] == pytest.approx(0.2) and events["worst_abs_error"] == pytest.approx(0.3)
    assert (events["worst_size"], events["worst_signed_error"]) == (4 << 20, pytest.approx(0.3))
    assert rounds["median_abs_error"] == pytest.approx(0.3) and rounds["worst_signed_error"] == pytest.approx(0.4)
    same = [
        validate.ValidationRow("broadcast", "chain", 3, r.size, r.measured_s, r.events_s, "events mode") for r in rows
    ]
    (v,) = validate.summary(same)
    assert {k: v[k] for k in events} == pytest.approx(events)


def test_calibrating_the_links_reports_each_as_it_is_measured(monkeypatch):
    """A long calibration shows progress: on_link(done, total, measure) after every link, in order."""
    from types import SimpleNamespace

    links = [SimpleNamespace(a=0, b=1, rate_Bps=25e6), SimpleNamespace(a=0, b=2, rate_Bps=12.5e6)]
    bed = SimpleNamespace(plan=SimpleNamespace(links=links))
    monkeypatch.setattr(routed_runs, "_measure_pair", lambda bed, a, b, size, timeout: (10e6 * b, 1e-5 * b))
    heard = []
    out = routed_runs.calibrate_links(
        bed, on_link=lambda done, total, m: heard.append((done, total, m.b, m.measured_Bps))
    )
    assert heard == [(1, 2, 1, 10e6), (2, 2, 2, 20e6)] and [m.latency_s for m in out] == [1e-5, 2e-5]


# --- one Testbed protocol: both testbeds offer it, and a calibration is a profile --profile reads ------------


def test_both_testbeds_offer_the_testbed_protocol_and_one_parser_makes_either():
    switch, routed = parse_spec("hosts=2,rate=1gbit,name=ab"), parse_spec("topology=dgx1v-like,group=0+1+4,name=ab")
    assert isinstance(switch, SwitchTestbed) and isinstance(routed, TopologyTestbed)
    assert isinstance(switch, AnyTestbed) and isinstance(routed, AnyTestbed)
    assert switch.topology is None and routed.topology is not None
    assert switch.prebuilt_schedules(None) is None and switch.predict_rows(None, []) is False


def test_a_testbed_description_is_made_into_a_testbed_by_the_api_not_by_the_spec():
    bed = api.testbed("hosts=3,rate=1gbit,ranks-per-host=2,name=ab")
    assert BenchSpec(sweep=SweepSpec(collective="allreduce", algorithms=["ring"]), testbed=bed).ranks == 6
    with pytest.raises(UsageError, match=r"takes a Testbed: give collperf\.api\.testbed\('hosts=3'\)"):
        BenchSpec(sweep=SweepSpec(collective="allreduce", algorithms=["ring"]), testbed="hosts=3")


def test_calibrating_a_topology_testbed_writes_a_profile_that_profile_reads(monkeypatch, triangle_file, tmp_path):
    """The triangle's two links measured (stand-in: 90% of each link's rate, latency 0.1 ms x the far end): the
    profile's uniform network is the median link, (0.9 x 25e6 + 0.9 x 12.5e6) / 2 = 16.875e6 B/s and 0.15 ms,
    and --profile reads it on the CLI and through NetworkSpec."""
    import json
    from typer.testing import CliRunner

    bed = TopologyTestbed(triangle_file, name="ab")  # not brought up: the measurement is stood in for
    rate = {1: 200 * MBIT, 2: 100 * MBIT}
    monkeypatch.setattr(routed_runs, "_measure_pair", lambda bed, a, b, size, timeout: (0.9 * rate[b], 1e-4 * b))
    profile = bed.calibrate(timeout_s=5)
    assert [(m["a"], m["b"]) for m in profile["links"]] == [(0, 1), (0, 2)]
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(profile))
    net = NetworkSpec(ranks=3, profile=str(path)).resolve()
    assert net.cluster.inter.bandwidth_Bps == pytest.approx(16.875e6)
    assert net.cluster.inter.latency_s == pytest.approx(1.5e-4)
    assert (net.cluster.nodes, net.cluster.ranks_per_node) == (3, 1)
    result = CliRunner().invoke(app, ["predict", "allreduce", "-p", "3", "-s", "1M", "--profile", str(path)])
    assert result.exit_code == 0, result.output
