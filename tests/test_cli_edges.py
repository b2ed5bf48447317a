"""The rough edges a new user meets: each mistake exits 2 with a message naming the real problem in the flags
the user typed (never a traceback), and the flags mean one thing in every command."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import typer

from collperf.cli import app
from cli_support import cli_error
from rank_support import as_a_shell_starts_it
from collperf.diagnose.findings import _dips
from collperf.lab.bench import distinct_sizes
from collperf.model.network import Link
from collperf.spec import SweepSpec
from collperf.topology import KINDS, parse

FIXTURES = Path(__file__).parent / "fixtures"
EXAMPLES = Path(__file__).parent.parent / "examples"
LOG = EXAMPLES / "14_h100-ib400-2node-16gpu-allreduce.txt"


def collperf(*args, env=None, timeout=120):
    """The command line as a user runs it: its exit code, stdout and stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "collperf", *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )
    return done.returncode, done.stdout, done.stderr


def refused(*args, env=None) -> str:
    """Run a mistake: exit 2, no traceback; the error text (spaces folded) to check."""
    code, out, err = collperf(*args, env=env)
    assert code == 2, (code, out, err)
    assert "Traceback" not in err and "Traceback" not in out, err
    return " ".join(err.split())


@pytest.mark.multiprocess
def test_a_mistyped_torchrun_variable_is_named():
    text = refused(
        "bench", "-b", "64K", "-e", "64K", env={"RANK": "0", "WORLD_SIZE": "abc", "TORCHELASTIC_RUN_ID": "x"}
    )
    assert "WORLD_SIZE='abc'" in text and "whole number" in text


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc (Linux)")
def test_export_msccl_to_a_place_that_takes_no_file():
    text = refused("export", "msccl", "--collective", "allreduce", "-A", "ring", "-p", 4, "-o", "/proc/x.xml")
    assert "--output /proc/x.xml: cannot be written" in text


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc (Linux)")
def test_export_nccl_tuner_to_a_place_that_takes_no_file():
    text = refused("export", "nccl-tuner", "--cluster", "dgx-h100", "--nodes", 2, "-o", "/proc/t.conf")
    assert "--output /proc/t.conf: cannot be written" in text


def test_testbed_rate_without_a_unit_names_the_rate():
    text = refused("testbed", "up", "--rate", "200")
    assert "rate '200'" in text and "--rate" in text and "whole numbers" not in text


def test_testbed_of_no_hosts_says_at_least_one():
    text = refused("testbed", "up", "--hosts", 0)
    assert "at least 1 host" in text and "--hosts" in text


@pytest.mark.multiprocess  # runs `collperf calibrate` (refused at parse time, but the guard cannot know)
def test_calibrate_testbed_rate_that_is_a_word_names_the_rate():
    text = refused("calibrate", "--testbed", "hosts=2,rate=fast")
    assert "rate 'fast'" in text and "whole numbers" not in text


@pytest.mark.multiprocess  # runs `collperf calibrate` (refused at parse time)
def test_testbed_spec_host_count_that_is_not_a_number():
    assert "hosts='x' is not a whole number" in refused("calibrate", "--testbed", "hosts=x")


@pytest.mark.multiprocess
def test_calibrate_on_one_rank_is_refused_and_writes_nothing(tmp_path):
    profile = tmp_path / "p.json"
    text = refused("calibrate", "--testbed", "hosts=1", "-o", profile)
    assert "between 2 ranks" in text and "hosts=2" in text
    assert not profile.exists()


@pytest.mark.multiprocess
def test_validate_checks_its_sizes_before_calibrating():
    # refused at once (no testbed brought up, nothing calibrated), naming flags validate has
    started = time.monotonic()
    text = refused("validate", "--testbed", "hosts=2,rate=200mbit", "-b", "4M", "-e", "64K")
    assert "-b must not exceed -e" in text
    assert "hosts=2" not in text
    assert time.monotonic() - started < 60  # generous: a calibration would bring a testbed up first


