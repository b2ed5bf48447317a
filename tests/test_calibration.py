"""The calibrated expectation: fitting the band on samples with known achieved fractions, applying it, the band
verdict on hand-made cases, the size-by-size view, peers, and the whole path on a synthetic corpus."""

import csv

import numpy as np
import pytest

from collperf.collectives import busbw_factor
from collperf.diagnose import diagnose
from collperf.diagnose.calibrated import peers
from collperf.diagnose.corpus_fit import build, cross_validate, read_corpus
from collperf.diagnose.verdict import band_verdict
from collperf.ingest import parse
from collperf.model.calibration import Sample, band, fit_bands
from collperf.model.nccl import expect
from collperf.model.systems import get_system
from collperf.spec import HardwareSpec

SIZES = np.array([2.0 ** k for k in range(20, 31)])      # 1 MiB .. 1 GiB


def _sample(i, ratio, fabric="ib", source=None, sizes=SIZES):
    return Sample(f"log{i}", source or f"src{i}", fabric, sizes, np.full(sizes.shape, ratio), np.full(sizes.shape, 0.8))


def test_fit_recovers_known_fractions():
    # ten logs achieving 1.0, 1.1, ..., 1.9 x NCCL's model time at every size: each log weighs 1/10, so the
    # cumulative weight is exactly 0.1 after the first log: the 10th percentile is the mean of 1.0 and 1.1, the
    # 50th of 1.4 and 1.5, the 90th of 1.8 and 1.9
    table = fit_bands([_sample(i, 1.0 + 0.1 * i) for i in range(10)])
    stats = table["ib"]["25"]
    assert (stats["low"], stats["typical"], stats["high"]) == pytest.approx((1.05, 1.45, 1.85))
    assert (stats["logs"], stats["sources"]) == (10, 10)
    assert stats["efficiency"] == pytest.approx([0.8, 0.8, 0.8])
    assert table["network"]["25"]["typical"] == pytest.approx(1.45) and "node" not in table


def test_each_log_weighs_the_same_however_many_rows():
    long = _sample(0, 2.0, sizes=np.repeat(SIZES, 50))
    short = [_sample(i, 1.0) for i in range(1, 4)]
    stats = fit_bands([long] + short)["ib"]["25"]
    assert stats["typical"] == pytest.approx(1.0)            # 3 logs of 1.0 outvote 1 log of 2.0, rows aside
    # cumulative weight 3/4 after the three logs at 1.0: the 90th percentile is the long log's 2.0
    assert stats["high"] == pytest.approx(2.0)


def test_band_multiplies_the_model_time_and_never_goes_below_the_bound():
    table = fit_bands([_sample(i, 1.0 + 0.1 * i) for i in range(10)])
    b = band([1 << 25, 1 << 25], [2e-3, 1e-3], "ib", table, floor_s=[0.0, 1.2e-3])
    assert b.typical_s == pytest.approx([2.9e-3, 1.45e-3]) and b.low_s == pytest.approx([2.1e-3, 1.2e-3])
    assert b.high_s == pytest.approx([3.7e-3, 1.85e-3])
    assert "10 public runs of this fabric class (ib) from 10 sources" in b.provenance[0]


def test_a_class_with_too_few_runs_borrows_its_group_and_keeps_its_own_spread():
    samples = [_sample(i, 1.2) for i in range(5)] + [_sample(9, 3.0, fabric="tcpx")]
    b = band([1 << 25], [1e-3], "tcpx", fit_bands(samples))
    assert b.typical_s == pytest.approx([1.2e-3])              # the network group's typical time
    assert b.high_s == pytest.approx([3.0e-3])                 # ... but its own run is inside the band
    assert "1 tcpx run(s)" in b.provenance[0] and "network" in b.provenance[0]
    none = band([1 << 25], [1e-3], "ib", {})
    assert np.isnan(none.typical_s[0]) and none.provenance[0].startswith("not calibrated")


@pytest.mark.parametrize("time_s, label", [(12.0, "slower than expected by 20%"), (9.0, "as expected"),
                                           (10.0, "as expected"), (8.0, "as expected"), (7.0, "faster than typical")])
def test_band_verdict(time_s, label):
    assert band_verdict(time_s, 8.0, 10.0).startswith(label)


def test_peers_report_the_range_sources_and_yours():
    system = get_system("dgx-h100", nodes=2)
    runs = [{"id": f"run{i}", "source_url": f"https://example.org/{i}", "system": "dgx-h100", "nic": "8x400G-ib",
             "collective": "allreduce", "family": "dgx-h100", "fabric": "ib", "nodes": 2, "gpus_per_node": 8,
             "busbw": [[1 << 30, bw]]} for i, bw in enumerate((440.0, 452.0, 470.0, 461.0, 445.0))]
    runs.append({**runs[0], "id": "other", "nodes": 4})       # another layout: not a peer
    p = peers("allreduce", system, 1 << 30, 446.0, runs)
    assert p.busbw_GBps == [440.0, 452.0, 470.0, 461.0, 445.0] and len(p.to_json()["sources"]) == 5
    assert p.describe().endswith("reach 440-470 GB/s busbw at 1 GiB (5 runs); yours: 446")
    assert "2x8" in p.describe() and "8x 400 Gb/s InfiniBand" in p.describe()
    assert peers("allreduce", system, 16 << 30, None, runs).runs == []    # no corpus size within 2x


