"""How long one iteration of a bench step should take, for the launcher's progress watchdog (runtime/stall.py).

Before any size is measured the estimate is a deliberately slow prior (PRIOR_LATENCY_S plus twice the buffer
at PRIOR_RATE_Bps: gloo over loopback on a loaded machine moves far more); after, it is the last measured
size's time per iteration scaled up by the size ratio (time grows at most linearly with the buffer once past
latency). The watchdog allows K times this, with a floor, so an estimate off by a few times is harmless.
"""

from __future__ import annotations

PRIOR_LATENCY_S = 1e-3
PRIOR_RATE_Bps = 50e6
CHECK_FACTOR = 4.0  # a check iteration: reset the buffers, call, compare against the expected values


class Pace:
    def __init__(self):
        self.last = None  # (size_bytes, seconds per iteration) of the last timed loop

    def measured(self, size_bytes: int, per_iteration_s: float) -> None:
        self.last = (size_bytes, per_iteration_s)

    def expected_s(self, size_bytes: int, phase: str = "timed loop") -> float:
        if self.last is None:
            guess = PRIOR_LATENCY_S + 2 * size_bytes / PRIOR_RATE_Bps
        else:
            size, each_s = self.last
            guess = each_s * max(1.0, size_bytes / max(size, 1))
        return guess * (CHECK_FACTOR if phase == "check" else 1.0)
