"""Readers that hold little: an NCCL Inspector dump is streamed (its text never read whole) into flat arrays,
and nccl-tests -J text is decoded once (its lines are numbered only when a result is bad)."""

import json
from pathlib import Path

import pytest

from collperf import ingest
from collperf.ingest import others


def _record(k: int, coll: str = "AllReduce") -> str:
    return json.dumps(
        {
            "header": {"id": "c0", "rank": k % 4, "n_ranks": 4, "nnodes": 1},
            "coll_perf": {
                "coll": coll,
                "coll_sn": k,
                "coll_msg_size_bytes": 1000 + 10 * (k % 3),
                "coll_exec_time_us": 10.0 + k,
                "coll_busbw_gbs": None,
            },
        }
    )


def _summary(tables):
    return [
        (t.source, t.collective, t.ranks, [(r.size, r.time_s, r.line) for r in t.rows], t.header["calls"], t.skipped)
        for t in tables
    ]


def test_an_inspector_dump_is_streamed_and_reads_as_its_text_does(tmp_path, monkeypatch):
    lines = [_record(k) for k in range(5)] + ["", "{broken", _record(5, "Broadcast")]
    path = tmp_path / "dump.jsonl"
    path.write_text("\n".join(lines) + "\n")
    want = ingest.parse(path.read_text(), str(path))

    def refuse(self, *a, **k):
        raise AssertionError("the dump was read whole")

    monkeypatch.setattr(Path, "read_text", refuse)
    got = ingest.load(path)
    assert _summary(got) == _summary(want)
    allreduce = next(t for t in got if t.collective == "allreduce")
    # one bucket (sizes 1000..1020): median_low of the sizes 1000, 1010, 1020, 1000, 1010 and median time 12 us
    assert [(r.size, r.time_s) for r in allreduce.rows] == [(1010, pytest.approx(12e-6))]
    assert allreduce.header["buckets"][1010] == {
        "calls": 5,
        "min_time_s": pytest.approx(10e-6),
        "max_time_s": pytest.approx(14e-6),
    }
    assert any("line 7: broken JSON" in s for s in allreduce.skipped)


def test_a_single_inspector_line_is_not_streamed(tmp_path):
    path = tmp_path / "one.jsonl"
    path.write_text(_record(0) + "\n")
    with pytest.raises(ingest.IngestError, match="'results' list"):  # as parse(text) says of it
        ingest.load(path)


def _nccl_json(sizes) -> str:
    def measure(size):
        return {"time": 20 + size / 2e3, "alg_bw": size / (20 + size / 2e3) / 1e3, "bus_bw": None, "nwrong": 0}

    return json.dumps(
        {
            "version": "2.17.6",
            "args": ["./build/all_reduce_perf", "-J", "x.json"],
            "results": [
                {
                    "size": s,
                    "count": s // 4 if isinstance(s, int) else 1,
                    "type": "float",
                    "redop": "sum",
                    "root": -1,
                    "out_of_place": measure(s if isinstance(s, int) else 8),
                    "in_place": None,
                }
                for s in sizes
            ],
        },
        indent=1,
    )


def test_nccl_tests_json_is_decoded_once_unless_a_result_is_bad(monkeypatch):
    calls = []
    real = others.result_lines
    monkeypatch.setattr(others, "result_lines", lambda text: calls.append(1) or real(text))
    assert len(ingest.parse(_nccl_json([8, 16, 32]), "good")[0].rows) == 3
    assert calls == []  # a good file: json.loads only
    text = "\n\n" + _nccl_json([8, "big", 32])
    table = ingest.parse(text, "bad")[0]
    assert calls == [1] and len(table.rows) == 2
    # indent=1, after two blank lines: '{' on line 3, '"args": [' + three args + ']' on 5-9, '"results": [' on
    # 10; a result is 14 lines ('{', five fields, out_of_place's 6 lines, in_place, '}'): result 1 starts on 25
    assert table.skipped == ["line 25: $.results[1].size: expected a number, got the string 'big'"]
    assert text.splitlines()[24].strip() == "{"
