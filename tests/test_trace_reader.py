"""The trace reader: streaming JSON, kernel names, element counts in nccl-tests' size convention, interval
arithmetic, and clear errors for what is not a usable trace."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collperf.collectives import COLLECTIVES
from collperf.errors import UsageError
from collperf.trace import kernels as K
from collperf.trace import overlap as O
from collperf.trace import read_rank, read_traces, stream

TRACES = Path(__file__).parent / "fixtures" / "traces"

# --- streaming JSON ------------------------------------------------------------------------------------------

_scalars = st.one_of(
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.booleans(),
    st.none(),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(
    events=st.lists(st.dictionaries(st.text(max_size=8), _values, max_size=5), max_size=12),
    extra=st.dictionaries(st.sampled_from(["distributedInfo", "deviceProperties", "traceName", "x"]), _values),
    chunk=st.integers(1, 64),
    indent=st.sampled_from([None, 0, 2]),
)
def test_stream_sees_what_json_loads_sees(tmp_path_factory, events, extra, chunk, indent):
    """Any document, cut into chunks of any size: the same events in order and the same other keys."""
    doc = {**extra, "traceEvents": events, "after": [1, 2.5, "x"]}
    path = tmp_path_factory.mktemp("s") / "t.json"
    path.write_text(json.dumps(doc, indent=indent))
    seen = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(stream, "_CHUNK", chunk)
        top = stream.scan(path, seen.append)
    assert seen == json.loads(path.read_text())["traceEvents"]
    assert {k: v for k, v in top.items() if k != "traceEvents"} == {
        k: v for k, v in json.loads(path.read_text()).items() if k != "traceEvents"
    }
    assert top["traceEvents"] == len(events)


def test_stream_reads_gzip_like_json():
    path = TRACES / "gloo" / "rank0.json.gz"
    seen = []
    top = stream.scan(path, seen.append)
    whole = json.loads(gzip.open(path).read())
    assert seen == whole["traceEvents"] and top["distributedInfo"] == whole["distributedInfo"]


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"traceEvents": [{"ph": "X"}, {"ph": ', "not valid JSON"),
        ("[1, 2]", "not a Kineto trace"),
        ('{"schemaVersion": 1}', "no traceEvents"),
    ],
)
def test_stream_errors_name_the_file(tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(UsageError, match=message) as e:
        stream.scan(path, lambda ev: None)
    assert "bad.json" in str(e.value)


def test_no_distributed_info_and_no_collectives_are_clear_errors(tmp_path):
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2}]}))
    with pytest.raises(UsageError, match="no distributedInfo"):
        read_rank(plain)
    quiet = tmp_path / "quiet.json"
    quiet.write_text(
        json.dumps(
            {
                "distributedInfo": {"rank": 0, "world_size": 2, "backend": "nccl"},
                "traceEvents": [{"ph": "X", "cat": "kernel", "name": "sgemm", "ts": 1, "dur": 2}],
            }
        )
    )
    with pytest.raises(UsageError, match="no collective found"):
        read_rank(quiet)


def test_paths_directory_glob_and_duplicates(tmp_path):
    assert [t.rank for t in read_traces(str(TRACES / "nccl" / "rank*.json.gz"))] == [0, 1, 2, 3]
    assert [t.rank for t in read_traces(TRACES / "nccl")] == [0, 1, 2, 3]
    with pytest.raises(UsageError, match="matches no file"):
        read_traces(str(tmp_path / "*.json"))
    with pytest.raises(UsageError, match="no such file"):
        read_traces(str(tmp_path / "missing.json"))
    with pytest.raises(UsageError, match="two traces of rank 0"):
        read_traces([TRACES / "nccl" / "rank0.json.gz", TRACES / "nccl" / "rank0.json.gz"])


# --- kernel names ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, parsed",
    [
        (
            "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
            ("allreduce", "ring", "LL", "float"),
        ),
        (
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            ("allreduce", "ring", "LL", "bf16"),
        ),
        (
            "ncclDevKernel_AllReduce_Sum_f32_NVLS_TREE_SIMPLE(ncclDevKernelArgsStorage<4096ul>)",
            ("allreduce", "nvls-tree", "Simple", "f32"),
        ),
        ("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL128(x)", ("reducescatter", "ring", "LL128", "bf16")),
        ("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", ("allgather", "ring", "LL", "")),
        ("ncclKernel_AllGather_TREE_SIMPLE_Sum_int8_t(ncclDevComm*)", ("allgather", "tree", "Simple", "int8")),
        ("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", ("sendrecv", "-", "-", "")),
        ("ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)", (None, "-", "-", "")),
        ("ampere_sgemm_128x64_tn", None),
    ],
)
def test_kernel_names(name, parsed):
    assert K.parse_kernel(name) == parsed


@pytest.mark.parametrize(
    "dtype, size",
    [
        ("BFloat16", 2),
        ("c10::BFloat16", 2),
        ("Float", 4),
        ("float", 4),
        ("long int", 8),
        ("unsigned char", 1),
        ("Half", 2),
        ("Double", 8),
        ("Float8_e4m3fn", 1),
        ("int", 4),
    ],
)
def test_element_bytes(dtype, size):
    assert K.element_bytes(dtype) == size


@settings(max_examples=80, deadline=None)
@given(name=st.sampled_from(sorted(COLLECTIVES)), p=st.integers(2, 16), count=st.integers(0, 10**6))
def test_whole_elements_is_nccl_tests_size(name, p, count):
    """A rank's input and output for nccl-tests' count give back its size column: count x blocks."""
    c = COLLECTIVES[name]
    n_in, n_out = c.elements(count, p)
    assert K.whole_elements(name, n_in, n_out, p) == count * c.count_divisor(p)


def test_whole_elements_by_hand():
    assert K.whole_elements("allgather", 512, 2048, 4) == 2048  # the whole output
    assert K.whole_elements("reducescatter", 2048, 512, 4) == 2048  # the whole input
    assert K.whole_elements("alltoall", 10240, 10240, 4) == 10240  # all a rank sends
    assert K.whole_elements("sendrecv", 0, 7, 2) == 7  # a recv: its output


# --- intervals -----------------------------------------------------------------------------------------------


def test_intervals_by_hand():
    u = O.union([[0, 10], [5, 12], [20, 30], [30, 31]])
    assert u.tolist() == [[0, 12], [20, 31]]
    assert O.overlapped(u, [[8, 25], [-5, 0], [11, 21]]).tolist() == [9, 0, 2]
    assert O.subtract([[0, 100]], [[10, 20], [50, 60]]).tolist() == [[0, 10], [20, 50], [60, 100]]
    assert O.intersect([[0, 10]], [[5, 15]]).tolist() == [[5, 10]]


_spans = st.lists(st.tuples(st.integers(0, 100), st.integers(0, 30)).map(lambda t: [t[0], t[0] + t[1]]), max_size=12)


@settings(max_examples=80, deadline=None)
@given(a=_spans, b=_spans)
def test_interval_identities(a, b):
    """Covered time on a unit grid, and |A| = |A and B| + |A less B|."""
    grid = np.arange(0, 131) + 0.5

    def covered(spans):
        return sum(bool(any(s <= x < e for s, e in spans)) for x in grid)

    assert O.length(a) == covered(a)
    assert O.length(O.intersect(a, b)) + O.length(O.subtract(a, b)) == O.length(a)
    u = O.union(b)
    for span, inside in zip(a, O.overlapped(u, a) if a else []):
        assert inside == covered([span]) - covered(O.subtract([span], b).tolist())
