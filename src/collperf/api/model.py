"""The model: predicted times and bandwidths of the algorithms (predict, predict_topology), the sizes
where the best algorithm changes (crossover; NCCL's own switch points: crossover_nccl), the algorithms a
collective has (algorithms), and -A auto's measured rule on two timed series (paired_ratio, confirmation)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from collperf import topology as topologies
from collperf.api.common import as_spec, resolved_network, with_aliases
from collperf.api.logs import predict_nccl
from collperf.api.results import Algorithms, Crossover, NcclCrossover, Predictions
from collperf.blink import reports as blink_reports, runs as packed_runs
from collperf.blink.algorithms import BLINK
from collperf.collectives import get_collective
from collperf.expect.expectation import expected_bands as _expected_bands
from collperf.expect.resolve import assume
from collperf.errors import UsageError
from collperf.model.algorithms import ALGORITHMS, algorithms_for
from collperf.model.algorithms.modes import mode_of
from collperf.model.auto.confirm import timings, verdict
from collperf.model.network import Link, Network
from collperf.model.nccl.switches import switch_points
from collperf.model.predict import predict as _predict
from collperf.model.auto.select import crossovers
from collperf.model.hardware.gpus import GPUS
from collperf.model.hardware.catalogue import ALIASES, CATALOGUE
from collperf.spec import (
    CrossoverSpec,
    HardwareSpec,
    NcclCrossoverSpec,
    NcclPredictSpec,
    PredictSpec,
    sizes,
    TopologyPredictSpec,
)


def predict(spec: PredictSpec | TopologyPredictSpec | NcclPredictSpec | str, size=None, network=None, **options):
    """`collperf predict`: one Prediction per size (spec.size: '1M,64M' or a list of sizes); with
    spec.expected, NCCL's expected band per size on the catalogue system beside them. Give a PredictSpec,
    or (the convenience) the collective, size and network with the other fields as keywords:
    predict("allreduce", "1M,1G", net, algorithm="ring"). The other modes' specs (spec.predict_request makes
    the one asked for) go where they belong: a TopologyPredictSpec to predict_topology, an NcclPredictSpec to
    predict_nccl."""
    if isinstance(spec, TopologyPredictSpec):
        return predict_topology(spec)
    if isinstance(spec, NcclPredictSpec):
        return predict_nccl(spec)
    spec = as_spec(PredictSpec, spec, options, collective=spec, size=size, network=network)
    rows = _predict(
        spec.collective,
        spec.sizes_bytes,
        resolved_network(spec.network),
        with_aliases(spec.collective, spec.algorithm),
        spec.intra_algorithm,
        spec.inter_algorithm,
        spec.segments,
    )
    if not spec.expected:
        return Predictions(rows)
    assumed, bands = expected_bands(spec.collective, spec.sizes_bytes, spec.network, sharp=spec.sharp)
    return Predictions(rows, assumed, bands, sharp=bool(assumed.system.collnet))


@dataclass
class TopologyPrediction:
    """`collperf predict --topology`: Blink's packed trees (`blink`: blink.reports.BlinkPrediction per size), or
    the closed forms (`predictions`, as `predict` gives them) on the link of a switch topology's group."""

    topology: str
    ranks: list
    algorithm: str
    blink: list | None = None
    link: Link | None = None  # for the closed forms
    predictions: list | None = None

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"topology": self.topology, "ranks": self.ranks, "algorithm": self.algorithm}
        if self.blink is not None:
            doc["sizes"] = [b.to_json() for b in self.blink]
        else:
            assert self.link is not None and self.predictions is not None  # the closed forms' result
            doc["link"] = {
                "latency_s": self.link.latency_s,
                "bandwidth_Bps": self.link.bandwidth_Bps,
                "name": self.link.name,
            }
            doc["sizes"] = [p.to_json() for p in self.predictions]
        return doc


def predict_topology(spec: TopologyPredictSpec) -> TopologyPrediction:
    """`collperf predict --topology`: -A blink prices the packed trees on the group (with spec.hybrid, the
    NVLink + PCIe split of the appendix's equation 8); any other algorithm (single-hop, ring, all, ...)
    takes the closed forms on the link every pair of the group sees through a switch (dgx2, switch:P)."""
    topo = topologies.parse(spec.topology, spec.link)
    if mode_of(spec.algorithm) is BLINK:
        rows = blink_reports.predict_blink(spec, topo)
        return TopologyPrediction(
            topo.name, rows[0].ranks if rows else packed_runs.group_of(topo, spec.ranks), BLINK.name, blink=rows
        )
    group, link = blink_reports.switch_link(topo, spec.ranks)
    rows = predict(
        PredictSpec(
            collective=spec.collective,
            size=spec.sizes_bytes,
            network=Network.of(link, len(group)),
            algorithm=spec.algorithm,
        )
    )
    return TopologyPrediction(topo.name, group, spec.algorithm, link=link, predictions=rows)


