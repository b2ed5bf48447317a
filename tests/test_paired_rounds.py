"""Calls timed side by side: the rounds' loop (runtime/rounds.py, with a fake barrier and clock) and the paired
ratio's median and bounds (model/paired_ratio.py), by hand and as properties."""

import math

import pytest
from hypothesis import given, settings, strategies as st

from collperf.errors import RunError
from collperf.model.paired_ratio import bound_rank, paired_ratio
from collperf.runtime.rounds import MAX_ROUNDS, order_of, rounds_for, timed_round


# --- the paired ratio ---------------------------------------------------------------------------------------

def test_bound_ranks_by_hand():
    # 7 rounds: P(B <= 0) = 1/128 <= 5 %, P(B <= 1) = 8/128 = 6.25 % > 5 %: the extremes
    assert bound_rank(7) == 1
    # 21 rounds: P(B <= 6) = 82160 / 2^21 = 3.9 %, P(B <= 7) = 198440 / 2^21 = 9.5 %: x_(7) .. x_(15)
    assert bound_rank(21) == 7
    # 3 rounds: P(B <= 0) = 12.5 % > 5 %: nothing tighter than the extremes exists
    assert bound_rank(3) == 1 and bound_rank(1) == 1
    with pytest.raises(RunError, match="at least one round"):
        bound_rank(0)


@given(st.integers(1, 400), st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99]))
def test_bound_rank_is_the_tightest_that_keeps_the_confidence(n, confidence):
    k = bound_rank(n, confidence)
    below = lambda j: sum(math.comb(n, i) for i in range(j + 1)) / 2 ** n   # P(Binomial(n, 1/2) <= j)
    assert 1 <= k <= (n + 1) // 2
    if k > 1:   # x_(k) .. x_(n+1-k) misses the median with probability 2 P(B <= k - 1) at most 1 - confidence
        assert 2 * below(k - 1) <= 1 - confidence + 1e-12
    if k < (n + 1) // 2:   # and one rank tighter would not
        assert 2 * below(k) > 1 - confidence


def test_paired_ratio_by_hand():
    # rounds: 2/1, 4/1, 6/3 -> ratios 2, 4, 2: median 2, bounds the extremes (3 rounds)
    r = paired_ratio([2.0, 4.0, 6.0], [1.0, 1.0, 3.0])
    assert (r.median, r.low, r.high, r.rounds) == (2.0, 2.0, 4.0, 3)
    # 21 rounds with ratios 1.00 .. 1.20 in steps of 0.01: median 1.10, bounds x_(7) = 1.06 and x_(15) = 1.14
    r = paired_ratio([1 + i / 100 for i in range(21)], [1.0] * 21)
    assert r.median == pytest.approx(1.10) and r.low == pytest.approx(1.06) and r.high == pytest.approx(1.14)
    assert r.to_json()["confidence"] == 0.9


@pytest.mark.parametrize("a, b", [([1.0, 2.0], [1.0]), ([], []), ([1.0, 0.0], [1.0, 1.0]), ([1.0], [-1.0])])
def test_paired_ratio_refuses_unpaired_or_non_positive_times(a, b):
    with pytest.raises(RunError, match="paired positive times"):
        paired_ratio(a, b)


times = st.lists(st.floats(1e-4, 10.0), min_size=1, max_size=41)


@given(times)
def test_a_call_against_itself_is_exactly_one(t):
    r = paired_ratio(t, t)
    assert r.median == r.low == r.high == 1.0


@given(times, st.data())
def test_a_load_that_drifts_between_rounds_cancels_out(ours, data):
    # the built-in 1.25x slower in every round, while each round's load scales both calls by its own factor:
    # the paired ratio is 0.8 whatever the load did; medians taken apart would follow the load
    load = data.draw(st.lists(st.floats(0.1, 20.0), min_size=len(ours), max_size=len(ours)))
    r = paired_ratio([o * f for o, f in zip(ours, load)], [1.25 * o * f for o, f in zip(ours, load)])
    assert r.median == pytest.approx(0.8) and r.low == pytest.approx(0.8) and r.high == pytest.approx(0.8)


@given(st.lists(st.tuples(st.floats(1e-3, 10.0), st.floats(1e-3, 10.0)), min_size=1, max_size=41).filter(
    lambda pairs: len(pairs) % 2 == 1))
def test_swapping_the_calls_inverts_the_ratio_and_swaps_the_bounds(pairs):
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    ab, ba = paired_ratio(a, b), paired_ratio(b, a)
    assert ab.median == pytest.approx(1 / ba.median)
    assert ab.low == pytest.approx(1 / ba.high) and ab.high == pytest.approx(1 / ba.low)
    assert ab.low <= ab.median <= ab.high


# --- the rounds' loop -----------------------------------------------------------------------------------------

@given(st.lists(st.text(min_size=1, max_size=3), min_size=2, max_size=5, unique=True), st.integers(1, 30))
def test_the_order_alternates_so_that_no_call_always_goes_first(names, pairs_of_rounds):
    rounds = [order_of(names, i) for i in range(2 * pairs_of_rounds)]
    assert all(sorted(o) == sorted(names) for o in rounds)
    # over whole pairs of rounds every name stands at position j as often as at position n-1-j
    for name in names:
        at = [o.index(name) for o in rounds]
        assert sorted(at) == sorted(len(names) - 1 - j for j in at)
    firsts = [o[0] for o in rounds]
    assert firsts.count(names[0]) == firsts.count(names[-1]) == pairs_of_rounds


class FakeRank:
    """A barrier, a clock and calls that log what happens; each call takes its given seconds of fake time,
    the barrier 1 s (a wait that must stay off the clock)."""

    def __init__(self, call_s: dict):
        self.now, self.log, self.call_s = 0.0, [], call_s
        self.calls = {name: (lambda name=name: self._call(name)) for name in call_s}

    def _call(self, name):
        self.log.append(name)
        self.now += self.call_s[name]

    def barrier(self):
        self.log.append("barrier")
        self.now += 1.0

    def clock(self):
        self.log.append("clock")
        return self.now

    def sync(self):
        self.log.append("sync")


def test_each_call_is_timed_alone_after_its_own_barrier():
    rank = FakeRank({"auto": 0.25, "builtin": 0.5})
    first = timed_round(["auto", "builtin"], 0, rank.calls, rank.barrier, rank.clock, rank.sync)
    second = timed_round(["auto", "builtin"], 1, rank.calls, rank.barrier, rank.clock, rank.sync)
    assert first == second == {"auto": 0.25, "builtin": 0.5}   # the barriers' second each is not in the times
    one = lambda name: ["barrier", "clock", name, "sync", "clock"]
    assert rank.log == one("auto") + one("builtin") + one("builtin") + one("auto")


def test_rounds_fill_the_time_budget_for_short_calls_only():
    assert rounds_for(5, 1.0, 0.01) == 100          # 1 s of 10 ms rounds
    assert rounds_for(5, 1.0, 0.5) == 5             # long calls: the asked number
    assert rounds_for(5, 1.0, 1e-6) == MAX_ROUNDS   # capped
    assert rounds_for(5, 0.0, 0.01) == rounds_for(5, 1.0, 0.0) == 5   # no budget, or no warm-up to time
    assert rounds_for(400, 1.0, 1e-6) == 400        # never fewer than asked
