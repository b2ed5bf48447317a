"""Real runs: testbeds up, down and listed, benchmarks (bench), link calibration (calibrate), the
measured bound of a collective (bound) and the model checked against measurements (validate)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from collperf.api.common import as_spec
from collperf.api.results import Calibration, MeasuredBound
from collperf.blink.runs import bench_schedules
from collperf.errors import UsageError
from collperf.lab.bench import BenchInterrupted, run
from collperf.lab.calibrate import calibrate as calibrate_here, check_ranks, save, step_link
from collperf.lab.results import OutputError, ResultFiles
from collperf.lab.testbed import owners, parse_spec, switch
from collperf.lab.validate import bound as measured_bound, calibrated_grid, summary
from collperf.runtime.launch import in_torchrun, torchrun_int
from collperf.spec import BenchSpec, BoundSpec, CalibrateSpec, NetworkSpec, TestbedDownSpec, TestbedSpec, ValidateSpec


def testbed(text):
    """A Testbed from its description ('hosts=4,rate=200mbit[,ranks-per-host=2]' or 'topology=dgx1v-like
    [,group=0+1+4]') or a TestbedSpec, None for None; a Testbed is returned as it is."""
    if isinstance(text, TestbedSpec):  # `collperf testbed up`'s options
        text = text.description
    if text is None or not isinstance(text, str):
        return text
    return parse_spec(text)


@contextlib.contextmanager
def testbed_up(bed):
    """A testbed (a lab.testbed.Testbed or its spec string) brought up for the `with` block and torn down
    after it, whatever happens inside; None gives no testbed."""
    bed = testbed(bed)
    if bed is None:
        yield None
        return
    with bed:
        yield bed


def testbed_start(bed):
    """`collperf testbed up` (a TestbedSpec, a Testbed or its description): bring a testbed up and leave it up,
    held for the user: no run and no `testbed down` without its name takes it down."""
    up = testbed(bed).up()
    owners.claim(up.name, by="user")
    return up


def testbed_status(name: str | None = None) -> list[dict]:
    """`collperf testbed status`: the testbed namespaces, their addresses, shaping and processes."""
    return switch.status(name)


def testbed_held() -> list[str]:
    """The testbeds on this machine that a live run or `collperf testbed up` holds (what a plain
    `collperf testbed down` keeps)."""
    return switch.held()


def testbed_down(name: str | TestbedDownSpec | None = None, everything: bool = False) -> list[str]:
    """`collperf testbed down` (a TestbedDownSpec, or its name and everything): the named testbed (refused
    while a running bench holds it, unless everything=True), or without a name every testbed nobody alive
    holds: what crashed runs left (everything=True: all of them, live ones included)."""
    if isinstance(name, TestbedDownSpec):
        everything = name.everything
        name = name.name
    return switch.down(name, everything)


def bench(spec: BenchSpec, on_row=None, on_note=None, on_info=None):
    """`collperf bench`: the sweep on real processes; Results with a prediction on every row (None on
    torchrun ranks other than 0). Rows stream: `on_row(results, row)` is called as each row completes
    (results holds the rows so far), and spec.json_file / spec.csv_file are rewritten after every row.
    `on_note(text)` gets warnings (memory) before the run starts, `on_info(text)` what -A blink / --pattern
    place where (default: on_note). A run that fails, times out or is
    interrupted raises bench.BenchInterrupted (a RunError) whose `.results` holds the rows measured."""
    files = ResultFiles(spec.json_file, spec.csv_file)
    files.start()
    placement = None
    if spec.placed:  # -A blink / blink-hybrid / --pattern: schedules built on the topology, here, before any rank
        placement = bench_schedules(spec, _torchrun_world(), _step_cost(spec))
        for note in placement.notes:
            if (on_info or on_note) is not None:
                (on_info or on_note)(note)
    ranks = spec.ranks if placement is None or spec.ranks is not None or _torchrun() else placement.ranks
    net = spec.network.with_ranks(ranks).resolve() if spec.network.given else None

    def row_done(results, row):
        if placement is not None:
            results.config["placement"] = placement.to_json()
        if on_row is not None:  # shown first: a row measured is printed even when its file cannot be written
            on_row(results, row)
        files.update(results)

    with testbed_up(spec.testbed) as bed:
        try:
            own = bed.prebuilt_schedules(spec.sweep) if bed is not None else None  # -A blink on the bed's routes
            schedules = own if own is not None else placement.schedules if placement is not None else None
            results = run(
                spec.sweep,
                ranks,
                spec.timeout_s,
                net,
                testbed=bed,
                on_row=row_done,
                on_note=on_note,
                force=spec.force,
                schedules=schedules,
            )
        except BenchInterrupted as e:
            try:  # the rows so far, or none, never "complete"; a file that cannot be written is what ended it
                files.update(e.results)
            except OutputError:
                pass
            raise
    if results is not None:
        if placement is not None:
            results.config["placement"] = placement.to_json()
        files.update(results)
    return results


def _step_cost(spec: BenchSpec):
    """ranks -> what one step of our executor costs where the placed schedules will run, for their segments
    (blink/runs.py best_segments): the given network's link, or on local ranks a quick calibration of them
    (gloo's per-message cost, not the topology's NVLink); None (the topology's links) under torchrun or on
    a testbed (which places its own schedules)."""
    if spec.network.given:
        return lambda ranks: spec.network.with_ranks(ranks).resolve().flat_link
    if _torchrun() or spec.testbed is not None:
        return None
    return lambda ranks: step_link(ranks, spec.sweep.sizes(), spec.timeout_s)


def _torchrun() -> bool:
    return in_torchrun()


def _torchrun_world() -> int | None:
    """The rank count torchrun gives this run, None outside torchrun."""
    return torchrun_int("WORLD_SIZE", low=1) if _torchrun() else None


def calibrate(spec: CalibrateSpec | None = None, on_link=None, **options) -> Calibration:
    """`collperf calibrate`: alpha and bandwidth (intra and inter host) and the reduce rate, as a profile
    document (model/profile.py, what --profile reads); written to spec.output when given. A testbed calibrates
    itself: one that follows a topology measures every link, and on_link(done, total, measure) hears of each
    as it is done. What it cannot calibrate (one rank) is refused before a testbed comes up. Give a
    CalibrateSpec, or its fields as keywords."""
    spec = as_spec(CalibrateSpec, spec, options)
    ranks, timeout_s, output = spec.ranks, spec.timeout_s, spec.output
    bed = testbed(spec.testbed)
    if bed is None:
        check_ranks(ranks)
    else:
        bed.check_calibration()
    with testbed_up(bed) as up:
        profile = up.calibrate(timeout_s, on_link) if up is not None else calibrate_here(ranks, None, timeout_s)
    if output is not None:
        save(profile, output)
    return Calibration(profile, output)


def bound(spec: BoundSpec | None = None, **options) -> MeasuredBound:
    """`collperf bound`: the allreduce lower bound measured on the machine (a chain forwarding and
    reducing what any algorithm must), beside each algorithm's measured time and the model's bound. Give a
    BoundSpec, or its fields as keywords."""
    spec = as_spec(BoundSpec, spec, options)
    bed = testbed(spec.testbed)
    ranks = bed.ranks if bed is not None else spec.ranks
    if not ranks:
        raise UsageError("give --ranks P (or --testbed ...)")
    net = NetworkSpec(ranks=ranks, profile=spec.profile).resolve() if spec.profile else None
    with testbed_up(bed) as up:
        return MeasuredBound(measured_bound(spec.size_bytes, ranks, up, network=net, timeout_s=spec.timeout_s))


@dataclass
class Validation:
    networks: list[str] = field(default_factory=list)  # each network validated on, described
    rows: list = field(default_factory=list)  # a validation row per measured row (lab/validate.py)
    summary: list[dict] = field(default_factory=list)  # median / worst error per algorithm and regime

    def to_json(self) -> dict:
        return {
            "networks": self.networks,
            "summary": self.summary,
            "rows": [{**vars(r), "error": r.error} for r in self.rows],
        }


def validate(spec: ValidateSpec | None = None, on_step=None, **options) -> Validation:
    """`collperf validate`: on each testbed (or on spec.ranks local processes), calibrate (unless a profile
    is given), predict a grid of collectives from the profile alone, measure them, and report errors.
    The sizes are spec.sizes (a list, e.g. "64K,1M,4M": exactly those) or else min_bytes to max_bytes by
    `factor` (-b/-e/-f). on_step(text) hears of each phase (calibrating, each collective) as it starts.
    Everything is checked before any testbed comes up or any calibration runs. Give a ValidateSpec, or its
    fields as keywords."""
    spec = as_spec(ValidateSpec, spec, options)
    size_list, ranks, profile, iters, timeout_s = spec.sizes_bytes, spec.ranks, spec.profile, spec.iters, spec.timeout_s
    beds = [testbed(b) for b in spec.testbeds] or [None]
    if profile is None:  # each is calibrated first
        for bed in beds:
            if bed is None:
                check_ranks(ranks)
            else:
                bed.check_calibration()
    step = on_step or (lambda text: None)
    out = Validation()
    for bed in beds:
        if bed is not None:
            step(f"bringing up {bed.describe()}")
        with testbed_up(bed) as up:
            if up is None:
                described, rows = calibrated_grid(None, ranks, size_list, iters, timeout_s, profile, on_step=step)
            else:
                described, rows = up.validation_grid(size_list, iters, timeout_s, profile, on_step=step)
        out.networks.append(described)
        out.rows += rows
    out.summary = summary(out.rows)
    return out
