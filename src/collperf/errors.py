"""The one error type for user mistakes.

A `UsageError` carries a message written for the person at the keyboard: the value received,
what was expected, and how to fix it. The CLI prints it without a traceback and exits with 2.
Anything else that escapes is a bug in collperf.
"""

import sys
from typing import Callable


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
