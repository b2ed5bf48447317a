"""MPI logs (OSU micro-benchmarks, Intel MPI Benchmarks) judged against the bound.

NCCL's model says nothing of an MPI library's algorithms, so an MPI table has no expected time; its rows
are judged against the physical bound instead: --peak (a per-rank busbw), the two-level bound of a
catalogue system (--cluster), or of a CPU cluster described by its links (--nodes, --nic-rate,
--nics-per-node, --gpu-link-rate). A bandwidth-bound row within SLOWER_FACTOR of the bound is as
expected; a latency-bound row is not judged (the bound has no latency term: the per-call cost of an MPI
library is its own).
"""

from __future__ import annotations

import numpy as np

from collperf import units
from collperf.diagnose import verdict as V
from collperf.model.bounds import two_level_bound

NO_EXPECTED = (
    "none: an MPI library's algorithms are not NCCL's, so its rows are judged against the bound "
    "(--peak, --cluster, or the CPU cluster's links: --nodes --nic-rate --gpu-link-rate)"
)


def cpu_cluster_bound(collective: str, sizes, ranks: int | None, hw):
    """(bound_s, binding, peak busbw GB/s, bound_from) from --nodes/--nic-rate/--nics-per-node/--gpu-link-rate,
    or None when those do not describe a cluster (no rank count, or several nodes without a NIC rate)."""
    nodes = hw.nodes or 1
    if not ranks or ranks % nodes or (nodes > 1 and hw.nic_Gbps is None) or (nodes == 1 and hw.intra_GBps is None):
        return None
    per_node = ranks // nodes
    nic_Bps = (hw.nic_Gbps or 0.0) * 1e9 / 8 * (hw.nics_per_node or 1)
    intra_Bps = hw.intra_GBps * 1e9 if hw.intra_GBps else np.inf
    b = two_level_bound(collective, sizes, nodes, per_node, intra_Bps, nic_Bps if nic_Bps > 0 else np.inf)
    peak = b.peak_busbw_Bps
    links = [
        f"{hw.nics_per_node or 1}x {hw.nic_Gbps:g} Gb/s per node" if nodes > 1 else "",
        f"{hw.intra_GBps:g} GB/s per rank inside a node" if hw.intra_GBps else "",
    ]
    return (
        b.time_s,
        b.binding,
        peak / 1e9 if np.isfinite(peak) else None,
        f"two-level bound on the CPU cluster given: {nodes} node(s) x {per_node} ranks, "
        + ", ".join(x for x in links if x),
    )


def for_mpi(ex, collective: str, sizes, ranks: int | None, hw, peak_Bps):
    """The Expectation of an MPI table: no expected time; the bound from --peak, the assumed system or
    the CPU cluster's links."""
    n = len(sizes)
    ex.expected_s, ex.regime = None, None
    ex.choice, ex.runner_up = [""] * n, [""] * n
    ex.expected_from = NO_EXPECTED
    if ex.bound_s is None and peak_Bps is None and n:
        cluster = cpu_cluster_bound(collective, np.asarray(sizes, dtype=float), ranks, hw)
        if cluster is not None:
            ex.bound_s, ex.binding, ex.peak_GBps, ex.bound_from = cluster[0], list(cluster[1]), cluster[2], cluster[3]
    return ex


def verdict(time_s: float, bound_s: float | None, regime: str, wrong: bool) -> tuple[V.Verdict, float | None]:
    """One MPI row against the bound: (verdict, efficiency bound / measured)."""
    settled, efficiency = V.before_expected(time_s, bound_s, wrong)
    if settled is not None:
        return settled, efficiency  # wrong results, or above the bound
    if bound_s is None or bound_s <= 0:
        return V.Verdict(
            V.Kind.NOT_JUDGED,
            "not judged: an MPI log has no expected time; give a bound (--peak, "
            "--cluster, or --nodes --nic-rate --gpu-link-rate)",
        ), efficiency
    if regime == "latency":
        return V.Verdict(V.Kind.NOT_JUDGED, "not judged: latency-bound, and the bound has no latency term"), efficiency
    if time_s <= V.SLOWER_FACTOR * bound_s:
        return V.Verdict(V.Kind.AS_EXPECTED, f"as expected: {efficiency:.0%} of the bound"), efficiency
    ratio = time_s / bound_s
    return V.Verdict(
        V.Kind.SLOWER_THAN_BOUND,
        f"slower than the bound allows by {ratio:.3g}x ({units.format_time(time_s)} vs {units.format_time(bound_s)})",
    ), efficiency


def overall(verdicts, found) -> V.Verdict:
    """The table's verdict, judged against the bound (the bandwidth-bound rows decide)."""
    settled = V.settled_overall(
        verdicts, found, "some sizes beat the bound given, so the bound (or the rank count) is wrong"
    )
    if settled is not None:
        return settled
    judged = [v for v in verdicts if v.verdict.kind.judged]
    slow = [v for v in judged if v.verdict.kind.slower]
    top = judged[-1]
    if len(slow) > len(judged) / 2:
        worst = max(slow, key=lambda v: v.time_s / v.bound_s)
        return V.Verdict(
            V.Kind.SLOWER_THAN_BOUND,
            f"slower than the bound allows: {len(slow)} of {len(judged)} bandwidth-bound sizes, up to "
            f"{worst.time_s / worst.bound_s:.2f}x the bound at {units.format_size(worst.size_bytes)}",
        )
    return V.Verdict(
        V.Kind.AS_EXPECTED,
        f"as expected: {len(judged) - len(slow)} of {len(judged)} bandwidth-bound sizes within "
        f"{V.SLOWER_FACTOR:g}x of the bound, {top.efficiency:.0%} of it at "
        f"{units.format_size(top.size_bytes)}",
    )
