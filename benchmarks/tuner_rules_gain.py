"""NCCL tuner rules from NCCL's own model (`collperf export nccl-tuner --cluster ...`): how much the rules
save over NCCL's default choice when the NICs deliver less than the catalogue says, and how long making the
rules takes. Gains are model times (NCCL's tuning.cc cost table on the given rates), not measurements; the
rule for each size is found the way the example plugin finds it (first match of the written file).

    PYTHONPATH=src python benchmarks/tuner_rules_gain.py [--collective allreduce]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from collperf.expect.resolve import assume
from collperf.export import nccl_tuner, tuner_model
from collperf.spec import HardwareSpec

CASES = [("dgx-h100", 2), ("dgx-h100", 4), ("dgx-a100", 2), ("dgx-a100", 4)]
RATES = [None, "200Gb/s", "100Gb/s", "50Gb/s"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--collective", default="allreduce")
    args = parser.parse_args()
    sizes = np.unique(np.geomspace(1 << 10, 1 << 32, 400).astype(int))
    print(
        f"{args.collective}: time saved by the rules over NCCL's pick on the catalogue rates, "
        f"{len(sizes)} sizes 1 KiB..4 GiB (model times)"
    )
    print(
        f"{'system':<14}{'NIC rate':>10}{'rules':>7}{'sizes won':>11}{'median gain':>13}{'max gain':>10}"
        f"{'rules ms':>10}"
    )
    for cluster, nodes in CASES:
        believed = assume(None, HardwareSpec(cluster=cluster, nodes=nodes)).system
        for rate in RATES:
            real = assume(None, HardwareSpec(cluster=cluster, nodes=nodes, nic_rate=rate)).system
            start = time.perf_counter()
            options = tuner_model.choices(real, believed if rate else None, (args.collective,))
            rules = nccl_tuner.build(options, real.nodes, real.ranks)
            text = rules.text()
            elapsed_ms = (time.perf_counter() - start) * 1e3
            parsed = nccl_tuner.parse_rules(text)
            cells = {(o.algorithm, o.protocol): o for o in options if o.algorithm != "default"}
            default = next(o for o in options if o.algorithm == "default")
            gains = []
            for size in sizes:
                hit = nccl_tuner.match(parsed, args.collective, int(size), real.nodes, real.ranks)
                t_rule = cells[(hit["algorithm"], hit["protocol"])].time_s(size)
                gains.append(1 - t_rule / default.time_s(size))
            gains = np.array(gains)
            won = gains > 1e-9
            print(
                f"{cluster + ' x' + str(nodes):<14}{rate or 'catalogue':>10}{len(rules.rules):>7}"
                f"{int(won.sum()):>11}{100 * (np.median(gains[won]) if won.any() else 0):>12.1f}%"
                f"{100 * gains.max():>9.1f}%{elapsed_ms:>10.0f}"
            )
    print(
        "  sizes won: where the rule's cell beats NCCL's pick (median over those); a negative gain would be a "
        "rule slower than NCCL's pick (none expected: the rules are the argmin)"
    )
    print("  rules ms: time to build and write the rules on a shared 2-core box (noisy)")


if __name__ == "__main__":
    main()
