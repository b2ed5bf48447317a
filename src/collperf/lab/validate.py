"""The model against a real network stack: the measured allreduce lower bound, and a validation grid.

`bound` measures the allreduce lower bound (a chain of ceil(lg p) + 1 processes forwarding
2n(p-1)/p / ceil(lg p) items, plus the time to reduce n(p-1)/p items) beside the measured times of
allreduce algorithms and the model's bound. `validate` runs a grid of collectives x algorithms x
sizes on the ranks at hand, predicts every row from a calibrated profile alone, and reports the
relative error per algorithm and regime (latency- or bandwidth-dominated by the model's own terms).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from collperf.lab.bench import run
from collperf.lab.calibrate import calibrate
from collperf.model.algorithms import get_algorithm
from collperf.model.algorithms.modes import is_runtime_only
from collperf.model.bounds import lower_bound
from collperf.model.network import Network
from collperf.model.predict import candidates, network_lower_bound
from collperf.model.profile import cluster_from
from collperf.model.trees import ceil_log2
from collperf.runtime.launch import Job, run_local, run_testbed
from collperf.spec import SweepSpec
from collperf.spec.network import load_cluster

GRID = {
    "allreduce": ["ring", "rhd", "mesh", "builtin"],
    "allgather": ["ring", "bruck", "builtin"],
    "reducescatter": ["ring", "pairwise", "builtin"],
    "broadcast": ["binomial", "scatter-allgather", "builtin"],
    "alltoall": ["pairwise", "mesh", "builtin"],
}


def bound(
    size_bytes: int,
    ranks: int,
    testbed=None,
    algorithms=("ring", "rhd", "builtin"),
    network: Network | None = None,
    timeout_s: float = 300.0,
) -> dict:
    hosts = testbed.hosts if testbed else 1
    rph = testbed.ranks_per_host if testbed else ranks
    # one chain process per host first, so that the chain crosses the network where there is one
    order = [h * rph + k for k in range(rph) for h in range(hosts)]
    chain_ranks = order[: ceil_log2(ranks) + 1]
    job = Job("collperf.runtime.measure:measured_bound", (size_bytes, ranks, chain_ranks))
    measured = run_testbed(job, testbed, timeout_s) if testbed else run_local(job, ranks, timeout_s)
    config = SweepSpec(
        collective="allreduce",
        algorithms=list(algorithms),
        min_bytes=size_bytes,
        max_bytes=size_bytes,
        factor=2,
        iters=5,
        warmup=1,
        in_place=False,
        progress=False,
    )
    res = run(config, ranks, timeout_s, network, testbed=testbed)
    out = {
        "size_bytes": size_bytes,
        "ranks": ranks,
        "measured_bound": measured,
        "algorithms": {r.algorithm: r.out_of_place.p50_us * 1e-6 for r in res.rows},
    }
    if network is not None:
        out["model_bound_s"] = (
            float(lower_bound("allreduce", ranks, [size_bytes], network.flat_link, ports="single").total_s[0])
            if network.cluster is None
            else None
        )
        if network.cluster is not None:
            out["model_bound_s"] = float(network_lower_bound("allreduce", network, [size_bytes]).total_s[0])
    return out


@dataclass
class ValidationRow:
    collective: str
    algorithm: str
    ranks: int
    size: int
    measured_s: float
    predicted_s: float
    regime: str

    @property
    def error(self) -> float:
        return (self.predicted_s - self.measured_s) / self.measured_s

    def errors(self) -> list[tuple[str, float]]:
        """(regime, signed relative error): what summary groups by."""
        return [(self.regime, self.error)]


def validate(
    network: Network,
    testbed=None,
    ranks: int | None = None,
    sizes=("64K", "256K", "1M", "4M"),
    grid=None,
    iters: int = 5,
    timeout_s: float = 600.0,
    on_step=None,
) -> list[ValidationRow]:
    """Measure each of `sizes` (exactly those) for the grid; on_step(text) hears of each collective as it starts."""
    rows = []
    for collective, algorithms in (grid or GRID).items():
        usable = [
            a for a in algorithms if is_runtime_only(a) or not get_algorithm(collective, a).unavailable(network.ranks)
        ]
        if on_step is not None:
            on_step(f"measuring {collective}")
        config = SweepSpec(
            collective=collective,
            algorithms=usable,
            iters=iters,
            warmup=1,
            in_place=False,
            progress=False,
            size_list=list(sizes),
        )
        config_sizes = sorted({s for s in config.sizes()})
        res = run(config, ranks, timeout_s, network, testbed=testbed)
        costs, _ = candidates(collective, network, config_sizes)
        terms = {
            c.name: {s: (c.cost.latency_s[i], c.cost.bandwidth_s[i]) for i, s in enumerate(config_sizes)} for c in costs
        }
        for r in res.rows:
            if not r.correct() or not r.predicted_us:
                continue
            name = (
                r.algorithm
                if r.algorithm in terms
                else min(terms, key=lambda n: sum(terms[n].get(r.size, (np.inf, 0))))
            )  # noqa: B023 (called at once)
            lat, bw = terms[name].get(r.size, (0.0, 1.0))
            rows.append(
                ValidationRow(
                    collective,
                    r.algorithm,
                    network.ranks,
                    r.size,
                    r.out_of_place.p50_us * 1e-6,
                    r.predicted_us * 1e-6,
                    "latency" if lat > bw else "bandwidth",
                )
            )
    return rows


def calibrated_grid(
    testbed, ranks: int | None, sizes, iters: int, timeout_s: float, profile=None, on_step=None
) -> tuple[str, list[ValidationRow]]:
    """On `testbed` (up) or `ranks` local processes: calibrate unless a profile file is given, predict the grid
    from the profile alone, measure it; (the network validated on, described; the rows). on_step(text) hears
    of each phase as it starts."""
    nodes, per_node = (testbed.hosts, testbed.ranks_per_host) if testbed is not None else (None, ranks)
    if profile is None:  # the calibrated profile is used for this run only
        if on_step is not None:
            on_step("calibrating")
        cluster = cluster_from(calibrate(ranks, testbed, timeout_s), "calibrated profile", nodes, per_node)
    else:
        cluster = load_cluster(profile, nodes, per_node)
    net = Network.of(cluster)
    described = net.describe() + (f" (profile {profile})" if profile else " (calibrated)")
    return described, validate(
        net, testbed, None if testbed is not None else ranks, sizes, iters=iters, timeout_s=timeout_s, on_step=on_step
    )


def error_stats(members, signed_errors) -> dict:
    """rows, median and worst |error| of `members` (rows with a size) whose signed relative errors are
    `signed_errors`, with the worst row's size and signed error: the numbers of a validation summary line
    (every kind of validation row is summarised by summary, so that they agree)."""
    signed = np.asarray(signed_errors, dtype=float)
    errors = np.abs(signed)
    worst = int(np.argmax(errors))
    return {
        "rows": len(members),
        "median_abs_error": float(np.median(errors)),
        "worst_abs_error": float(errors[worst]),
        "worst_size": members[worst].size,
        "worst_signed_error": float(signed[worst]),
    }


def summary(rows) -> list[dict]:
    """Median and worst |error| per (collective, algorithm, ranks, regime), worst case named; a row gives one
    signed error per regime it is judged in (row.errors(): ValidationRow one, a routed testbed's row one per
    simulator mode)."""
    groups: dict = {}
    for r in rows:
        for regime, error in r.errors():
            groups.setdefault((r.collective, r.algorithm, r.ranks, regime), []).append((r, error))
    out = []
    for (collective, algorithm, ranks, regime), pairs in sorted(groups.items()):
        out.append(
            {
                "collective": collective,
                "algorithm": algorithm,
                "ranks": ranks,
                "regime": regime,
                **error_stats([r for r, _ in pairs], [e for _, e in pairs]),
            }
        )
    return out
