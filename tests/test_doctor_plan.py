"""The doctor's campaign on simulated faults, and the plan that counts it against exhaustive pairs and two-pass."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from collperf import api
from collperf.cli import app
from collperf.errors import UsageError
from collperf.lab.doctor import campaign
from collperf.lab.doctor.campaign import adaptive, default_groups, pack
from collperf.lab.doctor.plan import Fault, pairs_counts, simulated
from collperf.spec import DoctorPlanSpec
from cli_support import cli_error


def _run(n, leaves, faults):
    groups = default_groups(n, leaves)
    return adaptive(n, groups, simulated(faults, groups))


def test_groups_are_leaves_or_about_sqrt_n():
    assert default_groups(8, 2) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert [len(g) for g in default_groups(232)] == [16] * 14 + [8]  # round(sqrt 232) = 15 groups of ceil(232/15)


def test_rounds_are_host_disjoint():
    rounds = pack([campaign.Test("x", h) for h in ((0, 1), (1, 2), (2, 3), (0, 3))])
    assert [[t.hosts for t in r] for r in rounds] == [[(0, 1), (2, 3)], [(1, 2), (0, 3)]]


def test_a_slow_nic_on_8_hosts_by_hand():
    c = _run(8, 2, [Fault("nic", 3)])
    # alone: 8 pass; screen: leaf0 fails, leaf1 passes; bisect 0+1 passes, 2+3 fails; confirm 2 and 3 each with a
    # known-good partner: 3's fails; cross: 0+6, 1+7 and 4+2 (leaf0's good hosts 0, 1, 2 in halves 0+1 and 2) pass
    assert [[o.test.stage for o in r] for r in c.rounds] == [
        ["alone"] * 8,
        ["screen"] * 2,
        ["bisect"] * 2,
        ["confirm"] * 2,
        ["cross"] * 3,
    ]
    assert [o.test.hosts for o in c.rounds[-1]] == [(0, 6), (1, 7), (4, 2)]
    assert c.tests == 17 and [(v.component, v.kind, v.by) for v in c.accused()] == [("host3", "degraded", 0.5)]


def _cross_tests(groups):
    """Each group's first half paired with the next group's second half (a group of one host is both halves)."""
    halves = [(g[: (len(g) + 1) // 2], g[(len(g) + 1) // 2 :] or g) for g in groups]
    return sum(min(len(halves[i][0]), len(halves[(i + 1) % len(groups)][1])) for i in range(len(groups)))


def test_healthy_runs_accuse_nothing_in_three_rounds():
    for n, leaves in ((8, 2), (16, 2), (9, None), (232, None)):
        c = _run(n, leaves, [])
        assert not c.accused() and len(c.rounds) == 3
        groups = default_groups(n, leaves)
        assert c.tests == n + len(groups) + _cross_tests(groups)  # alone, screen, cross pairs: one round each
    assert _cross_tests(default_groups(8, 2)) == 4


@pytest.mark.parametrize("n,leaves", [(4, 2), (8, 2), (16, 2), (12, 3), (16, 4), (25, None), (64, None)])
def test_every_single_fault_is_named_within_the_round_bound(n, leaves):
    bound = math.ceil(math.log2(n)) + 3
    groups = default_groups(n, leaves)
    for kind in ("nic", "rank", "dead"):
        for h in range(n):
            c = _run(n, leaves, [Fault(kind, h)])
            want = "failed" if kind == "dead" else "degraded"
            assert [(v.component, v.kind) for v in c.accused()] == [(f"host{h}", want)], (kind, h)
            assert len(c.rounds) <= bound, (kind, h, len(c.rounds))
    for g in range(len(groups)):
        named = {v.component for v in _run(n, leaves, [Fault("uplink", g)]).accused()}
        # two groups: both uplinks lie on every path between them, so both are named (a third group tells them apart)
        assert named == ({"leaf0-uplink", "leaf1-uplink"} if len(groups) == 2 else {f"leaf{g}-uplink"})


def test_pairs_and_the_plan_by_hand():
    assert pairs_counts(8) == (28, 7) and pairs_counts(7) == (21, 7) and pairs_counts(232) == (26796, 231)
    p = api.doctor_plan(nodes=8, leaves=2, test_time="10s")
    s = {x.name: x for x in p.strategies}
    none = (7 / 8) ** 8  # the prior 1/N: no host faulty
    assert s["adaptive"].expected_tests == pytest.approx(none * 14 + (1 - none) * 17)
    assert s["adaptive"].wall_s == pytest.approx((none * 3 + (1 - none) * 5) * 10)
    assert (s["exhaustive-pairs"].tests_healthy, s["exhaustive-pairs"].wall_s) == (28, 70)
    assert (s["two-pass"].tests_healthy, s["two-pass"].tests_one_fault) == (4, 6)
    assert p.round_bound == 6


def test_refusals_and_the_command_line(capsys):
    for bad, match in (
        ({"nodes": 1}, "at least 2"),
        ({"nodes": 8, "leaves": 9}, "--leaves"),
        ({"nodes": 8, "fault_rate": 1.5}, "--fault-rate"),
        ({"nodes": 8, "test_time": "0s"}, "--test-time"),
    ):
        with pytest.raises(UsageError, match=match):
            DoctorPlanSpec(**bad)
    done = CliRunner().invoke(app, ["doctor", "--plan", "--nodes", "232", "--json"])
    assert done.exit_code == 0, done.output
    doc = json.loads(done.output)
    assert {s["name"] for s in doc["strategies"]} == {"adaptive", "exhaustive-pairs", "two-pass"}
    assert doc["round_bound"] == 11
    assert "--plan" in cli_error(capsys, "doctor", "--nodes", "8")
