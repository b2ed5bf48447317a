"""Compute time that depends on shape: a roofline per layer with one fixed parameter set per GPU.

One rank's layer, per micro-batch (T = micro_batch x seq_len / cp tokens, t = tp):
  GEMMs        2 T x (the layer's active parameters) / t FLOPs forward, at peak x the GPU's GEMM
               efficiency for the GEMM's smallest edge (gpus.GPU.gemm_efficiency): short edges --
               a small hidden size, a deep tensor split, few tokens per expert -- run below big ones
  attention    4 T s w / t FLOPs forward (w = heads x head dimension; QK^T and the weighted sum,
               Narayanan et al. 2021 eq. 3); fused (FlashAttention) skips the causal half and runs
               at the GPU's `flash` efficiency with 2.5x the forward FLOPs backward (it recomputes the
               scores, Dao 2023 §3.1); unfused it runs as batched GEMMs at `batched` and writes the
               a s^2 score matrix through HBM (softmax, mask, dropout)
  element-wise bytes through HBM at the GPU's `memory` fraction: layer norms, dropouts and residual
               adds on T h values (split by t with sequence parallelism, else repeated on every TP
               rank), the MLP activation on T ffn / t, the scores when unfused. Counts per value,
               forward: ELEMENTWISE_H reads+writes of each of T h, ELEMENTWISE_FFN of T ffn / t,
               SCORE_PASSES of each score (the activation-memory accounting of Korthikanti et al.
               2022 §4.1 lists the same tensors); backward moves twice the forward's bytes
Backward is twice the forward's GEMM FLOPs; full recompute repeats the forward, selective the
attention core. The last stage adds the LM head (2 T V h / t) and its softmax over V / t logits; the
optimizer step reads and writes each rank's parameter shard once (Adam: about 4 x 4 bytes of state,
the weights and the gradient). The stage with the most work sets the pace of the pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass

from collperf.plan.gpus import GPU
from collperf.plan.memory import model_states
from collperf.plan.pipeline import ComputeSplit, stage_layers

ELEMENTWISE_H = 16  # 2 layer norms (in, out), 2 dropouts (in, out, mask), 2 residual adds (2 in, out)
ELEMENTWISE_FFN = 4  # bias + activation (GeLU/SwiGLU) in and out
SCORE_PASSES = 6  # fused scale-mask-softmax in and out, dropout in, out and mask
LOGIT_PASSES = 6  # cross-entropy over fp32 logits: softmax in/out, the loss gradient (4-byte values)


@dataclass(frozen=True)
class LayerTime:
    forward_s: float
    backward_s: float  # recompute included
    gemm_efficiency: float  # of the layer's dense GEMMs (shown in the plan)


def _gemm_s(gpu: GPU, flops: float, m: float, n: float, k: float) -> float:
    return flops / (gpu.peak_flops * gpu.gemm_efficiency(m, n, k)) if flops else 0.0


def layer_time(model, layout, gpu: GPU) -> LayerTime:
    """One average transformer layer of one micro-batch on one rank."""
    t, h, s = layout.tp, model.hidden, model.seq_len
    tokens = model.micro_batch * s / layout.cp
    hbm = gpu.hbm_Bps * gpu.memory
    attn_params = model.layer_active_params - _mlp_active_params(model)
    gemm_eff = gpu.gemm_efficiency(tokens, min(h, model.ffn) / t, h)
    dense_s = 2 * tokens * attn_params / t / (gpu.peak_flops * gemm_eff)
    mlp_s = _mlp_s(model, layout, gpu, tokens)
    core_flops = 4 * tokens * s * model.core_width / t
    heads = model.n_heads / t
    if layout.flash_attention:
        core_fwd = 0.5 * core_flops / (gpu.peak_flops * gpu.flash)
        core_bwd, score_bytes = 2.5 * core_fwd, 0.0
    else:
        core_fwd = core_flops / (gpu.peak_flops * gpu.batched)
        core_bwd, score_bytes = 2 * core_fwd, SCORE_PASSES * heads * tokens * s * model.act_bytes
    split_h = t if layout.sequence_parallel else 1
    elem_bytes = (ELEMENTWISE_H * tokens * h / split_h + ELEMENTWISE_FFN * tokens * model.ffn / t) * model.act_bytes
    forward = dense_s + mlp_s + core_fwd + (elem_bytes + score_bytes) / hbm
    backward = 2 * (dense_s + mlp_s) + core_bwd + 2 * (elem_bytes + score_bytes) / hbm
    if layout.recompute == "full":
        backward += forward
    elif layout.recompute == "selective":
        backward += core_fwd + score_bytes / hbm
    return LayerTime(forward, backward, gemm_eff)


def _mlp_active_params(model) -> float:
    """MLP parameters one token goes through in an average layer (dense layers, shared and routed experts)."""
    dense = model.mlp_matrices * model.hidden * model.ffn
    if model.experts == 1:
        return dense
    expert = model.mlp_matrices * model.hidden * model.expert_ffn
    moe = (model.top_k + model.shared_experts) * expert
    return (model.dense_layers * dense + model.moe_layers * moe) / model.layers


def _mlp_s(model, layout, gpu: GPU, tokens: float) -> float:
    """Forward time of one average layer's MLP: routed experts see tokens x top_k / experts x ep tokens
    each (fewer, shorter GEMMs: DeepSeek's 2048-wide experts run below a dense MLP)."""
    t, h = layout.tp, model.hidden
    flops = 2 * tokens * _mlp_active_params(model) / t
    if model.experts == 1:
        return _gemm_s(gpu, flops, tokens, model.ffn / t, h)
    per_expert_tokens = tokens * model.top_k / model.experts * layout.expert_parallel
    routed = 2 * tokens * model.top_k * model.mlp_matrices * h * model.expert_ffn / t * model.moe_layers / model.layers
    rest = flops - routed
    return _gemm_s(gpu, routed, per_expert_tokens, model.expert_ffn / t, h) + _gemm_s(
        gpu, rest, tokens, min(model.ffn, model.expert_ffn) / t, h
    )


def head_time(model, layout, gpu: GPU) -> tuple[float, float]:
    """(forward, backward) seconds of the LM head and its loss on the last stage, one micro-batch."""
    if not model.vocab:
        return 0.0, 0.0
    t, h = layout.tp, model.hidden
    tokens = model.micro_batch * model.seq_len / layout.cp
    flops = 2 * tokens * model.vocab * h / t
    gemm = _gemm_s(gpu, flops, tokens, model.vocab / t, h)
    logits = LOGIT_PASSES * tokens * model.vocab / t * 4 / (gpu.hbm_Bps * gpu.memory)
    return gemm + logits / 2, 2 * gemm + logits / 2


def optimizer_time(model, layout, gpu: GPU) -> float:
    """The optimizer step: each rank's shard of the parameters, states, weights and gradients read and
    written once (memory-bound)."""
    weights, grads, optimizer = model_states(model, layout)
    return 2 * (weights + grads + optimizer) / (gpu.hbm_Bps * gpu.memory)


def modelled_compute(model, layout, gpu: GPU) -> ComputeSplit:
    """One rank's compute in a step on the busiest pipeline stage: micro_batches x (its layers + the
    head on the last stage), the optimizer step added to the backward."""
    layer = layer_time(model, layout, gpu)
    head_f, head_b = head_time(model, layout, gpu)
    counts = stage_layers(model, layout)
    stages = [
        (
            n * layer.forward_s + (head_f if i == len(counts) - 1 else 0.0),
            n * layer.backward_s + (head_b if i == len(counts) - 1 else 0.0),
        )
        for i, n in enumerate(counts)
    ]
    forward, backward = max(stages, key=sum)
    m = layout.micro_batches
    return ComputeSplit(m * forward, m * backward + optimizer_time(model, layout, gpu))
