"""Read benchmark logs into Tables: nccl-tests text (every vintage) and JSON, collperf's bench JSON
and CSV, OSU and Intel MPI Benchmarks, and the rest of formats.FORMATS. `load` decodes the bytes (gzip, UTF-16,
line ends); the format is told from the content by that table's order."""

from __future__ import annotations

from pathlib import Path

from collperf import units
from collperf.collectives import get_collective
from collperf.ingest import consistency, formats, host_layout, inspector
from collperf.ingest.inputs import OtherInput
from collperf.ingest.table import IngestError, Row, Table

__all__ = ["load", "parse", "IngestError", "OtherInput", "Row", "Table"]


STDIN = "-"  # the path that means standard input (`kubectl logs ... | collperf diagnose -`)


def load(path, collective: str | None = None, ranks: int | None = None, max_bytes: int | None = None) -> list[Table]:
    """The tables of one log file ('-': standard input); a file over `max_bytes` is refused before it is read.
    The text may be UTF-8 or UTF-16 (with its byte-order mark: PowerShell's `>` writes it) with any line ends."""
    if str(path) == STDIN:
        return parse(_stdin_text(max_bytes), "<stdin>", collective, ranks)
    try:
        if max_bytes is not None and (size := Path(path).stat().st_size) > max_bytes:
            raise IngestError(
                f"{path}: {units.format_size(size)} is over the {units.format_size(max_bytes)} a log may "
                f"have (--max-bytes): pass --max-bytes {-(-size // (1 << 20))}MiB (it is read whole "
                "into memory), or split the log and read the parts"
            )
        with open(path, "rb") as f:
            head = f.read(4)
        if head.startswith(_GZIP):
            return parse(_gunzip(path, str(path)), str(path), collective, ranks)
        if not head.startswith((_UTF16_LE, _UTF16_BE)):
            # an Inspector dump is streamed line by line: its text is never held whole
            streamed = inspector.load_jsonl(path, str(path), _checked(collective, ranks))
            if streamed is not None:
                return _finish(streamed, ranks)
        text = decode(Path(path).read_bytes())
    except FileNotFoundError:
        raise IngestError(f"log file {str(path)!r} does not exist") from None
    except IsADirectoryError:
        raise IngestError(f"{path} is a directory: give a log file") from None
    except OSError as e:
        raise IngestError(f"cannot read log file {str(path)!r}: {e.strerror or e}") from None
    return parse(text, str(path), collective, ranks)


_UTF16_LE, _UTF16_BE = b"\xff\xfe", b"\xfe\xff"
_GZIP = b"\x1f\x8b"


def _gunzip(source, name: str) -> str:
    """A gzip-compressed log's text (a file path or the bytes of standard input). A compressed profiler trace
    (Kineto writes *.pt.trace.json.gz) is told apart from its first 64 KiB, before it is inflated whole."""
    import gzip
    import io
    import zlib

    try:
        with gzip.open(io.BytesIO(source) if isinstance(source, bytes) else source, "rb") as f:
            head = f.read(65536)
            if formats.KINETO.encode() in head:
                raise IngestError(formats.trace_message(name))
            return decode(head + f.read())
    except (OSError, EOFError, zlib.error) as e:  # zlib's error: a stream corrupt past its header
        raise IngestError(f"{name}: a broken gzip file ({e}): decompress it, or give the log itself") from None


def decode(data: bytes) -> str:
    """A log's bytes as text: UTF-16 by its byte-order mark (PowerShell 5's `>` and Out-File write UTF-16 LE with
    one), or UTF-16 LE without one when nearly every other byte of its start is NUL; else UTF-8 (a UTF-8 BOM dropped,
    undecodable bytes replaced). Line ends are '\n' whatever they were (CRLF from Windows, CR alone)."""
    if data.startswith((_UTF16_LE, _UTF16_BE)):
        text = data.decode("utf-16", errors="replace")
    elif _utf16_le_without_bom(data[:256]):
        text = data.decode("utf-16-le", errors="replace")
    else:
        text = data.decode("utf-8-sig", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _utf16_le_without_bom(head: bytes) -> bool:
    """UTF-16 LE text: a log's characters are mostly below U+0100, so a third or more of its bytes are NUL and most
    of those are high (odd) bytes; a UTF-8 log has none. Non-ASCII characters (an ideographic space for every
    blank) still leave most NULs odd."""
    zeros_odd, zeros_even = head[1::2].count(0), head[0::2].count(0)
    return len(head) >= 4 and zeros_odd + zeros_even >= len(head) / 3 and zeros_odd >= 0.75 * (zeros_odd + zeros_even)


def _stdin_text(max_bytes: int | None) -> str:
    import sys

    if sys.stdin is None or sys.stdin.isatty():
        raise IngestError(
            "log '-' is standard input, and nothing is piped in: pipe a log, e.g. "
            "`kubectl logs POD | collperf diagnose -`, or give a file"
        )
    stream = getattr(sys.stdin, "buffer", None)
    limit = max_bytes + 1 if max_bytes is not None else -1
    data = stream.read(limit) if stream is not None else sys.stdin.read(limit).encode()
    if max_bytes is not None and len(data) > max_bytes:
        raise IngestError(
            f"<stdin>: more than the {units.format_size(max_bytes)} a log may have (--max-bytes): pass "
            "a larger --max-bytes, or save the log and split it"
        )
    return _gunzip(data, "<stdin>") if data.startswith(_GZIP) else decode(data)


def _checked(collective: str | None, ranks: int | None) -> str | None:
    """The collective's canonical name, after checking both arguments."""
    if ranks is not None and (isinstance(ranks, bool) or not isinstance(ranks, int) or ranks < 1):
        raise IngestError(f"ranks {ranks!r} is not a positive whole number: expected --ranks >= 1")
    return get_collective(collective).name if collective is not None else None


def _finish(tables: list[Table], ranks: int | None) -> list[Table]:
    for t in tables:
        _given_ranks(t, ranks)
        host_layout.settle(t)  # nodes x GPUs per node from elided device lines, once the rank count is known
    return tables


def parse(text: str, source: str = "<log>", collective: str | None = None, ranks: int | None = None) -> list[Table]:
    log = formats.Text.of(text, source, _checked(collective, ranks), ranks)
    if not log.stripped:
        raise IngestError(f"{source}: the file is empty")
    tables = formats.read(log)
    for t in tables:
        t.text = log.text
        if ranks is None:
            consistency.read_ranks_from_counts(t)  # the count column states it: before anything guesses
    return _finish(tables, ranks)


def _given_ranks(t: Table, ranks: int | None) -> None:
    """--ranks fills a rank count the log lacks; it never silently loses against one the log states."""
    if ranks is None or t.ranks == ranks:
        return
    if t.ranks is not None:
        where = t.header.get("ranks_from", "the log")
        raise IngestError(
            f"{t.source}: --ranks {ranks} but the log says {t.ranks} ranks (from {where}): leave --ranks "
            "out, or check that this is the log you meant"
        )
    at_least = t.header.get("ranks_at_least")
    if at_least and ranks < at_least:
        raise IngestError(
            f"{t.source}: --ranks {ranks} but the device lines list rank {at_least - 1}: expected --ranks >= {at_least}"
        )
    t.ranks = ranks
    t.notes.append(f"rank count {ranks} given on the command line")
    if t.header.get("collective_from") == "given" or t.collective:
        consistency.check_factor(t)
