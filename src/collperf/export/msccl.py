"""Write a schedule as an MSCCL algorithm XML (read by MSCCL and RCCL's MSCCL executor).

Format facts: microsoft/msccl's algorithm XML and RCCL's MSCCL parser (`<algo>` -> `<gpu>` ->
`<tb>` -> `<step>`; step types s, r, rrc, ..., nop; one dependency per step, further dependencies held by
`nop` steps just before it, the last one on the step itself).

How our IR maps onto it:
- Buffers: one in-place buffer per rank holding the collective's whole buffer (collectives.py), `i` for
  allreduce, reducescatter, scatter, broadcast, reduce and `o` for allgather, gather; the other buffer is
  the rank's slot of it (in-place semantics). Alltoall and sendrecv have distinct buffers: a rank's input
  chunks are `i`, its output chunks `o`, and a chunk it only forwards lives in scratch `s` at its chunk id.
  `location` and `chunk_at` are the two directions of this map.
- Transfers: a transfer (src, dst, chunks, op) at step k becomes a send `s` in src's thread block for dst
  and a `r` (copy) or `rrc` (reduce into the receiver's chunk) in dst's thread block for src. Chunks that
  are not contiguous in both buffers go as several runs, run j on channel j, so that every thread block
  holds at most one operation per step.
- Order: within a thread block operations run in order. Our step number is kept with dependency-free `nop`
  steps (executors skip them): a thread block's operation at step k follows k - (its previous step + 1)
  such fillers, so that counting levels (msccl_import.py) gives back step k exactly, idle steps included.
- Dependencies: an operation waits, on its own GPU, for the operations of other thread blocks that last
  wrote a chunk it reads or writes, or read a chunk it writes (the data hazards); that is what our IR's
  "every transfer reads the state its source had when the step began" requires of independent blocks.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from collperf.collectives import get_collective
from collperf.errors import UsageError
from collperf.schedule.arrays import as_tuples
from collperf.schedule.ir import REDUCE, Schedule

# our collective -> MSCCL's `coll` (RCCL msccl parser); the others go as "custom" with our name in `name`
MSCCL_COLL = {
    "allreduce": "allreduce",
    "allgather": "allgather",
    "reducescatter": "reduce_scatter",
    "broadcast": "broadcast",
    "reduce": "reduce",
    "alltoall": "alltoall",
}
SPLIT = ("alltoall", "sendrecv")  # collectives with distinct input and output buffers
WHOLE_IN_OUTPUT = ("allgather", "gather")  # the whole buffer is the output
MAX_STEPS_PER_TB = 256  # MSCCL executor limit (RCCL's MSCCL executor)
MAX_TBS_PER_CHANNEL = 32
PROTOCOLS = ("Simple", "LL", "LL128")


@dataclass
class Buffers:
    """Where each chunk of a schedule lives on each rank: (buffer letter, offset)."""

    collective: str
    ranks: int
    chunks: int
    root: int = 0
    inputs: list = field(default_factory=list)  # per rank: its input chunks in buffer order
    outputs: list = field(default_factory=list)

    @classmethod
    def of(cls, collective: str, ranks: int, chunks: int, root: int = 0) -> Buffers:
        coll = get_collective(collective)
        whole = coll.blocks(ranks)
        block = [c * whole // chunks for c in range(chunks)]  # the block each chunk lies in (schedule/verify.py)
        b = cls(coll.name, ranks, chunks, root)
        for r in range(ranks):
            held, wanted = set(coll.input_blocks(r, ranks, root)), set(coll.output_blocks(r, ranks, root))
            b.inputs.append([c for c in range(chunks) if block[c] in held])
            b.outputs.append([c for c in range(chunks) if block[c] in wanted])
        return b

    @property
    def whole_buffer(self) -> str:
        return "o" if self.collective in WHOLE_IN_OUTPUT else "i"

    def location(self, rank: int, chunk: int) -> tuple[str, int]:
        if self.collective in SPLIT:
            if chunk in self.inputs[rank]:
                return "i", self.inputs[rank].index(chunk)
            if chunk in self.outputs[rank]:
                return "o", self.outputs[rank].index(chunk)
            return "s", chunk
        return self.whole_buffer, chunk

    def chunk_at(self, rank: int, buf: str, offset: int) -> int | None:
        """The chunk at (buf, offset) on `rank`, or None when that place holds no chunk."""
        if buf == "s":
            return offset if self.collective in SPLIT and 0 <= offset < self.chunks else None
        if self.collective not in SPLIT and buf == self.whole_buffer:
            return offset if 0 <= offset < self.chunks else None
        if self.collective not in SPLIT and get_collective(self.collective).whole == "1":
            return offset if 0 <= offset < self.chunks else None  # input and output are the same buffer
        # the other buffer of an in-place collective is the rank's slot of the whole buffer
        slot = self.inputs[rank] if buf == "i" else self.outputs[rank]
        return slot[offset] if 0 <= offset < len(slot) else None

    def sizes(self, rank: int) -> tuple[int, int, int]:
        """(i_chunks, o_chunks, s_chunks) of `rank`."""
        if self.collective in SPLIT:
            return len(self.inputs[rank]), len(self.outputs[rank]), self.chunks
        whole_is_one = get_collective(self.collective).whole == "1"
        if self.whole_buffer == "o":
            return len(self.inputs[rank]), self.chunks, 0
        return self.chunks, self.chunks if whole_is_one else len(self.outputs[rank]), 0


@dataclass
class _Op:
    kind: str  # s, r, rrc, nop, cpy
    step: int  # our step (-1 for fillers and dependency holders)
    src: tuple = ("i", 0)
    dst: tuple = ("i", 0)
    count: int = 1
    dep: tuple = (-1, -1)
    hasdep: bool = False


@dataclass
class _Block:
    id: int
    send: int
    recv: int
    chan: int
    ops: list = field(default_factory=list)
    level: int = 0  # our steps this block has accounted for (operations and fillers)


def _runs(s_buffers: Buffers, src: int, dst: int, chunks) -> list[list[int]]:
    """Chunks cut where either side's location stops being contiguous."""
    runs: list[list[int]] = []
    for c in sorted(chunks):
        if runs:
            last = runs[-1][-1]
            (sb, so), (db, do) = s_buffers.location(src, last), s_buffers.location(dst, last)
            (sb2, so2), (db2, do2) = s_buffers.location(src, c), s_buffers.location(dst, c)
            if c == last + 1 and sb == sb2 and db == db2 and so2 == so + 1 and do2 == do + 1:
                runs[-1].append(c)
                continue
        runs.append([c])
    return runs


