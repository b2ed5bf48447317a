"""The planner's input from a trace: what a profiled step measured (its compute time, and per kind of
communication its time and the share of it hidden under computation) replaces the planner's estimates.

Each process group of the trace is a dimension of the layout: by its name (PyTorch's group description,
e.g. 'tp', 'data_parallel', 'default_pg') or, failing that, by its size (the one dimension with that
many ranks). The planner keeps its own demands (model and layout) and prices them; the trace sets
`compute` and `overlap` (a flag the user gives still wins) and is shown beside the plan.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from collperf.errors import UsageError

# a dimension and the words a process group's name uses for it
_WORDS = (
    ("TP", ("tp", "tensor", "mp", "model")),
    ("PP", ("pp", "pipe", "pipeline")),
    ("CP", ("cp", "context")),
    ("EP", ("ep", "expert", "moe")),
    ("DP", ("dp", "data", "ddp", "fsdp", "default", "world", "zero")),
)


@dataclass
class Measured:
    """A traced step: compute per step, and per kind the communication per step and the share hidden."""

    source: str
    steps: int
    compute_s: float | None
    comm_s: dict = field(default_factory=dict)  # kind -> seconds per step
    hidden: dict = field(default_factory=dict)  # kind -> fraction of it under computation
    kinds: dict = field(default_factory=dict)  # process group -> kind

    def to_json(self) -> dict:
        return {
            "source": self.source,
            "steps": self.steps,
            "compute_s": self.compute_s,
            "comm_s_per_step": self.comm_s,
            "hidden_fraction": self.hidden,
            "process_groups": self.kinds,
        }


def kind_of(process_group: str, group_size: int, sizes: dict) -> str:
    """The layout dimension ('TP', 'DP', ...) of a process group: by name, else by size."""
    tokens = [t for t in re.split(r"[^a-z]+", process_group.lower()) if t]
    for kind, words in _WORDS:
        if any(t in words or (len(w) > 3 and t.startswith(w)) for t in tokens for w in words):
            return kind
    fits = [k for k, n in sizes.items() if n == group_size]
    if len(fits) == 1:
        return fits[0]
    raise UsageError(
        f"process group {process_group!r} of {group_size} ranks: its layout dimension is not clear "
        f"(tp={sizes['TP']}, pp={sizes['PP']}, cp={sizes['CP']}, dp={sizes['DP']}); name the group "
        "when creating it (torch.distributed.new_group(..., group_desc='tp')) or give a layout with one "
        f"dimension of {group_size} ranks"
    )


def measured(report, layout) -> Measured:
    """What the lowest rank's steps measured, per kind of the layout."""
    rank = report.traces[0].rank
    views = [v for v in report.steps if v.rank == rank]
    sizes = {"TP": layout.tp, "PP": layout.pp, "CP": layout.cp, "DP": layout.dp}
    time_s: dict = defaultdict(float)
    hidden_s: dict = defaultdict(float)
    kinds: dict[str, str] = {}
    for v in views:
        for call, exposed in v.calls:
            kind = kinds.setdefault(call.process_group, kind_of(call.process_group, call.group_size, sizes))
            time_s[kind] += call.time_s
            hidden_s[kind] += call.time_s - exposed
    n = max(1, len(views))
    compute = float(np.median([v.compute_s for v in views])) if views else None
    return Measured(
        ", ".join(report.sources),
        len(views),
        compute if compute else None,
        {k: t / n for k, t in time_s.items()},
        {k: min(1.0, max(0.0, hidden_s[k] / t)) for k, t in time_s.items() if t > 0},
        kinds,
    )
