"""A training step's communication: tensor, pipeline, context, expert and data parallel, ZeRO, on a
cluster, with overlap, the pipeline bubble and memory per GPU; and a search over layouts.

  model.py     ModelSpec, presets, the rule for unknown dimensions
  layout.py    Layout (the validated input), placement of groups, parsing
  comms.py     what a rank communicates per step (counts and sizes)
  pricing.py   where each group sits on the cluster and its cost (vectorized, cached)
  pipeline.py  stage layer counts (uneven stages), recompute FLOPs, the 1F1B bubble
  gpus.py      each GPU's data-sheet peaks and its one fixed set of efficiency parameters
  kernels.py   compute time that depends on shape: a roofline per layer (GEMMs, attention, HBM)
  zero3.py     ZeRO-3 as FSDP and DeepSpeed issue it: collectives per layer, prefetch, overlap
  memory.py    weights, gradients, optimizer states, activations per GPU, the headroom kept free
  limits.py    the numbers given checked against the GPU: units, peaks, memory, contradicting model flags
  core.py      Plan, plan(): the priced step with its exposed time
  search.py    every valid layout for a GPU count, ranked by step time
"""

from collperf.plan.comms import Demand, demands, pp_message_bytes
from collperf.plan.core import CommItem, Plan, plan
from collperf.plan.limits import check_flops, check_gpu_memory, check_model_flags, parse_gpu_memory, parse_headroom
from collperf.plan.layout import Layout, group_shape, overlap_fractions, parse_layout
from collperf.plan.memory import GPU_MEMORY_BYTES, Memory, gpu_memory_of, activation_per_layer, layers_in_flight, memory
from collperf.plan.gpus import GPU, GPUS, gpu_of
from collperf.plan.kernels import layer_time, modelled_compute
from collperf.plan.model import MODELS, ModelSpec, custom_model, get_model, gpt_params, transformer
from collperf.plan.pipeline import bubble_fraction, compute_time, overlap_step, split_compute, stage_layers
from collperf.plan.search import SearchResult, search

__all__ = [
    "ModelSpec",
    "Layout",
    "Plan",
    "CommItem",
    "MODELS",
    "get_model",
    "custom_model",
    "gpt_params",
    "plan",
    "compute_time",
    "parse_layout",
    "overlap_fractions",
    "overlap_step",
    "group_shape",
    "Demand",
    "demands",
    "pp_message_bytes",
    "Memory",
    "memory",
    "activation_per_layer",
    "layers_in_flight",
    "GPU_MEMORY_BYTES",
    "bubble_fraction",
    "split_compute",
    "search",
    "SearchResult",
    "GPU",
    "GPUS",
    "gpu_of",
    "layer_time",
    "modelled_compute",
    "transformer",
    "stage_layers",
    "check_flops",
    "check_gpu_memory",
    "check_model_flags",
    "parse_gpu_memory",
    "parse_headroom",
    "gpu_memory_of",
]
