"""Interoperability: NCCL tuner rules (export_nccl_tuner) and MSCCL XML out and in (export_msccl,
import_msccl, with the imported schedule verified and simulated)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from collperf import units
from collperf.api.common import as_spec, topology_for
from collperf.api.logs import read_logs
from collperf.api.schedules import simulate, verified_schedule
from collperf.blink.algorithms import BLINK
from collperf.collectives import get_collective
from collperf.expect.resolve import assume
from collperf.errors import UsageError
from collperf.export import msccl, msccl_import, nccl_tuner, tuner_model
from collperf.model.algorithms.modes import mode_of
from collperf.model.schedule_cost import coefficients
from collperf.model.auto.select import runnable_algorithms
from collperf.schedule.arrays import as_tuples
from collperf.schedule.ir import Schedule
from collperf.schedule.verify import VerificationError, verify
from collperf.simulate import simulate as run
from collperf.spec import (
    check_mode,
    HardwareSpec,
    LogSpec,
    MscclExportSpec,
    MscclImportSpec,
    NetworkSpec,
    ScheduleSpec,
    SimulateSpec,
    sizes,
    topology_link,
    TunerSpec,
    write_output,
)


def export_nccl_tuner(spec: TunerSpec | list | None = None, output=None, **options):
    """`collperf export nccl-tuner`: rules for NCCL's example tuner plugin from one log per forced
    NCCL_ALGO/NCCL_PROTO (nccl-tests text/-J, Inspector, optimize_config.py CSV, ...), plus optionally a
    default run for the gain comments. nodes/ranks default to what the logs say; written to spec.output when
    given. Without logs, from NCCL's selection model on spec.hardware (a catalogue system, link rates as
    overrides: export/tuner_model.py). Returns export.nccl_tuner.TunerRules (its .text() is the file). Give
    a TunerSpec, or (the convenience) the logs and output with the other fields as keywords."""
    if options.get("hardware", 0) is None:
        options.pop("hardware")
    spec = as_spec(TunerSpec, spec, options, logs=spec, output=output)
    paths, output, nodes, ranks = spec.logs, spec.output, spec.nodes, spec.ranks
    channels, collective, hardware = spec.channels, spec.collective, spec.hardware
    if not paths:
        rules = _tuner_from_model(hardware, nodes, ranks, channels, collective)
    else:
        extra = [f.name for f in fields(HardwareSpec) if f.name != "nodes" and getattr(hardware, f.name) is not None]
        if extra:
            raise UsageError(
                f"--{extra[0].replace('_', '-')} describes hardware for rules from NCCL's model; with "
                "logs the rules come from the logs' fits: give logs or a --cluster, not both"
            )
        nodes = nodes or hardware.nodes
        tables = read_logs(LogSpec(paths=paths, collective=collective, ranks=None))
        curves = [nccl_tuner.curve(t) for t in tables]  # a fit, or a line through 1-2 sizes
        rules = nccl_tuner.build(nccl_tuner.choices(tables, curves), nodes, ranks, channels)
    if output is not None:
        write_output(output, rules.text(), "--output")
    return rules


def _tuner_from_model(hardware: HardwareSpec, nodes, ranks, channels, collective):
    """Rules from NCCL's model: the argmin on the hardware with the user's link rates, the gain over NCCL's
    argmin on the rates of the catalogue (what NCCL detects)."""
    if not hardware.given:
        raise UsageError(
            "export nccl-tuner: give logs (one per NCCL_ALGO/NCCL_PROTO) or a system for NCCL's "
            "model: --cluster dgx-h100 --nodes 2 (link rates: --nic-rate, --gpu-link-rate)"
        )
    if channels is not None:
        raise UsageError(
            f"--channels {channels}: rules from the model carry the channels of NCCL's own graphs; drop --channels"
        )
    if nodes is not None and hardware.nodes is not None and nodes != hardware.nodes:
        raise UsageError(f"--nodes given twice ({nodes} and {hardware.nodes}): give one")
    hardware = replace(hardware, nodes=nodes or hardware.nodes)
    real = assume(None, hardware, ranks)
    if real.system is None:
        raise UsageError(f"export nccl-tuner: {real.why_none}")
    rates = hardware.nic_rate is not None or hardware.intra_bandwidth is not None
    believed = assume(None, replace(hardware, nic_rate=None, intra_bandwidth=None), ranks).system if rates else None
    wanted: tuple[str, ...] = nccl_tuner.COLLECTIVES
    if collective is not None:
        name = get_collective(collective).name
        if name not in nccl_tuner.COLLECTIVES:
            raise UsageError(
                f"--collective {collective}: not tuned by NCCL's tuner plugins: expected one of "
                f"{', '.join(nccl_tuner.COLLECTIVES)}"
            )
        wanted = (name,)
    system = real.system
    if system.ranks < 2:
        raise UsageError(
            f"{system.describe()} is {system.ranks} rank: NCCL runs no algorithm on one rank; give "
            "--nodes N or --ranks N (>= 2)"
        )
    rules = nccl_tuner.build(tuner_model.choices(system, believed, wanted), system.nodes, system.ranks)
    rules.notes.insert(0, f"from NCCL's selection model (tuning.cc) on {system.describe()}")
    rules.notes.insert(
        1,
        "NCCL default = NCCL's argmin on the catalogue's link rates; the gains are times on the rates given"
        if believed is not None
        else "no link rates given: the rules are NCCL's own choice (gain +0.0%) with explicit channels; "
        "--nic-rate/--gpu-link-rate say what the links really deliver",
    )
    return rules


@dataclass
class ImportedSchedule:
    """An MSCCL algorithm read back into our IR, verified, costed and (with a topology) simulated."""

    schedule: Schedule
    verified: bool
    problem: str | None  # the verifier's message when it does not verify
    coefficients: tuple[float, float, float]  # (alpha, n beta, n gamma) counted from its steps
    topology: str | None = None
    simulations: list = field(default_factory=list)  # ImportedRun per size

    def to_json(self) -> dict:
        s, (a, b, c) = self.schedule, self.coefficients
        return {
            "collective": s.collective,
            "algorithm": s.algorithm,
            "ranks": s.ranks,
            "chunks": s.chunks,
            "root": s.root,
            "steps": len(s.steps),
            "transfers": sum(len(st.transfers) for st in s.steps),
            "verified": self.verified,
            "problem": self.problem,
            "cost": {"alpha": a, "n_beta": b, "n_gamma": c},
            "topology": self.topology,
            "simulations": [r.to_json() for r in self.simulations],
        }


@dataclass
class ImportedRun:
    """One size: the imported schedule's simulated time beside our algorithms' on the same topology."""

    size_bytes: float
    time_s: float
    busbw_Bps: float | None
    ours: dict[str, float]  # our algorithm -> simulated time (s), every one that builds at this size
    same_name: str | None  # our algorithm of the schedule's name, when it is one of ours

    @property
    def best(self) -> tuple[str, float]:
        name = min(self.ours, key=lambda n: self.ours[n])
        return name, self.ours[name]

    def to_json(self) -> dict:
        best, best_s = self.best if self.ours else (None, None)
        return {
            "size_bytes": self.size_bytes,
            "time_s": self.time_s,
            "busbw_Bps": self.busbw_Bps,
            "ours_time_s": self.ours,
            "same_name": self.same_name,
            "our_best": best,
            "our_best_time_s": best_s,
        }


def export_msccl(spec: MscclExportSpec | str, algorithm: str | None = None, ranks=None, output=None, **options) -> str:
    """`collperf export msccl`: a verified schedule (fields as ScheduleSpec's) as MSCCL algorithm XML, the
    text returned (and written to spec.output when given). Algorithm blink: Blink's packed trees on the group
    spec.ranks ('0,1,4') of spec.topology (as simulate -A blink; the network's latency/bandwidth: the link of a
    switch:P, mesh:P or ring:P). Give an MscclExportSpec, or (the convenience) the collective, algorithm,
    ranks and output with the other fields as keywords."""
    if options.get("network", 0) is None:
        options.pop("network")
    spec = as_spec(MscclExportSpec, spec, options, collective=spec, algorithm=algorithm, ranks=ranks, output=output)
    collective, algorithm, ranks, output, topology = (
        spec.collective,
        spec.algorithm,
        spec.ranks,
        spec.output,
        spec.topology,
    )
    proto, network, schedule_options = spec.proto, spec.network, spec.schedule_options
    name = None
    if mode_of(algorithm) is not BLINK and network.given:
        raise UsageError(
            f"--latency/--bandwidth give the link of -A blink's --topology (switch:P, ...); -A "
            f"{algorithm}'s schedule does not depend on a link: drop them"
        )
    if mode_of(algorithm) is BLINK:
        s = _blink_schedule(collective, topology, ranks, network=network, **schedule_options)
        group = ",".join(map(str, s.meta.get("ranks", range(s.ranks))))
        name = (
            f"collperf {s.collective} blink"
            + (f" root={s.root}" if get_collective(s.collective).rooted else "")
            + f" on {topology} GPUs {group}"
        )  # MSCCL rank i is the group's i-th GPU
    else:
        if topology is not None:
            raise UsageError(
                f"--topology {topology} places -A blink's packed trees; -A {algorithm} is built "
                "for -p ranks alone: drop --topology"
            )
        if isinstance(ranks, str):
            try:
                ranks = int(ranks)
            except ValueError:
                raise UsageError(
                    f"--ranks {ranks!r}: expected a rank count (a group such as 0,1,4 is for -A blink with --topology)"
                ) from None
        s = verified_schedule(
            ScheduleSpec(collective=collective, algorithm=algorithm, ranks=ranks, **schedule_options)
        ).schedule
    text = msccl.write(s, proto, name)
    if output is not None:
        write_output(output, text, "--output")
    return text


def _blink_schedule(
    collective: str,
    topology: str | None,
    ranks,
    root: int | None = None,
    segments: int | None = None,
    network: NetworkSpec | None = None,
    **others,
):
    """Blink's packed-tree schedule on a group of a topology, verified (simulate -A blink builds the same)."""
    if topology is None:
        raise UsageError("-A blink packs trees on a topology: add --topology dgx1v (and --ranks 0,1,4 for a group)")
    given = [k.replace("_", "-") for k, v in others.items() if v is not None]
    if given:
        raise UsageError(
            f"--{given[0]} is not an option of -A blink (it takes --topology, --ranks, --root, --segments)"
        )
    if network is not None:
        topology_link(network, topology)  # the link's options apply to switch:P, mesh:P, ring:P only
    spec = SimulateSpec(
        collective=collective,
        algorithm=BLINK.name,
        topology=topology,
        size="1M",
        ranks=ranks,
        root=root,
        segments=segments,
        network=network or NetworkSpec(),
    )
    s = as_tuples(simulate(spec)[0].schedule)
    verify(s)
    return s


def import_msccl(
    spec: MscclImportSpec | str,
    topology: str | None = None,
    size=None,
    mode: str | None = None,
    network: NetworkSpec | None = None,
) -> ImportedSchedule:
    """`collperf import msccl`: an MSCCL XML as our schedule, symbolically verified and costed; with a
    spec.topology, simulated at each spec.size beside every algorithm of ours for the collective on that
    topology. Give an MscclImportSpec, or (the convenience) its fields in order."""
    if not isinstance(spec, MscclImportSpec):
        spec = as_spec(MscclImportSpec, None, {}, path=spec, topology=topology, size=size, mode=mode, network=network)
    path, topology, size, mode, network = spec.path, spec.topology, spec.size, spec.mode, spec.network
    s = msccl_import.read(path)
    try:
        verify(s)
        problem = None
    except VerificationError as e:
        problem = str(e)
    imported = ImportedSchedule(s, problem is None, problem, coefficients(s))
    if topology is None:
        return imported
    imported.topology = topology
    imported.simulations = _simulate_imported(s, topology, size or "1M,64M,1G", mode, network)
    return imported


def _simulate_imported(s, topology: str, size, mode: str, network: NetworkSpec) -> list[ImportedRun]:
    # what every algorithm shares, checked once: in the loop a UsageError means the topology cannot host one
    sizes(size)
    check_mode(mode)
    topology_for(topology, network)
    reduce_Bps = units.parse_bandwidth(network.reduce_bandwidth)
    ours, where, first_error = {}, None, None
    for name in runnable_algorithms(s.collective, s.ranks) + [BLINK.name]:
        try:  # blink: packed trees on all the topology's GPUs, from the same root
            sims = simulate(
                SimulateSpec(
                    collective=s.collective,
                    algorithm=name,
                    topology=topology,
                    size=size,
                    mode=mode,
                    root=s.root if get_collective(s.collective).rooted or mode_of(name) is not BLINK else None,
                    network=network,
                )
            )
        except UsageError as e:
            first_error = first_error or str(e)
            continue  # this topology cannot host that algorithm (rank count, shape)
        if sims[0].schedule.ranks != s.ranks:
            raise UsageError(
                f"the XML has {s.ranks} GPUs and topology {topology} has {sims[0].schedule.ranks} "
                f"ranks: give a topology of {s.ranks} ranks (switch:{s.ranks}, ring:{s.ranks}, ...)"
            )
        ours[name], where = [x.result.time_s for x in sims], where or sims
    if where is None:
        raise UsageError(
            f"none of our {s.collective} algorithms runs on topology {topology} ({s.ranks} GPUs in the "
            f"XML): {first_error}"
        )
    factor = get_collective(s.collective).busbw_factor(s.ranks)
    out = []
    for i, sim in enumerate(where):
        r = run(s, sim.topology, sim.result.size_bytes, mode, reduce_Bps)
        busbw = r.size_bytes / r.time_s * factor if r.time_s > 0 else None
        out.append(
            ImportedRun(
                r.size_bytes,
                r.time_s,
                busbw,
                {k: v[i] for k, v in ours.items()},
                s.algorithm if s.algorithm in ours else None,
            )
        )
    return out
