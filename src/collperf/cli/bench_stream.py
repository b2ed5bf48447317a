"""bench's output as the rows come (nccl-tests text row by row, or one JSON document), with its progress."""

from __future__ import annotations

import sys

from rich.markup import escape

from collperf.cli.render import err, print_json
from collperf.lab.results import TextStream, to_json


class BenchStream:
    """bench's output as the rows come: the nccl-tests text on stdout, row by row (or, with --json, one
    JSON document at the end), a progress line on stderr when it is a terminal, warnings on stderr."""

    def __init__(self, as_json: bool = False, progress: bool = True):
        self.as_json = as_json
        self.text = TextStream(self._write)
        self.bar = None
        self.progress = progress and not as_json and sys.stderr.isatty()  # quiet under --json, as every command
        self.rows = 0

    @staticmethod
    def _write(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()  # a pipe or a file gets each row when it is measured

    def note(self, text: str) -> None:
        err.print(f"[yellow]warning:[/yellow] {escape(text)}")

    def info(self, text: str) -> None:
        """What the run is (Blink's placement on a topology): not a warning."""
        err.print(f"note: {escape(text)}")

    def row(self, results, row) -> None:
        self.rows += 1
        if not self.as_json:
            if self.bar is not None:
                self.bar.stop()  # rows and the bar share the terminal: the bar goes below the rows
            self.text.row(results, row)
        self._progress(results, row)

    def _progress(self, results, row) -> None:
        if not self.progress:
            return
        from rich.progress import Progress

        total = len(results.config["sizes"]) * len(results.config["algorithms"])
        if self.bar is None:
            self.bar = Progress(console=err, transient=True)
            self.task = self.bar.add_task("bench", total=total)
        self.bar.update(self.task, completed=self.rows, description=f"bench {row.algorithm} {row.size} B")
        if self.rows < total:
            self.bar.start()

    def _stop_bar(self) -> None:
        if self.bar is not None:
            self.bar.stop()

    def finish(self, results) -> None:
        self._stop_bar()
        if self.as_json:
            print_json(to_json(results))
        else:
            self.text.close(results)

    def interrupted(self, results, message: str) -> None:
        """After a failure, timeout or Ctrl-C: the rows so far stay, then one line that says what happened."""
        self.finish(results)
        err.print(f"[red]error:[/red] {escape(message)}")
