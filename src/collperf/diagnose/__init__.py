"""`collperf diagnose`: is a measurement good or bad, and why.

hardware.py  which system is assumed, and where each value came from
verdict.py   one row: measured vs NCCL-expected, vs the bound, causes for the context
findings.py  table-wide findings (wrong results, dips, above-bound, latency-bound, reader problems)
band_rule.py when the band calls a run slower (or faster than typical) as a whole: logs and one number alike
core.py      diagnose(table), the Diagnosis it returns
measurement.py  diagnose_measurement(spec): one number judged as a log of that one size
"""

from __future__ import annotations

from collperf.diagnose.core import Diagnosis, SizeVerdict, diagnose, expectation, overall
from collperf.diagnose.measurement import Judgement, diagnose_measurement
from collperf.diagnose.findings import Finding
from collperf.expect.resolve import Assumed, assume

__all__ = [
    "diagnose",
    "diagnose_measurement",
    "Diagnosis",
    "Judgement",
    "SizeVerdict",
    "Finding",
    "Assumed",
    "assume",
    "expectation",
    "overall",
]
