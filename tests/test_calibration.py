"""The calibrated expectation: fitting the band on samples with known achieved fractions, applying it, the band
verdict on hand-made cases, the size-by-size view, peers, and the whole path on a synthetic corpus."""

import csv
from dataclasses import replace
from importlib import resources

import numpy as np
import pytest

from collperf.collectives import busbw_factor
from collperf.diagnose import diagnose
from collperf.expect.peers import peers
from collperf.diagnose.band_rule import beyond_band
from collperf.diagnose.core import SizeVerdict
from collperf.diagnose.corpus_fit import build, cross_validate, read_corpus
from collperf.expect.expectation import expectation
from collperf.expect.resolve import assume
from collperf.diagnose.verdict import Kind, Verdict, band_verdict
from collperf.ingest import parse
from collperf.expect import band_fit as calibration_fit
from collperf.expect.band import BOUND_FRACTION, MODEL_FACTOR, OVERHEAD_US, TIE_BREAK, Fit, Sample, band
from collperf.expect.band_fit import fit_bands, fit_two_part
from collperf.model.nccl import expect
from collperf.model.hardware.catalogue import get_system
from collperf.spec import HardwareSpec

SIZES = np.array([2.0**k for k in range(20, 31)])  # 1 MiB .. 1 GiB


def _sample(i, factor, fabric="ib", source=None, overhead_s=0.0, fraction=0.0, sizes=SIZES):
    """A log that takes `overhead_s` + max(`factor` x NCCL's model time, bound / `fraction`) at every size. NCCL's
    model: 200 us + 40 GB/s, the bound 50 GB/s: with a fraction of 0.6 the model term rules up to ~16 MiB."""
    model, bound = 200e-6 + sizes / 40e9, sizes / 50e9
    t = overhead_s + np.maximum(factor * model, bound / fraction if fraction else 0.0)
    return Sample(f"log{i}", source or f"src{i}", fabric, sizes, t, model, bound)


@pytest.mark.parametrize("overhead_us, factor, fraction", [(40, 1.2, 0.0), (100, 0.9, 0.6), (0, 1.0, 0.35)])
def test_fit_recovers_known_overhead_factor_and_fraction(overhead_us, factor, fraction):
    # logs made from a known per-call overhead, factor on NCCL's model and fraction of the bound, of different
    # sizes ranges so that every part shows somewhere: the fit finds exactly those (they are on its grid)
    samples = [
        _sample(
            i,
            factor,
            overhead_s=overhead_us * 1e-6,
            fraction=fraction,
            sizes=np.array([2.0**k for k in range(10 + 2 * i, 31)]),
        )
        for i in range(4)
    ]
    fit = fit_two_part(samples, "ib")
    assert (fit.overhead_us, fit.model_factor, fit.bound_fraction) == (overhead_us, factor, fraction)
    assert (fit.logs, fit.sources, fit.of) == (4, 4, "ib")
    stats = fit_bands(samples)["ib"]["25"]
    assert (stats["low"], stats["typical"], stats["high"]) == pytest.approx((1.0, 1.0, 1.0))


def test_the_factor_is_the_error_weighted_median_and_each_log_weighs_the_same():
    # five logs at 1.1..1.5 x NCCL's model: minimising the mean relative error |r - c| / c is the median of c
    # weighted by 1/c: weights .909 .833 .769 .714 .667 (sum 3.89), cumulative .909, 1.742, 2.511: r = 1.3
    assert fit_two_part([_sample(i, 1.1 + 0.1 * i) for i in range(5)]).model_factor == pytest.approx(1.3)
    # a log with 50 rows per size weighs as much as each of three short ones
    long = _sample(9, 2.0, sizes=np.repeat(SIZES, 50))
    assert fit_two_part([long] + [_sample(i, 1.0) for i in range(3)]).model_factor == pytest.approx(1.0)


