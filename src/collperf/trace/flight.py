"""PyTorch Flight Recorder dumps, one file per rank (pickle or JSON), read into the trace's per-rank calls.

The dump (torch 2.13, torch/csrc/distributed/c10d/FlightRecorder.hpp and FlightRecorderDetail.hpp; version
"2.10" in the file) is a dict:
  version          the dump format's version
  pg_config        process group name -> {name, desc, ranks}: `ranks` the string "[0, 1, 2, 3]"
  pg_status        process group id -> last enqueued / started / completed collective sequence ids
  comm_lib_version NCCL's version ('' for gloo)
  entries          the ring buffer (TORCH_FR_BUFFER_SIZE entries, oldest overwritten): one per work, with
    process_group        (group name, group description): 'default_pg' for the world
    collective_seq_id    the call's number in its group (the same call has the same number on every rank)
    p2p_seq_id, is_p2p   the same for send/recv (is_p2p true)
    profiling_name       'nccl:all_reduce', 'gloo:all_gather', ... (backend:op)
    input_sizes, output_sizes, input_dtypes, output_dtypes   shapes and c10 type names ('Float', 'BFloat16')
    time_created_ns      when the host enqueued it (the rank's arrival at the call)
    state                'scheduled', 'started' or 'completed' (NCCL: from its CUDA events)
    duration_ms          the call's GPU time, only with TORCH_NCCL_ENABLE_TIMING=1 (NCCL)
    time_discovered_started_ns, time_discovered_completed_ns   when the watchdog saw it start / end (NCCL;
                         None in the pickle and 0 in the JSON where unknown, as gloo's dumps always have them)
    retired              the work left the watchdog's list
The rank is not in the dump: TORCH_FR_DUMP_TEMP_FILE names the file, the rank appended (torch's own
reader, torch/distributed/flight_recorder/components/loader.py, takes the trailing digits of the name).

A call's end, where the dump has no duration: the time the rank enqueued its next call (the rank's thread
blocks in a synchronous call, so the next enqueue comes after the end): an upper estimate per rank, whose
minimum across ranks (trace/ranks.py) is close to the end itself, as some rank goes straight on.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import pickle
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from collperf.errors import UsageError
from collperf.trace import kernels as K
from collperf.trace.events import Call, RankTrace

NS = 1e-9
KIND = "flight recorder"
BARRIER = "barrier"
_TRAILING = re.compile(r"(?<!\d)(\d{1,9})(?:\.json)?(?:\.gz)?$")  # a rank: at most 9 digits, found once
# what tells a dump from a Kineto trace in a file's first bytes
_SNIFF_BYTES = 4096


@dataclass
class GroupWindow:
    """What one rank's dump holds of one process group: the sequence ids it covers and its last call."""

    first_seq: int
    last_seq: int
    last_op: str


class _NoGlobals(pickle.Unpickler):
    """A dump holds only dicts, lists, tuples, strings and numbers: any class reference is refused, so a
    file that is not a dump cannot run code when read."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"a reference to {module}.{name}: a Flight Recorder dump holds plain data")


def _raw(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def is_dump(path) -> bool:
    """Does the file hold a Flight Recorder dump (a pickle, or JSON with `entries` and no `traceEvents`)?"""
    with open(path, "rb") as f:
        head = f.read(_SNIFF_BYTES)
    if head[:2] == b"\x1f\x8b":
        with gzip.open(path, "rb") as f:
            try:
                head = f.read(_SNIFF_BYTES)
            except (OSError, EOFError, zlib.error):
                return False
    if head[:1] == b"\x80":
        return True
    # a job's pg_config (every group's ranks) may fill the sniffed bytes before `entries` does; a Kineto trace's
    # distributedInfo holds a pg_config too, so a key only Kineto writes first says it is no dump
    kineto = any(
        key in head for key in (b'"traceEvents"', b'"schemaVersion"', b'"deviceProperties"', b'"distributedInfo"')
    )
    return head.lstrip()[:1] == b"{" and (b'"entries"' in head or b'"pg_config"' in head) and not kineto


def load(path: Path) -> dict:
    """The dump as plain data; a UsageError naming the file when it is neither a dump's pickle nor its JSON."""
    try:
        data = _raw(path)
        if data[:1] == b"\x80":
            dump = _NoGlobals(io.BytesIO(data)).load()
        else:
            dump = json.loads(data)
    except (pickle.UnpicklingError, EOFError, ValueError, OSError, UnicodeDecodeError, RecursionError) as e:
        raise UsageError(
            f"{path}: not a readable Flight Recorder dump ({str(e)[:80]}); expected the pickle of "
            "torch._C._distributed_c10d._dump_fr_trace() or the JSON of _dump_fr_trace_json()"
        ) from None
    if not isinstance(dump, dict) or not isinstance(dump.get("entries", []), list):
        raise UsageError(
            f"{path}: $.entries is not a list; expected a Flight Recorder dump (version, pg_config, entries)"
        )
    return dump


