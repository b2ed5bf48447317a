"""Saying a per-size text once: the band's provenance repeats per size with other counts, and is said once with
the range of each count (the sizes themselves as ranges: units.size_ranges)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from collperf.units import size_ranges


def merge_counts(texts: Iterable[str], sizes: Iterable[int] | None = None) -> str:
    """Per-size texts that differ only in their numbers, said once with each number's range:
    'calibrated on 5 public runs ... from 5 sources' and '... 15 ... from 8 ...' become 'calibrated on 5-15 public
    runs ... from 5-8 sources, by size'. Texts of another shape are kept apart (with the sizes they apply to,
    where `sizes` is given and there is more than one shape)."""
    groups: dict[str, list[tuple[list[int], int | None]]] = {}
    listed = list(texts)
    at: list[int | None] = list(sizes) if sizes is not None else [None] * len(listed)
    for text, size in zip(listed, at):
        if text:
            groups.setdefault(re.sub(r"\d+", "#", text), []).append(([int(x) for x in re.findall(r"\d+", text)], size))
    out = []
    for shape, members in groups.items():
        pieces = shape.split("#")
        said = pieces[0]
        for i, piece in enumerate(pieces[1:]):
            column = [numbers[i] for numbers, _ in members]
            said += (f"{min(column)}" if min(column) == max(column) else f"{min(column)}-{max(column)}") + piece
        if len({tuple(numbers) for numbers, _ in members}) > 1:
            said += ", by size"
        if len(groups) > 1 and sizes is not None:
            said += f" (at {size_ranges([s for _, s in members if s is not None], [s for s in at if s is not None])})"
        out.append(said)
    return "; ".join(out)
