"""The Python API: one function per command, taking a validated spec (collperf.spec) and returning a
typed result. The CLI builds the specs and renders what these return; it holds no logic of its own.

Sizes, times and bandwidths may be strings as the CLI takes them ('64M', '5us', '50GB/s') or numbers
in bytes, seconds and bytes/s. Heavy modules (scipy, networkx, matplotlib, torch) are imported by the
functions that need them, so `import collperf` stays light.
"""

from __future__ import annotations

import contextlib
import tempfile
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from collperf import units
from collperf.errors import UsageError
from collperf.spec import (BenchSpec, DiagnoseSpec, HardwareSpec, LogSpec, MeasurementSpec, NetworkSpec,
                           PatternSpec, PlanSpec, SimulateSpec, SweepSpec, TopologyPredictSpec, TreesSpec, network,
                           output_path, sizes, testbed)


def _network(net):
    """A Network from a Network or a NetworkSpec."""
    return net.resolve() if isinstance(net, NetworkSpec) else net


# --- the model ----------------------------------------------------------------------------------------

# Other names of an algorithm: Blink's single-hop trees on a switch (a one-hop reduce into the root of
# each 1/p, then a one-hop broadcast; appendix A.3) are the two-shot mesh allreduce (model/blink.py).
ALIASES = {("allreduce", "single-hop"): "mesh"}


def _alias(collective: str, algorithm):
    """`algorithm` (a name, a comma list or a list) with aliases replaced by the names they stand for."""
    from collperf.collectives import get_collective
    name = get_collective(collective).name
    if isinstance(algorithm, str):
        return ",".join(ALIASES.get((name, a.strip().lower()), a) for a in algorithm.split(","))
    return [ALIASES.get((name, str(a).lower()), a) for a in algorithm]


def predict(collective: str, size, net, algorithm="all", intra_algorithm: str = "best",
            inter_algorithm: str = "best", segments: int | None = None) -> list:
    """`collperf predict`: one Prediction per size (size: '1M,64M' or a list of sizes)."""
    from collperf.model.predict import predict as _predict
    return _predict(collective, sizes(size), _network(net), _alias(collective, algorithm), intra_algorithm,
                    inter_algorithm, segments)


@dataclass
class TopologyPrediction:
    """`collperf predict --topology`: Blink's packed trees (`blink`: packed_runs.BlinkPrediction per size), or
    the closed forms (`predictions`, as `predict` gives them) on the link of a switch topology's group."""

    topology: str
    ranks: list
    algorithm: str
    blink: list | None = None
    link: object = None                # model.network.Link, for the closed forms
    predictions: list | None = None

    def to_json(self) -> dict:
        doc = {"topology": self.topology, "ranks": self.ranks, "algorithm": self.algorithm}
        if self.blink is not None:
            doc["sizes"] = [b.to_json() for b in self.blink]
        else:
            doc["link"] = {"latency_s": self.link.latency_s, "bandwidth_Bps": self.link.bandwidth_Bps,
                           "name": self.link.name}
            doc["sizes"] = [p.to_json() for p in self.predictions]
        return doc


def predict_topology(spec: TopologyPredictSpec) -> TopologyPrediction:
    """`collperf predict --topology`: -A blink prices the packed trees on the group (with spec.hybrid, the
    NVLink + PCIe split of the appendix's equation 8); any other algorithm (single-hop, ring, all, ...)
    takes the closed forms on the link every pair of the group sees through a switch (dgx2, switch:P)."""
    from collperf import packed_runs
    from collperf import topology as topologies
    from collperf.model.network import Network
    topo = topologies.parse(spec.topology, spec.link)
    if spec.algorithm == "blink":
        rows = packed_runs.predict_blink(spec, topo)
        return TopologyPrediction(topo.name, rows[0].ranks if rows else packed_runs.group_of(topo, spec.ranks),
                                  "blink", blink=rows)
    group, link = packed_runs.switch_link(topo, spec.ranks)
    rows = predict(spec.collective, spec.sizes_bytes, Network.of(link, len(group)), spec.algorithm)
    return TopologyPrediction(topo.name, group, spec.algorithm, link=link, predictions=rows)


def crossover(collective: str, net, min_size="1", max_size="16G", algorithm="all",
              intra_algorithm: str = "best", inter_algorithm: str = "best") -> tuple[list, list]:
    """`collperf crossover`: where the best algorithm changes between min_size and max_size:
    (crossovers, size ranges each with its best algorithm)."""
    from collperf.model.select import crossovers
    return crossovers(collective, _network(net), units.parse_size(min_size), units.parse_size(max_size),
                      algorithm=algorithm, intra_algorithm=intra_algorithm, inter_algorithm=inter_algorithm)


def algorithms(collective: str | None = None) -> list:
    """`collperf algorithms`: the registry, optionally for one collective."""
    from collperf.model.algorithms import ALGORITHMS, algorithms_for
    return list(ALGORITHMS) if collective is None else algorithms_for(collective)


# --- schedules ----------------------------------------------------------------------------------------

# Listing every transfer (the tuple form) grows as p^2 for the rings: beyond this, use the array form.
TUPLE_RANKS_LIMIT = 1024


