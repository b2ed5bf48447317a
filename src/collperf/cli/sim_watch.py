"""What `collperf simulate` shows while it works: its estimate of time and memory before a long run
(stderr), and a progress bar once it has run a second (stderr, on a terminal only, never under --json)."""

from __future__ import annotations

import sys
import time

from rich.markup import escape
from rich.progress import Progress

from collperf.cli.render import err

# a run shorter than this shows nothing
_QUIET_S = 1.0


class SimulationWatch:
    def __init__(self, mode: str, as_json: bool):
        self.mode = mode
        self.as_json = as_json
        self.live = not as_json and sys.stderr.isatty()
        self.started = time.monotonic()
        self.bar = None
        self.task = None

    def estimate(self, e) -> None:
        """Events mode hears two estimates (set-up, then the whole run): it shows the second."""
        if self.as_json or e.time_s < _QUIET_S or (self.mode == "events" and e.engine == "rounds"):
            return
        err.print(f"estimate: {escape(e.describe())}")

    def progress(self, phase: str, done: int, total: int) -> None:
        if not self.live or time.monotonic() - self.started < _QUIET_S:
            return
        if self.bar is None:
            self.bar = Progress(console=err, transient=True)
            self.task = self.bar.add_task(phase, total=total)
            self.bar.start()
        self.bar.update(self.task, completed=done, total=total, description=f"simulate: {phase}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
