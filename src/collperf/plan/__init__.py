"""A training step's communication: tensor, pipeline, context, expert and data parallel, ZeRO, on a
cluster, with overlap, the pipeline bubble and memory per GPU; and a search over layouts.

  model.py     ModelSpec, presets, the rule for unknown dimensions
  layout.py    Layout (the validated input), placement of groups, parsing
  comms.py     what a rank communicates per step (counts and sizes)
  pricing.py   where each group sits on the cluster and its cost (vectorized, cached)
  pipeline.py  compute time, recompute, the 1F1B bubble
  memory.py    weights, gradients, optimizer states, activations per GPU
  core.py      Plan, plan(): the priced step with its exposed time
  search.py    every valid layout for a GPU count, ranked by step time
"""

from collperf.plan.comms import Demand, demands, pp_message_bytes
from collperf.plan.core import CommItem, Plan, plan
from collperf.plan.layout import Layout, group_shape, overlap_fractions, parse_layout
from collperf.plan.memory import GPU_MEMORY_BYTES, Memory, activation_per_layer, layers_in_flight, memory
from collperf.plan.model import MODELS, ModelSpec, custom_model, get_model, gpt_params
from collperf.plan.pipeline import bubble_fraction, compute_time, overlap_step, split_compute
from collperf.plan.search import SearchResult, search

__all__ = ["ModelSpec", "Layout", "Plan", "CommItem", "MODELS", "get_model", "custom_model", "gpt_params", "plan",
           "compute_time", "parse_layout", "overlap_fractions", "overlap_step", "group_shape", "Demand", "demands",
           "pp_message_bytes", "Memory", "memory", "activation_per_layer", "layers_in_flight", "GPU_MEMORY_BYTES",
           "bubble_fraction", "split_compute", "search", "SearchResult"]