def schedule(collective: str, algorithm: str, ranks: int | None = None, root: int = 0, segments: int = 1,
             nodes: int | None = None, ranks_per_node: int | None = None,
             intra_algorithm: str | None = None, inter_algorithm: str | None = None, arrays: bool = False):
    """`collperf schedule`: the explicit schedule of an algorithm (hierarchical: give nodes and ranks_per_node).
    `arrays=True` gives the array form (schedule/arrays.py), vectorized for the regular algorithms: what the
    simulator takes at scale."""
    from collperf.collectives import get_collective
    from collperf.schedule.build import DEFAULT_PHASES
    if arrays:
        from collperf.schedule.vectorized import build_array as flat
        from collperf.schedule.vectorized import build_hierarchical_array as two_level
    else:
        from collperf.schedule.build import build as flat
        from collperf.schedule.build import build_hierarchical as two_level
    total = nodes * ranks_per_node if algorithm == "hierarchical" and nodes and ranks_per_node else ranks
    if not arrays and total is not None and total > TUPLE_RANKS_LIMIT:
        raise UsageError(f"{total} ranks: a listed schedule is limited to {TUPLE_RANKS_LIMIT} ranks (a flat ring on "
                         f"{total} ranks has {2 * total * (total - 1):,} transfers); `collperf simulate` builds the "
                         "compact array form and takes clusters of any size")
    if algorithm == "hierarchical":
        if not nodes or not ranks_per_node:
            raise UsageError("the hierarchical schedule needs --nodes and --ranks-per-node")
        if ranks is not None and ranks != nodes * ranks_per_node:
            raise UsageError(f"ranks({ranks}) is not nodes({nodes}) x ranks_per_node({ranks_per_node})")
        name = get_collective(collective).name
        default = DEFAULT_PHASES.get(name, "ring")
        return two_level(name, nodes, ranks_per_node, intra_algorithm or default, inter_algorithm or default, segments)
    if ranks is None:
        raise UsageError("give the rank count: --ranks P")
    return flat(collective, algorithm, ranks, root, segments)


def verified_schedule(*args, **kwargs) -> tuple:
    """`collperf schedule`: the schedule (arguments as `schedule`), verified symbolically, and its cost
    coefficients (alpha, n beta, n gamma) counted from its steps."""
    from collperf.schedule.cost import coefficients
    from collperf.schedule.verify import verify
    s = schedule(*args, **kwargs)
    verify(s)
    return s, coefficients(s)


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
    from collperf.collectives import get_collective
    from collperf.model.algorithms import ALGORITHMS, get_algorithm
    from collperf.schedule.build import DEFAULT_PHASES, build, build_hierarchical
    if not 1 <= min_ranks <= max_ranks:
        raise UsageError(f"rank range {min_ranks}..{max_ranks}: expected 1 <= --min-ranks <= --max-ranks")
    wanted = get_collective(collective).name if collective is not None else None
    chosen = [a for a in ALGORITHMS if wanted in (None, a.collective) and algorithm in (None, a.name)]
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
                _check(row, lambda: build(alg.collective, alg.name, p, segments=k),
                       f"p={p}" + (f",k={k}" if alg.pipeline else ""))
            row.ranks_checked += 1
            if progress:
                progress()
        rows.append(row)
    if hierarchical and algorithm in (None, "hierarchical"):
        for name, phase_algorithm in DEFAULT_PHASES.items():
            if wanted not in (None, name):
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
    from collperf.schedule.verify import VerificationError, verify
    try:
        verify(make_schedule())
    except VerificationError as e:
        row.failures.append(f"{label}: {e}")


@dataclass
class Simulation:
    """A simulated run: the simulator's result with the schedule and topology it ran on."""

    result: object          # simulate.SimResult
    schedule: object
    topology: object
    algbw_Bps: float | None     # None where the time is 0 (one rank)
    busbw_Bps: float | None
    notes: list = field(default_factory=list)


def _topology(text: str, net: NetworkSpec):
    """topology.parse with the network options: the link of mesh:P/switch:P/ring:P, the levels of cluster:NxG
    (and the calibrated profile's cluster, or None)."""
    from collperf import topology as topologies
    from collperf.model.network import Link
    link = Link.parse(net.latency, net.bandwidth, net.reduce_bandwidth) \
        if net.latency is not None and net.bandwidth is not None else None
    base = None
    if net.profile is not None:   # a calibrated profile: its links for cluster:NxG, its intra link otherwise
        from collperf.calibrate import load_cluster
        base = load_cluster(net.profile)
        link = link or base.intra
    elif net.two_level:
        base = NetworkSpec(**{**vars(net), "ranks": None, "nodes": 1}).resolve_cluster()
    return topologies.parse(text, link, base), base


