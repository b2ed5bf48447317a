"""Link tests as per-link measurements: perftest's ib_write_bw / ib_read_bw / ib_send_bw (one block per HCA), NVIDIA's
nvbandwidth (a matrix per test, GPU pairs in its device_to_device_* tests) and the CUDA samples'
p2pBandwidthLatencyTest (its unidirectional and bidirectional matrices, P2P enabled and disabled).

Units as the tools print them: perftest's "BW average[MB/sec]" is 2^20 bytes/s and "[Gb/sec]" 10^9 bits/s
(perftest src/perftest_parameters.c print_report_bw: format_factor 0x100000 or 125000000); its bidirectional tests
report both directions together. nvbandwidth reports GB/s (10^9) of one direction (its README: a bidirectional test
measures one copy while the opposite one runs). p2pBandwidthLatencyTest prints GB/s (10^9) and counts both directions
in its bidirectional matrices (cuda-samples Samples/5_Domain_Specific/p2pBandwidthLatencyTest: "gb *= 2").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from collperf.ingest import validate as v
from collperf.ingest.table import IngestError


@dataclass(frozen=True)
class LinkMeasurement:
    link: str  # "mlx5_0", "GPU 0 -> GPU 1"
    kind: str  # "nic" or "gpu-pair"
    bandwidth_GBps: float  # 10^9 bytes/s, as measured
    directions: int  # 1: one direction; 2: both counted together
    test: str  # the test or matrix it comes from
    line: str
    src: int | None = None
    dst: int | None = None
    p2p: bool | None = None  # p2pBandwidthLatencyTest: peer-to-peer on or off for this matrix
    link_type: str = ""  # perftest: IB or Ethernet (RoCE)


@dataclass(frozen=True)
class LinkTest:
    source: str
    tool: str  # "perftest", "nvbandwidth", "p2pBandwidthLatencyTest"
    measurements: tuple[LinkMeasurement, ...]
    devices: tuple[str, ...] = ()  # GPU names the output lists, in device order
    no_peer: tuple[tuple[int, int], ...] = ()  # pairs the output says cannot access each other
    tests: tuple[str, ...] = ()


def detect(text: str) -> str | None:
    """Which link test printed the text, None for none of them."""
    head = text[:65536]
    if "#bytes" in head and "#iterations" in head and "BW average[" in head:
        return "perftest"
    if "nvbandwidth Version" in head or re.search(r"^Running \w+_(?:ce|sm)\.", head, re.MULTILINE):
        return "nvbandwidth"
    if "P2P (Peer-to-Peer) GPU Bandwidth Latency Test" in head or re.search(
        r"(?:Unidirectional|Bidirectional) P2P=(?:Enabled|Disabled) Bandwidth", head
    ):
        return "p2pBandwidthLatencyTest"
    return None


def parse(text: str, source: str = "<link test>") -> LinkTest:
    tool = detect(text)
    if tool == "perftest":
        return _perftest(text, source)
    if tool == "nvbandwidth":
        return _nvbandwidth(text, source)
    if tool == "p2pBandwidthLatencyTest":
        return _p2p(text, source)
    raise IngestError(
        f"{source}: not a link test: expected ib_write_bw/ib_read_bw, nvbandwidth or p2pBandwidthLatencyTest output"
    )


def _number(token: str, source: str, number: int) -> float:
    if not v.is_number(token) or not (value := float(token)) >= 0 or value == float("inf"):
        raise IngestError(f"{source}, line {number}: {token[:40]!r} is not a bandwidth (a number >= 0)")
    return value


_UNIT = re.compile(r"BW average\[(MB/sec|Gb/sec)\]")


def _perftest(text: str, source: str) -> LinkTest:
    out: list[LinkMeasurement] = []
    device, link_type, test, unit, best = "?", "", "", None, None
    tests = []

    def close():
        nonlocal best
        if best is not None:
            out.append(best)
            best = None

    for number, ln in enumerate(text.splitlines(), 1):
        s = ln.strip()
        if s.endswith("BW Test") and not s.startswith("#"):
            close()
            test = " ".join(s.split())
            tests.append(test)
        elif "Device" in s and (m := re.search(r"Device\s*:\s*(\S+)", s)):
            device = m.group(1)
        elif s.startswith("Link type") and ":" in s:
            link_type = s.split(":", 1)[1].strip()
        elif s.startswith("#bytes") and (m := _UNIT.search(s)):
            close()
            unit = m.group(1)
        elif unit and s and s[0].isdigit():
            words = s.split()
            if len(words) < 4 or not v.is_whole(words[0]):
                continue
            average = _number(words[3], source, number)
            GBps = average * (1048576 / 1e9 if unit == "MB/sec" else 1 / 8)
            both = 2 if "Bidirectional" in test else 1
            row = LinkMeasurement(
                device, "nic", GBps, both, test or "perftest", f"line {number}: {' '.join(words)}", link_type=link_type
            )
            if best is None or int(words[0]) >= _size(best):
                best = row  # the largest message size: the bandwidth regime, past per-message costs
        elif s.startswith("---") and best is not None and unit:
            close()
            unit = None
    close()
    if not out:
        raise IngestError(
            f"{source}: perftest output with no result row under '#bytes #iterations BW peak ... BW "
            "average': the test did not finish (give the client's output)"
        )
    # a server's and a client's output of one run list the same device twice: its best is what the link carried
    best_of = {}
    for m in out:
        if m.link not in best_of or m.bandwidth_GBps > best_of[m.link].bandwidth_GBps:
            best_of[m.link] = m
    return LinkTest(source, "perftest", tuple(best_of.values()), tests=tuple(dict.fromkeys(tests)))


def _size(m: LinkMeasurement) -> int:
    return int(m.line.split(": ", 1)[1].split()[0])


_MATRIX_TITLE = re.compile(r"bandwidth \(GB/s\)|Bandwidth.{0,40}Matrix \(GB/s\)")


def _is_index(token: str) -> bool:
    """A GPU index as the tools print it: ASCII digits (str.isdigit takes '²', which int() refuses), a few of them
    (int() refuses more than 4300)."""
    return len(token) <= 6 and token.isascii() and token.isdigit()


def _matrix(lines: list[str], start: int, source: str) -> tuple[list[tuple[int, int, float, str]], int]:
    """The cells of the matrix whose column header is lines[start]: (row, column, GB/s, line) off the diagonal."""
    cols = [int(c) for c in lines[start].replace("D\\D", "").split() if _is_index(c)]
    cells, i = [], start + 1
    while i < len(lines) and lines[i].strip() and _is_index(lines[i].split()[0]):
        words = lines[i].split()
        r = int(words[0])
        for c, token in zip(cols, words[1:]):
            if c != r and token not in ("N/A", "n/a"):
                cells.append((r, c, _number(token, source, i + 1), f"line {i + 1}: {' '.join(words)}"))
        i += 1
    return cells, i


def _nvbandwidth(text: str, source: str) -> LinkTest:
    lines = text.splitlines()
    devices = [m.group(1).split(" (")[0] for ln in lines if (m := re.match(r"\s*Device \d{1,4}: (.+)", ln))]
    out, tests, test = [], [], ""
    i = 0
    while i < len(lines):
        ln = lines[i]
        if m := re.match(r"\s*Running (\w+)\.", ln):
            test = m.group(1)
            tests.append(test)
        elif _MATRIX_TITLE.search(ln) and "GPU(row)" in ln and "GPU(column)" in ln and i + 1 < len(lines):
            # a GPU-to-GPU matrix (the host tests print CPU(row)); its test is named by the Running line before it
            # or the SUM line after it (a pasted output may keep only one of them)
            arrow = "<-" if "<-" in ln else "->"
            cells, i = _matrix(lines, i + 1, source)
            after = next((m.group(1) for ln2 in lines[i : i + 3] if (m := re.match(r"\s*SUM (\w+)", ln2))), None)
            test = after or test or "GPU-to-GPU copy"
            tests.append(test)
            for r, c, GBps, where in cells:
                # "GPU(row) <- GPU(column)": the column's data lands on the row
                src, dst = (c, r) if arrow == "<-" else (r, c)
                out.append(LinkMeasurement(f"GPU {src} -> GPU {dst}", "gpu-pair", GBps, 1, test, where, src, dst))
            continue
        i += 1
    if not out:
        raise IngestError(
            f"{source}: nvbandwidth output with no device_to_device matrix (ran: "
            f"{', '.join(tests) or 'no test'}): run e.g. `nvbandwidth -t device_to_device_memcpy_write_ce` "
            "on a node with two or more GPUs"
        )
    return LinkTest(source, "nvbandwidth", tuple(out), tuple(devices), tests=tuple(tests))


def _p2p(text: str, source: str) -> LinkTest:
    lines = text.splitlines()
    devices = [m.group(1).strip() for ln in lines if (m := re.match(r"\s*Device: \d{1,4}, ([^,]+),", ln))]
    no_peer = tuple(
        (int(a), int(b))
        for ln in lines
        if (m := re.match(r"\s*Device=(\d{1,4}) CANNOT Access Peer Device=(\d{1,4})", ln))
        for a, b in [m.groups()]
    )
    out, tests = [], []
    i = 0
    while i < len(lines):
        ln = lines[i].strip()
        if "Bandwidth" in ln and "Matrix" in ln and "P2P=" in ln and i + 1 < len(lines):
            parts = ln.split("(GB/s)")  # the unit and the spaces before it dropped (no pattern: linear on any line)
            title = "".join(p.rstrip() for p in parts[:-1]) + parts[-1]
            tests.append(title)
            both = 2 if ln.startswith("Bidirectional") else 1
            cells, i = _matrix(lines, i + 1, source)
            for r, c, GBps, where in cells:
                out.append(
                    LinkMeasurement(
                        f"GPU {r} -> GPU {c}" if both == 1 else f"GPU {r} <-> GPU {c}",
                        "gpu-pair",
                        GBps,
                        both,
                        title,
                        where,
                        r,
                        c,
                        "P2P=Enabled" in ln,
                    )
                )
            continue
        i += 1
    if not out:
        raise IngestError(
            f"{source}: p2pBandwidthLatencyTest output with no bandwidth matrix: give the whole output "
            "(the matrices follow the 'P2P Connectivity Matrix')"
        )
    return LinkTest(source, "p2pBandwidthLatencyTest", tuple(out), tuple(devices), no_peer, tuple(tests))
