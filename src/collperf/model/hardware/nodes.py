"""How a rank count sits on a catalogue system's nodes: the one check predict and diagnose share.

A node holds at most the system's GPUs per node, one rank each. A run may use fewer of a node's GPUs (public
runs of 2 x 4 GPUs on 8-GPU machines are common), so the ranks per node may be below it, never above. Without a
node count, the ranks fill whole nodes (16 on an 8-GPU system: 2 nodes) or fit on one (4: one node); anything
else (12 on 8-GPU nodes) is a layout the user must say, so it is refused with the choices that would work.
"""

from __future__ import annotations

from collperf.errors import UsageError


def nodes_for(
    ranks: int | None,
    nodes: int | None,
    gpus_per_node: int,
    *,
    system: str,
    ranks_said: str | None = None,
    nodes_said: str | None = None,
    escape: str = "",
) -> int:
    """The node count `ranks` run on, on a system (`system`: how the user named it, e.g. '--cluster dgx-h100')
    whose nodes hold `gpus_per_node` GPUs; a UsageError naming the inputs as typed (`ranks_said`,
    `nodes_said`: '--ranks 12', '--nodes 2' by default) and the layouts that would work. `escape` ends a refusal
    where another flag lifts it (predict: '; or --ranks-per-node N to price nodes of N ranks anyway')."""
    if not ranks:
        return nodes or 1
    ranks_said = ranks_said or f"--ranks {ranks}"
    fewest = _fewest_nodes(ranks, gpus_per_node)
    spread = f"--nodes {fewest} ({ranks // fewest} rank(s) on each node)"
    if nodes is not None:
        nodes_said = nodes_said or f"--nodes {nodes}"
        if ranks % nodes:
            raise UsageError(
                f"{ranks_said} does not split evenly over {nodes_said}: give {spread}, or a rank count "
                f"that is a multiple of {nodes}"
            )
        if ranks // nodes > gpus_per_node:
            raise UsageError(
                f"{ranks_said} on {nodes_said} puts {ranks // nodes} ranks on each node, but a node of "
                f"{system} has {gpus_per_node} GPUs: give {spread}, or at most {nodes * gpus_per_node} "
                f"ranks on {nodes} node(s){escape}"
            )
        return nodes
    if ranks <= gpus_per_node:
        return 1
    if ranks % gpus_per_node:
        lower = ranks // gpus_per_node * gpus_per_node
        raise UsageError(
            f"{ranks_said} neither fills whole nodes of {system} ({gpus_per_node} GPUs each) nor fits "
            f"on one: give a multiple of {gpus_per_node} (e.g. {lower} or {lower + gpus_per_node}), or "
            f"say how they spread: {spread}{escape}"
        )
    return ranks // gpus_per_node


def nics_used(nics_per_node: int, gpus_per_node: int, used_per_node: int) -> int:
    """The NICs a run on `used_per_node` of a node's GPUs uses: with a NIC per GPU (one rail each) those GPUs' own,
    else all of the node's (they are shared by every GPU)."""
    if nics_per_node >= gpus_per_node > used_per_node:
        return max(1, nics_per_node * used_per_node // gpus_per_node)
    return nics_per_node


def _fewest_nodes(ranks: int, gpus_per_node: int) -> int:
    """The fewest nodes that hold `ranks` in equal shares of at most `gpus_per_node` (12 on 8-GPU nodes: 2)."""
    count = -(-ranks // gpus_per_node)
    while ranks % count:
        count += 1
    return count