def simulate(spec: SimulateSpec) -> list[Simulation]:
    """`collperf simulate`: the schedule of an algorithm on a topology, simulated at each size.
    Algorithm blink: packed trees on the group spec.ranks, simulated on the group's view of the topology."""
    from collperf.collectives import get_collective
    from collperf.simulate import simulate as run
    net = spec.network
    topo, base = _topology(spec.topology, net)
    if spec.algorithm == "blink":
        from collperf.packed_runs import blink_schedules
        runs = blink_schedules(spec, topo)
    else:
        nodes, per_node = topo.shape or (None, None)
        sched = schedule(spec.collective, _alias(spec.collective, spec.algorithm), topo.ranks, spec.root or 0,
                         spec.segments or 1, nodes, per_node, spec.intra_algorithm, spec.inter_algorithm, arrays=True)
        runs = [(sched, topo, [])] * len(spec.sizes_bytes)
    reduce_Bps = units.parse_bandwidth(net.reduce_bandwidth)
    if net.profile is not None and reduce_Bps == float("inf"):
        reduce_Bps = base.intra.reduce_bandwidth_Bps
    out = []
    for size, (sched, where, notes) in zip(spec.sizes_bytes, runs):
        factor = get_collective(sched.collective).busbw_factor(sched.ranks)
        result = run(sched, where, size, spec.mode, reduce_Bps)
        if "ranks" in sched.meta:      # a group's view (blink): links named as the topology names them
            from collperf.packed_runs import topology_names
            result = topology_names(result, sched.meta["ranks"])
        algbw = result.size_bytes / result.time_s if result.time_s > 0 else None   # None: nothing moved
        out.append(Simulation(result, sched, where, algbw, algbw * factor if algbw is not None else None, notes))
    return out


def trees(spec: TreesSpec):
    """`collperf trees`: Blink's packed spanning trees on a group of a topology's ranks, their rate and
    the max-flow bound, beside NCCL's rings on the same group (packed_runs.TreesResult)."""
    from collperf.packed_runs import trees as build
    return build(spec)


def pattern(spec: PatternSpec):
    """`collperf simulate --pattern`: one of Blink's micro-benchmarks, throughput vs size (packed_runs.PatternRun)."""
    from collperf.packed_runs import pattern as run
    return run(spec)


# --- real runs ----------------------------------------------------------------------------------------

@contextlib.contextmanager
def testbed_up(bed):
    """A testbed (a testbed.Testbed or its spec string) brought up for the `with` block and torn down
    after it, whatever happens inside; None gives no testbed."""
    bed = testbed(bed)
    if bed is None:
        yield None
        return
    with bed:
        yield bed


def testbed_start(bed):
    """`collperf testbed up`: bring a testbed up and leave it up."""
    return testbed(bed).up()


def testbed_status(name: str | None = None) -> list[dict]:
    """`collperf testbed status`: the testbed namespaces, their addresses, shaping and processes."""
    from collperf.testbed import status
    return status(name)


def testbed_down(name: str | None = None) -> list[str]:
    """`collperf testbed down`: tear testbeds down (leftovers of crashed runs included)."""
    from collperf.testbed import down
    return down(name)


def bench(spec: BenchSpec, on_row=None, on_note=None, on_info=None):
    """`collperf bench`: the sweep on real processes; Results with a prediction on every row (None on
    torchrun ranks other than 0). Rows stream: `on_row(results, row)` is called as each row completes
    (results holds the rows so far), and spec.json_file / spec.csv_file are rewritten after every row.
    `on_note(text)` gets warnings (memory) before the run starts, `on_info(text)` what -A blink / --pattern
    place where (default: on_note). A run that fails, times out or is
    interrupted raises bench.BenchInterrupted (a RunError) whose `.results` holds the rows measured."""
    from collperf.bench import BenchInterrupted, run
    from collperf.results import ResultFiles
    files = ResultFiles(spec.json_file, spec.csv_file)
    placement = None
    if spec.placed:    # -A blink / blink-hybrid / --pattern: schedules built on the topology, here, before any rank
        from collperf.packed_runs import bench_schedules
        placement = bench_schedules(spec)
        for note in placement.notes:
            if (on_info or on_note) is not None:
                (on_info or on_note)(note)
    ranks = spec.ranks if placement is None or spec.ranks is not None or _torchrun() else placement.ranks
    net = spec.network.with_ranks(ranks).resolve() if spec.network.given else None

    def row_done(results, row):
        if placement is not None:
            results.config["placement"] = placement.to_json()
        files.update(results)
        if on_row is not None:
            on_row(results, row)

    with testbed_up(spec.testbed) as bed:
        from collperf.hetero_runs import is_topology_bed
        from collperf.hetero_runs import schedules as topology_schedules   # -A blink on the testbed's routes
        try:
            if is_topology_bed(bed):
                schedules = topology_schedules(bed, spec.sweep)
            else:
                schedules = placement.schedules if placement is not None else None
            results = run(spec.sweep, ranks, spec.timeout_s, net, testbed=bed, on_row=row_done,
                          on_note=on_note, force=spec.force, schedules=schedules)
        except BenchInterrupted as e:
            if e.results.rows:
                files.update(e.results)
            raise
    if results is not None:
        if placement is not None:
            results.config["placement"] = placement.to_json()
        files.update(results)
    return results


def _torchrun() -> bool:
    from collperf.runtime.launch import in_torchrun
    return in_torchrun()


def calibrate(ranks: int | None = None, bed=None, timeout_s: float = 300.0, output=None) -> dict:
    """`collperf calibrate`: alpha and bandwidth (intra and inter host) and the reduce rate, as a profile
    document; written to `output` when given."""
    from collperf.calibrate import calibrate as measure
    from collperf.calibrate import save
    from collperf.hetero_runs import calibrate_links, is_topology_bed
    with testbed_up(bed) as up:
        if is_topology_bed(up):      # a topology testbed: each link measured end to end
            profile = {"testbed": up.describe(), "links": [vars(m) for m in calibrate_links(up, timeout_s=timeout_s)]}
        else:
            profile = measure(ranks, up, timeout_s)
    if output is not None:
        save(profile, output)
    return profile


