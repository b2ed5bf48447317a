"""Peers are quoted at your size: each public run's busbw interpolated log-log between its two rows around it,
never extrapolated beyond its sweep (the size it was measured at is named then), the JSON range sorted."""

import pytest

from collperf import api
from collperf.expect.peers import at_size, peers
from collperf.model.hardware.catalogue import get_system

MIB = 1 << 20


def test_busbw_between_two_rows_follows_a_power_law():
    rows = [[1 * MIB, 10.0], [4 * MIB, 40.0], [16 * MIB, 80.0]]
    # 2 MiB is halfway between 1 and 4 MiB in log size: 10 x (40/10)^0.5 = 20
    assert at_size(rows, 2 * MIB) == (pytest.approx(20.0), [MIB, 4 * MIB])
    # 8 MiB: halfway between 4 and 16 MiB: 40 x (80/40)^0.5 = 56.57
    assert at_size(rows, 8 * MIB) == (pytest.approx(40 * 2**0.5), [4 * MIB, 16 * MIB])
    assert at_size(rows, 4 * MIB) == (40.0, [4 * MIB])  # a measured size is itself
    assert at_size(list(reversed(rows)), 2 * MIB)[0] == pytest.approx(20.0)  # row order does not matter


def test_outside_its_sweep_a_run_gives_its_nearest_row_or_nothing():
    rows = [[1 * MIB, 10.0], [4 * MIB, 40.0]]
    assert at_size(rows, MIB // 2) == (10.0, [MIB])  # a factor 2 below the sweep: its first row, named
    assert at_size(rows, 8 * MIB) == (40.0, [4 * MIB])  # a factor 2 above: its last row
    assert at_size(rows, MIB // 4) is None and at_size(rows, 16 * MIB) is None
    assert at_size([], MIB) is None


def _run(run_id, busbw, nodes=2, per_node=8):
    return {
        "id": run_id,
        "collective": "allreduce",
        "family": "dgx-a100",
        "fabric": "ib",
        "nodes": nodes,
        "gpus_per_node": per_node,
        "gpu": "A100 SXM4 80GB",
        "system": "dgx-a100",
        "nic": "8x200G-ib",
        "source_url": f"https://example.org/{run_id}",
        "busbw": busbw,
    }


def test_a_peer_whose_sweep_starts_above_your_size_is_named_at_its_own_size():
    system = get_system("dgx-a100", nodes=2)
    runs = [_run("a", [[MIB, 16.4], [2 * MIB, 24.0]]), _run("b", [[2 * MIB, 31.7], [4 * MIB, 50.0]])]
    found = peers("allreduce", system, MIB, 19.7, runs)
    assert found.describe().startswith(
        "public runs on 2x8 A100 SXM4 80GB over InfiniBand, allreduce reach 16.4 GB/s "
        "busbw at 1 MiB, 31.7 GB/s at 2 MiB, the nearest size 1 of them measured (2 runs"
    )
    doc = found.to_json()
    assert doc["busbw_GBps"] == [16.4, 31.7]
    assert [(s["size_bytes"], s["from_sizes_bytes"]) for s in doc["sources"]] == [(MIB, [MIB]), (2 * MIB, [2 * MIB])]


def test_peers_between_two_sizes_are_at_yours_and_the_range_is_sorted():
    system = get_system("dgx-a100", nodes=2)
    # 1 GB = 10^9 bytes sits between 512 MiB and 1 GiB: log2(1e9 / 2^29) = 0.8974 of the way, so run "hi" gives
    # 200 x (220/200)^0.8974 = 217.86 and run "lo" 180 x (190/180)^0.8974 = 188.95 (hand-computed)
    runs = [_run("hi", [[1 << 29, 200.0], [1 << 30, 220.0]]), _run("lo", [[1 << 29, 180.0], [1 << 30, 190.0]])]
    found = peers("allreduce", system, 10**9, None, runs)
    assert found.to_json()["busbw_GBps"] == [pytest.approx(188.95, abs=0.01), pytest.approx(217.86, abs=0.01)]
    assert "reach 189-218 GB/s busbw at 1 GB (2 runs" in found.describe()
    # at 2^30 bytes the text says 1 GiB, with the measured values
    assert "reach 190-220 GB/s busbw at 1 GiB (2 runs" in peers("allreduce", system, 1 << 30, None, runs).describe()


def test_shipped_peers_json_is_a_sorted_pair_at_your_size():
    doc = api.diagnose_measurement(
        collective="allreduce", size="1GB", time="9ms", ranks=16, cluster="dgx-h100", nodes=2
    ).to_json()["peers"]
    low, high = doc["busbw_GBps"]
    assert low <= high and doc["size_bytes"] == 10**9
    assert all(s["size_bytes"] == 10**9 and len(s["from_sizes_bytes"]) in (1, 2) for s in doc["sources"])
    assert sorted(s["busbw_GBps"] for s in doc["sources"]) == [low, high]
