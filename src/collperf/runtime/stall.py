"""What the launcher knows about each rank, and the message that names the rank(s) that stopped progressing.

Each rank reports its phase (started: before importing torch; imported; ready: process group up), a
heartbeat every launch.HEARTBEAT_S, and the step of its work it has reached (launch.progress). On a
timeout, or when the others fail waiting for it, the culprit is, in this order: a rank the kernel shows
as stopped (/proc/PID/stat state T or t: SIGSTOP, a debugger), a rank whose heartbeat went silent, a rank
behind the others (a lower phase during start-up, a lower step after). Only when none stands out are
all ranks named, as "still running".

The watchdog bounds every phase without waiting for the run's timeout: a rank makes progress when its
step, its phase within the step or its iteration count (launch.tick, carried by each heartbeat) moves; one
that makes none for max(FLOOR_S, K x the step's expected time per iteration) ends the run, and the message
names the culprit found as above. Before the process group is up a rank has no finer progress than its
phase, and importing torch may hold the interpreter for long stretches (a loaded machine, a cold disk), so
there only a rank the kernel shows as stopped is judged by the watchdog; a slow start is the start-up
timeout's to judge. A step of unknown duration (no progress reported yet, or a job that reports none) is
judged by its heartbeats: silence for FLOOR_S.
"""

from __future__ import annotations

import time

_PHASES = ("not started", "started (importing torch)", "imported (meeting the other ranks)", "ready")
_WHILE = ("before its Python started", "while importing torch", "while meeting the other ranks", "after start-up")
SILENT_S = 5.0  # heartbeats come every second; this much silence is not a busy machine's hiccup
FLOOR_S = 10.0  # the watchdog's least bound: several heartbeats, and more than a loaded machine's stall
K = 20.0  # ... and this many times the step's expected time per iteration: a 20x slower machine is not hung


