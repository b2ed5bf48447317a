"""diagnose --baseline: a run against healthy runs of the same system, as tight as their noise allows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from collperf import api
from collperf.cli import app
from collperf.diagnose.baseline import FLOOR, compare, judge
from collperf.errors import UsageError
from collperf.ingest.table import Row, Table
from collperf.spec import BaselineSpec, LogSpec
from cli_support import cli_error

ROOT = Path(__file__).resolve().parents[1]
H100 = ROOT / "examples" / "14_h100-ib400-2node-16gpu-allreduce.txt"
# another healthy 2 x 8 H100 InfiniBand run (the corpus's Crusoe run), sizes 128 MiB-2 GiB
OTHER = ROOT / "src" / "collperf" / "data" / "corpus" / "h100-ib-2x8-allreduce-gh-nccl-tests-294.txt"
MIB = 1 << 20


def _table(times: dict[int, list[float]], ranks: int = 16, collective: str = "allreduce", source: str = "t") -> Table:
    rows = [
        Row(size, t, placement="out-of-place" if i % 2 == 0 else "in-place")
        for size, ts in times.items()
        for i, t in enumerate(ts)
    ]
    return Table(source, collective, ranks, 2, rows)


def test_a_noisy_baseline_widens_the_threshold_beyond_the_floor():
    # baseline speeds 1.0 and 0.8 (times 1 s, 1.25 s): median 0.9, the rows 1/9 = 11.1 % off it
    base = _table({MIB: [1.0, 1.25]})
    within = compare([_table({MIB: [1 / 0.82]})], [base])  # 1 - 0.82/0.9 = 8.9 %: beyond 5 %, within 11.1 %
    s = within.sizes[0]
    assert s.baseline_noise == pytest.approx(1 / 9) and s.noise == 0
    assert s.threshold == pytest.approx(1 / 9) and s.shortfall == pytest.approx(1 - 0.82 / 0.9)
    assert within.label == "healthy" and "within the run-to-run noise of 11 %" in within.verdict
    beyond = compare([_table({MIB: [1 / 0.75]})], [base])  # 1 - 0.75/0.9 = 16.7 %
    assert beyond.label == "degraded" and beyond.degraded_by == pytest.approx(1 / 6)
    assert beyond.verdict.startswith("degraded by 17 % at sizes 1 MiB")


def test_a_quiet_baseline_is_held_to_the_floor_and_the_floor_can_be_set():
    base = _table({MIB: [1.0, 1.0 / 1.01]})  # speeds 1 and 1.01: 0.5 % noise
    four = [_table({MIB: [1 / 0.96 / 1.005]})]  # 4 % below the median speed 1.005
    assert compare(four, [base]).sizes[0].shortfall == pytest.approx(0.04)
    assert compare(four, [base]).label == "healthy"
    six = [_table({MIB: [1 / 0.94 / 1.005]})]
    assert compare(six, [base]).label == "degraded"
    assert compare(four, [base], floor=0.03).label == "degraded"  # 4 % > 3 % + the 0.5 % noise
    assert FLOOR == 0.05


def test_the_new_runs_own_spread_is_noise_too():
    base = _table({MIB: [1.0, 1.0]})
    # new speeds 0.9 and 0.86 / ... : in-place and out-of-place 10 % apart around their median
    new = _table({MIB: [1 / 0.99, 1 / 0.81]})  # speeds 0.99, 0.81: median 0.9, spread 0.09/0.9 = 10 %
    s = compare([new], [base]).sizes[0]
    assert s.noise == pytest.approx(0.1) and s.threshold == pytest.approx(0.1)
    assert s.shortfall == pytest.approx(0.1) and not s.degraded  # exactly at the threshold is within it


def test_repeated_runs_pool_and_only_common_sizes_are_compared():
    base = [_table({MIB: [1.0], 2 * MIB: [2.0]}), _table({MIB: [1.1], 2 * MIB: [2.0], 4 * MIB: [4.0]})]
    v = compare([_table({MIB: [1.0], 2 * MIB: [2.0], 8 * MIB: [1.0]})], base)
    assert [s.size_bytes for s in v.sizes] == [MIB, 2 * MIB] and v.sizes[0].baseline_samples == 2


def test_refusals_say_what_is_wrong():
    with pytest.raises(UsageError, match="no size"):
        compare([_table({MIB: [1.0]})], [_table({2 * MIB: [1.0]})])
    with pytest.raises(UsageError, match="8 ranks has no baseline run .*allreduce on 16 ranks"):
        judge([_table({MIB: [1.0]}, ranks=8)], [_table({MIB: [1.0]})])
    with pytest.raises(UsageError, match="--threshold"):
        BaselineSpec(logs=LogSpec(paths=[H100]), baseline=[H100], threshold="five")
    with pytest.raises(UsageError, match="--threshold"):
        BaselineSpec(logs=LogSpec(paths=[H100]), baseline=[H100], threshold="120%")
    with pytest.raises(UsageError, match="no baseline"):
        BaselineSpec(logs=LogSpec(paths=[H100]), baseline=[])


def slowed(path: Path, out: Path, factor: float, from_bytes: int) -> Path:
    """A copy of an nccl-tests log whose sizes >= from_bytes run at `factor` of their speed (times / factor)."""
    lines = []
    for line in path.read_text().splitlines():
        cells = line.split()
        if len(cells) == 13 and cells[0].isdigit() and int(cells[0]) >= from_bytes:
            for i in (5, 9):
                cells[i] = f"{float(cells[i]) / factor:.1f}"
                size, t = int(cells[0]), float(cells[i]) * 1e-6
                cells[i + 1] = f"{size / t / 1e9:.2f}"
                cells[i + 2] = f"{size / t / 1e9 * 2 * 15 / 16:.2f}"
            line = " ".join(cells)
        lines.append(line)
    out.write_text("\n".join(lines) + "\n")
    return out


def test_h100_slowed_to_80_percent_from_64_MiB_is_degraded(tmp_path):
    slow = slowed(H100, tmp_path / "slow.txt", 0.8, 64 * MIB)
    r = api.diagnose_baseline([slow], baseline=[H100])
    v = r.verdicts[0]
    assert r.label == "degraded"
    assert [s.size_bytes for s in v.degraded_sizes] == [64 * MIB << k for k in range(9)]  # 64 MiB-16 GiB
    assert v.degraded_by == pytest.approx(0.2, abs=0.003)
    assert "at sizes 64 MiB-16 GiB" in r.verdict


def test_h100_against_itself_and_another_healthy_run_is_healthy(tmp_path):
    assert api.diagnose_baseline([H100], baseline=[H100]).label == "healthy"
    both = [api.diagnose_baseline([H100], baseline=[OTHER]), api.diagnose_baseline([OTHER], baseline=[H100])]
    assert [r.label for r in both] == ["healthy", "healthy"]
    # the other run is 4.5 % below this one at 512 MiB (408 and 406 GB/s against 427): inside SuperBench's 5 %
    worst = both[1].verdicts[0].worst
    assert worst.size_bytes == 512 * MIB and 0.04 < worst.shortfall < FLOOR
    # a directory of healthy runs is the baseline too
    (tmp_path / "good").mkdir()
    for p in (H100, OTHER):
        (tmp_path / "good" / p.name).write_text(p.read_text())
    d = api.diagnose_baseline([H100], baseline=[tmp_path / "good"]).verdicts[0]
    assert len(d.baseline_sources) == 2 and d.label == "healthy"


def test_the_command_line_gives_the_label_in_json(tmp_path, capsys):
    slow = slowed(H100, tmp_path / "slow.txt", 0.8, 64 * MIB)
    result = CliRunner().invoke(app, ["diagnose", str(slow), "--baseline", str(H100), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["verdict_label"] == "degraded" and doc["comparisons"][0]["sizes"][-1]["degraded"]
    text = CliRunner().invoke(app, ["diagnose", str(H100), "--baseline", str(H100)])
    assert text.exit_code == 0 and "healthy (within the run-to-run noise of 5 %" in " ".join(text.output.split())
    assert "--baseline judges logs against logs" in cli_error(
        capsys, "diagnose", H100, "--baseline", H100, "--peak", "50GB/s"
    )
    assert "directory holds no log" in cli_error(
        capsys, "diagnose", H100, "--baseline", tmp_path / "slow.txt", "--baseline", _empty(tmp_path)
    )


def _empty(tmp_path: Path) -> Path:
    (tmp_path / "empty").mkdir()
    return tmp_path / "empty"


def test_the_band_verdict_says_its_limit_when_a_run_is_well_below_its_peers(tmp_path):
    from collperf.diagnose.band_rule import PEER_GAP

    # 74 % of the healthy run's speed from 64 MiB: within the band, yet 341 GB/s at 2 GiB against peers at 444-461
    slow = api.diagnose_logs([slowed(H100, tmp_path / "slow.txt", 0.74, 64 * MIB)])[0]
    assert slow.verdict.text.startswith("as expected") and "--baseline" in slow.verdict.text
    lowest, yours = min(slow.peers.busbw_GBps), slow.peers.yours_busbw_GBps
    assert yours < (1 - PEER_GAP) * lowest and f"yet {round(100 * (1 - yours / lowest))}% below" in slow.verdict.text
    assert "--baseline" not in api.diagnose_logs([H100])[0].verdict.text  # the healthy original is above its peers
