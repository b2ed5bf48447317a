"""What a new user hits: no silent wrong answers, one set of conventions. Each case is a
real CLI call with its exit code and message."""

import json

import pytest
from typer.testing import CliRunner

from collperf.cli import app, main
from collperf import __version__
from collperf.model.hardware.presets import PRESETS, get_preset

UNIFORM = ["--latency", "5us", "--bandwidth", "10GB/s"]


def cli(capsys, monkeypatch, *args) -> tuple[int, str, str]:
    """Run the real entry point (errors become `error:` lines and exit codes, as for a user)."""
    monkeypatch.setattr("sys.argv", ["collperf", *args])
    with pytest.raises(SystemExit) as stop:
        main()
    out, err = capsys.readouterr()
    return stop.value.code, out, err


@pytest.mark.parametrize(
    "args,message",
    [
        (["predict", "allreduce", "--cluster", "dgx-h100", *UNIFORM], "describe a uniform link and would be ignored"),
        (
            ["simulate", "allreduce", "-A", "ring", "-t", "cluster:2x4", "--cluster", "dgx-h100", *UNIFORM],
            "describe a uniform link",
        ),
        (["diagnose", "allreduce", "--time", "500ms"], "one measurement takes a collective, --size and --time"),
        (["diagnose", "examples/01_superbench-a100x8-allreduce.txt", "--cluster", "dgx-z9"], "unknown system"),
        (["plan", "--compute", "2s", "--flops", "400TFLOPS"], "--compute 2s and --flops 400TFLOPS"),
        (["schedule", "allreduce", "-A", "ring", "-p", "100000"], "limited to 1024 ranks"),
        (
            [
                "simulate",
                "allreduce",
                "-A",
                "ring",
                "-s",
                "1M",
                "-t",
                "mesh:4",
                *UNIFORM,
                "--timeline",
                "/nonexistent/t.png",
            ],
            "the folder /nonexistent does not exist",
        ),
        (["diagnose", "examples/01_superbench-a100x8-allreduce.txt", "--plot", "/nonexistent/p.png"], "does not exist"),
    ],
)
def test_what_used_to_be_ignored_or_crash_is_an_error(capsys, monkeypatch, args, message):
    code, _, err = cli(capsys, monkeypatch, *args)
    assert code == 2 and "error:" in err and message in err.replace("\n", " "), err
    assert "Traceback" not in err


def _topology(tmp_path, doc) -> str:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    return str(path)


LINKS = [{"a": r, "b": "sw", "latency": "1us", "bandwidth": "10GB/s"} for r in range(3)]


@pytest.mark.parametrize(
    "doc,message",
    [
        ([1, 2], "expected a JSON object"),
        ({"ranks": 3, "devices": ["sw"], "links": LINKS, "routes": {"0-1": [0, 1]}}, "0 - 1 is not a link"),
        (
            {
                "ranks": 3,
                "devices": ["sw"],
                "links": LINKS + [{"a": 0, "b": "cpu", "latency": "1us", "bandwidth": "1GB/s"}],
            },
            "device 'cpu' is not declared",
        ),
        (
            {
                "ranks": 3,
                "devices": ["sw"],
                "links": LINKS + [{"a": 0, "b": 7, "latency": "1us", "bandwidth": "1GB/s"}],
            },
            "rank 7 >= ranks (3)",
        ),
        (
            {
                "ranks": 3,
                "devices": ["sw"],
                "links": LINKS + [{"a": "sw", "b": 0, "latency": "2us", "bandwidth": "1GB/s"}],
            },
            "is given twice",
        ),
        (
            {"ranks": 3, "devices": ["sw"], "links": LINKS, "routes": {"0-1": [0, "sw", 2, "sw", 1]}},
            "visits a vertex twice",
        ),
        ({"ranks": 3, "devices": ["sw"], "links": LINKS, "routes": {"0-9": [0, "sw", 1]}}, "expected SRC-DST"),
    ],
)
def test_topology_files_are_checked(capsys, monkeypatch, tmp_path, doc, message):
    code, _, err = cli(
        capsys, monkeypatch, "simulate", "allreduce", "-A", "ring", "-s", "1M", "-t", _topology(tmp_path, doc)
    )
    assert code == 2 and message in err.replace("\n", " "), err


def test_a_valid_topology_file_with_a_route_still_simulates(capsys, monkeypatch, tmp_path):
    doc = {"ranks": 3, "devices": ["sw"], "links": LINKS, "routes": {"0-1": [0, "sw", 1]}}
    code, out, _ = cli(
        capsys, monkeypatch, "simulate", "allreduce", "-A", "ring", "-s", "1M", "-t", _topology(tmp_path, doc), "--json"
    )
    assert code == 0 and json.loads(out)["time_s"] > 0


def test_one_rank_is_a_no_op_with_a_note_not_inf_or_nan(capsys, monkeypatch):
    code, out, _ = cli(capsys, monkeypatch, "predict", "allreduce", "-p", "1", *UNIFORM, "-s", "1M", "--json")
    doc = json.loads(out)
    assert code == 0 and "no data" in doc["notes"][0]
    assert all(a["time_s"] == 0 and a["algbw_GBps"] is None and a["busbw_GBps"] is None for a in doc["algorithms"])
    code, out, _ = cli(capsys, monkeypatch, "predict", "allreduce", "-p", "1", *UNIFORM, "-s", "1M")
    assert "inf" not in out and "nan" not in out and "note:" in out


def test_simulate_takes_size_lists_like_predict(capsys, monkeypatch):
    code, out, _ = cli(
        capsys, monkeypatch, "simulate", "allreduce", "-A", "ring", "-s", "1M,2M", "-t", "mesh:4", *UNIFORM, "--json"
    )
    docs = json.loads(out)
    assert code == 0 and [d["size_bytes"] for d in docs] == [1 << 20, 2 << 20]
    assert docs[1]["time_s"] > docs[0]["time_s"]


def test_plan_params_alone_is_a_custom_model_not_70b(capsys, monkeypatch):
    code, out, _ = cli(capsys, monkeypatch, "plan", "--params", "7e9", "--dp", "8", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["model"]["name"] != "70b" and doc["model"]["params"] == 7e9
    assert doc["model"]["layers"] != 80  # not the 70b shape


def test_version_help_without_bool_placeholders_and_one_meaning_of_c(capsys, monkeypatch):
    runner = CliRunner()
    assert runner.invoke(app, ["--version"]).output.strip() == f"collperf {__version__}"
    for command in ("predict", "bench", "plan", "diagnose", "simulate", "verify"):
        help_text = runner.invoke(app, [command, "--help"], terminal_width=200).output
        assert "<bool>" not in help_text and "seed 0" not in help_text, command
    assert "--check" in runner.invoke(app, ["bench", "--help"], terminal_width=200).output
    code, _, err = cli(capsys, monkeypatch, "verify", "-c", "allreduce")
    assert code == 2 and "-c" in err  # -c is bench's --check (nccl-tests); verify spells --collective


def test_presets_have_descriptive_names_and_the_old_one_still_works(capsys, monkeypatch):
    assert "chapter" not in PRESETS and get_preset("chapter") == get_preset("nvlink300-400gbe")
