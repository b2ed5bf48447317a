"""Cluster health: the doctor's campaign plan (doctor_plan)."""

from __future__ import annotations

from collperf.lab.doctor.plan import Plan, plan
from collperf.spec import DoctorPlanSpec


def doctor_plan(spec: DoctorPlanSpec | None = None, **options) -> Plan:
    """`collperf doctor --plan --nodes N`: tests, rounds and wall time of exhaustive pairs, two-pass and the
    doctor's adaptive campaign (alone, screen, bisect, confirm, cross) for N hosts, healthy and with one faulty
    host, weighed by the fault prior. Give a DoctorPlanSpec or its fields as keywords."""
    spec = spec if spec is not None else DoctorPlanSpec(**options)
    return plan(spec.nodes, spec.leaves, spec.fault_rate, spec.test_time_s)
