"""NCCL RAS's JSON report (`ncclras --format json`, NCCL 2.30 src/ras/client.cc; the document written by
src/ras/client_support.cc's jsonWriteHeader .. jsonWriteFooter): per communicator, the ranks that answered with
their `collective_counts` (ncclFuncToString's names: AllReduce, AllGather, ...) and the `missing_ranks` with
`status.unresponsive` and `status.considered_dead`. Read into verdicts: a dead rank, an unresponsive one, and a
lagging one (fewer calls of a collective than the other ranks of its communicator).

A RAS report is one document per job of a size bounded by its ranks (one object each), read whole; every field
used is checked, and a value of the wrong type is a UsageError naming the file and the field."""

from __future__ import annotations

import json
from pathlib import Path

from collperf.errors import UsageError
from collperf.trace.verdicts import Verdict

KEYS = ("nccl_version", "communicators")  # a RAS report's top level holds both (jsonWriteHeader)
SHOWN = 8  # lagging ranks named per communicator and collective


def is_ras(path) -> bool:
    """A JSON document whose top level has nccl_version and communicators, as jsonWriteHeader writes them."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    text = head.lstrip()
    return text.startswith(b"{") and all(f'"{k}"'.encode() in head for k in KEYS)


def _field(path, where: str, value, kind, what: str):
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise UsageError(
            f"{path}: {where} is {json.dumps(value)[:60]}; expected {what} (NCCL RAS's JSON, ncclras --format json)"
        )
    return value


def read_ras(path) -> list[dict]:
    """The communicators of a RAS report, each {hash, size, ranks: [{rank, host, counts}], missing: [{rank, host,
    dead, unresponsive}]}, checked."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError, UnicodeDecodeError, RecursionError) as e:  # nesting past the decoder too
        raise UsageError(f"{path}: not a readable NCCL RAS JSON report ({str(e)[:80]})") from None
    comms = _field(path, "$.communicators", doc.get("communicators"), list, "an array of communicators")
    out = []
    for i, c in enumerate(comms):
        where = f"$.communicators[{i}]"
        _field(path, where, c, dict, "an object")
        ranks, missing = [], []
        for j, r in enumerate(_field(path, f"{where}.ranks", c.get("ranks", []), list, "an array")):
            at = f"{where}.ranks[{j}]"
            counts = _field(path, f"{at}.collective_counts", r.get("collective_counts", {}), dict, "an object")
            for op, n in counts.items():
                _field(path, f"{at}.collective_counts.{op}", n, int, "a whole number of calls")
            ranks.append(
                {
                    "rank": _field(path, f"{at}.rank", r.get("rank"), int, "a rank"),
                    "host": str(r.get("host", "")),
                    "counts": counts,
                }
            )
        for j, r in enumerate(_field(path, f"{where}.missing_ranks", c.get("missing_ranks", []), list, "an array")):
            at = f"{where}.missing_ranks[{j}]"
            status = _field(path, f"{at}.status", r.get("status", {}), dict, "an object")
            missing.append(
                {
                    "rank": _field(path, f"{at}.rank", r.get("rank"), int, "a rank"),
                    "host": str(r.get("host", "")),
                    "dead": _field(
                        path,
                        f"{at}.status.considered_dead",
                        status.get("considered_dead", False),
                        bool,
                        "true or false",
                    ),
                    "unresponsive": _field(
                        path, f"{at}.status.unresponsive", status.get("unresponsive", False), bool, "true or false"
                    ),
                }
            )
        out.append({"hash": str(c.get("hash", f"#{i}")), "size": c.get("size"), "ranks": ranks, "missing": missing})
    return out


def _who(r: dict) -> str:
    return f"rank {r['rank']}" + (f" (host {r['host']})" if r["host"] else "")


def ras_verdicts(path) -> list[Verdict]:
    """Dead, unresponsive and lagging ranks of every communicator of a RAS report."""
    out = []
    for c in read_ras(path):
        for m in c["missing"]:
            if m["dead"]:
                out.append(
                    Verdict(
                        "dead",
                        f"dead: {_who(m)} of communicator {c['hash']} is considered dead by NCCL "
                        "RAS (its process or host is gone): restart the job without it",
                        m["rank"],
                    )
                )
            elif m["unresponsive"]:
                out.append(
                    Verdict(
                        "missing",
                        f"missing: {_who(m)} of communicator {c['hash']} did not answer NCCL "
                        "RAS (unresponsive: hung or overloaded)",
                        m["rank"],
                    )
                )
        ops = sorted({op for r in c["ranks"] for op in r["counts"]})
        for op in ops:
            counts = [r["counts"].get(op, 0) for r in c["ranks"]]
            if len(counts) < 2 or min(counts) == max(counts):
                continue
            top = max(counts)
            behind = [r for r in c["ranks"] if r["counts"].get(op, 0) < top]
            for r in behind[:SHOWN]:
                out.append(
                    Verdict(
                        "lagging",
                        f"lagging: {_who(r)} has run {r['counts'].get(op, 0)} {op} calls on "
                        f"communicator {c['hash']} where others ran {top}: the collective the "
                        "others wait in is one it has not reached",
                        r["rank"],
                    )
                )
            if len(behind) > SHOWN:
                out.append(
                    Verdict(
                        "lagging",
                        f"lagging: {len(behind) - SHOWN} more ranks behind in {op} on communicator {c['hash']}",
                    )
                )
    return out
