"""Temporary directories that name their owner, so that what a killed launcher left is removed by the next run.

A launcher killed by SIGKILL runs no clean-up: its collperf-* directory (the ranks' FileStore, a testbed's
job and reports) would stay for good. Each directory a run makes is named
collperf-<kind>-<pid>-<start ticks>-<random> and holds an `owner` file with the same pid and start time
(/proc/PID/stat field 22, clock ticks since boot: a pid reused by another process does not look alive);
`sweep()`, run before every launch and by `collperf testbed down`, removes the directories whose owner is
gone. The name carries the owner too, so that a launcher killed between making the directory and writing
the file is still judged. Directories of any other shape are not ours to judge and stay. Liveness is read,
never locked: nothing for a killed process to leave held.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

_NAME = re.compile(r"^collperf-(run|tb)-(\d+)-(\d+)-")


def start_ticks(pid: int) -> int | None:
    """The process's start time (clock ticks since boot), None when it does not exist."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return None
    # the command name (field 2) may hold spaces and parentheses: count fields after its last ')'
    fields = stat[stat.rfind(")") + 2 :].split()
    return int(fields[19]) if len(fields) > 19 else None


def alive(pid, ticks) -> bool:
    return isinstance(pid, int) and start_ticks(pid) == ticks


def _owner(path: Path, m: re.Match) -> tuple[int, int]:
    try:
        doc = json.loads((path / "owner").read_text())
        return int(doc["pid"]), int(doc["start_ticks"])
    except (OSError, ValueError, KeyError, TypeError):
        return int(m.group(2)), int(m.group(3))


def sweep(base: str | None = None) -> list[str]:
    """Remove the collperf-* directories under `base` (the temporary directory) whose owner is dead;
    return their paths. Another user's, or one being removed meanwhile, is skipped without a word."""
    base = Path(base or tempfile.gettempdir())
    removed = []
    if start_ticks(os.getpid()) is None:  # no /proc (not Linux): no owner can be judged, so none is
        return removed
    try:
        entries = list(base.iterdir())
    except OSError:
        return removed
    for path in entries:
        m = _NAME.match(path.name)
        if m is None or not path.is_dir() or alive(*_owner(path, m)):
            continue
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            removed.append(str(path))
    return removed


@contextlib.contextmanager
def tempdir(kind: str):
    """A collperf-<kind>-... directory owned by this process, removed after the block; what dead owners
    left is swept first."""
    sweep()
    pid = os.getpid()
    ticks = start_ticks(pid) or 0
    path = tempfile.mkdtemp(prefix=f"collperf-{kind}-{pid}-{ticks}-")
    try:
        with open(os.path.join(path, "owner"), "w") as f:
            json.dump({"pid": pid, "start_ticks": ticks}, f)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
