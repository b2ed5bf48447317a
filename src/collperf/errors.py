"""The one error type for user mistakes.

A `UsageError` carries a message written for the person at the keyboard: the value received,
what was expected, and how to fix it. The CLI prints it without a traceback and exits with 2.
Anything else that escapes is a bug in collperf.
"""


class UsageError(ValueError):
    """Bad input from the user (a flag, a file, an API argument)."""


class RunError(RuntimeError):
    """A distributed run that failed: a rank died, raised, or the run timed out. The CLI prints it
    without a traceback and exits with 1."""
