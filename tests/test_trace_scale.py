"""The trace reader at scale: the C parser's path (trace/fast.py) reads every fixture and any hypothesis-made
trace exactly as the streaming reader does (the same RankTrace, or the same error); rank files read by a
process pool, or a Dask cluster, give the same report as one process; the memory estimate refuses what
cannot fit; --jobs and --engine are checked; the benchmark measures a whole command's tree, not its own memory."""

from __future__ import annotations

import gzip
import importlib.util
import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collperf import api
from collperf.errors import UsageError
from collperf.spec import TraceSpec
from collperf.spec.trace import engine_address
from collperf.trace import fanout, fast, read_rank, stream
from collperf.trace.fanout import MemoryEstimate

msgspec = pytest.importorskip("msgspec")
FIXTURES = Path(__file__).parent / "fixtures"
KINETO = sorted(p for p in (FIXTURES / "traces").rglob("*.json*") if "ras" not in p.parts and "fr_json" not in p.parts)
MALFORMED = sorted(p for p in (FIXTURES / "malformed_traces").glob("*_trace_*.json*"))
_bench = importlib.util.spec_from_file_location("trace_reader", FIXTURES.parents[1] / "benchmarks" / "trace_reader.py")
bench = importlib.util.module_from_spec(_bench)
_bench.loader.exec_module(bench)


def _outcome(path, c_parser: bool):
    """The RankTrace's fields as comparable values, or the error's message."""
    try:
        t = read_rank(path, c_parser=c_parser)
    except UsageError as e:
        return "error", str(e)
    arrays = (t.compute, t.host_ops)
    return (
        "trace",
        t.rank,
        t.world_size,
        t.backend,
        t.nccl_version,
        t.gpu,
        t.host,
        t.groups,
        t.calls,
        t.steps,
        t.notes,
        [a.shape for a in arrays],
        [a.tobytes() for a in arrays],
    )


def test_fixtures_are_read_alike():
    assert len(KINETO) >= 15
    for path in KINETO + MALFORMED:
        assert _outcome(path, True) == _outcome(path, False), path


def test_a_real_trace_is_read_by_the_c_parser_not_the_fallback(monkeypatch):
    """The public A100 trace: every run of events kept by the fast path, none read again one at a time."""
    kept, refused = [], []
    real = fast.add_batch
    monkeypatch.setattr(
        fast, "add_batch", lambda c, ev: (kept if real(c, ev) else refused).append(len(ev)) or not refused
    )
    monkeypatch.setattr(stream, "_CHUNK", 1 << 16)
    t = read_rank(FIXTURES / "traces" / "public" / "hta_a100_2gpu_rank0.json.gz")
    assert refused == [] and len(kept) > 20 and len(t.calls) == 21


def test_without_msgspec_the_output_says_so(monkeypatch):
    monkeypatch.setattr(fast, "msgspec", None)
    t = read_rank(FIXTURES / "traces" / "nccl" / "rank0.json.gz")
    assert fast.WHY_SLOW in t.notes


# --- hypothesis-made traces ------------------------------------------------------------------------------------

_odd = st.sampled_from([None, "12", True, -1.0, float("nan"), float("inf"), 2**70, [1], {"a": 1}, "x\u00e9"])
_time = st.one_of(st.floats(0, 1e7, allow_nan=False), st.integers(0, 10**7))
_rank_text = st.sampled_from(["[0, 1]", "[]", "[0, x]", "[7]"])
_args = st.fixed_dictionaries(
    {},
    optional={
        "correlation": st.one_of(st.integers(-5, 40), _odd),
        "External id": st.one_of(st.integers(0, 9), _odd),
        "Collective name": st.sampled_from(["allreduce", "allgather", "barrier"]),
        "In msg nelems": st.one_of(st.integers(0, 10**6), _odd),
        "Out msg nelems": st.integers(0, 10**6),
        "Group size": st.one_of(st.integers(1, 4), _odd),
        "dtype": st.sampled_from(["Float", "BFloat16", "c10::Half"]),
        "Process Group Name": st.sampled_from(["0", "1", 0]),
        "Process Group Ranks": _rank_text,
        "Seq": st.one_of(st.integers(0, 9), _odd),
        "Input Dims": st.one_of(st.just([[4, 8]]), _odd),
        "Input type": st.one_of(st.just(["float"]), _odd),
        "grid": st.just([1, 1, 1]),
        "note": st.text(max_size=6),
    },
)
_names = st.sampled_from(
    [
        "aten::mm",
        "cudaLaunchKernel",
        "sm80_gemm",
        "ProfilerStep#1",
        "gloo:all_reduce",
        "c10d::allreduce_",
        "record_param_comms",
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)",
        "ncclKernel_AllGather_RING_LL_Sum_float(x)",
        "weird }, {",
        "Kernel",
    ]
)
_cats = st.sampled_from(
    [
        "cpu_op",
        "cuda_runtime",
        "kernel",
        "Kernel",
        "user_annotation",
        "gpu_user_annotation",
        "python_function",
        "cuda_driver",
    ]
)
_event = st.fixed_dictionaries(
    {"ph": st.sampled_from(["X", "X", "X", "X", "i", "f"]), "name": _names, "ts": _time, "dur": _time, "cat": _cats},
    optional={
        "tid": st.one_of(st.integers(0, 9), st.just("stream 7"), _odd),
        "pid": st.integers(0, 3),
        "args": st.one_of(_args, st.none(), _odd),
    },
)
_mutation = st.tuples(st.sampled_from(["name", "ts", "dur", "cat", "ph", "args"]), _odd)


