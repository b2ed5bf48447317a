"""The command line: options -> spec -> one API call -> render. No logic lives here that the API lacks.

Commands live in one module per area; each registers itself on `app` (cli/options.py).
"""

from __future__ import annotations

import signal
import sys

import typer

from collperf.cli import (  # noqa: F401  (imported for their commands, which register on the app)
    doctor_command,
    interop_commands,
    log_commands,
    model_commands,
    plan_command,
    report_command,
    run_commands,
    systems_command,
    topology_commands,
    trace_command,
)
from collperf.cli.options import app
from collperf.cli.render import err, escape
from collperf.errors import RunError, UsageError


def main() -> None:
    # SIGTERM unwinds like Ctrl-C, so that ranks are killed and testbeds torn down on the way out
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        # without standalone mode click returns the exit code of typer.Exit instead of raising it
        code = app(standalone_mode=False)
        sys.exit(code if isinstance(code, int) else 0)
    except UsageError as e:
        err.print(f"[red]error:[/red] {escape(str(e))}")
        sys.exit(2)
    except RunError as e:
        err.print(f"[red]error:[/red] {escape(str(e))}")
        sys.exit(1)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except KeyboardInterrupt:  # before the parser takes over (click turns a later one into Abort)
        err.print("collperf: interrupted")
        sys.exit(130)
    except Exception as e:  # the command-line parser's own usage errors (click's, vendored by typer)
        if hasattr(e, "show") and hasattr(e, "exit_code"):
            e.show()
            sys.exit(e.exit_code)
        if type(e).__name__ == "Abort":
            sys.exit(130)
        raise


if __name__ == "__main__":
    main()
