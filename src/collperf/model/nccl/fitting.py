"""Fit the hardware to one measured table, then predict other collectives on the same machine.

The expectation model's free physical parameters are scaled so that it reproduces the log: the
bandwidth NCCL gets per channel (one factor `k_bw` on every graph bandwidth: on one node that is
the intra-node level, on several the NIC-limited one) and the host launch overhead (latency not in
NCCL's model). The physical rates, and so the bound, stay as they are: a fit says how well NCCL uses
the hardware, not that the hardware changed. The fitted System is then fed to `expect` for any
collective, which makes its own NCCL algorithm/protocol choice. Least squares on log time (relative
errors), with a weak pull of the scales towards 1 so that what the data cannot see stays as it was.

The host overhead is fitted per protocol (LL, LL128, Simple) when the log's rows run more than one:
what a call costs outside NCCL's model differs by protocol (Simple synchronises and flushes every step,
LL does not), and it is that fixed cost, not a per-step one, that carries over to another collective
on the same machine (01 -> 02 in benchmarks/diagnose_samples.py: 10.9 % with one overhead, 9.3 % per
protocol). A protocol the log never runs takes the mean of the fitted ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import numpy.typing as npt

from collperf.errors import UsageError
from collperf.model.nccl.expected import expect, select
from collperf.model.nccl.transport import host_staged_time, is_duplex
from collperf.model.hardware.system import System


@dataclass(frozen=True)
class FitResult:
    system: "System"  # the fitted system (provenance says "fitted to <source>")
    k_bw: float  # bandwidth scale of NCCL's channels
    level: str  # "intra" or "network": the level it mostly describes
    launch_overhead_us: float  # the mean per-call overhead (per protocol in system.protocol_overhead_us)
    rms_log_error: float
    median_abs_error: float  # |model - measured| / measured, median over the rows used

    def describe(self) -> str:
        what = (
            f"{self.level} {self.system.host_duplex_efficiency:.3f}"
            if "duplex" in self.level
            else f"{self.level} bandwidth x{self.k_bw:.3f}"
        )
        per = self.system.protocol_overhead_us
        overhead = (
            f"launch overhead {self.launch_overhead_us:.1f} us"
            if per is None
            else "launch overhead " + " / ".join(f"{p} {o:.1f}" for p, o in zip(_PROTOCOLS, per)) + " us"
        )
        return f"{what}, {overhead}; median error {self.median_abs_error:.1%}"


_PROTOCOLS = ("LL", "LL128", "Simple")


def _scaled(
    system: "System", k_bw: float, overhead_us: float | Sequence[float] | npt.NDArray[np.float64], why: str, mode: str
) -> "System":
    """`system` with the fitted scale and overheads (one number, or one per protocol)."""
    per = tuple(float(o) for o in np.asarray(overhead_us)) if np.ndim(overhead_us) else None
    common = float(np.mean(overhead_us))
    kw = dict(launch_overhead_us=common, protocol_overhead_us=per)
    if mode == "duplex":
        return system.with_(why, host_duplex_efficiency=min(1.0, system.host_duplex_efficiency * k_bw), **kw)
    if mode == "physical":
        return system.with_(why, phys_scale=system.phys_scale * k_bw, **kw)
    return system.with_(why, bw_scale=system.bw_scale * k_bw, **kw)


def _fit_mode(collective: str, n: np.ndarray, system: "System") -> str:
    """What the fit scales: 'duplex' (host-staged PCIe and a collective whose ranks send and receive
    through host memory at once: the log measures what that costs, transport.py), 'physical' (the
    physical bound sets most of the unfitted expectation), else 'channels' (NCCL's channel bandwidths)."""
    if (
        system.host_bridge
        and collective in ("allreduce", "allgather", "reducescatter", "broadcast", "reduce")
        and is_duplex(collective, system.ranks)
    ):
        staged = host_staged_time(collective, n, system)
        if np.mean(staged > select(collective, n, system).bandwidth_s) > 0.5:
            return "duplex"
    return "physical" if np.mean(expect(collective, n, system).regime == "bound") > 0.5 else "channels"


def fit_system(
    collective: str,
    size_bytes: npt.ArrayLike,
    time_s: npt.ArrayLike,
    system: "System",
    min_size_bytes: int = 0,
    source: str = "log",
) -> FitResult:
    """Fit `system` to measured (size, time) rows of one collective; returns the fitted system."""
    from scipy.optimize import least_squares

    n = np.asarray(size_bytes, dtype=float)
    t = np.asarray(time_s, dtype=float)
    keep = (n >= max(min_size_bytes, 1)) & (t > 0)
    if keep.sum() < 2:
        raise UsageError(
            f"fit needs at least 2 rows with size >= {min_size_bytes} B and time > 0; got {int(keep.sum())}"
        )
    n, t = n[keep], t[keep]
    level = "network" if system.nodes > 1 else "intra"
    # Scale what sets the time: on host-staged PCIe with ranks that send and receive at once, the
    # duplex efficiency of the GPU links (the one value hardware alone does not give, transport.py);
    # where the physical bound gives most of the unfitted expectation, the physical rates; else
    # NCCL's channel bandwidths.
    mode = _fit_mode(collective, n, system)
    if mode == "duplex":
        level = "host-staged duplex efficiency"
    elif mode == "physical":
        level = "host bridge" if system.host_bridge else level + " (physical)"
    why = f"fitted to {source}"
    # NCCL's choice does not depend on the overhead (expect adds it after choosing), so the protocols
    # the rows run are known before fitting it; one overhead each when there are several
    used = sorted(set(expect(collective, n, system).protocol), key=_PROTOCOLS.index)
    per_protocol = len(used) > 1

    def overheads(x: np.ndarray) -> float | list[float]:
        if not per_protocol:
            one: float = max(0.0, x[1])
            return one
        fitted = dict(zip(used, x[1:]))
        mean = float(np.mean(list(fitted.values())))
        return [max(0.0, fitted.get(p, mean)) for p in _PROTOCOLS]

    def model(x: np.ndarray) -> npt.NDArray[np.float64]:
        return expect(collective, n, _scaled(system, np.exp(x[0]), overheads(x), why, mode)).time_s

    def residual(x: np.ndarray) -> np.ndarray:
        return np.concatenate([np.log(model(x) / t), 0.05 * np.array([x[0]])])

    k = len(used) if per_protocol else 1
    best = None
    for k0, o0 in ((0.0, system.launch_overhead_us), (np.log(0.5), 5.0), (np.log(0.25), 20.0)):
        res = least_squares(residual, np.array([k0] + [o0] * k, dtype=float), bounds=([-5] + [0] * k, [3] + [1e4] * k))
        if best is None or res.cost < best.cost:
            best = res
    assert best is not None  # three starting points were tried
    k_bw = float(np.exp(best.x[0]))
    overhead = np.round(overheads(best.x), 2)
    fitted = _scaled(system, k_bw, overhead, why, mode)
    err = np.abs(model(best.x) / t - 1)
    return FitResult(
        fitted,
        k_bw,
        level,
        round(float(np.mean(overhead)), 2),
        float(np.sqrt(np.mean(np.log(model(best.x) / t) ** 2))),
        float(np.median(err)),
    )