def _element(draw_event, mutation):
    if mutation is None:
        return draw_event
    key, value = mutation
    return {**draw_event, key: value}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    events=st.lists(st.tuples(_event, st.one_of(st.none(), st.none(), st.none(), _mutation)), max_size=40),
    extra=st.lists(st.sampled_from([1, "x", [], None]), max_size=2),
    chunk=st.integers(16, 2048),
    indent=st.sampled_from([None, 1]),
)
def test_hypothesis_traces_are_read_alike(tmp_path_factory, events, extra, chunk, indent):
    """Any mix of what torch.profiler writes and what it does not (missing or mistyped fields, NaN, huge
    numbers, non-objects), cut into windows of any size: the same RankTrace or the same error either way."""
    elements = [_element(e, m) for e, m in events] + extra
    doc = {
        "schemaVersion": 1,
        "deviceProperties": [{"name": "NVIDIA A100-SXM4-80GB"}],
        "distributedInfo": {
            "backend": "nccl",
            "rank": 0,
            "world_size": 2,
            "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "ranks": [0, 1]}],
        },
        "traceEvents": elements,
        "traceName": "t",
    }
    path = tmp_path_factory.mktemp("h") / "rank0.json"
    path.write_text(json.dumps(doc, indent=indent))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(stream, "_CHUNK", chunk)
        assert _outcome(path, True) == _outcome(path, False)


@settings(max_examples=60, deadline=None)
@given(
    events=st.lists(
        st.dictionaries(
            st.text(max_size=6),
            st.recursive(
                st.one_of(
                    st.integers(-(10**20), 10**20),
                    st.floats(allow_nan=False, allow_infinity=False),
                    st.text(max_size=8),
                    st.sampled_from(["}, {", "},", "]", "\\"]),
                ),
                lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                max_leaves=8,
            ),
            max_size=4,
        ),
        max_size=20,
    ),
    chunk=st.integers(1, 256),
    indent=st.sampled_from([None, 0, 2]),
)
def test_runs_are_cut_between_whole_events(tmp_path_factory, events, chunk, indent):
    """The runs handed to the C decoder are whole events in order, however braces fall in strings and values:
    decoded as plain JSON, their concatenation is json.loads's traceEvents."""
    path = tmp_path_factory.mktemp("r") / "t.json"
    path.write_text(json.dumps({"a": [1], "traceEvents": events, "z": "}"}, indent=indent))
    seen: list = []

    def decode(text):  # a cut inside a value is refused by the decoder: that stretch is read one at a time
        try:
            return msgspec.json.decode(text)
        except msgspec.DecodeError:
            return None

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(stream, "_CHUNK", chunk)
        top = stream.scan(path, seen.append, None, (decode, lambda run: seen.extend(run) or True))
    assert seen == events and top["traceEvents"] == len(events) and top["z"] == "}"


def test_what_msgspec_decodes_otherwise_goes_the_slow_way():
    """json's readings that msgspec refuses or reads otherwise: the run is refused (None), never misread."""
    for text in (
        '[{"ts": NaN}]',
        '[{"name": "\\ud800"}]',
        '[{"ts": 1e400}]',
        '[{"tid": 1.5}]',
        '[1, {"ph": "X"}]',
        '[{"args": [1]}]',
        "[" + "[" * 3000 + "]" * 3000 + "]",
        '[{"ts": "1"}]',
    ):
        assert fast.decode(text) is None, text
    assert math.isclose(fast.decode('[{"ts": 12}]')[0].ts, 12.0)


# --- rank files side by side -----------------------------------------------------------------------------------


def _json(path, **options) -> str:
    return json.dumps(api.trace(str(path), **options).to_json(), sort_keys=True)


@pytest.mark.multiprocess
@pytest.mark.parametrize("job", ["nccl", "gloo", "flight/network/kineto"])
def test_a_pool_gives_the_report_of_one_process(job):
    folder = FIXTURES / "traces" / job
    assert _json(folder, jobs=2) == _json(folder, jobs=1)


