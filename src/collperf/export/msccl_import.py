"""Read an MSCCL algorithm XML back into our schedule IR.

The file is parsed with expat (stdlib) into an ElementTree with each element's line, so that every
error names the file, the line and the element. Then:
1. Each `<step>` becomes units in its thread block's order: a send, a receive (copy or reduce), or both
   for the combined types (rcs = r then s; rrcs = rrc then s; rrs = rrc then s, the reduced chunk being
   kept, as our IR has no transient values). Local `cpy`/`re` between two places of one chunk (an
   out-of-place copy of the input) carry no data in our IR and are kept only as dependency holders.
2. Sends and receives are matched per connection (sender, receiver, channel) in order, as the executor's
   FIFOs do: the k-th send of gpu a to b on channel c is the k-th receive of b from a on c.
3. Each matched transfer gets a level (its receive's), the longest path to it where a thread block's next operation comes
   one level later, a `nop` without dependency (a filler, see msccl.py) takes one level, and a dependency
   adds a level only where data flows (the operation sends a chunk its dependency wrote); waiting for a
   read, or for another reduction into the same chunk, does not. Levels are our steps.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from xml.parsers import expat

from collperf.collectives import COLLECTIVES
from collperf.errors import UsageError
from collperf.export.msccl import Buffers, MSCCL_COLL, SPLIT
from collperf.ingest import validate as v
from collperf.schedule.ir import COPY, make, REDUCE, step, Transfer
from collperf.schedule.verify import VerificationError, verify

_COLL = {m: c for c, m in MSCCL_COLL.items()} | {"reducescatter": "reducescatter"}
_RECV = {"r": COPY, "rcs": COPY, "rrc": REDUCE, "rrcs": REDUCE, "rrs": REDUCE}
_SENDS = ("s", "rcs", "rrcs", "rrs")
_LOCAL = ("cpy", "re", "res", "ra")
MAX_GPUS = 4096
MAX_CHUNKS = 1 << 20


def _parse(text: str, source: str) -> tuple[ET.Element, dict]:
    builder, lines = ET.TreeBuilder(), {}
    parser = expat.ParserCreate()

    def start(tag, attrs):
        lines[id(builder.start(tag, attrs))] = parser.CurrentLineNumber

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    try:
        parser.Parse(text, True)
        root = builder.close()
    except expat.ExpatError as e:
        raise UsageError(
            f"{source}, line {e.lineno}: broken XML ({expat.ErrorString(e.code)}): expected an MSCCL "
            "algorithm file (<algo ...><gpu ...><tb ...><step .../>)"
        ) from None
    except (AssertionError, IndexError):
        raise UsageError(f"{source}: the XML has no root element: expected <algo ...>") from None
    return root, lines


class _Reader:
    def __init__(self, source: str, lines: dict):
        self.source, self.lines = source, lines

    def error(self, elem, message: str) -> UsageError:
        return UsageError(f"{self.source}, line {self.lines.get(id(elem), '?')}: <{elem.tag}>: {message}")

    def int(self, elem, key: str, lo: int, hi: int) -> int:
        if key not in elem.attrib:
            raise self.error(elem, f"the attribute {key!r} is missing")
        try:
            return v.whole(elem.attrib[key].strip(), key, lo, hi)
        except v.BadValue as e:
            raise self.error(elem, str(e)) from None


@dataclass
class _Unit:
    kind: str  # send, recv, nop (dependency holder or filler), local
    gpu: int
    peer: int = -1
    chan: int = 0
    chunks: tuple = ()
    op: str = COPY
    weight: int = 1  # levels the next unit of the block comes after this one
    elem: object = None
    preds: list = field(default_factory=list)  # (unit index, weight)
    level: int = 0
    partner: int = -1  # a send's receive


def read(path):
    try:
        text = Path(path).read_text(errors="replace")
    except OSError as e:
        raise UsageError(f"cannot read MSCCL XML {str(path)!r}: {e.strerror or e}") from None
    return parse(text, str(path))


def parse(text: str, source: str = "<msccl>"):
    root, lines = _parse(text, source)
    rd = _Reader(source, lines)
    if root.tag != "algo":
        raise rd.error(root, "expected the root element <algo> of an MSCCL algorithm")
    p = rd.int(root, "ngpus", 1, MAX_GPUS)
    collective, algorithm = _names(rd, root)
    per_loop = rd.int(root, "nchunksperloop", 1, MAX_CHUNKS)
    chunks = per_loop * p if collective in SPLIT else per_loop
    gpus = [g for g in root if g.tag == "gpu"]
    ids = [rd.int(g, "id", 0, p - 1) for g in gpus]
    if sorted(ids) != list(range(p)):
        raise rd.error(root, f"gpu ids {sorted(ids)[:8]}: expected one <gpu> for each id 0..{p - 1} (ngpus={p})")
    units, blocks = [], {}
    for g, gid in zip(gpus, ids):
        for tb in (t for t in g if t.tag == "tb"):
            _block(rd, tb, gid, p, units, blocks)
    schedule = None
    for root_rank in _roots(collective, p, units, root.attrib.get("name", "")):
        schedule = _build(rd, root, collective, algorithm, p, chunks, root_rank, units, blocks, source)
        if collective not in ("broadcast", "scatter", "reduce", "gather") or _verifies(schedule):
            break
    return schedule


def _build(rd, root, collective, algorithm, p, chunks, root_rank, units, blocks, source):
    fresh = [_Unit(u.kind, u.gpu, u.peer, u.chan, u.chunks, u.op, u.weight, u.elem, list(u.preds)) for u in units]
    buffers = Buffers.of(collective, p, chunks, root_rank)
    for u in fresh:
        if u.kind in ("send", "recv"):
            u.chunks = tuple(_chunk(rd, buffers, u, *place) for place in u.chunks)
        elif u.kind == "local":
            u.chunks = _local(rd, buffers, u)
    _dependencies(rd, fresh, blocks)
    _match(rd, fresh)
    steps = _levels(rd, root, fresh)
    return make(
        collective,
        algorithm,
        p,
        chunks,
        steps,
        root_rank,
        chunks // p if collective in SPLIT else 0,
        source=source,
        proto=root.attrib.get("proto", ""),
    )


def _verifies(schedule) -> bool:
    try:
        verify(schedule)
    except VerificationError:
        return False
    return True


def _names(rd: _Reader, root) -> tuple[str, str]:
    coll = root.attrib.get("coll", "")
    name = root.attrib.get("name", "")
    words = name.split()
    if len(words) >= 3 and words[0] == "collperf" and words[1] in COLLECTIVES:
        ours, algorithm = words[1], words[2]
    else:
        ours, algorithm = None, name or "msccl"
    collective = _COLL.get(coll) or (ours if coll == "custom" else None)
    if collective is None:
        raise rd.error(
            root,
            f"coll={coll!r}: expected one of {', '.join(sorted(set(MSCCL_COLL.values())))} (or custom "
            "with name='collperf COLLECTIVE ALGORITHM')",
        )
    return collective, algorithm


def _block(rd: _Reader, tb, gid: int, p: int, units: list, blocks: dict) -> None:
    bid = rd.int(tb, "id", 0, 1 << 16)
    send, recv = rd.int(tb, "send", -1, p - 1), rd.int(tb, "recv", -1, p - 1)
    chan = rd.int(tb, "chan", -1, 1 << 10)
    if gid in (send, recv):
        raise rd.error(tb, f"gpu {gid} sends or receives to itself (send={send}, recv={recv})")
    if (gid, bid) in blocks:
        raise rd.error(tb, f"thread block id {bid} appears twice on gpu {gid}")
    steps = [s for s in tb if s.tag == "step"]
    refs = []
    for index, st in enumerate(steps):
        if rd.int(st, "s", 0, 1 << 16) != index:
            raise rd.error(
                st, f"s={st.attrib['s']}: expected the steps of a thread block numbered 0, 1, ... (here {index})"
            )
        kind = st.attrib.get("type", "")
        dep = (rd.int(st, "depid", -1, 1 << 16), rd.int(st, "deps", -1, 1 << 16))
        first = len(units)
        count = rd.int(st, "cnt", 0, MAX_CHUNKS) if kind != "nop" else 0
        src = (st.attrib.get("srcbuf", ""), rd.int(st, "srcoff", -1, MAX_CHUNKS) if kind != "nop" else 0)
        dst = (st.attrib.get("dstbuf", ""), rd.int(st, "dstoff", -1, MAX_CHUNKS) if kind != "nop" else 0)
        if kind in _RECV:
            if recv < 0:
                raise rd.error(st, f"type {kind!r} receives but its thread block has recv=-1")
            into = dst if kind != "rrs" else src
            units.append(
                _Unit(
                    "recv", gid, recv, chan, tuple((into[0], into[1] + i) for i in range(count)), _RECV[kind], elem=st
                )
            )
        if kind in _SENDS:
            if send < 0:
                raise rd.error(st, f"type {kind!r} sends but its thread block has send=-1")
            at = src if kind in ("s", "rrs") else dst
            units.append(_Unit("send", gid, send, chan, tuple((at[0], at[1] + i) for i in range(count)), elem=st))
        if kind in _LOCAL:
            units.append(_Unit("local", gid, chunks=(src, dst, count), weight=0, elem=st))
        if kind == "nop":
            units.append(_Unit("nop", gid, weight=0 if dep[0] >= 0 else 1, elem=st))
        if len(units) == first:
            raise rd.error(st, f"type {kind!r}: expected one of s, r, rcs, rrc, rrcs, rrs, cpy, re, nop")
        for i in range(first + 1, len(units)):
            units[i].preds.append((i - 1, units[i - 1].weight))
        if refs:
            prev = refs[-1][1]
            units[first].preds.append((prev, units[prev].weight))
        refs.append((first, len(units) - 1, dep))
    blocks[(gid, bid)] = refs


def _chunk(rd: _Reader, buffers: Buffers, u: _Unit, buf: str, offset: int) -> int:
    c = buffers.chunk_at(u.gpu, buf, offset)
    if c is None:
        names = "i, o, s" if buffers.collective in SPLIT else "i, o"
        raise rd.error(
            u.elem,
            f"buffer {buf!r} offset {offset} on gpu {u.gpu} holds no chunk of this "
            f"{buffers.collective} ({buffers.chunks} chunks in buffers {names})",
        )
    return c


def _local(rd: _Reader, buffers: Buffers, u: _Unit) -> tuple:
    """A local copy or reduce is only accepted between two places of one chunk (the out-of-place copy of
    an input): it moves no data in our IR."""
    (sb, so), (db, do), count = u.chunks
    for i in range(count):
        a, b = buffers.chunk_at(u.gpu, sb, so + i), buffers.chunk_at(u.gpu, db, do + i)
        if a is None or a != b:
            raise rd.error(
                u.elem,
                f"a local {u.elem.attrib.get('type')} from {sb}[{so + i}] to {db}[{do + i}] moves "
                "data between chunks: collperf's IR has no local operations",
            )
    return ()


def _dependencies(rd: _Reader, units: list, blocks: dict) -> None:
    for (gid, _), refs in blocks.items():
        for first, last, (depid, deps) in refs:
            if depid < 0:
                continue
            target = blocks.get((gid, depid))
            if target is None or not 0 <= deps < len(target):
                raise rd.error(units[first].elem, f"depid={depid} deps={deps}: no such step on gpu {gid}")
            t_first, t_last, _ = target[deps]
            sent = {c for u in units[first : last + 1] if u.kind == "send" for c in u.chunks}
            written = {c for u in units[t_first : t_last + 1] if u.kind == "recv" for c in u.chunks}
            # a level boundary is where data flows from a receive to a send; waiting for a read or for
            # another reduction into the same chunk is ordering within one step
            weight = 1 if sent & written else units[t_last].weight if units[t_last].kind == "nop" else 0
            units[first].preds.append((t_last, weight))


def _match(rd: _Reader, units: list) -> None:
    """Pair the k-th send of (a -> b, channel) with the k-th receive. A send completes into the
    connection's buffer without waiting for its receive (executors run the program per slice that fits
    it); the receive completes no earlier than its send."""
    sends, recvs = {}, {}
    for i, u in enumerate(units):
        if u.kind == "send":
            sends.setdefault((u.gpu, u.peer, u.chan), []).append(i)
        elif u.kind == "recv":
            recvs.setdefault((u.peer, u.gpu, u.chan), []).append(i)
    for key in set(sends) | set(recvs):
        out, into = sends.get(key, []), recvs.get(key, [])
        if len(out) != len(into):
            a, b, c = key
            raise rd.error(
                units[(out or into)[0]].elem,
                f"gpu {a} sends {len(out)} message(s) to gpu {b} on channel "
                f"{c} but gpu {b} receives {len(into)}: every send needs its receive",
            )
        for i, j in zip(out, into):
            if len(units[i].chunks) != len(units[j].chunks) or units[i].chunks != units[j].chunks:
                raise rd.error(
                    units[j].elem,
                    f"receives chunks {list(units[j].chunks)} but the matching send of gpu "
                    f"{units[i].gpu} sends chunks {list(units[i].chunks)}: collperf's IR moves a chunk to "
                    "the same chunk",
                )
            units[i].op, units[i].partner = units[j].op, j
            units[j].preds.append((i, 0))


def _levels(rd: _Reader, root, units: list) -> list:
    """Longest paths (Kahn's order); a cycle of dependencies is a deadlock."""
    n = len(units)
    succ = [[] for _ in range(n)]
    indeg = [0] * n
    for i, u in enumerate(units):
        for j, w in u.preds:
            succ[j].append((i, w))
            indeg[i] += 1
    ready = [i for i in range(n) if indeg[i] == 0]
    done = 0
    while ready:
        j = ready.pop()
        done += 1
        for i, w in succ[j]:
            units[i].level = max(units[i].level, units[j].level + w)
            indeg[i] -= 1
            if indeg[i] == 0:
                ready.append(i)
    if done < n:
        raise rd.error(root, "the dependencies and thread-block orders form a cycle: the algorithm deadlocks")
    by_level: dict[int, dict] = {}
    for u in units:
        if u.kind == "send" and u.chunks:
            merged = by_level.setdefault(units[u.partner].level, {})  # done when received
            merged.setdefault((u.gpu, u.peer, u.op), []).extend(u.chunks)
    return [
        step(Transfer(src, dst, tuple(sorted(set(ch))), op) for (src, dst, op), ch in sorted(by_level[k].items()))
        for k in sorted(by_level)
    ]


def _roots(collective: str, p: int, units: list, name: str) -> list[int]:
    """MSCCL files have no root. Ours name it (`root=R` in the algo name); otherwise the candidates in
    order: for broadcast/scatter ranks that send and never receive, for reduce/gather ranks that receive
    and never send, then the others; the first under which the schedule verifies is taken."""
    if collective not in ("broadcast", "scatter", "reduce", "gather"):
        return [0]
    for word in name.split():
        if word.startswith("root=") and word[5:].isdigit() and int(word[5:]) < p:
            return [int(word[5:])]
    sends = {u.gpu for u in units if u.kind == "send"}
    recvs = {u.gpu for u in units if u.kind == "recv"}
    likely = sends - recvs if collective in ("broadcast", "scatter") else recvs - sends
    return sorted(likely) + [r for r in range(p) if r not in likely]
