"""NCCL's example profiler plugin traces, read into per-rank calls and per-peer proxy waits.

The plugin (NCCL 2.30.7 plugins/profiler/example: plugin.cc openTraceFile, print_event.cc) writes, when a
communicator is finalized, one file per communicator and rank, `${NCCL_PROFILE_DUMP_FILE}_<commHash>_<rank>.json`:
a line `[`, one Chrome-trace event per line followed by a comma, and `{}]`. Events are asynchronous ('ph' 'b' and
'e'), printed nested: a collective's `b`, then per channel its KernelCh `b`, its proxy operations (Schedule/Progress
Send/Recv, each holding its network steps), the KernelCh `e`, and the collective's `e`. What is read:

  cat COLL, ph b   name: the collective (ncclFuncToString: AllReduce, AllGather, ...); args SeqNum (its number in
                   the communicator, counted per collective type: comm->seqNumber[func], src/plugin/profiler.cc),
                   CommHash, Rank (in the communicator), Count (elements per rank, as the API call takes them),
                   Datatype (ncclDatatypeToString: ncclFloat32, ...), Algorithm, Protocol, nChannels
  cat P2P, ph b    name Send/Recv; args CommHash, Rank, Peer, Count, Datatype
  cat GPU KernelCh args Channel, StartGpuClk, StopGpuClk: when the kernel started and stopped on that channel,
                   from the GPU's %globaltimer (ns; src/device/common.h): the one clock the ranks share (a host's
                   GPUs, and hosts as far as their clocks agree)
  cat PROXY        ScheduleSend/ProgressSend/ScheduleRecv/ProgressRecv, args Channel and Peer: the proxy
                   operations of one channel with one peer
  cat NET          per network step, the proxy thread's waits (plugins/profiler/example/README.md):
                   SendGpuWait (for its GPU to fill the buffer), SendPeerWait (for the peer to free a buffer),
                   SendWait (for the send to complete: the wire), RecvWait (for data from the peer),
                   RecvFlushWait, RecvGpuWait (for its GPU to consume the data)
Event `ts` is microseconds of the process's steady clock since the plugin started: not comparable across ranks, so
a call's start and end are its kernel's GPU clocks; a call without KernelCh events (NCCL_PROFILE_EVENT_MASK without
64, ncclProfileKernelCh) has only that clock and is kept out of the cross-rank comparison. Copy-engine collectives
(CE_COLL, profiler v6) carry no sequence number and are not read.

The file is read line by line, an event's JSON decoded only when its category is one of those above; what is kept
per call is a few numbers, so memory grows with the calls, not the file.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from collperf.errors import UsageError
from collperf.trace import kernels as K
from collperf.trace.events import Call, RankTrace

KIND = "nccl profiler plugin"
NS, US = 1e-9, 1e-6
_NAME = re.compile(r"_(\d{1,20})_(\d{1,9})\.json$")  # _<commHash>_<rank>.json (plugin.cc openTraceFile)
_CATEGORY = re.compile(r'"cat"\s*:\s*"([A-Z_]+)"')
_READ = {"COLL", "P2P", "GPU", "PROXY", "NET"}
_WAITS = ("SendGpuWait", "SendPeerWait", "SendWait", "RecvWait", "RecvFlushWait", "RecvGpuWait")
_FUNCS = {
    "AllReduce": "allreduce",
    "AllGather": "allgather",
    "ReduceScatter": "reducescatter",
    "Broadcast": "broadcast",
    "Reduce": "reduce",
    "AlltoAll": "alltoall",
    "Send": "sendrecv",
    "Recv": "sendrecv",
}
SNIFF_BYTES = 4096
MAX_NUMBER = float(2**64)


def is_plugin_trace(path) -> bool:
    """A JSON array whose first event has a category the plugin writes and a `pid` (print_event.cc's layout)."""
    try:
        with open(path, "rb") as f:
            head = f.read(SNIFF_BYTES)
    except OSError:
        return False
    text = head.lstrip()
    return (
        text.startswith(b"[")
        and b'"ph"' in head
        and b'"cat"' in head
        and b'"traceEvents"' not in head
        and any(f'"cat": "{c}"'.encode() in head for c in ("GROUP_API", "COLL", "P2P", "PROXY", "GROUP"))
    )


@dataclass
class LinkWait:
    """What one rank's proxy waited, summed over one call's network steps with one peer in one direction."""

    peer: int
    send: bool
    waits_s: dict  # SendWait, SendPeerWait, ... -> seconds


@dataclass
class _Call:
    comm: str
    rank: int  # in the communicator
    func: str
    seq: int | None
    count: int
    dtype: str
    algorithm: str
    protocol: str
    peer: int | None = None
    gpu_start_ns: float = float("inf")
    gpu_stop_ns: float = 0.0
    cpu_start_us: float = 0.0
    cpu_stop_us: float = float("nan")
    links: dict = field(default_factory=lambda: defaultdict(lambda: defaultdict(float)))


@dataclass
class PluginFile:
    path: Path
    comm: str
    rank: int
    pid: int | None
    calls: list
    skipped: int


def _num(args: dict, key: str, where: str, default=None):
    value = args.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < MAX_NUMBER:
        raise ValueError(f"{where}: {key} {str(value)[:40]!r}: expected a non-negative number")
    return value


def _text(args: dict, key: str) -> str:
    value = args.get(key, "")
    return value[:64] if isinstance(value, str) else ""


def read_file(path) -> PluginFile:
    """One plugin file: its communicator, rank, process id and calls (checked line by line; a line that is not an
    event the plugin writes is skipped and counted)."""
    path = Path(path)
    named = _NAME.search(path.name)
    calls: list[_Call] = []
    skipped = 0
    pid = None
    call: _Call | None = None
    proxy: tuple | None = None  # (peer, send) of the proxy operation being read
    net: dict = {}  # name -> its b's ts
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            line = line.strip().rstrip(",")
            m = _CATEGORY.search(line[:200])
            if not m or m.group(1) not in _READ:
                continue
            try:
                e = json.loads(line)
                if not isinstance(e, dict) or e.get("ph") not in ("b", "e"):
                    raise ValueError("not an async event")
                ts = _num(e, "ts", f"line {number}", 0.0)
                pid = pid if pid is not None else e.get("pid") if isinstance(e.get("pid"), int) else None
                args = e.get("args") if isinstance(e.get("args"), dict) else {}
                cat, name, begin = m.group(1), str(e.get("name", "")), e["ph"] == "b"
                if cat in ("COLL", "P2P"):
                    if begin:
                        call = _begin(cat, name, args, ts, f"line {number}")
                    elif call is not None:
                        call.cpu_stop_us = ts
                        calls.append(call)
                        call = None
                elif call is None:
                    continue
                elif cat == "GPU" and begin:
                    start, stop = (
                        _num(args, "StartGpuClk", f"line {number}", 0),
                        _num(args, "StopGpuClk", f"line {number}", 0),
                    )
                    if 0 < start <= stop:
                        call.gpu_start_ns, call.gpu_stop_ns = min(call.gpu_start_ns, start), max(call.gpu_stop_ns, stop)
                elif cat == "PROXY" and begin and name.startswith("Progress"):
                    proxy = (int(_num(args, "Peer", f"line {number}", 0)), name.endswith("Send"))
                elif cat == "NET" and name in _WAITS and proxy is not None:
                    if begin:
                        net[name] = ts
                    elif name in net:
                        call.links[proxy][name] += max(0.0, ts - net.pop(name)) * US
            except (ValueError, TypeError, KeyError, RecursionError):
                skipped += 1
    if not calls and not named:
        raise UsageError(
            f"{path}: no collective in this NCCL profiler plugin trace (no 'COLL' event): record with "
            "NCCL_PROFILE_EVENT_MASK including 2 (ncclProfileColl) and 64 (ncclProfileKernelCh)"
        )
    comm = calls[0].comm if calls else f"0x{int(named.group(1)):x}"
    rank = calls[0].rank if calls else int(named.group(2))
    return PluginFile(path, comm, rank, pid, calls, skipped)


def _begin(cat: str, name: str, args: dict, ts: float, where: str) -> _Call:
    func = _FUNCS.get(name)
    if func is None:
        raise ValueError(f"{where}: {name[:30]!r} is not a collective")
    comm = f"0x{int(_num(args, 'CommHash', where, 0)):x}"
    seq = _num(args, "SeqNum", where) if cat == "COLL" else None
    algorithm = K.ALGORITHMS.get(_text(args, "Algorithm").upper(), "-")
    protocol = K.PROTOCOLS.get(_text(args, "Protocol").upper(), "-")
    peer = int(_num(args, "Peer", where, 0)) if cat == "P2P" else None
    return _Call(
        comm,
        int(_num(args, "Rank", where, 0)),
        name if cat == "COLL" else "p2p",
        int(seq) if seq is not None else None,
        int(_num(args, "Count", where, 0)),
        _text(args, "Datatype").removeprefix("nccl"),
        algorithm,
        protocol,
        peer,
        cpu_start_us=ts,
    )


def _size(c: _Call, collective: str, p: int) -> int | None:
    """nccl-tests' size from the API's per-rank count: an all-gather's count is what each rank sends, a
    reduce-scatter's what each receives (the whole is p of them)."""
    elt = K.element_bytes(c.dtype)
    if not elt:
        return None
    if collective == "sendrecv":
        return c.count * elt
    held_in, held_out = {"allgather": (c.count, c.count * p), "reducescatter": (c.count * p, c.count)}.get(
        collective, (c.count, c.count)
    )
    return K.whole_elements(collective, held_in, held_out, p) * elt


def read_plugin(paths) -> list[RankTrace]:
    """Every plugin file of a job -> one RankTrace per process. A process's rank is its rank in the largest
    communicator (the world); a file of a smaller communicator is the process's with the same pid (the files
    state no host: pids are taken to be unique among the files given)."""
    files = [read_file(p) for p in paths]
    members: dict[str, set] = defaultdict(set)
    for f in files:
        members[f.comm].add(f.rank)
    world = max(members, key=lambda c: (len(members[c]), c))
    by_pid = defaultdict(set)
    for f in files:
        if f.comm == world:
            by_pid[f.pid].add(f.rank)
    notes = []
    owner: dict = {}
    for f in files:
        ranks = {f.rank} if f.comm == world else by_pid.get(f.pid, set())
        if len(ranks) != 1:
            notes.append(
                f"{f.path.name}: communicator {f.comm} rank {f.rank} has no single process among the world "
                f"communicator's files (pid {f.pid}): its calls are left out"
            )
            continue
        owner[(f.comm, f.rank)] = next(iter(ranks))
    size = max(members[world]) + 1
    traces = {
        r: RankTrace("", r, size, "nccl", None, None, None, {}, [], np.empty((0, 3)), [], [], kind=KIND)
        for r in sorted(members[world])
    }
    untimed = 0
    for f in files:
        r = owner.get((f.comm, f.rank))
        if r is None:
            continue
        t = traces[r]
        t.source = f"{t.source}, {f.path}" if t.source else str(f.path)
        global_ranks = tuple(sorted(owner[(f.comm, cr)] for cr in members[f.comm] if (f.comm, cr) in owner))
        label = "world" if f.comm == world else f"comm {f.comm}"
        t.groups[label] = global_ranks
        if f.skipped:
            t.notes.append(f"{f.path.name}: {f.skipped} line(s) skipped, not events the NCCL profiler plugin writes")
        for c in f.calls:
            untimed += _add(t, c, label, global_ranks, owner, f.comm)
    for t in traces.values():
        t.calls.sort(key=lambda c: c.start_s)
    if untimed:
        notes.append(
            f"{untimed} call(s) without KernelCh events (NCCL_PROFILE_EVENT_MASK without 64): their times are "
            "the plugin's per-process clock, not compared across ranks"
        )
    out = [t for t in traces.values() if t.calls]
    if not out:
        raise UsageError(
            f"{files[0].path}: no collective with a rank in the world communicator among the NCCL "
            "profiler plugin traces given: give every rank's files"
        )
    out[0].notes.extend(notes)
    return out


def _add(t: RankTrace, c: _Call, label: str, ranks: tuple, owner: dict, comm: str) -> int:
    """One call on its rank's trace, its proxy waits beside it; 1 when it has no GPU times."""
    collective = _FUNCS.get(c.func, "sendrecv")
    p = len(ranks) or 1
    timed = c.gpu_stop_ns > 0
    start = c.gpu_start_ns * NS if timed else c.cpu_start_us * US
    time_s = (c.gpu_stop_ns - c.gpu_start_ns) * NS if timed else (c.cpu_stop_us - c.cpu_start_us) * US
    if c.peer is not None:  # a send and its receive share a scope: matched by their order between the two
        peer = owner.get((comm, c.peer), c.peer)
        scope = f"p2p {min(t.rank, peer)}-{max(t.rank, peer)}"
    else:
        scope = collective
    t.calls.append(
        Call(
            t.rank,
            label,
            ranks,
            collective,
            _size(c, collective, p),
            K.dtype_name(c.dtype) if c.dtype else "",
            p,
            c.algorithm,
            c.protocol,
            start,
            time_s if np.isfinite(time_s) else float("nan"),
            start,
            c.seq,
            seq_scope=scope + ("" if timed else f" (rank {t.rank}'s clock)"),
            timed=timed,
        )
    )
    for (peer, send), waits in c.links.items():
        t.links.append(LinkWait(owner.get((comm, peer), peer), send, dict(waits)))
    return 0 if timed else 1
