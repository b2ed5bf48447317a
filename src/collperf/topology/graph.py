"""The Topology type: ranks, other devices and full-duplex links of a networkx graph, with routes and ports
(the package's docstring gives the file format; the presets and the parser build these)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from collperf.errors import UsageError

if TYPE_CHECKING:  # networkx is imported where a graph is searched, so that importing this stays light
    import networkx as nx


@dataclass
class Topology:
    name: str
    ranks: int
    graph: nx.Graph
    routes: dict = field(default_factory=dict)  # (src, dst) -> explicit vertex path
    router: object = None  # optional (src, dst) -> path, for presets
    shape: tuple | None = None  # (nodes, ranks per node) of a two-level cluster

    def __post_init__(self):
        missing = [r for r in range(self.ranks) if r not in self.graph]
        if missing:
            raise UsageError(
                f"topology {self.name!r}: ranks {missing[:5]} have no links; every rank 0..{self.ranks - 1} "
                "must be connected"
            )
        for r in range(self.ranks):
            links = [self.graph.edges[r, v]["bandwidth_Bps"] for v in self.graph[r]]
            self.graph.nodes[r].setdefault("port_Bps", sum(links))

    # --- routing ---------------------------------------------------------------------------
    def path(self, src: int, dst: int) -> list:
        if (src, dst) in self.routes:
            return self.routes[(src, dst)]
        if self.router is not None:
            return self.router(src, dst)
        return self._shortest(src, dst)

    @cached_property
    def _index(self) -> dict:
        return {v: i for i, v in enumerate(sorted(self.graph.nodes, key=_vertex_key))}

    def _shortest(self, src, dst):
        import networkx as nx

        key = ("_p", src, dst)
        cache = self.__dict__.setdefault("_path_cache", {})
        if key not in cache:
            try:
                paths = nx.all_shortest_paths(self.graph, src, dst)
                cache[key] = min(paths, key=lambda path: [self._index[v] for v in path])
            except nx.NetworkXNoPath:
                raise UsageError(f"topology {self.name!r}: no route from rank {src} to rank {dst}") from None
        return cache[key]

    def hops(self, src: int, dst: int) -> list[tuple]:
        """The directed links of the route from src to dst."""
        path = self.path(src, dst)
        return list(zip(path[:-1], path[1:]))

    def link(self, u, v) -> dict:
        return self.graph.edges[u, v]

    def port_Bps(self, rank: int) -> float:
        return self.graph.nodes[rank]["port_Bps"]

    # --- file format -----------------------------------------------------------------------
    def to_json(self) -> dict:
        links = [
            {
                "a": u,
                "b": v,
                "latency": f"{d['latency_s'] * 1e6:.12g}us",
                "bandwidth": _rate(d["bandwidth_Bps"]),
                **({"name": d["name"]} if d.get("name") else {}),
            }
            for u, v, d in self.graph.edges(data=True)
        ]
        ports = {str(r): _rate(self.port_Bps(r)) for r in range(self.ranks)}
        doc = {
            "name": self.name,
            "ranks": self.ranks,
            "devices": sorted((v for v in self.graph if not isinstance(v, int)), key=str),
            "links": links,
            "ports": ports,
        }
        if self.routes:
            doc["routes"] = {f"{s}-{d}": path for (s, d), path in self.routes.items()}
        return doc

    def save(self, path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1))

    def describe(self) -> str:
        switches = sum(1 for v in self.graph if not isinstance(v, int))
        return f"{self.name}: {self.ranks} ranks, {switches} other devices, {self.graph.number_of_edges()} links"


def _rate(bandwidth_Bps: float) -> str:
    return "inf" if math.isinf(bandwidth_Bps) else f"{bandwidth_Bps / 1e9:.12g}GB/s"


def _vertex_key(v):
    return (0, v, "") if isinstance(v, int) else (1, 0, str(v))
