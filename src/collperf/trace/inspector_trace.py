"""NCCL Inspector's JSON lines (NCCL >= 2.28.3, plugins/profiler/inspector) as `collperf trace` input: each record
one call on one rank, matched across ranks by communicator, collective and sequence number.

A record (inspector_json.cc; the schema is checked by ingest/inspector.py, which diagnose reads the same files with):
  header    id (the communicator's hash), comm_name, rank (in the communicator), n_ranks, nnodes
  metadata  inspector_output_format_version, hostname, pid, dump_timestamp_us
  coll_perf coll (ncclFuncToString), coll_sn (counted per collective type: comm->seqNumber[func]),
            coll_msg_size_bytes (type size x the API's count, inspector_plugin.cc: per rank for AllGather and
            ReduceScatter, whose whole buffer is n_ranks of them, inspector.cc's trafficSize), coll_exec_time_us,
            coll_timing_source (kernel_gpu, kernel_cpu, collective_cpu); v4.2 adds coll_algo and coll_proto
            (ncclAlgoToString/ncclProtoToString: RING, LL), older dumps may carry algo_proto ('Ring_ll');
            with NCCL_INSPECTOR_DUMP_VERBOSE=1, event_trace_ts.kernel_events[].kernel_start_ts/kernel_stop_ts
            (microseconds of gettimeofday, inspector.cc inspectorGetTime)
  dump_stats  (v4.1 and later) one per communicator and dump: coll_dropped_total, p2p_dropped_total, the records the
            ring buffer overwrote before the dump thread wrote them (cumulative)
The v4.1/v4.2 fields are those of NVIDIA/nccl's Inspector changes after 2.30.7 (the dump_stats record; the comm-patterns
README: coll_algo/coll_proto), not yet in the 2.30.7 tree, which writes v4.0.

Without kernel times, a call is taken to end at the same moment on every rank (a collective completes together),
so a rank's longer time is time it waited: the shortest time is the transfer, the rank with it arrived last.
Files are read line by line; a call keeps a few numbers.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from collperf.errors import UsageError
from collperf.ingest import validate as v
from collperf.ingest.inspector import check_record, collective_name, numbered_records
from collperf.trace import kernels as K
from collperf.trace.events import Call, RankTrace

KIND = "nccl inspector"
US = 1e-6
SNIFF_BYTES = 4096
# where a call without kernel times ends, on a clock of its own: its sequence number x this (s), per collective type
_SPACING_S = 1e3
WITHOUT_KERNEL_TIMES = (
    "Inspector records without kernel times (NCCL_INSPECTOR_DUMP_VERBOSE=1 writes them): a call is "
    "taken to end together on every rank, so a rank's longer time is waiting: the shortest is the "
    "transfer"
)


def is_inspector(path) -> bool:
    """A JSON-lines file whose first record has Inspector's header and a coll_perf, p2p_perf or dump_stats."""
    try:
        with open(path, "rb") as f:
            head = f.read(SNIFF_BYTES)
    except OSError:
        return False
    first = head.lstrip().split(b"\n", 1)[0]
    return (
        first.startswith(b"{")
        and b'"header"' in first
        and any(k in first for k in (b'"coll_perf"', b'"p2p_perf"', b'"dump_stats"'))
    )


def _algo_proto(perf: dict) -> tuple[str, str]:
    """(algorithm, protocol) in the kernel names' spelling (trace/kernels.py), '-' where the record has none."""
    algo, proto = perf.get("coll_algo", ""), perf.get("coll_proto", "")
    if not algo and perf.get("algo_proto"):
        algo, _, proto = perf["algo_proto"].partition("_")
    return (K.ALGORITHMS.get(str(algo).upper(), "-"), K.PROTOCOLS.get(str(proto).upper(), "-"))


def _kernel_times(perf: dict) -> tuple[float, float] | None:
    trace = perf.get("event_trace_ts")
    events = trace.get("kernel_events") if isinstance(trace, dict) else None
    if not isinstance(events, list):
        return None
    starts = [e.get("kernel_start_ts") for e in events if isinstance(e, dict)]
    stops = [e.get("kernel_stop_ts") for e in events if isinstance(e, dict)]
    ok = lambda x: isinstance(x, (int, float)) and not isinstance(x, bool) and 0 < x < 2**62
    starts, stops = [s for s in starts if ok(s)], [s for s in stops if ok(s)]
    if not starts or not stops or max(stops) < min(starts):
        return None
    return min(starts) * US, max(stops) * US


