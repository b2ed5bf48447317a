"""Real processes on torch.distributed. torch is imported only below this package.

Our collectives for user code (runtime/ops.py), with torch.distributed's signatures:

    import collperf.runtime as cr
    cr.all_reduce(tensor, op="sum", group=None, algorithm="auto")

They are loaded on first use, so that importing this package does not import torch.
"""

_OPS = (
    "all_reduce",
    "all_gather",
    "all_gather_into_tensor",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "broadcast",
    "reduce",
    "all_to_all",
    "all_to_all_single",
    "set_network",
    "choose",
    "decisions",
)

__all__ = list(_OPS)


def __getattr__(name):
    if name in _OPS:
        from collperf.runtime import ops

        return getattr(ops, name)
    raise AttributeError(f"module 'collperf.runtime' has no attribute {name!r}")
