"""Progress of long work (calibrate, validate, fit and diagnose of many logs) on stderr.

A rich spinner and bar, shown only where a person watches: stderr is a terminal and the command
prints no JSON. Piped, redirected or under --json nothing extra is written, so that scripts read
the same output as before. The bar is transient: it is gone when the command prints its answer.
"""

from __future__ import annotations

import contextlib
import sys

from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from collperf.cli.render import err


class Steps:
    """What a command reports as it goes: `step(text)` names the phase now running, `done(i, total)`
    counts items where there is a count. Silent where there is no bar."""

    def __init__(self, bar: Progress | None = None, task=None):
        self.bar, self.task = bar, task

    def step(self, text: str) -> None:
        if self.bar is not None:
            self.bar.update(self.task, description=text)

    def done(self, completed: int, total: int, text: str | None = None) -> None:
        if self.bar is not None:
            self.bar.update(
                self.task, completed=completed, total=total, **({"description": text} if text is not None else {})
            )


def shown(as_json: bool = False) -> bool:
    """Whether progress is shown: a terminal on stderr and no JSON on stdout."""
    return not as_json and sys.stderr.isatty()


@contextlib.contextmanager
def progress(description: str, as_json: bool = False, total: int | None = None):
    """`with progress("calibrating") as steps:` a bar on stderr for the block (nothing when not shown)."""
    if not shown(as_json):
        yield Steps()
        return
    bar = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )
    with bar:
        yield Steps(bar, bar.add_task(description, total=total))
