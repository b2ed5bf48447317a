"""Memory per GPU: weights, gradients, optimizer states (by ZeRO stage) and activations.

Model states (Rajbhandari et al. 2020, "ZeRO", §3 and Figure 1): with mixed-precision Adam a parameter
costs 2 bytes (fp16 weight) + 2 (fp16 gradient) + K = 12 (fp32 master weight, momentum, variance);
ZeRO-1 shards the K bytes over the DP group, ZeRO-2 the gradients too, ZeRO-3 the weights too.

Activations (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
Models", §4 and Table 2), bytes per layer and micro-batch with 16-bit activations, s sequence, b
micro-batch, h hidden, a heads, t tensor parallel:
    no parallelism                        s b h (34 + 5 a s / h)            (eq. 1)
    tensor parallel                       s b h (10 + 24 / t + 5 a s / (h t))   (eq. 2)
    tensor + sequence parallel            s b h / t (34 + 5 a s / h)        (eq. 3)
    selective recompute (drops 5 a s / h) s b h (10 + 24 / t), or 34 s b h / t with sequence parallel
    full recompute (the layer's input)    2 s b h   (we divide it by t with sequence parallel: the stored
                                          input is the sequence shard, as Megatron keeps it)
A fused attention core (FlashAttention, Dao et al. 2022) stores no score matrix: the 5 a s / h term
goes as with selective recompute. With 1F1B the first stage holds p micro-batches in flight, i.e. the activations of all L layers
(§4.2.3); interleaved with v chunks, L (1 + (p - 1) / (p v)) layers. Not counted: the embedding and
output-layer activations (the paper's small extra terms), MoE's top-k scaling of the MLP activations.

Headroom: a plan fits when its total stays under the GPU's memory less a headroom (default HEADROOM, 10 %), because
what is counted above is not all a training process holds: PyTorch's CUDA caching allocator reserves more than
it allocates (fragmentation between freed blocks of other sizes: the PyTorch "CUDA semantics" notes on memory
management and `expandable_segments`), the CUDA context takes several hundred MiB per process, and NCCL's
buffers (NCCL_BUFFSIZE, 4 MiB per channel and peer) and the temporaries of fused kernels come on top. No source
gives one figure for all of them; 10 % is a stated rule of thumb (8 GiB of an 80 GiB GPU), set with
--memory-headroom (0 % counts only the model's states and activations, as before).
"""

from __future__ import annotations

from dataclasses import dataclass

from collperf.plan.gpus import gpu_of, part_of
from collperf.plan.pipeline import stage_layers

GIB = 2**30
HEADROOM = 0.10  # fraction of a GPU's memory kept free by default (see the module's docstring)

# Memory of one GPU per cluster preset (HBM stacks are binary units: an "80GB" H100 or A100 holds 80 GiB).
# NVIDIA H100 SXM and A100 SXM 80GB datasheets (DGX H100, DGX A100 640GB); V100 SXM2/SXM3 32GB (DGX-1V, DGX-2);
# AWS Trainium: 32 GB HBM per chip (trn1 architecture page); nvlink300-400gbe (the cost-model example) follows the DGX H100 it describes.
GPU_MEMORY_BYTES = {
    "dgx-h100": 80 * GIB,
    "dgx-a100": 80 * GIB,
    "dgx-1v": 32 * GIB,
    "dgx-2": 32 * GIB,
    "trn1": 32 * GIB,
    "nvlink300-400gbe": 80 * GIB,
}


@dataclass(frozen=True)
class Memory:
    weights_bytes: float
    grads_bytes: float
    optimizer_bytes: float
    activations_bytes: float
    gpu_bytes: float | None = None
    headroom: float = 0.0  # fraction of gpu_bytes kept free (not usable by the plan)

    @property
    def total_bytes(self) -> float:
        return self.weights_bytes + self.grads_bytes + self.optimizer_bytes + self.activations_bytes

    @property
    def usable_bytes(self) -> float | None:
        """The GPU's memory less the headroom: what the plan's states and activations may take."""
        return None if self.gpu_bytes is None else self.gpu_bytes * (1 - self.headroom)

    @property
    def fits(self) -> bool | None:
        return None if self.gpu_bytes is None else self.total_bytes <= self.usable_bytes

    def to_json(self) -> dict:
        return {
            "weights_bytes": self.weights_bytes,
            "grads_bytes": self.grads_bytes,
            "optimizer_bytes": self.optimizer_bytes,
            "activations_bytes": self.activations_bytes,
            "total_bytes": self.total_bytes,
            "gpu_bytes": self.gpu_bytes,
            "headroom": self.headroom,
            "usable_bytes": self.usable_bytes,
            "fits": self.fits,
        }