class _Gpu:
    def __init__(self, rank: int):
        self.rank = rank
        self.blocks: dict[tuple, _Block] = {}
        self.writer: dict[int, tuple] = {}  # chunk -> (block id, op index) that last wrote it
        self.readers: dict[int, list[tuple]] = {}  # chunk -> readers since that write
        self.step_writer: dict[int, tuple] = {}  # the same within the step being laid out
        self.step_readers: dict[int, list[tuple]] = {}

    def block(self, role: str, peer: int, chan: int) -> _Block:
        key = (role, peer, chan)
        if key not in self.blocks:
            send, recv = (peer, -1) if role == "send" else (-1, peer) if role == "recv" else (-1, -1)
            self.blocks[key] = _Block(len(self.blocks), send, recv, chan)
        return self.blocks[key]

    def hazards(self, block: _Block, reads, writes) -> list[tuple]:
        """The latest operation of each other block this one must wait for. Earlier steps: the last
        writer of what it reads or writes, the readers since of what it writes. This step: a write waits
        for this step's reads of the chunk (they see the state the step began with) and for this step's
        previous write of it (reductions from several peers into one chunk go one after the other)."""
        deps = set()
        for c in reads:
            if c in self.writer:
                deps.add(self.writer[c])
        for c in writes:
            if c in self.writer:
                deps.add(self.writer[c])
            deps.update(self.readers.get(c, ()))
            deps.update(self.step_readers.get(c, ()))
            if c in self.step_writer:
                deps.add(self.step_writer[c])
        latest: dict[int, int] = {}
        for tb, index in deps:
            if tb != block.id:  # a block's own operations are ordered already
                latest[tb] = max(latest.get(tb, -1), index)
        return sorted(latest.items())

    def record(self, ref: tuple, reads, writes) -> None:
        for c in reads:
            self.step_readers.setdefault(c, []).append(ref)
        for c in writes:
            self.step_writer[c] = ref

    def end_step(self) -> None:
        for c, refs in self.step_readers.items():
            self.readers.setdefault(c, []).extend(refs)
        for c, ref in self.step_writer.items():
            self.writer[c] = ref
            self.readers[c] = []
        self.step_readers, self.step_writer = {}, {}


def _place(gpu: _Gpu, block: _Block, op: _Op, step: int, deps: list[tuple]) -> tuple:
    """Append `op` to `block` after fillers up to `step` and holders for all but its last dependency."""
    by_id = {b.id: b for b in gpu.blocks.values()}
    for _ in range(step - block.level):
        block.ops.append(_Op("nop", -1))
    block.level = step + 1
    for tb, index in deps:
        by_id[tb].ops[index].hasdep = True
    for dep in deps[:-1]:
        block.ops.append(_Op("nop", -1, dep=dep))
    if deps:
        op.dep = deps[-1]
    block.ops.append(op)
    return block.id, len(block.ops) - 1


