"""What one rank communicates in one training step: collectives, counts and sizes (not yet priced).

Per rank and step, m micro-batches, the layers of the busiest pipeline stage (the accounting of the
cost-model chapter "The Collective Cost Model", with gradient accumulation and ZeRO per micro-batch and the
references below for each term):
  TP   per layer and micro-batch 2 allreduces forward, 2 backward of the activation b s h (Megatron,
       Shoeybi et al. 2019 §3); with sequence parallelism each is an allgather + a reducescatter of the
       same tensor (Korthikanti et al. 2022 §4.2.2); full recompute repeats the forward's 2 in the backward.
  PP   per micro-batch and model chunk the activation forward and its gradient back (2 m v sends). With
       sequence parallelism the boundary tensor is the 1/t sequence shard (Korthikanti §4.2.2); Megatron's
       scatter/gather optimisation (Narayanan et al. 2021 §4.1) sends 1/t too and allgathers it in the node.
  DP   ZeRO 0: gradients allreduced in buckets once per step (DDP no_sync / Megatron: only after the last
       micro-batch), or after every micro-batch; ZeRO 1: reducescatter of the gradients in buckets once +
       allgather of the updated parameters; ZeRO 2: the reducescatter after every micro-batch (the
       gradients are sharded, nothing accumulates them whole); ZeRO 3: per micro-batch and layer an
       allgather of its parameters forward, another backward and a reducescatter of its gradients
       (Rajbhandari et al. 2020 §5-7), or with kept parameters one allgather and one reducescatter per
       layer and step.
  CP   context parallel (ring attention, Liu et al. 2023; Megatron-Core context_parallel): per layer and
       micro-batch the K/V shard (2 b s/cp kv/t, kv = kv_heads x head dimension: GQA shrinks it by
       heads / kv_heads) goes round the ring, cp - 1 hops forward, and K/V plus their gradients cp - 1
       hops each backward: 3 (cp - 1) sends; or Llama 3's all-gather of K/V (see _cp_demands).
  EP   MoE (Lepikhin et al. 2020, GShard): per MoE layer and micro-batch an alltoall to dispatch tokens
       to their top-k experts and one to combine them, forward and again backward: 4 alltoalls of
       tokens x k x h bytes (tokens: this rank's b s / cp, / t with sequence parallelism); node-limited
       routing and FP8 dispatch as in DeepSeek-V3 (see _ep_demands).
"""

from __future__ import annotations

from dataclasses import dataclass

from collperf.plan.pipeline import busiest_moe_layers, stage_layers
from collperf.plan.zero3 import get_impl


@dataclass(frozen=True)
class Demand:
    kind: str  # TP PP CP EP DP ZeRO
    dim: str  # the group: tp cp pp dp ep edp dps dpr dph; "pp" and "cp" are neighbour send/recv
    collective: str
    count: int  # per rank per step
    size_bytes: float
    role: str  # how it overlaps with compute (plan/core.py)
    reductions: int = 1  # DP buckets: how many times per step the bucket set is reduced


def _buckets(kind, dim, collective, total_bytes, bucket_bytes, role, reductions):
    full, rest = divmod(total_bytes, bucket_bytes)
    out = []
    if full:
        out.append(Demand(kind, dim, collective, int(full) * reductions, bucket_bytes, role, reductions))
    if rest:
        out.append(Demand(kind, dim, collective, reductions, rest, role, reductions))
    return out


def pp_message_bytes(model, layout) -> float:
    """Bytes crossing a stage boundary per micro-batch: the activation, the 1/t sequence shard with
    sequence parallelism or scatter/gather, 1/cp of it with context parallelism."""
    split = layout.tp if (layout.sequence_parallel or layout.scatter_gather) else 1
    return model.activation / (split * layout.cp)


def demands(model, layout) -> list[Demand]:
    m, v = layout.micro_batches, layout.virtual_stages
    layers = max(stage_layers(model, layout))  # the busiest stage sets the pace
    act = model.activation / layout.cp
    out: list[Demand] = []
    if layout.tp > 1:
        ops = (4 + (2 if layout.recompute == "full" else 0)) * layers * m
        if layout.sequence_parallel:
            out += [
                Demand("TP", "tp", "allgather", ops, act, "tp"),
                Demand("TP", "tp", "reducescatter", ops, act, "tp"),
            ]
        else:
            out.append(Demand("TP", "tp", "allreduce", ops, act, "tp"))
    if layout.pp > 1:
        out.append(Demand("PP", "pp", "sendrecv", 2 * m * v, pp_message_bytes(model, layout), "pp"))
        if layout.scatter_gather and not layout.sequence_parallel and layout.tp > 1:
            out.append(Demand("PP", "tp", "allgather", 2 * m * v, act, "pp"))
    if layout.cp > 1:
        out += _cp_demands(model, layout, layers)
    if model.experts > 1 and layout.expert_parallel > 1:
        tokens = model.micro_batch * model.seq_len / layout.cp / (layout.tp if layout.sequence_parallel else 1)
        out += _ep_demands(model, layout, layers, tokens)
    if layout.dp > 1:
        out += _dp_demands(model, layout, layers)
    return out


