"""NCCL_ALGO and NCCL_PROTO as NCCL reads them (NCCL 2.30.7 src/graph/tuning.cc parseList, lines 36-138,
and ncclTopoTuneModel, lines 440-462 and 516-538).

A value is a comma list of names (case-insensitive), `^` in front to exclude them instead, optionally
followed by per-function entries `;allreduce:tree,ring` that replace the list for that function
("All entries except the first must have a prefix"). The names are init.cc:52-55's ncclAlgoStr /
ncclProtoStr / ncclFuncStr.

What an entry does differs by protocol: LL128 is on by default only where the graph allows it
(tuning.cc:518-535, protoEnable = 2); any NCCL_PROTO that leaves LL128 enabled — named, or by
excluding another — sets it to 1, which skips that rule (tuning.cc:446, 518).
"""

from __future__ import annotations

from collperf.errors import UsageError
from collperf.model.nccl import constants as C

# init.cc:53-55, in NCCL's index order (the order of C.ALGORITHMS and C.PROTOCOLS)
NCCL_ALGO_NAMES = ("Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT")
NCCL_PROTO_NAMES = ("LL", "LL128", "Simple")
NCCL_FUNC_NAMES = ("Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce")

DEFAULT, OFF, ON = "default", "off", "on"


def _parse(value: str, names: tuple[str, ...], what: str) -> dict[str, dict[str, bool]]:
    """{function: {name: enabled}} for the functions the value sets (a first entry without a prefix sets all)."""
    out: dict[str, dict[str, bool]] = {}
    for i, entry in enumerate(e for e in value.strip().split(";") if e.strip()):  # strtok skips empty tokens
        prefix, _, elems = entry.partition(":")
        if not _:
            if i:
                raise UsageError(
                    f"{what} {value!r}: every entry after the first needs a function prefix "
                    f"(e.g. 'ring;allreduce:tree'), as NCCL requires"
                )
            prefix, elems = "", entry
        functions = (
            C.FUNCTIONS
            if not prefix
            else [f for f, n in zip(C.FUNCTIONS, NCCL_FUNC_NAMES) if n.lower() == prefix.strip().lower()]
        )
        if not functions:
            raise UsageError(
                f"{what} {value!r}: unknown function {prefix!r}: expected one of {', '.join(NCCL_FUNC_NAMES)}"
            )
        exclude = elems.strip().startswith("^")
        given = [e.strip() for e in elems.strip().lstrip("^").split(",") if e.strip()]  # strtok skips empties
        lowered = {n.lower(): n for n in names}
        unknown = [e for e in given if e.lower() not in lowered]
        if unknown:
            raise UsageError(
                f"{what} {value!r}: unknown name(s) {', '.join(map(repr, unknown))}: expected some of "
                f"{', '.join(names)}, optionally after ^ to exclude them "
                f"(e.g. {names[1]!r} or '^{names[0]}')"
            )
        chosen = {lowered[e.lower()] for e in given}
        for f in functions:
            out[f] = {n: (n in chosen) != exclude for n in names}
    return out


def check(value: str, what: str, names: tuple[str, ...]) -> None:
    """Raise a UsageError naming `what` (the flag as typed) if `value` is not one NCCL accepts."""
    if value:
        _parse(value, names, what)


def protocol_state(nccl_proto: str, function: str, protocol: str) -> str:
    """DEFAULT (no NCCL_PROTO for this function: NCCL's own rules), ON (forced on) or OFF."""
    if not nccl_proto:
        return DEFAULT
    per = _parse(nccl_proto, NCCL_PROTO_NAMES, "NCCL_PROTO").get(function)
    if per is None:
        return DEFAULT
    return ON if per[protocol] else OFF


def algorithm_enabled(nccl_algo: str, function: str, algorithm: str) -> bool:
    """Whether NCCL_ALGO leaves `algorithm` (our name, C.ALGORITHMS) enabled for `function`."""
    if not nccl_algo:
        return True
    per = _parse(nccl_algo, NCCL_ALGO_NAMES, "NCCL_ALGO").get(function)
    return True if per is None else per[NCCL_ALGO_NAMES[C.ALGORITHMS.index(algorithm)]]