def test_the_band_is_the_spread_around_the_fit_each_log_weighing_the_same():
    # ten logs at 1.0..1.9 x NCCL's model; the fit is their error-weighted median (weights 1/c, sum 7.19: cumulative
    # 1, 1.909, 2.742, 3.511, 4.225 against half of it, 3.59): r = 1.4, and the band the percentiles of c / 1.4
    long = _sample(0, 1.0, sizes=np.repeat(SIZES, 50))  # 50 rows per size: still one log's weight
    table = fit_bands([long] + [_sample(i, 1.0 + 0.1 * i) for i in range(1, 10)])
    assert table["ib"]["fit"]["model_factor"] == pytest.approx(1.4)
    stats = table["ib"]["25"]
    assert (stats["low"], stats["typical"], stats["high"]) == pytest.approx(
        (1.05 / 1.4, 1.45 / 1.4, 1.85 / 1.4), abs=1e-4
    )
    assert (stats["logs"], stats["sources"]) == (10, 10)
    assert table["network"]["fit"]["of"] == "network" and "node" not in table


def test_band_applies_the_fit_and_the_spread_and_never_goes_below_the_bound():
    table = {
        "ib": {
            "fit": {
                "overhead_us": 50.0,
                "model_factor": 1.1,
                "bound_fraction": 0.5,
                "logs": 9,
                "sources": 4,
                "of": "ib",
            },
            "25": {"low": 0.8, "typical": 1.02, "high": 1.5, "logs": 9, "sources": 4},
        }
    }
    # typical = 50 us + max(1.1 x model, bound / 0.5): 50 + max(2200, 1000) = 2250 us; 50 + max(1100, 1600) =
    # 1650 us; the band 0.8x..1.5x of it
    b = band([1 << 25, 1 << 25], [2e-3, 1e-3], "ib", table, floor_s=[0.5e-3, 0.8e-3])
    assert b.typical_s == pytest.approx([2.25e-3, 1.65e-3]) and b.high_s == pytest.approx([3.375e-3, 2.475e-3])
    assert b.low_s == pytest.approx([1.8e-3, 1.32e-3])
    # without a bound term (fraction 0): 50 us + 1.1 ms = 1.15 ms, under a 1.4 ms bound: low and typical are the bound
    table["ib"]["fit"]["bound_fraction"] = 0.0
    floor = band([1 << 25], [1e-3], "ib", table, floor_s=[1.4e-3])
    assert floor.low_s == pytest.approx([1.4e-3]) and floor.typical_s == pytest.approx([1.4e-3])
    assert floor.high_s == pytest.approx([1.725e-3])
    assert "9 public runs of this fabric class (ib) from 4 sources" in b.provenance[0]


def test_a_class_with_too_few_runs_borrows_its_group_and_keeps_its_own_overhead_and_spread():
    # one tcpx run of one size, 32 MiB, at 3 x NCCL's model (200 us + 32 MiB / 40 GB/s = 1.0389 ms): 3.1166 ms
    samples = [_sample(i, 1.2) for i in range(5)] + [_sample(9, 3.0, fabric="tcpx", sizes=np.array([2.0**25]))]
    table = fit_bands(samples)
    fit = table["tcpx"]["fit"]
    assert fit["of"] == "network" and fit["model_factor"] == pytest.approx(1.2)  # the network group's factor
    # ... and its own overhead: 3.1166 - 1.2 x 1.0389 = 1.87 ms is wanted, the grid's largest (500 us) is nearest
    assert fit["overhead_us"] == 500.0 and table["network"]["fit"]["overhead_us"] == 0.0
    b = band([1 << 25], [1e-3], "tcpx", table)
    assert b.typical_s == pytest.approx([1.7e-3])  # 500 us + 1.2 x 1 ms
    # its own run inside the band: the band is the network group's, whose 90th percentile of six runs is this one
    # (3 / 1.2 = 2.5 x the group's typical time), on the class's typical time
    assert b.high_s == pytest.approx([2.5 * 1.7e-3])
    assert "1 tcpx run(s)" in b.provenance[0] and "network" in b.provenance[0] and "too few" in b.provenance[0]
    none = band([1 << 25], [1e-3], "ib", {})
    assert np.isnan(none.typical_s[0]) and none.provenance[0].startswith("not calibrated")


