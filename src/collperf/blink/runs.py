"""Blink's packed trees for the request layer: the builders `collperf simulate -A blink` (and --hybrid),
`collperf simulate --pattern` and `collperf bench -A blink / --pattern` share, and what bench runs.

Between the API and the pure parts: it checks a group of ranks against its topology, packs trees
(blink/packing.py) and builds the schedules (blink/packed.py, blink/patterns.py); bench_schedules
places them on local ranks and picks the segments per size. What `collperf trees`, `simulate` and
`predict --topology` report (pricing beside NCCL's rings): blink/reports.py.
Source: Wang et al., "Blink: Fast and Generic Collectives for Distributed ML", MLSys 2020, appendix A.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from collperf import topology as topologies
from collperf.blink import model as blink, packed, patterns as P
from collperf.blink.algorithms import BLINK, BLINK_HYBRID
from collperf.blink.packing import pack
from collperf.errors import UsageError
from collperf.model.algorithms.modes import mode_of
from collperf.model.network import Link
from collperf.model.schedule_cost import schedule_cost
from collperf.schedule.arrays import as_arrays
from collperf.simulate import simulate
from collperf.units import format_size

# blink/packed.py's defaults: segments pipelined down each tree, chunks per segment shared by the trees
SEGMENTS = 16
# (fine: a tree's share is rounded to whole chunks, and a link the packing fills overflows by the rounding)
RESOLUTION = {"broadcast": 1024, "reduce": 1024, "allreduce": 1024, "allgather": 256, "reducescatter": 256}
SINGLE_ROOT = ("broadcast", "reduce", "allreduce")
# the bench runs the same builders with the trees' shares rounded to 1/64 of a segment: the executor
# handles every chunk of a message on its own (a view, a contiguity check), and 1024 chunks per segment
# cost it more than gloo's transfers at the sizes a CPU run reaches
BENCH_RESOLUTION = 64


def group_of(topo, ranks, least: int = 2, flag: str = "--ranks") -> list[int]:
    """The group on `topo`: the given ranks (checked against it) or all of its ranks."""
    if ranks is None:
        return list(range(topo.ranks))
    outside = [r for r in ranks if not 0 <= r < topo.ranks]
    if outside:
        raise UsageError(
            f"{flag} {','.join(map(str, ranks))}: rank(s) {', '.join(map(str, outside))} not in topology "
            f"{topo.name} (ranks 0..{topo.ranks - 1})"
        )
    if len(ranks) < least:
        raise UsageError(f"{flag} {','.join(map(str, ranks))}: give at least {least} ranks")
    return list(ranks)


def root_in_group(group: list[int], root) -> int:
    if root is None:
        return group[0]
    if root not in group:
        raise UsageError(f"--root {root} is not one of the ranks {','.join(map(str, group))}: give a rank of the group")
    return root


# --- the builders: collperf simulate -A blink and bench -A blink ---------------------------------


def blink_schedule(
    topo,
    group: list[int],
    coll: str,
    root=None,
    segments: int | None = None,
    transit: str = "devices",
    hybrid_size: float | None = None,
    t_dpa_s: float = 0.0,
    resolution: int | None = None,
    packing=None,
) -> tuple:
    """(schedule in tuple form on the group's local ranks, the group's topology view, notes): Blink's
    packed trees for `coll` on the topology ranks `group` from `root` (a topology rank; default the
    group's first). hybrid_size: the NVLink + PCIe broadcast of that many bytes, split by equation 8.
    resolution: chunks per segment shared by the trees (default RESOLUTION[coll]).
    packing: packing(topo, group, roots, direction=...) -> Packing, the trees' packer (default model.packing.pack
    with `transit`; a topology testbed passes routed_packing.pack_on_routes); not for the hybrid split.
    What `collperf simulate -A blink` simulates and `collperf bench -A blink` runs."""
    if coll not in RESOLUTION:
        raise UsageError(f"-A blink builds {', '.join(RESOLUTION)}; not {coll}")
    k = segments or SEGMENTS
    if hybrid_size is not None:
        if coll != "broadcast":
            raise UsageError(f"the hybrid NVLink + PCIe split is a broadcast; not {coll}")
        h = blink.hybrid_broadcast(topo, group, root_in_group(group, root), hybrid_size, t_dpa_s)
        share = h.pcie_bytes / hybrid_size if hybrid_size else 0.0
        res = max(resolution or RESOLUTION[coll], 2 * (len(h.nvlink.trees) + len(h.pcie.trees)))
        s = packed.hybrid_broadcast(h.nvlink, h.pcie, share, k, res)
        notes = [
            (
                f"hybrid split (equation 8): {100 * share:.1f} % over PCIe trees ({h.pcie.rate_Bps / 1e9:.4g} "
                f"GB/s), the rest over NVLink trees ({h.nvlink_only_Bps / 1e9:.4g} GB/s); "
                f"model time {h.time_s * 1e3:.4g} ms with T_dpa {t_dpa_s * 1e3:g} ms"
            )
        ]
        if t_dpa_s:
            notes.append("the simulation does not pay T_dpa (the PCIe trees start at once)")
        return s, h.nvlink.topology, notes
    if packing is None:

        def packing(t, g, roots, direction="down"):
            return pack(t, g, roots, transit=transit, direction=direction)

    if coll in SINGLE_ROOT:
        pk = packing(topo, group, [root_in_group(group, root)])
    else:
        if root is not None:
            raise UsageError(f"--root: every rank is a root of {coll}; drop --root")
        pk = packing(topo, group, group, direction="down" if coll == "allgather" else "up")
    res = max(resolution or RESOLUTION[coll], max(len(pk.trees_of(r)) for r in pk.roots))
    build = {
        "broadcast": packed.broadcast,
        "reduce": packed.reduce,
        "allreduce": packed.allreduce,
        "allgather": packed.allgather,
        "reducescatter": packed.reducescatter,
    }[coll]
    s = build(pk, k, res)
    notes = [
        (
            f"{len(pk.trees)} packed trees on ranks {','.join(map(str, group))}, {pk.rate_Bps / 1e9:.4g} GB/s per "
            f"root (max-flow bound {pk.bound_Bps / 1e9:.4g} GB/s); {k} segments"
        )
    ]
    return s, pk.topology, notes


# --- the pattern builder: collperf simulate --pattern and bench --pattern ------------------------------


def _dgx1v_default(topo, value, default, flag: str, pattern: str):
    if value is not None:
        return value
    if topo.name != "dgx1v":
        raise UsageError(f"{pattern} on {topo.name}: give {flag} (defaults are the appendix's GPUs on dgx1v)")
    return default


def pattern_schedule(topo, name: str, gpus=None, center=None, successor=None, source=None, segments: int = 32):
    """(schedule on local ranks, the pattern's topology view, roles) of micro-benchmark `name` on
    `topo`; unset GPUs are the appendix's on dgx1v. What `simulate --pattern` simulates and
    `bench --pattern` runs."""
    k = segments
    if name.startswith("chain"):
        chain = group_of(topo, _dgx1v_default(topo, gpus, list(P.DGX1V_CHAIN[:4]), "--gpus", name), 2, "--gpus")
        build = {
            "chain-forward": P.chain_forward,
            "chain-reduce-forward": P.chain_reduce_forward,
            "chain-reduce-broadcast": P.chain_reduce_broadcast,
        }[name]
        sched, sub = build(topo, chain, k)
        roles = {"chain": chain}
    elif name == "fan-out-forward":
        source = _dgx1v_default(topo, source, 5, "--source", name)
        center = _dgx1v_default(topo, center, P.DGX1V_FAN_CENTER, "--center", name)
        successors = group_of(topo, _dgx1v_default(topo, gpus, [0, 6, 7], "--gpus", name), 1, "--gpus")
        group_of(topo, [source, center, *successors], 3, "the fan-out's GPUs")
        sched, sub = P.fan_out_forward(topo, source, center, successors, k)
        roles = {"source": source, "center": center, "successors": successors}
    else:
        sources = group_of(topo, _dgx1v_default(topo, gpus, list(P.DGX1V_FAN_PEERS), "--gpus", name), 1, "--gpus")
        center = _dgx1v_default(topo, center, P.DGX1V_FAN_CENTER, "--center", name)
        successor = _dgx1v_default(topo, successor, P.DGX1V_FAN_SUCCESSOR, "--successor", name)
        group_of(topo, [successor, center, *sources], 3, "the fan-in's GPUs")
        build = P.fan_in_forward if name == "fan-in-forward" else P.fan_in_reduce_forward
        sched, sub = build(topo, sources, center, successor, k)
        roles = {"sources": sources, "center": center, "successor": successor}
    return sched, sub, roles


# --- collperf bench -A blink / --pattern ----------------------------------------------------------------


@dataclass
class BenchPlacement:
    """What `collperf bench` runs for -A blink, blink-hybrid or --pattern: the schedules (keyed by
    (algorithm, size in bytes as the sweep lists it)), on `ranks` local ranks standing for the
    topology's GPUs `gpus` (local rank i is gpus[i])."""

    topology: str
    gpus: list[int]
    ranks: int
    schedules: dict
    roles: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # {algorithm or pattern: {size: segments}} where bench picked them (no --segments); empty when fixed
    segments: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "topology": self.topology,
            "gpus": self.gpus,
            "roles": self.roles,
            "notes": self.notes,
            "segments": {a: {str(n): k for n, k in per.items()} for a, per in self.segments.items()},
        }


