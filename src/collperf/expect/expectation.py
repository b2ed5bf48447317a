"""What a measurement is compared with: the expected band (NCCL's model and the bound on the assumed system,
calibrated on healthy public runs of its fabric class: expect/band.py) and the physical bound (model/bounds
two-level bound, or a flat --peak)."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from collperf import units
from collperf.collectives import busbw_factor
from collperf.expect.peers import Peers, calibration, peers
from collperf.expect.resolve import Assumed
from collperf.expect.wording import merge_counts
from collperf.errors import UsageError
from collperf.ingest.validate import MAX_SIZE_BYTES
from collperf.expect.band import Calibration, band
from collperf.model.nccl import expect, system_bound, system_bound_latency_s, tuning_model_prices
from collperf.model.hardware.system import System
from collperf.model.nccl.transport import host_staged_gen


@dataclass
class Expectation:
    """What a row is compared with: expected and bound per size, and where they come from."""

    expected_s: np.ndarray | None
    regime: np.ndarray | None
    choice: list[str]
    runner_up: list[str]
    bound_s: np.ndarray | None
    binding: list[str]
    peak_GBps: float | None
    expected_from: str
    bound_from: str
    model_s: np.ndarray | None = None  # NCCL's own model time (expected_s is the calibrated typical time)
    low_s: np.ndarray | None = None  # the band of healthy public runs: 10th percentile of their time
    high_s: np.ndarray | None = None  # ... and 90th (slower than this is "slower than expected")
    band_from: list[str] = field(default_factory=list)  # per size: what the band was calibrated on
    band_logs: list[int] = field(default_factory=list)  # per size: how many public runs the band rests on
    band_summary: str = ""  # band_from said once, each count as its range over the sizes
    fabric: str = ""
    bound_latency_s: float = 0.0  # the bound's latency term (bound_s is bandwidth alone): one message's latency
    band_borrowed: list[bool] = field(default_factory=list)  # per size: the band is other fabric classes'
    band_holds: list[bool] = field(default_factory=list)  # per size: the band's runs speak for this collective
    model_label: str = "NCCL's model alone"  # what model_s is
    band_bound_s: np.ndarray | None = None  # the bound the band's typical time is built on (bound_s but where NCCL's
    # path is slower than the link: host-staged traffic, band_bound)


def sharp_lowers_bound(collective: str, system: System | None) -> bool:
    """Whether in-network reduction can lower this collective's bound on this system: the InfiniBand switches
    reduce an allreduce between nodes (model/bounds.py node_network_coefficient); every other collective moves
    the same bytes per node with or without them."""
    return system is not None and system.nodes > 1 and system.fabric == "ib" and collective == "allreduce"


def expectation(
    collective: str,
    sizes: npt.ArrayLike,
    assumed: Assumed,
    peak_Bps: float | None = None,
    factor: float | None = None,
    bound_system: System | None = None,
    bands: Calibration | None = None,
) -> Expectation:
    """The expected band and the bound on the assumed system: from NCCL's model time and the bound, as healthy
    public runs of the system's fabric class achieve relative to them (`bands`: a calibration table, default the
    committed one; {} for NCCL's model alone). A flat bound from `peak_Bps` if given; `bound_system`:
    another system for the bound, e.g. the unfitted hardware when the expectation is a fit."""
    try:
        n = np.asarray(sizes, dtype=float)
    except OverflowError:  # an int past float's range: no buffer is that large
        raise UsageError(
            f"a size beyond 1.8e308 bytes cannot be judged: expected at most {MAX_SIZE_BYTES} bytes"
        ) from None
    if len(n) and not (np.all(np.isfinite(n)) and n.min() >= 0 and n.max() <= MAX_SIZE_BYTES):
        raise UsageError(
            f"sizes must be finite, >= 0 and at most {MAX_SIZE_BYTES} bytes; got "
            f"{n[~(np.isfinite(n) & (n >= 0) & (n <= MAX_SIZE_BYTES))][0]:g}"
        )
    system = assumed.system
    expected = regime = None
    choice = runner = [""] * len(n)
    expected_from = f"none: {assumed.why_none}"
    if system is not None and system.ranks < 2:
        expected_from = "none: one rank, no collective to model"
        system = None
    if system is not None and len(n):
        pred = expect(collective, n, system)
        expected, regime = pred.time_s, pred.regime
        choice = pred.choice
        runner = [f"{a}/{p}" if a != "-" else "" for a, p in zip(pred.runner_up_algorithm, pred.runner_up_protocol)]
        fitted = system.provenance.get("launch_overhead_us", "")
        expected_from = (
            f"NCCL's model on {system.name} ({fitted})"
            if fitted.startswith("fitted")
            else f"NCCL's model (algorithm/protocol choice and time) on {system.name}"
        )
        if not tuning_model_prices(collective):
            expected_from = f"{P2P_PRICE} on {system.name} ({no_tuning_model(collective)})"
    bound = None
    binding = [""] * len(n)
    peak_GBps = None
    bound_from = "none: no system assumed and no --peak"
    bound_latency = 0.0  # a flat --peak has none
    if peak_Bps is not None:
        f = factor if factor else busbw_factor(collective, system.ranks) if system else 1.0
        bound = n * f / peak_Bps
        binding = ["peak"] * len(n)
        peak_GBps = peak_Bps / 1e9
        bound_from = f"given: --peak {units.format_bandwidth(peak_Bps)} per rank (busbw cannot exceed it)"
    elif (bound_system or system) is not None and len(n):
        system = bound_system or system
        assert system is not None  # the branch's condition
        b = system_bound(collective, n, system)
        bound, binding = b.time_s, b.binding
        peak = b.peak_busbw_Bps
        peak_GBps = peak / 1e9 if np.isfinite(peak) else None
        sharp = system.collnet and sharp_lowers_bound(collective, system)
        bound_from = _bound_from(system, sharp)
        bound_latency = system_bound_latency_s(collective, system)
    ex = Expectation(
        expected,
        regime,
        list(choice),
        list(runner),
        bound,
        list(binding),
        peak_GBps,
        expected_from,
        bound_from,
        model_s=expected,
        bound_latency_s=bound_latency,
    )
    ex.band_bound_s = band_bound(collective, n, bound_system or system, bound) if peak_Bps is None else bound
    ex.model_label = model_note(collective) or ex.model_label
    is_fit = assumed.system is not None and assumed.system.provenance.get("launch_overhead_us", "").startswith("fitted")
    if expected is not None and not is_fit:
        assert assumed.system is not None  # NCCL's model priced the sizes on it
        _calibrate(ex, n, assumed.system, calibration()["bands"] if bands is None else bands, collective)
    return ex


# what alltoall and send/recv are priced at (model/nccl/expected.py p2p_rates): the links as NCCL's topology sees
# them and a fit scaled them, not a figure of NCCL's tuning model
P2P_PRICE = "point-to-point at the links' rates as NCCL sees them"


def no_tuning_model(collective: str) -> str:
    return f"NCCL's tuning model has no {collective}: NCCL runs it as point-to-point sends and receives"


def model_note(collective: str) -> str:
    """What the model time is where NCCL's tuning model does not price the collective ('' where it does)."""
    return "" if tuning_model_prices(collective) else f"{P2P_PRICE} ({no_tuning_model(collective)})"


