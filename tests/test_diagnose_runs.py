"""diagnose on what real use brings: a log of several short runs, MPI logs against a bound, and a one-size
dip on the plateau (fixtures: tests/fixtures/make_diagnose_logs.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from collperf import api, ingest
from collperf.cli import app
from collperf.diagnose import diagnose
from collperf.diagnose.findings import _dips, PLATEAU_NOTCH
from collperf.spec import HardwareSpec

FIXTURES = Path(__file__).parent / "fixtures"
MIB, GIB = 1 << 20, 1 << 30


# ---- a log of several short runs --------------------------------------------------------------------
def test_multi_run_log_is_judged_run_by_run_without_a_fit():
    diags = api.diagnose_logs([FIXTURES / "multi_run.txt"])
    assert [d.table.ranks for d in diags] == [4, 8, 16, 32, 64, 128, 16, 64]
    for k, d in enumerate(diags, 1):
        assert d.fit is None
        (note,) = [f for f in d.findings if f.kind == "not-fitted"]
        assert note.message.startswith(f"run {k} of 8 in this log ({d.table.ranks} ranks")
        assert "has 2 usable size(s): a fit needs 3" in note.message
        # every row still gets NCCL's expected time, the bound and a verdict
        assert [s.size_bytes for s in d.sizes] == [64 * MIB, GIB]
        assert all(s.expected_s and s.bound_s for s in d.sizes)
        assert all(not s.verdict.text.startswith("not judged") for s in d.sizes)
        assert not d.verdict.text.startswith(("error", "not judged"))


def test_multi_run_log_from_the_cli():
    res = CliRunner().invoke(app, ["diagnose", str(FIXTURES / "multi_run.txt"), "--json"])
    assert res.exit_code == 0, res.output
    docs = json.loads(res.output)["diagnoses"]
    assert len(docs) == 8 and all(d["fit"] is None for d in docs)
    assert all(any(f["kind"] == "not-fitted" for f in d["findings"]) for d in docs)


def test_a_log_with_enough_sizes_is_still_fitted():
    (d,) = api.diagnose_logs([FIXTURES / "plateau_dip.txt"])
    assert d.fit is not None and "not-fitted" not in {f.kind for f in d.findings}


# ---- MPI logs against a bound ------------------------------------------------------------------------
def _rows(d):
    return {s.size_bytes: s for s in d.sizes}


def test_mpi_log_is_judged_against_peak():
    (d,) = api.diagnose_logs([FIXTURES / "imb_allreduce_np16.txt"], peak="10GB/s")
    rows = _rows(d)
    # 16 MiB in 4204.30 us; bound = size x 2 x 15/16 / 10 GB/s = 3.146 ms: 75 % of the bound, within 1.5x
    bound = 16 * MIB * 2 * 15 / 16 / 10e9
    assert rows[16 * MIB].bound_s == pytest.approx(bound)
    assert rows[16 * MIB].efficiency == pytest.approx(bound / 4204.30e-6)
    assert rows[16 * MIB].verdict.text.startswith("as expected")
    assert rows[16 * MIB].expected_s is None and rows[16 * MIB].choice == ""  # NCCL's model is not MPI's
    assert rows[1024].verdict.text.startswith("not judged: latency-bound")
    assert d.verdict.text.startswith("as expected") and "of the bound" in d.verdict.text


def test_mpi_log_is_judged_against_a_cpu_cluster():
    # 2 nodes x 8 ranks, one 100 Gb/s NIC per node, 20 GB/s per rank inside a node: allreduce's bound is the
    # larger of the node's NIC (2 x 1/2 x size / 12.5 GB/s) and a rank's intra links (2 x 7/8 x size / 20 GB/s)
    (d,) = api.diagnose_logs(
        [FIXTURES / "imb_allreduce_np16.txt"], hardware=_hw(nodes=2, nic_rate="100Gb/s", intra_bandwidth="20GB/s")
    )
    size = 16 * MIB
    bound = max(size / 12.5e9, 2 * 7 / 8 * size / 20e9)
    row = _rows(d)[size]
    assert row.bound_s == pytest.approx(bound)
    assert row.verdict.text.startswith("slower than the bound allows by") and row.causes
    assert any("MPI library" in c for c in row.causes)
    assert d.verdict.text.startswith("slower than the bound allows")
    assert "CPU cluster" in d.bound_from


def test_mpi_log_without_a_bound_says_what_to_give():
    (d,) = api.diagnose_logs([FIXTURES / "imb_allreduce_np16.txt"])
    assert d.verdict.text.startswith("not judged") and "--peak" in d.verdict.text


def _hw(**values):
    return HardwareSpec(**values)


# ---- a one-size dip on the plateau ---------------------------------------------------------------------
def test_plateau_dip_and_rising_dip_are_both_flagged():
    (d,) = api.diagnose_logs([FIXTURES / "plateau_dip.txt"])
    dips = [f for f in d.findings if f.kind == "dip"]
    assert sorted(s for f in dips for s in f.sizes_bytes) == [8 * MIB, GIB]
    # the 1 GiB row: 30 % slower than its neighbours, busbw 1/1.3 = 77 % of theirs (under 85 %)
    bus = {s.size_bytes: s.busbw_GBps for s in d.sizes}
    around = (bus[GIB // 2] * bus[2 * GIB]) ** 0.5
    assert bus[GIB] / around > 0.75  # the rising-part rule misses it
    assert bus[GIB] / min(bus[GIB // 2], bus[2 * GIB]) < PLATEAU_NOTCH


def test_plateau_noise_is_not_a_dip():
    # the same 1 GiB row only 10 % slower than its neighbours: noise on a flat curve, no finding
    text = (FIXTURES / "plateau_dip.txt").read_text()
    (t,) = ingest.parse(_slower(text, GIB, 1.1 / 1.3), "noise.txt")
    d = diagnose(t)
    assert not [f for f in d.findings if f.kind == "dip" and GIB in f.sizes_bytes]
    assert [f for f in d.findings if f.kind == "dip" and 8 * MIB in f.sizes_bytes]


def test_a_row_before_a_step_up_is_not_a_dip():
    # busbw level with the size before and well under the size after (a protocol switch): no notch
    bus = [(1 << k, b) for k, b in zip(range(20, 26), (100.0, 110.9, 120.4, 114.0, 168.7, 183.9))]
    assert not _dips(bus)
    bus[3] = (bus[3][0], 0.8 * 120.4)  # 20 % under both neighbours
    assert [f.sizes_bytes for f in _dips(bus)] == [[1 << 23]]


def _slower(text: str, size: int, factor: float) -> str:
    """The log with the row of `size` made `factor` times slower (time and bandwidths rewritten)."""
    out = []
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == str(size):
            t1, t2 = float(f[5]) * factor, float(f[9]) * factor
            alg1, alg2 = size / (t1 * 1e3), size / (t2 * 1e3)
            k = float(f[7]) / float(f[6])
            line = (
                f"{f[0]:>12}  {f[1]:>12}  {f[2]:>8}  {f[3]:>6}  {f[4]:>6}  {t1:7.1f}  {alg1:6.2f}  "
                f"{alg1 * k:6.2f}  {f[8]:>6}  {t2:7.1f}  {alg2:6.2f}  {alg2 * k:6.2f}  {f[12]:>6}"
            )
        out.append(line)
    return "\n".join(out) + "\n"