def _pattern_gpus(topo, spec, ranks: int | None) -> dict:
    """The pattern's GPUs from --gpus/--center/... or, on dgx1v, the appendix's, cut to `ranks` ranks
    (a chain of `ranks` GPUs; a fan with ranks - 2 sources or successors)."""
    name, fan = spec.pattern, spec.pattern.startswith("fan")
    least = 3 if fan else 2
    if ranks is not None and ranks < least:
        raise UsageError(
            f"--pattern {name} needs at least {least} ranks ({'a source, a center and a successor' if fan else 'a chain of two GPUs'}); "
            f"--ranks {ranks} is too few"
        )
    gpus = spec.gpus
    if gpus is None and ranks is not None and topo.name == "dgx1v":
        defaults = {"chain": list(P.DGX1V_CHAIN), "fan-out-forward": [0, 6, 7]}.get(
            "chain" if not fan else name, list(P.DGX1V_FAN_PEERS)
        )
        wanted = ranks - (2 if fan else 0)
        if wanted > len(defaults):
            raise UsageError(
                f"--pattern {name} on dgx1v's default GPUs takes at most {len(defaults) + (2 if fan else 0)} "
                f"ranks (the appendix's {'fan degree is 1 to 3' if fan else 'chain has 8 GPUs'}); "
                f"--ranks {ranks}: give fewer ranks or the GPUs with --gpus"
            )
        gpus = defaults[:wanted]
    return {"gpus": gpus, "center": spec.center, "successor": spec.successor, "source": spec.source}


