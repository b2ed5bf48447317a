"""Work grows linearly with the input: the fit's regime search, the -J reader and diagnose are held to
it by counting what they do (rows fitted, characters scanned), never by timing; 1x, 10x and 100x rows."""

import json

import numpy as np
import pytest

from collperf import api, fit as fitting
from collperf.ingest import inspector, others, parse, Row, Table
from collperf.expect import resolve as hardware


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


@pytest.mark.parametrize("largest", [1000, pytest.param(10000, marks=pytest.mark.slow)])
def test_the_fit_search_grows_linearly_with_the_rows(largest, monkeypatch):
    work = {n: rows_fitted(sweep(n), monkeypatch) for n in (100, 1000, 10000) if n <= largest}
    base = work[100][0]
    # quadratic growth would be 100x and 10,000x; the candidate search with refinement is ~n log n
    assert work[1000][0] <= 30 * base
    assert largest < 10000 or work[10000][0] <= 300 * base
    for _, f in work.values():  # and every size of sweep finds the same three regimes
        assert len(f.regimes) == 3
        assert [r.busbw_GBps for r in f.regimes] == pytest.approx([2 * 1.75, 20 * 1.75, 90 * 1.75], rel=0.02)


@pytest.mark.parametrize("rows", [150, pytest.param(300, marks=pytest.mark.slow)])
def test_the_candidate_search_finds_the_exact_optimum_cuts(rows, monkeypatch):
    table = sweep(rows)
    bounded = fitting.fit(table)
    monkeypatch.setattr(fitting, "EXACT_ROWS", 10**9)
    exact = fitting.fit(table)
    assert [(r.from_bytes, r.to_bytes) for r in bounded.regimes] == [(r.from_bytes, r.to_bytes) for r in exact.regimes]
    assert bounded.median_error == pytest.approx(exact.median_error, rel=1e-9)


class CountingText(str):
    """A log's text that counts the characters its reader scans with count() and find(): a reader that
    rescans from the start for each result (what made 40,000 -J results take a minute) counts quadratically."""

    scanned = 0

    def count(self, sub, start=0, end=None):
        end = len(self) if end is None else end
        CountingText.scanned += max(0, end - start)
        return str.count(self, sub, start, end)

    def find(self, sub, start=0, end=None):
        at = str.find(self, sub, start, end)
        CountingText.scanned += (len(self) if at < 0 else at) - start
        return at


def nccl_tests_json(rows: int) -> str:
    """nccl-tests -J in its own shape, pretty-printed (a field a line, as nccl-tests writes it)."""

    def measure(size):
        return {"time": 20 + size / 2e3, "alg_bw": size / (20 + size / 2e3) / 1e3, "bus_bw": None, "nwrong": 0}

    return json.dumps(
        {
            "version": "2.17.6",
            "args": ["./build/all_reduce_perf", "-J", "x.json"],
            "results": [
                {
                    "size": 8 * (k + 1),
                    "count": 2 * (k + 1),
                    "type": "float",
                    "redop": "sum",
                    "root": -1,
                    "out_of_place": measure(8 * (k + 1)),
                    "in_place": None,
                }
                for k in range(rows)
            ],
        },
        indent=2,
    )


def inspector_jsonl(calls: int) -> str:
    return (
        "\n".join(
            json.dumps(
                {
                    "header": {"id": "c0", "rank": 0, "n_ranks": 8, "nnodes": 1},
                    "coll_perf": {
                        "coll": "AllReduce",
                        "coll_sn": k,
                        "coll_msg_size_bytes": 8 << (k % 20),
                        "coll_exec_time_us": 10 + (8 << (k % 20)) / 1e4,
                    },
                }
            )
            for k in range(calls)
        )
        + "\n"
    )


def _lines_of_results(text):
    return others.result_lines(text)  # where each -J result starts, for messages by line


def _inspector_records(text):
    return list(inspector.decode_lines(text))


@pytest.mark.parametrize("largest", [10, pytest.param(100, marks=pytest.mark.slow)])
@pytest.mark.parametrize(
    "make,scan,rows", [(nccl_tests_json, _lines_of_results, 200), (inspector_jsonl, _inspector_records, 300)]
)
def test_readers_scan_each_character_a_bounded_number_of_times(make, scan, rows, largest):
    scanned = {}
    for scale in (1, 10, 100)[: (1, 10, 100).index(largest) + 1]:
        text = make(rows * scale)
        assert sum(len(t.rows) for t in parse(text, "scaled"))
        CountingText.scanned = 0
        assert len(scan(CountingText(text))) >= rows * scale
        scanned[scale] = CountingText.scanned / len(text)  # characters scanned per character of input
    # linear: the same few passes per character at every size (quadratic: 10x and 100x more per character)
    assert scanned[1] > 0
    assert all(per_character <= 2 * scanned[1] for per_character in scanned.values())


def test_diagnose_reads_a_log_of_many_tables_once(tmp_path):
    """A log of 40 tables: the reader reads it once, and diagnose's hints (NCCL INFO and comment lines)
    are read once for all of them, not once per table."""
    block = (
        "# Collective test starting: all_reduce_perf\n#  Rank  0 Group  0 Pid 1 on n0 device  0 [0] NVIDIA H100\n"
        "#  Rank  1 Group  0 Pid 2 on n0 device  1 [0] NVIDIA H100\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
        + "".join(
            f"{8 << k:12d}  {2 << k:12d}     float     sum      -1  {10 + (8 << k) / 1e4:8.2f}  "
            f"{(8 << k) / (10 + (8 << k) / 1e4) / 1e3:6.2f}  {(8 << k) / (10 + (8 << k) / 1e4) / 1e3:6.2f}"
            "       0\n"
            for k in range(8)
        )
        + "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1\n"
    )
    path = tmp_path / "many.txt"
    path.write_text(block * 40)
    hardware._facts.cache_clear()
    judged = api.diagnose_logs([str(path)], peak="10GB/s")
    assert len(judged) == 40
    assert hardware._facts.cache_info().misses == 1  # the one text every table of the log keeps