@pytest.mark.multiprocess
def test_validate_old_style_range_is_a_list_said_so_and_checked_first():
    # --sizes 64K,4M was a range: now the two sizes alone, with the range's flags named; the one-rank testbed
    # is refused before anything runs
    code, out, err = collperf("validate", "--testbed", "hosts=1", "--sizes", "64K,4M")
    assert code == 2 and "Traceback" not in err
    text = " ".join(err.split())
    assert "measures these 2 sizes only" in text and "-b 64K -e 4M" in text and "between 2 ranks" in text


def test_validate_sizes_are_a_list_in_any_order():
    assert SweepSpec(size_list="4M,64K").sizes() == [64 << 10, 4 << 20]
    assert SweepSpec(size_list=["1M", "1M", "64K"]).sizes() == [64 << 10, 1 << 20]
    # the range: 64K to 4M by 4, the grid validate measured before
    assert SweepSpec(min_bytes="64K", max_bytes="4M", factor=4).sizes() == [64 << 10, 256 << 10, 1 << 20, 4 << 20]


def test_diagnose_log_with_size_and_time_says_they_take_no_log():
    text = refused("diagnose", LOG, "--size", "1G", "--time", "9ms")
    assert "--size and --time judge one measurement and take no log" in text
    assert "unknown collective" not in text


def test_ranks_that_do_not_fill_nodes_name_the_flags():
    text = refused(
        "predict", "allreduce", "--size", "1M", "--ranks", 16, "--ranks-per-node", 3, "--cluster", "dgx-h100"
    )
    assert "--ranks 16" in text and "--ranks-per-node 3" in text and "give --nodes" not in text
    assert "ranks_per_node" not in text and "e.g. 15 or 18" in text


def test_diagnose_of_collperf_bench_text_names_algorithms_and_cpu_advice():
    code, out, err = collperf("diagnose", FIXTURES / "collperf_bench_two_algorithms.txt", "--json")
    assert code == 0, err
    docs = json.loads(out)["diagnoses"]
    text = json.dumps(docs)
    assert "get_system" not in text and "NCCL_ALGO" not in text and "NCCL_PROTO" not in text
    assert "--peak" in text and "--profile" in text
    code, out, err = collperf("diagnose", FIXTURES / "collperf_bench_two_algorithms.txt")
    headers = [line for line in out.splitlines() if "collperf_bench_two_algorithms.txt: allreduce" in line]
    assert len(headers) == 2 and "algorithm ring" in headers[0] and "algorithm builtin" in headers[1]


def test_a_dip_outside_nccl_gives_no_nccl_advice():
    bus = [(1 << 10, 1.0), (2 << 10, 2.0), (4 << 10, 0.5), (8 << 10, 4.0)]  # 4 KiB: a quarter of its neighbours
    (nccl,), (other,) = _dips(bus), _dips(bus, nccl=False)
    assert nccl.sizes_bytes == other.sizes_bytes == [4 << 10]
    assert "NCCL_ALGO" in nccl.message and "NCCL_ALGO" not in other.message


def test_zero_bytes_by_a_factor_is_measured_once():
    # float32 allreduce on 2 ranks: 0, 1 and 2 B all round down to 0 B (no whole element); 4 B is one element
    sweep = SweepSpec(min_bytes=0, max_bytes=64)
    assert sweep.sizes()[:4] == [0, 1, 2, 4]
    assert distinct_sizes(sweep, 2) == [0, 4, 8, 16, 32, 64]
    # allgather on 4 ranks: a size is whole blocks of 4 ranks x 4 B, so below 16 B every size is 0 B
    assert distinct_sizes(SweepSpec(collective="allgather", min_bytes=0, max_bytes=64), 4) == [0, 16, 32, 64]


@pytest.mark.multiprocess
def test_bench_from_zero_bytes_prints_no_repeated_rows():
    code, out, err = collperf("bench", "--ranks", 2, "-b", 0, "-e", 16, "-n", 1, "-w", 0, "--json")
    assert code == 0, err
    sizes = [r["size"] for r in json.loads(out)["results"]]
    assert sizes == sorted(set(sizes)) == [0, 4, 8, 16]


