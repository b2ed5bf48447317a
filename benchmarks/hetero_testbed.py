"""Blink's packed trees against the ring (chain) broadcast on a dgx1v-like testbed, measured beside the model.

For each fragmented group of the cube-mesh (hosts 0,1,4 and 0,3,4,5; broadcast from host 0):
  measured  throughput (size / median time of the slowest rank) of -A blink (trees packed on the testbed's routes), of the
            pipelined chain (NCCL's ring broadcast) and of gloo's built-in broadcast, one sweep each, side by side
  model     the same two schedules simulated (events mode) on the testbed's topology with its routes, and the
            packing's rate over the chain's rate (the bandwidth-only ratio)
Then the chain-forward micro-benchmark (appendix A.1): a pipelined chain over hosts 0,1,2,3, its throughput
against the slowest link's configured rate (one NVLink, 100 Mbit/s).

Run as root (network namespaces): PYTHONPATH=src python benchmarks/hetero_testbed.py [SIZE] [ITERS]
The machine this ran on is shared and busy: rates are noisy, ratios measured in one run side by side.
"""

import sys

from collperf.lab.testbed import routed_runs as hetero_runs
from collperf.lab.bench import run
from collperf.blink.routed_packing import pack_on_routes, ring_rate_Bps
from collperf.model.two_level.build import build
from collperf.spec import SweepSpec
from collperf.lab.testbed.routed import TopologyTestbed
from collperf import units

SIZE = sys.argv[1] if len(sys.argv) > 1 else "16M"
ITERS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
SEGMENTS = 16


def sweep(bed, algorithms, size=SIZE):
    # the slowest rank's time (nccl-tests -a 3): the simulator's time is the last rank's
    config = SweepSpec(
        collective="broadcast",
        algorithms=algorithms,
        min_bytes=size,
        max_bytes=size,
        factor=2,
        iters=ITERS,
        warmup=1,
        in_place=False,
        segments=SEGMENTS,
        average=3,
        progress=False,
    )
    pre = hetero_runs.schedules(bed, config)
    res = run(config, None, 1800, None, testbed=bed, schedules=pre or None)
    out = {}
    for r in res.rows:
        row = r["out_of_place"]
        out[r["algorithm"]] = (r["size"] / (row["p50_us"] * 1e-6), row["wrong"])
    return out, pre


def packed_vs_ring(group, name):
    with TopologyTestbed("dgx1v-like", group, 1, name) as bed:
        measured, pre = sweep(bed, ["blink", "chain", "builtin"])
    size = units.parse_size(SIZE)
    blink_s = hetero_runs.simulated_s(bed, next(iter(pre.values())), size)
    chain_s = hetero_runs.simulated_s(bed, build("broadcast", "chain", len(group), segments=SEGMENTS), size)
    rate = pack_on_routes(bed.topology, group).rate_Bps / ring_rate_Bps(bed.topology, group)
    m = measured["blink"][0] / measured["chain"][0]
    model = chain_s / blink_s
    print(
        f"| {','.join(map(str, group))} | {measured['blink'][0] * 8e-6:.1f} | {measured['chain'][0] * 8e-6:.1f} | "
        f"{measured['builtin'][0] * 8e-6:.1f} | {m:.2f} | {model:.2f} | {rate:.2f} | {m / model - 1:+.1%} | "
        f"{sum(w for _, w in measured.values())} |",
        flush=True,
    )


def chain_forward(hosts, name):
    with TopologyTestbed("dgx1v-like", hosts, 1, name) as bed:
        slowest = min(bed.topology.link(u, v)["bandwidth_Bps"] for u, v in zip(hosts[:-1], hosts[1:]))
        for size in ("4M", SIZE):
            measured, _ = sweep(bed, ["chain"], size)
            rate, wrong = measured["chain"]
            print(
                f"| {'->'.join(map(str, hosts))} | {size} | {rate * 8e-6:.1f} | {slowest * 8e-6:.0f} | "
                f"{rate / slowest:.2f} | {wrong} |",
                flush=True,
            )


if __name__ == "__main__":
    print(f"broadcast of {SIZE} from host 0, {ITERS} iterations (median), {SEGMENTS} segments; Mbit/s")
    print(
        "| hosts | packed trees | chain (ring) | gloo built-in | measured ratio | model ratio (events) | "
        "model ratio (rates) | measured vs model | #wrong |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    packed_vs_ring([0, 1, 4], "hb1")
    packed_vs_ring([0, 3, 4, 5], "hb2")
    print("\nchain-forward (pipelined chain broadcast), Mbit/s")
    print("| chain | size | measured | slowest link | fraction | #wrong |")
    print("|---|---|---|---|---|---|")
    chain_forward([0, 1, 2, 3], "hb3")
