"""A misspelt name is answered with the name meant, not only the list of every choice: collectives (nccl-tests'
program names too), clusters, models and algorithms, all through errors.did_you_mean."""

import pytest

from collperf.errors import UsageError, did_you_mean, nearest
from cli_support import cli_error


def test_nearest_takes_aliases_names_that_contain_it_and_the_nearest_spelling():
    assert nearest("all_reduce_perf", ["allreduce"], {"all_reduce_perf": "allreduce"}) == ["allreduce"]
    assert nearest("nvl72", ["gb200-nvl72", "gb300-nvl72", "dgx-h100"]) == ["gb200-nvl72", "gb300-nvl72"]
    assert nearest("rign", ["ring", "rhd", "mesh"]) == ["ring"]
    assert nearest("qwerty", ["ring", "rhd"]) == []
    assert did_you_mean("rign", ["ring"]) == "did you mean ring? " and did_you_mean("zzz", ["ring"]) == ""


@pytest.mark.parametrize(
    "args, meant",
    [
        (["predict", "all_reduce_perf", "--cluster", "dgx-h100", "-s", "1M"], "did you mean allreduce?"),
        (["predict", "alreduce", "--cluster", "dgx-h100", "-s", "1M"], "did you mean allreduce?"),
        (["predict", "allreduce", "--cluster", "dgx-h10", "-s", "1M"], "did you mean dgx-h100?"),
        (["predict", "allreduce", "--cluster", "nvl72", "-s", "1M"], "did you mean gb200-nvl72 or gb300-nvl72?"),
        (["predict", "allreduce", "--cluster", "dgx-h100", "-A", "rign", "-s", "1M"], "did you mean ring?"),
        (
            ["predict", "allreduce", "--cluster", "dgx-h100", "-A", "hierarchial", "-s", "1M"],
            "did you mean hierarchical?",
        ),
        (["bench", "allreduce", "--ranks", "2", "-A", "rign"], "did you mean ring?"),
        (["plan", "--model", "lama3-8b"], "did you mean llama3-8b?"),
        (
            ["diagnose", "examples/14_h100-ib400-2node-16gpu-allreduce.txt", "--cluster", "dgx-h10"],
            "did you mean dgx-h100?",
        ),
    ],
)
def test_every_name_lookup_says_what_was_meant(capsys, monkeypatch, args, meant):
    from pathlib import Path

    monkeypatch.chdir(Path(__file__).parent.parent)
    assert meant in cli_error(capsys, *args)


def test_the_python_api_says_it_too():
    from collperf.collectives import get_collective

    with pytest.raises(UsageError, match="did you mean reducescatter"):
        get_collective("reduce_scatter_perf_x")
