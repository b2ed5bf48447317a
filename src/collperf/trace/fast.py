"""The C-parser path of the trace reader: msgspec decodes a run of whole events of `traceEvents` at a time into
typed structs of only the fields the reduction reads (the others are skipped in C, never made into objects),
and `add_batch` keeps of them exactly what `Collected.add` keeps of the same events decoded by json.

Why msgspec: on a 100 MB synthetic Kineto trace (benchmarks/README.md; msgspec 0.23, orjson 3.13), decoding
the event array into structs of the read fields took 1.6 s against orjson's 2.6 s, untyped msgspec's 2.9 s
and `json.loads`'s 3.8 s (0.7, -, 1.1 and 1.8 s with the cyclic GC off): the others build every field of
every event as a Python object, and gc=False structs are not tracked by the GC.

All or nothing, so that the result is exact: a batch whose every event is what torch.profiler writes (the
types below, values in range, args that pass trace/checks.py) is kept here; anything else (a value msgspec
decodes differently from json or refuses: NaN, a lone surrogate, a number past 64 bits, nesting past its
depth; a field of another type; a value out of range) makes the batch fall back to the streaming decoder
(stream.py), which reads those events exactly as before, skips and counts what it skipped.
"""

from __future__ import annotations

import json
from typing import Any

from collperf.trace import checks as C
from collperf.trace.events import C10D_PREFIX, GLOO_PREFIX, KERNEL_ARGS, STEP_PREFIX, HostOp, LAUNCH_CATS, Collected

try:
    import msgspec
except ImportError:  # the optional extra: `pip install collperf[fast]`; the pure-Python reader stands in
    msgspec = None

WHY_SLOW = (
    "msgspec is not installed: traces are read by the pure-Python streaming reader (about 5x slower); "
    "pip install msgspec (or collperf[fast]) for the C parser"
)


def available() -> bool:
    return msgspec is not None


class _Slow(Exception):
    """An event the fast path does not keep exactly as the streaming reader would: the batch is read again there."""


if msgspec is not None:
    _UNSET = msgspec.UNSET

    def _arg(key: str):
        return msgspec.field(default=_UNSET, name=key)

    # the args read (events.py's KERNEL_ARGS and a c10d op's shapes), by attribute; other keys are skipped in C
    _NAMES = {
        "Collective name": "collective",
        "In msg nelems": "in_nelems",
        "Out msg nelems": "out_nelems",
        "Group size": "group_size",
        "dtype": "dtype",
        "In split size": "in_split",
        "Process Group Name": "pg_name",
        "Process Group Description": "pg_desc",
        "Process Group Ranks": "pg_ranks",
        "Seq": "seq",
        "correlation": "correlation",
        "External id": "external_id",
        "Input Dims": "dims",
        "Input type": "types",
    }
    assert set(KERNEL_ARGS) <= set(_NAMES), "an arg read by events.py is not decoded here"
    # a c10d op's shapes are kept undecoded (as their JSON text) until an op that needs them: every aten op has them
    _RAW = ("dims", "types")
    _Args = msgspec.defstruct(
        "_Args", [(attr, msgspec.Raw if attr in _RAW else Any, _arg(key)) for key, attr in _NAMES.items()], gc=False
    )
    _KERNEL_ATTRS = tuple((key, _NAMES[key]) for key in KERNEL_ARGS)

    class _Event(msgspec.Struct, gc=False):
        ph: Any = _UNSET
        name: str = _UNSET
        cat: str = _UNSET
        ts: float = _UNSET  # an int is taken as its float, as checks.timestamp takes it
        dur: float = _UNSET
        tid: int | str | None = None
        args: _Args | None = None

    _DECODER = msgspec.json.Decoder(list[_Event])
    _EMPTY = _Args()


def decode(text: str) -> list | None:
    """The events of a JSON array's text, or None where msgspec refuses it (it is then read the slow way)."""
    try:
        return _DECODER.decode(text)
    except (msgspec.DecodeError, RecursionError):
        return None


def _checked(check, *args):
    try:
        return check(*args)
    except C.BadValue:
        raise _Slow from None


def _args(a) -> dict:
    """The kernel args present, as the dict json would give (null values are absent to kernel_args)."""
    return {key: v for key, attr in _KERNEL_ATTRS if (v := getattr(a, attr)) is not _UNSET}


