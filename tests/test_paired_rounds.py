"""Calls timed side by side: the rounds' loop (runtime/rounds.py, with a fake barrier and clock) and the paired
ratio's median and bounds (model/auto/paired_ratio.py), by hand and as properties."""

import math

import pytest
from hypothesis import given, settings, strategies as st

from collperf import api
from collperf.errors import UsageError
from collperf.spec import BenchSpec, SweepSpec
from collperf.model.auto.paired_ratio import bound_rank, paired_ratio
from collperf.runtime.job import BenchJob
from collperf.runtime.rounds import MAX_ROUNDS, order_of, rounds_for, run_rounds, timed_round


# --- the paired ratio ---------------------------------------------------------------------------------------


def test_bound_ranks_by_hand():
    # 7 rounds: P(B <= 0) = 1/128 <= 5 %, P(B <= 1) = 8/128 = 6.25 % > 5 %: the extremes
    assert bound_rank(7) == 1
    # 21 rounds: P(B <= 6) = 82160 / 2^21 = 3.9 %, P(B <= 7) = 198440 / 2^21 = 9.5 %: x_(7) .. x_(15)
    assert bound_rank(21) == 7
    # 3 rounds: P(B <= 0) = 12.5 % > 5 %: nothing tighter than the extremes exists
    assert bound_rank(3) == 1 and bound_rank(1) == 1
    with pytest.raises(UsageError, match="at least one round"):
        bound_rank(0)


@settings(deadline=None)
@given(st.integers(1, 400), st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99]))
def test_bound_rank_is_the_tightest_that_keeps_the_confidence(n, confidence):
    k = bound_rank(n, confidence)
    below = lambda j: sum(math.comb(n, i) for i in range(j + 1)) / 2**n  # P(Binomial(n, 1/2) <= j)
    assert 1 <= k <= (n + 1) // 2
    if k > 1:  # x_(k) .. x_(n+1-k) misses the median with probability 2 P(B <= k - 1) at most 1 - confidence
        assert 2 * below(k - 1) <= 1 - confidence + 1e-12
    if k < (n + 1) // 2:  # and one rank tighter would not
        assert 2 * below(k) > 1 - confidence


def test_paired_ratio_by_hand():
    # rounds: 2/1, 4/1, 6/3 -> ratios 2, 4, 2: median 2, bounds the extremes (3 rounds)
    r = paired_ratio([2.0, 4.0, 6.0], [1.0, 1.0, 3.0])
    assert (r.median, r.low, r.high, r.rounds) == (2.0, 2.0, 4.0, 3)
    # 21 rounds with ratios 1.00 .. 1.20 in steps of 0.01: median 1.10, bounds x_(7) = 1.06 and x_(15) = 1.14
    r = paired_ratio([1 + i / 100 for i in range(21)], [1.0] * 21)
    assert r.median == pytest.approx(1.10) and r.low == pytest.approx(1.06) and r.high == pytest.approx(1.14)
    assert r.to_json()["confidence"] == 0.9


@pytest.mark.parametrize(
    "a, b, said",
    [
        ([1.0, 2.0], [1.0], "got 2 and 1 of them"),
        ([], [], "got 0 and 0 of them"),
        ([1.0, 0.0], [1.0, 1.0], r"a_s\[1\] = 0.0 is not a positive"),
        ([1.0], [-1.0], r"b_s\[0\] = -1.0 is not"),
        ([1.0, float("nan")], [1.0, 1.0], r"a_s\[1\] = nan"),
        ([[1.0]], [1.0], r"shape \(1, 1\)"),
    ],
)
def test_paired_ratio_refuses_unpaired_or_non_positive_times_as_a_usage_error(a, b, said):
    # the lengths or the first bad value, and the fix; never the whole lists
    with pytest.raises(UsageError, match=said) as info:
        api.paired_ratio(a, b)
    assert "lists of positive seconds" in str(info.value)


def test_the_confirmation_rule_through_the_api_by_hand():
    # 7 rounds, ours 1 ms against 2 ms every round: ratio 0.5 in every round, bounds the extremes (0.5 both):
    # 2x faster by the margin and surely faster -> ours
    seen = api.confirmation([1e-3] * 7, [2e-3] * 7)
    assert seen["verdict"] == "ours" and seen["rounds"] == 7
    assert (seen["paired_ratio"], seen["ratio_low"], seen["ratio_high"]) == (0.5, 0.5, 0.5)
    assert seen["ours_us"] == pytest.approx(1000.0) and seen["builtin_us"] == pytest.approx(2000.0)
    # ours 1.05x slower every round: even the lower bound 1.05 is short of the 1.10 margin -> builtin
    assert api.confirmation([1.05e-3] * 7, [1e-3] * 7)["verdict"] == "builtin"
    # rounds 0.5 and 1.5 alternating (7 rounds): median 0.5, bounds 0.5 .. 1.5 -> not surely faster, unsure
    assert api.confirmation([0.5, 1.5, 0.5, 1.5, 0.5, 1.5, 0.5], [1.0] * 7)["verdict"] == "unsure"


times = st.lists(st.floats(1e-4, 10.0), min_size=1, max_size=41)


@settings(deadline=None)
@given(times)
def test_a_call_against_itself_is_exactly_one(t):
    r = paired_ratio(t, t)
    assert r.median == r.low == r.high == 1.0