def bound(collective: str = "allreduce", ranks: int | None = None, size="4M", bed=None, profile=None,
          timeout_s: float = 300.0) -> dict:
    """`collperf bound`: the allreduce lower bound measured on the machine (a chain forwarding and
    reducing what any algorithm must), beside each algorithm's measured time and the model's bound."""
    from collperf.collectives import get_collective
    from collperf.validate import bound as measure
    if get_collective(collective).name != "allreduce":
        raise UsageError(f"the measured lower bound is defined for allreduce (got {collective})")
    bed = testbed(bed)
    ranks = bed.ranks if bed is not None else ranks
    if not ranks:
        raise UsageError("give --ranks P (or --testbed ...)")
    net = NetworkSpec(ranks=ranks, profile=profile).resolve() if profile else None
    with testbed_up(bed) as up:
        return measure(units.parse_size(size), ranks, up, network=net, timeout_s=timeout_s)


@dataclass
class Validation:
    networks: list[str] = field(default_factory=list)     # each network validated on, described
    rows: list = field(default_factory=list)              # validate.ValidationRow per measured row
    summary: list[dict] = field(default_factory=list)     # median / worst error per algorithm and regime


def validate(beds=(), ranks: int | None = None, profile=None, size="64K,1M,4M", iters: int = 5,
             timeout_s: float = 600.0) -> Validation:
    """`collperf validate`: on each testbed (or on `ranks` local processes), calibrate (unless a profile
    is given), predict a grid of collectives from the profile alone, measure them, and report errors."""
    from collperf.calibrate import calibrate as measure
    from collperf.calibrate import load_cluster, save
    from collperf.model.network import Network
    from collperf.validate import summary
    from collperf.validate import validate as run
    size_list = [units.format_size(s).replace(" ", "") for s in sizes(size)]
    beds = [testbed(b) for b in beds] or [None]
    if beds == [None] and not ranks:
        raise UsageError("give --ranks P or one or more --testbed hosts=N,rate=R")
    out = Validation()
    with tempfile.TemporaryDirectory(prefix="collperf-validate-") as tmp:
        for i, bed in enumerate(beds):
            from collperf import hetero_runs
            if hetero_runs.is_topology_bed(bed):   # the simulator on the testbed's own topology, no profile
                with testbed_up(bed) as up:
                    out.networks.append(f"{up.describe()} (simulated on its topology, events and rounds modes)")
                    out.rows += hetero_runs.validate(up, size_list, iters=iters, timeout_s=timeout_s)
                continue
            with testbed_up(bed) as up:
                used = profile
                if used is None:   # calibrate first, on the same ranks; the profile is kept only for this run
                    used = str(Path(tmp) / f"profile-{i}.json")
                    save(measure(ranks, up, timeout_s), used)
                cluster = load_cluster(used, up.hosts if up else None, up.ranks_per_host if up else ranks)
                net = Network.of(cluster)
                out.networks.append(net.describe() + (f" (profile {profile})" if profile else " (calibrated)"))
                out.rows += run(net, up, None if up else ranks, size_list, iters=iters, timeout_s=timeout_s)
    from collperf.hetero_runs import TopologyValidationRow
    from collperf.hetero_runs import summary as topology_summary
    out.summary = summary([r for r in out.rows if not isinstance(r, TopologyValidationRow)]) + \
        topology_summary([r for r in out.rows if isinstance(r, TopologyValidationRow)])
    return out


# --- logs: ingest, fit, diagnose ------------------------------------------------------------------

def read_logs(paths, collective: str | None = None, ranks: int | None = None) -> list:
    """Every table of every log (nccl-tests text or JSON, collperf JSON/CSV, OSU, IMB)."""
    from collperf import ingest
    spec = paths if isinstance(paths, LogSpec) else LogSpec(paths, collective, ranks)
    return [t for p in spec.paths for t in ingest.load(p, spec.collective, spec.ranks)]


def fit_tables(tables) -> list:
    """A piecewise alpha-beta fit per table."""
    from collperf.fit import fit
    return [fit(t) for t in tables]


def fit_logs(paths, collective: str | None = None, ranks: int | None = None) -> list:
    """`collperf fit`: a piecewise alpha-beta fit per table (each fit keeps its table: `fit.table`)."""
    return fit_tables(read_logs(paths, collective, ranks))


def diagnose_logs(spec: DiagnoseSpec | list | str, **options) -> list:
    """`collperf diagnose`: verdicts and findings per table. Give a DiagnoseSpec, or paths with the
    DiagnoseSpec fields as keywords (peak, network, hardware, model_from) and collective/ranks for the logs.
    Each row is judged against NCCL's expected time on the system assumed from the log (the hardware
    options override it) and against the physical bound (the system's two-level bound, or --peak)."""
    from collperf.diagnose import diagnose
    if not isinstance(spec, DiagnoseSpec):
        logs = LogSpec(spec, options.pop("collective", None), options.pop("ranks", None))
        spec = DiagnoseSpec(logs, **options)
    model = read_logs(spec.model_from)[0] if spec.model_from is not None else None
    return [diagnose(t, spec.peak_Bps, spec.hardware, model) for t in read_logs(spec.logs)]


