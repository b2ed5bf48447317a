r"""Every regular expression the readers apply to input lines runs in one pass: the patterns are collected from
the source of ingest/, diagnose/ and trace/ (line_patterns.py), not listed by hand, and each is run over
adversarial lines (runs of digits, spaces, prefixes and of what the pattern itself repeats). A pattern that
backtracks quadratically takes seconds per 64 KiB line, minutes per 256 KiB (`(\d+) coll channels` searched over a
run of digits: about 6 minutes, several such lines) and hours per 1 MiB line; every linear one together well under a minute,
so the subprocess's generous timeout is a hang check, not a speed assertion. And pathological lines still give the
right facts."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import collperf
import line_patterns
from collperf.expect.loglines import read_facts

HERE = Path(__file__).parent


def test_every_call_site_is_collected():
    patterns, unresolved = line_patterns.collect()
    assert not unresolved, unresolved
    assert len(patterns) > 100  # the readers' patterns, not an empty walk
    wheres = {w.split(":")[0] for w, *_ in patterns}
    assert {"expect/loglines.py", "ingest/nccltests.py", "trace/kernels.py", "trace/stream.py"} <= wheres


@pytest.mark.parametrize(
    "length, timeout_s",
    [pytest.param(1 << 16, 300, id="64KiB"), pytest.param(1 << 20, 1800, marks=pytest.mark.slow, id="1MiB")],
)
def test_every_line_pattern_finishes_on_adversarial_lines(length, timeout_s):
    try:
        done = subprocess.run(
            [sys.executable, str(HERE / "line_patterns.py"), str(length)],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            cwd=HERE,
            env={**os.environ, "PYTHONPATH": str(Path(collperf.__file__).parents[1])},
        )
    except subprocess.TimeoutExpired as e:
        last = (e.stdout or b"").decode(errors="replace").strip().splitlines()[-1:]
        pytest.fail(f"a line pattern did not finish on a {length}-character line: {last}")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1].startswith("done")


def test_pathological_lines_give_the_right_facts():
    digits = "9" * 100_000
    text = "\n".join(
        [
            digits,
            digits + " coll channels, 4 p2p channels",  # not a channel count: no digit run of 100,000
            "host:1:1 [0] NCCL INFO 24 coll channels, 0 collnet channels, 0 nvls channels, 32 p2p channels",
            "NCCL INFO NET/OFI " * 5000 + "Selected Provider is efa (found 4 nics)",
            "Rank 0 " * 10_000 + "on node-a3-mega-7 device 0",
            'mpirun -x NCCL_ALGO="' + "x" * 100_000,  # an unclosed quote
            "mpirun -x NCCL_PROTO=simple",
            "NCCL INFO Using network Socket" + " " * 100_000,
        ]
    )
    facts = read_facts(text)
    assert facts.get("channels") == 24
    assert facts.get("nics") == 4
    assert facts.get("instance") == "gcp-a3-mega"
    assert facts.get("protocols") == ("Simple",)
    assert facts.get("fabric") == "efa"  # the first line that says it decides


def test_nics_are_counted_up_to_the_first_other_token():
    facts = read_facts(
        "host:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.1<0> [2]x"
    )
    assert facts.get("nics") == 2


def test_every_instance_pattern_holds_a_literal_of_the_pre_check():
    """read_facts searches a line for instance names only when it holds one of HOST_LITERALS: every pattern of
    _HOSTS must (its near-matches, built from the pattern, hold one)."""
    from collperf.expect.loglines import _HOSTS, HOST_LITERALS

    for pattern, key in _HOSTS:
        for sample in line_patterns.near_matches(pattern):
            assert any(piece in sample.lower() for piece in HOST_LITERALS), (pattern, sample)


def test_the_spelt_out_host_pre_check_is_host_literals():
    """_has_host_piece spells HOST_LITERALS out (a generator over them cost more than the tests): the two agree."""
    from collperf.expect.loglines import _has_host_piece, HOST_LITERALS

    for piece in HOST_LITERALS:
        assert _has_host_piece(f"node-{piece}-1:12:34 [0] nccl info")
    assert not _has_host_piece("node-01:1001:1101 [0] nccl info channel 07/32 : 0[0] -> 1[1] via p2p/ipc/read")


def test_every_anchored_table_line_pattern_starts_with_its_literal():
    """nccltests.parse tries the header and footer patterns only on a line that starts with one of _ANCHORS: every
    line such a pattern matches must (its near-matches, built from the pattern, do)."""
    from collperf.ingest import nccltests

    for pattern in (
        nccltests._TESTS_VERSION,
        nccltests._STARTING,
        nccltests._NCCL_VERSION,
        nccltests._OUT_OF_BOUNDS,
        nccltests._AVG_BUSBW,
        nccltests._INCOMPLETE,
    ):
        for sample in line_patterns.near_matches(pattern.pattern):
            if pattern.match(sample):
                assert sample.startswith(nccltests._ANCHORS), (pattern.pattern, sample)
