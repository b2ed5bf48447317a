"""NCCL tuner rules from NCCL's own selection model (model/nccl) instead of measured logs.

Every enabled (algorithm, protocol) cell of NCCL's cost table (NCCL 2.30
src/graph/tuning.cc) is a curve `lat + nBytes / (1000 bw)` on the hardware the user describes; the rules follow the fastest
curve, with a boundary at every byte where the fastest changes (nccl_tuner.envelope: a geometric grid plus
the ring plateau's step, then bisection). Each rule's channel count is the channel count of the graph NCCL
prices that algorithm with (graphs.py), so no rule carries -1.

NCCL's default choice is the argmin of the same table on the hardware NCCL *detects*: the catalogue system
with the node count and NIC count, but the catalogue's link rates. Link options (--nic-rate,
--gpu-link-rate) describe what the links really deliver; the rules are the argmin on those rates and the
comments give the time saved, on those rates, over the choice NCCL makes on the catalogue ones. Without link
options the two are the same system and every gain is +0.0 %: the rules then pin NCCL's own choice with an
explicit channel count.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from collperf.export.nccl_tuner import COLLECTIVES, Choice
from collperf.model.nccl.channels import channels_run, comm_channels
from collperf.model.nccl.tuning import TuningTable, entry_times_us, tuning_table

# model/nccl names -> the example plugin's names (NCCL 2.30 plugins/tuner/example)
PLUGIN_ALGORITHM = {"nvls-tree": "nvls_tree", "collnet-direct": "collnet_direct", "collnet-chain": "collnet_chain"}


def plugin_names(algorithm: str, protocol: str) -> tuple[str, str]:
    return PLUGIN_ALGORITHM.get(algorithm, algorithm), protocol.lower()


@dataclass
class _Table:
    """One function's cost table on one system, all cells priced at once per size (cached: the envelope's
    bisection asks each size once per option)."""

    table: TuningTable
    system: object
    cache: dict = field(default_factory=dict)

    def times_s(self, size: float) -> np.ndarray:
        if size not in self.cache:
            lat, bw = entry_times_us(self.table, self.system, np.array([float(size)]))
            self.cache[size] = (lat + bw)[:, 0] * 1e-6  # NaN where the cell is disabled
        return self.cache[size]


@dataclass
class CellCurve:
    """One cell's model time; quacks like fit.Fit (predict) for nccl_tuner.Choice."""

    costs: _Table
    index: int
    breakpoints: tuple = ()

    def predict(self, size: float) -> float:
        return float(self.costs.times_s(size)[self.index])


@dataclass
class DefaultCurve:
    """The time, on the real rates, of the cell NCCL picks on the rates it detects."""

    real: _Table
    believed: _Table

    def choice(self, size: float) -> int:
        t = self.believed.times_s(size)
        return int(np.argmin(np.where(np.isnan(t), np.inf, t)))  # first cell wins ties, as NCCL's loop

    def predict(self, size: float) -> float:
        t = self.real.times_s(size)[self.choice(size)]
        return float(t) if np.isfinite(t) else float(self.believed.times_s(size)[self.choice(size)])


def _plateau_bytes(system, table: TuningTable) -> tuple:
    """The size where ring/Simple allreduce's latency steps up by 1.4 (tuning.cc "Plateau effect of ring"):
    nBytes / (comm->nChannels nRanks) >= 64. A grid could step over it; the envelope gets it as a grid point."""
    if table.collective != "allreduce" or system.nodes <= 1:
        return ()
    return (64 * comm_channels(system, table.graphs) * system.ranks,)


def choices(system, believed=None, collectives=COLLECTIVES, label: str = "NCCL model") -> list[Choice]:
    """A Choice per enabled cell of each function's table on `system`, plus a 'default' Choice priced as
    NCCL's pick on `believed` (default: the same system)."""
    out = []
    for collective in collectives:
        table = tuning_table(collective, system)
        real = _Table(table, system)
        believed_table = real if believed is None else _Table(tuning_table(collective, believed), believed)
        if not table.enabled():
            continue  # nothing NCCL could run (build() says which collectives have rules)
        breaks = _plateau_bytes(system, table)
        for i, (a, p) in enumerate(TuningTable.entries()):
            if table.bandwidth_GBps[(a, p)] <= 0:
                continue
            algorithm, protocol = plugin_names(a, p)
            channels = channels_run(a, system, table.graphs)
            out.append(
                Choice(collective, algorithm, protocol, channels, CellCurve(real, i, breaks), f"{label} cell {a}/{p}")
            )
        out.append(
            Choice(
                collective,
                "default",
                "default",
                None,
                DefaultCurve(real, believed_table),
                f"{label}: NCCL's own choice",
            )
        )
    return out