def _sparse(i, fraction, gpus_per_node=1, sizes=SIZES):
    """A run with `gpus_per_node` GPUs per node that reaches `fraction` of the bound (50 GB/s) at every size."""
    bound = sizes / 50e9
    return Sample(
        f"sparse{i}", f"sparse-src{i}", "ib", sizes, bound / fraction, 200e-6 + sizes / 40e9, bound, gpus_per_node
    )


def test_the_sparse_layouts_fraction_is_recovered_and_leaves_the_class_factor_alone():
    # four 8-GPU runs at 1.2 x NCCL's model, four 1- and 2-GPU runs at half the bound (2 x 1/50 GB/s = 1/25 GB/s,
    # about 1.6 x NCCL's 200 us + 1/40 GB/s over 1 MiB..1 GiB): the sparse layouts get their fraction, 0.5, and the
    # class keeps its 1.2; unmarked (GPUs per node unknown), the 1- and 2-GPU runs pull the class's fit instead
    dense = [replace(_sample(i, 1.2), gpus_per_node=8) for i in range(4)]
    sparse = [_sparse(i, 0.5, gpus_per_node=1 + i % 2) for i in range(4)]
    fit = fit_bands(dense + sparse)["ib"]["fit"]
    assert (fit["sparse_fraction"], fit["model_factor"], fit["overhead_us"]) == (0.5, 1.2, 0.0)
    stats = fit_bands(dense + sparse)["ib"]["25"]
    assert (stats["low"], stats["typical"], stats["high"]) == pytest.approx((1.0, 1.0, 1.0))
    unmarked = fit_bands(dense + [replace(s, gpus_per_node=0) for s in sparse])["ib"]["fit"]
    assert unmarked["sparse_fraction"] == 0.0 and unmarked["bound_fraction"] > 0.0
    assert fit_bands(dense)["ib"]["fit"]["sparse_fraction"] == 0.0  # no sparse run: no sparse fraction


def test_band_judges_one_or_two_gpus_per_node_at_the_sparse_fraction():
    table = {
        "ib": {
            "fit": {
                "overhead_us": 50.0,
                "model_factor": 1.1,
                "bound_fraction": 0.5,
                "logs": 9,
                "sources": 4,
                "of": "ib",
                "sparse_fraction": 0.4,
            },
            "25": {"low": 0.8, "typical": 1.0, "high": 1.5, "logs": 9, "sources": 4},
        }
    }
    # 8 GPUs per node (or not known): 50 us + max(1.1 x 2 ms, 0.5 ms / 0.5) = 2.25 ms; 1 or 2 GPUs per node:
    # 50 us + 0.5 ms / 0.4 = 1.3 ms, NCCL's model time left out; 3 GPUs per node is not sparse
    for gpus, typical in ((8, 2.25e-3), (0, 2.25e-3), (3, 2.25e-3), (2, 1.3e-3), (1, 1.3e-3)):
        b = band([1 << 25], [2e-3], "ib", table, floor_s=[0.5e-3], gpus_per_node=gpus)
        assert b.typical_s == pytest.approx([typical]) and b.high_s == pytest.approx([1.5 * typical])
        assert ("GPU(s) per node: the typical time is the bound over 0.4" in b.layout) == (typical == 1.3e-3)
    # a table without the sparse fraction (0) judges every layout alike
    table["ib"]["fit"]["sparse_fraction"] = 0.0
    assert band([1 << 25], [2e-3], "ib", table, floor_s=[0.5e-3], gpus_per_node=1).typical_s == pytest.approx([2.25e-3])


def test_a_class_with_too_few_runs_for_its_own_fit_borrows_its_band_too():
    # three socket runs from two sources are enough for a band (3 runs, 2 sources) but not for a fit (4): their
    # band is the network group's, widened to them, and says it is borrowed (so it calls no run slower)
    samples = [_sample(i, 1.2) for i in range(5)] + [_sample(10 + i, 3.0 + i, "socket", f"s{i % 2}") for i in range(3)]
    table = fit_bands(samples)
    assert table["socket"]["25"]["logs"] == 3 and table["socket"]["fit"]["of"] == "network"
    b = band([1 << 25], [1e-3], "socket", table)
    assert "3 socket run(s) at this size, too few" in b.provenance[0]


