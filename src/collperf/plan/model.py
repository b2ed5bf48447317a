"""What is trained: a transformer's shape (ModelSpec), the presets, and the rule for unknown dimensions.

FLOPs (Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters Using
Megatron-LM", eq. 3, also Korthikanti et al. 2022 §6): per token and step 6 x parameters (forward 2,
backward 4) plus 12 x layers x seq_len x hidden for the attention scores (QK^T and the weighted sum,
forward and backward).
"""

from __future__ import annotations

from dataclasses import dataclass

from collperf.errors import UsageError

HEAD_DIM = 128          # the rule for unknown heads: hidden / 128 (GPT-3 175B, Llama-2 7B/13B/70B all use 128)
ASPECT = 128            # the rule for unknown shapes: hidden / layers = 128 (GPT-3 175B: 12288 / 96)
_SHAPES: dict = {}      # preset name -> (params, layers, hidden), filled below


@dataclass(frozen=True)
class ModelSpec:
    name: str
    params: float               # parameters (all experts included)
    layers: int
    hidden: int
    seq_len: int
    micro_batch: int = 1        # sequences per micro-batch
    param_bytes: int = 2
    grad_bytes: int = 2
    act_bytes: int = 2
    activation_bytes: float | None = None   # override of micro_batch x seq_len x hidden x act_bytes
    heads: int | None = None    # attention heads; None: hidden / HEAD_DIM
    vocab: int = 0              # vocabulary (its embedding is part of `params`; 0: not separated)
    optimizer_bytes: int = 12   # Adam in mixed precision: fp32 master weights, momentum, variance (ZeRO paper K=12)
    experts: int = 1            # MoE experts per MoE layer (1: dense)
    top_k: int = 1              # experts each token is routed to

    def __post_init__(self):
        for name in ("params", "layers", "hidden", "seq_len", "micro_batch", "param_bytes", "grad_bytes", "act_bytes",
                     "experts", "top_k"):
            value = getattr(self, name)
            if isinstance(value, bool) or not value > 0:
                raise UsageError(f"model {name} {value!r} must be positive")
        if self.heads is not None and (self.heads < 1 or self.hidden % self.heads):
            raise UsageError(f"model heads({self.heads}) must divide hidden({self.hidden})")
        if self.top_k > self.experts:
            raise UsageError(f"top_k({self.top_k}) > experts({self.experts}): a token cannot use more experts than exist")
        if self.vocab < 0 or self.optimizer_bytes < 0:
            raise UsageError(f"vocab({self.vocab}) and optimizer_bytes({self.optimizer_bytes}) must be >= 0")
        preset = _SHAPES.get(self.name)
        if preset is not None and preset != (self.params, self.layers, self.hidden):
            # a preset edited with --params/--layers/--hidden is not that preset any more
            object.__setattr__(self, "name", custom_label(self.params, self.layers, self.hidden))

    @property
    def n_heads(self) -> int:
        return self.heads if self.heads is not None else max(1, self.hidden // HEAD_DIM)

    @property
    def activation(self) -> float:
        """Bytes of one micro-batch's activation tensor (what TP reduces and PP sends)."""
        if self.activation_bytes is not None:
            return float(self.activation_bytes)
        return float(self.micro_batch * self.seq_len * self.hidden * self.act_bytes)

    @property
    def expert_params(self) -> float:
        """Parameters in the experts: each MoE layer holds `experts` MLPs of 8 h^2 (h -> 4h -> h), the
        dense transformer's MLP (Vaswani et al. 2017; Megatron's 12 h^2 per layer = 4 h^2 attention + 8 h^2 MLP)."""
        if self.experts == 1:
            return 0.0
        return min(self.params, self.layers * self.experts * 8.0 * self.hidden ** 2)

    @property
    def dense_params(self) -> float:
        return self.params - self.expert_params

    @property
    def active_params(self) -> float:
        """Parameters one token goes through: the dense part and top_k of the experts."""
        return self.dense_params + self.expert_params * self.top_k / self.experts

    def flops_per_token(self) -> float:
        """Model FLOPs of one token, forward and backward (Narayanan et al. 2021 eq. 3)."""
        return 6.0 * self.active_params + 12.0 * self.layers * self.seq_len * self.hidden


def custom_label(params: float, layers: int, hidden: int) -> str:
    return f"custom {params / 1e9:.3g}B ({layers} layers, hidden {hidden})"


def custom_model(params: float, layers: int | None = None, hidden: int | None = None, seq_len: int = 4096,
                 name: str | None = None, **fields) -> ModelSpec:
    """A model given by its parameter count; unknown dimensions follow one stated rule: a layer holds
    12 h^2 parameters (Megatron's count) and hidden / layers = ASPECT (128, GPT-3 175B's ratio), hidden
    rounded to a multiple of HEAD_DIM (128) and heads = hidden / 128."""
    if not params > 0:
        raise UsageError(f"model params {params!r} must be positive")
    if hidden is None and layers is None:
        hidden = max(HEAD_DIM, round((params * ASPECT / 12) ** (1 / 3) / HEAD_DIM) * HEAD_DIM)
    if hidden is None:
        hidden = max(HEAD_DIM, round((params / (12 * layers)) ** 0.5 / HEAD_DIM) * HEAD_DIM)
    if layers is None:
        layers = max(1, round(params / (12 * hidden ** 2)))
    return ModelSpec(name or custom_label(params, layers, hidden), params, layers, hidden, seq_len, **fields)


def gpt_params(layers: int, hidden: int, vocab: int, seq_len: int) -> float:
    """12 l h^2 (1 + 13 / (12 h) + (V + s) / (12 l h)): Narayanan et al. 2021 eq. 2."""
    return 12.0 * layers * hidden ** 2 * (1 + 13 / (12 * hidden) + (vocab + seq_len) / (12 * layers * hidden))


# Shapes of common open models (Llama-2 7B/13B/70B: layers, hidden size; 4096-token sequences), and the
# four GPT models of Korthikanti et al. 2022 Table 3 (sequence 2048, vocabulary 51200, heads as published).
MODELS = {m.name: m for m in (
    ModelSpec("7b", 6.7e9, 32, 4096, 4096),
    ModelSpec("13b", 13e9, 40, 5120, 4096),
    ModelSpec("70b", 70e9, 80, 8192, 4096),
    ModelSpec("gpt3-22b", gpt_params(48, 6144, 51200, 2048), 48, 6144, 2048, heads=64, vocab=51200),
    ModelSpec("gpt3-175b", gpt_params(96, 12288, 51200, 2048), 96, 12288, 2048, heads=96, vocab=51200),
    ModelSpec("gpt3-530b", gpt_params(105, 20480, 51200, 2048), 105, 20480, 2048, heads=128, vocab=51200),
    ModelSpec("gpt3-1t", gpt_params(128, 25600, 51200, 2048), 128, 25600, 2048, heads=160, vocab=51200),
)}
_SHAPES.update({name: (m.params, m.layers, m.hidden) for name, m in MODELS.items()})


def get_model(name: str) -> ModelSpec:
    key = str(name).lower()
    if key not in MODELS:
        raise UsageError(f"unknown model {name!r}: expected one of {', '.join(MODELS)} (or describe it with "
                         "--params --layers --hidden --seq-len)")
    return MODELS[key]
