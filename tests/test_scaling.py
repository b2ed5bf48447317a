"""Work grows linearly with the input: the fit's regime search, the -J reader and diagnose are held to
it by counting what they do (rows fitted, characters scanned), never by timing; 1x, 10x and 100x rows."""

import json

import numpy as np
import pytest

from collperf import fit as fitting
from collperf.ingest import Row, Table


def sweep(rows: int) -> Table:
    """Three regimes (LL-, LL128- and Simple-like) over `rows` sizes from 8 B to 8 GiB, 0.3 % noise; the
    busbw factor of an 8-rank allreduce is 2 x 7 / 8 = 1.75, so the regimes' B are 1.75 x 2, 20 and 90 GB/s."""
    table = Table("synthetic", "allreduce", ranks=8)
    noise = np.random.default_rng(3).standard_normal(rows)
    sizes = np.unique(np.round(np.geomspace(8, 8 << 30, rows)).astype(np.int64))
    for size, e in zip(sizes, noise):
        if size < 1 << 16:
            t = 20e-6 + size / 2e9
        elif size < 1 << 24:
            t = 40e-6 + size / 20e9
        else:
            t = 20e-6 + size / 90e9
        t *= 1 + 0.003 * e
        table.rows.append(Row(int(size), t, size / t / 1e9, size / t / 1e9, 0))
    return table


def rows_fitted(table: Table, monkeypatch) -> tuple[int, fitting.Fit]:
    count = [0]
    segment = fitting._segment

    def counted(x, t):
        count[0] += len(x)
        return segment(x, t)
    monkeypatch.setattr(fitting, "_segment", counted)
    result = fitting.fit(table)
    monkeypatch.setattr(fitting, "_segment", segment)
    return count[0], result


def test_the_fit_search_grows_linearly_with_the_rows(monkeypatch):
    work = {n: rows_fitted(sweep(n), monkeypatch) for n in (100, 1000, 10000)}
    base = work[100][0]
    # quadratic growth would be 100x and 10,000x; the candidate search with refinement is ~n log n
    assert work[1000][0] <= 30 * base
    assert work[10000][0] <= 300 * base
    for _, f in work.values():   # and every size of sweep finds the same three regimes
        assert len(f.regimes) == 3
        assert [r.busbw_GBps for r in f.regimes] == pytest.approx([2 * 1.75, 20 * 1.75, 90 * 1.75], rel=0.02)


@pytest.mark.parametrize("rows", [150, 300])
def test_the_candidate_search_finds_the_exact_optimum_cuts(rows, monkeypatch):
    table = sweep(rows)
    bounded = fitting.fit(table)
    monkeypatch.setattr(fitting, "EXACT_ROWS", 10 ** 9)
    exact = fitting.fit(table)
    assert [(r.from_bytes, r.to_bytes) for r in bounded.regimes] == [(r.from_bytes, r.to_bytes) for r in exact.regimes]
    assert bounded.median_error == pytest.approx(exact.median_error, rel=1e-9)
