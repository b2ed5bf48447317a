"""Real runs: testbeds up, down and listed, benchmarks (bench), link calibration (calibrate), the
measured bound of a collective (bound) and the model checked against measurements (validate)."""

from __future__ import annotations

import contextlib
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from collperf import units
from collperf.errors import UsageError
from collperf.spec import BenchSpec, NetworkSpec, sizes, testbed


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
    from collperf.lab.testbed.switch import status
    return status(name)


def testbed_down(name: str | None = None) -> list[str]:
    """`collperf testbed down`: tear testbeds down (leftovers of crashed runs included)."""
    from collperf.lab.testbed.switch import down
    return down(name)


def bench(spec: BenchSpec, on_row=None, on_note=None, on_info=None):
    """`collperf bench`: the sweep on real processes; Results with a prediction on every row (None on
    torchrun ranks other than 0). Rows stream: `on_row(results, row)` is called as each row completes
    (results holds the rows so far), and spec.json_file / spec.csv_file are rewritten after every row.
    `on_note(text)` gets warnings (memory) before the run starts, `on_info(text)` what -A blink / --pattern
    place where (default: on_note). A run that fails, times out or is
    interrupted raises bench.BenchInterrupted (a RunError) whose `.results` holds the rows measured."""
    from collperf.lab.bench import BenchInterrupted, run
    from collperf.lab.results import OutputError, ResultFiles
    files = ResultFiles(spec.json_file, spec.csv_file)
    placement = None
    if spec.placed:    # -A blink / blink-hybrid / --pattern: schedules built on the topology, here, before any rank
        from collperf.blink.runs import bench_schedules
        placement = bench_schedules(spec)
        for note in placement.notes:
            if (on_info or on_note) is not None:
                (on_info or on_note)(note)
    ranks = spec.ranks if placement is None or spec.ranks is not None or _torchrun() else placement.ranks
    net = spec.network.with_ranks(ranks).resolve() if spec.network.given else None

    def row_done(results, row):
        if placement is not None:
            results.config["placement"] = placement.to_json()
        if on_row is not None:   # shown first: a row measured is printed even when its file cannot be written
            on_row(results, row)
        files.update(results)

    with testbed_up(spec.testbed) as bed:
        from collperf.lab.testbed.routed_runs import is_topology_bed
        from collperf.lab.testbed.routed_runs import schedules as topology_schedules   # -A blink on the testbed's routes
        try:
            if is_topology_bed(bed):
                schedules = topology_schedules(bed, spec.sweep)
            else:
                schedules = placement.schedules if placement is not None else None
            results = run(spec.sweep, ranks, spec.timeout_s, net, testbed=bed, on_row=row_done,
                          on_note=on_note, force=spec.force, schedules=schedules)
        except BenchInterrupted as e:
            if e.results.rows:
                try:   # the files say how the run ended; a file that cannot be written is what ended it
                    files.update(e.results)
                except OutputError:
                    pass
            raise
    if results is not None:
        if placement is not None:
            results.config["placement"] = placement.to_json()
        files.update(results)
    return results


def _torchrun() -> bool:
    from collperf.runtime.launch import in_torchrun
    return in_torchrun()


def calibrate(ranks: int | None = None, bed=None, timeout_s: float = 300.0, output=None, on_link=None) -> dict:
    """`collperf calibrate`: alpha and bandwidth (intra and inter host) and the reduce rate, as a profile
    document; written to `output` when given. On a topology testbed every link is measured, and
    on_link(done, total, measure) hears of each as it is done."""
    from collperf.lab.calibrate import calibrate as measure
    from collperf.lab.calibrate import save
    from collperf.lab.testbed.routed_runs import calibrate_links, is_topology_bed
    with testbed_up(bed) as up:
        if is_topology_bed(up):      # a topology testbed: each link measured end to end
            links = calibrate_links(up, timeout_s=timeout_s, on_link=on_link)
            profile = {"testbed": up.describe(), "links": [vars(m) for m in links]}
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
    from collperf.lab.validate import bound as measure
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
    from collperf.lab.calibrate import calibrate as measure
    from collperf.lab.calibrate import load_cluster, save
    from collperf.model.network import Network
    from collperf.lab.validate import summary
    from collperf.lab.validate import validate as run
    size_list = [units.format_size(s).replace(" ", "") for s in sizes(size)]
    beds = [testbed(b) for b in beds] or [None]
    if beds == [None] and not ranks:
        raise UsageError("give --ranks P or one or more --testbed hosts=N,rate=R")
    out = Validation()
    with tempfile.TemporaryDirectory(prefix="collperf-validate-") as tmp:
        for i, bed in enumerate(beds):
            from collperf.lab.testbed import routed_runs as hetero_runs
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
    from collperf.lab.testbed.routed_runs import TopologyValidationRow
    from collperf.lab.testbed.routed_runs import summary as topology_summary
    out.summary = summary([r for r in out.rows if not isinstance(r, TopologyValidationRow)]) + \
        topology_summary([r for r in out.rows if isinstance(r, TopologyValidationRow)])
    return out
