"""`python -m collperf` and the `collperf` command. The command line's modules (typer, rich, every command) take
a moment to import; Ctrl-C in that moment ends with one line and 130, as it does once a command runs."""

import sys

try:
    from collperf.cli import main as _run_command
except KeyboardInterrupt:
    print("collperf: interrupted", file=sys.stderr)
    raise SystemExit(130) from None


def main() -> None:
    _run_command()


if __name__ == "__main__":
    main()