def _rank_of(path: Path) -> int:
    m = _TRAILING.search(path.name)
    if not m:
        raise UsageError(
            f"{path}: a Flight Recorder dump names its rank only in its file name (the trailing "
            "number, as TORCH_FR_DUMP_TEMP_FILE writes it, e.g. nccl_trace_rank_3): rename it so"
        )
    return int(m.group(1))


def _ranks_text(value, where: str) -> tuple:
    try:
        ranks = json.loads(value) if isinstance(value, str) else value
        if not isinstance(ranks, list) or not all(
            isinstance(r, int) and not isinstance(r, bool) and 0 <= r < 1 << 20 for r in ranks
        ):
            raise ValueError
    except ValueError:
        raise UsageError(f"{where} {str(value)[:60]!r}: expected the group's ranks, e.g. '[0, 1, 2, 3]'") from None
    return tuple(ranks)


def _groups(path: Path, dump: dict) -> dict:
    """Group name and description -> ranks, from pg_config (checked)."""
    config = dump.get("pg_config") or {}
    if not isinstance(config, dict):
        raise UsageError(f"{path}: $.pg_config is not an object; expected group name -> {{name, desc, ranks}}")
    out = {}
    for key, g in config.items():
        if not isinstance(g, dict):
            raise UsageError(f"{path}: $.pg_config[{key!r}] is not an object; expected {{name, desc, ranks}}")
        ranks = _ranks_text(g.get("ranks", "[]"), f"{path}: $.pg_config[{key!r}].ranks")
        # gloo's dumps leave the default group's name and description empty (torch 2.13)
        for name in ({str(key), str(g.get("name", "")), str(g.get("desc", ""))} - {""}) or {"default_pg"}:
            out[name] = ranks
    return out


def _number(entry: dict, key: str, where: str, default=None):
    value = entry.get(key, default)
    if value is None:
        return default
    # a JSON integer past a float (10**400) is no time or count either: float() raises, the value is refused
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= _as_float(value) < float("inf"):
        raise UsageError(f"{where}.{key} {str(value)[:40]!r}: expected a non-negative number")
    return value


def _as_float(value) -> float:
    try:
        return float(value)
    except OverflowError:
        return float("inf")


def _size_bytes(collective: str, entry: dict, group_size: int) -> tuple[int | None, str]:
    """nccl-tests' size from the entry's shapes and element type (trace/kernels.py's rule)."""
    dtypes = entry.get("input_dtypes") or entry.get("output_dtypes") or []
    dtype = str(dtypes[0]) if isinstance(dtypes, list) and dtypes else ""
    elt = K.element_bytes(dtype)
    if not elt:
        return None, K.dtype_name(dtype) if dtype else ""
    count = [sum(_elements(s) for s in (entry.get(k) or [])) for k in ("input_sizes", "output_sizes")]
    if max(count) >= 1 << 62:  # no tensor holds 2^62 elements: a dump's sizes out of range say no size
        return None, K.dtype_name(dtype)
    return K.whole_elements(collective, count[0], count[1], group_size) * elt, K.dtype_name(dtype)


