"""The Python API, mirroring the CLI one function per command. Arguments may be strings as the CLI
takes them ('64M', '5us', '50GB/s') or numbers in bytes, seconds and bytes/s."""

from __future__ import annotations

from collperf import units
from collperf.collectives import COLLECTIVES
from collperf.errors import UsageError
from collperf.model.costs import ALGORITHMS, Algorithm, algorithms_for
from collperf.model.network import Cluster, Link
from collperf.model.predict import Network, Prediction
from collperf.model.predict import predict as _predict
from collperf.model.presets import get_preset
from collperf.model.select import Crossover, Regime
from collperf.model.select import crossovers as _crossovers


def network(ranks: int | None = None, latency=None, bandwidth=None, reduce_bandwidth="inf",
            cluster: str | None = None, nodes: int | None = None, ranks_per_node: int | None = None,
            intra_latency=None, intra_bandwidth=None, inter_latency=None, inter_bandwidth=None,
            nics_per_node: int | None = None) -> Network:
    """A Network from CLI-style options: a uniform link (ranks, latency, bandwidth), a preset cluster
    (cluster, nodes), or a two-level cluster given level by level. Unset intra/inter values fall back
    to the preset's, then to --latency/--bandwidth."""
    two_level = cluster is not None or nodes is not None or ranks_per_node is not None or any(
        v is not None for v in (intra_latency, intra_bandwidth, inter_latency, inter_bandwidth, nics_per_node))
    if not two_level:
        if latency is None or bandwidth is None:
            raise UsageError("no network given: pass --latency and --bandwidth (with --ranks), "
                             "or --cluster PRESET, or --nodes/--ranks-per-node with intra/inter links")
        if ranks is None:
            raise UsageError("a uniform link needs a rank count: pass --ranks, e.g. --ranks 16")
        return Network.of(Link.parse(latency, bandwidth, reduce_bandwidth), ranks)
    return Network.of(_cluster(ranks, latency, bandwidth, reduce_bandwidth, cluster, nodes, ranks_per_node,
                               intra_latency, intra_bandwidth, inter_latency, inter_bandwidth, nics_per_node), ranks)


def _cluster(ranks, latency, bandwidth, reduce_bandwidth, preset, nodes, ranks_per_node,
             intra_latency, intra_bandwidth, inter_latency, inter_bandwidth, nics_per_node) -> Cluster:
    base = get_preset(preset) if preset is not None else None
    if ranks_per_node is None:
        if base is not None:
            ranks_per_node = base.ranks_per_node
        elif nodes and ranks:
            if ranks % nodes:
                raise UsageError(f"ranks({ranks}) is not a multiple of nodes({nodes}): give --ranks-per-node")
            ranks_per_node = ranks // nodes
        else:
            raise UsageError("a two-level cluster needs --ranks-per-node (or --ranks with --nodes, or --cluster)")
    if nodes is None:
        if ranks is not None and ranks % ranks_per_node == 0:
            nodes = ranks // ranks_per_node
        else:
            nodes = 1 if ranks is None else None
        if nodes is None:
            raise UsageError(f"ranks({ranks}) is not a multiple of ranks_per_node({ranks_per_node}): give --nodes")

    def level(name, lat, bw, fallback: Link | None) -> Link:
        overridden = lat is not None or bw is not None
        lat = lat if lat is not None else (fallback.latency_s if fallback else latency)
        bw = bw if bw is not None else (fallback.bandwidth_Bps if fallback else bandwidth)
        if lat is None or bw is None:
            raise UsageError(f"the {name}-node link is not given: pass --{name}-latency and --{name}-bandwidth "
                             "(or --latency/--bandwidth for both levels, or --cluster PRESET)")
        return Link(units.parse_time(lat), units.parse_bandwidth(bw), units.parse_bandwidth(reduce_bandwidth),
                    fallback.name if fallback and not overridden else name)

    intra = level("intra", intra_latency, intra_bandwidth, base.intra if base else None)
    inter = level("inter", inter_latency, inter_bandwidth, base.inter if base else None)
    nics = nics_per_node if nics_per_node is not None else (base.nics_per_node if base else ranks_per_node)
    return Cluster(nodes, ranks_per_node, intra, inter, nics, name=preset or "custom")


def predict(collective: str, sizes, network: Network, algorithm="all", intra_algorithm: str = "best",
            inter_algorithm: str = "best", segments: int | None = None) -> list[Prediction]:
    """`collperf predict`: one Prediction per size (sizes: '1M,64M' or a list of sizes)."""
    return _predict(collective, _sizes(sizes), network, algorithm, intra_algorithm, inter_algorithm, segments)


def crossover(collective: str, network: Network, min_size="1", max_size="16G", algorithm="all",
              intra_algorithm: str = "best", inter_algorithm: str = "best") -> tuple[list[Crossover], list[Regime]]:
    """`collperf crossover`: where the best algorithm changes between min_size and max_size."""
    return _crossovers(collective, network, units.parse_size(min_size), units.parse_size(max_size),
                       algorithm=algorithm, intra_algorithm=intra_algorithm, inter_algorithm=inter_algorithm)


def algorithms(collective: str | None = None) -> list[Algorithm]:
    """`collperf algorithms`: the registry, optionally for one collective."""
    return list(ALGORITHMS) if collective is None else algorithms_for(collective)


def _sizes(sizes) -> list[int]:
    if isinstance(sizes, str):
        return units.parse_sizes(sizes)
    if isinstance(sizes, (int, float)):
        return [units.parse_size(int(sizes))]
    return [units.parse_size(s) for s in sizes]


__all__ = ["network", "predict", "crossover", "algorithms", "COLLECTIVES"]
