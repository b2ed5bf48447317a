"""What a trace's values must be before they become numbers, ranks or shapes (the log readers' rules,
ingest/validate.py, applied to Kineto's fields): finite and in range, of the type torch.profiler writes,
shapes at most three lists deep. Each check raises `BadValue` saying what was read and what was expected;
the reader skips and counts an event that fails one, and refuses a file whose top-level keys fail one
(a UsageError naming the file and the JSON path)."""

from __future__ import annotations

from functools import lru_cache

from collperf.ingest.validate import MAX_RANK, MAX_SIZE_BYTES, MAX_TIME_US, BadValue, _show, real, whole

MAX_TS_US = float(2**53)  # beyond, a microsecond timestamp is not exact as a float: a corrupt field
MAX_DUR_US = MAX_TIME_US  # ~11.6 days
MAX_WORLD = 1 << 20  # ranks in a job; a group's ranks are listed in memory
MAX_ELEMENTS = 1 << 53
MAX_ID = 1 << 63  # correlation ids, sequence numbers
__all__ = [
    "BadValue",
    "MAX_SIZE_BYTES",
    "MAX_WORLD",
    "timestamp",
    "duration",
    "text",
    "optional_text",
    "ranks",
    "dims",
    "types",
    "identifier",
    "kernel_args",
]


def _number(value, what: str):
    """A JSON number (Kineto writes times as numbers: a string is a corrupt field, not a token to parse)."""
    if isinstance(value, str):
        raise BadValue(f"{what} {_show(value)} is not a number")
    return value


def timestamp(value, what: str = "ts") -> float:
    return real(_number(value, f"{what} (us)"), f"{what} (us)", -MAX_TS_US, MAX_TS_US)


def duration(value, what: str = "dur") -> float:
    """A duration in us: finite, >= 0 (a negative one is a corrupt event; zero is left to the caller)."""
    return real(_number(value, f"{what} (us)"), f"{what} (us)", 0.0, MAX_DUR_US)


def text(value, what: str) -> str:
    if not isinstance(value, str):
        raise BadValue(f"{what} {_show(value)} is not a string")
    return value


def optional_text(value, what: str) -> str:
    """A name that torch.profiler writes as a string and some versions as a number ('0' or 0)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(whole(value, what, -MAX_ID, MAX_ID))
    raise BadValue(f"{what} {_show(value)} is not a string")


def ranks(value, what: str) -> tuple:
    """A list of ranks, as a JSON array or the string PyTorch writes ('[0, 1, 2, 3]'); read without a JSON
    decoder (no nesting to recurse into) and each rank checked."""
    if isinstance(value, str):
        return _ranks_text(value, what)
    if isinstance(value, list):
        if len(value) > MAX_WORLD:
            raise BadValue(f"{what}: {len(value)} ranks, more than {MAX_WORLD}")
        if value and all(type(r) is int for r in value) and 0 <= min(value) and max(value) <= MAX_RANK:
            return tuple(value)  # what whole() gives each: a job's group lists thousands of ranks
        return tuple(whole(r, f"{what}[{i}]", 0, MAX_RANK) for i, r in enumerate(value))
    raise BadValue(f"{what} {_show(value)} is not a list of ranks")


@lru_cache(maxsize=64)  # every call of a process group repeats its ranks' text
def _ranks_text(value: str, what: str) -> tuple:
    body = value.strip()
    if body in ("", "[]"):
        return ()
    if not (body.startswith("[") and body.endswith("]")):
        raise BadValue(f"{what} {_show(value)} is not a list of ranks such as '[0, 1, 2, 3]'")
    items = [t.strip() for t in body[1:-1].split(",")]
    if len(items) > MAX_WORLD:
        raise BadValue(f"{what}: {len(items)} ranks, more than {MAX_WORLD}")
    return tuple(whole(t, f"{what} rank", 0, MAX_RANK) for t in items)


def dims(value, what: str) -> list:
    """'Input Dims': one entry per input, a shape ([4, 8]) or a tensor list's shapes ([[4], [8]]), or a count."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadValue(f"{what} {_show(value)} is not a list of shapes")
    for i, shape in enumerate(value):
        for j, d in enumerate(shape if isinstance(shape, list) else [shape]):
            for k, n in enumerate(d if isinstance(d, list) else [d]):
                if isinstance(n, list):
                    raise BadValue(
                        f"{what}[{i}][{j}][{k}]: a list where an element count was expected "
                        "(a shape or a list of shapes)"
                    )
                whole(n, f"{what}[{i}][{j}][{k}]", 0, MAX_ELEMENTS)
    return value


def types(value, what: str) -> list:
    """'Input type': a list of type names."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise BadValue(f"{what} {_show(value)} is not a list of type names")
    return value


def identifier(value, what: str):
    """An id that joins events (External id, a thread id): a whole number or a string."""
    if isinstance(value, str):
        return value
    return whole(value, what, -MAX_ID, MAX_ID)


def _splits(value, what: str) -> str:
    """All-to-all split sizes as the trace gives them ('[]', '[4, 4]'), a list of counts kept as its text."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise BadValue(f"{what} {_show(value)} is not a list of split sizes")
    return str([whole(n, f"{what}[{i}]", 0, MAX_ELEMENTS) for i, n in enumerate(value)])


# the kernel args read (KERNEL_ARGS in events.py), each with its check
_KERNEL_ARG_CHECKS = {
    "Collective name": text,
    "In msg nelems": lambda v, what: whole(v, what, 0, MAX_ELEMENTS),
    "Out msg nelems": lambda v, what: whole(v, what, 0, MAX_ELEMENTS),
    "Group size": lambda v, what: whole(v, what, 1, MAX_WORLD),
    "dtype": text,
    "In split size": lambda v, what: _splits(v, what),
    "Process Group Name": optional_text,
    "Process Group Description": optional_text,
    "Process Group Ranks": ranks,
    "Seq": lambda v, what: whole(v, what, 0, MAX_ID),
    "correlation": lambda v, what: whole(v, what, 0, MAX_ID),
    "External id": identifier,
}


def kernel_args(args: dict, keys) -> dict:
    """The args of `keys` that are present, checked (a rank list as a tuple, split sizes as text)."""
    return {k: _KERNEL_ARG_CHECKS[k](args[k], f"args.{k!r}") for k in keys if k in args and args[k] is not None}