# segment counts bench tries per size when --segments is not given (powers of two around the default 16)
SEGMENT_CANDIDATES = (1, 2, 4, 8, 16, 32)


def best_segments(build, sizes, candidates=SEGMENT_CANDIDATES, step_link: Link | None = None) -> dict:
    """Per size (bytes): (segments, schedule, time in s) of the candidate segment count whose schedule is
    fastest at that size; ties go to the fewer segments. build(k) -> (schedule, topology view) is called once
    per candidate. Few segments pay fewer steps (latency terms), more pipeline the trees (bandwidth terms).
    `step_link`: what one step costs on the backend that runs them (a calibrated alpha and bandwidth, gloo's
    per-message work included), each schedule priced step by step on it (model/schedule_cost.py); without
    it, the simulator (rounds mode) on the schedule's topology view (its devices' links)."""
    built = []
    for k in candidates:
        sched, where = build(k)
        built.append((k, sched, as_arrays(sched), where))
    out = {}
    for n in sizes:
        if step_link is not None:
            times = [float(schedule_cost(a, float(n), step_link).total_s[0]) for _, _, a, _ in built]
        else:
            times = [simulate(a, where, float(n), "rounds").time_s for _, _, a, where in built]
        i = min(range(len(times)), key=lambda j: (times[j], j))
        out[n] = (built[i][0], built[i][1], times[i])
    return out


def _segments_note(name: str, chosen: dict, step_link: Link | None = None) -> str:
    """'blink segments per size (the simulator's fastest of 1,2,...; --segments N fixes them): 1 KiB 1, 1 MiB 4'."""
    per = ", ".join(f"{format_size(n)} {k}" for n, (k, _, _) in chosen.items())
    by = (
        "the simulator's"
        if step_link is None
        else f"the fastest on {step_link.latency_s * 1e6:.0f} us + n / {step_link.bandwidth_Bps / 1e9:.3g} GB/s per step"
    )
    return (
        f"{name} segments per size ({by} of {','.join(map(str, SEGMENT_CANDIDATES))}; --segments N fixes them): {per}"
    )


