"""Validators the specs share: whole numbers, sizes, rank lists, simulator modes, files to write."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeAlias, TypeVar

from collperf import units
from collperf.errors import UsageError

# a file as the user names it: text or a path object (anything with __fspath__)
PathArg: TypeAlias = "str | os.PathLike[str]"
# sizes as given: '1M,64M', one size (text or bytes) or a list of them
SizesArg: TypeAlias = "str | int | float | Iterable[str | int]"
# a path as the caller gave it (str or Path): returned unchanged
PathT = TypeVar("PathT", bound="str | os.PathLike[str]")


def whole(name: str, value: object, low: int = 1, flag: str = "") -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise UsageError(f"{name} {value!r}: expected a whole number >= {low}" + (f" ({flag})" if flag else ""))


def output_path(path: PathT | None, flag: str) -> PathT | None:
    """Check a file the command will write, before any work: its folder exists and is writable, and
    the path is not a folder. Returns the path (None stays None)."""
    import os
    from pathlib import Path

    if path is None:
        return None
    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    if not str(path) or str(path).endswith(os.sep):
        raise UsageError(f"{flag} {path!r}: not a file name; give one, e.g. {flag} results.json")
    if p.is_dir():
        raise UsageError(f"{flag} {path}: is a folder; give a file name, e.g. {flag} {p / 'out'}")
    if not folder.is_dir():
        raise UsageError(f"{flag} {path}: the folder {folder} does not exist; create it or write elsewhere")
    if not os.access(folder, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise UsageError(f"{flag} {path}: not writable; choose another place")
    # the permission bits do not tell a virtual or read-only file system (/proc, a read-only mount): open it
    # for appending, as the command will write it, and leave nothing behind where it was not there before
    existed = p.exists()
    try:
        with open(p, "a"):
            pass
    except OSError as e:
        raise UsageError(f"{flag} {path}: cannot be written ({e.strerror}); choose another place") from None
    if not existed:
        p.unlink(missing_ok=True)
    return path


def write_output(path: PathArg, text: str, flag: str) -> None:
    """Write a file the user named: a place output_path cannot foresee refusing it (a read-only or
    virtual file system such as /proc, a full disk) is a usage error naming the flag, not a traceback."""
    try:
        Path(path).write_text(text)
    except OSError as e:
        raise UsageError(f"{flag} {path}: cannot be written ({e.strerror or e}); choose another place") from None


def sizes(value: SizesArg) -> list[int]:
    """'1M,64M', one size, or a list of sizes -> bytes."""
    if isinstance(value, str):
        return units.parse_sizes(value)
    if isinstance(value, (int, float)):
        return [units.parse_size(int(value))]
    return [units.parse_size(s) for s in value]


def path_list(paths: PathArg | Iterable[PathArg] | None) -> list[PathArg]:
    """Files given as one path (a str or a Path) or several: always a list (a copy)."""
    if isinstance(paths, (str, os.PathLike)):  # os.PathLike: anything with __fspath__
        return [paths]
    return list(paths or [])


def check_mode(mode: str) -> None:
    """The simulator's modes (simulate/): rounds, or events (congestion-aware)."""
    if mode not in ("rounds", "events"):
        raise UsageError(f"mode {mode!r}: expected rounds or events")


def rank_list(value: str | Iterable[int | str] | None, flag: str = "--ranks") -> list[int] | None:
    """'0,1,4' (or a list of ints) -> distinct ranks; None stays None."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else list(value)
    try:
        ranks = [int(str(r).strip()) for r in items]
    except ValueError:
        raise UsageError(f"{flag} {value!r}: expected rank numbers such as 0,1,4") from None
    if not ranks or any(r < 0 for r in ranks):
        raise UsageError(f"{flag} {value!r}: expected rank numbers >= 0 such as 0,1,4")
    twice = sorted({r for r in ranks if ranks.count(r) > 1})
    if twice:
        raise UsageError(
            f"{flag} {','.join(map(str, ranks))}: rank(s) {', '.join(map(str, twice))} given twice; list each rank once"
        )
    return ranks


def cli_option(*flags: str, help: str, type: type | None = None) -> dict[str, dict[str, Any]]:
    """A spec field's command-line option, declared once beside the field: its flags and help text (the field
    gives the default; `type`: what the command line takes when the default is None, str unless given; no
    flags: the command's argument). The CLI makes its typer options from these (cli/options.py
    spec_options). Used as field(metadata=...)."""
    return {"cli": {"flags": flags, "help": help, "type": type}}
