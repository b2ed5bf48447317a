"""Who holds a testbed: a record per testbed name, written when it comes up, so that two runs of one
name never tear each other down, and `collperf testbed down` without a name removes only what nobody
holds any more.

A record is {"pid", "start_ticks", "by"} in OWNERS_DIR/<name>.json: the process that brought the testbed
up, its start time in clock ticks since boot (/proc/PID/stat field 22: a pid reused by another process
after a reboot or a wrap does not look alive), and what it is ("bench" for a run that tears down what it
started, "user" for `collperf testbed up`, which stays until `down` names it). Liveness is read, never
signalled: no lock, no semaphore, nothing for a killed launcher to leave held.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from collperf.runtime.owned import start_ticks

# namespaces are machine-wide, and so are their records: the machine's /tmp whatever TMPDIR says (a per-user
# or per-test TMPDIR would hide a live testbed from another's `collperf testbed down`, which would remove it)
OWNERS_DIR = (Path("/tmp") if os.path.isdir("/tmp") else Path(tempfile.gettempdir())) / "collperf-testbeds"


def _path(name: str) -> Path:
    return OWNERS_DIR / f"{name}.json"


def record(name: str) -> dict | None:
    try:
        doc = json.loads(_path(name).read_text())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def alive(doc: dict | None) -> bool:
    """Whether the holder of a record still runs (a 'user' testbed is held until it is taken down)."""
    if not doc:
        return False
    if doc.get("by") == "user":
        return True
    pid = doc.get("pid")
    return isinstance(pid, int) and start_ticks(pid) == doc.get("start_ticks")


def holder(name: str) -> str | None:
    """Who holds testbed `name`, in words, when someone alive does; None when it is free to take."""
    doc = record(name)
    if not alive(doc):
        return None
    if doc.get("by") == "user":
        return "`collperf testbed up` (held until `collperf testbed down --name " + name + "`)"
    return f"a running collperf (pid {doc['pid']})"


def claim(name: str, by: str = "bench") -> None:
    """Record this process as the holder of `name` (after checking that nobody alive holds it)."""
    OWNERS_DIR.mkdir(parents=True, exist_ok=True)
    pid = os.getpid()
    doc = {"pid": pid, "start_ticks": start_ticks(pid), "by": by}
    tmp = _path(name).with_suffix(f".tmp-{pid}")
    tmp.write_text(json.dumps(doc))
    os.replace(tmp, _path(name))


def names() -> list[str]:
    """The testbed names with a record."""
    try:
        return sorted(p.stem for p in OWNERS_DIR.glob("*.json"))
    except OSError:
        return []


def release(name: str) -> None:
    try:
        _path(name).unlink()
    except OSError:
        pass


def mine(name: str) -> bool:
    doc = record(name)
    return bool(doc) and doc.get("pid") == os.getpid() and doc.get("start_ticks") == start_ticks(os.getpid())
