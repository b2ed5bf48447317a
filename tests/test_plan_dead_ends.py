"""plan's dead ends: an empty search says why and what would fit; numbers without units, or impossible on the
GPU, are refused; model flags that describe two models are refused; the memory kept free is stated; the hint
to see one layout in detail runs as printed; --help names every preset."""

import json
import shlex

import pytest
from typer.testing import CliRunner

from collperf import api
from collperf.cli import app
from collperf.errors import UsageError
from collperf.plan import MODELS, Layout, get_model, plan
from collperf.model.hardware.presets import get_preset
from cli_support import cli_error

runner = CliRunner()


def _run(*args):
    return runner.invoke(app, ["plan", *map(str, args)], terminal_width=400)


def test_more_nodes_than_the_batch_can_split_is_explained_not_an_empty_table():
    res = _run("--nodes", 100000)
    text = " ".join(res.output.split())
    assert res.exit_code == 1, res.output
    assert "global batch of 1024 sequences" in text and "fewer --nodes" in text and "┏" not in res.output


def test_a_model_too_large_for_the_nodes_names_the_fewest_nodes_and_the_tightest_layout():
    res = _run("--model", "llama3-405b", "--nodes", 2, "--json")
    assert res.exit_code == 1
    doc = json.loads(res.output)
    assert doc["plans"] == [] and doc["min_nodes"] and doc["tightest"]["total_bytes"] > 72 * 2**30
    assert f"--nodes {doc['min_nodes']}" in doc["why_empty"] and "tightest" in doc["why_empty"]
    # the figure is the fewest: one node less has no layout that fits, that many has one
    assert _run("--model", "llama3-405b", "--nodes", doc["min_nodes"] - 1).exit_code == 1
    assert _run("--model", "llama3-405b", "--nodes", doc["min_nodes"]).exit_code == 0


@pytest.mark.parametrize(
    "args, words",
    [
        (["--gpu-memory", "80"], ["80 what?", "80GiB"]),
        (["--gpu-memory", "80MB"], ["less than any training GPU"]),
        (["--gpu-memory", "800GB"], ["more than the H100", "80.0 GiB"]),
        (["--flops", "400"], ["400 what?", "400TFLOPS"]),
        (["--flops", "4000TFLOPS"], ["4.0x", "989 TFLOP/s", "H100"]),
        (["--memory-headroom", "10"], ["10 what?", "10%"]),
        (["--memory-headroom", "100%"], ["below 100%"]),
        (["--model", "70b", "--params", "7e9"], ["--model 70b", "7e+10", "Drop --model"]),
    ],
)
def test_numbers_without_units_or_impossible_on_the_gpu_are_refused(capsys, args, words):
    message = cli_error(capsys, "plan", "--nodes", "2", *args)
    assert all(w in message for w in words), message


def test_a_reshaped_preset_whose_params_agree_is_accepted():
    spec = api.plan_spec("70b", {"params": 35e9, "layers": 40}, {"tp": 8, "pp": 1, "dp": 1})
    assert spec.model.layers == 40 and spec.model.params == 35e9
    with pytest.raises(UsageError, match="about 3.5e\\+10"):
        api.plan_spec("70b", {"params": 70e9, "layers": 40}, {"tp": 8})


def test_the_memory_kept_free_is_stated_and_a_nearly_full_gpu_does_not_fit_by_default():
    model, cluster = get_model("70b"), get_preset("dgx-h100", 2)

    # 70b as tp8 x pp2 with sequence parallelism and 2 micro-batches: 75.8 of 80 GiB, not usable once 10 % is free
    def memory(headroom):
        return plan(
            model, Layout(8, 2, 1, sequence_parallel=True, micro_batches=2, memory_headroom=headroom), cluster
        ).memory

    full = memory(0.0)
    assert full.fits and 72 * 2**30 < full.total_bytes < 80 * 2**30, full.total_bytes / 2**30
    assert memory(0.10).fits is False
    layout = ["--tp", 8, "--pp", 2, "--dp", 1, "--sp", "--micro-batches", 2, "--nodes", 2]
    res = _run(*layout)
    assert "72.0 GiB usable (80.0 GiB less 10 % kept free: --memory-headroom)" in res.output
    assert "does not fit" in res.output
    assert "does not fit" not in _run(*layout, "--memory-headroom", "0%").output
    # the search ranks nothing above the usable memory
    found = _run("--nodes", 2, "--json")
    assert all(p["memory"]["total_bytes"] <= 72 * 2**30 for p in json.loads(found.output)["plans"])


def test_the_one_layout_in_detail_hint_runs_as_printed():
    res = _run("--model", "llama3-8b", "--nodes", 2, "--cluster", "dgx-a100", "--gpu-memory", "70GiB", "--top", 2)
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    command = lines[lines.index("one layout in detail (the first above):") + 1]
    words = shlex.split(command)
    assert words[:2] == ["collperf", "plan"] and "--micro-batches" in words and "--gpu-memory" in words
    detail = runner.invoke(app, [*words[1:], "--json"])
    assert detail.exit_code == 0, detail.output
    found = api.plan_search(
        api.plan_spec("llama3-8b", None, {"gpu_memory": "70GiB"}, api.NetworkSpec(nodes=2), "dgx-a100"), 16, 512
    )
    assert json.loads(detail.output)["step_s"] == pytest.approx(found.best.step_s, rel=1e-9)


def test_help_lists_every_model_preset():
    text = " ".join(runner.invoke(app, ["plan", "--help"], terminal_width=1000).output.split())
    missing = [name for name in MODELS if name not in text]
    assert not missing, missing
