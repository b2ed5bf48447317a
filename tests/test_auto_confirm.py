"""-A auto's confirmation by measurement (model/auto/confirm.py) with a fake measurer and a fake calibration."""

import math

import pytest

from collperf.model.auto.confirm import (
    DECISIVE_MARGIN,
    FIRST_ROUNDS,
    MEASURED_MARGIN,
    MORE_ROUNDS,
    confirm,
    needs_confirmation,
    octave,
    verdict,
)
from collperf.model.auto.builtin_cost import BuiltinFit
from collperf.model.network import Link, Network
from collperf.model.auto.select import TIE_MARGIN, AutoChoice, auto_choices
from collperf import ingest
from collperf.lab.bench import auto_plan
from collperf.lab.results import Results, to_text
from collperf.runtime.job import BenchJob
from collperf.runtime.launch import Job, run_local
from collperf.spec import SweepSpec

MiB = 1 << 20


class FakeMeasure:
    """Times each candidate as given (seconds, one pair per round; a number: three equal rounds), counting calls."""

    def __init__(self, ours_s, builtin_s):
        self.ours_s, self.builtin_s, self.calls = ours_s, builtin_s, []

    def __call__(self, algorithm, segments, size_bytes, rounds):
        self.calls.append((algorithm, segments, size_bytes))
        rounds = lambda x: list(x) if isinstance(x, (list, tuple)) else [x] * 3
        return rounds(self.ours_s), rounds(self.builtin_s)


def close_call(size=4 * MiB, algorithm="ring", predicted_s=1e-3, builtin_s=1.5e-3):
    return AutoChoice(size, algorithm, predicted_s, None, builtin_s)


def test_auto_picks_the_builtin_when_the_calibration_says_it_is_fastest_and_measures_nothing():
    # a fake calibration: 1 ms per message at 100 MB/s for ours, the built-in 10 us + 0.1 ns/B
    slow = Network.of(Link(1e-3, 1e8, 1e9), 4)
    fast = BuiltinFit("allreduce", latency_s=10e-6, seconds_per_byte=1e-10)
    choices = auto_choices("allreduce", slow, [MiB, 16 * MiB], builtin=fast)
    measure = FakeMeasure(1e-9, 1.0)
    out = confirm(choices, measure, {})
    assert [c.algorithm for c in out] == ["builtin", "builtin"]
    assert {c.decided_by for c in out} == {"model"}
    assert measure.calls == []


def test_a_measured_slower_candidate_is_rejected_for_the_builtin():
    measure = FakeMeasure(ours_s=2e-3, builtin_s=1e-3)  # ours predicted faster, measured twice as slow
    (c,) = confirm([close_call()], measure, {})
    assert c.algorithm == "builtin" and c.segments is None
    assert c.decided_by == "measured"
    assert c.predicted_s == pytest.approx(1.5e-3)  # the built-in's own fit
    assert c.measured["ours_us"] == pytest.approx(2000) and c.measured["builtin_us"] == pytest.approx(1000)
    assert c.measured["algorithm"] == "ring"


def test_ours_must_measure_faster_by_the_margin():
    just_faster = FakeMeasure(ours_s=1.0, builtin_s=MEASURED_MARGIN * 0.999)
    assert confirm([close_call()], just_faster, {})[0].algorithm == "builtin"
    faster = FakeMeasure(ours_s=1.0, builtin_s=MEASURED_MARGIN * 1.001)
    (c,) = confirm([close_call()], faster, {})
    assert c.algorithm == "ring" and c.decided_by == "measured"


def test_ours_must_win_the_rounds_too_not_only_the_medians():
    # a load that drifts: ours wins the medians (2.0 vs 2.5) but loses every round to the built-in beside it
    ours, theirs = [2.0, 2.0, 2.0, 4.0, 4.0], [1.0, 1.0, 2.5, 3.0, 3.0]
    (c,) = confirm([close_call()], FakeMeasure(ours, theirs), {})
    assert c.algorithm == "builtin"
    # by hand: medians 2.0 and 2.5 (1.25x), ratios 2, 2, 0.8, 1.33, 1.33: median 1.33
    assert c.measured["ours_us"] == pytest.approx(2e6) and c.measured["builtin_us"] == pytest.approx(2.5e6)
    assert c.measured["paired_ratio"] == pytest.approx(4 / 3)
    # the same times, each round's pair together: ours wins every round by 1.25x
    (c,) = confirm([close_call()], FakeMeasure([1.0, 1.6, 2.0, 2.4, 3.2], [1.25, 2.0, 2.5, 3.0, 4.0]), {})
    assert c.algorithm == "ring" and c.measured["paired_ratio"] == pytest.approx(0.8)


