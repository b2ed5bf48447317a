"""A streaming reader for Kineto's trace JSON: the top-level object's small values are decoded whole, the
`traceEvents` array one event at a time, so a trace of any size is read in the memory of one chunk plus
what the caller keeps.

The tokenizer is json's own C decoder (`JSONDecoder.raw_decode`) applied at each value's start in a
sliding text window: a value cut by the window's end fails to decode and the window grows until it
does. Events are a few hundred bytes, so each is decoded once or twice; a malformed value is reported
as soon as the window holds more than `_LIMIT` characters past its start.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable
from pathlib import Path

from collperf.errors import UsageError

_CHUNK = 1 << 20          # characters read at a time
_LIMIT = 64 << 20         # no single value (an event, distributedInfo) is this long in a real trace
_SEPARATORS = re.compile(r"[\s,]*")
_AFTER_NUMBER = re.compile(r"[^0-9.eE+-]")
_DECODER = json.JSONDecoder()


class _Window:
    def __init__(self, f, source: str):
        self.f, self.source = f, source
        self.text, self.pos, self.eof = "", 0, False

    def _more(self) -> bool:
        chunk = self.f.read(_CHUNK)
        if not chunk:
            self.eof = True
            return False
        self.text = self.text[self.pos:] + chunk
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next character that is not white space or a comma ('' at the end)."""
        while True:
            self.pos = _SEPARATORS.match(self.text, self.pos).end()
            if self.pos < len(self.text) or not self._more():
                return self.text[self.pos:self.pos + 1]

    def expect(self, char: str, what: str) -> None:
        if self.peek() != char:
            found = self.text[self.pos:self.pos + 40] or "the end of the file"
            raise UsageError(f"{self.source}: not a Kineto trace: expected {what} ('{char}'), found {found!r}; "
                             "give a file written by torch.profiler's export_chrome_trace (.json or .json.gz)")
        self.pos += 1

    def value(self):
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.text, self.pos)
            except json.JSONDecodeError as e:
                if len(self.text) - self.pos > _LIMIT or not self._more():
                    raise UsageError(f"{self.source}: not valid JSON near character {e.pos} of its window "
                                     f"({e.msg}); the trace is cut or corrupt: export it again") from None
                continue
            # a number cut by the window's end decodes as its prefix ('0' of '0.5'): unless a character that
            # cannot continue it follows, it may go on in the next chunk
            if (isinstance(value, (int, float)) and not isinstance(value, bool) and not self.eof
                    and not _AFTER_NUMBER.search(self.text, end) and self._more()):
                continue
            self.pos = end
            return value


def _open(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def scan(path, on_event: Callable[[dict], None]) -> dict:
    """Call `on_event` for every event of `traceEvents` in file order; return the other top-level keys."""
    path = Path(path)
    top: dict = {}
    try:
        with _open(path) as f:
            w = _Window(f, str(path))
            w.expect("{", "a JSON object")
            while w.peek() not in ("}", ""):
                key = w.value()
                w.expect(":", "a ':' after a key")
                if key != "traceEvents":
                    top[key] = w.value()
                    continue
                w.expect("[", "traceEvents to be an array")
                top["traceEvents"] = 0
                while w.peek() not in ("]", ""):
                    event = w.value()
                    if isinstance(event, dict):
                        on_event(event)
                        top["traceEvents"] += 1
                w.expect("]", "the end of traceEvents")
            w.expect("}", "the end of the JSON object")
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise UsageError(f"{path}: cannot read it ({e}); give a Kineto trace (.json or .json.gz)") from None
    if "traceEvents" not in top:
        raise UsageError(f"{path}: no traceEvents array: not a PyTorch profiler (Kineto) trace; "
                         "export one with prof.export_chrome_trace('trace.json')")
    return top
