"""The inputs of one `collperf trace` job, any mix: Kineto traces, Flight Recorder dumps, NCCL profiler plugin
traces and NCCL Inspector JSONL (NCCL RAS reports are taken apart by core.py). Each file is told by its first
bytes, read by its own reader (each streaming or bounded), and the ranks put together:

  - a rank held by several kinds of record keeps one record's calls, the first of KINETO, plugin, Flight Recorder,
    Inspector (the one with the most of the step: computation, kernel times), and takes what the others add: a
    Flight Recorder dump's windows (the hang), a note of what was set aside;
  - a Flight Recorder dump of gloo names no group's ranks (torch 2.13 writes the default group's ranks as '[]'):
    a group's ranks are the ranks whose dumps hold calls of it;
  - the world size is the largest any record states (a dump states none: its rank + 1 is a lower bound).
"""

from __future__ import annotations

from collections import defaultdict

from collperf.errors import UsageError
from collperf.trace import flight, inspector_trace, profiler_plugin
from collperf.trace.events import KINETO
from collperf.trace.fanout import read_files

PREFERENCE = (KINETO, profiler_plugin.KIND, flight.KIND, inspector_trace.KIND)


def read_job(
    files, jobs: int | None = None, engine: str | None = None, on_progress=None, notes: list | None = None
) -> list:
    """Every rank's record of one job, one RankTrace per rank, in rank order. The one-file-per-rank records are
    read side by side (fanout.read_files: `jobs` processes or a Dask cluster by `engine`, `on_progress` after
    each); what it notes on the reading (memory) is added to `notes`."""
    plugin = [f for f in files if profiler_plugin.is_plugin_trace(f)]
    inspector = [f for f in files if f not in plugin and inspector_trace.is_inspector(f)]
    traces, said = read_files([f for f in files if f not in plugin and f not in inspector], jobs, engine, on_progress)
    if notes is not None:
        notes += said
    if plugin:
        traces += profiler_plugin.read_plugin(plugin)
    if inspector:
        traces += inspector_trace.read_inspector(inspector)
    _fill_dump_groups([t for t in traces if t.kind == flight.KIND])
    by_rank = defaultdict(list)
    for t in traces:
        by_rank[t.rank].append(t)
    set_aside: dict = defaultdict(list)  # (kept kind, other kind, what it adds) -> ranks
    out = [_merge(held, set_aside) for _, held in sorted(by_rank.items())]
    if set_aside and out:
        out[0].notes.extend(
            f"rank(s) {_ranks(r)}: calls from the {kept} records; the {other} records add {adds}"
            for (kept, other, adds), r in set_aside.items()
        )
    stated = {t.world_size for t in traces if t.kind == KINETO}
    if len(stated) > 1:
        raise UsageError(f"the traces disagree on the world size ({sorted(stated)}): give traces of one job")
    world = max(t.world_size for t in out)
    for t in out:
        t.world_size = world
    return out


def _ranks(ranks: list) -> str:
    return ", ".join(map(str, ranks[:8])) + (f" and {len(ranks) - 8} more" if len(ranks) > 8 else "")


def _merge(held: list, set_aside: dict):
    kinds: dict = {}
    for t in held:
        if t.kind in kinds:
            raise UsageError(
                f"two records of rank {t.rank} of one kind ({t.kind}): {kinds[t.kind].source} and "
                f"{t.source}; give one file per rank of each kind"
            )
        kinds[t.kind] = t
    main = kinds[next(k for k in PREFERENCE if k in kinds)]
    for t in held:
        if t is main:
            continue
        for group, window in t.windows.items():
            main.windows.setdefault(group, window)
        adds = "their groups' last calls (hangs)" if t.windows else "nothing more"
        set_aside[(main.kind, t.kind, adds)].append(main.rank)
    return main


def _fill_dump_groups(dumps: list) -> None:
    """A group whose ranks the dumps do not list: the ranks whose dumps hold calls of it."""
    holders = defaultdict(set)
    for t in dumps:
        for c in t.calls:
            holders[c.process_group].add(t.rank)
    for t in dumps:
        for c in t.calls:
            if not c.pg_ranks and len(holders[c.process_group]) > 1:
                c.pg_ranks = tuple(sorted(holders[c.process_group]))
                c.group_size = len(c.pg_ranks)
