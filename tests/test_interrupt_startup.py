"""Ctrl-C at any moment, start-up included, ends quietly: one line, status 130 (or the process ended by the
signal itself, which a shell reports as 130 too), never a traceback from the imports."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import collperf

ENV = {**os.environ, "PYTHONPATH": str(Path(collperf.__file__).parents[1])}
COMMAND = [
    sys.executable,
    "-m",
    "collperf",
    "predict",
    "allreduce",
    "-p",
    "8",
    "--latency",
    "5us",
    "--bandwidth",
    "50GB/s",
    "-s",
    "1M",
]


def test_an_interrupt_while_the_cli_imports_gives_one_line_and_130():
    # deterministic: the interrupt raised by the import of the command line itself
    code = (
        "import builtins, sys\n"
        "real = builtins.__import__\n"
        "def interrupted(name, *args, **kwargs):\n"
        "    if name == 'collperf.cli': raise KeyboardInterrupt\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = interrupted\n"
        "from collperf.__main__ import main\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=120)
    assert done.returncode == 130 and done.stderr == "collperf: interrupted\n", done.stderr


def test_sigint_at_start_up_never_prints_a_traceback():
    for delay_s in (0.05, 0.2, 0.4):
        p = subprocess.Popen(COMMAND, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
        time.sleep(delay_s)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
        assert p.returncode in (130, -signal.SIGINT, 0), (delay_s, p.returncode, err)
        assert "Traceback" not in err and len(err.strip().splitlines()) <= 1, (delay_s, err)