@pytest.mark.multiprocess
def test_interrupted_bench_before_its_first_row_leaves_no_complete_file(tmp_path):
    """Ctrl-C before the first row: the -J file of an earlier run with the same name must not stay, claiming
    to be complete. The signal is sent once the run has removed it (a marker, not a sleep)."""
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"complete": True, "results": []}))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "collperf",
            "bench",
            "--ranks",
            "2",
            "-b",
            "64M",
            "-e",
            "64M",
            "-n",
            "1000",
            "-J",
            str(path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_a_shell_starts_it,
    )
    try:
        deadline = time.monotonic() + 120
        while path.exists() and 'complete": true' in path.read_text() and proc.poll() is None:
            assert time.monotonic() < deadline, "the bench never started"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0 and "Traceback" not in err, err
    if path.exists():
        doc = json.loads(path.read_text())
        assert doc["complete"] is False


@pytest.mark.multiprocess
def test_bench_takes_the_collective_as_an_argument():
    # the algorithm check names the collective it was given: the argument reached the sweep
    assert "for allgather" in refused("bench", "allgather", "-A", "nonesuch", "--ranks", 2)
    assert "for allgather" in refused("bench", "--collective", "allgather", "-A", "nonesuch", "--ranks", 2)
    assert "given twice" in refused("bench", "broadcast", "--collective", "allgather", "--ranks", 2)


def _commands(group, prefix=""):
    for name, cmd in group.commands.items():
        if hasattr(cmd, "commands"):  # a group (typer's click may be its own copy: no isinstance)
            yield from _commands(cmd, f"{prefix}{name} ")
        else:
            yield f"{prefix}{name}", cmd


def test_short_t_is_topology_in_every_command():
    root = typer.main.get_command(app)
    seen = 0
    for name, cmd in _commands(root):
        for param in cmd.params:
            if "-t" in param.opts:
                assert "--topology" in param.opts, f"{name}: -t is {param.opts}"
                seen += 1
    assert seen >= 7  # predict, simulate, bench, trees, testbed up, export msccl, import msccl
    assert "No such option: -t" in " ".join(collperf("diagnose", "allreduce", "--size", "1G", "-t", "9ms")[2].split())


def test_simulate_help_lists_every_topology_the_parser_takes():
    """Each form in the parser's own list parses (P, N, G and RACKS filled in small), and simulate --help
    names every one of them, so a user sees rail:, fattree:, dragonfly: and nvl72: too."""
    forms = [f.strip().split("[")[0] for f in KINDS.replace(" or ", ", ").split(",") if ":" in f]
    assert {f.split(":")[0] for f in forms} >= {
        "mesh",
        "switch",
        "ring",
        "cluster",
        "rail",
        "fattree",
        "dragonfly",
        "nvl72",
    }
    for form in forms:
        spec = form.replace("RACKS", "1").replace("NxG", "2x4").replace("P", "4")
        assert parse(spec, Link(5e-6, 50e9)).ranks >= 1, spec
    code, out, _ = collperf("simulate", "--help", env={"COLUMNS": "400"})
    assert code == 0
    folded = " ".join(out.replace("│", " ").split())
    for form in forms:
        assert form in folded, form


def test_a_file_no_command_could_write_is_refused_before_any_rank_starts(capsys):
    # /proc takes no new file though its permission bits allow one: refused up front, not after the first row
    err = cli_error(capsys, "bench", "--ranks", "2", "-b", "1K", "-e", "4K", "-J", "/proc/collperf-x.json")
    assert "--json-file /proc/collperf-x.json: cannot be written" in err and "row" not in err


def test_trace_refuses_an_algorithm_it_does_not_price(capsys, tmp_path):
    err = cli_error(capsys, "trace", tmp_path, "-A", "rnig")
    assert "-A rnig: not an algorithm collperf prices: did you mean ring?" in err


def test_a_catalogue_system_given_as_a_topology_points_to_cluster(capsys):
    err = cli_error(capsys, "simulate", "allreduce", "-A", "ring", "--size", "1M", "-t", "dgx-h100")
    assert "'dgx-h100' is a system of the catalogue, not a topology: give it as --cluster dgx-h100" in err
