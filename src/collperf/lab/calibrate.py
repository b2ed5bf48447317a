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

from collperf.errors import UsageError
from collperf.model.network import Link
from collperf.model.profile import profile_from
from collperf.runtime.launch import Job, run_local, run_testbed
from collperf.spec import write_output


def check_ranks(ranks: int | None = None, testbed=None) -> None:
    """Before any testbed comes up: a link is measured between two ranks, so there must be two."""
    if testbed is not None:
        if testbed.ranks < 2:
            raise UsageError(
                f"calibration measures a link between 2 ranks; the testbed has {testbed.ranks} "
                f"({testbed.describe()}): give hosts=2 (the link between hosts) or "
                "ranks-per-host=2 (within a host) in --testbed"
            )
    elif not ranks or ranks < 2:
        raise UsageError(
            f"calibration measures a link between 2 ranks (got --ranks {ranks}): give --ranks 2 "
            "(or --testbed hosts=2,rate=200mbit)"
        )


def calibrate(ranks: int | None = None, testbed=None, timeout_s: float = 300.0, big_bytes: int = 16 << 20) -> dict:
    check_ranks(ranks, testbed)
    rph = testbed.ranks_per_host if testbed else (ranks or 2)
    job = Job("collperf.runtime.measure:calibrate", (rph, big_bytes))
    if testbed is not None:
        raw = run_testbed(job, testbed, timeout_s)
        nodes = testbed.hosts
    else:
        raw = run_local(job, ranks, timeout_s)
        nodes = 1
    return profile_from(raw, nodes, rph)


def step_link(ranks: int, sweep_sizes, timeout_s: float = 300.0) -> Link:
    """What one step of our executor costs on `ranks` local gloo ranks (runtime/auto/builtin_fit.py step_link:
    a batched exchange fitted at three sizes spanning the sweep, alpha floored by a small ping-pong)."""
    return run_local(Job("collperf.runtime.auto.builtin_fit:step_link", (list(sweep_sizes), ranks)), ranks, timeout_s)


def save(profile: dict, path) -> None:
    write_output(path, json.dumps(profile, indent=1), "--output")
