"""`collperf diagnose LOG --model-from OTHER_LOG` across collectives: NCCL's model fitted to a healthy log of one
collective (model/nccl/fitting.py) predicting a log of another collective measured on the same machine.

Pairs: healthy corpus logs (src/collperf/data/corpus/index.csv) of the same source, system, node count and rank
count that measured different collectives, each in both directions, and the shipped examples 01 -> 02 (SuperBench
A100 allreduce / allgather). Each log is read on the hardware its source states (corpus_fit.hardware_for, as a user
would give it with --cluster/--nodes/...). Per pair: the rows >= 1 MiB of the predicted log and the median over them
of |predicted / measured - 1|; then the median over pairs and the worst pair.

    PYTHONPATH=src python benchmarks/cross_collective.py
"""

from __future__ import annotations

from collections import defaultdict
from itertools import permutations
from pathlib import Path

import numpy as np

from collperf.diagnose import diagnose
from collperf.diagnose.corpus_fit import _tables, hardware_for, read_index
from collperf.ingest import load
from collperf.spec import HardwareSpec

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "src" / "collperf" / "data" / "corpus"
EXAMPLES = ROOT / "examples"
MIB = 1 << 20


def corpus_pairs(corpus: Path = CORPUS) -> list[tuple]:
    """(label, system, model table, target table, hardware) for every ordered pair of healthy corpus logs of one
    source, system, node and rank count and different collectives."""
    groups = defaultdict(list)
    for row in read_index(corpus):
        if row.get("health", "").strip() != "healthy":
            continue
        key = (row["source_group"], row["system"], row["nodes"], row["ranks"])
        groups[key].append(row)
    out = []
    for (source, system, nodes, ranks), rows in groups.items():
        for a, b in permutations(rows, 2):
            if a["collectives"] == b["collectives"]:
                continue
            model, target = _tables(corpus / f"{a['id']}.txt", a)[0], _tables(corpus / f"{b['id']}.txt", b)[0]
            out.append((source, f"{system} {nodes}x{int(ranks) // int(nodes)}", model, target, hardware_for(b)))
    return out


def example_pairs() -> list[tuple]:
    a, b = (load(next(EXAMPLES.glob(f"{k}_*.txt")))[0] for k in ("01", "02"))
    return [("examples 01/02", "dgx-a100 1x8 (assumed)", m, t, HardwareSpec()) for m, t in ((a, b), (b, a))]


def cross_error(model, target, hardware) -> tuple[int, float, float]:
    """(rows >= 1 MiB, median and worst |predicted / measured - 1| over them) of `target` predicted from `model`."""
    d = diagnose(target, hardware=hardware, model=model)
    err = [abs(s.expected_s / s.time_s - 1) for s in d.sizes if s.size_bytes >= MIB and s.expected_s]
    return len(err), float(np.median(err)), float(max(err))


def main():
    print("| source | system | from -> to | rows >= 1 MiB | median |error| | worst |")
    print("|---|---|---|---|---|---|")
    medians = []
    for source, system, model, target, hardware in corpus_pairs() + example_pairs():
        rows, median, worst = cross_error(model, target, hardware)
        medians.append(median)
        print(
            f"| {source} | {system} | {model.collective} -> {target.collective} | {rows} | {median:.1%} | {worst:.1%} |"
        )
    print(
        f"pairs: {len(medians)}; median over pairs {np.median(medians):.1%}, worst pair {max(medians):.1%}, "
        f"pairs within 10 %: {sum(m <= 0.10 for m in medians)} of {len(medians)}"
    )


if __name__ == "__main__":
    main()
