"""The doctor on the testbed: 8 emulated hosts on two leaves and a spine, each fault in turn, healthy runs, and
exhaustive pairs on the same testbed for the wall time they cost.

Cases (rates scaled to the box: 40 Mbit/s per host, uplinks non-blocking at 160 Mbit/s, allreduce of 1 MiB):
  slow-link    host3's link at 24 Mbit/s (60 %)
  slow-uplink  leaf1's uplink at 80 Mbit/s (50 %)
  slow-rank    host5's rank busy 0.1 s on its CPU before each repeat
  kill-host    host6's rank killed 30 s into the campaign (mid-run: after the alone round)
  healthy      no fault, HEALTHY times
For each: what the doctor named (and whether it is the injected component), tests and rounds against the bound
ceil(log2 N)+3, the tests the plan predicts for the case, the wall time of the campaign (with the testbed's
set-up) and of its rounds. Then every pair of hosts once (N-1 rounds of N/2 pairs) on a healthy testbed: tests
and wall time measured.

  healthy-blocking-uplinks  no fault, uplinks at half the leaf's hosts x rate (80 Mbit/s for 4 hosts of 40)
Run as root (network namespaces): PYTHONPATH=src python benchmarks/doctor_testbed.py [HEALTHY] [OUT.json] [pairs]
DOCTOR_HOSTS=16 in the environment runs 16 hosts (two leaves of 8); DOCTOR_CASES=slow-link,... only those
fault cases; "pairs" adds exhaustive pairs.
The machine this ran on is shared and busy: wall times are this box's, with torch imported per test.
"""

import json
import os
import sys
import time

from collperf import api
from collperf.errors import run_main
from collperf.lab.doctor.campaign import Test, pack
from collperf.lab.doctor.testbed import TestbedRunner, topology
from collperf.lab.doctor.testbed_spec import parse_spec

HOSTS = int(os.environ.get("DOCTOR_HOSTS", "8"))
BASE = f"hosts={HOSTS},leaves=2,rate=40mbit,name=dbm"
LEAF = HOSTS // 2
CASES = [
    ("slow-link", "slow-link=host3:24mbit", {"host3"}),
    ("slow-uplink", f"slow-uplink=leaf1:{LEAF * 20}mbit", {"leaf1-uplink"}),
    ("slow-rank", "slow-rank=host5:0.1s", {"host5"}),
    ("kill-host", "kill-host=host6:30s", {"host6"}),
    # uplinks blocking at half the leaf's hosts x rate: a healthy cross round shares them (contention priced)
    ("healthy-blocking-uplinks", f"uplink={LEAF * 20}mbit", set()),
]


def one(label, extra, want):
    report = api.doctor_testbed(BASE + ("," + extra if extra else ""))
    c = report.campaign
    named = {v.component for v in c.accused()}
    row = {
        "case": label,
        "named": sorted(named),
        "verdicts": {v.component: v.kind for v in c.accused()},
        "right": want <= named
        and (named - want <= {"leaf0-uplink", "leaf1-uplink"} if want & {"leaf1-uplink"} else named == want),
        "tests": c.tests,
        "rounds": len(c.rounds),
        "stages": [r[0].test.stage for r in c.rounds],
        "bound": report.round_bound,
        "predicted_tests": report.predicted_tests,
        "wall_s": round(report.wall_s, 1),
        "rounds_wall_s": round(sum(report.round_wall_s), 1),
        "efficiency": report.efficiency,
    }
    print(json.dumps(row), flush=True)
    return row


def pairs() -> dict:
    """Every pair once on a healthy testbed, N/2 at a time: tests and wall time."""
    from collperf.lab.testbed.routed import TopologyTestbed

    spec = parse_spec(BASE)
    n = spec.hosts
    # the circle method: N-1 rounds of N/2 disjoint pairs
    rounds = []
    others = list(range(1, n))
    for _ in range(n - 1):
        ring = [0] + others
        rounds.append([Test("pair", (ring[i], ring[n - 1 - i])) for i in range(n // 2)])
        others = others[-1:] + others[:-1]
    assert sum(len(r) for r in rounds) == n * (n - 1) // 2 and all(len(pack(r)) == 1 for r in rounds)
    started = time.monotonic()
    with TopologyTestbed(topology(spec), name=spec.name) as bed:
        runner = TestbedRunner(spec, bed)
        for r in rounds:
            runner(r)
    row = {
        "case": "exhaustive-pairs",
        "tests": sum(len(r) for r in rounds),
        "rounds": len(rounds),
        "wall_s": round(time.monotonic() - started, 1),
        "rounds_wall_s": round(sum(runner.wall_s), 1),
    }
    print(json.dumps(row), flush=True)
    return row


def main():
    healthy = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    only = os.environ.get("DOCTOR_CASES")  # a comma list of case names: only those
    rows = [one(*case) for case in CASES if not only or case[0] in only.split(",")]
    rows += [one(f"healthy-{i + 1}", "", set()) for i in range(healthy)]
    if "pairs" in sys.argv[3:]:
        rows.append(pairs())
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    run_main(main)