def _bound_from(system: System, sharp: bool) -> str:
    """What the bound is on `system`: on several nodes the larger of the network and intra-node bounds; one node
    uses no network, so its bound is the intra-node one alone and names no NIC."""
    intra = (
        f"the intra-node bound{' with in-switch reduction (NVLS)' if system.nvls else ''}"
        f"{'; host bridge (no P2P)' if system.host_bridge else ''}"
    )
    if system.nodes <= 1:
        return f"{intra} on {system.name} (one node: no network)"
    return (
        f"two-level bound on {system.name}: the larger of the node-level network bound "
        f"({system.nics_per_node}x {system.nic_Gbps:g} Gb/s per node"
        f"{', in-network reduction (SHARP)' if sharp else ''}) and {intra}"
    )


def band_bound(collective: str, n: np.ndarray, system: System | None, bound: np.ndarray | None) -> np.ndarray | None:
    """The bound a band's typical time is built on: the system's own, except where the GPUs exchange data through
    host memory at a PCIe generation below their link's, what NCCL's SHM path gets on a card whose driver forbids
    P2P (model/nccl/transport.py host_staged_gen): there the bound at that generation, so that a Gen4 or Gen5
    GeForce card through host memory is expected at what such runs reach, while its verdict's bound stays its own
    link's."""
    if system is None or bound is None or not system.host_bridge or (gen := host_staged_gen(system)) >= system.pcie_gen:
        return bound
    staged: np.ndarray = system_bound(collective, n, system.with_("what NCCL's SHM path gets", pcie_gen=gen)).time_s
    return staged


