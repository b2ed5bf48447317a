"""Cluster health: the doctor's campaign plan (doctor_plan) and the campaign on the testbed (doctor_testbed)."""

from __future__ import annotations

from collperf.lab.doctor import testbed as bed
from collperf.lab.doctor.plan import Plan, plan
from collperf.lab.doctor.testbed_spec import parse_spec
from collperf.spec import DoctorPlanSpec


def doctor_plan(spec: DoctorPlanSpec | None = None, **options) -> Plan:
    """`collperf doctor --plan --nodes N`: tests, rounds and wall time of exhaustive pairs, two-pass and the
    doctor's adaptive campaign (alone, screen, bisect, confirm, cross) for N hosts, healthy and with one faulty
    host, weighed by the fault prior. Give a DoctorPlanSpec or its fields as keywords."""
    spec = spec if spec is not None else DoctorPlanSpec(**options)
    assert spec.nodes is not None   # DoctorPlanSpec refuses a plan without nodes
    return plan(spec.nodes, spec.leaves, spec.fault_rate, spec.test_time_s)


def doctor_testbed(testbed: str, on_round=None):
    """`collperf doctor --testbed hosts=8,leaves=2,rate=40mbit[,slow-link=host3:20mbit]...`: the campaign run on
    emulated hosts under leaves and a spine, with the fault the spec injects (lab/doctor/testbed.py); a
    TestbedReport. on_round(number, outcomes) hears of each round as it ends."""
    return bed.doctor_testbed(parse_spec(testbed), on_round)