def _records(path: Path, out: list, drops: dict, skipped: list) -> None:
    """The file's collective records appended to `out` as (comm, comm rank, n_ranks, host, pid, (perf, collective,
    nccl-tests' size, time_s));
    dump_stats into `drops`; each unreadable line counted in `skipped`."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, rec in numbered_records(f):
            try:
                if isinstance(rec, str):
                    raise v.BadValue(rec)
                if not isinstance(rec, dict):
                    raise v.BadValue("not a JSON object")
                head, meta = rec.get("header") or {}, rec.get("metadata") or {}
                if not isinstance(head, dict) or not isinstance(meta, dict):
                    raise v.BadValue("header or metadata is not an object")
                comm, rank = str(head.get("id", "?"))[:40], v.whole(head.get("rank", 0), "rank", 0, v.MAX_RANK)
                if "dump_stats" in rec:
                    stats = rec["dump_stats"] if isinstance(rec["dump_stats"], dict) else {}
                    lost = v.whole(stats.get("coll_dropped_total", 0), "coll_dropped_total", 0, 2**62)
                    drops[(comm, rank)] = max(drops.get((comm, rank), 0), lost)
                    continue
                if "p2p_perf" in rec and "coll_perf" not in rec:
                    continue  # send/recv records carry no partner's sequence: not matched, not read
                check_record(rec)
                perf = rec["coll_perf"]
                n_ranks = v.whole(head.get("n_ranks", 1), "n_ranks", 1, v.MAX_RANK)
                name = collective_name(perf["coll"]) or "unknown"
                size = v.size_bytes(perf["coll_msg_size_bytes"]) * (
                    n_ranks if name in ("allgather", "reducescatter") else 1
                )
                if size > v.MAX_SIZE_BYTES:
                    raise v.BadValue(
                        f"a {name} of {size} bytes (coll_msg_size_bytes x n_ranks): expected at most {v.MAX_SIZE_BYTES}"
                    )
                time_s = v.time_us(perf["coll_exec_time_us"], "coll_exec_time_us") * US
                pid = meta.get("pid")  # a process is its host and pid: a pid of another type is none
                pid = pid if isinstance(pid, int) and not isinstance(pid, bool) else None
                out.append((comm, rank, n_ranks, str(meta.get("hostname", ""))[:80], pid, (perf, name, size, time_s)))
            except v.BadValue as e:
                skipped.append(f"{path.name} line {number}: {e}")


def read_inspector(paths) -> list[RankTrace]:
    """Every Inspector file of a job -> one RankTrace per process (a process: its host and pid; its rank: its rank
    in the communicator with the most ranks)."""
    records: list = []
    drops: dict = {}
    skipped: list = []
    for p in paths:
        _records(Path(p), records, drops, skipped)
    if not records:
        why = f": {skipped[0]}" if skipped else ""
        raise UsageError(
            f"{paths[0]}: no NCCL Inspector collective record{why}; expected JSON lines with header and "
            "coll_perf (NCCL_INSPECTOR_ENABLE=1, NCCL_INSPECTOR_DUMP_DIR)"
        )
    world = max({(r[0], r[2]) for r in records}, key=lambda c: (c[1], c[0]))[0]
    process = {(host, pid): rank for comm, rank, _, host, pid, *_ in records if comm == world}
    members = defaultdict(set)
    for comm, rank, _, host, pid, *_ in records:
        if (host, pid) in process:
            members[comm].add(process[(host, pid)])
    n_world = max(r[2] for r in records if r[0] == world)
    traces: dict = {}
    no_kernel = 0
    for comm, rank, n_ranks, host, pid, call in records:
        r = process.get((host, pid))
        if r is None:
            continue
        t = traces.get(r) or traces.setdefault(
            r,
            RankTrace(
                ", ".join(map(str, paths)),
                r,
                n_world,
                "nccl",
                None,
                None,
                host or None,
                {},
                [],
                np.empty((0, 3)),
                [],
                [],
                kind=KIND,
            ),
        )
        label = "world" if comm == world else f"comm {comm}"
        ranks = tuple(sorted(members[comm])) if len(members[comm]) == n_ranks else ()
        t.groups[label] = ranks
        no_kernel += _call(t, label, ranks, n_ranks, *call)
    out = [traces[r] for r in sorted(traces)]
    notes = out[0].notes
    lost = sum(drops.values())
    if lost:
        notes.append(
            f"the Inspector dropped {lost} collective record(s) before writing them (dump_stats "
            "coll_dropped_total): the calls here are a sample; raise NCCL_INSPECTOR_DUMP_COLL_RING_SIZE or "
            "shorten NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS"
        )
    if no_kernel:
        notes.append(WITHOUT_KERNEL_TIMES)
    if skipped:
        notes.append(
            f"{len(skipped)} Inspector line(s) skipped ({'; '.join(skipped[:2])}{', ...' if len(skipped) > 2 else ''})"
        )
    if any(not t.groups.get("world") for t in out):
        notes.append("not every rank's Inspector file is given: a group's calls are matched among the ranks present")
    return out


def _call(t: RankTrace, label: str, ranks: tuple, p: int, perf: dict, name: str, size: int, time_s: float) -> int:
    """One record (checked) as a Call on its rank; 1 when it has no kernel times (its end is set as the module
    says)."""
    seq = perf.get("coll_sn")
    seq = int(seq) if isinstance(seq, (int, float)) and 0 <= seq < 2**53 else None
    algorithm, protocol = _algo_proto(perf)
    kernel = _kernel_times(perf)
    if kernel is not None:
        start, time_s = kernel[0], kernel[1] - kernel[0]
    else:
        start = (seq or 0) * _SPACING_S - time_s
    t.calls.append(
        Call(t.rank, label, ranks, name, size, "", p, algorithm, protocol, start, time_s, start, seq, seq_scope=name)
    )
    return 0 if kernel is not None else 1
