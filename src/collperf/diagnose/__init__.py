"""`collperf diagnose`: is a measurement good or bad, and why.

    hardware.py  which system is assumed, and where each value came from
    verdict.py   one row: measured vs NCCL-expected, vs the bound, causes for the context
    findings.py  table-wide findings (wrong results, dips, above-bound, latency-bound, reader problems)
    core.py      diagnose(table), diagnose_measurement(spec), the Diagnosis it returns
"""

from __future__ import annotations

from collperf.diagnose.core import (Diagnosis, Judgement, SizeVerdict, diagnose, diagnose_measurement,
                                    expectation, overall)
from collperf.diagnose.findings import Finding
from collperf.diagnose.hardware import Assumed, assume

__all__ = ["diagnose", "diagnose_measurement", "Diagnosis", "Judgement", "SizeVerdict", "Finding", "Assumed",
           "assume", "expectation", "overall"]
