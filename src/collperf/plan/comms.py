"""What one rank communicates in one training step: collectives, counts and sizes (not yet priced).

Per rank and step, m micro-batches, L/p layers in its stage (the accounting of the cost-model chapter
"The Collective Cost Model", with the references below for each term):
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
       micro-batch the K/V shard (2 b s/cp h/t) goes round the ring, cp - 1 hops forward, and K/V plus
       their gradients cp - 1 hops each backward: 3 (cp - 1) sends.
  EP   MoE (Lepikhin et al. 2020, GShard): per MoE layer and micro-batch an alltoall to dispatch tokens
       to their top-k experts and one to combine them, forward and again backward: 4 alltoalls of
       tokens x k x h bytes (tokens: this rank's b s / cp, / t with sequence parallelism).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Demand:
    kind: str           # TP PP CP EP DP ZeRO
    dim: str            # the group: tp cp pp dp ep edp; "pp" and "cp" are neighbour send/recv
    collective: str
    count: int          # per rank per step
    size_bytes: float
    role: str           # how it overlaps with compute (plan/core.py)
    reductions: int = 1     # DP buckets: how many times per step the bucket set is reduced


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
    stage_layers = model.layers // layout.pp
    act = model.activation / layout.cp
    out: list[Demand] = []
    if layout.tp > 1:
        ops = (4 + (2 if layout.recompute == "full" else 0)) * stage_layers * m
        if layout.sequence_parallel:
            out += [Demand("TP", "tp", "allgather", ops, act, "tp"), Demand("TP", "tp", "reducescatter", ops, act, "tp")]
        else:
            out.append(Demand("TP", "tp", "allreduce", ops, act, "tp"))
    if layout.pp > 1:
        out.append(Demand("PP", "pp", "sendrecv", 2 * m * v, pp_message_bytes(model, layout), "pp"))
        if layout.scatter_gather and not layout.sequence_parallel and layout.tp > 1:
            out.append(Demand("PP", "tp", "allgather", 2 * m * v, act, "pp"))
    if layout.cp > 1:
        kv = 2 * model.micro_batch * model.seq_len / layout.cp * model.hidden / layout.tp * model.act_bytes
        hops = (3 + (1 if layout.recompute == "full" else 0)) * (layout.cp - 1)
        out.append(Demand("CP", "cp", "sendrecv", hops * stage_layers * m, kv, "cp"))
    if model.experts > 1 and layout.expert_parallel > 1:
        tokens = model.micro_batch * model.seq_len / layout.cp / (layout.tp if layout.sequence_parallel else 1)
        ops = (4 + (2 if layout.recompute == "full" else 0)) * stage_layers * m
        out.append(Demand("EP", "ep", "alltoall", ops, tokens * model.top_k * model.hidden * model.act_bytes, "ep"))
    if layout.dp > 1:
        out += _dp_demands(model, layout, stage_layers)
    return out


def _dp_demands(model, layout, stage_layers) -> list[Demand]:
    m, split = layout.micro_batches, layout.tp * layout.pp
    groups = [("dp", model.dense_params / split)]
    if model.expert_params:
        groups.append(("edp", model.expert_params / (split * layout.expert_parallel)))
    if layout.expert_parallel == layout.dp:
        groups = [g for g in groups if g[0] != "edp"]       # each expert on one rank: nothing to reduce
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
        elif layout.keep_params:
            out += [Demand("ZeRO", dim, "allgather", stage_layers, params / stage_layers, "z3-keep-ag"),
                    Demand("ZeRO", dim, "reducescatter", stage_layers, grads / stage_layers, "z3-keep-rs")]
        else:
            out += [Demand("ZeRO", dim, "allgather", stage_layers * m, params / stage_layers, "z3-fwd"),
                    Demand("ZeRO", dim, "allgather", stage_layers * m, params / stage_layers, "z3-bwd"),
                    Demand("ZeRO", dim, "reducescatter", stage_layers * m, grads / stage_layers, "z3-bwd")]
    return out