class Batches:
    """Gives each call of the measurer the next batch of ratios (ours / built-in per round; the built-in 1 ms),
    recording how many rounds each call asked for."""

    def __init__(self, *batches):
        self.batches, self.asked = list(batches), []

    def __call__(self, algorithm, segments, size_bytes, rounds):
        self.asked.append(rounds)
        ratios = self.batches.pop(0)
        return [r * 1e-3 for r in ratios], [1e-3] * len(ratios)


def test_a_clear_win_or_loss_is_decided_in_the_first_rounds():
    win = Batches([0.8] * 6 + [0.85])  # every round won by >= 1.17x
    assert confirm([close_call()], win, {})[0].algorithm == "ring" and win.asked == [FIRST_ROUNDS]
    loss = Batches([0.95, 1.0, 1.2, 0.97, 1.1, 0.99, 1.3])  # even the best round (0.95) misses 1/1.1
    assert confirm([close_call()], loss, {})[0].algorithm == "builtin" and loss.asked == [FIRST_ROUNDS]


def test_a_close_call_gets_more_rounds_and_the_builtin_unless_they_confirm_it():
    # 6 of 7 rounds won by 1.18x, one lost: median 0.85 passes the margin, the upper bound (the max, 1.05) does
    # not say faster: 14 more rounds, where the two tie (1.0): 21 ratios, 6 x 0.85, 1.05 and 14 x 1.0: median 1.0
    tie = Batches([0.85] * 6 + [1.05], [1.0] * MORE_ROUNDS)
    (c,) = confirm([close_call()], tie, {})
    assert tie.asked == [FIRST_ROUNDS, MORE_ROUNDS] and c.algorithm == "builtin"
    assert c.measured["rounds"] == 21 and c.measured["paired_ratio"] == pytest.approx(1.0)
    # the same first look, then 14 rounds at 0.85: 20 x 0.85 and 1.05: median 0.85, bounds x_(7), x_(15) = 0.85
    win = Batches([0.85] * 6 + [1.05], [0.85] * MORE_ROUNDS)
    (c,) = confirm([close_call()], win, {})
    assert c.algorithm == "ring" and c.measured["ratio_high"] == pytest.approx(0.85)


def test_verdicts_by_hand():
    seen = {"ours_us": 1.0, "builtin_us": 1.2, "paired_ratio": 0.85, "ratio_low": 0.8, "ratio_high": 0.95}
    assert verdict(seen) == "ours"
    assert verdict({**seen, "ratio_high": 1.0}) == "unsure"  # not surely faster
    assert verdict({**seen, "builtin_us": 1.05}) == "unsure"  # medians 1.05x: short of the margin
    assert verdict({**seen, "paired_ratio": 0.95, "ratio_low": 0.92}) == "builtin"  # 0.92 x 1.1 > 1


def test_the_model_ties_mesh_and_pairwise_alltoall_on_a_slow_link():
    # 4 ranks, alpha 1 ms, 25 MB/s, 4 MiB alltoall: each rank sends 3 MiB. mesh: 1 step, 1 ms + 3 MiB / 25 MB/s =
    # 126.8 ms; pairwise: 3 steps, 3 ms + the same bytes = 128.8 ms: 1.6 % apart, a tie (TIE_MARGIN 10 %)
    slow = Network.of(Link(1e-3, 25e6, 1e9), 4)
    gloo = BuiltinFit("alltoall", latency_s=1e-3, seconds_per_byte=1 / 15e6)
    (c,) = auto_choices("alltoall", slow, [4 * MiB], builtin=gloo)
    assert c.algorithm == "mesh" and c.predicted_s == pytest.approx(1e-3 + 3 * MiB / 25e6)
    assert c.runner_up == ("pairwise", None, pytest.approx(3e-3 + 3 * MiB / 25e6))
    assert c.to_json()["runner_up"]["algorithm"] == "pairwise"
    # alpha 50 ms: pairwise 276 ms against mesh's 176 ms, no tie
    (c,) = auto_choices("alltoall", Network.of(Link(50e-3, 25e6, 1e9), 4), [4 * MiB], builtin=gloo)
    assert c.algorithm == "mesh" and c.runner_up is None and TIE_MARGIN < 276 / 176