def bench_schedules(spec, world: int | None = None, step_cost=None) -> BenchPlacement:
    """The schedules `collperf bench` runs for a spec.BenchSpec with -A blink / blink-hybrid or --pattern:
    the same builders as `collperf simulate` (blink_schedule, pattern_schedule). Checked here, before any
    process starts: GPUs in the topology, one GPU per rank, enough ranks for the pattern. `world`: the rank
    count of the run where the spec gives none (torchrun's). step_cost(ranks) -> Link or None: what a step
    costs on the backend that will run them (api/runs.py: a calibration of local gloo ranks); the segments
    per size are chosen on it (best_segments), else on the topology's links."""
    topo = topologies.parse(spec.topology)
    sweep = spec.sweep
    ranks = spec.ranks if spec.ranks is not None else world
    fixed = sweep.segments  # --segments N; None: the simulator's choice per size
    if spec.pattern is not None:
        where_gpus = _pattern_gpus(topo, spec, ranks)
        sched, _, roles = pattern_schedule(topo, spec.pattern, segments=fixed or 8, **where_gpus)
        gpus = list(sched.meta["ranks"])
        if ranks is not None and ranks != len(gpus):
            raise UsageError(
                f"--pattern {spec.pattern} on GPUs {','.join(map(str, gpus))} needs {len(gpus)} ranks, "
                f"not --ranks {ranks}: give --ranks {len(gpus)} or other --gpus"
            )
        notes = [
            f"{spec.pattern}: local ranks 0..{len(gpus) - 1} stand for {topo.name} GPUs "
            f"{','.join(map(str, gpus))} ({_roles_text(roles)})"
        ]
        if fixed:
            schedules, chosen = {(spec.pattern, n): sched for n in sweep.sizes()}, {}
        else:
            link = step_cost(len(gpus)) if step_cost is not None else None
            chosen = best_segments(
                lambda k: pattern_schedule(topo, spec.pattern, segments=k, **where_gpus)[:2],
                sweep.sizes(),
                step_link=link,
            )
            schedules = {(spec.pattern, n): c[1] for n, c in chosen.items()}
            notes.append(_segments_note(spec.pattern, chosen, link))
        return BenchPlacement(
            topo.name,
            gpus,
            len(gpus),
            schedules,
            roles,
            notes,
            {spec.pattern: {n: c[0] for n, c in chosen.items()}} if chosen else {},
        )
    if ranks is None:
        raise UsageError("give the number of local ranks: --ranks 4 (or --gpus 0,1,4; or run under torchrun)")
    gpus = spec.gpus if spec.gpus is not None else list(range(ranks))
    if len(gpus) != ranks:
        raise UsageError(f"--gpus {','.join(map(str, gpus))} names {len(gpus)} GPUs for {ranks} ranks: one per rank")
    group = group_of(topo, gpus, 2, "--gpus" if spec.gpus is not None else "--ranks")
    if not 0 <= sweep.root < ranks:
        raise UsageError(f"--root {sweep.root} is not a rank of 0..{ranks - 1}")
    root = group[sweep.root] if sweep.collective in SINGLE_ROOT else None
    schedules, notes, segments = {}, [], {}
    link = step_cost(ranks) if step_cost is not None and not fixed else None
    for algorithm in sweep.algorithms:
        mode = mode_of(algorithm)
        if mode is BLINK:

            def build(k):
                s, where, more = blink_schedule(topo, group, sweep.collective, root, k, resolution=BENCH_RESOLUTION)
                return s, where

            s, _, more = blink_schedule(
                topo, group, sweep.collective, root, fixed or SEGMENTS, resolution=BENCH_RESOLUTION
            )
            notes += [more[0].rsplit(";", 1)[0]] if not fixed else more
            if fixed:
                schedules.update({(algorithm, n): s for n in sweep.sizes()})
            else:
                chosen = best_segments(build, sweep.sizes(), step_link=link)
                schedules.update({(algorithm, n): c[1] for n, c in chosen.items()})
                segments[algorithm] = {n: c[0] for n, c in chosen.items()}
                notes.append(_segments_note(algorithm, chosen, link))
        elif mode is BLINK_HYBRID:
            chosen = {}
            for n in sweep.sizes():

                def build(k, n=n):
                    s, where, more = blink_schedule(
                        topo,
                        group,
                        sweep.collective,
                        root,
                        k,
                        hybrid_size=n,
                        t_dpa_s=spec.t_dpa_s,
                        resolution=BENCH_RESOLUTION,
                    )
                    return s, where

                if fixed:
                    schedules[(algorithm, n)] = build(fixed)[0]
                else:
                    chosen.update(best_segments(build, [n], step_link=link))
                    schedules[(algorithm, n)] = chosen[n][1]
            notes += blink_schedule(
                topo,
                group,
                sweep.collective,
                root,
                fixed or SEGMENTS,
                hybrid_size=sweep.sizes()[-1],
                t_dpa_s=spec.t_dpa_s,
                resolution=BENCH_RESOLUTION,
            )[2][:1]
            if chosen:
                segments[algorithm] = {n: c[0] for n, c in chosen.items()}
                notes.append(_segments_note(algorithm, chosen, link))
    notes.insert(0, f"ranks 0..{ranks - 1} stand for {topo.name} GPUs {','.join(map(str, group))}")
    return BenchPlacement(topo.name, group, ranks, schedules, {}, notes, segments)


def _roles_text(roles: dict) -> str:
    return "; ".join(f"{k} {','.join(map(str, v)) if isinstance(v, list) else v}" for k, v in roles.items())