@pytest.mark.multiprocess
def test_progress_counts_files_and_bytes():
    seen = []
    api.trace(str(FIXTURES / "traces" / "nccl"), jobs=2, on_progress=seen.append)
    sizes = sorted(p.stat().st_size for p in (FIXTURES / "traces" / "nccl").iterdir())
    assert [p.files_done for p in seen] == [1, 2, 3, 4] and seen[-1].bytes_done == seen[-1].bytes == sum(sizes)


@pytest.mark.multiprocess
def test_an_error_in_one_rank_file_stops_the_pool_and_names_it(tmp_path):
    for r in range(3):
        (tmp_path / f"rank{r}.json.gz").write_bytes((FIXTURES / "traces" / "nccl" / f"rank{r}.json.gz").read_bytes())
    (tmp_path / "rank3.json").write_text('{"traceEvents": [{"ph": "X"}, ')
    with pytest.raises(UsageError, match="rank3.json: not a Kineto trace"):
        api.trace(str(tmp_path), jobs=2)


def test_the_memory_estimate_refuses_or_notes():
    fits = MemoryEstimate(2, 100.0, 300.0, 10_000.0)
    assert fits.total_MB == 500 and fits.check() == []
    assert "close to the limit" in MemoryEstimate(2, 100.0, 300.0, 600.0).check()[0]
    with pytest.raises(UsageError, match="give fewer --jobs, or --engine dask"):
        MemoryEstimate(8, 1000.0, 4000.0, 6000.0).check()
    # by hand: 80 MB a worker and 0.15 byte kept per byte read; the largest file per worker, all in the parent
    e = fanout.estimate([100 << 20, 10 << 20], 2)
    assert e.worker_MB == pytest.approx(80 + 15) and e.parent_MB == pytest.approx(80 + 0.15 * 110)


def test_a_gzip_file_is_counted_by_its_uncompressed_size(tmp_path):
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(b"x" * 100_000))
    assert fanout.trace_bytes(path) == 100_000


@pytest.mark.parametrize(
    "options, message",
    [
        ({"jobs": 0}, "--jobs 0"),
        ({"jobs": True}, "--jobs True"),
        ({"engine": "ray://x"}, "expected 'local'"),
        ({"engine": "dask://"}, "expected 'local'"),
    ],
)
def test_jobs_and_engine_are_checked(options, message):
    with pytest.raises(UsageError, match=message):
        TraceSpec(paths=["x.json"], **options)


def test_engine_addresses():
    assert engine_address(None) == ("local", None)
    assert engine_address("dask://head:8786") == ("dask", "tcp://head:8786")
    assert engine_address("tcp://10.0.0.1:8786") == ("dask", "tcp://10.0.0.1:8786")


@pytest.mark.slow
@pytest.mark.multiprocess
def test_a_local_dask_cluster_gives_the_report_of_one_process(tmp_path):
    pytest.importorskip("distributed")
    files = bench.write_job(tmp_path, ranks=8, megabytes=0.3)
    assert len(files) == 8
    assert _json(tmp_path, engine="local-dask", jobs=2) == _json(tmp_path, jobs=1)


# --- the benchmark's measure of a whole command (its comparison with HTA) --------------------------------------


def test_a_command_is_measured_with_its_children_not_the_benchmark(tmp_path):
    """The grandchild's CPU counts (it is reaped), and the peak is the command's 150 MiB even while this process
    holds 300 MiB: exec keeps the forking process's high-water mark, which the launcher keeps small."""
    held = b"x" * (300 << 20)
    child = (
        "import time; x = b'x' * (150 << 20); t = time.process_time()\n"
        "while time.process_time() - t < 0.3: pass\ntime.sleep(0.3)"
    )
    parent = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {child!r}], check=True)"
    r = bench.measure_command([bench.sys.executable, "-c", parent], tmp_path / "out", dict(bench.os.environ))
    assert len(held) == 300 << 20
    assert r["cpu_s"] >= 0.3
    assert r["wall_s"] >= 0.6
    assert 150 <= r["peak_MB"] < 250
    assert r["tree_rss_MB"] >= 150 and r["tree_pss_MB"] >= 150  # sampled while the child sleeps


def test_a_failing_or_late_command_stops_the_benchmark_with_why(tmp_path):
    env = dict(bench.os.environ)
    with pytest.raises(SystemExit, match=r"exited 3: \['boom'\]"):
        bench.measure_command(
            [bench.sys.executable, "-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)"], tmp_path / "a", env
        )
    with pytest.raises(SystemExit, match="ran past 1 s: stopped"):
        bench.measure_command(["sleep", "30"], tmp_path / "b", env, timeout_s=1)
