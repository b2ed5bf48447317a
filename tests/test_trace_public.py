"""`collperf trace` on a public trace: rank 0 of a 2-GPU A100 DDP job from Holistic Trace Analysis' test data
(fixtures/traces/public/README.md). Only one rank is published, so each all-reduce's duration includes waiting
for the other rank: the report must say so, not call the waits 12-42x slower; and its step view must report
the idle share (about three quarters of each ~222 ms step)."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from collperf import api
from collperf.cli import app
from collperf.trace.core import WAITING_IN_WHAT_IF
from collperf.trace.judge import DURATION, ONE_RANK_SLOWER

PUBLIC = Path(__file__).parent / "fixtures" / "traces" / "public" / "hta_a100_2gpu_rank0.json.gz"


@pytest.fixture(scope="module")
def report():
    return api.trace(str(PUBLIC))


def test_the_public_trace_is_what_its_readme_says(report):
    assert report.world_size == 2 and report.backend == "nccl" and len(report.sources) == 1
    assert report.assumed.system.gpu.startswith("NVIDIA A100")
    allreduces = [r for r in report.collectives if r.collective == "allreduce"]
    assert len(allreduces) == 5 and {(r.algorithm, r.protocol) for r in allreduces} == {("ring", "LL")}
    assert [s.name for s in report.steps] == ["ProfilerStep#4", "ProfilerStep#5", "ProfilerStep#6"]


def test_durations_are_said_to_include_waiting(report):
    assert {r.basis for r in report.collectives} == {DURATION}
    assert any("includes waiting for the other ranks" in n for n in report.notes)
    assert report.to_json()["notes"]
    # no all-reduce is called slower without saying that its time may be waiting
    for r in report.collectives:
        if r.verdict.text.startswith("slower"):
            assert r.verdict.text.endswith(ONE_RANK_SLOWER)
    # the 8 MB call takes longer than the 9.27 MiB and 31 MiB ones: its time is waiting, not judged
    small = next(r for r in report.collectives if r.size_bytes == 8196 * 1000)
    assert small.verdict.text.startswith("not judged: takes longer (3.307 ms)")
    assert report.verdicts == []  # one rank: no straggler, hang or network verdict


def test_the_cli_says_so_and_the_what_if_is_an_upper_estimate():
    result = CliRunner().invoke(app, ["trace", str(PUBLIC), "--what-if-cluster", "dgx-h100"], terminal_width=250)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "one rank's duration, waiting included" in text and "includes waiting for the other ranks" in text
    assert " ".join(WAITING_IN_WHAT_IF.split()) in text


def test_the_step_view_reports_the_idle_share(report):
    for v in report.steps:
        assert v.compute_s + v.exposed_comm_s + v.idle_s == pytest.approx(v.time_s)
        assert 0.70 < v.idle_s / v.time_s < 0.80  # 78 %, 78 %, 74 %: neither compute nor exposed comm
        assert 0 < v.host_bound_s <= v.idle_s  # most of it the host running CPU ops
    first = report.steps[0]
    assert first.time_s == pytest.approx(0.2224, abs=1e-4) and first.idle_s / first.time_s == pytest.approx(
        0.78, abs=0.01
    )
