"""Our collectives from user code, on any initialised torch.distributed process group (gloo; NCCL too).

    import collperf.runtime as cr
    cr.all_reduce(grad, op="sum")                    # in place, like dist.all_reduce
    cr.broadcast(weights, src=0, algorithm="binomial")

Each function has the semantics of torch.distributed's function of the same name (in place where
torch's is; `src`/`dst` are global ranks, as in torch) and runs one of our verified schedules with the
executor of runtime/execute.py. `algorithm="auto"` takes, per (collective, size), the algorithm the
model predicts fastest (model/auto/select.py auto_choices) on the group's network: the one given with
`set_network`, else a quick calibration the first time auto is used on a group (a collective call:
every rank of the group makes it, as they make the collective). The backend's own is a candidate too, as
in `bench -A auto`: priced by its fit on the group, and where ours is picked by a close margin both are
timed on the size (once per size octave). `algorithm="builtin"` calls the backend's own. Every rank of the group must pass the same algorithm.
"""

from __future__ import annotations

import functools

import torch
import torch.distributed as dist

from collperf.errors import UsageError
from collperf.model.two_level.build import build, build_two_level, roots_at_zero
from collperf.model.algorithms.modes import is_chooser, is_runtime_only, is_two_level
from collperf.model.network import Link, Network
from collperf.model.auto.select import auto_choices
from collperf.runtime.builtin import run_builtin
from collperf.runtime.auto.builtin_fit import FIT_MAX_BYTES, FIT_MIN_BYTES, builtin_fit, exchange_link
from collperf.runtime.execute import run_schedule
from collperf.runtime.auto.calibration import add_rate_Bps, link
from collperf.runtime.auto.confirm import confirm_choices

DEFAULT_SLICE_BYTES = 0  # execute.py slices_for: per message, from the per-message cost
_OPS = (("sum", "SUM"), ("prod", "PRODUCT"), ("min", "MIN"), ("max", "MAX"), ("avg", "AVG"))
# the schedule each function runs (collectives.py names)
_COLLECTIVE = {
    "all_reduce": "allreduce",
    "broadcast": "broadcast",
    "reduce": "reduce",
    "all_gather": "allgather",
    "all_gather_into_tensor": "allgather",
    "reduce_scatter": "reducescatter",
    "reduce_scatter_tensor": "reducescatter",
    "all_to_all": "alltoall",
    "all_to_all_single": "alltoall",
}
_NETWORKS: dict = {}  # group key -> Network (given or calibrated)
_CHOICES: dict = {}  # (group key, collective, bytes) -> (algorithm, segments)


def _op_name(op) -> str:
    if isinstance(op, str):
        name = op.lower()
        if name in dict(_OPS):
            return name
    else:
        for name, attr in _OPS:
            if op == getattr(dist.ReduceOp, attr, None):
                return name
    raise UsageError(f"reduction op {op!r}: expected one of sum, prod, min, max, avg (or dist.ReduceOp.SUM ...)")


def _key(group):
    return "WORLD" if group is None or group is dist.group.WORLD else id(group)


def _size(group) -> int:
    return dist.get_world_size(group)


def _group_rank(group, global_rank: int) -> int:
    """src/dst are global ranks, as in torch.distributed: their rank in `group`, or a UsageError."""
    if group is None or group is dist.group.WORLD:
        if not 0 <= global_rank < dist.get_world_size():
            raise UsageError(
                f"rank {global_rank} is not in the world of {dist.get_world_size()} ranks: give a "
                f"global rank 0..{dist.get_world_size() - 1}"
            )
        return global_rank
    try:
        return dist.get_group_rank(group, global_rank)
    except (ValueError, RuntimeError):
        members = [dist.get_global_rank(group, r) for r in range(_size(group))]
        raise UsageError(
            f"rank {global_rank} is not in the group (global ranks {members}): src/dst are global "
            "ranks, as in torch.distributed"
        ) from None


def set_network(network, group=None) -> None:
    """The network auto chooses by on `group` (a model.network Network or Link, or None to calibrate again)."""
    if isinstance(network, Link):
        network = Network.of(network, _size(group))
    if network is not None and network.ranks != _size(group):
        raise UsageError(f"the network has {network.ranks} ranks but the group has {_size(group)}")
    key = _key(group)
    _NETWORKS.pop(key, None)
    for k in [k for k in _CHOICES if k[0] == key]:
        del _CHOICES[k]
    if network is not None:
        _NETWORKS[key] = network


