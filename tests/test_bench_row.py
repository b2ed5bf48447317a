"""A bench row is one typed Row: what the ranks send (pickled), what the writers write, what validation reads."""

import json
import pickle

import pytest
from hypothesis import given, settings, strategies as st

from collperf.lab.results import Results, to_csv, to_json, to_text
from collperf.ingest.row import Row, Timing

CONFIG = {
    "sizes": [1024],
    "step": "2(factor)",
    "factor": 2,
    "warmup": 1,
    "iters": 2,
    "check": 1,
    "dtype": "float32",
    "op": "sum",
    "algorithms": ["ring"],
    "slice_bytes": 1 << 20,
}


def _timing(t_us=200.0, wrong=0):
    """1024 B in t_us: algbw 1024 / t_us / 1e3 GB/s; busbw 1.5x that (allreduce on 4 ranks: 2(p-1)/p)."""
    return Timing(
        time_us=t_us,
        min_us=t_us - 10,
        p50_us=t_us - 5,
        algbw_GBps=1024 / t_us / 1e3,
        busbw_GBps=1.5 * (1024 / t_us / 1e3),
        wrong=wrong,
    )


def test_to_json_is_the_nccl_tests_result_entry_with_our_fields():
    row = Row(
        algorithm="ring",
        size=1024,
        count=256,
        type="float",
        redop="sum",
        root=-1,
        out_of_place=_timing(200.0),
        predicted_us=150.0,
    )
    assert row.to_json() == {
        "size": 1024,
        "count": 256,
        "type": "float",
        "redop": "sum",
        "root": -1,
        "algorithm": "ring",
        "predicted_us": 150.0,
        "out_of_place": {
            "time": 200.0,
            "alg_bw": 0.00512,
            "bus_bw": 1.5 * 0.00512,
            "nwrong": 0,
            "min_us": 190.0,
            "p50_us": 195.0,
        },
        "in_place": None,
    }
    # the key order of nccl-tests -J (size first, placements last), auto only where auto chose
    assert list(row.to_json()) == [
        "size",
        "count",
        "type",
        "redop",
        "root",
        "algorithm",
        "predicted_us",
        "out_of_place",
        "in_place",
    ]
    chose = Row(algorithm="auto", size=1024, auto={"algorithm": "ring", "segments": 2})
    assert list(chose.to_json())[7] == "auto"


def test_a_row_crosses_the_process_boundary_and_stays_frozen():
    row = Row(algorithm="ring", size=4096, count=1024, out_of_place=_timing(), in_place=_timing(wrong=None))
    assert pickle.loads(pickle.dumps(row)) == row
    predicted = row.with_prediction(42.0)
    assert predicted.predicted_us == 42.0 and row.predicted_us is None
    with pytest.raises(AttributeError):
        row.size = 1


def test_rows_read_as_the_dicts_they_were():
    row = Row(algorithm="ring", size=4096, out_of_place=_timing(100.0))
    assert row["size"] == 4096 and row["out_of_place"]["busbw"] == row.out_of_place.busbw_GBps
    assert row["in_place"] is None and row.get("auto") is None and row.get("predicted_us", 7) == 7
    with pytest.raises(KeyError):
        row["busbw"]
    with pytest.raises(ValueError, match="unknown keys"):
        Row.of({"algorithm": "ring", "size": 1, "sizes": 2})


def test_correct_and_ran_as():
    assert Row(algorithm="ring", size=1, out_of_place=_timing()).correct()
    assert not Row(algorithm="ring", size=1, out_of_place=_timing(wrong=3)).correct()
    assert not Row(algorithm="ring", size=1).correct()  # out-of-place never ran
    assert Row(algorithm="ring", size=1).ran_as() == ("ring", None)
    assert Row(algorithm="auto", size=1, auto={"algorithm": "tree", "segments": 4}).ran_as() == ("tree", 4)


timings = st.builds(
    lambda t, w: {"time_us": t, "min_us": t / 2, "p50_us": t * 0.75, "algbw": 1e3 / t, "busbw": 2e3 / t, "wrong": w},
    st.floats(0.5, 1e6),
    st.one_of(st.none(), st.integers(0, 9)),
)


