"""Requests that choose their mode: `predict` (plain, on a topology, NCCL's own choice) and `simulate` (a
schedule, or one of Blink's micro-benchmarks). Each function takes what was given, as the CLI's options or as
Python keywords (None: not given), refuses the options of one mode given to another, and returns the spec of the
mode asked for; api.predict and api.simulate dispatch on its type. The CLI and a Python caller meet the same
refusals."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from collperf.errors import UsageError, did_you_mean
from collperf.model.hardware.catalogue import CATALOGUE
from collperf.spec.model import CrossoverSpec, NcclCrossoverSpec, NcclPredictSpec, PredictSpec
from collperf.spec.network import NCCL_VIEW, HardwareSpec, NetworkSpec
from collperf.spec.patterns import PatternSpec
from collperf.spec.topology import SimulateSpec, TopologyPredictSpec, predict_network

_PREDICT_KEYS = (
    {f.name for f in fields(PredictSpec)} | {f.name for f in fields(TopologyPredictSpec)} | set(NCCL_VIEW) | {"nccl"}
) - {"expected"}
_SIMULATE_KEYS = {f.name for f in fields(SimulateSpec)} | {f.name for f in fields(PatternSpec)} | {"timeline"}
# what a pattern sets itself, with the option that gives it
_PATTERN_SETS = (
    ("collective", "COLLECTIVE"),
    ("algorithm", "-A"),
    ("root", "--root"),
    ("ranks", "--ranks"),
    ("timeline", "--timeline"),
)
_PATTERN_ONLY = ("gpus", "center", "successor", "source")


def _given(command: str, given: dict[str, Any], known: set[str]) -> dict[str, Any]:
    unknown = sorted(set(given) - known)
    if unknown:
        raise UsageError(
            f"{command}: unknown option {unknown[0]!r}: {did_you_mean(unknown[0], sorted(known))}"
            f"expected some of {', '.join(sorted(known))}"
        )
    return {k: v for k, v in given.items() if v is not None}


def _only(spec_class: type, given: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(spec_class)}
    return {k: v for k, v in given.items() if k in names}


def predict_request(**given: Any) -> PredictSpec | TopologyPredictSpec | NcclPredictSpec:
    """`collperf predict`'s spec: `topology` given, a TopologyPredictSpec (Blink's packed trees or the closed
    forms on a switch's link); `nccl` True, an NcclPredictSpec (NCCL's own choice on a catalogue system, with
    what NCCL sees: cpu_arch, nic_path, proto, algo); otherwise a PredictSpec, with NCCL's expected band where the
    network names a catalogue system. `ranks` is a rank count, or with `topology` a group of GPUs ('0,1,2')."""
    g = _given("predict", given, _PREDICT_KEYS)
    nccl = bool(g.pop("nccl", False))
    view = {k: g.pop(k) for k in NCCL_VIEW if k in g}
    if view and not nccl:
        raise UsageError(
            f"--{next(iter(view)).replace('_', '-')} describes what NCCL sees: it applies to predict "
            "--nccl; add --nccl (or drop it)"
        )
    network = g.pop("network", None) or NetworkSpec()
    if g.get("topology") is not None:
        if nccl:
            raise UsageError("--nccl prices NCCL on a catalogue system (--cluster): drop --topology or --nccl")
        if "sharp" in g:
            raise UsageError(
                f"--{'' if g['sharp'] else 'no-'}sharp describes a catalogue system's InfiniBand "
                "switches (--cluster): drop --topology or --sharp"
            )
        return TopologyPredictSpec(**_only(TopologyPredictSpec, g), network=network)
    network = predict_network(
        network,
        g.pop("ranks", None),
        g.pop("root", None),
        g.pop("hybrid", False),
        g.pop("t_dpa", "0"),
        g.pop("transit", "devices"),
    )
    if nccl:
        hardware = _nccl_hardware("predict", network, g.get("sharp"), view)
        return NcclPredictSpec(**_only(NcclPredictSpec, g), ranks=network.ranks, hardware=hardware)
    return PredictSpec(**_only(PredictSpec, g), network=network, expected=network.cluster is not None)


def _nccl_hardware(command: str, network: NetworkSpec, sharp: bool | None, view: dict[str, Any]) -> HardwareSpec:
    """The catalogue system NCCL is priced on, from the network options and what NCCL sees of it."""
    if network.cluster is None and network.profile is None:
        raise UsageError(
            f"{command} --nccl needs a system: --cluster NAME (with --nodes), one of the catalogue's "
            f"{', '.join(CATALOGUE)} (collperf systems lists them)"
        )
    return replace(HardwareSpec.from_network(network), sharp=sharp, **view)


_CROSSOVER_KEYS = {f.name for f in fields(CrossoverSpec)} | set(NCCL_VIEW) | {"nccl", "sharp"}
# the options that pick among collperf's algorithms, with their defaults: not NCCL's choice
_OURS = (
    ("-A", "algorithm", "all"),
    ("--intra-algorithm", "intra_algorithm", "best"),
    ("--inter-algorithm", "inter_algorithm", "best"),
)


def crossover_request(**given: Any) -> CrossoverSpec | NcclCrossoverSpec:
    """`collperf crossover`'s spec: `nccl` True, an NcclCrossoverSpec (where NCCL's own (algorithm, protocol)
    changes on a catalogue system, with what NCCL sees); otherwise a CrossoverSpec (where the best of collperf's
    algorithms changes). The options of one mode given to the other are refused."""
    g = _given("crossover", given, _CROSSOVER_KEYS)
    nccl = bool(g.pop("nccl", False))
    view = {k: g.pop(k) for k in NCCL_VIEW if k in g}
    sharp = g.pop("sharp", None)
    network = g.pop("network", None) or NetworkSpec()
    if not nccl:
        if view:
            raise UsageError(
                f"--{next(iter(view)).replace('_', '-')} describes what NCCL sees: it applies to "
                "crossover --nccl; add --nccl (or drop it)"
            )
        if sharp is not None:
            raise UsageError(
                f"--{'' if sharp else 'no-'}sharp describes a catalogue system's InfiniBand switches, "
                "which NCCL prices: add --nccl (our algorithms reduce on the GPUs)"
            )
        return CrossoverSpec(**g, network=network.resolve())
    ours = [flag for flag, name, default in _OURS if g.get(name, default) != default]
    if ours:
        raise UsageError(
            f"{', '.join(ours)}: these pick among our algorithms, while crossover --nccl gives NCCL's "
            "own choice; drop them (restrict NCCL with --algo/--proto, as NCCL_ALGO/NCCL_PROTO do)"
        )
    return NcclCrossoverSpec(
        collective=g["collective"],
        min_size=g.get("min_size", "1"),
        max_size=g.get("max_size", "16G"),
        hardware=_nccl_hardware("crossover", network, sharp, view),
        ranks=network.ranks,
    )


def simulate_request(**given: Any) -> SimulateSpec | PatternSpec:
    """`collperf simulate`'s spec: `pattern` given, a PatternSpec (one of Blink's micro-benchmarks, which sets its
    own collective, schedule, root and ranks; sizes 1M,16M,256M and 32 segments unless given); otherwise a
    SimulateSpec, which needs the collective and the algorithm (size 1G unless given). `timeline`: the file a
    schedule's per-step timeline is drawn to (a pattern draws none)."""
    g = _given("simulate", given, _SIMULATE_KEYS)
    pattern = g.get("pattern")
    if pattern is not None:
        sets = [option for name, option in _PATTERN_SETS if name in g]
        if sets:
            raise UsageError(f"--pattern {pattern} sets its own schedule: drop {', '.join(sets)}")
        return PatternSpec(**{"size": "1M,16M,256M", "segments": 32, **_only(PatternSpec, g)})
    if "collective" not in g or "algorithm" not in g:
        raise UsageError("give a COLLECTIVE and -A ALGORITHM (or --pattern NAME)")
    if any(name in g for name in _PATTERN_ONLY):
        raise UsageError("--gpus, --center, --successor and --source describe a --pattern: add --pattern NAME")
    return SimulateSpec(**{"size": "1G", **_only(SimulateSpec, g)})
