"""`collperf export nccl-tuner --cluster ...`: NCCL tuner-plugin rules from NCCL's own selection model
(export/tuner_model.py), read back with the plugin's matching rules (export/nccl_tuner.parse_rules/match)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from collperf import api
from collperf.expect.resolve import assume
from collperf.errors import UsageError
from collperf.export import nccl_tuner
from collperf.export.tuner_model import plugin_names
from collperf.model.nccl import search_graphs, select, tuning_table
from collperf.model.nccl.channels import channels_run
from collperf.spec import HardwareSpec
from collperf.model.nccl.tuning import TuningTable, entry_times_us


def _system(**hw):
    return assume(None, HardwareSpec(**hw)).system


def _grid(rules) -> list[int]:
    sizes = set(np.unique(np.geomspace(1, 2**34, 1200).astype(int)).tolist())
    for r in rules:  # both sides of every boundary
        sizes |= {r["min"], r["min"] + 1, max(r["min"] - 1, 1)}
        if r["max"] != -1:
            sizes |= {r["max"], r["max"] + 1}
    return sorted(s for s in sizes if s >= 1)


@pytest.mark.parametrize("cluster,nodes", [("dgx-h100", 2), ("dgx-h100", 1), ("dgx-a100", 4)])
def test_model_rules_pick_the_models_fastest_cell_under_the_plugin_rules(cluster, nodes):
    system = _system(cluster=cluster, nodes=nodes)
    rules = nccl_tuner.parse_rules(
        api.export_nccl_tuner([], hardware=HardwareSpec(cluster=cluster, nodes=nodes)).text()
    )
    graphs = search_graphs(system)
    for collective in nccl_tuner.COLLECTIVES:
        mine = [r for r in rules if r["collective"] == collective]
        assert mine and mine[0]["min"] == 0 and mine[-1]["max"] == -1
        sizes = _grid(mine)
        best = select(collective, sizes, system)  # NCCL's argmin, vectorized, first cell wins ties
        for size, a, p in zip(sizes, best.algorithm, best.protocol):
            picked = nccl_tuner.match(rules, collective, size, nodes=system.nodes, ranks=system.ranks)
            assert (picked["algorithm"], picked["protocol"]) == plugin_names(a, p), (collective, size)
            # explicit channels: what NCCL runs for that algorithm by default (comm->nChannels or
            # comm->nvlsChannels, enqueue.cc:2070-2097), never fewer than the graph it is priced with
            assert picked["channels"] == channels_run(a, system, graphs) >= 1
        # the rules are for this shape only
        assert nccl_tuner.match(rules, collective, 1 << 20, nodes=system.nodes + 1, ranks=system.ranks) is None


def test_broadcast_boundary_is_the_hand_solved_crossing():
    # ring broadcast on one H100 node (tuning.cc, reference/nccl-tuning-model.md 2-3), with the ring graph's
    # c channels of b GB/s: LL = 6.6 base + 0.6 NVLink hop us at min(llMaxBw 141, 0.5 c b) GB/s; Simple =
    # 8.4 + 3.4 us at c b GB/s (one hop: all channels alike; ratio n/nsteps = 1 for broadcast). The lines
    # t = lat + n / (1000 bw) cross at n* = (11.8 - 7.2) / (1/(1000 bwLL) - 1/(1000 bwSimple)).
    system = _system(cluster="dgx-h100", nodes=1)
    table = tuning_table("broadcast", system)
    g = table.graphs["ring"]
    assert g.same_channels
    bw_ll, bw_simple = min(141.0, 0.5 * g.n_channels * g.bw_intra), g.n_channels * g.bw_intra
    assert table.latency_us[("ring", "LL")] == pytest.approx(7.2)
    assert table.latency_us[("ring", "Simple")] == pytest.approx(11.8)
    assert (table.bandwidth_GBps[("ring", "LL")], table.bandwidth_GBps[("ring", "Simple")]) == pytest.approx(
        (bw_ll, bw_simple)
    )
    crossing = (11.8 - 7.2) / (1 / (1000 * bw_ll) - 1 / (1000 * bw_simple))
    rules = api.export_nccl_tuner([], collective="broadcast", hardware=HardwareSpec(cluster="dgx-h100", nodes=1))
    assert [(r.min_bytes, r.max_bytes, r.choice.label) for r in rules.rules] == [
        (0, math.floor(crossing), "ring/ll"),
        (math.floor(crossing) + 1, -1, "ring/simple"),
    ]
    assert all(r.gain_vs_default == (0.0, 0.0) for r in rules.rules)  # no link rates: NCCL's own choice


def test_link_rates_give_the_gain_over_nccls_choice_on_the_catalogue_rates():
    hw = HardwareSpec(cluster="dgx-h100", nodes=2, nic_rate="100Gb/s")
    real, believed = _system(cluster="dgx-h100", nodes=2, nic_rate="100Gb/s"), _system(cluster="dgx-h100", nodes=2)
    rules = api.export_nccl_tuner([], collective="allreduce", hardware=hw)
    text = rules.text()
    assert "catalogue's link rates" in text
    gains = []
    for r in rules.rules:
        hi = r.max_bytes if r.max_bytes != -1 else 2**34
        for size in (max(r.min_bytes, 1), hi, int(math.sqrt(max(r.min_bytes, 1) * hi))):
            mine = select("allreduce", [size], real)
            default = select("allreduce", [size], believed)
            assert plugin_names(mine.algorithm[0], mine.protocol[0]) == (r.choice.algorithm, r.choice.protocol)
            # the default cell NCCL picks on its rates, timed on the real ones
            t_default = _cell_time(real, default.algorithm[0], default.protocol[0], size)
            gain = 1 - mine.time_s[0] / t_default
            assert gain >= -1e-12  # the argmin is never slower than NCCL's pick
            gains.append(gain)
    assert max(gains) > 0.01  # 100 Gb/s NICs instead of 400: NCCL's pick on 400 is off somewhere (3 % below 256 KiB)


def _cell_time(system, algorithm, protocol, size) -> float:
    table = tuning_table("allreduce", system)
    lat, bw = entry_times_us(table, system, np.array([float(size)]))
    return float((lat + bw)[TuningTable.entries().index((algorithm, protocol)), 0]) * 1e-6


def test_model_rules_usage_errors():
    with pytest.raises(UsageError, match="--cluster dgx-h100 --nodes 2"):
        api.export_nccl_tuner([])
    with pytest.raises(UsageError, match="not both"):
        api.export_nccl_tuner(["x.json"], hardware=HardwareSpec(cluster="dgx-h100"))
    with pytest.raises(UsageError, match="drop --channels"):
        api.export_nccl_tuner([], channels=4, hardware=HardwareSpec(cluster="dgx-h100"))
    with pytest.raises(UsageError, match="not tuned"):
        api.export_nccl_tuner([], collective="alltoall", hardware=HardwareSpec(cluster="dgx-h100"))
    with pytest.raises(UsageError, match="one rank"):
        api.export_nccl_tuner([], hardware=HardwareSpec(cluster="pcie-t4", nodes=1))  # one T4 per node