def diagnose_measurement(spec: MeasurementSpec | None = None, **options):
    """`collperf diagnose allreduce --size 1GB --time 500ms --ranks 16 --cluster dgx-h100 --nodes 2`: one
    measured number judged like a log row (expected, bound, verdict, causes). Give a MeasurementSpec or its
    fields as keywords (hardware values may be given flat: cluster=, nodes=, gpu=, ...)."""
    from collperf.diagnose import diagnose_measurement as judge
    if spec is None:
        hw = {k: options.pop(k) for k in [f.name for f in fields(HardwareSpec)] if k in options}
        spec = MeasurementSpec(hardware=HardwareSpec(**hw), **options)
    return judge(spec)


def predict_nccl(collective: str, sizes, hardware: HardwareSpec | None = None, ranks: int | None = None):
    """`collperf predict --nccl`: NCCL's chosen algorithm/protocol, time and busbw, and the runner-up, per
    size on a catalogue system (hardware.cluster, or hardware.gpu) sized to `ranks`/`hardware.nodes`.
    Returns (Assumed, NcclPrediction)."""
    from collperf.diagnose.hardware import assume
    from collperf.model.nccl import expect
    hardware = hardware or HardwareSpec(cluster="dgx-h100")
    assumed = assume(None, hardware, ranks)
    if assumed.system is None:
        raise UsageError(f"predict --nccl: {assumed.why_none}")
    n = [units.parse_size(s) for s in sizes] if not isinstance(sizes, (int, str)) else units.parse_sizes(str(sizes))
    return assumed, expect(collective, n, assumed.system)


def compare_logs(diagnoses) -> list[dict]:
    """Side by side, per size, the tables of one collective: time and busbw of each, and the ratio to the first."""
    rows = []
    for size in sorted({s.size for d in diagnoses for s in d.sizes}):
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

def plan_spec(model: str | None = None, dimensions: dict | None = None, layout: dict | None = None,
              network: NetworkSpec | None = None, cluster: str | None = "dgx-h100", **options) -> PlanSpec:
    """A PlanSpec from CLI-style values: a model preset (default 70b) with optional dimension overrides
    (params, layers, hidden, seq_len, heads, micro_batch, dtype_bytes, experts, top_k; `params` without a
    preset describes a custom model whose other dimensions follow plan.custom_model's rule), layout fields
    (plan.Layout's, with bucket and gpu_memory as size strings), a network (its cluster preset given apart)
    and PlanSpec's options."""
    from collperf import plan as plans
    dims = {k: v for k, v in (dimensions or {}).items() if v is not None}
    dtype_bytes = dims.pop("dtype_bytes", None)
    if dtype_bytes:
        dims.update(param_bytes=dtype_bytes, grad_bytes=dtype_bytes, act_bytes=dtype_bytes)
    if model is None and "params" in dims:
        spec = plans.custom_model(dims.pop("params"), dims.pop("layers", None), dims.pop("hidden", None),
                                  dims.pop("seq_len", 4096), **dims)
    else:
        spec = plans.get_model(model or "70b")
        spec = replace(spec, **dims) if dims else spec
    lay = dict(layout or {})
    if "bucket" in lay:
        lay["bucket_bytes"] = units.parse_size(lay.pop("bucket"))
    memory = lay.pop("gpu_memory", None)
    if memory is not None:
        lay["gpu_memory_bytes"] = units.parse_size(memory)
    if isinstance(lay.get("placement"), str):
        lay["placement"] = tuple(lay["placement"].split("-"))
    net = network or NetworkSpec()
    net = NetworkSpec(**{**vars(net), "cluster": None if net.profile is not None else cluster})
    return PlanSpec(spec, plans.Layout(**lay), net, **options)


def plan_search(spec: PlanSpec, gpus: int | None, global_batch: int | None, **options):
    """`collperf plan --search`: every valid layout of `gpus` GPUs that fits memory, fastest first, for
    `global_batch` sequences per step; the spec gives the model, cluster preset and achieved FLOP/s."""
    from collperf import plan as plans
    if not gpus or not global_batch:
        raise UsageError(f"--search needs --gpus N and --global-batch B (got gpus={gpus}, global batch={global_batch})")
    if spec.flops_per_rank is None:
        raise UsageError("--search ranks layouts by step time: give the achieved rate per GPU, e.g. --flops 400TFLOPS")
    cluster = replace(spec.network, ranks=None, nodes=1).resolve_cluster()
    return plans.search(spec.model, gpus, cluster, global_batch, spec.flops_per_rank, base=spec.layout,
                        gpu_memory_bytes=spec.layout.gpu_memory_bytes, algorithm=spec.algorithm, **options)


def plan(spec: PlanSpec):
    """`collperf plan`: one training step's communication on a cluster."""
    from collperf import plan as plans
    net = spec.cluster_network().resolve()   # the layout is checked against it by plans.plan
    if net.cluster is None:
        raise UsageError("a plan needs a two-level cluster: give --cluster PRESET or --nodes/--ranks-per-node "
                         "with intra and inter links")
    compute_s = spec.compute_s
    if compute_s is None and spec.flops_per_rank is not None:
        compute_s = plans.compute_time(spec.model, spec.layout, spec.flops_per_rank)
    return plans.plan(spec.model, spec.layout, net.cluster, compute_s, spec.overlap_fractions, spec.algorithm,
                      spec.intra_algorithm, spec.inter_algorithm)


