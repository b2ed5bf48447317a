"""The fit on real multi-node logs: the LL / LL128 / Simple and tree / ring switches give 3-4 regimes,
and disturbed rows are left out of the fit and named, not absorbed."""

from pathlib import Path

import numpy as np
import pytest

from collperf import api, units
from collperf.fit import fit
from collperf.ingest import Row, Table

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.parametrize(
    "name,slowed",
    [
        ("14_h100-ib400-2node-16gpu-allreduce.txt", [8, 256]),
        ("19_lambda-b200-2node-16gpu-allreduce.txt", [512, 524288]),
    ],
)
def test_two_node_logs_fit_within_three_percent(name, slowed):
    (table,) = api.read_logs(EXAMPLES / name)[:1]
    f = fit(table)
    assert len(f.regimes) >= 3
    assert np.median(np.abs(f.residuals)) <= 0.03
    assert not set(slowed) & set(int(s) for s in f.sizes)  # left out of the fit ...
    note = next(n for n in f.notes if "left out of the fit" in n)  # ... and said so
    assert all(units.format_size(s) in note for s in slowed)  # with their units, as the log's sizes


def test_a_slowed_row_is_left_out_and_the_line_is_recovered():
    """t = 10 us + size / 10 GB/s with one row slowed 3x: the fit gives back alpha and B exactly."""
    table = Table("synthetic", "allreduce", ranks=2)
    for k in range(4, 24):
        size = 1 << k
        t = 10e-6 + size / 10e9
        if k == 8:
            t *= 3
        table.rows.append(Row(size, t, size / t / 1e9, size / t / 1e9, 0))
    f = fit(table)
    assert len(f.regimes) == 1 and 256 not in f.sizes
    assert f.regimes[0].latency_s == pytest.approx(10e-6, rel=1e-6)
    assert f.regimes[0].busbw_GBps == pytest.approx(10.0, rel=1e-6)
