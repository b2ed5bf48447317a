"""The doctor's campaign in the HTML report: every component's verdict and evidence, every round's tests, the
cost beside exhaustive pairs; strings escaped."""

from __future__ import annotations

import re

import pytest

from collperf import api
from collperf.errors import UsageError
from collperf.lab.doctor.campaign import adaptive, default_groups
from collperf.lab.doctor.plan import Fault, simulated
from collperf.report.doctor_page import doctor_page


def _doc(faults):
    groups = default_groups(8, 2)
    c = adaptive(8, groups, simulated(faults, groups))
    doc = c.to_json()
    doc.update(
        {
            "wall_s": 42.0,
            "round_wall_s": [14.0] * len(c.rounds),
            "round_bound": 6,
            "predicted_tests": c.tests,
            "exhaustive_pairs": {"tests": 28, "rounds": 7},
            "where": "testbed: 8 hosts <on> 2 leaves",
        }
    )
    return c, doc


def test_the_page_names_the_faulty_host_with_its_evidence_and_lists_every_test(tmp_path):
    c, doc = _doc([Fault("nic", 3)])
    text = doctor_page(doc, "collperf doctor --testbed hosts=8")
    assert "host3 degraded by 50 %" in text  # the verdict tile: 0.5x the expected speed
    assert text.count('<td class="l bad"><b>degraded by 50 %</b>') == 1
    assert text.count('<td class="l good"><b>healthy</b>') == 9  # 7 hosts, 2 uplinks
    assert "confirm host3+host" in text  # the evidence: the confirmation that failed
    assert len(re.findall(r"<b>(?:pass|fail)</b>", text)) == c.tests == 17
    assert "28 tests" in text and "&lt;on&gt;" in text and "<on>" not in text
    path = api.doctor_report(doc, tmp_path / "doctor.html")
    written = (tmp_path / "doctor.html").read_text()
    assert path.endswith("doctor.html") and written.startswith("<!DOCTYPE html>") and "host3 degraded" in written
    with pytest.raises(UsageError, match=".html"):
        api.doctor_report(doc, tmp_path / "doctor.txt")


def test_a_healthy_campaign_and_a_dead_host_read_as_such():
    _, doc = _doc([])
    text = doctor_page(doc)
    assert 'verdict good"><div class="k">verdict</div><div class="v">healthy' in text
    _, doc = _doc([Fault("dead", 6)])
    text = doctor_page(doc)
    assert "host6 failed" in text and "did not finish" in text and "host6 did not answer" in text
