"""The calibration profile: the one document `collperf calibrate` writes on any testbed and `--profile` reads.

    {"kind": "collperf-profile", "nodes": 4, "ranks_per_node": 2,
     "intra": {"latency_s": ..., "bandwidth_Bps": ...}, "inter": {...}, "reduce_bandwidth_Bps": ...,
     "measured": {... the raw measurements ...}}

`inter` is one host's link (a NIC): the ranks of a host share it (nics_per_node = 1). A testbed whose
hosts are joined by point-to-point links of their own rates (a routed testbed) keeps every link it measured
under `links`, and its `intra`/`inter` are the median measured link, so that `--profile` reads it as the
uniform network it is closest to.

Pure: documents in, Clusters out; reading and writing the file is the caller's.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from collperf.errors import UsageError
from collperf.model.network import Cluster, Link

KIND = "collperf-profile"


def profile_from(raw: dict[str, Any], nodes: int, ranks_per_node: int) -> dict[str, Any]:
    """The profile of a calibration's raw measurements (runtime/measure.py calibrate) on nodes x ranks_per_node."""

    def link(measured: dict[str, Any]) -> dict[str, Any]:
        return {"latency_s": measured["latency_s"], "bandwidth_Bps": measured["bandwidth_Bps"]}

    doc: dict[str, Any] = {
        "kind": KIND,
        "nodes": nodes,
        "ranks_per_node": ranks_per_node,
        "reduce_bandwidth_Bps": raw["reduce_bandwidth_Bps"],
        "measured": raw,
    }
    if raw.get("intra"):
        doc["intra"] = link(raw["intra"])
    if raw.get("inter"):
        doc["inter"] = link(raw["inter"])
    if "intra" not in doc:
        doc["intra"] = doc.get("inter")
    if "inter" not in doc:
        doc["inter"] = doc["intra"]
    return doc


def links_profile(testbed: str, hosts: int, ranks_per_host: int, links: list[dict[str, Any]]) -> dict[str, Any]:
    """The profile of per-link measurements (each a dict with measured_Bps and latency_s): every link kept
    under `links`, the median link as the uniform network `--profile` reads."""
    if not links:
        raise UsageError(f"{testbed}: no link was measured, so there is no profile to write")
    median = {
        "latency_s": statistics.median(m["latency_s"] for m in links),
        "bandwidth_Bps": statistics.median(m["measured_Bps"] for m in links),
    }
    return {
        "kind": KIND,
        "nodes": hosts,
        "ranks_per_node": ranks_per_host,
        "intra": dict(median),
        "inter": dict(median),
        "testbed": testbed,
        "links": links,
    }


def cluster_from(doc: object, name: str, nodes: int | None = None, ranks_per_node: int | None = None) -> Cluster:
    """The Cluster of a profile document (node and per-node rank counts may be changed); `name` says where the
    document came from in every error."""
    if not isinstance(doc, dict) or doc.get("kind") != KIND:
        raise UsageError(
            f'{name} is not a collperf profile (no "kind": "{KIND}"): make one with `collperf calibrate -o FILE`'
        )
    gamma = doc.get("reduce_bandwidth_Bps") or math.inf

    def link(key: str, label: str) -> Link:
        try:
            return Link(doc[key]["latency_s"], doc[key]["bandwidth_Bps"], gamma, label)
        except (KeyError, TypeError):
            raise UsageError(f"{name}: missing {key}.latency_s or {key}.bandwidth_Bps") from None

    return Cluster(
        nodes or doc["nodes"],
        ranks_per_node or doc["ranks_per_node"],
        link("intra", "intra (profile)"),
        link("inter", "inter (profile)"),
        nics_per_node=1,
        name=name,
    )


def bandwidth_from(small_s: float, large_s: float, large_bytes: int) -> float:
    """Bandwidth of a link from one-way times of a tiny and a big message: the big one's bytes over its
    time less the latency. Where that difference is under a tenth of the big time (a loaded host whose
    big ping-pong came back about as fast as the small one: noise, not a link of petabytes per second),
    the bandwidth is not resolved and the big message's bytes over its whole time, a finite floor, is used."""
    transfer_s = large_s - small_s
    if transfer_s > 0.1 * large_s:
        return large_bytes / transfer_s
    return large_bytes / max(large_s, 1e-12)
