"""The alpha-beta presets of predict, plan and simulate: the hardware catalogue (model/systems.py) seen as
two-level Clusters. Kept under its old names (PRESETS, get_preset, ALIASES) for callers that use them."""

from __future__ import annotations

from dataclasses import replace

from collperf.model.network import Cluster
from collperf.model.systems import ALIASES, CATALOGUE, lookup, resolve_name, to_cluster

__all__ = ["PRESETS", "ALIASES", "get_preset"]

PRESETS: dict[str, Cluster] = {name: to_cluster(system) for name, system in CATALOGUE.items()}


def get_preset(name: str, nodes: int | None = None, ranks_per_node: int | None = None) -> Cluster:
    """A catalogue system as a Cluster, optionally with another node count or ranks per node."""
    key = resolve_name(name)
    cluster = PRESETS.get(key) or to_cluster(lookup(key))
    if nodes is not None:
        cluster = replace(cluster, nodes=nodes)
    if ranks_per_node is not None:
        cluster = replace(cluster, ranks_per_node=ranks_per_node)
    return cluster
