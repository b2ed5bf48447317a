"""ingest/formats.py FORMATS, the one ordered table of the formats `load` reads: every entry is reachable (a sample
of it is read as that format: no earlier entry's test takes it), and a sample read through `load` ends as that entry
says (tables, a system input, or the refusal that names where it goes)."""

import gzip
from pathlib import Path

import pytest

from collperf.ingest import IngestError, OtherInput, formats, load, parse

FIXTURES = Path(__file__).parent / "fixtures"
INPUTS = FIXTURES / "inputs"

# a sample of each entry: a fixture (each with its provenance in the fixture's own header or README)
SAMPLES = {
    "PyTorch profiler (Kineto) trace": FIXTURES / "traces" / "nccl" / "rank0.json.gz",  # read here inflated
    "NCCL Inspector JSON-lines": FIXTURES / "inspector.jsonl",
    "rccl-tests JSON-lines": FIXTURES / "rccl_tests.jsonl",
    "JSON-lines of another tool": None,  # a made-up text below: no tool writes it
    "nccl-tests or collperf JSON": FIXTURES / "nccl_tests.json",
    "optimize_config.py CSV": FIXTURES / "optimize_config.csv",
    "rccl-tests CSV": FIXTURES / "rccl_tests.csv",
    "NCCL Inspector Prometheus": FIXTURES / "inspector_prom.txt",
    "collperf CSV": FIXTURES / "collperf_bench.csv",
    "OSU micro-benchmarks": FIXTURES / "osu_allreduce.txt",
    "Intel MPI Benchmarks": FIXTURES / "imb_allgather.txt",
    "NCCL topology dump": INPUTS / "nccl_topo_ibm_h100x8.xml",
    "NCCL graph dump": INPUTS / "nccl_graph_4gpu_2nic.xml",
    "perftest (ib_write_bw/ib_read_bw) output": INPUTS / "ib_write_bw_loopback_hdr.txt",
    "nvbandwidth output": INPUTS / "nvbandwidth_a6000x6_read_ce.txt",
    "p2pBandwidthLatencyTest output": INPUTS / "p2p_bandwidth_6gpu_p2p_slow.txt",
    "nvidia-smi topo -m": INPUTS / "nvsmi_topo_2x5090.txt",
    "nccl-tests text": FIXTURES / "current_allreduce.txt",
    "NCCL debug log": INPUTS / "nccl_debug_ib_4nic.log",
}
OTHER_JSON_LINES = '{"step": 1, "loss": 2.5}\n{"step": 2, "loss": 2.4}\n'
REFUSED = {"PyTorch profiler (Kineto) trace": "collperf trace", "JSON-lines of another tool": "neither NCCL Inspector"}
BY_NAME = {f.name: f for f in formats.FORMATS}


def _text(name: str) -> str:
    path = SAMPLES[name]
    if path is None:
        return OTHER_JSON_LINES
    data = path.read_bytes()
    return gzip.decompress(data).decode() if path.suffix == ".gz" else data.decode()


def test_every_format_has_one_name_and_a_sample():
    assert len(BY_NAME) == len(formats.FORMATS)
    assert set(SAMPLES) == set(BY_NAME)


@pytest.mark.parametrize("name", list(SAMPLES))
def test_every_format_is_reached_by_its_sample(name):
    assert formats.find(formats.Text.of(_text(name), name)) is BY_NAME[name]


@pytest.mark.parametrize("name", list(SAMPLES))
def test_a_sample_is_read_as_its_format_says(name):
    fmt, text = BY_NAME[name], _text(name)
    if name in REFUSED:
        with pytest.raises(IngestError, match=REFUSED[name]) as info:
            parse(text, "sample")
        assert not isinstance(info.value, OtherInput)
    elif fmt.describe is not None:  # a system input: its value travels in OtherInput, to diagnose and report
        with pytest.raises(OtherInput) as info:
            load(SAMPLES[name])
        assert info.value.value is not None and info.value.what == fmt.describe(info.value.value)
        assert str(SAMPLES[name]) in str(info.value)
    else:
        tables = load(SAMPLES[name])
        assert tables and all(t.rows for t in tables)


def test_no_format_takes_a_text_that_is_none_of_them():
    t = formats.Text.of("hello\nthis is a shopping list, not a benchmark\n", "notes.txt")
    assert formats.find(t) is None
    with pytest.raises(IngestError, match="notes.txt: not a log collperf can read"):
        formats.read(t)


def test_the_formats_share_one_detection_of_the_link_tests(monkeypatch):
    """The three link-test entries ask `link_tests.detect` once between them (Text.once), not once each."""
    calls = []
    real = formats.link_tests.detect
    monkeypatch.setattr(formats.link_tests, "detect", lambda text: calls.append(1) or real(text))
    t = formats.Text.of(_text("nvidia-smi topo -m"), "topo.txt")
    assert formats.find(t) is BY_NAME["nvidia-smi topo -m"]
    assert len(calls) == 1


def test_a_nccl_tests_log_that_dies_before_its_table_is_read_as_its_debug_log():
    """nccl-tests' test holds (its nThread line) but no table follows: the NCCL INFO lines are what the run says."""
    debug = _text("NCCL debug log")
    head = "# nThread 1 nGpus 1 minBytes 8 maxBytes 128M step: 2(factor) warmup iters: 5 iters: 20\n"
    t = formats.Text.of(head + debug, "died.log")
    assert formats.find(t) is BY_NAME["nccl-tests text"]
    with pytest.raises(OtherInput) as info:
        parse(head + debug, "died.log")
    assert "debug log" in info.value.what


def test_a_nccl_tests_log_that_prints_the_gpu_matrix_above_its_table_is_read_as_nccl_tests():
    """Job scripts run `nvidia-smi topo -m` before the benchmark: the log is the benchmark's, its table kept."""
    log = _text("nvidia-smi topo -m") + "\n" + _text("nccl-tests text")
    alone = parse(_text("nccl-tests text"), "job.log")
    tables = parse(log, "job.log")

    def measured(ts):  # the rows as measured (their line numbers move down by the matrix's lines)
        return [[(r.size, r.placement, r.time_s, r.busbw_GBps) for r in t.rows] for t in ts]

    assert measured(tables) == measured(alone) and tables[0].collective == "allreduce"
    with pytest.raises(OtherInput):  # the matrix alone is still the system input
        parse(_text("nvidia-smi topo -m"), "topo.txt")
