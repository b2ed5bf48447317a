"""Read one rank's trace file into calls, computation and steps (times in seconds of the trace's clock)."""

from __future__ import annotations

import glob
from functools import partial
from pathlib import Path

import numpy as np

from collperf.errors import UsageError
from collperf.trace import checks as C
from collperf.trace import fast as F
from collperf.trace import flight
from collperf.trace import kernels as K
from collperf.trace.events import Call, Collected, RankTrace, launch_times
from collperf.trace.gloo import pair_gloo
from collperf.trace.inspector_trace import is_inspector
from collperf.trace.overlap import subtract, union
from collperf.trace.stream import scan

US = 1e-6
_SUFFIXES = (".json", ".json.gz")


def trace_files(paths) -> list[Path]:
    """The files named by `paths`: files, directories (their .json/.json.gz files) and globs, in order."""
    found: list[Path] = []
    for item in [paths] if isinstance(paths, (str, Path)) else paths:
        text = str(item)
        if any(c in text for c in "*?["):
            matches = sorted(Path(p) for p in glob.glob(text))
            if not matches:
                raise UsageError(
                    f"{text}: the pattern matches no file; give trace files, a directory or a glob "
                    "such as 'traces/*.json.gz'"
                )
            found += [p for p in matches if p.is_file()]
        elif Path(text).is_dir():
            inside = sorted(
                p
                for p in Path(text).iterdir()
                if p.is_file() and (p.name.endswith(_SUFFIXES) or _dump_name(p) or _jsonl(p))
            )
            if not inside:
                raise UsageError(
                    f"{text}: no .json or .json.gz file and no Flight Recorder dump (a name ending in "
                    "the rank) in this directory"
                )
            found += inside
        elif Path(text).is_file():
            found.append(Path(text))
        else:
            raise UsageError(
                f"{text}: no such file or directory; give trace files (.json/.json.gz), a directory of them or a glob"
            )
    if not found:
        raise UsageError("no trace given: pass one file per rank, a directory or a glob")
    return found


def _jsonl(path: Path) -> bool:
    """An NCCL Inspector dump (`<host>-pid<pid>.log`, JSON lines) in a directory of a job's records."""
    return path.name.endswith((".log", ".jsonl")) and is_inspector(path)


def _dump_name(path: Path) -> bool:
    """A Flight Recorder dump's name: the rank at its end (nccl_trace_rank_3, rank3.pkl)."""
    stem = path.name.removesuffix(".pkl")
    return stem[-1:].isdigit() and "." not in stem


def _label(name, desc) -> str:
    desc = str(desc or "")
    return desc if desc and desc != "undefined" else str(name)


def _int(value, default=0) -> int:
    """A value checked by trace/checks.py (an int), or the default where the trace has none."""
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _kernel_call(e: dict, rank: int, world: int, groups: dict, launch_us: float, default_pg: str) -> Call:
    parsed = K.parse_kernel(e["name"]) or (None, "-", "-", "")
    from_name, algorithm, protocol, kernel_dtype = parsed
    args = e.get("args") or {}
    collective = K.collective_of(args.get("Collective name", "")) or from_name or "unknown"
    label = (
        _label(args.get("Process Group Name", ""), args.get("Process Group Description", ""))
        if "Process Group Name" in args
        else default_pg
    )
    ranks = args.get("Process Group Ranks") or groups.get(label, ())
    group_size = _int(args.get("Group size"), len(ranks) or world)
    dtype = args.get("dtype") or kernel_dtype
    size = None
    elt = K.element_bytes(dtype)
    if elt and ("In msg nelems" in args or "Out msg nelems" in args) and collective != "unknown":
        size = (
            K.whole_elements(collective, _int(args.get("In msg nelems")), _int(args.get("Out msg nelems")), group_size)
            * elt
        )
        if size > C.MAX_SIZE_BYTES:
            raise C.BadValue(
                f"a {collective} of {size} bytes (from 'In/Out msg nelems'): expected at most {C.MAX_SIZE_BYTES} bytes"
            )
    splits = str(args.get("In split size", "")) if collective == "alltoall" else ""
    return Call(
        rank,
        label,
        ranks,
        collective,
        size,
        K.dtype_name(dtype) if dtype else "",
        group_size,
        algorithm,
        protocol,
        float(e["ts"]) * US,
        float(e["dur"]) * US,
        launch_us * US,
        _int(args["Seq"]) if "Seq" in args else None,
        "" if splits in ("[]", "") else splits,
    )


