"""Rules for NCCL's example tuner plugin (plugins/tuner/example), from fits of measured logs.

Format (NCCL 2.30 plugins/tuner/example, the ext-tuner interface of src/include/plugin/tuner): one rule a line,
`collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff`, `#` comments;
the first matching rule wins, byte ranges are inclusive, -1 means "any" for max_bytes, nNodes, nRanks,
numPipeOps and regBuff. Sizes are NCCL's nBytes, which is nccl-tests' `size` column (the total buffer for
allgather and reducescatter), the same number our tables carry. Channels: the example plugin sets one
channel before matching, so -1 is not "NCCL's default" there; every rule carries an explicit count.

Each input table is one (algorithm, protocol) forced with NCCL_ALGO/NCCL_PROTO (or one measured row set of
optimize_config.py's CSV). Its piecewise alpha-beta fit (fit.py) gives a time at every size; the rules follow
the lower envelope of these curves, with a boundary at every size where the fastest one changes, found by
bisection to the byte. A table run without NCCL_ALGO/NCCL_PROTO is NCCL's default choice: each rule's
comment gives the expected gain over it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

import numpy as np

from collperf.errors import UsageError
from collperf.fit import MIN_ROWS_PER_REGIME, fit, fit_rows

COLLECTIVES = ("broadcast", "reduce", "allgather", "reducescatter", "allreduce")  # the functions NCCL tunes
ALGORITHMS = ("tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat")
PROTOCOLS = ("ll", "ll128", "simple")
_ALGO_ALIASES = {"collnetdirect": "collnet_direct", "collnetchain": "collnet_chain", "nvlstree": "nvls_tree"}
GRID_PER_OCTAVE = 8  # envelope sampled at 8 sizes per doubling, then every change bisected to the byte
MIN_BYTES, MAX_BYTES = 1, 1 << 34


@dataclass
class Choice:
    """One measured (algorithm, protocol) of one collective: its fit and how many channels it ran on."""

    collective: str
    algorithm: str  # NCCL name (ALGORITHMS), or "default" for a run NCCL chose itself
    protocol: str
    channels: int | None
    fit: object  # fit.Fit, PointsCurve, or anything with predict(size) -> seconds
    source: str
    dims: tuple = (None, None, -1, -1)  # (nodes, ranks, numPipeOps, regBuff) it was measured on; None/-1: unknown

    @property
    def label(self) -> str:
        return f"{self.algorithm}/{self.protocol}"

    @property
    def key(self) -> tuple:
        return self.algorithm, self.protocol, self.channels

    def time_s(self, size: float) -> float:
        return self.fit.predict(max(size, 1.0))


@dataclass
class Rule:
    collective: str
    min_bytes: int
    max_bytes: int  # -1: no upper end
    choice: Choice
    runner_up: Choice | None
    gain_vs_default: tuple[float, float] | None  # (least, most) time saved over the range, fraction
    gain_vs_runner_up: tuple[float, float] | None
    dims: tuple = (-1, -1, -1, -1)  # nNodes, nRanks, numPipeOps, regBuff of the rule (-1 = any)


@dataclass
class TunerRules:
    rules: list[Rule]
    nodes: int
    ranks: int
    channels: int | None
    notes: list[str] = field(default_factory=list)

    def text(self) -> str:
        return render(self)


def labels_from(table) -> tuple[str | None, str | None, int | None]:
    """(algorithm, protocol, channels) a table was run with: from its header (NCCL_ALGO/NCCL_PROTO in a
    -J file's env, an Inspector algo_proto, optimize_config's columns), else from the file name
    (`allreduce_ring_ll128.txt`)."""
    h = table.header
    algo, proto, channels = h.get("nccl_algo"), h.get("nccl_proto"), h.get("nccl_channels")
    if algo is None or proto is None:
        words = re.split(r"[^a-z0-9]+", Path(str(table.source).split(" [")[0]).stem.lower())
        words = [_ALGO_ALIASES.get(w, w) for w in words]
        algo = algo or next((w for w in words if w in ALGORITHMS), None)
        proto = proto or next((w for w in words if w in PROTOCOLS), None)
        if algo is None and proto is None and "default" in words:
            algo = proto = "default"
    return (_ALGO_ALIASES.get(algo.lower(), algo.lower()) if algo else None, proto.lower() if proto else None, channels)


def choices(tables, fits) -> list[Choice]:
    out = []
    for t, f in zip(tables, fits):
        algo, proto, channels = labels_from(t)
        if not t.collective:
            raise UsageError(f"{t.source}: the collective is unknown: pass --collective")
        if t.collective not in COLLECTIVES:
            raise UsageError(
                f"{t.source}: {t.collective} is not tuned by NCCL's tuner plugins: expected one of "
                f"{', '.join(COLLECTIVES)}"
            )
        if algo == "default" or (algo is None and proto is None and t.header.get("nccl_default")):
            algo = proto = "default"
        if algo is None or proto is None or (algo != "default" and (algo not in ALGORITHMS or proto not in PROTOCOLS)):
            raise UsageError(
                f"{t.source}: cannot tell which NCCL algorithm and protocol it ran with (read "
                f"{algo!r}/{proto!r}): expected NCCL_ALGO/NCCL_PROTO in a -J file's env, or a file "
                f"name with one of {', '.join(ALGORITHMS)} and one of {', '.join(PROTOCOLS)} "
                "(allreduce_ring_ll128.txt), or 'default' for a run NCCL chose itself"
            )
        dims = (t.nodes, t.ranks, _whole_or_any(t.header.get("pipe_ops")), _whole_or_any(t.header.get("reg_buff")))
        out.append(Choice(t.collective, algo, proto, channels, f, t.source, dims))
    return out


def _whole_or_any(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else -1


@dataclass
class PointsCurve:
    """A time curve through a few measured sizes (fewer than a fit needs, as in optimize_config.py's sample
    data): straight lines between neighbouring points (an alpha-beta segment each); below the smallest size
    its time (latency-bound), above the largest its time scaled with size (bandwidth-bound)."""

    sizes: list
    times_s: list

    def predict(self, size: float) -> float:
        xs, ts = self.sizes, self.times_s
        if size <= xs[0]:
            return ts[0]
        if size >= xs[-1]:
            return ts[-1] * size / xs[-1]
        return float(np.interp(size, xs, ts))


def curve(table):
    """The piecewise alpha-beta fit of a table swept over many sizes; a PointsCurve through its points where it
    has fewer than two regimes' worth (fit.MIN_ROWS_PER_REGIME): one straight line fitted to a few points
    would move them, and the rules should follow what was measured."""
    rows = fit_rows(table)
    if len(rows) >= 2 * MIN_ROWS_PER_REGIME:
        return fit(table)
    if not rows:
        raise UsageError(f"{table.source}: no usable row (size > 0, a finite time > 0, no wrong results)")
    return PointsCurve([float(r.size) for r in rows], [r.time_s for r in rows])


def _best(options: list[Choice], size: int) -> int:
    times = [c.time_s(size) for c in options]
    return min(range(len(options)), key=lambda i: (times[i], i))


def envelope(options: list[Choice], lo: int = MIN_BYTES, hi: int = MAX_BYTES) -> list[tuple[int, int, int]]:
    """(first size, last size, index of the fastest option) over [lo, hi]: a change of the fastest option
    is found on a geometric grid, then bisected to the first byte where it holds."""
    octaves = math.log2(hi / lo)
    grid = sorted(
        {lo, hi} | {round(lo * 2 ** (i / GRID_PER_OCTAVE)) for i in range(int(octaves * GRID_PER_OCTAVE) + 1)}
    )
    # steps of a curve (a model's ring plateau: `fit.breakpoints`) a grid could step over
    grid = sorted(set(grid) | {b + d for o in options for b in getattr(o.fit, "breakpoints", ()) for d in (-1, 0)})
    grid = [s for s in grid if lo <= s <= hi]
    ranges, start, current = [], lo, _best(options, lo)
    for a, b in pairwise(grid):
        while _best(options, b) != current:
            left, right = a, b  # best(left) == current, best(right) != current: first size that changes
            while right - left > 1:
                mid = (left + right) // 2
                if _best(options, mid) == current:
                    left = mid
                else:
                    right = mid
            ranges.append((start, right - 1, current))
            start, current, a = right, _best(options, right), right
    ranges.append((start, hi, current))
    return ranges


def _gain(winner: Choice, other: Choice | None, lo: int, hi: int) -> tuple[float, float] | None:
    if other is None:
        return None
    sizes = [lo, hi] + [int(lo * (hi / lo) ** (i / 8)) for i in range(1, 8)]
    gains = [1 - winner.time_s(s) / other.time_s(s) for s in sizes]
    return min(gains), max(gains)


def build(
    options: list[Choice], nodes: int | None = None, ranks: int | None = None, channels: int | None = None
) -> TunerRules:
    """Rules for every collective among `options` (Choice per measured algorithm/protocol/channels), one group of
    rules per shape measured (nNodes, nRanks, numPipeOps, regBuff; `nodes`/`ranks` override the shape)."""
    if not options:
        raise UsageError("no measured tables: give one log per NCCL algorithm/protocol")
    out = TunerRules([], nodes if nodes is not None else -1, ranks if ranks is not None else -1, channels)

    def shape(o: Choice) -> tuple:
        n, r, pipe, reg = o.dims
        return (nodes if nodes is not None else (n or -1), ranks if ranks is not None else (r or -1), pipe, reg)

    shapes = sorted({shape(o) for o in options})
    for collective in [c for c in COLLECTIVES if any(o.collective == c for o in options)]:
        for dims in shapes:
            mine = [o for o in options if o.collective == collective and shape(o) == dims]
            if mine:
                _build_one(out, collective, mine, dims, channels, len(shapes) > 1)
    for c in sorted({id(o.fit): o for o in options if isinstance(o.fit, PointsCurve)}.values(), key=lambda o: o.source):
        out.notes.append(
            f"{c.source}: {len(c.fit.sizes)} size(s), too few to fit regimes: the curve joins them, "
            "the smallest one's time below, the largest one's scaled with size above"
        )
    return out


def _build_one(out: TunerRules, collective: str, mine: list[Choice], dims: tuple, channels, several: bool) -> None:
    where = f" on {dims[0]} node(s) x {dims[1]} ranks" if several else ""
    default = next((o for o in mine if o.algorithm == "default"), None)
    forced = [o for o in mine if o.algorithm != "default"]
    if not forced:
        raise UsageError(f"{collective}{where}: only a default run: give logs with NCCL_ALGO/NCCL_PROTO forced")
    seen = {}
    for o in forced:
        if o.key in seen:
            raise UsageError(
                f"{collective}{where} {o.label} on {o.channels or 'unknown'} channels is given twice "
                f"({seen[o.key]} and {o.source}): merge the runs into one log or leave one out"
            )
        seen[o.key] = o.source
        if o.channels is None and channels is None:
            raise UsageError(
                f"{o.source}: the channel count it ran with is unknown and NCCL's example plugin "
                "needs an explicit one on every rule: pass --channels N (NCCL_MIN_NCHANNELS = "
                "NCCL_MAX_NCHANNELS of the run)"
            )
    for lo, hi, i in envelope(forced):
        others = [o for o in forced if o is not forced[i]]
        runner = min(others, key=lambda o: o.time_s(math.sqrt(lo * hi))) if others else None
        out.rules.append(
            Rule(
                collective,
                0 if lo == MIN_BYTES else lo,
                -1 if hi == MAX_BYTES else hi,
                forced[i],
                runner,
                _gain(forced[i], default, lo, hi),
                _gain(forced[i], runner, lo, hi),
                dims,
            )
        )
    if default is None:
        out.notes.append(
            f"{collective}{where}: no run without NCCL_ALGO/NCCL_PROTO was given, so the gain over "
            "NCCL's default choice is unknown (the comments give the gain over the next best choice)"
        )


def _pct(g: tuple[float, float] | None) -> str:
    if g is None:
        return "unknown"
    lo, hi = g
    return f"{100 * lo:+.1f}%" if abs(hi - lo) < 5e-4 else f"{100 * lo:+.1f}% to {100 * hi:+.1f}%"


def render(r: TunerRules) -> str:
    lines = [
        "# NCCL example tuner plugin rules (NCCL_TUNER_CONFIG_FILE), written by collperf export nccl-tuner",
        "# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff",
        "# first match wins; byte ranges inclusive, in NCCL's nBytes (= nccl-tests size); -1 = any",
    ]
    lines += [f"# note: {n}" for n in r.notes]
    for rule in r.rules:
        c = rule.choice
        channels = c.channels if c.channels is not None else r.channels
        span = f"{rule.min_bytes}..{'' if rule.max_bytes == -1 else rule.max_bytes} B"
        lines.append(
            f"# {rule.collective} {span}: {c.label} from {c.source}; time saved vs NCCL default "
            f"{_pct(rule.gain_vs_default)}, vs next best "
            f"{rule.runner_up.label if rule.runner_up else '-'} {_pct(rule.gain_vs_runner_up)}"
        )
        lines.append(
            f"{rule.collective},{rule.min_bytes},{rule.max_bytes},{c.algorithm},{c.protocol},{channels},"
            + ",".join(map(str, rule.dims))
        )
    return "\n".join(lines) + "\n"


# --- the plugin's own matching, for checking what a file does ----------------------------------------


def parse_rules(text: str, source: str = "<rules>") -> list[dict]:
    """Rules as the example plugin reads them (8 to 10 comma-separated fields, '#' comments)."""
    rules = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        f = [x.strip() for x in line.split(",")]
        if not 8 <= len(f) <= 10:
            raise UsageError(
                f"{source}, line {number}: {len(f)} fields: expected 8 to 10 (collective_type,min_bytes,"
                "max_bytes,algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]])"
            )
        try:
            nums = [int(x) for x in (f[1], f[2], f[5], f[6], f[7], *f[8:])]
        except ValueError:
            raise UsageError(f"{source}, line {number}: a numeric field is not an integer: {line[:80]!r}") from None
        if f[0] not in COLLECTIVES or f[3] not in ALGORITHMS or f[4] not in PROTOCOLS:
            raise UsageError(f"{source}, line {number}: unknown collective, algorithm or protocol: {line[:80]!r}")
        pipe, reg = (nums[5:] + [-1, -1])[:2]
        rules.append(
            {
                "collective": f[0],
                "min": nums[0],
                "max": nums[1],
                "algorithm": f[3],
                "protocol": f[4],
                "channels": nums[2],
                "nodes": nums[3],
                "ranks": nums[4],
                "pipe_ops": pipe,
                "reg_buff": reg,
                "line": number,
            }
        )
    return rules


def match(
    rules: list[dict], collective: str, size: int, nodes: int, ranks: int, pipe_ops: int = 1, reg_buff: int = 0
) -> dict | None:
    """The first rule that matches (inclusive byte range; -1 = any), as the example plugin picks."""
    for r in rules:
        if (
            r["collective"] == collective
            and r["min"] <= size
            and (r["max"] == -1 or size <= r["max"])
            and r["nodes"] in (-1, nodes)
            and r["ranks"] in (-1, ranks)
            and r["pipe_ops"] in (-1, pipe_ops)
            and r["reg_buff"] in (-1, reg_buff)
        ):
            return r
    return None
