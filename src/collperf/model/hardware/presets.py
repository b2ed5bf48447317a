"""The alpha-beta presets of predict, plan and simulate: the hardware catalogue (model/hardware/catalogue.py) seen as
two-level Clusters. Kept under its old names (PRESETS, get_preset, ALIASES) for callers that use them."""

from __future__ import annotations

from dataclasses import replace

from collperf.errors import UsageError, did_you_mean
from collperf.model.network import Cluster
from collperf.model.hardware.catalogue import ALIASES, CATALOGUE, INSTANCE_NAMES, lookup, resolve_name, to_cluster

__all__ = ["PRESETS", "ALIASES", "get_preset", "cluster_key"]

PRESETS: dict[str, Cluster] = {name: to_cluster(system) for name, system in CATALOGUE.items()}


def get_preset(name: str, nodes: int | None = None, ranks_per_node: int | None = None) -> Cluster:
    """A catalogue system as a Cluster, optionally with another node count or ranks per node."""
    key = cluster_key(name)
    cluster = PRESETS.get(key) or to_cluster(lookup(key))
    if nodes is not None:
        cluster = replace(cluster, nodes=nodes)
    if ranks_per_node is not None:
        cluster = replace(cluster, ranks_per_node=ranks_per_node)
    return cluster


def cluster_key(name: str) -> str:
    """The catalogue key of a system name (systems.resolve_name), its error led by the nearest name: 'dgx-h10'
    -> did you mean dgx-h100?"""
    try:
        return resolve_name(name)
    except UsageError as e:
        hint = did_you_mean(name, [*CATALOGUE, *ALIASES], {str(i): k for i, k in INSTANCE_NAMES.items()})
        head, sep, rest = str(e).partition(": ")
        raise UsageError(f"{head}{sep}{hint}{rest}" if hint else str(e)) from None
