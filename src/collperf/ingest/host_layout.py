"""Nodes and GPUs per node from the device lines nccl-tests prints when some were elided ('...' between them).

The lines that remain still say where their ranks ran: `Rank 127 ... on node-031 device 3`. Launchers number ranks
host by host (rank = host x GPUs per host + device: mpirun's and srun's block placement, torchrun's node rank), and
clusters number their hosts (node-000 .. node-031, gpu-a, gpu-b). Where every remaining line fits that rule for
one whole GPUs-per-host g, the layout is read, not guessed: g from two hosts' lines, the node count from the rank
count (the count column's) / g. Where the lines do not settle it (one host listed, names without a number, lines
off the rule), the table says so and names the flag that settles it (--nodes).
"""

from __future__ import annotations

import string

_DIGITS = "0123456789"
_MAX_DIGITS = 12  # a host's number; a longer run of digits numbers no host


def _host_number(host: str) -> tuple[str, int] | None:
    """(the name's prefix, its number): node-031 -> ('node-', 31); node-b -> ('node-', 1); None without one."""
    name = host.split(".")[0]  # a domain after the host's own name is no part of its number
    # string methods, not patterns: a name is any text a log prints, and a pattern that backtracks over a long
    # run of digits is quadratic (tests/line_patterns.py)
    stem = name.rstrip(_DIGITS)
    if 0 < len(name) - len(stem) <= _MAX_DIGITS:
        return stem, int(name[len(stem) :])
    if len(name) >= 2 and name[-1] in string.ascii_lowercase and name[-2] not in string.ascii_letters:
        return name[:-1], ord(name[-1]) - ord("a")  # node-a, node-b: one lower-case letter after a separator
    return None


def read_layout(devices: list[dict]) -> tuple[int | None, str, int]:
    """GPUs per host from the remaining device lines ({rank, host, device}), why (or why not), and how many hosts
    the lines number at least."""
    numbered = [(_host_number(d["host"]), d["rank"], d["device"]) for d in devices]
    if any(n is None for n, _, _ in numbered):
        return None, "a host name without a number", 0
    if len({n[0] for n, _, _ in numbered}) > 1:
        return None, "host names of different patterns", 0
    lines = [(n[1], rank, device) for n, rank, device in numbered]
    first = min(lines)
    others = [line for line in lines if line[0] != first[0]]
    if not others:
        return None, "one host listed", 1
    number, rank, device = others[0]
    step, rest = divmod((rank - device) - (first[1] - first[2]), number - first[0])
    if rest or step < 1:
        return None, "ranks that do not follow the hosts' numbers", 0
    base = first[0] - (first[1] - first[2]) // step
    # every line: its rank is (host number - the first host's) x g + its device, its device below g
    if any(
        device >= step or (rank - device) % step or number - base != (rank - device) // step
        for number, rank, device in lines
    ):
        return None, "ranks that do not follow the hosts' numbers", 0
    return step, f"rank = host x {step} + device on every device line listed", max(lines)[0] - base + 1


def settle(t) -> None:
    """The table's node count from its GPUs per host (read_layout, at the elided device lines) and its rank count,
    once both are known; a note either way."""
    per_host = t.header.get("gpus_per_host")
    why = t.header.get("host_layout")
    if not t.header.get("devices_elided") or t.nodes is not None or why is None:
        return
    if per_host and t.ranks and t.ranks % per_host == 0 and t.ranks // per_host >= t.header["hosts_at_least"]:
        t.nodes = t.ranks // per_host
        t.header["nodes_from"] = "host numbering"
        t.notes.append(
            f"{t.nodes} node(s) x {per_host} GPUs read from the device lines that remain ({why}; "
            f"{t.ranks} ranks / {per_host})"
        )
        return
    if per_host and t.ranks:
        why = f"{t.ranks} ranks do not fill hosts of {per_host} GPUs numbered as the device lines are"
    elif per_host:
        why = "the rank count is not known"
    t.notes.append(f"the device lines that remain do not settle nodes x GPUs per node ({why}): --nodes N settles it")
