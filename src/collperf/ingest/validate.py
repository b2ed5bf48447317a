"""Values checked before they become numbers, and JSON documents checked for shape, written once.

Every reader goes through these: a field is finite and in range before it becomes an int or a float,
and a rejection says what was read and what was expected. The checks are plain loops and
`str` methods, linear in the input: no regular expression here (a backtracking number pattern was
quadratic in a run of digits).

JSON shapes are declared as small dicts (see `check`) rather than with the `jsonschema` package:
the shapes are four short documents, the messages must name the file and JSON path the way the
rest of ingest does, and a dependency for that is not worth its weight (DESIGN.md section 7).
"""

from __future__ import annotations

import csv
import math

# Ranges. A collective benchmark buffer beyond 1 PiB or a time beyond ~11.6 days is a corrupted field.
MAX_SIZE_BYTES = 1 << 50
MAX_COUNT = 1 << 53
MAX_RANK = 1 << 31
MIN_TIME_US = 1e-3  # 1 ns: no collective completes faster; nccl-tests prints us with 2 decimals
MAX_TIME_US = 1e12
MAX_BANDWIDTH_GBPS = 1e9  # 1 EB/s
MAX_TOKEN = 40  # characters a number may have (nccl-tests prints at most ~20)
_NUMBER_CHARS = frozenset("0123456789+-.eE")


class BadValue(Exception):
    """A field that cannot be the value it should be; the message says what was read and expected."""


def csv_fields(line: str, header: list[str]) -> list[str]:
    """One CSV line's fields, as many as the header has (a short row: a truncated file). One physical line is
    given, so a quoted field cannot grow past it."""
    try:
        (fields,) = csv.reader([line])
    except (csv.Error, ValueError) as e:
        raise BadValue(f"unreadable CSV ({e})") from None
    if len(fields) != len(header):
        raise BadValue(
            f"{len(fields)} fields, expected {len(header)} ({','.join(header)[:80]}): the file may be truncated"
        )
    return fields


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:20] + "...'"


def is_number(token: str) -> bool:
    """Is `token` a plain decimal number (exponent allowed; no nan, inf, underscores or unicode digits)?"""
    if not token or len(token) > MAX_TOKEN or not _NUMBER_CHARS.issuperset(token):
        return False
    try:
        float(token)
    except ValueError:
        return False
    return True


def is_whole(token: str) -> bool:
    """An optionally signed run of ASCII digits, short enough to be a real count."""
    digits = token[1:] if token[:1] in "+-" else token
    return 0 < len(digits) <= 19 and digits.isascii() and digits.isdigit()


def real(value, what: str, lo: float, hi: float, lo_open: bool = False) -> float:
    """A finite float in [lo, hi] (or (lo, hi]) from a text token or a JSON number."""
    if isinstance(value, str):
        if value.lstrip("+-").lower() in ("nan", "inf", "infinity"):
            raise BadValue(f"{what} {_show(value)} is not a finite number")
        if not is_number(value):
            raise BadValue(f"{what} {_show(value)} is not a number")
        x = float(value)
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadValue(f"{what} {_show(value)} is not a number")
    else:
        try:
            x = float(value)
        except OverflowError:
            raise BadValue(f"{what} {_show(value)} is too large: expected at most {hi:g}") from None
    if not math.isfinite(x):
        raise BadValue(f"{what} {_show(value)} is not a finite number")
    if x < lo or (lo_open and x == lo) or x > hi:
        low = f"> {lo:g}" if lo_open else f">= {lo:g}"
        raise BadValue(f"{what} {_show(value)} is out of range: expected {low} and <= {hi:g}")
    return x


def whole(value, what: str, lo: int, hi: int) -> int:
    """An int in [lo, hi] from a text token of digits or a JSON integer (never from a fraction)."""
    if isinstance(value, str):
        if not is_whole(value):
            raise BadValue(f"{what} {_show(value)} is not a whole number")
        x = int(value)
    elif isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and math.isfinite(value) and value == int(value) and abs(value) < 2**53:
            x = int(value)
        else:
            raise BadValue(f"{what} {_show(value)} is not a whole number")
    else:
        x = value
    if not lo <= x <= hi:
        raise BadValue(f"{what} {_show(value)} is out of range: expected {lo}..{hi}")
    return x


