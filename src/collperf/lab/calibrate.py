"""Measure a network's alpha, bandwidth and gamma, and keep them as a profile.

`calibrate` runs runtime/measure.calibrate on local ranks or on a testbed: ping-pong between two
ranks of one host (intra) and of two hosts (inter) for alpha (8 bytes) and bandwidth (16 MiB), the
cost-model chapter's tiny-allreduce alpha, and the local reduction bandwidth (gamma). A profile is a
small JSON file that `predict`, `bench`, `diagnose` and `plan` take as `--profile`; its format, and the
Cluster it gives, are model/profile.py's. A testbed calibrates itself (Testbed.calibrate) through this
function or its own per-link measurement, into the same format.
"""

from __future__ import annotations

import json
from pathlib import Path

from collperf.errors import UsageError
from collperf.model.profile import profile_from
from collperf.runtime.launch import Job, run_local, run_testbed


def calibrate(ranks: int | None = None, testbed=None, timeout_s: float = 300.0, big_bytes: int = 16 << 20) -> dict:
    rph = testbed.ranks_per_host if testbed else (ranks or 2)
    job = Job("collperf.runtime.measure:calibrate", (rph, big_bytes))
    if testbed is not None:
        raw = run_testbed(job, testbed, timeout_s)
        nodes = testbed.hosts
    else:
        if not ranks or ranks < 2:
            raise UsageError("calibration needs at least 2 ranks: --ranks 2 (or --testbed hosts=2,...)")
        raw = run_local(job, ranks, timeout_s)
        nodes = 1
    return profile_from(raw, nodes, rph)


def save(profile: dict, path) -> None:
    Path(path).write_text(json.dumps(profile, indent=1))
