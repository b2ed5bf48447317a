"""Interoperability: NCCL tuner rules out, MSCCL XML out and in, NCCL Inspector, nccl-tests -J
with per-iteration timing, rccl-tests JSONL/CSV and optimize_config.py's CSV in."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from collperf import api, ingest
from collperf.errors import UsageError
from collperf.export import msccl, msccl_import, nccl_tuner
from collperf.fit import fit
from collperf.ingest.table import Row, Table
from collperf.model.algorithms import REGISTRY, get_algorithm
from collperf.schedule.arrays import as_tuples
from collperf.model.two_level.build import DEFAULT_PHASES, build, build_hierarchical
from collperf.schedule.verify import verify
from collperf.spec import NetworkSpec, SimulateSpec
from collperf.cli import app
from collperf.model.auto.select import runnable_algorithms

FIXTURES = Path(__file__).parent / "fixtures"


# --- NCCL tuner rules -------------------------------------------------------------------------------


def _table(name: str, latency_us: float, busbw_GBps: float, p: int = 8) -> Table:
    """An exact alpha-beta allreduce curve from 8 B to 1 GiB."""
    t = Table(name, "allreduce", p)
    for e in range(3, 31):
        size = 2**e
        t.rows.append(Row(size, latency_us * 1e-6 + size * 2 * (p - 1) / p / (busbw_GBps * 1e9)))
    return t


CURVES = [
    ("allreduce_tree_ll.txt", 5, 10),
    ("allreduce_ring_ll128.txt", 10, 60),
    ("allreduce_ring_simple.txt", 25, 100),
]


def _rules(with_default: bool = True):
    tables = [_table(*c) for c in CURVES] + ([_table("allreduce_default.txt", 12, 80)] if with_default else [])
    options = nccl_tuner.choices(tables, [fit(t) for t in tables])
    return options, nccl_tuner.build(options, nodes=1, ranks=8, channels=4)


def test_tuner_boundaries_are_the_crossings_to_the_byte():
    _, rules = _rules()
    # tree/ll = ring/ll128 where 5 us + s 1.75 / 10 GB/s = 10 us + s 1.75 / 60 GB/s: s = 5e3 / (1.75 (1/10 - 1/60))
    # = 34285.7 B; ring/ll128 = ring/simple at s = 15e3 / (1.75 (1/60 - 1/100)) = 1285714.3 B
    got = [(r.min_bytes, r.max_bytes, r.choice.label) for r in rules.rules]
    assert got == [(0, 34285, "tree/ll"), (34286, 1285714, "ring/ll128"), (1285715, -1, "ring/simple")]


def test_tuner_csv_picks_the_fastest_fit_under_the_plugin_rules():
    options, rules = _rules()
    text = rules.text()
    parsed = nccl_tuner.parse_rules(text)
    assert all(r["channels"] > 0 for r in parsed)  # an explicit channel count on every rule
    forced = [o for o in options if o.algorithm != "default"]
    for size in np.unique(np.geomspace(1, 2**34, 2000).astype(int)).tolist() + [34285, 34286, 1285714, 1285715]:
        picked = nccl_tuner.match(parsed, "allreduce", size, nodes=1, ranks=8)
        times = {o.label: o.time_s(size) for o in forced}
        assert f"{picked['algorithm']}/{picked['protocol']}" == min(times, key=times.get), size
    # the rules are for 1 node x 8 ranks: another shape matches none
    assert nccl_tuner.match(parsed, "allreduce", 1 << 20, nodes=2, ranks=16) is None
    assert "time saved vs NCCL default" in text and "unknown" not in text


def test_plugin_matcher_first_match_inclusive_wildcards():
    rules = nccl_tuner.parse_rules("# c\nallreduce,0,65536,tree,simple,2,1,8\nallreduce,65536,-1,ring,simple,4,-1,-1\n")
    assert nccl_tuner.match(rules, "allreduce", 65536, 1, 8)["algorithm"] == "tree"  # inclusive, first wins
    assert nccl_tuner.match(rules, "allreduce", 65536, 2, 16)["algorithm"] == "ring"  # -1 = any
    assert nccl_tuner.match(rules, "allgather", 10, 1, 8) is None
    with pytest.raises(UsageError, match="line 2"):
        nccl_tuner.parse_rules("# c\nallreduce,0,x,tree,simple,2,1,8\n")


def test_tuner_without_channels_or_labels_is_a_usage_error():
    t = _table("run.txt", 5, 10)
    with pytest.raises(UsageError, match="NCCL_ALGO"):
        nccl_tuner.choices([t], [fit(t)])
    t = _table("allreduce_ring_simple.txt", 5, 10)
    with pytest.raises(UsageError, match="--channels"):
        nccl_tuner.build(nccl_tuner.choices([t], [fit(t)]))


def test_optimize_config_csv_feeds_the_tuner(tmp_path):
    tables = ingest.load(FIXTURES / "optimize_config.csv")
    assert {(t.header["nccl_algo"], t.header["nccl_proto"], t.header["nccl_channels"]) for t in tables} == {
        ("tree", "ll", 8),
        ("ring", "simple", 8),
    }
    assert all(t.ranks == 8 and t.nodes == 1 and len(t.rows) == 10 for t in tables)
    out = tmp_path / "rules.csv"
    rules = api.export_nccl_tuner([FIXTURES / "optimize_config.csv"], out)
    # tree/ll (5 us, 10 GB/s) = ring/simple (25 us, 100 GB/s) at s = 20e3 / (1.75 x 0.09) = 126984.1 B
    assert [(r.min_bytes, r.max_bytes) for r in rules.rules] == [(0, 126984), (126985, -1)]
    assert out.read_text().count("\nallreduce,") == 2


def test_sparse_optimize_config_csv_gives_rules_per_shape_and_channel_count():
    # tests/fixtures/optimize_config_sparse.csv, in NCCL's sample shape: 2-3 sizes per configuration, joined point
    # to point (export.nccl_tuner.PointsCurve); two shapes (1x8 with numPipeOps 1 / regBuff 0, and 2x16); ring/simple
    # measured on 4 and on 16 channels. 1x8: tree/ll (10 -> 42 us over 1K..64K) meets ring/simple ch4 (20 -> 30 us)
    # where 10 + 32 x = 20 + 10 x, x = (s - 1024) / 64512 = 10/22: s = 30347.6; ch4 (30 -> 1000 us over 64K..16M)
    # meets ch16 (35 -> 500 us) where 30 + 970 y = 35 + 465 y, y = (s - 65536) / 16711680 = 5/505: s = 230998.2.
    # 2x16: ring/ll128 (30 -> 100 us over 1K..1M) meets tree/simple (40 -> 82 us) where 30 + 70 z = 40 + 42 z,
    # z = (s - 1024) / 1047552 = 10/28: s = 375149.7.
    rules = api.export_nccl_tuner([FIXTURES / "optimize_config_sparse.csv"])
    got = [(r.min_bytes, r.max_bytes, r.choice.label, r.choice.channels, r.dims) for r in rules.rules]
    assert got == [
        (0, 30347, "tree/ll", 2, (1, 8, 1, 0)),
        (30348, 230998, "ring/simple", 4, (1, 8, 1, 0)),
        (230999, -1, "ring/simple", 16, (1, 8, 1, 0)),
        (0, 375149, "ring/ll128", 8, (2, 16, -1, -1)),
        (375150, -1, "tree/simple", 8, (2, 16, -1, -1)),
    ]
    parsed = nccl_tuner.parse_rules(rules.text())
    assert nccl_tuner.match(parsed, "allreduce", 1 << 20, 1, 8, pipe_ops=1, reg_buff=0)["channels"] == 16
    assert nccl_tuner.match(parsed, "allreduce", 1 << 20, 1, 8, pipe_ops=2, reg_buff=0) is None  # not measured
    assert nccl_tuner.match(parsed, "allreduce", 1 << 20, 2, 16, pipe_ops=4)["algorithm"] == "tree"  # -1 = any
    assert "too few to fit regimes" in rules.text()


def test_optimize_config_rows_with_a_bandwidth_only():
    # the script's newest header has no cost_metric, and a row needs latency_us or bandwidth_gbps: 1 MiB at
    # 10 GB/s (read as algbw) is 104.8576 us
    text = (
        "collective,size_bytes,algorithm,protocol,channels,nodes,ranks,pipeOps,regBuff,bandwidth_gbps,latency_us\n"
        "allreduce,1048576,ring,simple,8,1,8,-1,-1,10,\n"
        "allreduce,2097152,ring,simple,8,1,8,-1,-1,,150\n"
        "allreduce,4194304,ring,simple,8,1,8,-1,-1,,\n"
    )
    (t,) = ingest.parse(text, "bw.csv")
    assert [(r.size, r.time_s) for r in t.rows] == [(1048576, pytest.approx(104.8576e-6)), (2097152, 150e-6)]
    assert t.skipped == ["line 4: neither latency_us nor bandwidth_gbps: expected one of them"]


# --- MSCCL XML -------------------------------------------------------------------------------------


def _normal(s):
    steps = []
    for st in s.steps:
        merged = {}
        for t in st.transfers:
            merged.setdefault((t.src, t.dst, t.op), set()).update(t.chunks)
        steps.append(sorted((k, sorted(v)) for k, v in merged.items()))
    return steps


def _round_trip(s):
    back = msccl_import.parse(msccl.write(s))
    verify(back)
    assert _normal(back) == _normal(s)
    assert (back.collective, back.algorithm, back.ranks, back.chunks, back.root, back.chunks_per_buffer) == (
        s.collective,
        s.algorithm,
        s.ranks,
        s.chunks,
        s.root,
        s.chunks_per_buffer,
    )


# rank counts in two parts: the core up to 9 ranks, the slow part 10 to 16
RANK_PARTS = [pytest.param(range(2, 10), id="2-9"), pytest.param(range(10, 17), marks=pytest.mark.slow, id="10-16")]


@pytest.mark.parametrize("ranks", RANK_PARTS)
@pytest.mark.parametrize("collective,algorithm", sorted(REGISTRY))
def test_every_algorithm_round_trips_through_msccl_xml(collective, algorithm, ranks):
    alg = get_algorithm(collective, algorithm)
    for p in ranks:
        if alg.unavailable(p):
            continue
        roots = (0, p - 1) if collective in ("broadcast", "reduce", "scatter", "gather") else (0,)
        for root in roots:
            _round_trip(build(collective, algorithm, p, root=root))
        if alg.pipeline and p in (3, 8):
            _round_trip(build(collective, algorithm, p, segments=3))


@pytest.mark.parametrize("ranks", RANK_PARTS)
@pytest.mark.parametrize("name", sorted(DEFAULT_PHASES))
def test_hierarchical_schedules_round_trip(name, ranks):
    # the two-level schedule with its default phases on every nodes x ranks-per-node of 4..16 ranks
    phase = DEFAULT_PHASES[name]
    for p in (p for p in ranks if p >= 4):
        for nodes in (n for n in range(2, p // 2 + 1) if p % n == 0):
            _round_trip(build_hierarchical(name, nodes, p // nodes, phase, phase))


def test_root_is_found_without_the_name_hint():
    s = build("broadcast", "scatter-allgather", 6, root=4)
    text = re.sub(r" root=\d+", "", msccl.write(s))
    assert msccl_import.parse(text).root == 4


def test_ring_allreduce_xml_structure():
    algo = msccl.to_xml(build("allreduce", "ring", 4))
    assert algo.get("coll") == "allreduce" and algo.get("ngpus") == "4" and algo.get("nchunksperloop") == "4"
    for gpu in algo.findall("gpu"):
        r = int(gpu.get("id"))
        blocks = {(int(tb.get("send")), int(tb.get("recv"))): tb for tb in gpu.findall("tb")}
        assert set(blocks) == {((r + 1) % 4, -1), (-1, (r - 1) % 4)}  # a ring: send right, receive left
        types = [st.get("type") for st in blocks[(-1, (r - 1) % 4)].findall("step")]
        assert types == ["rrc"] * 3 + ["r"] * 3  # reduce-scatter, then allgather


def test_msccl_import_errors_name_the_line(tmp_path):
    good = msccl.write(build("allreduce", "ring", 3))
    lines = good.splitlines()
    i = next(k for k, line in enumerate(lines) if 'type="rrc"' in line)
    bad = "\n".join(lines[:i] + [lines[i].replace('cnt="1"', 'cnt="x"')] + lines[i + 1 :])
    with pytest.raises(UsageError, match=rf"line {i + 1}: <step>: cnt 'x' is not a whole number"):
        msccl_import.parse(bad, "bad.xml")
    with pytest.raises(UsageError, match=r"bad.xml, line 2: broken XML"):
        msccl_import.parse("<algo ngpus='2'>\n<gpu</algo>", "bad.xml")
    unmatched = good.replace('type="r" ', 'type="nop" ', 1)
    with pytest.raises(UsageError, match="every send needs its receive"):
        msccl_import.parse(unmatched, "bad.xml")


def test_api_export_and_import(tmp_path):
    path = tmp_path / "rhd.xml"
    api.export_msccl("allreduce", "rhd", 8, path)
    imported = api.import_msccl(path)
    assert imported.verified and imported.schedule.algorithm == "rhd"
    # rhd on 8 ranks: 2 log2(8) steps, 2 (p-1)/p n bytes per rank, (p-1)/p n reduced (Rabenseifner)
    assert imported.coefficients == (6.0, 1.75, 0.875)


def test_import_simulates_beside_our_algorithms(tmp_path):
    path = tmp_path / "ring4.xml"
    api.export_msccl("allreduce", "ring", 4, path)
    imported = api.import_msccl(path, "switch:4", "1G", network=NetworkSpec(latency="1us", bandwidth="10GB/s"))
    (run,) = imported.simulations
    # ring allreduce through a switch: 2(p-1) steps, each alpha + (n/p) / B on every rank's link:
    # 6 (1 us + 2^30 / (4 x 10 GB/s)) = 6 us + 0.1610612736 s
    assert run.time_s == pytest.approx(6e-6 + 2**30 / 4e10 * 6, rel=1e-12)
    assert run.same_name == "ring" and run.ours["ring"] == run.time_s
    assert {"ring", "rhd", "mesh", "blink"} <= set(run.ours)
    assert run.busbw_Bps == pytest.approx(2**30 / run.time_s * 1.5)
    with pytest.raises(UsageError, match="need a --topology"):
        api.import_msccl(path, size="1M")
    with pytest.raises(UsageError, match="the XML has 4 GPUs and topology dgx1v has 8 ranks"):
        api.import_msccl(path, "dgx1v")


def test_a_foreign_msccl_xml_with_fused_instructions_imports():
    # msccl-tools style ring allreduce on 3 GPUs (hand-written): one block per GPU, s, rrs, rrcs, rcs, r
    imported = api.import_msccl(
        FIXTURES / "msccl_ring3_fused.xml", "switch:3", "1G", network=NetworkSpec(latency="1us", bandwidth="10GB/s")
    )
    s = imported.schedule
    assert imported.verified and (s.collective, s.algorithm, s.ranks) == ("allreduce", "allreduce_ring_fused", 3)
    # a ring allreduce: 2(p-1) = 4 steps, each rank sends 2(p-1)/p n and reduces (p-1)/p n
    assert len(s.steps) == 4 and imported.coefficients == pytest.approx((4, 4 / 3, 2 / 3))
    assert [{t.op for t in st.transfers} for st in s.steps] == [{"reduce"}] * 2 + [{"copy"}] * 2
    assert all({(t.src, t.dst) for t in st.transfers} == {(0, 1), (1, 2), (2, 0)} for st in s.steps)
    (run,) = imported.simulations
    assert run.same_name is None and run.time_s == pytest.approx(run.ours["ring"], rel=1e-12)


# the groups in two parts: the core the smallest (two and three ranks), the slow part the rest
@pytest.mark.parametrize("part", [pytest.param(0, id="small"), pytest.param(1, marks=pytest.mark.slow, id="large")])
@pytest.mark.parametrize("collective", ["broadcast", "reduce", "allreduce", "allgather", "reducescatter"])
def test_blink_packed_trees_round_trip_through_msccl_xml(collective, part):
    groups = [("0,1", "0,1,4"), ("0,3,5", "2,3,6,7") + (("0,1,2,3,4,5,6,7",) if collective == "broadcast" else ())][
        part
    ]
    for group in groups:
        back = msccl_import.parse(api.export_msccl(collective, "blink", group, topology="dgx1v"))
        verify(back)
        sims = api.simulate(
            SimulateSpec(collective=collective, algorithm="blink", topology="dgx1v", size="1M", ranks=group)
        )
        ours = as_tuples(sims[0].schedule)
        assert _normal(back) == _normal(ours) and back.ranks == len(group.split(","))


def test_blink_export_needs_a_topology():
    with pytest.raises(UsageError, match="--topology dgx1v"):
        api.export_msccl("allreduce", "blink", "0,1,4")
    with pytest.raises(UsageError, match="drop --topology"):
        api.export_msccl("allreduce", "ring", 4, topology="dgx1v")
    with pytest.raises(UsageError, match="expected a rank count"):
        api.export_msccl("allreduce", "ring", "0,1,4")


# --- readers -----------------------------------------------------------------------------------------


def test_inspector_jsonl_buckets_per_communicator_and_collective():
    tables = {t.header["comm"]: t for t in ingest.load(FIXTURES / "inspector.jsonl")}
    ar, ag = tables["0xa1"], tables["0xb2"]
    assert (ar.collective, ar.ranks, ar.nodes, ag.collective, ag.ranks, ag.nodes) == (
        "allreduce",
        16,
        2,
        "allgather",
        8,
        1,
    )
    # medians per bucket: 64 KiB calls 40/50/45 us -> 45; 1 MiB 100/120/110 -> 110; 16 MiB 200/220 -> 210
    assert [(r.size, round(r.time_s * 1e6, 6)) for r in ar.rows] == [
        (65536, 45.0),
        (1048576, 110.0),
        (16777216, 210.0),
        (268435456, 2000.0),
    ]
    assert ar.rows[0].busbw_GBps == pytest.approx(65536 / 45e-6 / 1e9 * 30 / 16)
    assert (ar.header["nccl_algo"], ar.header["nccl_proto"], ag.header["nccl_proto"]) == ("ring", "simple", "ll128")
    assert not ar.flagged()
    # an AllGather's coll_msg_size_bytes is one rank's share (inspector_plugin.cc): 128 KiB x 8 ranks = 1 MiB, the
    # size nccl-tests prints and the one Inspector's own algobw is computed on (inspector.cc trafficSize)
    assert ag.rows[0].size == 131072 * 8 and not ag.flagged()


def test_inspector_corrupt_lines_are_reported_with_their_numbers():
    tables = ingest.load(FIXTURES / "corrupt" / "inspector_corrupt.jsonl")
    ar = next(t for t in tables if t.collective == "allreduce")
    assert any(s.startswith("line 3: broken JSON") for s in ar.skipped)
    assert any(s.startswith("line 5: coll_exec_time_us") for s in ar.skipped)
    assert [round(r.time_s * 1e6, 6) for r in ar.rows][:2] == [45.0, 105.0]  # 40, 50 -> 45; 100, 110 -> 105
    with pytest.raises(UsageError, match=r"x.jsonl: no readable NCCL Inspector records: line 1: \$.coll_perf"):
        ingest.parse('{"coll_perf": 1}\n{"coll_perf": {}\n', "x.jsonl")


def test_inspector_prometheus():
    (t,) = ingest.load(FIXTURES / "inspector_prom.txt")
    assert (t.collective, t.ranks, t.nodes, t.header["nccl_algo"], t.header["nccl_proto"]) == (
        "allreduce",
        16,
        2,
        "ring",
        "ll",
    )
    # 18.75 GB/s busbw / (2 x 15/16) = 10 GB/s algbw x 100 us = 1e6 B; 150 / 1.875 x 12.5 ms = 1e9 B;
    # the 4-5GB bucket has no bandwidth: its middle, 4.5 GiB
    assert [r.size for r in t.rows] == [1_000_000, 1_000_000_000, 4831838208]
    assert [r.time_s for r in t.rows] == pytest.approx([100e-6, 12.5e-3, 40e-3])
    (bad,) = ingest.load(FIXTURES / "corrupt" / "inspector_prom_corrupt.txt")
    assert [s.split(":")[0] for s in bad.skipped] == ["line 8", "line 9"]


def test_nccl_tests_json_with_per_iteration_timing():
    (t,) = ingest.load(FIXTURES / "nccl_tests_per_iter.json")
    assert (t.collective, t.ranks, t.nodes) == ("allreduce", 8, 1)
    assert (t.header["nccl_algo"], t.header["nccl_proto"], t.header["nccl_channels"]) == ("ring", "simple", 16)
    assert [r.size for r in t.placement("out-of-place")] == [1024, 1048576, 67108864, 268435456]
    stats = t.header["per_iter"][(1048576, "out-of-place")]
    assert (stats["min_us"], stats["max_us"], stats["p50_us"], stats["times_us"]) == (
        38.0,
        45.0,
        40.0,
        [38.0, 40.0, 45.0],
    )
    assert not t.flagged()
    with pytest.raises(UsageError, match=r"corrupt.json, line \d+: broken JSON"):
        ingest.load(FIXTURES / "corrupt" / "nccl_tests_per_iter_corrupt.json")


@pytest.mark.parametrize("name", ["rccl_tests.jsonl", "rccl_tests.csv"])
def test_rccl_tests_output(name):
    (t,) = ingest.load(FIXTURES / name)
    assert (t.collective, t.ranks) == ("allgather", 4)
    assert [(r.size, round(r.time_s * 1e6, 9), r.placement) for r in t.rows[:2]] == [
        (1024, 15.0, "out-of-place"),
        (1024, 15.0, "in-place"),
    ]
    assert len(t.rows) == 8 and not t.flagged() and not t.notes


def test_rccl_csv_corrupt_rows_are_skipped_with_line_numbers():
    (t,) = ingest.load(FIXTURES / "corrupt" / "rccl_tests_corrupt.csv")
    assert [s.split(":")[0] for s in t.skipped] == ["line 4", "line 7"]
    assert len(t.rows) == 6


def test_new_formats_fit_and_diagnose():
    for name in ("inspector.jsonl", "nccl_tests_per_iter.json", "rccl_tests.csv"):
        assert api.fit_logs([FIXTURES / name])
        assert api.diagnose_logs([FIXTURES / name])


# --- a corrupted input of each format: a line-numbered message ---------------------------------------


def _corrupt(name: str, line: int, old: str, new: str) -> str:
    """The fixture with `old` replaced by `new` on its 1-based line `line` (the line must hold it)."""
    lines = (FIXTURES / name).read_text().split("\n")
    assert old in lines[line - 1], (name, line, lines[line - 1])
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    return "\n".join(lines)


def _first_line_with(name: str, text: str) -> int:
    return next(i for i, line in enumerate((FIXTURES / name).read_text().split("\n"), 1) if text in line)


def _only(name: str, keep: int) -> str:
    """The header (line 1) and line `keep` of a line-oriented fixture."""
    lines = (FIXTURES / name).read_text().split("\n")
    return "\n".join([lines[0], lines[keep - 1]]) + "\n"


ONE_BAD_LINE = [  # (fixture, line, old, new): the bad line is skipped and named, the rest is read
    ("rccl_tests.jsonl", 2, '"size": 1024', '"size": "x"'),
    ("rccl_tests.csv", 3, ",1024,", ",-1024,"),
    ("optimize_config.csv", 3, ",latency,", ",latency,zz,"),
    ("inspector.jsonl", 2, "{", "{{"),
    ("inspector_prom.txt", 3, "} 18.75", "} eighteen"),
]


@pytest.mark.parametrize("name,line,old,new", ONE_BAD_LINE)
def test_a_corrupted_line_is_skipped_and_named(name, line, old, new):
    good = sum(len(t.rows) for t in ingest.load(FIXTURES / name))
    tables = ingest.parse(_corrupt(name, line, old, new), name)
    skipped = [s for t in tables for s in t.skipped]
    assert any(s.startswith(f"line {line}:") for s in skipped), skipped
    assert 0 < sum(len(t.rows) for t in tables) <= good  # Inspector rows are buckets: a lost call may keep one


def test_a_corrupted_nccl_tests_json_result_is_named_by_line_and_path():
    name = "nccl_tests_per_iter.json"
    size_line = _first_line_with(name, '"size": 1048576')  # the second result; its '{' is one line up
    (t,) = ingest.parse(_corrupt(name, size_line, '"size": 1048576', '"size": "big"'), name)
    assert t.skipped == [f"line {size_line - 1}: $.results[1].size: expected a number, got the string 'big'"]
    assert 1048576 not in [r.size for r in t.rows]
    # blank lines before the document move every number
    (t,) = ingest.parse("\n\n" + _corrupt(name, size_line, '"size": 1048576', '"size": "big"'), name)
    assert t.skipped[0].startswith(f"line {size_line + 1}: ")


@pytest.mark.parametrize(
    "name,line,old,new,message",
    [
        ("rccl_tests.jsonl", 2, '"time": 15.0', '"time": "slow"', r"no readable rccl-tests JSON records: line 1: time"),
        ("rccl_tests.csv", 2, ",15.0,", ",zz,", r"no readable rccl-tests CSV records: line 2: time"),
        ("optimize_config.csv", 2, ",5.1792", ",zz", r"no readable optimize_config.py CSV rows: line 2: latency_us"),
        (
            "inspector_prom.txt",
            7,
            "} 100",
            " 100",
            r"no readable NCCL Inspector Prometheus series .*: line 2: expected metric",
        ),
    ],
)
def test_a_file_with_nothing_readable_is_a_line_numbered_usage_error(name, line, old, new, message):
    text = _only(name, line)
    if name == "rccl_tests.jsonl":  # JSON lines have no header line: keep the record alone, twice
        text = (FIXTURES / name).read_text().split("\n")[line - 1] + "\n"
        text = "\n".join([text.strip()] * 2) + "\n"
    corrupted = text.replace(old, new)
    assert corrupted != text
    with pytest.raises(UsageError, match=message):
        ingest.parse(corrupted, name)


def test_import_names_a_bad_mode_size_or_link_not_the_topology(tmp_path):
    # the options every algorithm shares are checked once: a bad one is not "no algorithm of ours runs here"
    path = tmp_path / "ring4.xml"
    api.export_msccl("allreduce", "ring", 4, path)
    link = NetworkSpec(latency="1us", bandwidth="10GB/s")
    for kwargs, message in [
        ({"mode": "bogus"}, r"mode 'bogus': expected rounds or events"),
        ({"size": "12Q"}, r"cannot read size '12Q'"),
        ({"network": NetworkSpec(latency="5", bandwidth="10GB/s")}, r"cannot read time '5'"),
    ]:
        with pytest.raises(UsageError, match=message) as caught:
            api.import_msccl(path, "switch:4", **{"size": "1M", "network": link, **kwargs})
        assert "none of our" not in str(caught.value)
    with pytest.raises(UsageError, match="unknown topology 'bogus'"):
        api.import_msccl(path, "bogus", network=link)
    # every runnable flat algorithm of ours (select.runnable_algorithms) and blink run on switch:4's link
    (run,) = api.import_msccl(path, "switch:4", "1M", network=link).simulations
    assert set(run.ours) == set(runnable_algorithms("allreduce", 4)) | {"blink"}


def test_cli_import_reports_a_bad_mode(tmp_path):
    from typer.testing import CliRunner

    path = tmp_path / "ring4.xml"
    api.export_msccl("allreduce", "ring", 4, path)
    res = CliRunner().invoke(
        app,
        [
            "import",
            "msccl",
            str(path),
            "--topology",
            "switch:4",
            "--latency",
            "1us",
            "--bandwidth",
            "10GB/s",
            "--mode",
            "bogus",
        ],
    )
    assert res.exit_code != 0 and "expected rounds or events" in str(res.exception)


def test_blink_export_on_a_switch_takes_its_link():
    link = NetworkSpec(latency="1us", bandwidth="10GB/s")
    back = msccl_import.parse(api.export_msccl("allreduce", "blink", None, topology="switch:4", network=link))
    verify(back)
    sims = api.simulate(
        SimulateSpec(collective="allreduce", algorithm="blink", topology="switch:4", size="1M", network=link)
    )
    assert back.ranks == 4 and _normal(back) == _normal(as_tuples(sims[0].schedule))
    with pytest.raises(UsageError, match="switch:4 needs a link: give --latency and --bandwidth"):
        api.export_msccl("allreduce", "blink", None, topology="switch:4")
    with pytest.raises(UsageError, match="dgx1v has its own links"):
        api.export_msccl("allreduce", "blink", "0,1,4", topology="dgx1v", network=link)
    with pytest.raises(UsageError, match="-A ring's schedule does not depend on a link"):
        api.export_msccl("allreduce", "ring", 4, network=link)
    from typer.testing import CliRunner

    res = CliRunner().invoke(
        app,
        [
            "export",
            "msccl",
            "--collective",
            "allreduce",
            "-A",
            "blink",
            "--topology",
            "switch:4",
            "--latency",
            "1us",
            "--bandwidth",
            "10GB/s",
        ],
    )
    assert res.exit_code == 0 and 'ngpus="4"' in res.output, res.output
