"""What is trained: a transformer's shape (ModelSpec), the presets, and the rule for unknown dimensions.

FLOPs (Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters Using
Megatron-LM", eq. 3, also Korthikanti et al. 2022 §6): per token and step 6 x parameters (forward 2,
backward 4) plus 12 x layers x seq_len x hidden for the attention scores (QK^T and the weighted sum,
forward and backward).
"""

from __future__ import annotations

from dataclasses import dataclass

from collperf.errors import UsageError, did_you_mean

HEAD_DIM = 128  # the rule for unknown heads: hidden / 128 (GPT-3 175B, Llama-2 7B/13B/70B all use 128)
ASPECT = 128  # the rule for unknown shapes: hidden / layers = 128 (GPT-3 175B: 12288 / 96)
_SHAPES: dict = {}  # preset name -> (params, layers, hidden), filled below


@dataclass(frozen=True)
class ModelSpec:
    name: str
    params: float  # parameters (all experts included)
    layers: int
    hidden: int
    seq_len: int
    micro_batch: int = 1  # sequences per micro-batch
    param_bytes: int = 2
    grad_bytes: int = 2
    act_bytes: int = 2
    activation_bytes: float | None = None  # override of micro_batch x seq_len x hidden x act_bytes
    heads: int | None = None  # attention heads; None: hidden / HEAD_DIM
    vocab: int = 0  # vocabulary (its embedding is part of `params`; 0: not separated)
    optimizer_bytes: int = 12  # Adam in mixed precision: fp32 master weights, momentum, variance (ZeRO paper K=12)
    experts: int = 1  # MoE experts per MoE layer (1: dense)
    top_k: int = 1  # experts each token is routed to
    kv_heads: int | None = None  # grouped-query attention: K/V heads (None: = heads; 1: multi-query)
    ffn_hidden: int | None = None  # the dense MLP's inner size (None: 4 h)
    gated_mlp: bool = False  # SwiGLU: three matrices h x ffn instead of two (Shazeer 2020)
    tied_embeddings: bool = True  # the LM head shares the input embedding (GPT-2/3, BLOOM) or not (Llama)
    moe_ffn_hidden: int | None = None  # each routed expert's inner size (None: ffn_hidden; DeepSeek: fine-grained)
    shared_experts: int = 0  # experts every token goes through (DeepSeekMoE), replicated like dense
    dense_layers: int = 0  # the first layers of an MoE model that keep a dense MLP
    route_nodes: int | None = None  # node-limited routing: a token's experts on at most this many nodes
    dispatch_bytes: int | None = None  # bytes per element of the MoE dispatch (1: FP8), None: act_bytes
    attention_params: float | None = None  # one layer's attention parameters when not MHA/GQA (MLA)
    attention_width: int | None = None  # heads x head dimension of the attention core (None: hidden)

    def __post_init__(self):
        for name in (
            "params",
            "layers",
            "hidden",
            "seq_len",
            "micro_batch",
            "param_bytes",
            "grad_bytes",
            "act_bytes",
            "experts",
            "top_k",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not value > 0:
                raise UsageError(f"model {name} {value!r} must be positive")
        if self.heads is not None and (self.heads < 1 or self.hidden % self.heads):
            raise UsageError(f"model heads({self.heads}) must divide hidden({self.hidden})")
        if self.top_k > self.experts:
            raise UsageError(
                f"top_k({self.top_k}) > experts({self.experts}): a token cannot use more experts than exist"
            )
        self._check_shape()
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
    def head_dim(self) -> float:
        return self.hidden / self.n_heads

    @property
    def n_kv_heads(self) -> int:
        return self.kv_heads if self.kv_heads is not None else self.n_heads

    @property
    def kv_width(self) -> float:
        """Width of K (and of V) per token: kv_heads x head dimension (hidden without GQA)."""
        return self.n_kv_heads * self.head_dim

    @property
    def ffn(self) -> int:
        return self.ffn_hidden if self.ffn_hidden is not None else 4 * self.hidden

    @property
    def mlp_matrices(self) -> int:
        return 3 if self.gated_mlp else 2

    @property
    def expert_ffn(self) -> int:
        return self.moe_ffn_hidden if self.moe_ffn_hidden is not None else self.ffn

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.experts > 1 else 0

    @property
    def expert_params(self) -> float:
        """Parameters in the routed experts: each MoE layer holds `experts` MLPs of mlp_matrices x h x
        expert_ffn (8 h^2 for the dense transformer's h -> 4h -> h MLP, Vaswani et al. 2017)."""
        if self.experts == 1:
            return 0.0
        return min(self.params, self.moe_layers * self.experts * self.mlp_matrices * self.hidden * self.expert_ffn)

    @property
    def embedding_params(self) -> float:
        """The input embedding and, when not tied, the LM head (0 when the vocabulary is not given)."""
        return self.vocab * self.hidden * (1 if self.tied_embeddings else 2)

    @property
    def layer_active_params(self) -> float:
        """Parameters one token goes through in an average transformer layer (no embedding, no head)."""
        return max(0.0, self.active_params - self.embedding_params) / self.layers

    @property
    def dispatch_element_bytes(self) -> int:
        return self.dispatch_bytes if self.dispatch_bytes is not None else self.act_bytes

    def _check_shape(self) -> None:
        for name in ("kv_heads", "ffn_hidden", "moe_ffn_hidden", "route_nodes", "dispatch_bytes", "attention_width"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not value >= 1):
                raise UsageError(f"model {name} {value!r} must be a whole number >= 1")
        if self.n_heads % self.n_kv_heads:
            raise UsageError(
                f"kv_heads({self.n_kv_heads}) must divide heads({self.n_heads}): each K/V head "
                "serves a whole group of query heads"
            )
        if not 0 <= self.dense_layers < self.layers or self.shared_experts < 0:
            raise UsageError(
                f"dense_layers({self.dense_layers}) must be in 0..layers-1 ({self.layers - 1}) and "
                f"shared_experts({self.shared_experts}) >= 0"
            )

    @property
    def dense_params(self) -> float:
        return self.params - self.expert_params

    @property
    def active_params(self) -> float:
        """Parameters one token goes through: the dense part and top_k of the experts."""
        return self.dense_params + self.expert_params * self.top_k / self.experts

    def flops_per_token(self) -> float:
        """Model FLOPs of one token, forward and backward: 6 x active parameters + 12 L s h for the
        attention scores (Narayanan et al. 2021 eq. 3; PaLM, Chowdhery et al. 2022, appendix B)."""
        return 6.0 * self.active_params + 12.0 * self.layers * self.seq_len * self.core_width

    @property
    def core_width(self) -> float:
        """heads x head dimension in the attention core (QK^T and the weighted sum)."""
        return self.attention_width if self.attention_width is not None else self.hidden


def custom_label(params: float, layers: int, hidden: int) -> str:
    return f"custom {params / 1e9:.3g}B ({layers} layers, hidden {hidden})"


def custom_model(
    params: float,
    layers: int | None = None,
    hidden: int | None = None,
    seq_len: int = 4096,
    name: str | None = None,
    **fields,
) -> ModelSpec:
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
        layers = max(1, round(params / (12 * hidden**2)))
    return ModelSpec(name or custom_label(params, layers, hidden), params, layers, hidden, seq_len, **fields)


def gpt_params(layers: int, hidden: int, vocab: int, seq_len: int) -> float:
    """12 l h^2 (1 + 13 / (12 h) + (V + s) / (12 l h)): Narayanan et al. 2021 eq. 2."""
    return 12.0 * layers * hidden**2 * (1 + 13 / (12 * hidden) + (vocab + seq_len) / (12 * layers * hidden))


def transformer(
    name: str,
    layers: int,
    hidden: int,
    heads: int,
    vocab: int,
    seq_len: int,
    *,
    kv_heads: int | None = None,
    ffn_hidden: int | None = None,
    gated_mlp: bool = False,
    tied_embeddings: bool = False,
    experts: int = 1,
    top_k: int = 1,
    moe_ffn_hidden: int | None = None,
    shared_experts: int = 0,
    dense_layers: int = 0,
    attention_params: float | None = None,
    **fields,
) -> ModelSpec:
    """A model from its published shape, its parameters counted from it: per layer the attention
    (h (h + 2 kv) + h h, or `attention_params`), the MLP (2 or 3 matrices of h x ffn; in an MoE layer
    experts + shared_experts of h x moe_ffn and a router of h x experts) and two norms; the embedding
    (and an untied head)."""
    kv = (kv_heads or heads) * hidden // heads
    attention = attention_params if attention_params is not None else hidden * (hidden + 2 * kv) + hidden * hidden
    ffn = ffn_hidden or 4 * hidden
    mats = 3 if gated_mlp else 2
    dense_mlp = mats * hidden * ffn
    moe_mlp = (experts + shared_experts) * mats * hidden * (moe_ffn_hidden or ffn) + hidden * experts
    moe_layers = layers - dense_layers if experts > 1 else 0
    params = (
        layers * (attention + 2 * hidden)
        + (layers - moe_layers) * dense_mlp
        + moe_layers * moe_mlp
        + vocab * hidden * (1 if tied_embeddings else 2)
        + hidden
    )
    return ModelSpec(
        name,
        float(params),
        layers,
        hidden,
        seq_len,
        heads=heads,
        vocab=vocab,
        kv_heads=kv_heads,
        ffn_hidden=ffn_hidden,
        gated_mlp=gated_mlp,
        tied_embeddings=tied_embeddings,
        experts=experts,
        top_k=top_k,
        moe_ffn_hidden=moe_ffn_hidden,
        shared_experts=shared_experts,
        dense_layers=dense_layers,
        attention_params=attention_params,
        **fields,
    )


# DeepSeek-V3's multi-head latent attention per layer (DeepSeek-AI 2024, "DeepSeek-V3 Technical Report",
# §2.1 and §4.2): W_DQ 7168 x 1536, W_UQ 1536 x 128 x (128 + 64), W_DKV+W_KR 7168 x (512 + 64),
# W_UK+W_UV 512 x 128 x (128 + 128), W_O 128 x 128 x 7168.
_MLA = 7168 * 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 * 128 * 256 + 128 * 128 * 7168

# Shapes of common open models (Llama-2 7B/13B/70B: layers, hidden size; 4096-token sequences), the
# four GPT models of Korthikanti et al. 2022 Table 3 (sequence 2048, vocabulary 51200, heads as
# published), and published shapes: Llama 3 (Dubey et al. 2024, "The Llama 3 Herd of Models", Table 3:
# SwiGLU, GQA with 8 K/V heads, vocabulary 128256, 8192-token pre-training sequences), Mixtral 8x7B
# (Jiang et al. 2024, "Mixtral of Experts", Table 1), DeepSeek-V3 (its technical report §4.2: 61 layers,
# the first 3 dense, 1 shared + 256 routed experts of 2048, top 8 on at most 4 nodes, MLA, FP8 dispatch).
MODELS = {
    m.name: m
    for m in (
        ModelSpec("7b", 6.7e9, 32, 4096, 4096),
        ModelSpec("13b", 13e9, 40, 5120, 4096),
        ModelSpec("70b", 70e9, 80, 8192, 4096),
        ModelSpec("gpt3-22b", gpt_params(48, 6144, 51200, 2048), 48, 6144, 2048, heads=64, vocab=51200),
        ModelSpec("gpt3-175b", gpt_params(96, 12288, 51200, 2048), 96, 12288, 2048, heads=96, vocab=51200),
        ModelSpec("gpt3-530b", gpt_params(105, 20480, 51200, 2048), 105, 20480, 2048, heads=128, vocab=51200),
        ModelSpec("gpt3-1t", gpt_params(128, 25600, 51200, 2048), 128, 25600, 2048, heads=160, vocab=51200),
        transformer("llama3-8b", 32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True),
        transformer("llama3-70b", 80, 8192, 64, 128256, 8192, kv_heads=8, ffn_hidden=28672, gated_mlp=True),
        transformer("llama3-405b", 126, 16384, 128, 128256, 8192, kv_heads=8, ffn_hidden=53248, gated_mlp=True),
        transformer(
            "mixtral-8x7b", 32, 4096, 32, 32000, 4096, kv_heads=8, ffn_hidden=14336, gated_mlp=True, experts=8, top_k=2
        ),
        transformer(
            "deepseek-v3",
            61,
            7168,
            128,
            129280,
            4096,
            ffn_hidden=18432,
            gated_mlp=True,
            experts=256,
            top_k=8,
            moe_ffn_hidden=2048,
            shared_experts=1,
            dense_layers=3,
            attention_params=_MLA,
            attention_width=128 * 160,
            route_nodes=4,
            dispatch_bytes=1,
        ),
    )
}
_SHAPES.update({name: (m.params, m.layers, m.hidden) for name, m in MODELS.items()})


def get_model(name: str) -> ModelSpec:
    key = str(name).lower()
    if key not in MODELS:
        raise UsageError(
            f"unknown model {name!r}: {did_you_mean(name, MODELS)}expected one of {', '.join(MODELS)} (or describe it with "
            "--params --layers --hidden --seq-len)"
        )
    return MODELS[key]
