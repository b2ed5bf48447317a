"""nccl-tests-style sweeps on real processes, each row beside the model's prediction.

`run(config, ranks)` launches the ranks (local processes by default, the current torchrun job when
started under torchrun), runs runtime/measure.bench on each, and returns Results with a predicted
time on every row: from a given network (a link or a cluster), or, when none is given, from a link
fitted to this run's own rows (non-negative least squares on relative error over our algorithms'
rows, whose alpha/beta/gamma coefficients the model knows exactly). `builtin` rows are compared with
the model's best algorithm, the lower envelope of what the model knows.
"""

from __future__ import annotations

import math
import os
import numpy as np

from collperf.collectives import get_collective
from collperf.errors import UsageError
from collperf.model.algorithms import get_algorithm
from collperf.model.costs import coefficients, lowest
from collperf.model.network import Link, Network
from collperf.model.predict import candidates
from collperf.results import Results
from collperf.spec import SweepSpec

def run(config: SweepSpec, ranks: int | None = None, timeout_s: float = 300.0,
        network: Network | None = None, testbed=None) -> Results | None:
    """Run the sweep; under torchrun every rank runs it and rank 0 gets the Results (others None);
    on a testbed (an up testbed.Testbed) every rank runs inside its host."""
    from collperf.runtime import launch   # torch is needed from here on
    job = launch.Job("collperf.runtime.measure:bench", (config.to_job(),))
    if testbed is not None:
        _check_ranks(config, testbed.ranks)
        world, backend = testbed.ranks, f"gloo on {testbed.describe()}"
        rows = launch.run_testbed(job, testbed, timeout_s)
    elif launch.in_torchrun():
        world = int(os.environ["WORLD_SIZE"])
        _check_ranks(config, world)
        rows = launch.run_torchrun(job, timeout_s)
        if int(os.environ["RANK"]) != 0:
            return None
        backend = "nccl" if _cuda() else "gloo"
    else:
        if ranks is None:
            raise UsageError("give the number of local ranks: --ranks 4 (or run under torchrun)")
        _check_ranks(config, ranks)
        world, backend = ranks, "gloo"
        rows = launch.run_local(job, ranks, timeout_s)
    results = Results(config.collective, world, backend, config.to_job(), rows)
    add_predictions(results, network)
    return results


def _cuda() -> bool:
    import torch
    return torch.cuda.is_available()


def _check_ranks(config: SweepSpec, ranks: int) -> None:
    for a in config.algorithms:
        if a != "builtin":
            reason = get_algorithm(config.collective, a).unavailable(ranks)
            if reason:
                raise UsageError(f"{config.collective} {a} cannot run on {ranks} ranks: {reason}")
    if get_collective(config.collective).rooted and not 0 <= config.root < ranks:
        raise UsageError(f"root {config.root} is not a rank of 0..{ranks - 1}")


def fit_link(results: Results) -> Link | None:
    """alpha, bandwidth and reduce bandwidth fitted to the run's rows of our own algorithms."""
    from scipy.optimize import nnls
    rows_a, rows_t = [], []
    p, segments = results.ranks, results.config["segments"]
    for r in results.rows:
        if r["algorithm"] == "builtin" or r["out_of_place"] is None or r["out_of_place"]["wrong"]:
            continue   # never fit to a wrong run
        alg = get_algorithm(results.collective, r["algorithm"])
        a, b, c = coefficients(results.collective, alg.name, p, segments if alg.pipeline else None)
        t = r["out_of_place"]["p50_us"] * 1e-6
        if t > 0:
            rows_a.append(np.array([a, b * r["size"], c * r["size"]]) / t)   # relative error
            rows_t.append(1.0)
    if len(rows_a) < 2:
        return None
    (alpha, beta, gamma), _ = nnls(np.array(rows_a), np.array(rows_t))
    if alpha <= 0 and beta <= 0:
        return None
    # sizes too small to show a bandwidth term fit beta = 0: an unresolved (infinite) bandwidth
    return Link(alpha, 1 / beta if beta > 0 else math.inf, 1 / gamma if gamma > 0 else math.inf, name="fitted")


def add_predictions(results: Results, network: Network | None) -> None:
    if network is None:
        link = fit_link(results)
        if link is None:
            results.model = "no prediction (give --latency/--bandwidth or --cluster; too few rows of our algorithms to fit)"
            return
        network = Network.of(link, results.ranks)
        results.model = f"fitted to this run: {link.describe()}"
    else:
        if network.ranks != results.ranks:
            raise UsageError(f"the network has {network.ranks} ranks but the run has {results.ranks}")
        results.model = f"given: {network.describe()}"
    sizes = sorted({r["size"] for r in results.rows})
    costs, _ = candidates(results.collective, network, sizes, segments=results.config["segments"])
    table = {c.name: dict(zip(sizes, c.cost.total_s)) for c in costs}
    best = dict(zip(sizes, lowest([c.cost for c in costs], [c.name for c in costs])[0].total_s))
    for r in results.rows:
        t = best[r["size"]] if r["algorithm"] == "builtin" else table.get(r["algorithm"], {}).get(r["size"])
        r["predicted_us"] = float(t) * 1e6 if t else None