def _host_ops(c: Collected) -> np.ndarray:
    """A GPU trace's CPU ops (`cpu_op` events of every thread; torch.profiler's launch and sync calls are
    `cuda_runtime`, not among them) as one disjoint set: where the host was busy."""
    ops = np.frombuffer(c.cpu_ops, dtype=float).reshape(-1, 3) if len(c.cpu_ops) else np.empty((0, 3))
    return union(ops[:, 1:] * US)


def _compute(c: Collected, gpu: bool) -> np.ndarray:
    """Computation intervals: GPU kernels that are not collectives; without any, CPU ops on threads other than
    gloo's, less the time inside c10d ops (enqueueing communication is not computation)."""
    if gpu:
        a = np.frombuffer(c.gpu_compute, dtype=float).reshape(-1, 3) if len(c.gpu_compute) else np.empty((0, 3))
        launch = launch_times(c.launches, a[:, 2], a[:, 0])
        return np.column_stack([a[:, 0], a[:, 1], launch]) * US
    ops = np.frombuffer(c.cpu_ops, dtype=float).reshape(-1, 3) if len(c.cpu_ops) else np.empty((0, 3))
    keep = ~np.isin(ops[:, 0], [float(t) for t in c.gloo_tids if isinstance(t, (int, float))])
    busy = union(ops[keep, 1:] * US)
    comm = union(np.array([[o.ts, o.ts + o.dur] for o in c.c10d]) * US) if c.c10d else np.empty((0, 2))
    left = subtract(busy, comm)
    return np.column_stack([left, left[:, 0]]) if len(left) else np.empty((0, 3))


def _top(path, where: str, check, value, expected: str):
    """A top-level value checked: a UsageError naming the file, the JSON path and the expected form."""
    try:
        return check(value, where)
    except C.BadValue as e:
        raise UsageError(
            f"{path}: {e}; expected {expected} (as torch.profiler writes it): the trace is corrupt, export it again"
        ) from None


def _info(path, top: dict) -> tuple[dict, int, int]:
    """distributedInfo, the rank and the world size, checked."""
    info = top.get("distributedInfo")
    if not isinstance(info, dict) or "rank" not in info:
        raise UsageError(
            f"{path}: no distributedInfo (rank, world size, process groups): record the trace in a "
            "process where torch.distributed is initialised (init_process_group before the profiler)"
        )
    world = _top(
        path,
        "$.distributedInfo.world_size",
        lambda v, w: C.whole(v, w, 1, C.MAX_WORLD),
        info.get("world_size", 1),
        f"a whole number of ranks, 1..{C.MAX_WORLD}",
    )
    rank = _top(
        path,
        "$.distributedInfo.rank",
        lambda v, w: C.whole(v, w, 0, world - 1),
        info.get("rank"),
        f"a whole number below the world size {world}",
    )
    for key in ("backend", "nccl_version"):
        _top(path, f"$.distributedInfo.{key}", C.optional_text, info.get(key), "a string")
    configs = info.get("pg_config")
    if configs is not None and not isinstance(configs, list):
        raise UsageError(
            f"{path}: $.distributedInfo.pg_config is not an array; expected an array of process "
            "groups (pg_name, pg_desc, ranks): the trace is corrupt, export it again"
        )
    for i, g in enumerate(configs or []):
        where = f"$.distributedInfo.pg_config[{i}]"
        if not isinstance(g, dict):
            raise UsageError(f"{path}: {where} is not an object; expected a process group (pg_name, pg_desc, ranks)")
        for key in ("pg_name", "pg_desc"):
            _top(path, f"{where}.{key}", C.optional_text, g.get(key), "a string")
        members = _top(path, f"{where}.ranks", C.ranks, g.get("ranks", []), "an array of ranks")
        if any(r >= world for r in members):
            raise UsageError(
                f"{path}: {where}.ranks has rank {max(members)}, not below the world size {world}; "
                "expected the ranks of the job: the trace is corrupt, export it again"
            )
    return info, rank, world


def _groups(info: dict, world: int) -> tuple[dict, str]:
    """Process group label -> ranks from distributedInfo's pg_config (checked by _info), and the default group's
    label."""
    groups = {
        _label(g.get("pg_name"), g.get("pg_desc")): C.ranks(g.get("ranks", []), "ranks") or tuple(range(world))
        for g in info.get("pg_config") or []
    }
    default_pg = next(iter(groups), "default_pg")
    groups.setdefault(default_pg, tuple(range(world)))
    return groups, default_pg


