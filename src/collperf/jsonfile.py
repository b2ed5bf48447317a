"""Read a JSON file the user named, with an error that says which file and what went wrong."""

from __future__ import annotations

import json
from pathlib import Path

from collperf.errors import UsageError


def read_json(path, what: str, hint: str = ""):
    """The parsed document; a missing file or broken JSON is a UsageError naming `what` and `path`."""
    try:
        return json.loads(Path(path).read_text(errors="replace"))
    except FileNotFoundError:
        raise UsageError(f"{what} {str(path)!r} does not exist" + (f": {hint}" if hint else "")) from None
    except IsADirectoryError:
        raise UsageError(f"{what} {path} is a directory: give a file") from None
    except json.JSONDecodeError as e:
        raise UsageError(f"{what} {path}: not JSON ({e.msg} at line {e.lineno})") from None
    except (ValueError, RecursionError) as e:  # a 4301-digit integer, nesting deeper than Python's stack
        raise UsageError(f"{what} {path}: unreadable JSON ({str(e)[:80]})") from None
    except OSError as e:
        raise UsageError(f"cannot read {what} {str(path)!r}: {e.strerror or e}") from None
