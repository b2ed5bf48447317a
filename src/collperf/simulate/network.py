"""Routes of a schedule's (src, dst) pairs on a topology, as arrays and a sparse matrix.

Resources are the directed links of the topology with a finite bandwidth (full-duplex: u->v and
v->u are separate) and each rank's port, out and in. A route is cut into segments from rank to
rank: a segment crosses switches cut-through (holds all its links at once) and ends at a rank,
which stores and forwards. Every distinct pair is routed once, whatever the number of transfers.

`routes` is the pairs x resources incidence (scipy.sparse CSR): a step's bytes per resource is one
sparse product, routes[pairs].T @ bytes_per_pair.

A pair is coded src * ranks + dst. A schedule may give some transfers their own path (packed trees
whose edges cross idle GPUs or switches: blink/packed.py, meta["routes"]); such a transfer is a
*virtual pair* coded route * ranks^2 + src * ranks + dst, route >= 1 naming one of `paths`, so two
paths between the same ranks are routed (and loaded) apart. Route 0 is the topology's own route,
which keeps the codes of schedules without explicit paths what they were.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from collperf.errors import UsageError
from collperf.topology import Topology


# routing reports its progress once per this many pairs
_PROGRESS_PAIRS = 8192


@dataclass
class RoutedPairs:
    ranks: int
    codes: np.ndarray  # sorted src * ranks + dst of every routed pair
    latency: np.ndarray  # per pair: the route's latency, s
    routes: object  # scipy.sparse.csr_matrix, pairs x resources: times the route crosses it
    seg_ptr: np.ndarray  # pair i's segments are seg_ptr[i] .. seg_ptr[i + 1] - 1
    seg_res_ptr: np.ndarray  # segment j's resources are seg_res[seg_res_ptr[j] : seg_res_ptr[j + 1]]
    seg_res: np.ndarray
    seg_latency: np.ndarray  # per segment, s
    capacity: np.ndarray  # per resource, bytes/s
    names: list  # per resource
    is_port: np.ndarray  # per resource

    def pair_index(self, src: np.ndarray, dst: np.ndarray, route: np.ndarray | None = None) -> np.ndarray:
        return np.searchsorted(self.codes, pair_codes(self.ranks, src, dst, route))


def pair_codes(ranks: int, src, dst, route=None) -> np.ndarray:
    """The code of every transfer's pair; `route`: per transfer, 0 for the topology's route or the
    1-based index of its explicit path (None: all 0)."""
    codes = np.asarray(src, dtype=np.int64) * ranks + np.asarray(dst, dtype=np.int64)
    if route is not None:
        codes = codes + np.asarray(route, dtype=np.int64) * (ranks * ranks)
    return codes


def _check_path(topo: Topology, src: int, dst: int, path) -> list:
    """A schedule-given route must join src to dst over the topology's links."""
    path = list(path)
    if (
        len(path) < 2
        or path[0] != src
        or path[-1] != dst
        or any(not topo.graph.has_edge(u, v) for u, v in itertools.pairwise(path))
    ):
        raise UsageError(f"route {path} of transfer {src}->{dst} is not a path of links in topology {topo.name}")
    return path


def compile_network(
    topo: Topology,
    ranks: int,
    src: np.ndarray,
    dst: np.ndarray,
    route: np.ndarray | None = None,
    paths=(),
    progress=None,
) -> RoutedPairs:
    """Route every distinct (src, dst) pair among the given transfers; with `route` (per transfer)
    and `paths`, a transfer of route k >= 1 takes paths[k - 1] instead of the topology's route.
    progress("routing", done, total) hears how far it is, every few thousand pairs."""
    from scipy import sparse

    if topo.ranks < ranks:
        raise UsageError(f"the schedule needs {ranks} ranks but topology {topo.name} has {topo.ranks}")
    codes = np.unique(pair_codes(ranks, src, dst, route))
    capacity, names, ports = [], [], []
    edges: dict = {}  # (u, v) -> (resource id or -1 for an unlimited link, latency)
    out_port, in_port = [-1] * ranks, [-1] * ranks

    def resource(cap, name, port):
        capacity.append(cap)
        names.append(name)
        ports.append(port)
        return len(capacity) - 1

    def edge_of(u, v):
        attrs = topo.link(u, v)
        finite = math.isfinite(attrs["bandwidth_Bps"])
        edge = edges[(u, v)] = (
            resource(attrs["bandwidth_Bps"], f"{u}->{v}", False) if finite else -1,
            attrs["latency_s"],
        )
        return edge

    # the hot loop of big simulations (one pass per distinct pair): kept free of calls it can avoid
    path_of = topo.router if topo.router is not None and not topo.routes else topo.path
    seg_ptr, seg_res_ptr, seg_res, seg_latency, latency = [0], [0], [], [], []
    square = ranks * ranks
    for done, code in enumerate(codes.tolist()):
        if progress is not None and done % _PROGRESS_PAIRS == 0:
            progress("routing", done, len(codes))
        path_id, code = divmod(code, square)
        src_r, dst_r = divmod(code, ranks)
        if out_port[src_r] < 0:
            out_port[src_r] = resource(topo.port_Bps(src_r), f"port {src_r} out", True)
        ids, seg_lat, total = [out_port[src_r]], 0.0, 0.0
        path = _check_path(topo, src_r, dst_r, paths[path_id - 1]) if path_id else path_of(src_r, dst_r)
        u = path[0]
        for v in path[1:]:
            edge = edges.get((u, v)) or edge_of(u, v)
            if edge[0] >= 0:
                ids.append(edge[0])
            seg_lat += edge[1]
            if isinstance(v, int):  # a rank: the segment ends here
                if v == dst_r:
                    if in_port[v] < 0:
                        in_port[v] = resource(topo.port_Bps(v), f"port {v} in", True)
                    ids.append(in_port[v])
                seg_res.extend(ids)
                seg_res_ptr.append(len(seg_res))
                seg_latency.append(seg_lat)
                total += seg_lat
                ids, seg_lat = [], 0.0
            u = v
        seg_ptr.append(len(seg_latency))
        latency.append(total)
    seg_ptr_a, seg_res_ptr_a = np.array(seg_ptr, dtype=np.int64), np.array(seg_res_ptr, dtype=np.int64)
    per_pair = seg_res_ptr_a[seg_ptr_a[1:]] - seg_res_ptr_a[seg_ptr_a[:-1]]
    rows = np.repeat(np.arange(len(codes)), per_pair)
    res = np.array(seg_res, dtype=np.int64)
    routes = sparse.csr_matrix((np.ones(len(res)), (rows, res)), shape=(len(codes), len(capacity)))
    routes.sum_duplicates()
    return RoutedPairs(
        ranks,
        codes,
        np.array(latency),
        routes,
        seg_ptr_a,
        seg_res_ptr_a,
        res,
        np.array(seg_latency),
        np.array(capacity, dtype=float),
        names,
        np.array(ports, dtype=bool),
    )