def _layout(s: Schedule, buffers: Buffers) -> list[_Gpu]:
    gpus = [_Gpu(r) for r in range(s.ranks)]
    for k, st in enumerate(s.steps):
        sends, receives = [], []
        by_pair: dict[tuple[int, int], int] = {}
        for t in st.transfers:
            for run in _runs(buffers, t.src, t.dst, t.chunks):
                chan = by_pair.get((t.src, t.dst), 0)
                by_pair[(t.src, t.dst)] = chan + 1
                src_loc, dst_loc = buffers.location(t.src, run[0]), buffers.location(t.dst, run[0])
                sends.append((gpus[t.src], ("send", t.dst, chan), _Op("s", k, src_loc, dst_loc, len(run)), run, ()))
                op = (
                    _Op("rrc", k, dst_loc, dst_loc, len(run))
                    if t.op == REDUCE
                    else _Op("r", k, src_loc, dst_loc, len(run))
                )
                receives.append((gpus[t.dst], ("recv", t.src, chan), op, (), run))
        for gpu, key, op, reads, writes in sends + receives:  # reads first: they see the step's start
            block = gpu.block(*key)
            ref = _place(gpu, block, op, k, gpu.hazards(block, reads, writes))
            gpu.record(ref, reads, writes)
        for gpu in gpus:
            gpu.end_step()
    if s.collective == "alltoall" and s.chunks == s.ranks * s.ranks:
        for r, gpu in enumerate(gpus):  # a rank's block to itself: a local copy from its input to its output
            own = r * s.ranks + r
            gpu.block("local", -1, 0).ops.append(
                _Op("cpy", -1, ("i", buffers.inputs[r].index(own)), ("o", buffers.outputs[r].index(own)), 1)
            )
    return gpus


def to_xml(schedule, proto: str = "Simple", name: str | None = None) -> ET.Element:
    """The MSCCL `<algo>` element of a schedule (tuple or array form)."""
    s = as_tuples(schedule)
    if proto not in PROTOCOLS:
        raise UsageError(f"protocol {proto!r}: expected one of {', '.join(PROTOCOLS)}")
    buffers = Buffers.of(s.collective, s.ranks, s.chunks, s.root)
    gpus = _layout(s, buffers)
    channels = max((b.chan for g in gpus for b in g.blocks.values()), default=0) + 1
    split = s.collective in SPLIT
    rooted = get_collective(s.collective).rooted
    algo = ET.Element(
        "algo",
        {
            "name": name or f"collperf {s.collective} {s.algorithm}" + (f" root={s.root}" if rooted else ""),
            "proto": proto,
            "nchannels": str(channels),
            "nchunksperloop": str(len(buffers.inputs[0]) if split else s.chunks),
            "ngpus": str(s.ranks),
            "coll": MSCCL_COLL.get(s.collective, "custom"),
            "inplace": "0" if split else "1",
            "outofplace": "1" if split else "0",
            "minBytes": "0",
            "maxBytes": "0",
        },
    )
    for gpu in gpus:
        i_chunks, o_chunks, s_chunks = buffers.sizes(gpu.rank)
        g = ET.SubElement(
            algo,
            "gpu",
            {
                "id": str(gpu.rank),
                "i_chunks": str(i_chunks),
                "o_chunks": str(o_chunks),
                "s_chunks": str(s_chunks if split else 0),
            },
        )
        for block in sorted(gpu.blocks.values(), key=lambda b: b.id):
            if len(block.ops) > MAX_STEPS_PER_TB:
                raise UsageError(
                    f"{s.collective} {s.algorithm} on {s.ranks} ranks needs {len(block.ops)} steps in "
                    f"one thread block: MSCCL executors take at most {MAX_STEPS_PER_TB}"
                )
            tb = ET.SubElement(
                g,
                "tb",
                {"id": str(block.id), "send": str(block.send), "recv": str(block.recv), "chan": str(block.chan)},
            )
            for index, op in enumerate(block.ops):
                ET.SubElement(
                    tb,
                    "step",
                    {
                        "s": str(index),
                        "type": op.kind,
                        "srcbuf": op.src[0],
                        "srcoff": str(op.src[1]),
                        "dstbuf": op.dst[0],
                        "dstoff": str(op.dst[1]),
                        "cnt": str(op.count if op.kind != "nop" else 0),
                        "depid": str(op.dep[0]),
                        "deps": str(op.dep[1]),
                        "hasdep": "1" if op.hasdep else "0",
                    },
                )
        per_channel: dict[int, int] = {}
        for block in gpu.blocks.values():
            per_channel[block.chan] = per_channel.get(block.chan, 0) + 1
        if max(per_channel.values(), default=0) > MAX_TBS_PER_CHANNEL:
            raise UsageError(
                f"{s.collective} {s.algorithm} on {s.ranks} ranks needs more than {MAX_TBS_PER_CHANNEL} "
                "thread blocks on one channel: MSCCL executors take at most that many"
            )
    return algo


def write(schedule, proto: str = "Simple", name: str | None = None) -> str:
    """The MSCCL XML text of a schedule."""
    algo = to_xml(schedule, proto, name)
    ET.indent(algo, space="  ")
    return ET.tostring(algo, encoding="unicode") + "\n"
