"""`collperf doctor --testbed`: the spec and its refusals, the leaf-spine topology with its faults, the judgement of
measured tests, and (root) the campaign on 4 emulated hosts: healthy, and one slow host link named."""

from __future__ import annotations

import json
import subprocess

import pytest

from collperf.errors import UsageError
from collperf.lab.doctor.campaign import Test as Probe
from collperf.lab.doctor.testbed_spec import parse_spec
from collperf.lab.doctor.judge import FLOOR, Measured
from collperf.lab.doctor.testbed import TestbedRunner as Runner, order, predicted_tests, topology
from cli_support import cli_error
from testbed_support import CLI, bed_name, needs_root, nothing_left


def test_the_spec_reads_every_field_and_names_what_is_wrong():
    s = parse_spec(
        "hosts=8,leaves=2,rate=40mbit,slow-link=host3:24mbit,slow-uplink=leaf1:80mbit,"
        "slow-rank=5:0.1s,kill-host=host6:30s"
    )
    assert (s.hosts, s.leaves, s.rate_Bps, s.uplink_Bps) == (8, 2, 5e6, 20e6)  # uplink: 4 hosts x 40 Mbit/s
    assert (s.slow_link, s.slow_uplink, s.slow_rank, s.kill_host) == ((3, "24mbit"), (1, "80mbit"), (5, 0.1), (6, 30.0))
    assert s.groups() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    for bad, match in (
        ("hosts=1", "hosts='1'"),
        ("hosts=8,slow-link=host8:1mbit", "host0..host7"),
        ("hosts=8,slow-uplink=leaf2:1mbit", "leaf0..leaf1"),
        ("hosts=8,rate=fast", "rate='fast'"),
        ("hosts=8,slow-rank=host1:soon", "slow-rank='soon'"),
        ("hosts=8,color=red", "unknown field"),
        ("hosts=8,slow-link=host1", "HOST:VALUE"),
        ("hosts", "not FIELD=VALUE"),
        ("hosts=8,name=Bad", "name='Bad'"),
    ):
        with pytest.raises(UsageError, match=match):
            parse_spec(bad)


def test_the_topology_slows_only_the_faulty_link_and_names_links_as_the_doctor_does():
    s = parse_spec("hosts=4,leaves=2,rate=40mbit,slow-link=host1:20mbit,slow-uplink=leaf0:40mbit")
    faulty, healthy = topology(s), topology(s, faulty=False)
    rate = {a["name"]: a["bandwidth_Bps"] for _, _, a in faulty.graph.edges(data=True)}
    assert rate == {"host0": 5e6, "host1": 2.5e6, "host2": 5e6, "host3": 5e6, "leaf0-uplink": 5e6, "leaf1-uplink": 10e6}
    assert {a["bandwidth_Bps"] for _, _, a in healthy.graph.edges(data=True)} == {5e6, 10e6}
    assert faulty.path(0, 3) == [0, "leaf0", "spine", "leaf1", 3]


def test_rings_across_leaves_interleave_them():
    s = parse_spec("hosts=8,leaves=2")
    assert order(s, (0, 1, 2, 3, 4, 5, 6, 7)) == (0, 4, 1, 5, 2, 6, 3, 7)
    assert order(s, (0, 1)) == (0, 1) and order(s, (5, 2)) == (5, 2)


def test_a_test_fails_below_its_expectation_by_more_than_its_noise_or_5_percent():
    s = parse_spec("hosts=4,leaves=2,rate=40mbit")
    runner = Runner(s, bed=None)
    sim = runner.simulated_s((0, 1))
    assert sim == pytest.approx(runner.simulated_s((2, 3)))
    batch = [Probe("screen", (0, 1)), Probe("screen", (2, 3))]
    # the box runs a healthy pair at 0.9 of the model: the fastest group sets the efficiency
    quiet = [sim / 0.9 * x for x in (1.0, 1.01, 0.99, 1.0, 1.0)]
    slow = [t / 0.6 for t in quiet]
    got = runner.judge(batch, [(0, 1), (2, 3)], [Measured((0, 1), quiet), Measured((2, 3), slow)])
    assert runner.efficiency == pytest.approx(0.9)
    assert [o.passed for o in got] == [True, False] and got[1].ratio == pytest.approx(0.6)
    # the same shortfall within a test's own noise passes: threshold = max(5 %, 3 x noise)
    noisy = [sim / 0.9 / 0.8 * x for x in (1.0, 1.1, 0.9, 1.08, 0.93)]  # noise 1.4826 x 0.08: 12 %
    o = runner.judge([Probe("bisect", (0, 1))], [(0, 1)], [Measured((0, 1), noisy)])[0]
    assert o.passed and o.ratio == pytest.approx(0.8)
    just = [sim / 0.9 / (1 - FLOOR - 0.01)] * 5  # no noise: held to the 5 % floor
    assert not runner.judge([Probe("bisect", (0, 1))], [(0, 1)], [Measured((0, 1), just)])[0].passed
    # a host alone against the median of the others alone; a test that did not finish names its dead hosts
    alone = runner.judge(
        [Probe("alone", (h,)) for h in range(3)] + [Probe("alone", (3,))],
        [(0,), (1,), (2,), (3,)],
        [Measured((h,), [1e-3] * 5) for h in range(3)] + [Measured((3,), dead=(3,))],
    )
    assert [o.passed for o in alone] == [True, True, True, False] and alone[3].dead == (3,) and alone[3].ratio is None


def test_the_plan_predicts_each_case():
    assert predicted_tests(parse_spec("hosts=8,leaves=2")) == 14  # 8 alone, 2 screens, 4 cross pairs
    assert predicted_tests(parse_spec("hosts=8,leaves=2,slow-link=host3:1mbit")) == 17


def test_the_command_refuses_plan_and_testbed_together(capsys):
    assert "not --plan and --testbed" in cli_error(capsys, "doctor", "--plan", "--testbed", "hosts=4")
    assert "--nodes" in cli_error(capsys, "doctor", "--testbed", "hosts=4", "--nodes", "4")


def _doctor(spec: str) -> dict:
    done = subprocess.run([CLI, "doctor", "--testbed", spec, "--json"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@needs_root
def test_a_healthy_testbed_accuses_nothing_and_a_slow_host_link_is_named():
    name = bed_name("dh")
    doc = _doctor(f"hosts=4,leaves=2,rate=40mbit,name={name}")
    assert {c["component"]: c["verdict"] for c in doc["components"]} == dict.fromkeys(
        ["host0", "host1", "host2", "host3", "leaf0-uplink", "leaf1-uplink"], "healthy"
    )
    assert doc["tests"] == doc["predicted_tests"] and doc["rounds"] <= doc["round_bound"]
    doc = _doctor(f"hosts=4,leaves=2,rate=40mbit,slow-link=host1:20mbit,name={name}")
    accused = {c["component"]: c["verdict"] for c in doc["components"] if c["verdict"] != "healthy"}
    assert accused == {"host1": "degraded"} and doc["tests"] == doc["predicted_tests"]
    assert nothing_left(name)
