"""How close the model is to a real network stack: calibrate a small testbed, predict a grid of
collectives from the profile alone, measure them, and print the errors and the calibrated rate beside
the shaped one. Needs Linux, root and iproute2. Numbers depend on the machine's load: run it idle.

    .venv/bin/python benchmarks/testbed_validation.py [--hosts 2] [--rate 400mbit]
"""

import argparse
import statistics

from collperf import api, units
from collperf.lab.testbed.switch import Testbed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", type=int, default=2)
    parser.add_argument("--rate", default="400mbit")
    args = parser.parse_args()
    bed = Testbed(args.hosts, args.rate, 1, "bv0")
    result = api.validate(testbeds=[bed], sizes="1M,4M", iters=3, timeout_s=300)
    print(result.networks[0])
    print(f"shaped rate {units.format_bandwidth(bed.rate_Bps)}")
    errors = [abs(r.error) for r in result.rows if r.regime == "bandwidth"]
    for s in result.summary:
        print(
            f"{s['collective']:14s} {s['algorithm']:18s} {s['regime']:9s} median |error| "
            f"{100 * s['median_abs_error']:5.1f} %  worst {100 * s['worst_signed_error']:+6.1f} %"
        )
    print(
        f"bandwidth-bound rows: median |error| {100 * statistics.median(errors):.1f} %, "
        f"worst {100 * max(errors):.1f} % over {len(errors)} rows"
    )


if __name__ == "__main__":
    main()
