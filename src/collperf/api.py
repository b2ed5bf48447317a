"""The Python API, mirroring the CLI one function per command. Arguments may be strings as the CLI
takes them ('64M', '5us', '50GB/s') or numbers in bytes, seconds and bytes/s."""

from __future__ import annotations

import re
from dataclasses import dataclass

from collperf import topology as topology_module
from collperf import units
from collperf.collectives import COLLECTIVES, get_collective
from collperf.errors import UsageError
from collperf.model.costs import ALGORITHMS, Algorithm, algorithms_for, get_algorithm
from collperf.model.network import Cluster, Link
from collperf.model.predict import Network, Prediction
from collperf.model.predict import predict as _predict
from collperf.model.presets import get_preset
from collperf.model.select import Crossover, Regime
from collperf.model.select import crossovers as _crossovers
from collperf.schedule.build import DEFAULT_PHASES, build, build_hierarchical
from collperf.schedule.ir import Schedule
from collperf.schedule.verify import VerificationError, verify
from collperf.simulate import SimResult
from collperf.simulate import simulate as simulate_schedule
from collperf.topology import Topology


def network(ranks: int | None = None, latency=None, bandwidth=None, reduce_bandwidth="inf",
            cluster: str | None = None, nodes: int | None = None, ranks_per_node: int | None = None,
            intra_latency=None, intra_bandwidth=None, inter_latency=None, inter_bandwidth=None,
            nics_per_node: int | None = None, profile=None) -> Network:
    """A Network from CLI-style options: a uniform link (ranks, latency, bandwidth), a preset cluster
    (cluster, nodes), a two-level cluster given level by level, or a calibrated profile. Unset
    intra/inter values fall back to the preset's, then to --latency/--bandwidth."""
    if profile is not None:
        from collperf.calibrate import load_cluster
        c = load_cluster(profile, nodes, ranks_per_node)
        if ranks is not None and ranks != c.ranks and nodes is None and ranks % c.ranks_per_node == 0:
            c = Cluster(ranks // c.ranks_per_node, c.ranks_per_node, c.intra, c.inter, c.nics_per_node, c.name)
        return Network.of(c, ranks)
    two_level = cluster is not None or nodes is not None or ranks_per_node is not None or any(
        v is not None for v in (intra_latency, intra_bandwidth, inter_latency, inter_bandwidth, nics_per_node))
    if not two_level:
        if latency is None or bandwidth is None:
            raise UsageError("no network given: pass --latency and --bandwidth (with --ranks), "
                             "or --cluster PRESET, or --nodes/--ranks-per-node with intra/inter links")
        if ranks is None:
            raise UsageError("a uniform link needs a rank count: pass --ranks, e.g. --ranks 16")
        return Network.of(Link.parse(latency, bandwidth, reduce_bandwidth), ranks)
    return Network.of(_cluster(ranks, latency, bandwidth, reduce_bandwidth, cluster, nodes, ranks_per_node,
                               intra_latency, intra_bandwidth, inter_latency, inter_bandwidth, nics_per_node), ranks)


def _cluster(ranks, latency, bandwidth, reduce_bandwidth, preset, nodes, ranks_per_node,
             intra_latency, intra_bandwidth, inter_latency, inter_bandwidth, nics_per_node) -> Cluster:
    base = get_preset(preset) if preset is not None else None
    if ranks_per_node is None:
        if base is not None:
            ranks_per_node = base.ranks_per_node
        elif nodes and ranks:
            if ranks % nodes:
                raise UsageError(f"ranks({ranks}) is not a multiple of nodes({nodes}): give --ranks-per-node")
            ranks_per_node = ranks // nodes
        else:
            raise UsageError("a two-level cluster needs --ranks-per-node (or --ranks with --nodes, or --cluster)")
    if nodes is None:
        if ranks is not None and ranks % ranks_per_node == 0:
            nodes = ranks // ranks_per_node
        else:
            nodes = 1 if ranks is None else None
        if nodes is None:
            raise UsageError(f"ranks({ranks}) is not a multiple of ranks_per_node({ranks_per_node}): give --nodes")

    def level(name, lat, bw, fallback: Link | None) -> Link:
        overridden = lat is not None or bw is not None
        lat = lat if lat is not None else (fallback.latency_s if fallback else latency)
        bw = bw if bw is not None else (fallback.bandwidth_Bps if fallback else bandwidth)
        if lat is None or bw is None:
            raise UsageError(f"the {name}-node link is not given: pass --{name}-latency and --{name}-bandwidth "
                             "(or --latency/--bandwidth for both levels, or --cluster PRESET)")
        return Link(units.parse_time(lat), units.parse_bandwidth(bw), units.parse_bandwidth(reduce_bandwidth),
                    fallback.name if fallback and not overridden else name)

    intra = level("intra", intra_latency, intra_bandwidth, base.intra if base else None)
    inter = level("inter", inter_latency, inter_bandwidth, base.inter if base else None)
    nics = nics_per_node if nics_per_node is not None else (base.nics_per_node if base else ranks_per_node)
    return Cluster(nodes, ranks_per_node, intra, inter, nics, name=preset or "custom")


def predict(collective: str, sizes, network: Network, algorithm="all", intra_algorithm: str = "best",
            inter_algorithm: str = "best", segments: int | None = None) -> list[Prediction]:
    """`collperf predict`: one Prediction per size (sizes: '1M,64M' or a list of sizes)."""
    return _predict(collective, _sizes(sizes), network, algorithm, intra_algorithm, inter_algorithm, segments)


def crossover(collective: str, network: Network, min_size="1", max_size="16G", algorithm="all",
              intra_algorithm: str = "best", inter_algorithm: str = "best") -> tuple[list[Crossover], list[Regime]]:
    """`collperf crossover`: where the best algorithm changes between min_size and max_size."""
    return _crossovers(collective, network, units.parse_size(min_size), units.parse_size(max_size),
                       algorithm=algorithm, intra_algorithm=intra_algorithm, inter_algorithm=inter_algorithm)


def algorithms(collective: str | None = None) -> list[Algorithm]:
    """`collperf algorithms`: the registry, optionally for one collective."""
    return list(ALGORITHMS) if collective is None else algorithms_for(collective)


def _sizes(sizes) -> list[int]:
    if isinstance(sizes, str):
        return units.parse_sizes(sizes)
    if isinstance(sizes, (int, float)):
        return [units.parse_size(int(sizes))]
    return [units.parse_size(s) for s in sizes]




# --- schedules, verification, simulation ---------------------------------------------------------

def schedule(collective: str, algorithm: str, ranks: int | None = None, root: int = 0, segments: int = 1,
             nodes: int | None = None, ranks_per_node: int | None = None,
             intra_algorithm: str | None = None, inter_algorithm: str | None = None) -> Schedule:
    """`collperf schedule`: the explicit schedule of an algorithm (hierarchical: give nodes and ranks_per_node)."""
    if algorithm == "hierarchical":
        if not nodes or not ranks_per_node:
            raise UsageError("the hierarchical schedule needs --nodes and --ranks-per-node")
        if ranks is not None and ranks != nodes * ranks_per_node:
            raise UsageError(f"ranks({ranks}) is not nodes({nodes}) x ranks_per_node({ranks_per_node})")
        name = get_collective(collective).name
        default = DEFAULT_PHASES.get(name, "ring")
        return build_hierarchical(name, nodes, ranks_per_node, intra_algorithm or default,
                                  inter_algorithm or default, segments)
    if ranks is None:
        raise UsageError("give the rank count: --ranks P")
    return build(collective, algorithm, ranks, root, segments)


@dataclass
class VerifyRow:
    collective: str
    algorithm: str
    ranks_checked: int
    failures: list[str]


def verify_all(collective: str | None = None, algorithm: str | None = None, max_ranks: int = 64,
               min_ranks: int = 1, segments=(1, 3), hierarchical: bool = True, progress=None) -> list[VerifyRow]:
    """`collperf verify`: build and symbolically verify every selected algorithm for every rank count
    in min_ranks..max_ranks (pipelined ones for each segment count), and the two-level schedules
    with the default phase algorithms on every nodes x ranks_per_node factorization."""
    if not 1 <= min_ranks <= max_ranks:
        raise UsageError(f"rank range {min_ranks}..{max_ranks}: expected 1 <= --min-ranks <= --max-ranks")
    chosen = [a for a in ALGORITHMS
              if (collective is None or a.collective == get_collective(collective).name)
              and (algorithm is None or a.name == algorithm)]
    if algorithm is not None and algorithm != "hierarchical" and not chosen:
        get_algorithm(collective or "allreduce", algorithm)   # raises with the known names
        raise UsageError(f"no algorithm {algorithm!r} for {collective or 'any collective'}")
    rows = []
    for alg in chosen:
        row = VerifyRow(alg.collective, alg.name, 0, [])
        for p in range(min_ranks, max_ranks + 1):
            if alg.unavailable(p):
                continue
            for k in (segments if alg.pipeline else (1,)):
                _check(row, lambda: build(alg.collective, alg.name, p, segments=k), f"p={p}" + (f",k={k}" if alg.pipeline else ""))
            row.ranks_checked += 1
            if progress:
                progress()
        rows.append(row)
    if hierarchical and algorithm in (None, "hierarchical"):
        for name, phase_algorithm in DEFAULT_PHASES.items():
            if collective is not None and get_collective(collective).name != name:
                continue
            row = VerifyRow(name, "hierarchical", 0, [])
            for p in range(max(min_ranks, 4), max_ranks + 1):
                for nodes in (n for n in range(2, p // 2 + 1) if p % n == 0):
                    _check(row, lambda: build_hierarchical(name, nodes, p // nodes, phase_algorithm, phase_algorithm),
                           f"{nodes}x{p // nodes}")
                    row.ranks_checked += 1
            rows.append(row)
    return rows


def _check(row: VerifyRow, make_schedule, label: str) -> None:
    try:
        verify(make_schedule())
    except VerificationError as e:
        row.failures.append(f"{label}: {e}")


def simulate(collective: str, algorithm: str, size, topology: str, latency=None, bandwidth=None,
             reduce_bandwidth="inf", cluster: str | None = None, mode: str = "rounds", segments: int = 1,
             root: int = 0, intra_algorithm: str | None = None, inter_algorithm: str | None = None,
             **cluster_options) -> tuple[SimResult, Schedule, Topology]:
    """`collperf simulate`: the schedule of `algorithm` on a topology (dgx1v, dgx2, mesh:P, switch:P,
    ring:P, cluster:NxG or a JSON file)."""
    link = Link.parse(latency, bandwidth, reduce_bandwidth) if latency is not None and bandwidth is not None else None
    base = None
    profile = cluster_options.pop("profile", None)
    if profile is not None:   # a calibrated profile: its links for cluster:NxG, its intra link for flat presets
        from collperf.calibrate import load_cluster
        base = load_cluster(profile)
        link = link or base.intra
    elif cluster is not None or any(v is not None for v in cluster_options.values()):
        base = network(cluster=cluster, nodes=1, reduce_bandwidth=reduce_bandwidth, latency=latency,
                       bandwidth=bandwidth, **cluster_options).cluster
    topo = topology_module.parse(topology, link, base)
    nodes = gpn = None
    match = re.match(r"^cluster:(\d+)x(\d+)$", str(topology).strip())
    if match:
        nodes, gpn = int(match.group(1)), int(match.group(2))
    sched = schedule(collective, algorithm, topo.ranks, root, segments, nodes, gpn, intra_algorithm, inter_algorithm)
    red = units.parse_bandwidth(reduce_bandwidth)
    if profile is not None and red == float("inf"):
        red = base.intra.reduce_bandwidth_Bps
    return simulate_schedule(sched, topo, units.parse_size(size), mode, red), sched, topo




# --- logs: ingest, fit, diagnose ------------------------------------------------------------------

def read_logs(paths, collective: str | None = None, ranks: int | None = None) -> list:
    """Every table of every log (nccl-tests text or JSON, collperf JSON/CSV, OSU, IMB)."""
    from collperf import ingest
    if isinstance(paths, (str, bytes)) or hasattr(paths, "__fspath__"):
        paths = [paths]
    return [t for p in paths for t in ingest.load(p, collective, ranks)]


def fit_logs(paths, collective: str | None = None, ranks: int | None = None) -> list:
    """`collperf fit`: a piecewise alpha-beta fit per table."""
    from collperf.fit import fit
    return [fit(t) for t in read_logs(paths, collective, ranks)]


def diagnose_logs(paths, peak=None, cluster: str | None = None, nodes: int | None = None, model_from=None,
                  collective: str | None = None, ranks: int | None = None, profile=None) -> list:
    """`collperf diagnose`: verdicts and anomalies per table; `model_from` predicts with another log's fit."""
    from collperf.diagnose import diagnose
    from collperf.fit import fit
    model = None
    if model_from is not None:
        model_tables = read_logs(model_from)
        model = fit(model_tables[0])
    out = []
    for t in read_logs(paths, collective, ranks):
        net = None
        if profile is not None:
            net = network(ranks=t.ranks, profile=profile)
        elif cluster is not None:
            preset = get_preset(cluster)
            net_nodes = nodes or (t.nodes if t.nodes else max(1, (t.ranks or preset.ranks_per_node) // preset.ranks_per_node))
            net = Network.of(get_preset(cluster, net_nodes, (t.ranks // net_nodes) if t.ranks and t.ranks % net_nodes == 0
                                        else None))
        out.append(diagnose(t, units.parse_bandwidth(peak) if peak is not None else None, net, model))
    return out


def compare_logs(diagnoses) -> list[dict]:
    """Side by side, per size, the tables of one collective: time and busbw of each, and the ratio to the first."""
    sizes = sorted({s.size for d in diagnoses for s in d.sizes})
    rows = []
    for size in sizes:
        entry = {"size": size}
        for i, d in enumerate(diagnoses):
            match = next((s for s in d.sizes if s.size == size), None)
            entry[f"time_s_{i}"] = match.time_s if match else None
            entry[f"busbw_GBps_{i}"] = match.busbw_GBps if match else None
        first = entry["time_s_0"]
        for i in range(1, len(diagnoses)):
            t = entry[f"time_s_{i}"]
            entry[f"ratio_{i}"] = t / first if t and first else None
        rows.append(entry)
    return rows



# --- training-step plans ------------------------------------------------------------------------------

def plan_step(model="70b", tp: int = 1, pp: int = 1, dp: int = 1, zero: int = 0, sequence_parallel: bool = False,
              micro_batches: int = 1, bucket="25MB", placement: str = "tp-pp-dp", cluster: str | None = "dgx-h100",
              nodes: int | None = None, compute=None, flops=None, overlap: str | None = None, algorithm: str = "best",
              intra_algorithm: str = "best", inter_algorithm: str = "best", **network_options):
    """`collperf plan`: one training step's communication. `model` is a preset name or a ModelSpec;
    `compute` a time ('2000ms') or `flops` an achieved rate per rank ('400TFLOPS' or a number)."""
    from collperf import plan as plans
    spec = model if isinstance(model, plans.ModelSpec) else plans.get_model(model)
    layout = plans.Layout(tp, pp, dp, zero, sequence_parallel, micro_batches, units.parse_size(bucket),
                          tuple(placement.split("-")))
    ranks = layout.ranks
    if cluster is not None and nodes is None and network_options.get("profile") is None:
        rpn = network_options.get("ranks_per_node") or get_preset(cluster).ranks_per_node
        if ranks % rpn:
            raise UsageError(f"tp({tp}) x pp({pp}) x dp({dp}) = {ranks} ranks do not fill nodes of {rpn}: "
                             "give --nodes and --ranks-per-node")
        nodes = ranks // rpn
    if network_options.get("profile") is not None:
        cluster = None
    net = network(cluster=cluster, nodes=nodes, **network_options)   # the layout is checked against it below
    if net.cluster is None:
        raise UsageError("a plan needs a two-level cluster: give --cluster PRESET or --nodes/--ranks-per-node "
                         "with intra and inter links")
    compute_s = None
    if compute is not None:
        compute_s = units.parse_time(compute)
    elif flops is not None:
        compute_s = plans.compute_time(spec, layout, _flops(flops))
    return plans.plan(spec, layout, net.cluster, compute_s, plans.overlap_fractions(overlap), algorithm,
                      intra_algorithm, inter_algorithm)


def _flops(value) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    import re as _re
    m = _re.fullmatch(r"\s*([0-9.eE+-]+)\s*([kMGTP]?)FLOP/?S?\s*", str(value), _re.IGNORECASE)
    if not m:
        raise UsageError(f"cannot read FLOP rate {value!r}: expected e.g. 400TFLOPS")
    scale = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "p": 1e15}[m.group(2).lower()]
    return float(m.group(1)) * scale


__all__ = ["network", "predict", "crossover", "algorithms", "schedule", "verify_all", "simulate", "read_logs",
           "fit_logs", "diagnose_logs", "compare_logs", "plan_step", "COLLECTIVES"]