def _elements(shape) -> int:
    """A tensor's element count from its shape: dimensions that are whole numbers >= 0, else 0 (no size)."""
    if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        return 0
    return math.prod(shape)


@dataclass
class _Entry:
    group: str
    seq: int
    op: str
    created_s: float
    duration_s: float | None
    started_s: float | None
    state: str
    entry: dict


def _entries(path: Path, dump: dict) -> list[_Entry]:
    out = []
    for i, e in enumerate(dump.get("entries") or []):
        where = f"{path}: $.entries[{i}]"
        if not isinstance(e, dict):
            raise UsageError(f"{where} is not an object; expected a Flight Recorder entry")
        pg = e.get("process_group") or ("", "")
        if not isinstance(pg, (list, tuple)) or len(pg) != 2:
            raise UsageError(f"{where}.process_group {str(pg)[:40]!r}: expected [group name, description]")
        p2p = bool(e.get("is_p2p"))
        seq = _number(e, "p2p_seq_id" if p2p else "collective_seq_id", where, 0)
        duration_ms = _number(e, "duration_ms", where)
        started = _number(e, "time_discovered_started_ns", where)
        label = str(pg[1]) if pg[1] and pg[1] != "undefined" else str(pg[0])
        out.append(
            _Entry(
                label + (" (p2p)" if p2p else ""),
                int(seq),
                str(e.get("profiling_name", "")),
                _number(e, "time_created_ns", where, 0) * NS,
                duration_ms / 1e3 if duration_ms is not None else None,
                started * NS if started else None,
                str(e.get("state", "")),
                e,
            )
        )
    return sorted(out, key=lambda x: x.created_s)


def read_dump(path):
    """One rank's dump -> a RankTrace of its calls (trace/read.py's type) and what it covers per group."""
    path = Path(path)
    dump = load(path)
    rank = _rank_of(path)
    groups = _groups(path, dump)
    entries = _entries(path, dump)
    world_ranks = max(groups.values(), key=len, default=())
    world = max(len(world_ranks), rank + 1)
    windows: dict[str, GroupWindow] = {}
    calls = []
    for k, e in enumerate(entries):
        w = windows.get(e.group)
        windows[e.group] = GroupWindow(w.first_seq if w else e.seq, e.seq, e.op) if not w or e.seq >= w.last_seq else w
        name = e.op.split(":", 1)[-1]
        collective = BARRIER if BARRIER in name else K.collective_of(name)
        if collective is None:
            continue
        ranks = groups.get(e.group.removesuffix(" (p2p)")) or (world_ranks if "default" in e.group else ())
        p = len(ranks) or world
        # a group whose ranks the dump does not list: its size from one block per rank (the larger of a rank's input
        # and output is the whole buffer), not from a guessed rank count
        size, dtype = (None, "") if collective == BARRIER else _size_bytes(collective, e.entry, len(ranks) or 1)
        if e.duration_s is not None:
            start, time_s = (e.started_s or e.created_s), e.duration_s
        elif k + 1 < len(entries):
            start, time_s = e.created_s, entries[k + 1].created_s - e.created_s
        else:
            start, time_s = e.created_s, float("nan")
        calls.append(
            Call(
                rank,
                e.group,
                tuple(ranks),
                collective,
                size,
                dtype,
                p,
                "-",
                "-",
                start,
                time_s,
                e.created_s,
                e.seq,
                state=e.state,
                timed=e.duration_s is not None,
            )
        )
    notes = []
    if calls and all(not c.timed for c in calls):
        notes.append(
            "Flight Recorder dumps without durations (gloo, or NCCL without TORCH_NCCL_ENABLE_TIMING=1): a call's end "
            "is taken as the rank's next enqueue; no computation is recorded, so no step view"
        )
    backend = entries[0].op.split(":", 1)[0] if entries else ""
    version = str(dump.get("comm_lib_version") or "") or None
    return RankTrace(
        str(path),
        rank,
        world,
        backend,
        version,
        None,
        None,
        dict(groups),
        calls,
        np.empty((0, 3)),
        [],
        notes,
        windows=windows,
        kind=KIND,
    )
