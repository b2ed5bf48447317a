"""Logs as users hold them: piped on standard input (`kubectl logs ... | collperf diagnose -`), saved by PowerShell
(UTF-16 with a byte-order mark, CRLF line ends), gzip-compressed; a profiler trace given to diagnose points to
`collperf trace`."""

import gzip
import io
import sys
from pathlib import Path

import pytest

from collperf import cli
from collperf.ingest import IngestError, decode, load, parse

ROOT = Path(__file__).parent.parent
LOG = ROOT / "examples" / "14_h100-ib400-2node-16gpu-allreduce.txt"
TRACE = ROOT / "tests" / "fixtures" / "traces" / "nccl" / "rank0.json.gz"


def _rows(tables):
    return [(t.collective, t.ranks, [(r.size, r.time_s, r.busbw_GBps, r.line) for r in t.rows]) for t in tables]


def _diagnose_stdin(monkeypatch, capsys, data: bytes, *args):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    monkeypatch.setattr(sys, "argv", ["collperf", "diagnose", "-", *args])
    with pytest.raises(SystemExit) as info:
        cli.main()
    out = capsys.readouterr()
    return info.value.code, out.out, " ".join(out.err.split())


def test_a_log_piped_on_stdin_is_diagnosed_as_the_file(monkeypatch, capsys):
    code, out, err = _diagnose_stdin(monkeypatch, capsys, LOG.read_bytes())
    assert code == 0, err
    assert "<stdin>: allreduce, 16 ranks on 2 node(s), 64 rows" in out


@pytest.mark.parametrize(
    "encode",
    [
        lambda t: t.replace("\n", "\r\n").encode("utf-16"),  # PowerShell 5's `>`: UTF-16 LE, BOM, CRLF
        lambda t: b"\xfe\xff" + t.encode("utf-16-be"),  # big-endian with its BOM
        lambda t: t.replace("\n", "\r\n").encode("utf-16-le"),  # little-endian without a BOM (guessed)
        lambda t: b"\xef\xbb\xbf" + t.replace("\n", "\r\n").encode(),  # UTF-8 with a BOM (Notepad), CRLF
        lambda t: gzip.compress(t.encode()),  # gzip-compressed
    ],
    ids=["utf16-bom-crlf", "utf16-be-bom", "utf16-le-no-bom", "utf8-bom-crlf", "gzip"],
)
def test_a_log_in_another_encoding_reads_as_the_utf8_one(tmp_path, encode):
    text = LOG.read_text()
    data = encode(text)
    path = tmp_path / "saved.txt"
    path.write_bytes(data)
    assert _rows(load(path)) == _rows(load(LOG))


def test_crlf_text_given_to_parse_reads_as_lf():
    text = LOG.read_text()
    assert _rows(parse(text.replace("\n", "\r\n"))) == _rows(parse(text))
    assert decode(b"a\r\nb\rc\n") == "a\nb\nc\n"


def test_a_profiler_trace_given_to_diagnose_points_to_trace(tmp_path, monkeypatch, capsys):
    with pytest.raises(IngestError, match="PyTorch profiler .* trace.*use `collperf trace"):
        load(TRACE)
    plain = tmp_path / "rank0.json"
    plain.write_bytes(gzip.decompress(TRACE.read_bytes()))
    with pytest.raises(IngestError, match=f"use `collperf trace {plain}`"):
        load(plain)
    code, _, err = _diagnose_stdin(monkeypatch, capsys, plain.read_bytes())
    assert code == 2 and "use `collperf trace FILE`" in err and "Traceback" not in err


def test_stdin_from_a_terminal_or_empty_is_a_clear_error(monkeypatch, capsys):
    code, _, err = _diagnose_stdin(monkeypatch, capsys, b"")
    assert code == 2 and "<stdin>: the file is empty" in err


def test_fuzz_every_encoding_reads_as_the_text(tmp_path):
    """A fuzz kind: each fixture format, mutated as test_fuzz_logs mutates it, then saved in an encoding users' tools
    write (UTF-16 with and without its BOM, UTF-8 with a BOM, CRLF, gzip): read from the file, it gives the rows
    the text gives, or the same kind of clear error."""
    import random
    import test_fuzz_logs as fuzz

    encodings = [
        lambda t: t.encode("utf-16"),
        lambda t: t.encode("utf-16-le"),
        lambda t: t.encode("utf-8-sig"),
        lambda t: t.replace("\n", "\r\n").encode(),
        lambda t: gzip.compress(t.encode()),
    ]
    inputs = fuzz._formats()
    tried = 0
    for seed in range(160):
        rng = random.Random(seed)
        name, original = inputs[seed % len(inputs)]
        text = fuzz.mutate(original, rng) if seed % 2 else original
        if "\r" in text or "\x00" in text:
            continue  # a CR or NUL of the mutation's own: the byte level is not what this compares
        try:
            data = rng.choice(encodings)(text)
        except UnicodeEncodeError:
            continue  # a lone surrogate: no encoding writes it
        if name.endswith(".csv") or name.endswith(".jsonl"):
            continue  # CSV is read with its collective and ranks given; JSON-lines streamed: covered apart
        path = tmp_path / f"seed{seed}.log"
        path.write_bytes(data)
        expected = got = None
        try:
            expected = _rows(parse(text, "x"))
        except IngestError as e:
            expected = type(e)
        except Exception:  # noqa: BLE001 - the text's own reading is test_fuzz_logs' concern
            continue
        try:
            got = _rows(load(path))
        except IngestError as e:
            got = type(e)
        assert got == expected, f"{name} seed {seed}"
        tried += 1
    assert tried > 60


def test_a_gzip_stream_corrupt_past_its_header_is_refused_by_name(tmp_path, monkeypatch, capsys):
    """zlib's own error (not an OSError) from a stream whose header is sound: a UsageError naming the file."""
    data = bytearray(gzip.compress(LOG.read_bytes()))
    data[len(data) // 2 : len(data) // 2 + 16] = b"\xff" * 16
    corrupt = tmp_path / "log.txt.gz"
    corrupt.write_bytes(bytes(data))
    with pytest.raises(IngestError, match="log.txt.gz: a broken gzip file"):
        load(corrupt)
    code, _, err = _diagnose_stdin(monkeypatch, capsys, bytes(data))
    assert code == 2 and "<stdin>: a broken gzip file" in err