def _calibrate(ex: Expectation, n: np.ndarray, system: System, bands: Calibration, collective: str) -> None:
    """Replace NCCL's model time by the calibrated band where the table covers the size. The band is the fabric
    class's, whatever collective its runs measured: where none of them measured this one, its provenance says so,
    and where they do not speak for it either (`holds`) the verdict calls a run slower from it only from further,
    as from a borrowed band (band_rule)."""
    ex.fabric = system.fabric_class
    if not bands:
        return
    assert ex.model_s is not None  # calibrated only where NCCL's model priced the sizes
    b = band(n, ex.model_s, ex.fabric, bands, floor_s=ex.band_bound_s, gpus_per_node=system.gpus_per_node)
    ok = np.isfinite(b.typical_s)
    if not ok.any():
        return
    ex.expected_s = np.where(ok, b.typical_s, ex.model_s)
    ex.low_s = np.where(ok, b.low_s, np.nan)
    ex.high_s = np.where(ok, b.high_s, np.nan)
    # a table that does not record its runs' collectives (one written before it did) is taken to hold them
    ex.band_holds = [holds(collective, held) for held in b.collectives] or [True] * n.size
    ex.band_borrowed = list(b.borrowed) or [False] * n.size
    ex.band_from = [_among(why, collective, held) for why, held in zip(b.provenance, b.collectives or [()] * n.size)]
    ex.band_logs = b.logs
    ex.band_summary = merge_counts(ex.band_from, n)
    ex.expected_from = (
        f"{ex.expected_from}; the band: the 10th-90th percentile of healthy public runs' time, "
        f"{ex.band_summary}" + (f"; {b.layout}" if b.layout else "")
    )


def _among(why: str, collective: str, held: Collection[str]) -> str:
    """The band's provenance, saying so where its runs did not measure this collective (and, where they still speak
    for it, why)."""
    if not why.startswith("calibrated") or not held or collective in held:
        return why
    if holds(collective, held):
        runs = ", ".join(sorted(held))
        return f"{why}; no {collective} among them: their {runs} runs judge it through NCCL's model"
    return f"{why}; no {collective} among them"


def holds(collective: str, held: Collection[str]) -> bool:
    """Whether a band whose runs measured the collectives `held` speaks for `collective`. The band is measured /
    NCCL's model time (and the bound), which carries over between the collectives NCCL's tuning model prices: an
    all-reduce band judges a reduce-scatter. AlltoAll and send/recv have no tuning model (their time is the links'
    rates, p2p_rates): only runs of their own say what they reach."""
    if not held or collective in held:
        return True
    return tuning_model_prices(collective) and any(tuning_model_prices(c) for c in held)


@dataclass
class ExpectedBand:
    """`predict --cluster`: per size, what NCCL on the system is expected to take (the calibrated band and
    NCCL's own model time), the bound, and public runs like it."""

    size: int
    low_s: float | None
    typical_s: float
    high_s: float | None
    model_s: float
    bound_s: float | None
    choice: str
    band_from: str
    busbw_factor: float
    peers: Peers | None = None
    band_summary: str = ""  # band_from of every size asked, said once (the same on each ExpectedBand)
    binding: str = ""  # which resource sets the bound: network, intra-node, host bridge
    model_note: str = ""  # what model_s is where it is not NCCL's model (alltoall, send/recv: the links' rates)

    def busbw_GBps(self, time_s: float | None) -> float | None:
        return self.size * self.busbw_factor / time_s / 1e9 if time_s else None

    def to_json(self) -> dict[str, Any]:
        return {
            "size_bytes": self.size,
            "expected_low_s": self.low_s,
            "expected_s": self.typical_s,
            "expected_high_s": self.high_s,
            "nccl_model_s": self.model_s,
            "bound_s": self.bound_s,
            "binding": self.binding,
            "nccl_choice": self.choice,
            "band_from": self.band_from,
            "model_note": self.model_note,
            "expected_busbw_GBps": [self.busbw_GBps(self.high_s), self.busbw_GBps(self.low_s)],
            "peers": self.peers.to_json() if self.peers else None,
        }


def expected_bands(
    collective: str, sizes: Iterable[float], assumed: Assumed, peer_list: list[dict[str, Any]] | None = None
) -> list[ExpectedBand]:
    """The same expectation diagnose judges a measurement against, for sizes not yet measured."""
    n = [int(x) for x in sizes]
    ex = expectation(collective, n, assumed)
    if ex.expected_s is None:  # nothing to expect (one rank: no data moves); the prediction's own note says so
        return []
    # an expected time is priced on a system with a model time (expectation)
    assert assumed.system is not None and ex.model_s is not None
    factor = busbw_factor(collective, assumed.system.ranks)

    def at(values: np.ndarray | None, i: int) -> float | None:
        return float(values[i]) if values is not None and np.isfinite(values[i]) else None

    return [
        ExpectedBand(
            size,
            at(ex.low_s, i),
            float(ex.expected_s[i]),
            at(ex.high_s, i),
            float(ex.model_s[i]),
            at(ex.bound_s, i),
            ex.choice[i],
            ex.band_from[i] if ex.band_from else ex.expected_from,
            factor,
            peers(collective, assumed.system, size, None, peer_list),
            ex.band_summary or ex.expected_from,
            ex.binding[i],
            model_note(collective),
        )
        for i, size in enumerate(n)
    ]