def test_diagnose_prices_a_one_gpu_per_node_run_at_the_sparse_fraction_and_says_so():
    # 2 nodes x 1 H100 over InfiniBand: the typical time is the bound over the sparse fraction (0.5), NCCL's model
    # time left out; 2 nodes x 8 GPUs: the class's 1 x NCCL's model time (the bound term at 0.9 does not rule there)
    fit = {
        "overhead_us": 0.0,
        "model_factor": 1.0,
        "bound_fraction": 0.9,
        "logs": 9,
        "sources": 4,
        "of": "ib",
        "sparse_fraction": 0.5,
    }
    table = {
        "ib": {
            "fit": fit,
            **{str(k): {"low": 1.0, "typical": 1.0, "high": 1.0, "logs": 9, "sources": 4} for k in range(20, 31)},
        }
    }
    sizes = [1 << 20, 1 << 25, 1 << 30]
    pair = expectation(
        "allreduce", sizes, assume(None, HardwareSpec(cluster="dgx-h100", nodes=2), ranks=2), bands=table
    )
    assert pair.expected_s == pytest.approx(pair.bound_s / 0.5)
    assert "1 GPU(s) per node: the typical time is the bound over 0.5" in pair.expected_from
    full = expectation(
        "allreduce", sizes, assume(None, HardwareSpec(cluster="dgx-h100", nodes=2), ranks=16), bands=table
    )
    assert full.expected_s == pytest.approx(np.maximum(full.model_s, full.bound_s / 0.9))
    assert "GPU(s) per node" not in full.expected_from


@pytest.mark.parametrize(
    "time_s, label",
    [
        (12.0, "slower than expected by 20%"),
        (9.0, "as expected"),
        (10.0, "as expected"),
        (8.0, "as expected"),
        (7.0, "faster than typical"),
    ],
)
def test_band_verdict(time_s, label):
    assert band_verdict(time_s, 8.0, 10.0).text.startswith(label)


def test_peers_report_the_range_sources_and_yours():
    system = get_system("dgx-h100", nodes=2)
    runs = [
        {
            "id": f"run{i}",
            "source_url": f"https://example.org/{i}",
            "system": "dgx-h100",
            "nic": "8x400G-ib",
            "collective": "allreduce",
            "family": "dgx-h100",
            "fabric": "ib",
            "nodes": 2,
            "gpus_per_node": 8,
            "busbw": [[1 << 30, bw]],
        }
        for i, bw in enumerate((440.0, 452.0, 470.0, 461.0, 445.0))
    ]
    runs.append({**runs[0], "id": "other", "nodes": 4})  # another layout: not a peer
    p = peers("allreduce", system, 1 << 30, 446.0, runs)
    assert p.busbw_GBps == [440.0, 452.0, 470.0, 461.0, 445.0] and len(p.to_json()["sources"]) == 5
    assert p.describe().endswith(
        "reach 440-470 GB/s busbw at 1 GiB (5 runs; their NICs per node: 8x 400 Gb/s); yours: 446 GB/s"
    )
    # a PCIe pair's few GB/s keep their digits
    slow = peers("allreduce", system, 1 << 30, 3.75, [{**r, "busbw": [[1 << 30, 3.61]]} for r in runs[:2]])
    assert slow.describe().endswith(
        "reach 3.61 GB/s busbw at 1 GiB (2 runs; their NICs per node: 8x 400 Gb/s); yours: 3.75 GB/s"
    )
    # the layout and fabric peers match on; the NICs are the peers' own, not the system assumed's
    assert "2x8" in p.describe() and "over InfiniBand" in p.describe()
    mixed = peers(
        "allreduce",
        system.with_(nics_per_node=4),
        1 << 30,
        None,
        [{**runs[0], "nic": "4x200G-ib"}, {**runs[1], "nic": "8x?G-ib"}],
    )
    assert "(2 runs; their NICs per node: 4x 200 Gb/s, 8x (rate not stated))" in mixed.describe()
    assert peers("allreduce", system, 16 << 30, None, runs).runs == []  # no corpus size within 2x


