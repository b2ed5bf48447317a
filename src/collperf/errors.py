"""The one error type for user mistakes.

A `UsageError` carries a message written for the person at the keyboard: the value received,
what was expected, and how to fix it. The CLI prints it without a traceback and exits with 2.
Anything else that escapes is a bug in collperf.
"""

import sys
from typing import Callable, Iterable, Mapping


class UsageError(ValueError):
    """Bad input from the user (a flag, a file, an API argument)."""


class RunError(RuntimeError):
    """A distributed run that failed: a rank died, raised, or the run timed out. The CLI prints it
    without a traceback and exits with 1."""


def run_main(main: Callable[[], None]) -> None:
    """Run a script's `main` as the CLI runs a command: a UsageError or a RunError ends it with its message
    alone on stderr and exit status 2 or 1, no traceback (the benchmarks in benchmarks/ use this)."""
    try:
        main()
    except (UsageError, RunError) as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2 if isinstance(e, UsageError) else 1) from None


def _key(name: object) -> str:
    """A name as lookups compare it: case, spaces, '-' and '_' ignored ('All_Reduce' is 'allreduce')."""
    return "".join(ch for ch in str(name).lower() if ch not in " -_")


def nearest(given: object, choices: Iterable[object], aliases: Mapping[str, object] | None = None) -> list[str]:
    """The known names a mistyped one most likely meant: an alias's target ('all_reduce_perf', nccl-tests' program,
    means allreduce), the choices whose names contain it (up to 3: 'nvl72' is gb200-nvl72 or gb300-nvl72), else
    the nearest by edit distance (difflib's ratio at least 0.6); [] when nothing is near. Every name lookup's
    error starts its advice with them (did_you_mean)."""
    pool = {_key(c): str(c) for c in choices}
    pool.update({_key(a): str(t) for a, t in (aliases or {}).items()})
    key = _key(given)
    if not key:
        return []
    if key in pool:
        return [pool[key]]
    containing = list(dict.fromkeys(name for k, name in pool.items() if key in k))
    if 0 < len(containing) <= 3:
        return containing
    import difflib  # only on an error's path

    among = [k for k in pool if key in k] or list(pool)  # 'h10': the nearest of those that contain it
    return [pool[k] for k in difflib.get_close_matches(key, among, n=1, cutoff=0.6)]


def did_you_mean(given: object, choices: Iterable[object], aliases: Mapping[str, object] | None = None) -> str:
    """'did you mean allreduce? ' (with its trailing space) or '': the start of an error's advice."""
    names = [n for n in nearest(given, choices, aliases) if n != str(given)]
    return f"did you mean {' or '.join(names)}? " if names else ""
