"""-A auto's confirmation by measurement (model/auto_confirm.py) with a fake measurer and a fake calibration."""

import pytest

from collperf.model.auto_confirm import DECISIVE_MARGIN, MEASURED_MARGIN, confirm, needs_confirmation, octave
from collperf.model.builtin_cost import BuiltinFit
from collperf.model.network import Link, Network
from collperf.model.select import AutoChoice, auto_choices

MiB = 1 << 20


class FakeMeasure:
    """Times each candidate as the table says (seconds), counting the calls."""

    def __init__(self, ours_s: float, builtin_s: float):
        self.ours_s, self.builtin_s, self.calls = ours_s, builtin_s, []

    def __call__(self, algorithm, segments, size_bytes):
        self.calls.append((algorithm, segments, size_bytes))
        return self.ours_s, self.builtin_s


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
    measure = FakeMeasure(ours_s=2e-3, builtin_s=1e-3)   # ours predicted faster, measured twice as slow
    (c,) = confirm([close_call()], measure, {})
    assert c.algorithm == "builtin" and c.segments is None
    assert c.decided_by == "measured"
    assert c.predicted_s == pytest.approx(1.5e-3)       # the built-in's own fit
    assert c.measured["ours_us"] == pytest.approx(2000) and c.measured["builtin_us"] == pytest.approx(1000)
    assert c.measured["algorithm"] == "ring"


def test_ours_must_measure_faster_by_the_margin():
    just_faster = FakeMeasure(ours_s=1.0, builtin_s=MEASURED_MARGIN * 0.999)
    assert confirm([close_call()], just_faster, {})[0].algorithm == "builtin"
    faster = FakeMeasure(ours_s=1.0, builtin_s=MEASURED_MARGIN * 1.001)
    (c,) = confirm([close_call()], faster, {})
    assert c.algorithm == "ring" and c.decided_by == "measured"


def test_a_confirmed_pick_is_cached_per_octave():
    cache, measure = {}, FakeMeasure(ours_s=1e-3, builtin_s=2e-3)
    first = confirm([close_call(4 * MiB)], measure, cache, ("g", "allreduce", 0))
    again = confirm([close_call(4 * MiB + 4096), close_call(8 * MiB)], measure, cache, ("g", "allreduce", 0))
    assert [c.algorithm for c in first + again] == ["ring"] * 3
    # 4 MiB and 4 MiB + 4 KiB share octave 22; 8 MiB is octave 23: two timings in all
    assert [call[2] for call in measure.calls] == [4 * MiB, 8 * MiB]
    assert again[0].measured["size"] == 4 * MiB      # the decision says which size was timed
    other_group = confirm([close_call(4 * MiB)], measure, cache, ("h", "allreduce", 0))
    assert len(measure.calls) == 3 and other_group[0].algorithm == "ring"


def test_a_decisive_margin_and_a_builtin_pick_are_not_measured():
    measure = FakeMeasure(1.0, 1e-9)
    decisive = close_call(predicted_s=1e-3, builtin_s=DECISIVE_MARGIN * 1e-3)
    no_fit = AutoChoice(MiB, "ring", 1e-3)
    builtin = AutoChoice(MiB, "builtin", 1e-3, None, 1e-3)
    assert not any(map(needs_confirmation, (decisive, no_fit, builtin)))
    assert confirm([decisive, no_fit, builtin], measure, {}) == [decisive, no_fit, builtin]
    assert measure.calls == []


def test_octaves():
    assert octave(1) == 0 and octave(MiB) == 20 and octave(2 * MiB - 1) == 20 and octave(2 * MiB) == 21


def test_a_choice_says_what_decided_it_in_json():
    c = confirm([close_call()], FakeMeasure(1e-3, 1e-2), {})[0]
    doc = c.to_json()
    assert doc["decided_by"] == "measured" and doc["algorithm"] == "ring"
    assert doc["measured"]["builtin_us"] == pytest.approx(1e4)
    assert doc["builtin_predicted_us"] == pytest.approx(1500)
