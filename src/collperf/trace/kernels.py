"""What an event's name and arguments say about a collective: NCCL/RCCL kernel names, the c10d ops and
gloo work of torch.distributed, PyTorch's collective names, element types.

Kernel names (NCCL src/device/generate.py and its older makefile generator, NCCL 2.18 and 2.19+):
    ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)      before 2.19
    ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)          2.19 and later
    ncclDevKernel_AllGather_RING_LL(...), ncclDevKernel_SendRecv(...), ncclDevKernel_Generic_4(...)  (RCCL)
The name carries the algorithm and protocol NCCL ran; a generic kernel does not (they show as '-').
"""

from __future__ import annotations

import re
from functools import lru_cache

from collperf.collectives import get_collective

KERNEL = re.compile(r"^(?:nccl|rccl)(?:Dev)?Kernel(?:Debug)?_([A-Za-z]+)")
_ALGO_PROTO = re.compile(
    r"_(RING|TREE|NVLS_TREE|NVLS|COLLNET_DIRECT|COLLNET_CHAIN|COLLNET|PAT)_(LL128|LL|SIMPLE)"
    r"(?=_|\(|$)"
)
# NCCL's algorithm names -> model/nccl's
ALGORITHMS = {
    "RING": "ring",
    "TREE": "tree",
    "NVLS_TREE": "nvls-tree",
    "NVLS": "nvls",
    "COLLNET_DIRECT": "collnet-direct",
    "COLLNET_CHAIN": "collnet-chain",
    "COLLNET": "collnet-direct",
    "PAT": "pat",
}
PROTOCOLS = {"LL": "LL", "LL128": "LL128", "SIMPLE": "Simple"}
_FUNCTIONS = {
    "allreduce": "allreduce",
    "allgather": "allgather",
    "reducescatter": "reducescatter",
    "broadcast": "broadcast",
    "reduce": "reduce",
    "sendrecv": "sendrecv",
    "alltoall": "alltoall",
}

# element bytes by every spelling a trace uses: c10 ScalarType names (record_param_comms' dtype), the
# C++ names of gloo's annotations and the profiler's 'Input type', and NCCL kernel name suffixes
_BYTES = {
    1: (
        "int8",
        "int8_t",
        "char",
        "signedchar",
        "uint8",
        "uint8_t",
        "unsignedchar",
        "byte",
        "bool",
        "i8",
        "u8",
        "f8e4m3",
        "f8e5m2",
        "float8_e4m3fn",
        "float8_e5m2",
        "float8_e4m3fnuz",
        "float8_e5m2fnuz",
        "__nv_fp8_e4m3",
        "__nv_fp8_e5m2",
        "fp8",
    ),
    2: (
        "half",
        "float16",
        "f16",
        "__half",
        "bf16",
        "bfloat16",
        "__nv_bfloat16",
        "hip_bfloat16",
        "rccl_bfloat16",
        "short",
        "shortint",
        "int16",
        "int16_t",
    ),
    4: ("float", "float32", "f32", "int", "int32", "int32_t", "i32", "uint32", "uint32_t", "u32", "unsignedint"),
    8: (
        "double",
        "float64",
        "f64",
        "long",
        "longint",
        "longlong",
        "longlongint",
        "int64",
        "int64_t",
        "i64",
        "uint64",
        "uint64_t",
        "u64",
        "unsignedlong",
        "unsignedlongint",
    ),
}
ELEMENT_BYTES = {name: size for size, names in _BYTES.items() for name in names}
# the names shown: one per kind
_SHOWN = {
    "half": "float16",
    "f16": "float16",
    "__half": "float16",
    "bf16": "bfloat16",
    "__nv_bfloat16": "bfloat16",
    "hip_bfloat16": "bfloat16",
    "rccl_bfloat16": "bfloat16",
    "float": "float32",
    "f32": "float32",
    "double": "float64",
    "f64": "float64",
    "int": "int32",
    "int32_t": "int32",
    "long": "int64",
    "longint": "int64",
    "int64_t": "int64",
    "char": "int8",
    "signedchar": "int8",
    "int8_t": "int8",
    "byte": "uint8",
    "unsignedchar": "uint8",
    "uint8_t": "uint8",
}


# the pure functions below are called once per collective kernel with a handful of distinct values: cached
@lru_cache(maxsize=1024)
def _key(dtype) -> str:
    return re.sub(r"^(c10|at)::|\s", "", str(dtype).strip().lower()).replace("c10::", "")


def element_bytes(dtype) -> int | None:
    """Bytes per element of a dtype as any trace spells it; None when unknown."""
    return ELEMENT_BYTES.get(_key(dtype))


def dtype_name(dtype) -> str:
    key = _key(dtype)
    return _SHOWN.get(key, key) if key in ELEMENT_BYTES else str(dtype)


@lru_cache(maxsize=4096)
def parse_kernel(name: str) -> tuple[str | None, str, str, str] | None:
    """(collective or None, algorithm, protocol, dtype) of an NCCL/RCCL kernel name; None if it is not one."""
    m = KERNEL.match(name)
    if not m:
        return None
    collective = _FUNCTIONS.get(m.group(1).lower())
    ap = _ALGO_PROTO.search(name)
    algorithm, protocol = (ALGORITHMS[ap.group(1)], PROTOCOLS[ap.group(2)]) if ap else ("-", "-")
    base = name.split("(", 1)[0]
    parts = [p for p in (base[: ap.start()] + base[ap.end() :] if ap else base).split("_")[1:] if p]
    dtype = next((p for p in parts[1:] if _key(p) in ELEMENT_BYTES), "")
    return collective, algorithm, protocol, dtype


def collective_of(name: str) -> str | None:
    """A PyTorch collective name ('allreduce', '_allgather_base', 'all_to_allv', 'reduce_scatter_tensor_coalesced',
    'gloo:all_reduce', 'c10d::allgather_', 'send') as one of ours; None for a barrier or anything else."""
    key = str(name).split(":")[-1].lower().replace("_", "")
    for word, ours in (
        ("allreduce", "allreduce"),
        ("allgather", "allgather"),
        ("reducescatter", "reducescatter"),
        ("alltoall", "alltoall"),
        ("broadcast", "broadcast"),
        ("reduce", "reduce"),
        ("gather", "gather"),
        ("scatter", "scatter"),
        ("send", "sendrecv"),
        ("recv", "sendrecv"),
    ):
        if word in key:
            return ours
    return None


@lru_cache(maxsize=4096)
def whole_elements(collective: str, in_elements: int, out_elements: int, group_size: int) -> int:
    """Elements of nccl-tests' `size` buffer from one rank's input and output element counts.

    collectives.py describes each collective's buffers as blocks of the whole: a rank's input holds I of
    the whole's D blocks and its output O of them, so the whole is in x D/I or out x D/O (the larger, as a
    rank may have no input, e.g. a recv or a scatter's non-root)."""
    c = get_collective(collective)
    p = max(1, int(group_size))
    blocks = c.count_divisor(p)
    held_in, held_out = c.elements(1, p)
    whole = 0
    if held_in:
        whole = max(whole, in_elements * blocks // held_in)
    if held_out:
        whole = max(whole, out_elements * blocks // held_out)
    return int(whole)
