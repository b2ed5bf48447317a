"""What the tests that stop or kill ranks share: a process's children, and the ranks' pids of a streaming bench."""

import os
from pathlib import Path


def children(pid: int) -> list[int]:
    """The pids whose parent is `pid` (read from /proc: no psutil)."""
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(entry))
    return kids


def pids_until_first_row(proc) -> tuple[dict, list]:
    """Read a bench's streamed stdout until its first row: {rank: pid} from its `#  Rank` lines, and the
    lines read (for a failure message)."""
    pids, lines = {}, []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("#  Rank"):
            f = line.split()
            pids[int(f[2])] = int(f[6])
        elif line.strip() and not line.startswith("#"):
            break
    return pids, lines


def as_a_shell_starts_it() -> None:
    """preexec_fn of a command a test interrupts: SIGINT unblocked and at its default, as a shell starts a command,
    whatever the test process inherited or was left with (a signal mask and ignored signals pass to children)."""
    import signal

    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)
