"""Which system a trace is judged on: diagnose's `assume` fed with the Hints the trace gives (the GPU in
deviceProperties, the world size, NCCL's version, the hosts), the user's hardware options on top; and
each process group's share of it."""

from __future__ import annotations

from collperf.diagnose import Assumed, assume
from collperf.expect.shown import shown_values
from collperf.expect.hints import Hints

FROM_TRACE = "from deviceProperties in the trace"


def assume_system(traces, hardware) -> Assumed:
    """The system of the whole job, with provenance. Nodes: the hosts of the traces when every rank's
    trace is given, else the catalogue's GPUs per node (diagnose's rule)."""
    first = traces[0]
    header = {"gpus": [first.gpu]} if first.gpu else {}
    if first.nccl_version:
        header["nccl_version"] = first.nccl_version
    hosts = {t.host for t in traces if t.host}
    nodes = len(hosts) if len(traces) == first.world_size and hosts else None
    # no text: a trace has no NCCL INFO lines to read
    job = Hints(header=header, nodes=nodes, ranks=first.world_size, source="trace")
    assumed = assume(job, hardware)
    if assumed.system is None:
        kinds = {t.kind for t in traces}
        # a Kineto trace names its GPUs; a Flight Recorder dump and NCCL's own records never do
        what = (
            "a CPU/gloo job"
            if kinds == {"kineto"} or first.backend == "gloo"
            else f"{' and '.join(sorted(kinds - {'kineto'}))} records name none"
        )
        why = assumed.why_none.replace(
            "the log names no GPU (no device lines)", f"the trace names no GPU (no deviceProperties: {what})"
        )
        return Assumed(None, [], assumed.notes, why)
    system = assumed.system
    if first.gpu and hardware.cluster is None and hardware.gpu is None:
        system = system.with_(FROM_TRACE, gpu=system.gpu, compute_capability=system.compute_capability)
    if nodes and hardware.nodes is None:
        system = system.with_(f"from the {nodes} host name(s) of the traces", nodes=system.nodes)
    if first.nccl_version and hardware.cluster is None:
        system = system.with_("from distributedInfo in the trace", nccl_version=first.nccl_version)
    return Assumed(system, shown_values(system), assumed.notes)


def group_system(system, pg_ranks: tuple, group_size: int, why: str = "from the process group's ranks"):
    """The part of `system` one process group spans: its ranks' nodes (rank r on node r // GPUs per node)."""
    g = system.gpus_per_node
    ranks = pg_ranks or tuple(range(group_size))
    nodes = len({r // g for r in ranks})
    per = max(1, len(ranks) // nodes)
    if (nodes, per) == (system.nodes, system.gpus_per_node):
        return system
    return system.with_(why, nodes=nodes, gpus_per_node=per)
