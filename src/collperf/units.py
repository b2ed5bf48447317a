"""Parse and format sizes, times and bandwidths.

Conventions (DESIGN.md §2), chosen to read nccl-tests flags and vendor data sheets unchanged:
  sizes      `8`, `8B`; `1K 1M 1G` binary (as nccl-tests' -b/-e); `1KB 1MB 1GB` decimal;
             `1KiB 1MiB 1GiB` binary. Fractions are allowed (`0.5M`); the result is whole bytes.
  times      `5ns 5us 5µs 1.2ms 0.5s` (a bare `0` is zero).
  bandwidth  bytes: `50GB/s 50GBps 12.5GiB/s`; bits: `400Gbps 400Gbit/s 400Gb/s 200mbit`
             (tc's spelling). `inf` means unlimited. Results are bytes per second.
Printed GB/s are 1e9 bytes/s, as nccl-tests prints them.
"""

from __future__ import annotations

import math
import re
from typing import Iterable

from collperf.errors import UsageError

_NUMBER = r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"

_SIZE_FACTORS = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "m": 1 << 20,
    "g": 1 << 30,
    "t": 1 << 40,
    "kib": 1 << 10,
    "mib": 1 << 20,
    "gib": 1 << 30,
    "tib": 1 << 40,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
}
_SIZE_FORMS = "8, 8B, 1K/1M/1G (binary, as nccl-tests), 1KB/1MB/1GB (decimal), 1KiB/1MiB/1GiB"

_TIME_FACTORS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0}
_TIME_FORMS = "5ns, 5us, 5µs, 1.2ms, 0.5s"

# Byte units are case-sensitive on the B (GB/s is bytes, Gb/s is bits), so they are listed exactly.
_BYTE_RATE = {
    "B/s": 1,
    "Bps": 1,
    "KB/s": 1e3,
    "MB/s": 1e6,
    "GB/s": 1e9,
    "TB/s": 1e12,
    "KBps": 1e3,
    "MBps": 1e6,
    "GBps": 1e9,
    "TBps": 1e12,
    "KiB/s": 2**10,
    "MiB/s": 2**20,
    "GiB/s": 2**30,
    "TiB/s": 2**40,
}
_BIT_PREFIX = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
_BIT_RATE = re.compile(r"^([kmgt]?)(?:bit/s|bits/s|bps|b/s|bit)$", re.IGNORECASE)
_BANDWIDTH_FORMS = "50GB/s, 50GBps, 12.5GiB/s (bytes); 400Gbps, 400Gbit/s, 200mbit (bits); inf"


def _split(text: object, what: str, forms: str) -> tuple[float, str]:
    if not isinstance(text, str):
        text = str(text)
    match = re.fullmatch(r"\s*" + _NUMBER + r"\s*(\S*)\s*", text)
    if not match:
        raise UsageError(f"cannot read {what} {text!r}: expected a number and a unit, e.g. {forms}")
    return float(match.group(1)), match.group(2)


def parse_size(text: str | int) -> int:
    """A size in bytes: '64M' -> 67108864, '1GB' -> 10**9, '8' -> 8."""
    if isinstance(text, int) and not isinstance(text, bool):
        if text < 0:
            raise UsageError(f"size {text} is negative: expected a size >= 0 such as {_SIZE_FORMS}")
        return text
    value, unit = _split(text, "size", _SIZE_FORMS)
    _refuse_bits(text, unit)
    factor = _SIZE_FACTORS.get(unit.lower())
    if factor is None:
        raise UsageError(f"cannot read size {text!r}: unknown unit {unit!r}; accepted forms: {_SIZE_FORMS}")
    return int(round(value * factor))


# A capital prefix with a small b (Gb, Mib) is the bit spelling (as --nic-rate 400Gb/s reads it): a size is bytes,
# so '1Gb' is refused rather than read as 1 GB (8x too much data). All-lowercase 'gb' keeps meaning bytes, as
# typed casually.
_BIT_SIZE = re.compile(r"([KMGT])(i?)b")


def _refuse_bits(text: object, unit: str) -> None:
    bits = _BIT_SIZE.fullmatch(unit)
    if bits is None:
        return
    number = str(text).strip()[: -len(unit)].strip()
    prefix, binary = bits.groups()
    meant = f"{number}{prefix}iB" if binary else f"{number}{prefix}B"
    other = f"{number}{prefix}B" if binary else f"{number}{prefix}iB"
    raise UsageError(
        f"cannot read size {str(text).strip()!r}: {unit!r} is bits (a small b), but sizes are bytes: "
        f"write {meant} (or {other}, {number}{prefix}); accepted forms: {_SIZE_FORMS}"
    )


def parse_sizes(text: str) -> list[int]:
    """A comma-separated list of sizes: '1M,64M,1G'."""
    parts = [p for p in str(text).split(",") if p.strip()]
    if not parts:
        raise UsageError(f"no size in {text!r}: expected a comma-separated list such as 1M,64M,1G")
    return [parse_size(p) for p in parts]