# ---- a synthetic corpus: logs written from NCCL's model time x a known fraction ----------------------------


def _log_text(system, fraction, sizes):
    pred = expect("allreduce", sizes, system)
    factor = busbw_factor("allreduce", system.ranks)
    lines = [
        "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20",
        "#",
        "# Using devices",
    ]
    lines += [
        f"#  Rank {r:2d} Group  0 Pid {100 + r} on node{r // 8} device {r % 8} [0x1b] NVIDIA H100 80GB HBM3"
        for r in range(system.ranks)
    ]
    lines += [
        "#",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
        "algbw   busbw #wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)",
    ]
    for n, t in zip(sizes, pred.time_s * fraction):
        us, alg = t * 1e6, n / t / 1e9
        lines.append(
            f"{int(n):12d} {int(n) // 4:12d}     float     sum      -1 {us:8.1f} {alg:7.2f} "
            f"{alg * factor:7.2f}"
            f"      0 {us:8.1f} {alg:7.2f} {alg * factor:7.2f}      0"
        )
    lines.append("# Avg bus bandwidth    : 1.0")
    return "\n".join(lines) + "\n"


@pytest.fixture
def corpus(tmp_path):
    system = get_system("dgx-h100", nodes=2).with_(gpus_per_node=8)
    fractions = {"a": 1.1, "b": 1.2, "c": 1.3, "d": 1.4, "e": 1.5}
    rows = []
    for i, (key, f) in enumerate(fractions.items()):
        (tmp_path / f"h100-ib-{key}.txt").write_text(
            "# source: synthetic\n# hardware: synthetic\n" + _log_text(system, f, SIZES)
        )
        rows.append(
            {
                "id": f"h100-ib-{key}",
                "source_url": f"https://example.org/{key}",
                "source_group": f"g{key}",
                "tool": "nccl-tests",
                "system": "dgx-h100",
                "gpu": "H100",
                "gpus_per_node": "8",
                "nodes": "2",
                "ranks": "16",
                "fabric": "ib",
                "nic": "8x400G-ib",
                "collectives": "allreduce",
                "nccl_version": "",
                "min_size_bytes": "1048576",
                "max_size_bytes": "1073741824",
                "health": "healthy",
                "why": "synthetic",
            }
        )
    (tmp_path / "h100-ib-bad.txt").write_text(
        "# source: synthetic\n# hardware: synthetic\n" + _log_text(system, 4.0, SIZES)
    )
    rows.append({**rows[0], "id": "h100-ib-bad", "source_group": "gbad", "health": "known-bad", "why": "4x slow"})
    with open(tmp_path / "index.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return tmp_path


def test_synthetic_corpus_recovers_the_fractions_and_cross_validates(corpus):
    logs = read_corpus(corpus)
    assert len(logs) == 6 and {log.system.fabric_class for log in logs} == {"ib"}
    data = build(logs)
    assert data["logs"] == 5 and len(data["peers"]) == 5
    # five logs at 1.1..1.5 x NCCL's model time: the fit is their median weighted by 1/c (1.3, see above) with no
    # overhead and no bound term, and the band 1.1/1.3 .. 1.5/1.3 around it (within the rounding of the printed
    # microseconds)
    fit = data["bands"]["ib"]["fit"]
    assert (fit["overhead_us"], fit["model_factor"], fit["bound_fraction"]) == (0.0, pytest.approx(1.3), 0.0)
    stats = data["bands"]["ib"]["25"]
    assert (stats["low"], stats["typical"], stats["high"]) == pytest.approx((1.1 / 1.3, 1.0, 1.5 / 1.3), rel=2e-3)
    results = {r["id"]: r for r in cross_validate(logs)}
    assert not any(r["verdict"].startswith("slower") for r in results.values() if r["healthy"])
    assert results["h100-ib-bad"]["verdict"].startswith("slower than expected") and results["h100-ib-bad"]["flagged"]
    # the middle log, left out: the other four (1.1, 1.2, 1.4, 1.5; weights .909 .833 .714 .667, half 1.56)
    # give r = 1.2, so the 1.3 log is 0.1 / 1.3 off
    assert results["h100-ib-c"]["error"] == pytest.approx(0.1 / 1.3, abs=5e-3)
    # ... and inside that band (1.1/1.2 .. 1.5/1.2 of 1.2) at all 11 sizes; the 4x log above it at all 11
    assert results["h100-ib-c"]["band_rows"] == {"inside": 11, "faster": 0, "slower": 0}
    assert results["h100-ib-bad"]["band_rows"] == {"inside": 0, "faster": 0, "slower": 11}


@pytest.mark.slow
def test_leave_one_source_out_on_the_shipped_corpus_meets_the_verdict_targets():
    """The guarantees docs/calibration.md states, on the public runs themselves, each source judged by a fit that
    never saw it: no healthy run is called slower than expected, every known-bad run is flagged, the typical time
    is within 15 % on the median log, and the band is not lopsided (at most a fifth of the held-out healthy rows
    on either side of a 10th-90th percentile band)."""
    results = cross_validate(read_corpus(resources.files("collperf") / "data" / "corpus"))
    healthy = [r for r in results if r["healthy"]]
    bad = [r for r in results if not r["healthy"]]
    assert len(healthy) >= 60 and bad
    assert [r["id"] for r in healthy if r["verdict"].startswith("slower")] == []
    assert [r["id"] for r in bad if not r["flagged"]] == []
    assert np.median([r["error"] for r in healthy if r["error"] is not None]) <= 0.15
    rows = {k: sum(r["band_rows"][k] for r in healthy) for k in ("inside", "faster", "slower")}
    total = sum(rows.values())
    assert rows["faster"] <= 0.2 * total and rows["slower"] <= 0.2 * total


def test_diagnose_judges_against_the_band_and_names_sizes_outside(corpus):
    logs = read_corpus(corpus)
    bands = build(logs)["bands"]
    text = _log_text(get_system("dgx-h100", nodes=2), 1.3, SIZES)
    table = parse(text, "synthetic.txt")[0]
    slow = table.placement("out-of-place")[4]  # 16 MiB made 3x slower than its band's typical
    slow.time_s *= 3
    d = diagnose(table, hardware=HardwareSpec(cluster="dgx-h100", nodes=2), bands=bands, peer_runs=[])
    assert d.verdict.text.startswith("as expected")
    row = next(v for v in d.sizes if v.size_bytes == slow.size)
    assert (
        row.verdict.text.startswith("slower than expected")
        and row.expected_low_s < row.expected_s < row.expected_high_s
    )
    outside = next(f for f in d.findings if f.kind == "outside-band")
    assert outside.sizes_bytes == [slow.size] and "16 MiB" in outside.message
    assert "calibrated on 5 public runs" in d.expected_from


def _size(size, time_s, high_s):
    return SizeVerdict(
        size,
        time_s,
        high_s / 1.5,
        None,
        None,
        None,
        "bandwidth",
        Verdict(Kind.NOT_JUDGED, "not judged"),
        expected_high_s=high_s,
    )


def test_a_log_slow_only_at_its_mid_sizes_is_beyond_the_band_by_its_plateau():
    # sizes 1 MiB .. 1 GiB against a slow edge of 1 ms each: the mid sizes 3x beyond it (a per-call overhead),
    # the plateau (the sizes within 16x of the largest: 64 MiB .. 1 GiB) at the edge: beyond = min(median over
    # all 11 = 3.0, median over the plateau's 5 = 1.0)
    sizes = [1 << k for k in range(20, 31)]
    mid_slow = [_size(n, 3e-3 if n < (64 << 20) else 1e-3, 1e-3) for n in sizes]
    assert beyond_band(mid_slow) == pytest.approx(1.0)
    # slow everywhere: 2x beyond, both ways
    assert beyond_band([_size(n, 2e-3, 1e-3) for n in sizes]) == pytest.approx(2.0)
    # only the largest size 4x beyond: the plateau's median is 1, so is the whole log's
    one_bad = [_size(n, 4e-3 if n == sizes[-1] else 1e-3, 1e-3) for n in sizes]
    assert beyond_band(one_bad) == pytest.approx(1.0)


def test_below_a_mib_the_typical_time_follows_the_octaves_median_and_the_class_own_runs():
    # below 1 MiB the fit was not judged: the typical time is the fit times the octave's median of healthy runs;
    # a class whose band is borrowed there still takes its typical time from its own runs
    table = {
        "network": {
            "fit": {
                "overhead_us": 0.0,
                "model_factor": 1.0,
                "bound_fraction": 0.0,
                "logs": 9,
                "sources": 4,
                "of": "network",
            },
            "16": {"low": 0.5, "typical": 2.0, "high": 3.0, "logs": 9, "sources": 4},
        },
        "tcpx": {
            "fit": {
                "overhead_us": 10.0,
                "model_factor": 1.0,
                "bound_fraction": 0.0,
                "logs": 9,
                "sources": 4,
                "of": "network",
            },
            "16": {"low": 1.0, "typical": 1.5, "high": 2.0, "logs": 1, "sources": 1},
        },
    }
    b = band([1 << 16], [20e-6], "network", table)
    assert (b.low_s[0], b.typical_s[0], b.high_s[0]) == pytest.approx((10e-6, 40e-6, 60e-6))
    # tcpx: the network group's fit with its own overhead (10 us), the network band (0.5x-3x of 10 us + 20 us),
    # around its own typical 1.5 x (10 us + 20 us) = 45 us
    b = band([1 << 16], [20e-6], "tcpx", table)
    assert (b.low_s[0], b.typical_s[0], b.high_s[0]) == pytest.approx((15e-6, 45e-6, 90e-6))
    assert "too few" in b.provenance[0]


def test_a_sparse_run_without_a_bound_is_fitted_on_the_time_the_band_applies():
    # One GPU per node, no bound known (NaN): the typical time falls back to the dense two-part model, in the
    # fit as in the band. The run takes 20 us + 1.3 x NCCL's model time exactly, so the only zero-error grid
    # point is overhead 20 us, factor 1.3, with no bound term (the first fraction, 0, of those tied at zero).
    sizes = SIZES
    model = 200e-6 + sizes / 40e9
    runs = [
        Sample(f"nobound{i}", f"src{i}", "ib", sizes, 20e-6 + 1.3 * model, model, np.full(sizes.size, np.nan), 1)
        for i in range(4)
    ]
    fit = fit_two_part(runs, "ib", sparse_fraction=0.5)
    assert (fit.overhead_us, fit.model_factor, fit.bound_fraction) == (20.0, 1.3, 0.0)
    assert fit.typical_s(model, runs[0].bound_s, sparse=True) == pytest.approx(20e-6 + 1.3 * model, rel=1e-12)
    # with a bound, the same sparse run is the bound over its fraction, whatever the factor
    with_bound = fit.typical_s(model, sizes / 50e9, sparse=True)
    assert with_bound == pytest.approx(20e-6 + sizes / 50e9 / 0.5, rel=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
def test_the_grid_the_fit_searches_is_the_typical_time_the_band_applies(sparse):
    # every grid point's objective is the median (+ TIE_BREAK x mean) relative error of Fit.typical_s there
    run = replace(_sample(0, 1.2, overhead_s=60e-6, fraction=0.6), gpus_per_node=1 if sparse else 8)
    grid = calibration_fit._grid_errors(run, 0.55)
    for i, j, k in [(0, 0, 0), (9, 18, 11), (18, 94, 19), (4, 40, 3)]:
        fit = Fit(float(OVERHEAD_US[i]), float(MODEL_FACTOR[j]), float(BOUND_FRACTION[k]), sparse_fraction=0.55)
        e = np.abs(fit.typical_s(run.model_s, run.bound_s, run.sparse) - run.time_s) / run.time_s
        assert grid[i, j, k] == pytest.approx(np.median(e) + TIE_BREAK * np.mean(e), rel=1e-12)