@settings(deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([1024, 2048]),
            timings,
            st.one_of(st.none(), timings),
            st.one_of(st.none(), st.floats(1.0, 1e6)),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_dict_rows_and_typed_rows_write_the_same_files(specs):
    """Results take the rows' old dicts too (Row.of): every writer's output is the same either way."""
    dicts = [
        {
            "algorithm": "ring",
            "size": s,
            "count": s // 4,
            "type": "float",
            "redop": "sum",
            "root": -1,
            "out_of_place": oop,
            "in_place": ip,
            "predicted_us": pred,
        }
        for s, oop, ip, pred in specs
    ]
    typed = [
        Row(
            algorithm="ring",
            size=s,
            count=s // 4,
            type="float",
            redop="sum",
            root=-1,
            out_of_place=Timing.of(oop),
            in_place=Timing.of(ip),
            predicted_us=pred,
        )
        for s, oop, ip, pred in specs
    ]
    a, b = Results("allreduce", 4, "gloo", CONFIG, dicts), Results("allreduce", 4, "gloo", CONFIG, typed)
    b.started = a.started
    assert json.dumps(to_json(a)) == json.dumps(to_json(b))
    assert to_csv(a) == to_csv(b) and to_text(a) == to_text(b)
    for d, out in zip(dicts, to_json(a)["results"]):  # the JSON's placements, key by key from the dict
        assert out["out_of_place"] == {
            "time": d["out_of_place"]["time_us"],
            "alg_bw": d["out_of_place"]["algbw"],
            "bus_bw": d["out_of_place"]["busbw"],
            "nwrong": d["out_of_place"]["wrong"],
            "min_us": d["out_of_place"]["min_us"],
            "p50_us": d["out_of_place"]["p50_us"],
        }


def test_results_own_their_json():
    res = Results("allreduce", 4, "gloo", CONFIG, [Row(algorithm="ring", size=1024, out_of_place=_timing())])
    assert res.to_json() == to_json(res) and res.to_json()["results"] == [res.rows[0].to_json()]


_FINITE = st.floats(min_value=0.001, max_value=1e9, allow_nan=False, allow_infinity=False)
_TIMINGS = st.builds(
    Timing,
    time_us=_FINITE,
    min_us=st.none() | _FINITE,
    p50_us=st.none() | _FINITE,
    algbw_GBps=st.none() | _FINITE,
    busbw_GBps=st.none() | _FINITE,
    wrong=st.none() | st.integers(0, 1 << 40),
)
_ROWS = st.builds(
    Row,
    algorithm=st.sampled_from(["ring", "tree", "auto", "builtin"]),
    size=st.integers(0, 1 << 40),
    count=st.none() | st.integers(0, 1 << 40),
    type=st.sampled_from(["float", "int8", "bfloat16"]),
    redop=st.sampled_from(["sum", "max", "none"]),
    root=st.none() | st.integers(-1, 1023),
    out_of_place=st.none() | _TIMINGS,
    in_place=st.none() | _TIMINGS,
    auto=st.none()
    | st.fixed_dictionaries({"algorithm": st.sampled_from(["ring", "tree"]), "segments": st.integers(1, 64)}),
    predicted_us=st.none() | _FINITE,
)


@settings(deadline=None)
@given(_ROWS)
def test_from_json_is_the_inverse_of_to_json(row):
    assert Row.from_json(row.to_json()) == row
    assert Row.from_json(json.loads(json.dumps(row.to_json()))) == row  # through the file, too


def test_from_json_reads_the_nccl_tests_writers_shape():
    """nccl-tests -J: root as the text column's "%6i" string, #wrong a double (-c) or null, N/A bandwidths,
    only cpu_time, no algorithm, and per-iteration keys the row leaves to the reader."""
    entry = {
        "size": 1024,
        "count": 256,
        "type": "float",
        "redop": "sum",
        "root": "    -1",
        "out_of_place": {"time": 12.5, "alg_bw": 0.08192, "bus_bw": "N/A", "nwrong": 0.0},
        "in_place": {"cpu_time": 13.0, "alg_bw": None, "bus_bw": None, "nwrong": None},
        "out_of_place_per_iter": {"min_us": 12.0},
        "actual_iterations": 20,
    }
    row = Row.from_json(entry)
    assert (row.algorithm, row.root, row.count) == ("", -1, 256)
    assert row.out_of_place == Timing(time_us=12.5, algbw_GBps=0.08192, wrong=0)
    assert row.in_place == Timing(time_us=13.0)
    assert Row.from_json({"size": 8}).count is None and Row.from_json({"size": 8}).root is None


def test_placements_are_the_ingest_tables_rows():
    """One record per placement that ran, out-of-place first; 200 us is 2e-4 s."""
    row = Row(
        algorithm="ring",
        size=1024,
        count=256,
        type="float",
        redop="sum",
        root=-1,
        out_of_place=_timing(200.0),
        in_place=_timing(400.0, wrong=None),
    )
    out, inp = row.placements(line=7)
    assert (out["placement"], out["wrong"], out["line"]) == ("out-of-place", 0, 7)
    assert (out["time_s"], inp["time_s"]) == (pytest.approx(2e-4), pytest.approx(4e-4))
    assert (inp["placement"], inp["wrong"], inp["dtype"], inp["op"]) == ("in-place", None, "float", "sum")
    assert Row(algorithm="ring", size=1).placements() == []