def _ep_demands(model, layout, layers, tokens) -> list[Demand]:
    """Dispatch and combine, forward (again with full recompute) and backward, per MoE layer of the
    stage and micro-batch. Node-limited routing (DeepSeek-V3 §3.2.2: a token's experts on at most M
    nodes, each node sent the token once over the network and the copies fanned out over NVLink)
    sends min(top_k, M) copies of a token instead of top_k; the NVLink fan-out is not priced. The
    forward dispatch may travel in FP8 (dispatch_bytes)."""
    m, redo = layout.micro_batches, 1 if layout.recompute == "full" else 0
    moe_layers = busiest_moe_layers(model, layout)
    copies = min(model.top_k, model.route_nodes) if model.route_nodes else model.top_k
    per_token = tokens * copies * model.hidden
    dispatch, combine = (1 + redo) * moe_layers * m, (3 + redo) * moe_layers * m
    if model.dispatch_element_bytes == model.act_bytes:
        return [Demand("EP", "ep", "alltoall", dispatch + combine, per_token * model.act_bytes, "ep")]
    return [
        Demand("EP", "ep", "alltoall", dispatch, per_token * model.dispatch_element_bytes, "ep"),
        Demand("EP", "ep", "alltoall", combine, per_token * model.act_bytes, "ep"),
    ]


def kv_bytes(model, layout) -> float:
    """K and V of one rank's sequence shard: 2 b s/cp kv_width / t elements (GQA: kv_heads x head
    dimension, heads / kv_heads smaller than MHA's hidden)."""
    kv_per_rank = model.kv_width / min(layout.tp, model.n_kv_heads)
    return 2 * model.micro_batch * model.seq_len / layout.cp * kv_per_rank * model.act_bytes


def _cp_demands(model, layout, layers) -> list[Demand]:
    """Ring (Megatron-Core): cp - 1 sends of the K/V shard forward, K/V and their gradients cp - 1 each
    backward. All-gather (Llama 3, Dubey et al. 2024 §3.3.2): one allgather of K/V forward (again with
    full recompute) and one reducescatter of their gradients backward, per layer and micro-batch."""
    m, kv = layout.micro_batches, kv_bytes(model, layout)
    redo = 1 if layout.recompute == "full" else 0
    if layout.cp_allgather:
        return [
            Demand("CP", "cp", "allgather", (1 + redo) * layers * m, kv * layout.cp, "cp"),
            Demand("CP", "cp", "reducescatter", layers * m, kv * layout.cp, "cp"),
        ]
    hops = (3 + redo) * (layout.cp - 1)
    return [Demand("CP", "cp", "sendrecv", hops * layers * m, kv, "cp")]


def _zero3_demands(dim, params, grads, layers, layout) -> list[Demand]:
    """One collective per layer and direction (FSDP) or per parameter tensor (DeepSpeed), zero3.py.
    HSDP (zero3_shard) gathers and reduce-scatters inside its shard group and allreduces each rank's
    gradient shard over the replicas once per step (Zhao et al. 2023 §3.2.2); hpZ (Wang et al. 2023,
    "ZeRO++", §3.2) gathers the backward's parameters from a secondary copy inside its group."""
    k = get_impl(layout.zero3_impl).tensors_per_layer
    ops, p_op, g_op = layers * k, params / (layers * k), grads / (layers * k)
    shard = "dps" if dim == "dp" and layout.zero3_shard else dim
    back = "dph" if dim == "dp" and layout.hpz else shard
    out: list[Demand] = []
    if shard == "dps" and layout.dp > layout.zero3_shard:
        out += _buckets("ZeRO", "dpr", "allreduce", grads / layout.zero3_shard, layout.bucket_bytes, "bucket", 1)
    if layout.keep_params:
        return out + [
            Demand("ZeRO", shard, "allgather", ops, p_op, "z3-keep-ag"),
            Demand("ZeRO", shard, "reducescatter", ops, g_op, "z3-keep-rs"),
        ]
    m = layout.micro_batches
    return out + [
        Demand("ZeRO", shard, "allgather", ops * m, p_op, "z3-fwd"),
        Demand("ZeRO", back, "allgather", ops * m, p_op, "z3-bwd"),
        Demand("ZeRO", shard, "reducescatter", ops * m, g_op, "z3-bwd"),
    ]


def _dp_demands(model, layout, layers) -> list[Demand]:
    m, split = layout.micro_batches, layout.tp * layout.pp
    groups = [("dp", model.dense_params / split)]
    if model.expert_params:
        groups.append(("edp", model.expert_params / (split * layout.expert_parallel)))
    if layout.expert_parallel == layout.dp:
        groups = [g for g in groups if g[0] != "edp"]  # each expert on one rank: nothing to reduce
    out: list[Demand] = []
    for dim, shard in groups:
        grads, params = shard * model.grad_bytes, shard * model.param_bytes
        if layout.zero == 0:
            r = m if layout.reduce_every_microbatch else 1
            out += _buckets("DP", dim, "allreduce", grads, layout.bucket_bytes, "bucket", r)
        elif layout.zero in (1, 2):
            r = m if (layout.zero == 2 or layout.reduce_every_microbatch) else 1
            out += _buckets("DP", dim, "reducescatter", grads, layout.bucket_bytes, "bucket", r)
            out.append(Demand("DP", dim, "allgather", 1, params, "once"))
        else:
            out += _zero3_demands(dim, params, grads, layers, layout)
    return out
