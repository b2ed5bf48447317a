"""`crossover --nccl`: the sizes where NCCL's (algorithm, protocol) changes, by hand on an A100 node whose
tuning table tests/test_nccl_model.py works out from tuning.cc's constants, and against NCCL's choice size by size
(expected.select) on systems where the tree correction, the ring plateau, NVLS and PAT take part."""

from __future__ import annotations

import json
from fractions import Fraction
from functools import lru_cache
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from collperf import api
from collperf.cli import app
from collperf.model.nccl import select
from collperf.model.nccl.switches import switch_points
from collperf.model.hardware.catalogue import get_system, system_for_gpu
from collperf.spec import HardwareSpec, NcclCrossoverSpec
from tests.cli_support import cli_error

GIB = 1 << 30


def a100(**changes):
    return system_for_gpu("NVIDIA A100-SXM4-80GB", nodes=1, gpus_per_node=8).with_(**changes)


def first_size_where_slower(lat_a_us, bw_a_GBps, lat_b_us, bw_b_GBps) -> int:
    """The smallest whole size at which a (lower latency, lower bandwidth) takes strictly longer than b:
    lat + n / (1000 bw) us each (tuning.cc ncclTopoGetAlgoTime); at a tie NCCL keeps the entry it met first."""
    tie = Fraction(lat_b_us - lat_a_us) * 1000 / (1 / Fraction(bw_a_GBps) - 1 / Fraction(bw_b_GBps))
    return math.floor(tie) + 1


def test_a100_allreduce_switches_by_hand():
    # the A100 node's table (test_nccl_model.test_a100_allreduce_table_by_hand): ring/LL 15.0 us + n / 50.11 GB/s
    # (87.7 x 8/14), ring/LL128 40.6 us + n / 126.2 GB/s (220.8 x 8/14), ring/Simple 56.0 us + n / 137.1 GB/s
    # (240 x 8/14); LL meets LL128 at 25.6 us x 1000 / (1/50.11 - 1/126.2) = 2128249.4 B, LL128 meets Simple at
    # 15.4 us x 1000 / (1/126.2 - 1/137.1) = 24288000 B exactly, a tie LL128 keeps (listed first)
    ll, ll128, simple = (Fraction(877, 10) * 8 / 14, Fraction(2208, 10) * 8 / 14, Fraction(240) * 8 / 14)
    to_ll128 = first_size_where_slower(Fraction(15), ll, Fraction(406, 10), ll128)
    to_simple = first_size_where_slower(Fraction(406, 10), ll128, Fraction(56), simple)
    assert (to_ll128, to_simple) == (2128250, 24288001)
    points = switch_points("allreduce", a100(), 1, 16 * GIB)
    assert [(s.size_bytes, s.before, s.after) for s in points.switches] == [
        (to_ll128, "ring/LL", "ring/LL128"),
        (to_simple, "ring/LL128", "ring/Simple"),
    ]
    assert [(r.choice, r.from_bytes, r.to_bytes) for r in points.ranges] == [
        ("ring/LL", 1, to_ll128),
        ("ring/LL128", to_ll128, to_simple),
        ("ring/Simple", to_simple, 16 * GIB),
    ]
    # at the switch the two entries' times meet: 15 + 2128249.4 / 50114.3 = 57.468 us
    assert points.switches[0].after_time_s * 1e6 == pytest.approx(57.468, abs=1e-3)
    assert points.switches[1].before_time_s * 1e6 == pytest.approx(40.6 + 24288000 / 126171.43, abs=1e-3)


def test_a100_without_ll128_by_hand():
    # NCCL_PROTO=^LL128: ring/LL (15.0 us, 50.11 GB/s) meets ring/Simple (56.0 us, 137.1 GB/s) at
    # 41 us x 1000 / (1/50.11 - 1/137.1) = 3237850.1 B
    spec = NcclCrossoverSpec(
        collective="allreduce",
        min_size="1K",
        max_size="1G",
        hardware=HardwareSpec(cluster="dgx-a100", nodes=1, proto="^LL128"),
    )
    assumed, points = api.crossover_nccl(spec)
    expected = first_size_where_slower(Fraction(15), Fraction(877, 10) * 8 / 14, Fraction(56), Fraction(240) * 8 / 14)
    assert expected == 3237851 and assumed.system.ranks == 8
    assert [(s.size_bytes, s.before, s.after) for s in points.switches] == [(expected, "ring/LL", "ring/Simple")]
    assert (points.ranges[0].from_bytes, points.ranges[-1].to_bytes) == (1024, GIB)


SYSTEMS = {
    "a100x8": lambda: a100(),
    "h100 2x8": lambda: system_for_gpu("NVIDIA H100 80GB HBM3", nodes=2, gpus_per_node=8),
    "h100 16x8": lambda: system_for_gpu("NVIDIA H100 80GB HBM3", nodes=16, gpus_per_node=8),
    "t4 4x1 simple": lambda: system_for_gpu("Tesla T4", nodes=4).with_(protocols=("Simple",)),
    # the tree correction's steps make these come back to a choice they left (see the test below)
    "aws-p5 4x8": lambda: get_system("aws-p5").with_(nodes=4),
    "azure-nd-a100-v4 2x8": lambda: get_system("azure-nd-a100-v4").with_(nodes=2),
}
COLLECTIVES = ("allreduce", "allgather", "reducescatter", "broadcast")


@lru_cache(maxsize=None)
def points_of(system: str, collective: str):
    return switch_points(collective, SYSTEMS[system](), 1, 16 * GIB)