def activation_per_layer(model, layout) -> float:
    """Bytes of one layer's stored activations for one micro-batch on one rank (the table above);
    context parallel splits the sequence (and the score matrix's rows) over cp ranks."""
    s, b, h, a, t = model.seq_len, model.micro_batch, model.hidden, model.n_heads, layout.tp
    sbh = s * b * h / layout.cp
    scores = 5 * a * s * s * b / (t * layout.cp)  # 5 a s^2 b / t: softmax input/output, dropout mask
    sp = layout.sequence_parallel
    if layout.recompute == "full":
        per_layer = 2 * sbh / (t if sp else 1)
    else:
        per_layer = 34 * sbh / t if sp else sbh * (10 + 24 / t)
        if layout.recompute == "none" and not layout.flash_attention:
            per_layer += scores  # a fused attention core (FlashAttention) never stores the a s^2 scores
    return per_layer * model.act_bytes / 2  # the paper counts 16-bit activations


def layers_in_flight(model, layout) -> float:
    """Layers' worth of activations the first pipeline stage holds at its peak (1F1B, §4.2.3)."""
    p, v, m = layout.pp, layout.virtual_stages, layout.micro_batches
    layers = max(stage_layers(model, layout))
    if v > 1:
        return layers * p * (1 + (p - 1) / (p * v))
    return layers * min(p, m)


def model_states(model, layout) -> tuple[float, float, float]:
    """(weights, gradients, optimizer) bytes per GPU. Dense parameters are split by tp x pp and sharded
    over dp by ZeRO; expert parameters also by expert_parallel, sharded over dp / expert_parallel."""
    split = layout.tp * layout.pp
    dense, experts = model.dense_params / split, model.expert_params / (split * layout.expert_parallel)
    edp = layout.dp // layout.expert_parallel
    group = layout.zero3_shard or layout.dp  # HSDP shards over its group, not the whole DP

    def shard(stage):  # a state sharded over the DP group from this ZeRO stage on
        return dense / group + experts / edp if layout.zero >= stage else dense + experts

    weights = model.param_bytes * shard(3)
    if layout.zero == 3:
        # gathered weights: all of them when kept, else the layer in use and the one prefetched
        layers = max(stage_layers(model, layout))
        weights += model.param_bytes * (dense + experts) * (1 if layout.keep_params else min(1.0, 2 / layers))
        if layout.hpz:
            weights += model.param_bytes * dense / layout.hpz  # hpZ's secondary copy
    return weights, model.grad_bytes * shard(2), model.optimizer_bytes * shard(1)


def memory(model, layout, gpu_bytes: float | None = None) -> Memory:
    weights, grads, optimizer = model_states(model, layout)
    activations = activation_per_layer(model, layout) * layers_in_flight(model, layout)
    gpu = layout.gpu_memory_bytes if layout.gpu_memory_bytes is not None else gpu_bytes
    return Memory(weights, grads, optimizer, activations, gpu, layout.memory_headroom)


def gpu_memory_of(cluster) -> float | None:
    """One GPU's memory on a cluster preset: the measured table above, else the catalogue system's GPU part."""
    name = getattr(cluster, "name", "")
    if name in GPU_MEMORY_BYTES:
        return GPU_MEMORY_BYTES[name]
    gpu = gpu_of(cluster)
    if gpu is not None:
        return gpu.memory_bytes
    part = part_of(cluster)  # a part whose sheet prints no bf16 peak still has its memory
    return part.memory_bytes if part is not None else None


def headroom_words(m: Memory) -> str:
    """'80.0 GiB less 10 % kept free': how the usable memory was found, as the output states it."""
    return f"{m.gpu_bytes / GIB:.1f} GiB less {100 * m.headroom:.0f} % kept free (--memory-headroom)"