def plan_compare(spec: PlanSpec, variants=()) -> tuple[list, int]:
    """`collperf plan --compare`: the plan of `spec` and of each variant ('8x4x16', 'tp=8,pp=8,dp=8,zero=3',
    '8x8x8@dgx-a100:64'), and the index of the fastest (by step time when every plan has compute)."""
    plans = [plan(spec)] + [plan(spec.variant(v)) for v in variants]
    key = (lambda p: p.step_s) if all(p.compute_s for p in plans) else (lambda p: p.comm_s)
    return plans, min(range(len(plans)), key=lambda i: key(plans[i]))


def plan_step(model="70b", tp: int = 1, pp: int = 1, dp: int = 1, zero: int = 0, sequence_parallel: bool = False,
              micro_batches: int = 1, bucket="25MB", placement: str = "tp-pp-dp", cluster: str | None = "dgx-h100",
              compute=None, flops=None, overlap: str | None = None, algorithm: str = "best",
              intra_algorithm: str = "best", inter_algorithm: str = "best", **network_options):
    """`plan` with the layout and network as keywords (a convenience over PlanSpec)."""
    from collperf import plan as plans
    layout = plans.Layout(tp, pp, dp, zero, sequence_parallel, micro_batches, units.parse_size(bucket),
                          tuple(placement.split("-")))
    if network_options.get("profile") is not None:
        cluster = None
    return plan(PlanSpec(model, layout, NetworkSpec(cluster=cluster, **network_options), compute, flops, overlap,
                         algorithm, intra_algorithm, inter_algorithm))


# --- interoperability: NCCL tuner rules, MSCCL XML ---------------------------------------------------