@settings(deadline=None)
@given(times, st.data())
def test_a_load_that_drifts_between_rounds_cancels_out(ours, data):
    # the built-in 1.25x slower in every round, while each round's load scales both calls by its own factor:
    # the paired ratio is 0.8 whatever the load did; medians taken apart would follow the load
    load = data.draw(st.lists(st.floats(0.1, 20.0), min_size=len(ours), max_size=len(ours)))
    r = paired_ratio([o * f for o, f in zip(ours, load)], [1.25 * o * f for o, f in zip(ours, load)])
    assert r.median == pytest.approx(0.8) and r.low == pytest.approx(0.8) and r.high == pytest.approx(0.8)


@settings(deadline=None)
@given(
    st.lists(st.tuples(st.floats(1e-3, 10.0), st.floats(1e-3, 10.0)), min_size=1, max_size=41).filter(
        lambda pairs: len(pairs) % 2 == 1
    )
)
def test_swapping_the_calls_inverts_the_ratio_and_swaps_the_bounds(pairs):
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    ab, ba = paired_ratio(a, b), paired_ratio(b, a)
    assert ab.median == pytest.approx(1 / ba.median)
    assert ab.low == pytest.approx(1 / ba.high) and ab.high == pytest.approx(1 / ba.low)
    assert ab.low <= ab.median <= ab.high


# --- the rounds' loop -----------------------------------------------------------------------------------------


@settings(deadline=None)
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
    assert first == second == {"auto": 0.25, "builtin": 0.5}  # the barriers' second each is not in the times
    one = lambda name: ["barrier", "clock", name, "sync", "clock"]
    assert rank.log == one("auto") + one("builtin") + one("builtin") + one("auto")


def test_rounds_fill_the_time_budget_for_short_calls_only():
    assert rounds_for(5, 1.0, 0.01) == 100  # 1 s of 10 ms rounds
    assert rounds_for(5, 1.0, 0.5) == 5  # long calls: the asked number
    assert rounds_for(5, 1.0, 1e-6) == MAX_ROUNDS  # capped
    assert rounds_for(5, 0.0, 0.01) == rounds_for(5, 1.0, 0.0) == 5  # no budget, or no warm-up to time
    assert rounds_for(400, 1.0, 1e-6) == 400  # never fewer than asked


class FakeRounds:
    """run_rounds' step and agreement with fake times: round i takes round_s[i] seconds per call (both names
    alike), the other ranks' round is `others_s`; logs the rounds run and what was agreed."""

    def __init__(self, round_s, others_s=0.0):
        self.round_s, self.others_s, self.ran, self.agreed, self.ticks = round_s, others_s, [], [], 0

    def step(self, i):
        self.ran.append(i)
        return {"a": self.round_s(i), "b": self.round_s(i)}

    def slowest(self, mine_s):
        self.agreed.append(mine_s)
        return max(mine_s, self.others_s)

    def tick(self):
        self.ticks += 1


def test_the_last_warm_up_round_sets_the_count_and_is_not_kept():
    # warm-up rounds of 0.5 s then 0.01 s a call: the last round (2 calls, 0.02 s) counts, 1 s per call is
    # 2 s of rounds: 100 timed rounds, numbered 2 .. 101
    fake = FakeRounds(lambda i: 0.5 if i == 0 else 0.01)
    out = run_rounds(["a", "b"], fake.step, 2, 5, 1.0, fake.slowest, fake.tick)
    assert fake.agreed == [pytest.approx(0.02)] and len(out["a"]) == len(out["b"]) == 100 == fake.ticks
    assert fake.ran == list(range(102))


def test_the_slowest_rank_sets_the_count():
    # this rank's round 0.02 s, another rank's 0.1 s: 2 s of rounds at 0.1 s -> 20, on every rank
    fake = FakeRounds(lambda i: 0.01, others_s=0.1)
    assert len(run_rounds(["a", "b"], fake.step, 1, 5, 1.0, fake.slowest)["a"]) == 20


def test_a_time_budget_without_warm_up_times_round_zero_and_keeps_it():
    fake = FakeRounds(lambda i: 0.01)
    out = run_rounds(["a", "b"], fake.step, 0, 5, 1.0, fake.slowest, fake.tick)
    assert fake.agreed == [pytest.approx(0.02)]  # round 0 timed the rounds: the budget is not lost
    assert len(out["a"]) == 100 == fake.ticks and fake.ran == list(range(100))  # round 0 is the first sample


def test_without_a_time_budget_exactly_the_asked_rounds_run():
    for warmup in (0, 3):
        fake = FakeRounds(lambda i: 0.01)
        out = run_rounds(["a", "b"], fake.step, warmup, 5, 0.0, fake.slowest)
        assert len(out["b"]) == 5 and fake.ran == list(range(warmup + 5)) and len(fake.agreed) == 1


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), "1s", True])
def test_the_sweep_refuses_a_bad_time_budget(bad):
    with pytest.raises(UsageError, match="min time .* expected seconds >= 0"):
        SweepSpec(min_time_s=bad)


def test_the_time_budget_reaches_the_ranks_and_bench_refuses_it():
    assert BenchJob.of(SweepSpec(min_time_s=0.5)).min_time_s == 0.5
    assert BenchJob.of(SweepSpec()).min_time_s == 0.0
    with pytest.raises(UsageError, match="bench times exactly --iters"):
        BenchSpec(sweep=SweepSpec(min_time_s=1.0), ranks=2)