class PerAlgorithm:
    """Ours / built-in per round for each algorithm (7 equal rounds), recording which were timed."""

    def __init__(self, ratios: dict):
        self.ratios, self.timed = ratios, []

    def __call__(self, algorithm, segments, size_bytes, rounds):
        self.timed.append(algorithm)
        return [self.ratios[algorithm] * 1e-3] * rounds, [1e-3] * rounds


def tie(size=4 * MiB):
    return AutoChoice(size, "mesh", 0.127, None, 0.28, runner_up=("pairwise", None, 0.129))


def test_a_tie_runs_the_one_that_measured_faster():
    measure = PerAlgorithm({"mesh": 0.8, "pairwise": 0.7})
    (c,) = confirm([tie()], measure, {})
    assert (c.algorithm, c.predicted_s, c.decided_by) == ("pairwise", 0.129, "measured")
    assert measure.timed == ["mesh", "pairwise"] and c.runner_up == ("mesh", None, 0.127)
    assert c.measured["paired_ratio"] == pytest.approx(0.7)
    assert c.measured["runner_up"] == {"algorithm": "mesh", "paired_ratio": pytest.approx(0.8)}
    # the pick short of the margin (0.95), the runner-up well past it (0.85): the runner-up
    assert confirm([tie()], PerAlgorithm({"mesh": 0.95, "pairwise": 0.85}), {})[0].algorithm == "pairwise"
    # the pick faster: the pick
    assert confirm([tie()], PerAlgorithm({"mesh": 0.6, "pairwise": 0.7}), {})[0].algorithm == "mesh"


def test_a_tie_where_neither_passes_runs_the_builtin():
    (c,) = confirm([tie()], PerAlgorithm({"mesh": 1.2, "pairwise": 0.98}), {})
    assert c.algorithm == "builtin" and c.measured["algorithm"] == "mesh"
    assert c.measured["runner_up"]["algorithm"] == "pairwise"


def test_a_confirmed_pick_is_cached_per_octave():
    cache, measure = {}, FakeMeasure(ours_s=1e-3, builtin_s=2e-3)
    first = confirm([close_call(4 * MiB)], measure, cache, ("g", "allreduce", 0))
    again = confirm([close_call(4 * MiB + 4096), close_call(8 * MiB)], measure, cache, ("g", "allreduce", 0))
    assert [c.algorithm for c in first + again] == ["ring"] * 3
    # 4 MiB and 4 MiB + 4 KiB share octave 22; 8 MiB is octave 23: two timings in all
    assert [call[2] for call in measure.calls] == [4 * MiB, 8 * MiB]
    assert again[0].measured["size"] == 4 * MiB  # the decision says which size was timed
    other_group = confirm([close_call(4 * MiB)], measure, cache, ("h", "allreduce", 0))
    assert len(measure.calls) == 3 and other_group[0].algorithm == "ring"


def test_a_decisive_margin_and_a_builtin_pick_are_not_measured():
    measure = FakeMeasure(1.0, 1e-9)
    decisive = close_call(predicted_s=1e-3, builtin_s=4e-3)
    no_fit = AutoChoice(MiB, "ring", 1e-3)
    builtin = AutoChoice(MiB, "builtin", 1e-3, None, 1e-3)
    assert not any(needs_confirmation(c, decisive_margin=4) for c in (decisive, no_fit, builtin))
    assert confirm([decisive, no_fit, builtin], measure, {}, decisive_margin=4) == [decisive, no_fit, builtin]
    assert measure.calls == []
    # by default no margin is decisive: a pick of ours 1000x faster by the model is still timed
    assert needs_confirmation(close_call(predicted_s=1e-6, builtin_s=1e-3)) and DECISIVE_MARGIN == math.inf


def test_octaves():
    assert octave(1) == 0 and octave(MiB) == 20 and octave(2 * MiB - 1) == 20 and octave(2 * MiB) == 21


def test_a_choice_says_what_decided_it_in_json():
    c = confirm([close_call()], FakeMeasure(1e-3, 1e-2), {})[0]
    doc = c.to_json()
    assert doc["decided_by"] == "measured" and doc["algorithm"] == "ring"
    assert doc["measured"]["builtin_us"] == pytest.approx(1e4)
    assert doc["builtin_predicted_us"] == pytest.approx(1500)


# --- on real gloo ranks: the user collectives and the bench go through the same chooser ---------------------