@pytest.mark.parametrize("system", sorted(SYSTEMS))
@pytest.mark.parametrize("collective", COLLECTIVES)
def test_every_size_of_a_dense_grid_is_in_its_choices_range(system, collective):
    # a dense grid (48 sizes per octave, every 64 x 2^k step of the tree correction and one byte either side):
    # NCCL's choice size by size is the choice of the range holding the size, so no switch was missed
    points, sys_ = points_of(system, collective), SYSTEMS[system]()
    steps = np.array([64 << k for k in range(25)])
    grid = np.unique(np.concatenate([np.round(np.geomspace(1, 16 * GIB, 34 * 48)), steps - 1, steps, steps + 1]))
    picks = select(collective, grid, sys_).choice
    starts = np.array([r.from_bytes for r in points.ranges])
    where = np.searchsorted(starts, grid, side="right") - 1
    assert [points.ranges[i].choice for i in where] == picks
    for s in points.switches:  # each switch is exact: the old choice a byte before, the new one at it
        assert select(collective, [s.size_bytes - 1, s.size_bytes], sys_).choice == [s.before, s.after]
    # the grid holds every step of the lines (module note): one point per octave finds the same switches
    coarse = switch_points(collective, sys_, 1, 16 * GIB, points_per_octave=1)
    assert coarse.switches == points.switches


@settings(max_examples=60, deadline=None)
@given(
    system=st.sampled_from(sorted(SYSTEMS)),
    collective=st.sampled_from(COLLECTIVES),
    size=st.integers(min_value=1, max_value=16 * GIB),
)
def test_any_size_has_its_ranges_choice(system, collective, size):
    points = points_of(system, collective)
    (r,) = [r for r in points.ranges if r.from_bytes <= size < r.to_bytes or size == r.to_bytes == 16 * GIB]
    assert select(collective, [size], SYSTEMS[system]()).choice == [r.choice]


def test_the_h100_cluster_reaches_nvls_tree_and_switches_on_multinode():
    # several nodes: several choices (tree at small sizes, NVLS-tree at large ones on H100 with NVLS)
    choices = [r.choice for r in points_of("h100 16x8", "allreduce").ranges]
    assert choices[0].startswith("tree/") and "nvls-tree/Simple" in choices
    assert len(set(choices)) == len(choices)  # each choice over one range here


def test_a_choice_comes_back_at_a_step_of_the_tree_correction():
    # the tree correction is a step function of log2(size / 64) (tuning.cc treeCorrectionFactor): at 4 MiB =
    # 64 x 2^16 tree/LL128's factor steps and it wins back the sizes NVLS-tree took from it just below; a grid
    # that held no step would see tree/LL128 on both sides and report neither switch
    found = points_of("aws-p5 4x8", "allreduce").switches
    switches = [(s.size_bytes, s.before, s.after) for s in found]
    i = switches.index((4 << 20, "nvls-tree/Simple", "tree/LL128"))
    assert found[i].step == "tree correction: log2(size / 64) = 16" and not found[i - 1].step
    assert switches[i - 1][1:] == ("tree/LL128", "nvls-tree/Simple") and switches[i - 1][0] < 4 << 20
    assert switches[i + 1][1:] == ("tree/LL128", "nvls-tree/Simple")


def test_point_to_point_is_one_choice():
    points = switch_points("alltoall", a100(), 1, GIB)
    assert (
        points.p2p
        and points.switches == []
        and [(r.choice, r.from_bytes, r.to_bytes) for r in points.ranges] == [("p2p/Simple", 1, GIB)]
    )


runner = CliRunner()


def test_cli_text_and_json():
    res = runner.invoke(app, ["crossover", "allreduce", "--nccl", "--cluster", "dgx-a100", "--nodes", "1"])
    assert res.exit_code == 0, res.output
    assert "ring/LL -> ring/LL128" in res.output and "24288001 B" in res.output
    res = runner.invoke(
        app, ["crossover", "allreduce", "--nccl", "--cluster", "dgx-a100", "--nodes", "1", "--max", "1G", "--json"]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["ranks"] == 8 and doc["nodes"] == 1 and doc["max_size_bytes"] == GIB
    assert [s["size_bytes"] for s in doc["switches"]] == [2128250, 24288001]
    assert [(r["algorithm"], r["protocol"]) for r in doc["ranges"]] == [
        ("ring", "LL"),
        ("ring", "LL128"),
        ("ring", "Simple"),
    ]
    assert doc["system"]


@pytest.mark.parametrize(
    "args, words",
    [
        (("--nccl", "-p", "8"), "needs a system: --cluster"),
        (("--nccl", "--cluster", "dgx-a100", "-A", "ring"), "-A: these pick among our algorithms"),
        (("--proto", "LL", "-p", "8"), "add --nccl"),
        (("--sharp", "-p", "8", "--bandwidth", "10GB/s"), "add --nccl"),
        (("--nccl", "--cluster", "dgx-a100", "--min", "1M", "--max", "1M"), "a range has two ends"),
        (("--nccl", "--cluster", "dgx-a100", "--min", "1G", "--max", "1M"), "give the smaller size first"),
    ],
)
def test_cli_errors(capsys, args, words):
    assert words in cli_error(capsys, "crossover", "allreduce", *args)


def test_agrees_with_the_tuner_exports_envelope():
    # export nccl-tuner --cluster finds its rules' boundaries another way (every cell a curve, the fastest followed
    # on a grid with the ring plateau, then bisected: export/nccl_tuner.envelope): the same sizes
    from collperf.export.nccl_tuner import envelope
    from collperf.export.tuner_model import choices

    system = SYSTEMS["aws-p5 4x8"]()
    cells = [c for c in choices(system, collectives=("allreduce",)) if c.algorithm != "default"]
    assert [start for start, _, _ in envelope(cells, 1, 16 * GIB)[1:]] == [
        s.size_bytes for s in points_of("aws-p5 4x8", "allreduce").switches
    ]
