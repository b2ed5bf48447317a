"""Blink's micro-benchmark patterns (appendix A.1): their names, the collective each computes, and
PatternSpec (`collperf simulate --pattern`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from collperf.errors import UsageError
from collperf.spec.checks import SizesArg, check_mode, cli_option, rank_list, sizes, whole

PATTERNS = (
    "chain-forward",
    "chain-reduce-forward",
    "chain-reduce-broadcast",
    "fan-in-forward",
    "fan-in-reduce-forward",
    "fan-out-forward",
)


class PatternOptions(Protocol):
    """A spec that may run a pattern (PatternSpec, runs.BenchSpec); --center, --successor and --source are read
    by name."""

    @property
    def pattern(self) -> str | None: ...


def refuse_unused_pattern_options(spec: PatternOptions) -> None:
    """--center/--successor/--source name a fan's GPUs (a fan-out has a source, a fan-in a successor); chains
    take none: a given one that the pattern does not use is an error, not silently dropped."""
    assert spec.pattern is not None  # called on a spec that runs a pattern
    fan = spec.pattern.startswith("fan")
    unused = [
        f"--{n}"
        for n in ("center", "successor", "source")
        if getattr(spec, n) is not None
        and (
            not fan
            or (n == "successor" and spec.pattern == "fan-out-forward")
            or (n == "source" and spec.pattern != "fan-out-forward")
        )
    ]
    if unused:
        raise UsageError(f"{' and '.join(unused)} do not apply to {spec.pattern}: drop them")


# the collective each pattern's schedule computes (blink/patterns.py): what its destinations must hold

PATTERN_COLLECTIVES = {
    "chain-forward": "broadcast",
    "chain-reduce-forward": "reduce",
    "chain-reduce-broadcast": "allreduce",
    "fan-in-forward": "gather",
    "fan-in-reduce-forward": "reduce",
    "fan-out-forward": "broadcast",
}


@dataclass(frozen=True, kw_only=True)
class PatternSpec:
    """One of Blink's micro-benchmarks (appendix A.1) simulated over sizes. Chains: `gpus` in chain
    order. Fan-in: `gpus` are the sources, sending to `center`, which forwards to `successor`.
    Fan-out: `source` sends to `center`, which forwards to every one of `gpus`. On dgx1v, unset
    values default to the appendix's GPUs (chain 0,1,2,3; center 4; fan-in 5,6,7 -> 4 -> 0; fan-out 5 -> 4 -> 0,6,7)."""

    pattern: str = field(
        metadata=cli_option(
            "--pattern",
            type=str,
            help=(
                "chain-forward | chain-reduce-forward | chain-reduce-broadcast | fan-in-forward | "
                "fan-in-reduce-forward | fan-out-forward: throughput vs size."
            ),
        )
    )
    topology: str = "dgx1v"
    gpus: list[int] | None = field(
        default=None,
        metadata=cli_option(  # '5,6,7' is read into the list once
            "--gpus",
            type=str,
            help="The chain in order; a fan-in's sources; a fan-out's destinations (dgx1v default: the appendix's).",
        ),
    )
    center: int | None = field(default=None, metadata=cli_option("--center", type=int, help="A fan's center GPU."))
    successor: int | None = field(
        default=None, metadata=cli_option("--successor", type=int, help="Where a fan-in's center forwards.")
    )
    source: int | None = field(default=None, metadata=cli_option("--source", type=int, help="A fan-out's source GPU."))
    size: SizesArg = "1M,16M,256M"
    mode: str = "rounds"
    segments: int = 32

    def __post_init__(self) -> None:
        if self.pattern not in PATTERNS:
            raise UsageError(f"--pattern {self.pattern!r}: expected one of {', '.join(PATTERNS)}")
        object.__setattr__(self, "gpus", rank_list(self.gpus, "--gpus"))
        for name in ("center", "successor", "source"):
            if getattr(self, name) is not None:
                whole(name, getattr(self, name), 0, f"--{name}")
        check_mode(self.mode)
        whole("segments", self.segments, flag="--segments")
        self.sizes_bytes  # parsed now: a bad size fails here
        refuse_unused_pattern_options(self)

    @property
    def sizes_bytes(self) -> list[int]:
        return sizes(self.size)
