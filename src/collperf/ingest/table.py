"""The one table every parser produces: rows of a benchmark log, with what the header said."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Hashable

from collperf.errors import UsageError


class IngestError(UsageError):
    """Input that cannot be read: the message names the file, the line and what was expected."""


@dataclass
class Row:
    size: int  # bytes, nccl-tests convention
    time_s: float
    algbw_GBps: float | None = None
    busbw_GBps: float | None = None
    wrong: int | None = None  # #wrong (legacy logs: 1 if the max error was non-zero); None = not checked
    placement: str = "out-of-place"
    count: int | None = None
    dtype: str = ""
    op: str = ""
    root: int | None = None
    line: int = 0  # line number in the source
    max_error: float | None = None  # legacy `error` column: max |error| as printed
    flags: list[str] = field(default_factory=list)  # columns that disagree with each other, and why


@dataclass
class Table:
    source: str
    collective: str = ""
    ranks: int | None = None
    nodes: int | None = None
    rows: list[Row] = field(default_factory=list)
    header: dict = field(default_factory=dict)  # versions, flags, GPUs, hosts, ...
    skipped: list[str] = field(default_factory=list)  # "line N: why" for lines that were not rows
    notes: list[str] = field(default_factory=list)  # conventions detected, inferences made
    footer: dict = field(default_factory=dict)  # out_of_bounds, avg_busbw as printed
    # the text the table was read from (the same string for every table of one log): what its other lines say
    # (NCCL INFO lines, comments) is read from here by the hardware resolver, never by reading the file again
    text: str = field(default="", repr=False, compare=False)

    def placement(self, name: str = "out-of-place") -> list[Row]:
        return [r for r in self.rows if r.placement == name]

    def flagged(self) -> list[Row]:
        return [r for r in self.rows if r.flags]

    def describe(self) -> str:
        where = f"{self.ranks} ranks" if self.ranks else "ranks unknown"
        if self.nodes:
            where += f" on {self.nodes} node(s)"
        # one log holds a table per algorithm (collperf bench -A ring,builtin): the name tells them apart
        algorithm = f", algorithm {self.header['algorithm']}" if self.header.get("algorithm") else ""
        return f"{self.source}: {self.collective or 'collective unknown'}{algorithm}, {where}, {len(self.rows)} rows"


def finish(tables: list[Table], skipped: list[str], refusal: str) -> list[Table]:
    """The tail every reader shares: the tables that hold rows, the lines that were not rows ("line N: why")
    attached to the first of them; none: IngestError `refusal`, with the first skipped line's reason."""
    out = [t for t in tables if t.rows]
    if not out:
        raise IngestError(f"{refusal}: {skipped[0]}" if skipped else refusal)
    out[0].skipped.extend(skipped)
    return out


class Grouped:
    """Rows grouped into tables by a key (a test and its rank count, a configuration), in the order the keys are
    first met, and the lines that were not rows; `finish` ends the reading as every reader does."""

    def __init__(self) -> None:
        self.tables: dict[Hashable, Table] = {}
        self.skipped: list[str] = []

    def table(self, key: Hashable, make: Callable[[], Table]) -> Table:
        """The key's table, made by `make` when the key is first met (call it once a row is sound: no empty
        tables)."""
        t = self.tables.get(key)
        if t is None:
            t = self.tables[key] = make()
        return t

    def finish(self, refusal: str) -> list[Table]:
        return finish(list(self.tables.values()), self.skipped, refusal)