def export_nccl_tuner(paths, output=None, nodes: int | None = None, ranks: int | None = None,
                      channels: int | None = None, collective: str | None = None,
                      hardware: HardwareSpec | None = None):
    """`collperf export nccl-tuner`: rules for NCCL's example tuner plugin from one log per forced
    NCCL_ALGO/NCCL_PROTO (nccl-tests text/-J, Inspector, optimize_config.py CSV, ...), plus optionally a
    default run for the gain comments. nodes/ranks default to what the logs say; written to `output` when
    given. Without logs, from NCCL's selection model on `hardware` (a catalogue system, link rates as
    overrides: export/tuner_model.py). Returns export.nccl_tuner.TunerRules (its .text() is the file)."""
    from collperf.export import nccl_tuner
    output_path(output, "--output")
    for name, value in (("nodes", nodes), ("ranks", ranks), ("channels", channels)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise UsageError(f"--{name} {value!r}: expected a whole number >= 1")
    hardware = hardware or HardwareSpec()
    if not paths:
        rules = _tuner_from_model(hardware, nodes, ranks, channels, collective)
    else:
        extra = [f.name for f in fields(HardwareSpec) if f.name != "nodes" and getattr(hardware, f.name) is not None]
        if extra:
            raise UsageError(f"--{extra[0].replace('_', '-')} describes hardware for rules from NCCL's model; with "
                             "logs the rules come from the logs' fits: give logs or a --cluster, not both")
        nodes = nodes or hardware.nodes
        tables = read_logs(LogSpec(paths, collective, None))
        curves = [nccl_tuner.curve(t) for t in tables]     # a fit, or a line through 1-2 sizes
        rules = nccl_tuner.build(nccl_tuner.choices(tables, curves), nodes, ranks, channels)
    if output is not None:
        Path(output).write_text(rules.text())
    return rules


def _tuner_from_model(hardware: HardwareSpec, nodes, ranks, channels, collective):
    """Rules from NCCL's model: the argmin on the hardware with the user's link rates, the gain over NCCL's
    argmin on the rates of the catalogue (what NCCL detects)."""
    from collperf.collectives import get_collective
    from collperf.diagnose.hardware import assume
    from collperf.export import nccl_tuner, tuner_model
    if not hardware.given:
        raise UsageError("export nccl-tuner: give logs (one per NCCL_ALGO/NCCL_PROTO) or a system for NCCL's "
                         "model: --cluster dgx-h100 --nodes 2 (link rates: --nic-rate, --intra-bandwidth)")
    if channels is not None:
        raise UsageError(f"--channels {channels}: rules from the model carry the channels of NCCL's own graphs; "
                         "drop --channels")
    if nodes is not None and hardware.nodes is not None and nodes != hardware.nodes:
        raise UsageError(f"--nodes given twice ({nodes} and {hardware.nodes}): give one")
    hardware = replace(hardware, nodes=nodes or hardware.nodes)
    real = assume(None, hardware, ranks)
    if real.system is None:
        raise UsageError(f"export nccl-tuner: {real.why_none}")
    rates = hardware.nic_rate is not None or hardware.intra_bandwidth is not None
    believed = assume(None, replace(hardware, nic_rate=None, intra_bandwidth=None), ranks).system if rates else None
    wanted = nccl_tuner.COLLECTIVES
    if collective is not None:
        name = get_collective(collective).name
        if name not in nccl_tuner.COLLECTIVES:
            raise UsageError(f"--collective {collective}: not tuned by NCCL's tuner plugins: expected one of "
                             f"{', '.join(nccl_tuner.COLLECTIVES)}")
        wanted = (name,)
    system = real.system
    if system.ranks < 2:
        raise UsageError(f"{system.describe()} is {system.ranks} rank: NCCL runs no algorithm on one rank; give "
                         "--nodes N or --ranks N (>= 2)")
    rules = nccl_tuner.build(tuner_model.choices(system, believed, wanted), system.nodes, system.ranks)
    rules.notes.insert(0, f"from NCCL's selection model (tuning.cc) on {system.describe()}")
    rules.notes.insert(1, "NCCL default = NCCL's argmin on the catalogue's link rates; the gains are times on "
                          "the rates given" if believed is not None else
                          "no link rates given: the rules are NCCL's own choice (gain +0.0%) with explicit channels; "
                          "--nic-rate/--intra-bandwidth say what the links really deliver")
    return rules


@dataclass
class ImportedSchedule:
    """An MSCCL algorithm read back into our IR, verified, costed and (with a topology) simulated."""

    schedule: object
    verified: bool
    problem: str | None                          # the verifier's message when it does not verify
    coefficients: tuple[float, float, float]     # (alpha, n beta, n gamma) counted from its steps
    topology: str | None = None
    simulations: list = field(default_factory=list)   # ImportedRun per size


@dataclass
class ImportedRun:
    """One size: the imported schedule's simulated time beside our algorithms' on the same topology."""

    size_bytes: float
    time_s: float
    busbw_Bps: float | None
    ours: dict                       # our algorithm -> simulated time (s), every one that builds at this size
    same_name: str | None            # our algorithm of the schedule's name, when it is one of ours

    @property
    def best(self) -> tuple[str, float]:
        name = min(self.ours, key=self.ours.get)
        return name, self.ours[name]

    def to_json(self) -> dict:
        best, best_s = self.best if self.ours else (None, None)
        return {"size_bytes": self.size_bytes, "time_s": self.time_s, "busbw_Bps": self.busbw_Bps,
                "ours_time_s": self.ours, "same_name": self.same_name, "our_best": best, "our_best_time_s": best_s}


def export_msccl(collective: str, algorithm: str, ranks=None, output=None, proto: str = "Simple",
                 topology: str | None = None, network: NetworkSpec | None = None, **schedule_options) -> str:
    """`collperf export msccl`: a verified schedule (arguments as `schedule`) as MSCCL algorithm XML.
    Algorithm blink: Blink's packed trees on the group `ranks` ('0,1,4') of `topology` (as simulate -A blink;
    `network`'s latency/bandwidth: the link of a switch:P, mesh:P or ring:P)."""
    from collperf.export import msccl
    output_path(output, "--output")
    name = None
    network = network or NetworkSpec()
    if algorithm != "blink" and network.given:
        raise UsageError(f"--latency/--bandwidth give the link of -A blink's --topology (switch:P, ...); -A "
                         f"{algorithm}'s schedule does not depend on a link: drop them")
    if algorithm == "blink":
        s = _blink_schedule(collective, topology, ranks, network=network, **schedule_options)
        from collperf.collectives import get_collective
        group = ",".join(map(str, s.meta.get("ranks", range(s.ranks))))
        name = (f"collperf {s.collective} blink" + (f" root={s.root}" if get_collective(s.collective).rooted else "")
                + f" on {topology} GPUs {group}")      # MSCCL rank i is the group's i-th GPU
    else:
        if topology is not None:
            raise UsageError(f"--topology {topology} places -A blink's packed trees; -A {algorithm} is built "
                             "for -p ranks alone: drop --topology")
        if isinstance(ranks, str):
            try:
                ranks = int(ranks)
            except ValueError:
                raise UsageError(f"--ranks {ranks!r}: expected a rank count (a group such as 0,1,4 is for "
                                 "-A blink with --topology)") from None
        options = {k: v for k, v in schedule_options.items() if v is not None}    # None: schedule's defaults
        s, _ = verified_schedule(collective, algorithm, ranks, **options)
    text = msccl.write(s, proto, name)
    if output is not None:
        Path(output).write_text(text)
    return text


def _blink_schedule(collective: str, topology: str | None, ranks, root: int | None = None, segments: int | None = None,
                    network: NetworkSpec | None = None, **others):
    """Blink's packed-tree schedule on a group of a topology, verified (simulate -A blink builds the same)."""
    from collperf.schedule.arrays import as_tuples
    from collperf.schedule.verify import verify
    if topology is None:
        raise UsageError("-A blink packs trees on a topology: add --topology dgx1v (and --ranks 0,1,4 for a group)")
    given = [k.replace("_", "-") for k, v in others.items() if v is not None]
    if given:
        raise UsageError(f"--{given[0]} is not an option of -A blink (it takes --topology, --ranks, --root, "
                         "--segments)")
    if network is not None:
        from collperf.spec import topology_link
        topology_link(network, topology)    # the link's options apply to switch:P, mesh:P, ring:P only
    spec = SimulateSpec(collective, "blink", topology, size="1M", ranks=ranks, root=root, segments=segments,
                        network=network or NetworkSpec())
    s = as_tuples(simulate(spec)[0].schedule)
    verify(s)
    return s


def import_msccl(path, topology: str | None = None, size=None, mode: str = "rounds",
                 network: NetworkSpec | None = None) -> ImportedSchedule:
    """`collperf import msccl`: an MSCCL XML as our schedule, symbolically verified and costed; with a
    `topology`, simulated at each `size` beside every algorithm of ours for the collective on that topology."""
    from collperf.export import msccl_import
    from collperf.schedule.cost import coefficients
    from collperf.schedule.verify import VerificationError, verify
    s = msccl_import.read(path)
    try:
        verify(s)
        problem = None
    except VerificationError as e:
        problem = str(e)
    imported = ImportedSchedule(s, problem is None, problem, coefficients(s))
    if topology is None:
        if size is not None:
            raise UsageError(f"--size {size}: the sizes to simulate at need a --topology (dgx1v, switch:8, ...)")
        return imported
    imported.topology = topology
    imported.simulations = _simulate_imported(s, topology, size or "1M,64M,1G", mode, network or NetworkSpec())
    return imported


def _simulate_imported(s, topology: str, size, mode: str, network: NetworkSpec) -> list[ImportedRun]:
    from collperf.collectives import get_collective
    from collperf.model.select import runnable_algorithms
    from collperf.simulate import simulate as run
    from collperf.spec import check_mode
    # what every algorithm shares, checked once: in the loop a UsageError means the topology cannot host one
    sizes(size), check_mode(mode), _topology(topology, network)
    reduce_Bps = units.parse_bandwidth(network.reduce_bandwidth)
    ours, where, first_error = {}, None, None
    for name in runnable_algorithms(s.collective, s.ranks) + ["blink"]:
        try:      # blink: packed trees on all the topology's GPUs, from the same root
            sims = simulate(SimulateSpec(s.collective, name, topology, size=size, mode=mode,
                                         root=s.root if get_collective(s.collective).rooted or name != "blink"
                                         else None, network=network))
        except UsageError as e:
            first_error = first_error or str(e)
            continue                       # this topology cannot host that algorithm (rank count, shape)
        if sims[0].schedule.ranks != s.ranks:
            raise UsageError(f"the XML has {s.ranks} GPUs and topology {topology} has {sims[0].schedule.ranks} "
                             f"ranks: give a topology of {s.ranks} ranks (switch:{s.ranks}, ring:{s.ranks}, ...)")
        ours[name], where = [x.result.time_s for x in sims], where or sims
    if where is None:
        raise UsageError(f"none of our {s.collective} algorithms runs on topology {topology} ({s.ranks} GPUs in the "
                         f"XML): {first_error}")
    factor = get_collective(s.collective).busbw_factor(s.ranks)
    out = []
    for i, sim in enumerate(where):
        r = run(s, sim.topology, sim.result.size_bytes, mode, reduce_Bps)
        busbw = r.size_bytes / r.time_s * factor if r.time_s > 0 else None
        out.append(ImportedRun(r.size_bytes, r.time_s, busbw, {k: v[i] for k, v in ours.items()},
                               s.algorithm if s.algorithm in ours else None))
    return out


# --- shareable reports --------------------------------------------------------------------------------

def report(inputs, output, command: str | None = None, peak=None, network: NetworkSpec | None = None,
           collective: str | None = None, ranks: int | None = None, title: str | None = None) -> Path:
    """`collperf report`: one self-contained HTML page at `output`; returns its path. Each input is a log
    path (anything diagnose reads, a bench JSON included), a validate JSON path, a Diagnosis, a bench's
    Results or a Validation; several logs of one collective are compared side by side. `peak`, `network`,
    `collective` and `ranks` are diagnose's options for the logs. `command` is shown on the page as what
    made it (default: this call)."""
    from collperf import report as pages
    from collperf.diagnose import Diagnosis, diagnose
    output_path(output, "--output")
    items = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    # the network options read once as hardware: the spec is copied per log below (replace re-validates it)
    hardware = HardwareSpec.from_network(network) if network is not None else None
    spec = DiagnoseSpec(LogSpec(["-"], collective, ranks), peak, hardware=hardware)
    diagnoses, validations = [], []
    for item in items:
        if isinstance(item, Diagnosis) or pages.is_diagnosis(item):
            diagnoses.append(item)
        elif isinstance(item, Validation) or pages.is_validation(item):
            validations.append(item)
        elif hasattr(item, "rows") and hasattr(item, "config"):   # a bench's Results
            for t in pages.results_tables(item):
                diagnoses.append(diagnose(t, spec.peak_Bps, spec.hardware))
        elif (doc := pages.read_validation(item)) is not None:
            validations.append(doc)
        else:
            diagnoses += diagnose_logs(replace(spec, logs=LogSpec([item], collective, ranks)))
    same = len(diagnoses) > 1 and len({d.table.collective for d in diagnoses}) == 1
    if command is None:
        shown = [str(i) if isinstance(i, (str, Path)) else type(i).__name__ for i in items]
        command = f"collperf.api.report({shown!r}, {str(output)!r})"
    text = pages.render_page(diagnoses, validations, compare_logs(diagnoses) if same else None, command, title)
    return pages.write_page(text, output)


__all__ = ["network", "predict", "crossover", "algorithms", "schedule", "verify_all", "simulate", "bench",
           "calibrate", "bound", "validate", "testbed_up", "testbed_start", "testbed_status", "testbed_down",
           "read_logs", "fit_tables", "fit_logs", "diagnose_logs", "diagnose_measurement", "predict_nccl", "compare_logs", "plan", "plan_compare",
           "plan_step", "trees", "pattern", "export_nccl_tuner", "export_msccl", "import_msccl", "report",
           "NetworkSpec", "SweepSpec", "BenchSpec", "SimulateSpec", "LogSpec", "DiagnoseSpec", "HardwareSpec", "MeasurementSpec", "PlanSpec", "TreesSpec",
           "PatternSpec"]
