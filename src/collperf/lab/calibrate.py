"""Measure a network's alpha, bandwidth and gamma, and keep them as a profile.

`calibrate` runs runtime/measure.calibrate on local ranks or on a testbed: ping-pong between two
ranks of one host (intra) and of two hosts (inter) for alpha (8 bytes) and bandwidth (16 MiB), the
cost-model chapter's tiny-allreduce alpha, and the local reduction bandwidth (gamma). A profile is a
small JSON file that `predict`, `bench`, `diagnose` and `plan` take as `--profile`:

    {"kind": "collperf-profile", "nodes": 4, "ranks_per_node": 2,
     "intra": {"latency_s": ..., "bandwidth_Bps": ...}, "inter": {...}, "reduce_bandwidth_Bps": ...,
     "measured": {... the raw measurements ...}}

`inter` is one host's link (a NIC): the ranks of a host share it (nics_per_node = 1).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from collperf.errors import UsageError
from collperf.jsonfile import read_json
from collperf.model.network import Cluster, Link


def calibrate(ranks: int | None = None, testbed=None, timeout_s: float = 300.0, big_bytes: int = 16 << 20) -> dict:
    from collperf.runtime.launch import Job, run_local, run_testbed
    rph = testbed.ranks_per_host if testbed else (ranks or 2)
    job = Job("collperf.runtime.measure:calibrate", (rph, big_bytes))
    if testbed is not None:
        raw = run_testbed(job, testbed, timeout_s)
        nodes = testbed.hosts
    else:
        if not ranks or ranks < 2:
            raise UsageError("calibration needs at least 2 ranks: --ranks 2 (or --testbed hosts=2,...)")
        raw = run_local(job, ranks, timeout_s)
        nodes = 1
    return profile_from(raw, nodes, rph)


def profile_from(raw: dict, nodes: int, ranks_per_node: int) -> dict:
    def link(measured):
        return {"latency_s": measured["latency_s"], "bandwidth_Bps": measured["bandwidth_Bps"]}

    doc = {"kind": "collperf-profile", "nodes": nodes, "ranks_per_node": ranks_per_node,
           "reduce_bandwidth_Bps": raw["reduce_bandwidth_Bps"], "measured": raw}
    if raw.get("intra"):
        doc["intra"] = link(raw["intra"])
    if raw.get("inter"):
        doc["inter"] = link(raw["inter"])
    if "intra" not in doc:
        doc["intra"] = doc.get("inter")
    if "inter" not in doc:
        doc["inter"] = doc["intra"]
    return doc


def save(profile: dict, path) -> None:
    Path(path).write_text(json.dumps(profile, indent=1))


def load_cluster(path, nodes: int | None = None, ranks_per_node: int | None = None) -> Cluster:
    """The Cluster a profile describes (node and per-node rank counts may be changed)."""
    doc = read_json(path, "profile", "make one with `collperf calibrate -o FILE`")
    if not isinstance(doc, dict) or doc.get("kind") != "collperf-profile":
        raise UsageError(f"{path} is not a collperf profile (no \"kind\": \"collperf-profile\")")
    try:
        return cluster_from(doc, f"profile {Path(path).name}", nodes, ranks_per_node)
    except UsageError:
        raise
    except (KeyError, TypeError, ValueError, OverflowError, ZeroDivisionError) as e:   # a hand-edited profile
        what = f"missing field {e.args[0]!r}" if isinstance(e, KeyError) else str(e) or type(e).__name__
        raise UsageError(f"profile {path}: {what}: expected nodes, ranks_per_node, intra and inter "
                         "{latency_s, bandwidth_Bps} as `collperf calibrate -o FILE` writes them") from None


def cluster_from(doc: dict, name: str, nodes: int | None = None, ranks_per_node: int | None = None) -> Cluster:
    """The Cluster of a profile document (profile_from's shape)."""
    gamma = doc.get("reduce_bandwidth_Bps") or math.inf

    where = name

    def link(key, label):
        try:
            return Link(doc[key]["latency_s"], doc[key]["bandwidth_Bps"], gamma, label)
        except (KeyError, TypeError):
            raise UsageError(f"{where}: missing {key}.latency_s or {key}.bandwidth_Bps") from None

    return Cluster(nodes or doc["nodes"], ranks_per_node or doc["ranks_per_node"], link("intra", "intra (profile)"),
                   link("inter", "inter (profile)"), nics_per_node=1, name=name)


def bandwidth_from(small_s: float, large_s: float, large_bytes: int) -> float:
    """Bandwidth of a link from one-way times of a tiny and a big message: the big one's bytes over its
    time less the latency. Where that difference is under a tenth of the big time (a loaded host whose
    big ping-pong came back about as fast as the small one: noise, not a link of petabytes per second),
    the bandwidth is not resolved and the big message's bytes over its whole time, a finite floor, is used."""
    transfer_s = large_s - small_s
    if transfer_s > 0.1 * large_s:
        return large_bytes / transfer_s
    return large_bytes / max(large_s, 1e-12)