def _correlation(value) -> int:
    """args.correlation of a compute kernel other than a plain int: -1 where none (or a string id, as Collected
    keeps it)."""
    if value is None or value is _UNSET:
        return -1
    value = _checked(C.identifier, value, "args.correlation")
    return value if isinstance(value, int) else -1


def add_batch(c: Collected, events: list) -> bool:
    """Keep what `c.add` would keep of each event, in order; False (and `c` untouched) where one of them is not
    what this path keeps exactly."""
    try:
        kept = _reduce(events, c.events)
    except _Slow:
        return False
    kernels, gpu, launches, cpu, steps, c10d, gloo, tids, meta, kernel_count = kept
    c.kernels += kernels
    c.gpu_compute.extend(gpu)
    c.launches.extend(launches)
    c.cpu_ops.extend(cpu)
    c.steps += steps
    c.c10d += c10d
    c.gloo += gloo
    c.gloo_tids |= tids
    c.comms_meta.update(meta)
    c.kernel_count += kernel_count
    c.events += len(events)
    return True


def _reduce(events: list, first_index: int) -> tuple:
    """Collected._add's choices, event kind by event kind, on the decoded structs (the same order of cases)."""
    kernels, gpu, launches, cpu, steps, c10d, gloo, tids, meta = [], [], [], [], [], [], [], set(), {}
    kernel_count = 0
    max_ts, max_dur, max_id = C.MAX_TS_US, C.MAX_DUR_US, C.MAX_ID
    for index, e in enumerate(events, first_index):
        if e.ph != "X":
            continue
        name, cat, ts, dur = e.name, e.cat, e.ts, e.dur
        # a missing name, ts or dur, NaN or out of range: the streaming reader's message and count
        if name is _UNSET or ts is _UNSET or dur is _UNSET or not (-max_ts <= ts <= max_ts and 0 <= dur <= max_dur):
            raise _Slow
        cat = "" if cat is _UNSET else cat.lower()
        a = e.args if e.args is not None else _EMPTY
        if cat == "kernel":
            kernel_count += 1
            if name.startswith(("nccl", "rccl")) and "Kernel" in name[:16]:
                if dur <= 0:
                    raise _Slow
                kernels.append(
                    {
                        "name": name,
                        "ts": ts,
                        "dur": dur,
                        "args": _checked(C.kernel_args, _args(a), KERNEL_ARGS),
                        "index": index,
                    }
                )
            else:
                corr = a.correlation
                if type(corr) is not int or not -max_id <= corr <= max_id:
                    corr = _correlation(corr)
                gpu += (ts, ts + dur, corr)
            continue
        if cat in LAUNCH_CATS:
            corr = a.correlation
            if corr is not None and corr is not _UNSET:
                if type(corr) is not int or not -max_id <= corr <= max_id:
                    corr = _checked(C.whole, corr, "args.correlation", -max_id, max_id)
                launches += (corr, ts)
            continue
        if name.startswith(STEP_PREFIX) and not cat.startswith("gpu"):
            steps.append((name, ts, ts + dur))
            continue
        tid = e.tid
        if type(tid) is int and not -max_id <= tid <= max_id:
            raise _Slow
        if name.startswith(GLOO_PREFIX):
            gloo.append(_host_op(name, ts, dur, a))
            tids.add(tid)
            continue
        if cat != "cpu_op":
            continue
        if name.startswith(C10D_PREFIX):
            c10d.append(_host_op(name, ts, dur, a))
        elif a.collective is not _UNSET and a.external_id not in (_UNSET, None):
            found = _checked(C.kernel_args, _args(a), KERNEL_ARGS)
            meta[found["External id"]] = found
        cpu += (float(tid) if type(tid) is int else -1.0, ts, ts + dur)
    return kernels, gpu, launches, cpu, steps, c10d, gloo, tids, meta, kernel_count


def _json(raw):
    """A value kept as its JSON text, decoded as the streaming reader decodes it (json)."""
    if raw is _UNSET:
        return None
    try:
        return json.loads(bytes(raw))
    except (ValueError, RecursionError):  # NaN is json's; a number of thousands of digits, deep nesting
        raise _Slow from None


def _host_op(name: str, ts: float, dur: float, a) -> HostOp:
    dims, types = _json(a.dims), _json(a.types)
    return HostOp(
        name, ts, dur, _checked(C.dims, dims, "args.'Input Dims'"), _checked(C.types, types, "args.'Input type'")
    )