def size_bytes(value) -> int:
    return whole(value, "size", 0, MAX_SIZE_BYTES)


def time_us(value, what: str = "time") -> float:
    return real(value, f"{what} (us)", MIN_TIME_US, MAX_TIME_US)


def bandwidth(value, what: str):
    """GB/s, or None for `N/A` / null."""
    if value is None or value == "N/A":
        return None
    return real(value, f"{what} (GB/s)", 0.0, MAX_BANDWIDTH_GBPS)


def wrong_count(value):
    """nccl-tests #wrong: a whole count >= 0, or None for `N/A` / null.

    The text form is printed with `%6g` (NCCL tests 2.19 src/common.cu), so a large count may come in
    exponent form (1.23457e+06, rounded but certainly > 0); a plain fraction such as 0.5 is not a count."""
    if value is None or value == "N/A":
        return None
    if isinstance(value, str) and ("e" in value or "E" in value):
        x = real(value, "#wrong", 0.0, 2.0**63)
        return max(1, round(x)) if x > 0 else 0
    return whole(value, "#wrong", 0, 1 << 63)


# --- JSON shapes ---------------------------------------------------------------------------------
# A shape is one of:
#   "number" (finite int or float), "integer", "string", "any", None (JSON null),
#   a tuple of shapes (any one of them), a one-element list [shape] (an array of that shape),
#   a dict {"key": shape, "key?": shape} (an object; '?' marks an optional key; other keys are allowed).

_NAMES = {"number": "a number", "integer": "a whole number", "string": "a string", "any": "anything", None: "null"}


def describe(shape) -> str:
    if isinstance(shape, tuple):
        return " or ".join(describe(s) for s in shape)
    if isinstance(shape, list):
        return "an array"
    if isinstance(shape, dict):
        return (
            "an object with " + ", ".join(k.rstrip("?") for k in shape if not k.endswith("?"))
            if any(not k.endswith("?") for k in shape)
            else "an object"
        )
    return _NAMES.get(shape, repr(shape))


def _kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {_show(value)}"
    if isinstance(value, str):
        return f"the string {_show(value)}"
    return "an array" if isinstance(value, list) else "an object"


def matches(value, shape) -> bool:
    try:
        check(value, shape)
    except BadValue:
        return False
    return True


def check(value, shape, path: str = "$") -> None:
    """Raise BadValue naming the JSON path where `value` does not have `shape`."""
    if isinstance(shape, tuple):
        if any(matches(value, s) for s in shape):
            return
        for s in shape:  # the value is of a kind the union allows: say what inside it is wrong
            if (isinstance(s, dict) and isinstance(value, dict)) or (isinstance(s, list) and isinstance(value, list)):
                check(value, s, path)
        raise BadValue(f"{path}: expected {describe(shape)}, got {_kind(value)}")
    if isinstance(shape, list):
        if not isinstance(value, list):
            raise BadValue(f"{path}: expected an array, got {_kind(value)}")
        for i, item in enumerate(value):
            check(item, shape[0], f"{path}[{i}]")
        return
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            raise BadValue(f"{path}: expected {describe(shape)}, got {_kind(value)}")
        for key, sub in shape.items():
            name = key.rstrip("?")
            if name in value:
                check(value[name], sub, f"{path}.{name}")
            elif not key.endswith("?"):
                raise BadValue(f"{path}: the key {name!r} is missing (expected {describe(shape)})")
        return
    ok = {
        "any": True,
        None: value is None,
        "string": isinstance(value, str),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, (int, float)) and not isinstance(value, bool),
    }[shape]
    if ok and isinstance(value, float) and not math.isfinite(value):
        ok = False
    if not ok:
        raise BadValue(f"{path}: expected {describe(shape)}, got {_kind(value)}")