def proc_state(pid) -> str | None:
    """The one-letter state of /proc/PID/stat (R S D T t Z ...), None if unknown (not Linux, gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError, TypeError):
        return None


def _ranks(ranks) -> str:
    ranks = sorted(ranks)
    return f"rank {ranks[0]}" if len(ranks) == 1 else "ranks " + ", ".join(map(str, ranks))


class Ranks:
    def __init__(self, procs):
        self.procs = procs
        now = time.monotonic()
        self.phase = [0] * len(procs)
        self.seen = [now] * len(procs)  # last message of any kind
        self.heard_any = [False] * len(procs)
        self.step = [(0, "")] * len(procs)
        self.moved = [now] * len(procs)  # last progress: the step, its phase or its iteration count moved
        self.where = [(0, "", 0)] * len(procs)
        self.expected_s = [None] * len(procs)

    def heard(self, rank: int, kind: str, payload) -> None:
        if not 0 <= rank < len(self.procs):
            return
        self.seen[rank], self.heard_any[rank] = time.monotonic(), True
        if kind in ("started", "imported", "ready"):
            self.phase[rank] = max(self.phase[rank], _PHASES.index(_phase_name(kind)))
        elif kind in ("beat", "progress") and payload:
            self.phase[rank] = max(self.phase[rank], 1)
            step, what, ticks, expected_s = (tuple(payload) + (0, None))[:4]
            self.step[rank] = (step, what)
            if (step, what, ticks) != self.where[rank]:
                self.where[rank], self.moved[rank] = (step, what, ticks), self.seen[rank]
            self.expected_s[rank] = expected_s

    def bound_s(self, rank: int) -> float:
        expected_s = self.expected_s[rank]
        return max(FLOOR_S, K * expected_s) if isinstance(expected_s, (int, float)) else FLOOR_S

    def _stalled(self, rank: int, now: float, starting: bool) -> bool:
        """Whether `rank` has made no progress for its bound (see the module's note for what counts)."""
        if starting:  # only a rank the kernel holds stopped
            return now - self.seen[rank] > FLOOR_S and bool(self._stopped([rank]))
        last = self.moved[rank] if self.step[rank][0] > 0 else self.seen[rank]
        return now - last > self.bound_s(rank)

    def watchdog(self, done, errors, dead) -> tuple[str, str] | None:
        """(message, culprit in a few words) when a running rank has made no progress for its bound."""
        now = time.monotonic()
        running = [r for r in range(len(self.procs)) if r not in done and r not in errors and r not in dead]
        starting = len(self.ready()) < len(self.procs)
        late = [r for r in running if self._stalled(r, now, starting)]
        if not late:
            return None
        found, others = self.culprits(running, starting)
        if not found:  # every rank equally still: the first late one
            found = {late[0]: "made no progress"}
            others = [r for r in running if r != late[0]]
        rank = min(found)
        since = now - (self.seen[rank] if starting or self.step[rank][0] == 0 else self.moved[rank])
        head = f"no progress from rank {rank} for {since:.0f} s (the watchdog's bound: {self._bound_text(rank)})"
        culprit = (
            f"no progress from rank {rank} (pid {getattr(self.procs[rank], 'pid', '?')}) {self._where(rank, starting)}"
        )
        return f"{head}: {self._describe(found, others, starting)}; all ranks were killed", culprit

    def _bound_text(self, rank: int) -> str:
        expected_s = self.expected_s[rank]
        if not isinstance(expected_s, (int, float)):
            return f"{FLOOR_S:g} s"
        return f"max({FLOOR_S:g} s, {K:g} x the step's expected {expected_s:.3g} s per iteration)"

    def ready(self) -> list[int]:
        return [r for r, ph in enumerate(self.phase) if ph == 3]

    def _stopped(self, among) -> dict[int, str]:
        out = {}
        for r in among:
            state = proc_state(getattr(self.procs[r], "pid", None))
            if state in ("T", "t"):
                out[r] = f"is stopped (SIGSTOP or a debugger: /proc state {state})"
        return out

    def _silent(self, among) -> dict[int, str]:
        now = time.monotonic()
        return {
            r: (
                f"went silent (no heartbeat for {now - self.seen[r]:.0f} s)"
                if self.heard_any[r]
                else "never reported (stuck before Python started?)"
            )
            for r in among
            if now - self.seen[r] > SILENT_S
        }

    def _where(self, r: int, starting: bool) -> str:
        if starting:
            return _WHILE[self.phase[r]]
        step, what = self.step[r]
        return f"at step {step}" + (f" ({what})" if what else "") if step else "before its first step"

    def culprits(self, among, starting: bool) -> tuple[dict[int, str], list[int]]:
        """{rank: why} for the ranks that stopped progressing, and the others among `among`."""
        among = list(among)
        found = self._stopped(among) or self._silent(among)
        if not found and among:
            key = (lambda r: self.phase[r]) if starting else (lambda r: self.step[r][0])
            low = min(key(r) for r in among)
            if any(key(r) > low for r in among):
                found = {r: "is behind the others" for r in among if key(r) == low}
        return found, [r for r in among if r not in found]

    def _describe(self, found: dict, others: list, starting: bool) -> str:
        parts = [
            f"rank {r} (pid {getattr(self.procs[r], 'pid', '?')}) {why}, {self._where(r, starting)}"
            for r, why in sorted(found.items())
        ]
        if others:
            wheres = [self._where(r, starting) for r in others]
            where = wheres[0] if len(set(wheres)) == 1 else ", ".join(f"rank {r} {w}" for r, w in zip(others, wheres))
            verb = ("was" if len(others) == 1 else "were") + " waiting for it" if found else "still running"
            parts.append(f"{_ranks(others)} {verb}, {where}")
        return "; ".join(parts)

    def timeout_message(self, done: dict, timeout_s: float, startup_s: float) -> str:
        running = [r for r in range(len(self.procs)) if r not in done]
        starting = len(self.ready()) < len(self.procs)
        found, others = self.culprits(running, starting)
        if starting:
            head = f"the ranks did not all start within {startup_s:g} s"
        else:
            head = f"the run did not finish within its timeout of {timeout_s:g} s"
        if found:
            return f"{head}: {self._describe(found, others, starting)}; all ranks were killed"
        why = "a slow start on a busy machine" if starting else "a hang, or --timeout too short"
        return f"{head}: {self._describe({}, others, starting)} ({why}); all ranks were killed"

    def stall_message(self, errors: dict, dead: dict, timeout_s: float, startup_s: float) -> str | None:
        """When ranks failed only because a peer stopped answering (their timeouts), name that peer."""
        if dead and any(code is not None and code < 0 for code in dead.values()):
            return None  # a rank killed by a signal: the failure message names it
        if not errors or not all(_waiting_error(text) for text in errors.values()):
            return None
        alive = [r for r in range(len(self.procs)) if r not in errors and r not in dead]
        starting = len(self.ready()) < len(self.procs)
        found = (
            self._stopped(alive)
            or self._silent(alive)
            or {r: "did not answer (it kept running while the others timed out waiting)" for r in alive}
        )
        if not found:
            return None
        others = [r for r in range(len(self.procs)) if r not in found]
        head = "the ranks did not all start" if starting else "the run stopped progressing"
        return (
            f"{head}: {self._describe(found, [], starting)}; {_ranks(others)} gave up waiting for it; "
            "all ranks were killed"
        )


def _phase_name(kind: str) -> str:
    return {"started": _PHASES[1], "imported": _PHASES[2], "ready": _PHASES[3]}[kind]


def _waiting_error(text: str) -> bool:
    """An error a rank raises because a peer did not answer (gloo / store timeouts, closed connections)."""
    low = (text or "").lower()
    return any(k in low for k in ("timed out", "timeout", "connection reset", "connection closed", "socket"))