# ---- a synthetic corpus: logs written from NCCL's model time x a known fraction ----------------------------

def _log_text(system, fraction, sizes):
    pred = expect("allreduce", sizes, system)
    factor = busbw_factor("allreduce", system.ranks)
    lines = ["# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20",
             "#", "# Using devices"]
    lines += [f"#  Rank {r:2d} Group  0 Pid {100 + r} on node{r // 8} device {r % 8} [0x1b] NVIDIA H100 80GB HBM3"
              for r in range(system.ranks)]
    lines += ["#", "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
              "algbw   busbw #wrong", "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
              "            (us)  (GB/s)  (GB/s)"]
    for n, t in zip(sizes, pred.time_s * fraction):
        us, alg = t * 1e6, n / t / 1e9
        lines.append(f"{int(n):12d} {int(n) // 4:12d}     float     sum      -1 {us:8.1f} {alg:7.2f} "
                     f"{alg * factor:7.2f}"
                     f"      0 {us:8.1f} {alg:7.2f} {alg * factor:7.2f}      0")
    lines.append("# Avg bus bandwidth    : 1.0")
    return "\n".join(lines) + "\n"


@pytest.fixture
def corpus(tmp_path):
    system = get_system("dgx-h100", nodes=2).with_(gpus_per_node=8)
    fractions = {"a": 1.1, "b": 1.2, "c": 1.3, "d": 1.4, "e": 1.5}
    rows = []
    for i, (key, f) in enumerate(fractions.items()):
        (tmp_path / f"h100-ib-{key}.txt").write_text("# source: synthetic\n# hardware: synthetic\n"
                                                     + _log_text(system, f, SIZES))
        rows.append({"id": f"h100-ib-{key}", "source_url": f"https://example.org/{key}", "source_group": f"g{key}",
                     "tool": "nccl-tests", "system": "dgx-h100", "gpu": "H100", "gpus_per_node": "8", "nodes": "2",
                     "ranks": "16", "fabric": "ib", "nic": "8x400G-ib", "collectives": "allreduce",
                     "nccl_version": "", "min_size_bytes": "1048576", "max_size_bytes": "1073741824",
                     "health": "healthy", "why": "synthetic"})
    (tmp_path / "h100-ib-bad.txt").write_text("# source: synthetic\n# hardware: synthetic\n"
                                              + _log_text(system, 4.0, SIZES))
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
    stats = data["bands"]["ib"]["25"]
    # five logs at 1.1..1.5, cumulative weights 0.2, 0.4, ...: the percentiles are 1.1, 1.3 and 1.5 (within the
    # rounding of the log's printed microseconds)
    assert (stats["low"], stats["typical"], stats["high"]) == pytest.approx((1.1, 1.3, 1.5), rel=2e-3)
    results = {r["id"]: r for r in cross_validate(logs)}
    assert not any(r["verdict"].startswith("slower") for r in results.values() if r["healthy"])
    assert results["h100-ib-bad"]["verdict"].startswith("slower than expected") and results["h100-ib-bad"]["flagged"]
    # the middle log, left out: the other four (1.1, 1.2, 1.4, 1.5) reach weight 1/2 exactly at 1.2: typical 1.3
    assert results["h100-ib-c"]["error"] == pytest.approx(0.0, abs=5e-3)


def test_diagnose_judges_against_the_band_and_names_sizes_outside(corpus):
    logs = read_corpus(corpus)
    bands = build(logs)["bands"]
    text = _log_text(get_system("dgx-h100", nodes=2), 1.3, SIZES)
    table = parse(text, "synthetic.txt")[0]
    slow = table.placement("out-of-place")[4]                  # 16 MiB made 3x slower than its band's typical
    slow.time_s *= 3
    d = diagnose(table, hardware=HardwareSpec(cluster="dgx-h100", nodes=2), bands=bands, peer_runs=[])
    assert d.verdict.startswith("as expected")
    row = next(v for v in d.sizes if v.size == slow.size)
    assert row.verdict.startswith("slower than expected") and row.expected_low_s < row.expected_s < row.expected_high_s
    outside = next(f for f in d.findings if f.kind == "outside-band")
    assert outside.sizes == [slow.size] and "16 MiB" in outside.message
    assert "calibrated on 5 public runs" in d.expected_from