def calibrate(group=None, device=None, big_bytes: int = 1 << 20):
    """A quick Link for the group (alpha from 8-byte, bandwidth from `big_bytes` ping-pongs between its
    first and last ranks, gamma from a local add), measured on group rank 0 and broadcast: every rank of the
    group must call it. The last rank, not the second: under torchrun's placement (consecutive ranks per
    node) a group that spans nodes then measures a link between nodes, its slowest, which the flat network
    returned here assumes. The ping-pongs are bench's calibration's (calibration.link); alpha and bandwidth
    are then at least as slow as a batched exchange between neighbours (builtin_fit.exchange_link)."""
    dev = device or torch.device("cpu")
    p = _size(group)
    if p == 1:
        return Network.of(Link(1e-6, 1e9, 1e9, name="quick calibration"), 1)
    first = dist.get_global_rank(group, 0) if group else 0
    last = dist.get_global_rank(group, p - 1) if group else p - 1
    measured = link(first, last, big_bytes // 4, 3, dev, group)
    gamma = add_rate_Bps(big_bytes, dev, iters=3)
    values = torch.zeros(3, dtype=torch.float64, device=dev)
    if measured is not None:
        values[:] = torch.tensor([measured["latency_s"], measured["bandwidth_Bps"], gamma])
    dist.broadcast(values, src=first, group=group)
    alpha, bandwidth, gamma = values.tolist()
    # what a step of our executor costs on the group (gloo's per-message work included), and never less than
    # the ping-pong's slowest link: the segments of pipelined schedules follow what runs
    step = exchange_link([FIT_MIN_BYTES, FIT_MAX_BYTES], p, group=group, dev=dev)
    return Network.of(
        Link(max(alpha, step.latency_s), min(bandwidth, step.bandwidth_Bps), gamma, name="quick calibration"), p
    )


def choose(collective: str, size_bytes: int, group=None, device=None, root: int = 0) -> tuple[str, int | None]:
    """auto's (algorithm, segments) for `size_bytes` of `collective` on `group` (root: a group rank): bench's
    chooser (model/auto/select.py auto_choices) with the backend's built-in as a candidate, priced by its fit on the
    group (runtime/auto/builtin_fit.py), and a close call between ours and it timed (runtime/auto/confirm.py)."""
    key = (_key(group), collective, size_bytes, root)
    if key not in _CHOICES:
        if _key(group) not in _NETWORKS:
            _NETWORKS[_key(group)] = calibrate(group, device)
        network = _NETWORKS[_key(group)]
        dev = device or torch.device("cpu")
        # one fit per group and collective, over the sizes the fit covers (sizes differ from call to call)
        fit = builtin_fit(collective, [FIT_MIN_BYTES, FIT_MAX_BYTES], _size(group), root, group=group, dev=dev)
        c = auto_choices(collective, network, [size_bytes], root=root, builtin=fit)[0]
        _CHOICES[key] = confirm_choices([c], collective, root, group, DEFAULT_SLICE_BYTES, _shape(network), dev=dev)[0]
    return _CHOICES[key].algorithm, _CHOICES[key].segments


def decisions(group=None) -> list[dict]:
    """What auto chose on `group` so far, one dict per (collective, size, root): the algorithm, its segments,
    the predicted times and what decided it ("model", or "measured" with both timings)."""
    return [{"collective": k[1], "root": k[3], **c.to_json()} for k, c in _CHOICES.items() if k[0] == _key(group)]


def _shape(network) -> tuple[int, int] | None:
    c = network.cluster
    return (c.nodes, c.ranks_per_node) if c is not None else None


@functools.lru_cache(maxsize=256)
def _schedule(collective: str, algorithm: str, p: int, root: int, segments: int, two_level=None):
    if is_two_level(algorithm):
        return build_two_level(collective, *two_level, segments=segments)
    return build(collective, algorithm, p, root=root, segments=segments)


def _two_level(collective: str, group, root: int) -> tuple[int, int]:
    """[nodes, ranks per node] of the group's network (set_network with a two-level Network) for
    algorithm="hierarchical": group ranks node by node, the root the first rank."""
    network = _NETWORKS.get(_key(group))
    c = network.cluster if network is not None else None
    if c is None:
        raise UsageError(
            "algorithm='hierarchical' needs the group's nodes: call collperf.runtime.set_network("
            "Network.of(Cluster(nodes, ranks_per_node, intra, inter), p), group) first"
        )
    if not roots_at_zero(collective, root):
        raise UsageError(
            f"algorithm='hierarchical' roots {collective} at group rank 0, not {root}: use another algorithm or root 0"
        )
    return (c.nodes, c.ranks_per_node)


def _run(
    collective: str,
    algorithm: str,
    inp: torch.Tensor,
    out: torch.Tensor,
    op: str,
    group,
    root: int = 0,
    segments: int = 1,
    slice_bytes: int | None = None,
) -> None:
    p = _size(group)
    if is_chooser(algorithm):
        algorithm, chosen = choose(
            collective, max(inp.numel(), out.numel()) * inp.element_size(), group, inp.device, root
        )
        segments = chosen or segments
        if is_runtime_only(algorithm):  # auto chose the backend's own
            return run_builtin(collective, inp, out, op, root, group)
    shape = _two_level(collective, group, root) if is_two_level(algorithm) else None
    s = _schedule(collective, algorithm, p, root, segments, shape)
    run_schedule(s, inp, out, op, inp.numel(), slice_bytes or DEFAULT_SLICE_BYTES, group=group)


def _flat(tensor: torch.Tensor) -> torch.Tensor:
    """A 1-D view of the tensor's elements (a contiguous copy where it has none: see _back)."""
    return tensor.view(-1) if tensor.is_contiguous() else tensor.contiguous().view(-1)


def _back(tensor: torch.Tensor, flat: torch.Tensor) -> None:
    if flat.data_ptr() != tensor.data_ptr() or not tensor.is_contiguous():
        tensor.copy_(flat.view(tensor.shape))


def _check(name: str, async_op: bool, *tensors) -> None:
    if async_op:
        raise UsageError(f"{name}: async_op=True is not supported by collperf's collectives: call it synchronously")
    for t in tensors:
        if not isinstance(t, torch.Tensor):
            raise UsageError(f"{name}: expected tensors, got {type(t).__name__}")


def all_reduce(
    tensor: torch.Tensor,
    op="sum",
    group=None,
    algorithm: str = "auto",
    async_op: bool = False,
    slice_bytes: int | None = None,
) -> None:
    """dist.all_reduce: `tensor` becomes the reduction over the group's ranks, in place."""
    _check("all_reduce", async_op, tensor)
    name = _op_name(op)
    if is_runtime_only(algorithm):
        return dist.all_reduce(tensor, op=getattr(dist.ReduceOp, dict(_OPS)[name]), group=group)
    if name == "avg" and not tensor.dtype.is_floating_point:
        raise UsageError(f"op avg needs a floating-point tensor (got {tensor.dtype})")
    flat = _flat(tensor)
    _run("allreduce", algorithm, flat, flat, name, group, slice_bytes=slice_bytes)
    _back(tensor, flat)


def broadcast(
    tensor: torch.Tensor,
    src: int,
    group=None,
    algorithm: str = "auto",
    async_op: bool = False,
    slice_bytes: int | None = None,
) -> None:
    """dist.broadcast: every rank's `tensor` becomes global rank `src`'s, in place."""
    _check("broadcast", async_op, tensor)
    if is_runtime_only(algorithm):
        return dist.broadcast(tensor, src=src, group=group)
    flat = _flat(tensor)
    _run("broadcast", algorithm, flat, flat, "sum", group, root=_group_rank(group, src), slice_bytes=slice_bytes)
    _back(tensor, flat)


def reduce(
    tensor: torch.Tensor,
    dst: int,
    op="sum",
    group=None,
    algorithm: str = "auto",
    async_op: bool = False,
    slice_bytes: int | None = None,
) -> None:
    """dist.reduce: global rank `dst`'s `tensor` becomes the reduction, in place (others' are scratch)."""
    _check("reduce", async_op, tensor)
    name = _op_name(op)
    if is_runtime_only(algorithm):
        return dist.reduce(tensor, dst=dst, op=getattr(dist.ReduceOp, dict(_OPS)[name]), group=group)
    flat = _flat(tensor)
    _run("reduce", algorithm, flat, flat, name, group, root=_group_rank(group, dst), slice_bytes=slice_bytes)
    _back(tensor, flat)


def all_gather_into_tensor(
    output_tensor: torch.Tensor,
    input_tensor: torch.Tensor,
    group=None,
    algorithm: str = "auto",
    async_op: bool = False,
    slice_bytes: int | None = None,
) -> None:
    """dist.all_gather_into_tensor: `output_tensor` holds every rank's input, in rank order."""
    _check("all_gather_into_tensor", async_op, output_tensor, input_tensor)
    p = _size(group)
    if output_tensor.numel() != p * input_tensor.numel():
        raise UsageError(
            f"all_gather: output has {output_tensor.numel()} elements, expected {p} x {input_tensor.numel()}"
        )
    if is_runtime_only(algorithm):
        fn = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor  # the newer name first
        return fn(output_tensor, input_tensor, group=group)
    out = _flat(output_tensor)
    _run("allgather", algorithm, _flat(input_tensor), out, "sum", group, slice_bytes=slice_bytes)
    _back(output_tensor, out)


def all_gather(
    tensor_list: list,
    tensor: torch.Tensor,
    group=None,
    algorithm: str = "auto",
    async_op: bool = False,
    slice_bytes: int | None = None,
) -> None:
    """dist.all_gather: tensor_list[i] becomes group rank i's `tensor`."""
    _check("all_gather", async_op, tensor, *tensor_list)
    _same_sizes("all_gather", tensor_list, tensor, _size(group))
    if is_runtime_only(algorithm):
        return dist.all_gather(tensor_list, tensor, group=group)
    out = torch.empty(len(tensor_list) * tensor.numel(), dtype=tensor.dtype, device=tensor.device)
    _run("allgather", algorithm, _flat(tensor), out, "sum", group, slice_bytes=slice_bytes)
    n = tensor.numel()
    for i, t in enumerate(tensor_list):
        t.copy_(out[i * n : (i + 1) * n].view(t.shape))


def reduce_scatter_tensor(
    output: torch.Tensor,
    input: torch.Tensor,
    op="sum",
    group=None,
    algorithm: str = "auto",
    async_op: bool = False,
    slice_bytes: int | None = None,
) -> None:
    """dist.reduce_scatter_tensor: `output` becomes block (group rank) of the reduction of the inputs."""
    _check("reduce_scatter_tensor", async_op, output, input)
    name, p = _op_name(op), _size(group)
    if input.numel() != p * output.numel():
        raise UsageError(f"reduce_scatter: input has {input.numel()} elements, expected {p} x {output.numel()}")
    if is_runtime_only(algorithm):
        fn = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
        return fn(output, input, op=getattr(dist.ReduceOp, dict(_OPS)[name]), group=group)
    out = _flat(output)
    _run("reducescatter", algorithm, _flat(input), out, name, group, slice_bytes=slice_bytes)
    _back(output, out)


def reduce_scatter(
    output: torch.Tensor,
    input_list: list,
    op="sum",
    group=None,
    algorithm: str = "auto",
    async_op: bool = False,
    slice_bytes: int | None = None,
) -> None:
    """dist.reduce_scatter: `output` becomes the reduction over ranks of their input_list[group rank]."""
    _check("reduce_scatter", async_op, output, *input_list)
    _same_sizes("reduce_scatter", input_list, output, _size(group))
    if is_runtime_only(algorithm):
        name = _op_name(op)
        return dist.reduce_scatter(output, input_list, op=getattr(dist.ReduceOp, dict(_OPS)[name]), group=group)
    reduce_scatter_tensor(
        output, torch.cat([t.reshape(-1) for t in input_list]), op, group, algorithm, slice_bytes=slice_bytes
    )


def all_to_all_single(
    output: torch.Tensor,
    input: torch.Tensor,
    group=None,
    algorithm: str = "auto",
    async_op: bool = False,
    slice_bytes: int | None = None,
) -> None:
    """dist.all_to_all_single with equal splits: block j of rank i's input becomes block i of rank j's output."""
    _check("all_to_all_single", async_op, output, input)
    p = _size(group)
    if input.numel() != output.numel() or input.numel() % p:
        raise UsageError(
            f"all_to_all_single: input and output need the same number of elements, a multiple of "
            f"{p} (got {input.numel()} and {output.numel()}); uneven splits: use algorithm='builtin'"
        )
    if is_runtime_only(algorithm):
        return dist.all_to_all_single(output, input, group=group)
    out = _flat(output)
    _run("alltoall", algorithm, _flat(input), out, "sum", group, slice_bytes=slice_bytes)
    _back(output, out)


def all_to_all(
    output_tensor_list: list,
    input_tensor_list: list,
    group=None,
    algorithm: str = "auto",
    async_op: bool = False,
    slice_bytes: int | None = None,
) -> None:
    """dist.all_to_all (tensors of one size): output_tensor_list[i] becomes rank i's input_tensor_list[me]."""
    _check("all_to_all", async_op, *output_tensor_list, *input_tensor_list)
    p = _size(group)
    if len(input_tensor_list) != p or len(output_tensor_list) != p:
        raise UsageError(f"all_to_all: expected {p} input and {p} output tensors")
    sizes = {t.numel() for t in [*input_tensor_list, *output_tensor_list]}
    if is_runtime_only(algorithm) or len(sizes) != 1:
        if not is_runtime_only(algorithm):
            raise UsageError("all_to_all: tensors of different sizes: use algorithm='builtin'")
        return dist.all_to_all(output_tensor_list, input_tensor_list, group=group)
    inp = torch.cat([t.reshape(-1) for t in input_tensor_list])
    out = torch.empty_like(inp)
    _run("alltoall", algorithm, inp, out, "sum", group, slice_bytes=slice_bytes)
    n = out.numel() // p
    for i, t in enumerate(output_tensor_list):
        t.copy_(out[i * n : (i + 1) * n].view(t.shape))


def _same_sizes(name: str, tensors: list, like: torch.Tensor, p: int) -> None:
    if len(tensors) != p:
        raise UsageError(f"{name}: expected a list of {p} tensors (one per rank of the group), got {len(tensors)}")
    if any(t.numel() != like.numel() or t.dtype != like.dtype for t in tensors):
        raise UsageError(f"{name}: every tensor of the list must have {like.numel()} elements of {like.dtype}")