def crossover(spec: CrossoverSpec | str, network=None, **options) -> Crossover:
    """`collperf crossover`: where the best algorithm changes between spec.min_size and spec.max_size: the
    crossovers and the size ranges each with its best algorithm (the result unpacks as that pair). Give a
    CrossoverSpec, or (the convenience) the collective and network with the other fields as keywords."""
    spec = as_spec(CrossoverSpec, spec, options, collective=spec, network=network)
    net = resolved_network(spec.network)
    found, ranges = crossovers(
        spec.collective,
        net,
        spec.min_size_bytes,
        spec.max_size_bytes,
        algorithm=spec.algorithm,
        intra_algorithm=spec.intra_algorithm,
        inter_algorithm=spec.inter_algorithm,
    )
    return Crossover(spec.collective, net, found, ranges)


def crossover_nccl(spec: NcclCrossoverSpec | None = None, **options) -> NcclCrossover:
    """`collperf crossover --nccl`: the sizes between spec.min_size and spec.max_size where NCCL's own choice of
    (algorithm, protocol) changes on a catalogue system (spec.hardware.cluster, or .gpu) sized to
    spec.ranks/hardware.nodes, exact to the byte for NCCL's model (model/nccl/switches.py), and the ranges of each
    choice. The result unpacks as (Assumed, SwitchPoints). Give an NcclCrossoverSpec, or its fields as keywords."""
    spec = as_spec(NcclCrossoverSpec, spec, options)
    assumed = assume(None, spec.hardware, spec.ranks)
    if assumed.system is None:
        raise UsageError(f"crossover --nccl: {assumed.why_none}")
    return NcclCrossover(
        assumed, switch_points(spec.collective, assumed.system, spec.min_size_bytes, spec.max_size_bytes)
    )


def algorithms(collective: str | None = None) -> Algorithms:
    """`collperf algorithms`: the registry, optionally for one collective (its only option)."""
    return Algorithms(ALGORITHMS if collective is None else algorithms_for(collective))


def expected_bands(spec: PredictSpec | str, size=None, net=None, sharp: bool | None = None) -> tuple:
    """`collperf predict --cluster X`: what NCCL on the catalogue system is expected to take per size (the band
    of healthy public runs of its fabric class around NCCL's model time, the bound, peers): the expectation
    `diagnose` judges a measurement against. Give a PredictSpec (its collective, sizes and network), or the
    collective, sizes and a NetworkSpec; `sharp` (PredictSpec.sharp) sets SHARP on or off as diagnose's --sharp
    does (None: the catalogue's). Returns (Assumed, [ExpectedBand per size])."""
    if isinstance(spec, PredictSpec):
        if size is not None or net is not None or sharp is not None:
            raise UsageError("expected_bands: give a PredictSpec alone, or the collective, size and network")
        collective, size, net, sharp = spec.collective, spec.sizes_bytes, spec.network, spec.sharp
    else:
        collective = spec
    # the same HardwareSpec diagnose builds from these flags: one system, one expectation for both commands
    assumed = assume(None, replace(HardwareSpec.from_network(net), sharp=sharp), net.ranks)
    if assumed.system is None:
        raise UsageError(f"predict --cluster: {assumed.why_none}")
    return assumed, _expected_bands(get_collective(collective).name, sizes(size), assumed)


def systems() -> tuple[list, dict]:
    """`collperf systems`: the hardware catalogue (every System, each value with its data sheet) and the
    aliases --cluster also takes."""
    return list(CATALOGUE.values()), dict(ALIASES)


def gpu_parts() -> list:
    """`collperf systems --gpus`: the GPU parts table (model/hardware/gpus.py), each figure with its data sheet."""
    return list(GPUS)


def confirmation(ours_s, builtin_s) -> dict:
    """What -A auto's confirmation decides from ours and the built-in timed side by side, one pair of seconds
    per round (docs/auto.md): {ours_us, builtin_us, paired_ratio, ratio_low, ratio_high, rounds} with
    paired_ratio ours / built-in (< 1: ours faster), and verdict "ours", "builtin" or "unsure" (more rounds
    decide). paired_ratio(a_s, b_s) alone gives the median of a / b per round with its 90 % bounds."""
    seen = timings(ours_s, builtin_s)
    return {**seen, "verdict": verdict(seen)}
