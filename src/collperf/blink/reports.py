"""What `collperf trees`, `collperf simulate -A blink` (the schedules per size), `collperf simulate --pattern`
and `collperf predict --topology` report on a topology: the packing priced beside NCCL's rings, the
patterns' throughput, the model per size. The builders they share with `collperf bench` (blink_schedule,
pattern_schedule) and the group checks live in blink/runs.py.
Source: Wang et al., "Blink: Fast and Generic Collectives for Distributed ML", MLSys 2020, appendix A.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from collperf import topology as topologies
from collperf.blink import model as blink, patterns as P
from collperf.blink.packing import pack
from collperf.blink.runs import blink_schedule, group_of, pattern_schedule, root_in_group, SINGLE_ROOT
from collperf.errors import UsageError
from collperf.model.network import Link
from collperf.schedule.arrays import as_arrays

# --- collperf trees ---------------------------------------------------------------------------------


@dataclass
class TreesResult:
    """A packing on a group beside NCCL's rings on the same group. Times are bandwidth terms only
    (size / rate; the pipeline's fill and latencies: `collperf simulate -A blink`)."""

    collective: str
    topology: str
    ranks: list[int]
    roots: list[int]  # topology ranks
    links: str
    transit: str
    rate_Bps: float  # per root: all its trees together
    bound_Bps: float  # max-flow bound (min over roots and ranks)
    trees: list[dict]  # root, rate_Bps, share, edges (parent, child, route in topology vertices)
    ring_kind: str  # nvlink or pcie: NCCL's choice on the group
    rings: list[list[int]]
    ring_rate_Bps: float
    size_bytes: float
    time_s: float  # the collective on the packed trees
    ring_time_s: float  # the same on the rings
    allreduce_time_s: float | None = None  # packed allreduce (reduce up, broadcast down), overlapped
    ring_allreduce_time_s: float | None = None
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return dict(vars(self))


def _vertex(sub, group: list[int], v):
    """A vertex of the group's view as the topology names it: a rank number, or a device name."""
    if isinstance(v, int):
        return group[v]
    return sub.graph.nodes[v].get("rank", v)


def _trees(pk, group: list[int]) -> list[dict]:
    out = []
    for t in pk.trees:
        edges = [
            {"parent": group[u], "child": group[v], "route": [_vertex(pk.topology, group, w) for w in path]}
            for (u, v), path in sorted(t.routes.items())
        ]
        out.append({"root": group[t.root], "rate_Bps": t.rate_Bps, "share": t.rate_Bps / pk.rate_Bps, "edges": edges})
    return out


def _ring_time_s(collective: str, p: int, size: float, rate_Bps: float) -> float:
    """A pipelined ring broadcast moves size at the ring's rate; the ring allreduce moves 2 (p-1)/p of it,
    allgather and reducescatter (p-1)/p (model/costs.py's ring bandwidth terms)."""
    factor = {"broadcast": 1.0, "allreduce": 2 * (p - 1) / p}.get(collective, (p - 1) / p)
    return factor * size / rate_Bps


def trees(spec) -> TreesResult:
    """`collperf trees`: pack (spec: a spec.TreesSpec), price, compare with NCCL's rings."""
    topo = topologies.parse(spec.topology)
    group = group_of(topo, spec.ranks)
    n, coll, options = float(spec.size_bytes), spec.collective, {"links": spec.links, "transit": spec.transit}
    notes = []
    if coll in ("allgather", "reducescatter"):
        # every rank roots trees for its own block; reducescatter reduces up trees whose arcs are reversed
        pk = pack(topo, group, group, direction="down" if coll == "allgather" else "up", **options)
        time_s = n / len(group) / pk.rate_Bps
        allreduce_s = None
        notes.append(f"{coll}: each rank's 1/{len(group)} of the size at the common rate per root")
    else:
        if spec.root == "best":
            root, pk, _ = blink.best_root(topo, group, coll, n, **options)
            notes.append(f"best root for {coll} of {n:.0f} bytes: {root}")
        else:
            pk = pack(topo, group, [root_in_group(group, spec.root)], **options)
        allreduce_s = float(blink.allreduce_time_s(pk, n))
        time_s = n / pk.rate_Bps if coll == "broadcast" else allreduce_s
    rings = blink.nccl_rings(topo, group)
    return TreesResult(
        coll,
        topo.name,
        group,
        [group[r] for r in pk.roots],
        spec.links,
        spec.transit,
        pk.rate_Bps,
        pk.bound_Bps,
        _trees(pk, group),
        rings.kind,
        [list(r) for r in rings.rings],
        rings.rate_Bps,
        n,
        time_s,
        _ring_time_s(coll, len(group), n, rings.rate_Bps),
        allreduce_s,
        None if allreduce_s is None else _ring_time_s("allreduce", len(group), n, rings.rate_Bps),
        notes,
    )


# --- collperf simulate -A blink -----------------------------------------------------------------------


def blink_schedules(spec, topo) -> list[tuple]:
    """Per size of spec (a spec.SimulateSpec with algorithm blink): (schedule, the group's topology
    view to simulate on, notes). Packed once; a hybrid broadcast splits each size by equation 8."""
    group = group_of(topo, spec.ranks)
    if spec.hybrid:
        out = []
        for size in spec.sizes_bytes:
            s, where, notes = blink_schedule(
                topo,
                group,
                spec.collective,
                spec.root,
                spec.segments,
                spec.transit,
                hybrid_size=size,
                t_dpa_s=spec.t_dpa_s,
            )
            out.append((as_arrays(s), where, notes))
        return out
    s, where, notes = blink_schedule(topo, group, spec.collective, spec.root, spec.segments, spec.transit)
    return [(as_arrays(s), where, notes)] * len(spec.sizes_bytes)


def topology_names(result, group: list[int]):
    """The simulation's link names in the topology's own vertices (the group's view numbers its ranks
    0..p-1 and calls idle GPUs rank{r}): '0->2' on group 0,1,4 is '0->4'."""
    from dataclasses import replace

    def name(v: str) -> str:
        if v.isdigit():
            return str(group[int(v)])
        return v[4:] if v.startswith("rank") and v[4:].isdigit() else v

    links = [replace(u, link="->".join(name(v) for v in u.link.split("->"))) for u in result.links]
    return replace(result, links=links)


# --- collperf simulate --pattern ----------------------------------------------------------------------


@dataclass
class PatternRun:
    pattern: str
    topology: str
    roles: dict  # the GPUs: chain, or sources/center/successor, or source/center/successors
    mode: str
    segments: int
    sizes_bytes: list[float]
    time_s: list[float]
    throughput_Bps: list[float]  # size / time, as the appendix plots

    def to_json(self) -> dict:
        return dict(vars(self))


def pattern(spec) -> PatternRun:
    """`collperf simulate --pattern`: a micro-benchmark (spec: a spec.PatternSpec) simulated at every size."""
    topo = topologies.parse(spec.topology)
    name, k = spec.pattern, spec.segments
    sched, sub, roles = pattern_schedule(topo, name, spec.gpus, spec.center, spec.successor, spec.source, k)
    sizes = [float(n) for n in spec.sizes_bytes]
    if not all(n > 0 for n in sizes):
        raise UsageError("pattern sizes must be positive (throughput is size / time)")
    rates = [float(x) for x in P.throughput_Bps(sched, sub, sizes, spec.mode)]
    return PatternRun(
        name, topo.name, roles, spec.mode, k, sizes, [n / r if r else math.inf for n, r in zip(sizes, rates)], rates
    )


# --- collperf predict --topology --------------------------------------------------------------------------


@dataclass
class BlinkPrediction:
    """The model of Blink's packed trees for one size (bandwidth terms, as the appendix's equation 8):
    broadcast and reduce size / rate, allreduce reduce-up + broadcast-down overlapped on the same trees,
    allgather/reducescatter size / p at the common rate per root; beside NCCL's rings on the group."""

    collective: str
    topology: str
    ranks: list[int]
    roots: list[int]
    size_bytes: float
    time_s: float
    algbw_Bps: float
    rate_Bps: float  # the trees' rate per root (hybrid: NVLink and PCIe together, effective)
    ring_kind: str
    ring_rate_Bps: float
    ring_time_s: float
    hybrid: dict | None = None  # equation 8: the split and both tree sets' times
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return dict(vars(self))


def predict_blink(spec, topo=None) -> list[BlinkPrediction]:
    """`collperf predict -A blink --topology` (spec: a spec.TopologyPredictSpec): one row per size."""
    topo = topo or topologies.parse(spec.topology)
    group = group_of(topo, spec.ranks)
    coll, p = spec.collective, len(group)
    rings = blink.nccl_rings(topo, group)
    out = []
    if spec.hybrid:
        root = root_in_group(group, spec.root)
        nv = pack(topo, group, [root], links="nvlink", transit="devices")
        pc = pack(topo, group, [root], links="pcie", transit="devices")
        for n in spec.sizes_bytes:
            # equation 8 (blink/model.py hybrid_split): D_PCIe that makes T_dpa + D_PCIe/BW_PCIe = D_NVL/BW_NVL
            d_pcie, d_nvl, t = (float(x) for x in blink.hybrid_split(n, pc.rate_Bps, nv.rate_Bps, spec.t_dpa_s))
            t_pcie = spec.t_dpa_s + d_pcie / pc.rate_Bps if d_pcie > 0 else 0.0
            nvl_only = n / nv.rate_Bps
            hybrid = {
                "pcie_bytes": d_pcie,
                "nvlink_bytes": d_nvl,
                "pcie_Bps": pc.rate_Bps,
                "nvlink_Bps": nv.rate_Bps,
                "t_dpa_s": spec.t_dpa_s,
                "pcie_time_s": t_pcie,
                "nvlink_time_s": d_nvl / nv.rate_Bps,
                "nvlink_only_time_s": nvl_only,
                "gain": nvl_only / t if t > 0 else 1.0,
            }
            notes = (
                []
                if d_pcie > 0
                else [
                    f"T_dpa {spec.t_dpa_s * 1e3:g} ms outweighs the PCIe trees at "
                    f"{n:.0f} bytes: all data over NVLink (equation 8 gives D_PCIe <= 0)"
                ]
            )
            out.append(
                BlinkPrediction(
                    coll,
                    topo.name,
                    group,
                    [root],
                    float(n),
                    t,
                    n / t if t > 0 else math.inf,
                    n / t if t > 0 else math.inf,
                    rings.kind,
                    rings.rate_Bps,
                    _ring_time_s(coll, p, n, rings.rate_Bps),
                    hybrid,
                    notes,
                )
            )
        return out
    if coll in SINGLE_ROOT:
        pk = pack(topo, group, [root_in_group(group, spec.root)], transit=spec.transit)
    else:
        pk = pack(topo, group, group, transit=spec.transit, direction="down" if coll == "allgather" else "up")
    for n in spec.sizes_bytes:
        if coll in ("broadcast", "reduce"):
            t = n / pk.rate_Bps  # a reduce runs the broadcast's trees reversed (full-duplex links)
        elif coll == "allreduce":
            t = float(blink.allreduce_time_s(pk, n))
        else:
            t = n / p / pk.rate_Bps  # each rank's block at the common rate per root
        out.append(
            BlinkPrediction(
                coll,
                topo.name,
                group,
                [group[r] for r in pk.roots],
                float(n),
                t,
                n / t if t > 0 else math.inf,
                pk.rate_Bps,
                rings.kind,
                rings.rate_Bps,
                _ring_time_s(coll, p, n, rings.rate_Bps),
            )
        )
    return out


def switch_link(topo, ranks=None):
    """(group, Link) of a group whose every GPU has one link, to a switch, and every pair the same route
    latency and bandwidth (dgx2, switch:P): the uniform link the closed forms (single-hop, ring, ...) take.
    Other topologies (dgx1v's NVLink mesh, clusters) are refused: their pairs differ."""
    group = group_of(topo, ranks)
    g = topo.graph
    several = [r for r in group if g.degree(r) != 1]
    if several:
        raise UsageError(
            f"predict --topology {topo.name} -A <closed form> needs a switch: each GPU one link to it "
            f"(dgx2, switch:P); GPU {several[0]} of {topo.name} has {g.degree(several[0])} links. "
            "Use -A blink (packed trees on any topology) or collperf simulate"
        )
    pairs = {}
    for a in group:
        for b in group:
            if a != b:
                path = topo.path(a, b)
                hops = list(zip(path[:-1], path[1:]))
                pairs[(a, b)] = (
                    sum(g.edges[u, v]["latency_s"] for u, v in hops),
                    min(g.edges[u, v]["bandwidth_Bps"] for u, v in hops),
                )
    values = set(pairs.values())
    if len(values) > 1:
        (a, b), (la, ba) = next(iter(pairs.items()))
        (c, d), (lc, bc) = next((k, v) for k, v in pairs.items() if v != (la, ba))
        raise UsageError(
            f"the pairs of {topo.name} ranks {','.join(map(str, group))} differ ({a}-{b}: {la * 1e6:.3g} us, "
            f"{ba / 1e9:.4g} GB/s; {c}-{d}: {lc * 1e6:.3g} us, {bc / 1e9:.4g} GB/s): the closed forms "
            "need one link; use -A blink or collperf simulate"
        )
    latency_s, bandwidth_Bps = values.pop() if values else (0.0, math.inf)
    return group, Link(latency_s, bandwidth_Bps, name=f"{topo.name} through its switch")