def parse_time(text: str | float) -> float:
    """A time in seconds: '5us' -> 5e-6."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return _non_negative(float(text), text, "time", _TIME_FORMS)
    value, unit = _split(text, "time", _TIME_FORMS)
    if unit == "" and value == 0:
        return 0.0
    factor = _TIME_FACTORS.get(unit)
    if factor is None:
        raise UsageError(f"cannot read time {text!r}: unknown or missing unit {unit!r}; accepted forms: {_TIME_FORMS}")
    return value * factor


def parse_bandwidth(text: str | float) -> float:
    """A bandwidth in bytes per second: '50GB/s' -> 5e10, '400Gbps' -> 5e10, 'inf' -> inf."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return _positive(float(text), text)
    if str(text).strip().lower() in ("inf", "infinite", "unlimited"):
        return math.inf
    value, unit = _split(text, "bandwidth", _BANDWIDTH_FORMS)
    if unit in _BYTE_RATE:
        return _positive(value * _BYTE_RATE[unit], text)
    bits = _BIT_RATE.match(unit)
    if bits:
        return _positive(value * _BIT_PREFIX[bits.group(1).lower()] / 8, text)
    raise UsageError(
        f"cannot read bandwidth {text!r}: unknown or missing unit {unit!r}; accepted forms: {_BANDWIDTH_FORMS}"
    )


def _non_negative(value: float, text: object, what: str, forms: str) -> float:
    if not value >= 0:
        raise UsageError(f"{what} {text!r} is negative: expected a value >= 0 such as {forms}")
    return value


def _positive(value: float, text: object) -> float:
    if not value > 0:
        raise UsageError(f"bandwidth {text!r} is not positive: expected a rate > 0 such as {_BANDWIDTH_FORMS}")
    return value


_BINARY = ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"))
_DECIMAL = ((10**12, "TB"), (10**9, "GB"), (10**6, "MB"), (10**3, "KB"))


def format_size(size_bytes: float) -> str:
    """'64 MiB' or '100 MB' when a unit divides the size exactly (the smallest count wins),
    else four significant digits in the nearest binary unit ('1.21 KiB')."""
    size_bytes = float(size_bytes)
    if size_bytes < 1024:
        return f"{size_bytes:g} B"
    exact = [(size_bytes // f, unit) for f, unit in _BINARY + _DECIMAL if size_bytes % f == 0]
    if exact:
        count, unit = min(exact)
        return f"{int(count)} {unit}"
    for factor, unit in _BINARY:
        if size_bytes >= factor:
            return f"{size_bytes / factor:.4g} {unit}"
    return f"{size_bytes:g} B"


def column_unit(sizes: Iterable[float | None]) -> tuple[int, str]:
    """One binary unit for a column of sizes: the largest in which the smallest size is still at least 1, unless
    the largest size would then need more than five digits ('8196 KiB' and '30764 KiB', not '31502336 B')."""
    known = [float(s) for s in sizes if s is not None and s > 0]
    if not known:
        return 1, "B"
    units = ((1, "B"),) + _BINARY[::-1]
    fits = [k for k, (f, _) in enumerate(units) if min(known) >= f] or [0]
    short = next(k for k, (f, _) in enumerate(units) if max(known) / f < 1e5 or k == len(units) - 1)
    return units[max(fits[-1], short)]


def format_size_in(size_bytes: float, unit: tuple[int, str]) -> str:
    """A size in a given binary unit (column_unit's): '8196 KiB', '30764 KiB', '9497 KiB' in one column.
    Whole counts print whole; others keep four significant digits (all the digits left of the point)."""
    factor, name = unit
    value = float(size_bytes) / factor
    if value == int(value):
        return f"{int(value)} {name}"
    digits = max(0, 3 - int(math.floor(math.log10(abs(value))))) if value else 0
    return f"{value:.{digits}f} {name}"


def format_time(time_s: float) -> str:
    """'2.175 ms', '850 ns', with four significant digits."""
    if math.isinf(time_s) or math.isnan(time_s):
        return str(time_s)
    magnitude = abs(time_s)
    for factor, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")):
        if magnitude >= factor or unit == "ns":
            return f"{time_s / factor:.4g} {unit}"
    raise AssertionError("unreachable")


def format_percent(fraction: float, sep: str = " ") -> str:
    """'87 %', '100 %', '0.5 %' (sep '' in running text: '87%'): whole percents, two digits below ten, so a run far
    off the bound is not shown at 0 % of it."""
    value = 100 * fraction
    if value < 0.01:
        return f"<0.01{sep}%"
    return f"{value:.2g}{sep}%" if value < 10 else f"{value:.0f}{sep}%"


def format_bandwidth(bandwidth_Bps: float) -> str:
    """'50 GB/s' (1e9 bytes/s, as nccl-tests)."""
    if math.isinf(bandwidth_Bps):
        return "inf"
    for factor, unit in ((1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "KB/s")):
        if bandwidth_Bps >= factor:
            return f"{bandwidth_Bps / factor:.4g} {unit}"
    return f"{bandwidth_Bps:.4g} B/s"


def size_ranges(selected: Iterable[float], every: Iterable[float] | None = None) -> str:
    """'1 KiB-512 KiB, 2 MiB, 8 GiB': the selected sizes, a run of three or more that are consecutive in `every`
    (the log's sizes; without it nothing is merged) as one range."""
    chosen = sorted(set(int(s) for s in selected))
    if not chosen:
        return ""
    position = {s: i for i, s in enumerate(sorted(set(int(s) for s in every)))} if every is not None else {}
    runs: list[list[int]] = []
    for s in chosen:
        if runs and s in position and runs[-1][-1] in position and position[s] == position[runs[-1][-1]] + 1:
            runs[-1].append(s)
        else:
            runs.append([s])
    # a range from three sizes up: two neighbours read better as themselves ("64 MiB, 1 GiB" in a two-size log)
    return ", ".join(
        ", ".join(map(format_size, r)) if len(r) < 3 else f"{format_size(r[0])}-{format_size(r[-1])}" for r in runs
    )
