"""What-if: the same step's collectives priced on another system (--what-if-cluster, --what-if-nodes) or with
our algorithms (-A), and what that does to the exposed communication.

Each group keeps its nccl-tests size; a process group that spans the whole job spans the whole target
system, a smaller one keeps its rank count, packed on as few nodes as hold it. A call's overlap with
computation stays what it was (the computation does not move): a call of measured time t with h of it
hidden under computation exposes max(0, t' - h) when it takes t' instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from collperf.diagnose import Assumed
from collperf.expect.shown import shown_values
from collperf.errors import UsageError
from collperf.model import predict
from collperf.model.nccl import constants as C
from collperf.model.network import Cluster, Link, Network
from collperf.model.hardware.catalogue import get_system
from collperf.trace.judge import expected_and_bound
from collperf.trace.system import group_system


@dataclass
class WhatIf:
    system: str
    description: str
    algorithm: str  # 'NCCL's choice' or the -A names
    priced_with: str
    collectives: list = field(default_factory=list)  # per row: measured and what-if time
    steps: list = field(default_factory=list)  # per step: exposed now and what-if
    notes: list = field(default_factory=list)

    def to_json(self) -> dict:
        now = sum(s["exposed_comm_s"] for s in self.steps)
        then = sum(s["what_if_exposed_comm_s"] for s in self.steps)
        return {
            "system": self.system,
            "description": self.description,
            "algorithm": self.algorithm,
            "priced_with": self.priced_with,
            "collectives": self.collectives,
            "steps": self.steps,
            "exposed_comm_s": now,
            "what_if_exposed_comm_s": then,
            "exposed_change_s": then - now,
            "notes": self.notes,
        }


def target_system(cluster: str | None, nodes: int | None, assumed: Assumed):
    """The system to price on: a catalogue system with `nodes` nodes, or the assumed one."""
    if cluster is None:
        if assumed.system is None:
            raise UsageError(
                f"-A prices the trace's collectives on a system, and none is known: "
                f"{assumed.why_none}; or give --what-if-cluster SYSTEM"
            )
        return assumed.system if nodes is None else assumed.system.with_("user override (--what-if-nodes)", nodes=nodes)
    try:
        system = get_system(cluster)
    except UsageError as e:
        raise UsageError(f"--what-if-cluster {cluster}: {e}") from None
    return system.with_("user override (--what-if-nodes)", nodes=nodes) if nodes else system


def cluster_of(system) -> Cluster:
    """A two-level network for our algorithms: the GPU link and one NIC, with NCCL's per-hop latencies
    (NCCL 2.30 src/graph/tuning.cc hwLatencies, ring Simple) as the per-message latency."""
    hop = C.HW_LATENCY_US["NVLINK" if system.nvlink_links else "PCI"]["ring"][2] * 1e-6
    net = (C.HW_LATENCY_US["NET"]["ring"][2] + 2 * system.net_latency_us) * 1e-6
    return Cluster(
        system.nodes,
        system.gpus_per_node,
        Link(hop, system.intra_Bps, name="intra"),
        Link(net, system.nic_Bps, name="NIC"),
        system.nics_per_node,
        name=system.name,
    )


def _moved(row, system, world: int):
    """The target's share for a row's group: the whole system for a job-wide group, else packed nodes."""
    if row.group_size >= world:
        return system
    g = system.gpus_per_node
    nodes = -(-row.group_size // g)
    return group_system(
        system,
        tuple(range(row.group_size)) if nodes == 1 else tuple(range(nodes * g)),
        row.group_size,
        "what-if: the process group packed on the fewest nodes",
    )


def price(row, system, world: int, algorithm) -> tuple[float | None, str]:
    """Seconds one call of `row` takes on `system` (NCCL's expected time, or the best of -A's algorithms), and
    a note where -A could not price it."""
    if row.size_bytes is None or row.group_size < 2:
        return None, ""
    mine = _moved(row, system, world)
    if algorithm:
        net = Network.of(cluster_of(mine)) if mine.nodes > 1 else Network.of(cluster_of(mine).intra, mine.ranks)
        times, refused = [], []
        for name in algorithm:  # the registry says which of them run this collective here
            try:
                times.append(float(predict.best(row.collective, net, [row.size_bytes], algorithm=[name])[0].total_s[0]))
            except UsageError as e:
                refused.append(str(e))
        if times:
            return min(times), ""
        why = f"{row.collective}: {'; '.join(refused)}; priced with NCCL's choice"
    else:
        why = ""
    ex = expected_and_bound(row.collective, [row.size_bytes], Assumed(mine, shown_values(mine)))
    return (float(ex.expected_s[0]) if ex.expected_s is not None else None), why


def what_if(rows, views, system, world: int, algorithm) -> WhatIf:
    """Price every row on `system`; per step, the exposed communication before and after."""
    priced, table, notes = {}, [], []
    for r in rows:
        t, note = price(r, system, world, algorithm)
        if note:
            notes.append(note)
        priced[(r.process_group, r.collective, r.size_bytes)] = t
        table.append(
            {
                "process_group": r.process_group,
                "collective": r.collective,
                "size_bytes": r.size_bytes,
                "time_s": r.time_s,
                "what_if_s": t,
                "ratio": t / r.time_s if t and r.time_s else None,
            }
        )
    steps = []
    for v in views:
        now = v.exposed_comm_s
        then = now
        if v.calls:
            parts = []
            for call, exposed in v.calls:
                t = priced.get((call.process_group, call.collective, call.size_bytes))
                hidden = call.time_s - exposed
                parts.append(max(0.0, t - hidden) if t is not None else exposed)
            # the measured exposure is of the calls' union; the what-if scales it by the per-call sum's change
            before = sum(e for _, e in v.calls)
            then = now * (sum(parts) / before) if before > 0 else float(np.sum(parts))
        steps.append({"rank": v.rank, "name": v.name, "exposed_comm_s": now, "what_if_exposed_comm_s": then})
    names = ",".join(algorithm) if isinstance(algorithm, (list, tuple)) else algorithm
    how = (
        f"our algorithms ({names}) on a two-level network of {system.name}"
        if algorithm
        else f"NCCL's expected time on {system.name} (diagnose's expectation)"
    )
    return WhatIf(system.name, system.describe(), names or "NCCL's choice", how, table, steps, notes)
