"""Saying many sizes in one line: runs of consecutive sizes as ranges ("1 KiB-512 KiB, 8 GiB"), and a per-size
text that repeats with other counts (the band's provenance) once, with the range of each count."""

from __future__ import annotations

import re

from collperf import units


def size_ranges(selected, every=None) -> str:
    """'1 KiB-512 KiB, 2 MiB, 8 GiB': the selected sizes, a run of three or more that are consecutive in `every`
    (the log's sizes; without it nothing is merged) as one range."""
    chosen = sorted(set(int(s) for s in selected))
    if not chosen:
        return ""
    position = {s: i for i, s in enumerate(sorted(set(int(s) for s in every)))} if every is not None else {}
    runs: list[list[int]] = []
    for s in chosen:
        if runs and s in position and runs[-1][-1] in position and position[s] == position[runs[-1][-1]] + 1:
            runs[-1].append(s)
        else:
            runs.append([s])
    # a range from three sizes up: two neighbours read better as themselves ("64 MiB, 1 GiB" in a two-size log)
    return ", ".join(", ".join(map(units.format_size, r)) if len(r) < 3 else
                     f"{units.format_size(r[0])}-{units.format_size(r[-1])}" for r in runs)


def merge_counts(texts, sizes=None) -> str:
    """Per-size texts that differ only in their numbers, said once with each number's range:
    'calibrated on 5 public runs ... from 5 sources' and '... 15 ... from 8 ...' become 'calibrated on 5-15 public
    runs ... from 5-8 sources, by size'. Texts of another shape are kept apart (with the sizes they apply to,
    where `sizes` is given and there is more than one shape)."""
    groups: dict[str, list[tuple[list[int], object]]] = {}
    listed = list(texts)
    at = list(sizes) if sizes is not None else [None] * len(listed)
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
            said += f" (at {size_ranges([s for _, s in members], at)})"
        out.append(said)
    return "; ".join(out)