def _never_slower(d: dict) -> bool:
    """A decision auto may make: the built-in, ours by a decisive predicted margin, or ours measured faster."""
    if d["algorithm"] == "builtin":
        return True
    if d["decided_by"] == "measured":
        return d["measured"]["ours_us"] * MEASURED_MARGIN <= d["measured"]["builtin_us"]
    return d.get("builtin_predicted_us") is None  # no built-in priced: nothing to be slower than


@pytest.mark.multiprocess
def test_user_collectives_choose_the_builtin_through_the_same_chooser():
    pytest.importorskip("torch")
    # ours priced on an absurd network (1 s per message, 1 kB/s): the built-in's fit wins by the model alone
    awful = Network.of(Link(1.0, 1e3, 1e9), 2)
    cases = [
        ("all_reduce", 1 << 14, "float32", "sum", "auto", 0),
        ("all_gather_into_tensor", 1 << 12, "float32", "sum", "auto", 0),
        ("broadcast", 1 << 12, "float32", "sum", "auto", 1),
    ]
    out = run_local(Job("collperf.runtime.ops_check:selftest_decisions", ([(None, cases, awful)],)), 2, timeout_s=300)
    assert [w for _, _, w in out["wrong"]] == [0, 0, 0]
    assert [(d["collective"], d["algorithm"], d["decided_by"]) for d in out["decisions"]] == [
        (c, "builtin", "model") for c in ("allreduce", "allgather", "broadcast")
    ]
    # calibrated on the ranks themselves: whatever auto picks, it is never a pick measured slower
    cases = [
        ("all_reduce", 1 << 18, "float32", "sum", "auto", 0),
        ("reduce_scatter_tensor", 1 << 17, "float32", "sum", "auto", 0),
    ]
    out = run_local(Job("collperf.runtime.ops_check:selftest_decisions", ([(None, cases)],)), 2, timeout_s=300)
    assert [w for _, _, w in out["wrong"]] == [0, 0]
    assert len(out["decisions"]) == 2 and all(map(_never_slower, out["decisions"])), out["decisions"]


@pytest.mark.multiprocess
def test_bench_auto_rows_say_what_decided_them():
    pytest.importorskip("torch")
    config = BenchJob.of(
        SweepSpec(
            collective="reducescatter",
            algorithms="auto,builtin",
            min_bytes="256K",
            max_bytes="1M",
            factor=4,
            iters=2,
            warmup=0,
            progress=False,
        )
    )
    config = auto_plan(config, 2, None, 2)  # no network given: the ranks calibrate, choose and confirm
    out = run_local(Job("collperf.runtime.measure:head_to_head", (config,)), 2, timeout_s=300)
    decided = [r["auto"] for r in out["table"]["auto"]]
    assert [d["size"] for d in decided] == [256 << 10, 1 << 20]
    assert all(d["decided_by"] in ("model", "measured") for d in decided)
    assert all(map(_never_slower, decided)), decided
    assert all(r["wrong"] == 0 for a in ("auto", "builtin") for r in out["table"][a])


def test_the_bench_text_says_which_picks_a_measurement_decided():
    measured = confirm([close_call(4096)], FakeMeasure(2e-3, 1e-3), {})[0]
    model = AutoChoice(1024, "builtin", 1e-4, None, 1e-4)
    rows = []
    for c in (model, measured):
        m = {"time_us": 100.0, "min_us": 100.0, "p50_us": 100.0, "algbw": 0.01, "busbw": 0.015, "wrong": 0}
        rows.append(
            {
                "algorithm": "auto",
                "size": c.size_bytes,
                "count": c.size_bytes // 4,
                "type": "float",
                "redop": "sum",
                "root": -1,
                "out_of_place": m,
                "in_place": None,
                "auto": c.to_json(),
            }
        )
    config = {
        "sizes": [1024, 4096],
        "step": "4(factor)",
        "factor": 4,
        "warmup": 1,
        "iters": 2,
        "check": 1,
        "dtype": "float32",
        "op": "sum",
        "algorithms": ["auto"],
        "slice_bytes": 0,
        "auto_network": "quick calibration",
        "auto": [model.to_json(), measured.to_json()],
    }
    text = to_text(Results("allreduce", 4, "gloo", config, rows))
    assert "# auto: 4096 B decided by measurement at 4096 B: ring 2000 us vs builtin 1000 us -> builtin" in text
    assert "1024 B decided" not in text
    assert sum(len(t.rows) for t in ingest.parse(text, "auto.txt")) == 2  # the comment lines keep it nccl-tests text
