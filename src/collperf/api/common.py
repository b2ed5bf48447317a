"""Helpers the API's modules share: the network from a spec, the algorithm aliases, a topology
from its text and the network options."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, TypeVar

from collperf import topology as topologies
from collperf.collectives import get_collective
from collperf.model.network import Link, Network
from collperf.spec import NetworkSpec
from collperf.spec.network import load_cluster

SpecT = TypeVar("SpecT")  # the spec class an API function takes


def resolved_network(net: NetworkSpec | Network) -> Network:
    """A Network from a Network or a NetworkSpec."""
    return net.resolve() if isinstance(net, NetworkSpec) else net


# Other names of an algorithm: Blink's single-hop trees on a switch (a one-hop reduce into the root of
# each 1/p, then a one-hop broadcast; appendix A.3) are the two-shot mesh allreduce (blink/model.py).
ALIASES = {("allreduce", "single-hop"): "mesh"}


def with_aliases(collective: str, algorithm):
    """`algorithm` (a name, a comma list or a list) with aliases replaced by the names they stand for."""
    name = get_collective(collective).name
    if isinstance(algorithm, str):
        return ",".join(ALIASES.get((name, a.strip().lower()), a) for a in algorithm.split(","))
    return [ALIASES.get((name, str(a).lower()), a) for a in algorithm]


def topology_for(text: str, net: NetworkSpec):
    """topology.parse with the network options: the link of mesh:P/switch:P/ring:P, the levels of cluster:NxG
    (and the calibrated profile's cluster, or None)."""
    link = (
        Link.parse(net.latency, net.bandwidth, net.reduce_bandwidth)
        if net.latency is not None and net.bandwidth is not None
        else None
    )
    base = None
    if net.profile is not None:  # a calibrated profile: its links for cluster:NxG, its intra link otherwise
        base = load_cluster(net.profile)
        link = link or base.intra
    elif net.two_level:
        base = replace(net, ranks=None, nodes=1).resolve_cluster()
    return topologies.parse(text, link, base), base


def as_spec(cls: type[SpecT], spec: object, options: dict[str, Any], **leading: Any) -> SpecT:
    """`spec` when it is a `cls`, else the `cls` built from the keyword `options`: every API function takes its
    spec, and its fields as keywords as a convenience (f(PredictSpec(...)) is f(collective=..., ...)).
    `leading`: the fields a function also takes positionally in place of the spec (None: not given)."""
    given = {k: v for k, v in leading.items() if v is not None and v is not spec}
    if isinstance(spec, cls):
        if options or given:
            raise TypeError(
                f"give a {cls.__name__} or its fields as keywords, not both ({', '.join([*options, *given])})"
            )
        return spec
    if spec is not None and not leading:
        raise TypeError(f"expected a {cls.__name__} (or its fields as keywords), got {spec!r}")
    first = next(iter(leading), None)
    # first is None only without leading fields, where a spec given was refused above
    if spec is not None and first is not None and leading[first] is spec:
        given[first] = spec  # the first positional stands in for the spec
    return cls(**given, **options)
