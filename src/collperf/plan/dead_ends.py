"""Why a layout search found nothing, and what would fit: an empty table says neither.

Two dead ends: no layout of the GPUs divides the global batch (more data-parallel replicas than sequences), or
every layout is larger than the GPU's usable memory. For the second, the same enumeration is run at more nodes
(memory only, a closed form: cheap) until one layout fits, and the layout nearest to fitting is named with its
memory, so the user sees how far off the request is.
"""

from __future__ import annotations

from collperf.plan.memory import GIB, memory

MAX_NODES = 1 << 17  # the search for the fewest nodes that fit stops here (far past any cluster built)


def explain_empty(result, model, gpus: int, ranks_per_node: int, global_batch: int, gpu_bytes, layouts) -> None:
    """Fill result.why_empty (and min_nodes, tightest) for a search that kept no plan. `layouts(n)` yields the
    (sized model, layout) candidates of n GPUs, the search's own enumeration."""
    nodes = gpus // ranks_per_node
    if result.considered == 0:
        largest = _largest_nodes(layouts, nodes, ranks_per_node)
        result.why_empty = (
            f"no layout of {gpus} GPUs splits a global batch of {global_batch} sequences: every tp x pp of "
            f"{model.name} leaves more data-parallel replicas than sequences (or none divides the batch into "
            "micro-batches of 1, 2 or 4). "
            + (f"Give fewer --nodes (--nodes {largest} has a layout for this batch) or " if largest else "Give ")
            + "a larger --global-batch (a multiple of the data-parallel degree)."
        )
        return
    tight = min(
        (memory(sized, lay, gpu_bytes).total_bytes, lay.describe(), sized.micro_batch) for sized, lay in layouts(gpus)
    )
    usable = gpu_bytes * (1 - result.headroom)
    result.tightest = (f"{tight[1]} micro-batch {tight[2]}", tight[0])
    result.min_nodes = _fewest_nodes(layouts, nodes, ranks_per_node, gpu_bytes)
    fewest = (
        f"the fewest nodes on which one fits: --nodes {result.min_nodes}"
        if result.min_nodes
        else f"no node count up to {MAX_NODES} fits it"
    )
    result.why_empty = (
        f"none of the {result.considered} layouts of {model.name} on {gpus} GPUs fits in {usable / GIB:.1f} GiB "
        f"usable per GPU ({gpu_bytes / GIB:.1f} GiB less {100 * result.headroom:.0f} % kept free: "
        f"--memory-headroom); the tightest, {result.tightest[0]}, needs {tight[0] / GIB:.1f} GiB; {fewest}, "
        "or a GPU with more memory (--cluster)."
    )


def _node_counts(after: int):
    """Node counts to try above `after`: each up to 256, then doubling."""
    n = after + 1
    while n <= MAX_NODES:
        yield n
        n = n + 1 if n < 256 else n * 2


def _fewest_nodes(layouts, nodes: int, ranks_per_node: int, gpu_bytes) -> int | None:
    for n in _node_counts(nodes):
        found = False
        for sized, lay in layouts(n * ranks_per_node):
            found = True
            if memory(sized, lay, gpu_bytes).fits:
                return n
        if not found:  # past here no layout splits the batch: more nodes cannot help
            return None
    return None


def _largest_nodes(layouts, nodes: int, ranks_per_node: int) -> int | None:
    """The most nodes below `nodes` that still have a layout for the batch (None: none from 1 up)."""
    n = 1
    best = None
    while n < nodes:
        if next(iter(layouts(n * ranks_per_node)), None) is not None:
            best = n
        n *= 2
    return best