def _kernel_calls(c: Collected, rank: int, world: int, groups: dict, default_pg: str) -> list[Call]:
    for e in c.kernels:  # metadata from the record_param_comms op that launched the kernel (older PyTorch)
        launcher = c.comms_meta.get(e["args"].get("External id"))
        if launcher and "In msg nelems" not in e["args"]:
            e["args"] = {**launcher, **e["args"]}
    corr = np.array([_int(e["args"].get("correlation"), -1) for e in c.kernels], dtype=float)
    launched = launch_times(c.launches, corr, np.array([float(e["ts"]) for e in c.kernels]))
    calls = []
    for e, t in zip(c.kernels, launched):
        try:
            calls.append(_kernel_call(e, rank, world, groups, float(t), default_pg))
        except C.BadValue as why:
            c.reject(f"event {e['index']}", str(why))
    return calls


def read_rank(path, c_parser: bool = True) -> RankTrace:
    """One file: its distributed info, device, calls, computation and steps (a Flight Recorder dump: its calls).
    The events are decoded by msgspec where it is installed (`c_parser`), else by the streaming reader alone:
    the same RankTrace either way."""
    if flight.is_dump(path):
        return flight.read_dump(path)
    collected = Collected()
    fast = c_parser and F.available()
    top = scan(path, collected.add, collected.bad, (F.decode, partial(F.add_batch, collected)) if fast else None)
    info, rank, world = _info(path, top)
    groups, default_pg = _groups(info, world)
    notes: list[str] = [] if fast or not c_parser else [F.WHY_SLOW]
    calls = _kernel_calls(collected, rank, world, groups, default_pg)
    if collected.gloo:
        calls += pair_gloo(collected.gloo, collected.c10d, rank, default_pg, groups[default_pg], notes)
        if len(groups) > 1:
            notes.append(f"gloo work does not name its process group: every gloo call is taken to be on {default_pg}")
    for call in [c for c in calls if c.size_bytes is not None and c.size_bytes > C.MAX_SIZE_BYTES]:
        calls.remove(call)  # a gloo work whose shapes multiply past any real buffer
        collected.reject(
            f"the {call.collective} at ts {call.start_s / US:g} us",
            f"{call.size_bytes} bytes from its 'Input Dims': expected at most {C.MAX_SIZE_BYTES}",
        )
    skipped = ""
    if collected.skipped:
        skipped = (
            f"{collected.skipped} event(s) skipped, not what torch.profiler writes ("
            + "; ".join(collected.skip_reasons)
            + (", ..." if collected.skipped > 3 else "")
            + ")"
        )
        notes.append(skipped)
    if not calls:
        raise UsageError(
            f"{path}: no collective found (no NCCL/RCCL kernel, no gloo work"
            + (f"; {skipped}" if skipped else "")
            + "): profile the steps that communicate, with "
            "ProfilerActivity.CUDA for NCCL (record_shapes=True for gloo's sizes)"
        )
    calls.sort(key=lambda c: c.start_s)
    unknown = sum(c.size_bytes is None for c in calls)
    if unknown:
        notes.append(
            f"{unknown} calls without a size (no 'In msg nelems' in the kernel's args, or no shapes: "
            "record with record_shapes=True): listed, not judged"
        )
    devices = top.get("deviceProperties") or []
    if not isinstance(devices, list) or (devices and not isinstance(devices[0], dict)):
        raise UsageError(
            f"{path}: $.deviceProperties is not an array of objects; expected one object per GPU "
            "(name, computeMajor, ...): the trace is corrupt, export it again"
        )
    gpu = (
        _top(path, "$.deviceProperties[0].name", C.optional_text, devices[0].get("name"), "a GPU name")
        if devices
        else None
    )
    host = _top(path, "$.host_name", C.optional_text, top.get("host_name"), "a host name")
    steps = sorted(((n, s * US, e * US) for n, s, e in collected.steps), key=lambda s: s[1])
    version = info.get("nccl_version")
    gpu_trace = collected.kernel_count > 0
    return RankTrace(
        str(path),
        rank,
        world,
        str(info.get("backend") or ""),
        str(version) if version not in (None, "") else None,
        gpu or None,
        host or None,
        groups,
        calls,
        _compute(collected, gpu_trace),
        steps,
        notes,
        host_ops=_host_ops(collected) if gpu_trace else np.empty((0, 2)),
    )


def read_traces(paths) -> list[RankTrace]:
    """Every rank's trace, in rank order; a rank given twice is an error."""
    traces = [read_rank(p) for p in trace_files(paths)]
    seen: dict[int, str] = {}
    for t in traces:
        if t.rank in seen:
            raise UsageError(f"two traces of rank {t.rank}: {seen[t.rank]} and {t.source}; give one file per rank")
        seen[t.rank] = t.source
    worlds = {t.world_size for t in traces}
    if len(worlds) > 1:
        raise UsageError(f"the traces disagree on the world size ({sorted(worlds)}): give traces of one job")
    return sorted(traces, key=lambda t: t.rank)
