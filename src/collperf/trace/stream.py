"""A streaming reader for Kineto's trace JSON: the top-level object's small values are decoded whole, the
`traceEvents` array one event at a time, so a trace of any size is read in the memory of one chunk plus
what the caller keeps.

The tokenizer is json's own C decoder (`JSONDecoder.raw_decode`) applied at each value's start in a
sliding text window: a value cut by the window's end fails to decode and the window grows until it
does. Events are a few hundred bytes, so each is decoded once or twice; a malformed value is reported
as soon as the window holds more than `_LIMIT` characters past its start.

Nesting is bounded: the C decoder recurses once per level and stops at the interpreter's recursion limit; a
value nested that deep is stepped over by counting brackets outside strings (`_skip`, iterative, one pass),
so an event of a thousand nested arrays is skipped and counted rather than ending the read. A number too
long for an int (Python refuses to convert more than 4,300 digits) is refused the same way.

With `on_batch` (the C parser's path, trace/fast.py), the events are taken a run at a time: the text from the
next event to the last '}' followed by ',' or ']' in the window. That text in '[...]' is valid JSON only when
that '}' ends an event (a '}' inside a string or a nested value leaves the array unclosed), so the C decoder
itself checks the cut. A run it refuses, or that `on_batch` does not keep, is read again here one event at a
time, exactly as without it.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from collections.abc import Callable
from pathlib import Path

from collperf.errors import UsageError

_CHUNK = 1 << 20  # characters read at a time
_LIMIT = 64 << 20  # no single value (an event, distributedInfo) is this long in a real trace
_SEPARATORS = re.compile(r"[\s,]*")
_AFTER_NUMBER = re.compile(r"[^0-9.eE+-]")
_DECODER = json.JSONDecoder()
# a string (escapes included; the unrolled form is one pass) or a bracket; a lone '"' is a string cut by the window
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}"]')
_NOT_SPACE = re.compile(r"\S")  # one character class: linear on any line (a whitespace run is stepped once)


class _TooDeep(Exception):
    """A value nested past what the decoder recurses into, or a number past what an int holds: stepped over."""


class _Window:
    def __init__(self, f, source: str):
        self.f, self.source = f, source
        self.text, self.pos, self.eof = "", 0, False
        self.offset = 0  # characters of the file before text[0]

    def _more(self) -> bool:
        try:
            chunk = self.f.read(_CHUNK)
        except (zlib.error, EOFError, gzip.BadGzipFile) as e:
            raise UsageError(
                f"{self.source}: the gzip stream cannot be read ({e}): the file is cut or corrupt; "
                "compress the trace again (gzip trace.json) or give the .json"
            ) from None
        if not chunk:
            self.eof = True
            return False
        self.offset += self.pos
        self.text = self.text[self.pos :] + chunk
        self.pos = 0
        return True

    @property
    def at(self) -> int:
        """The position in the file's characters."""
        return self.offset + self.pos

    def run(self, decode) -> tuple[list | None, int]:
        """The events from pos to the last one the window holds whole, decoded by `decode` (None where there is
        no such run or `decode` refuses it), and where the run ends in the file (pos is not moved)."""
        if len(self.text) - self.pos < _CHUNK and not self.eof:
            self._more()
        end = len(self.text)
        while (k := self.text.rfind("}", self.pos, end)) >= 0 and not self._ends_event(k):
            end = k
        if k < 0:  # no event ends in the window: one is read the slow way
            return None, self.at + 1
        return decode("[" + self.text[self.pos : k + 1] + "]"), self.offset + k + 1

    def _ends_event(self, k: int) -> bool:
        """The '}' at k closes an event of the array: the next character that is not a space is ',' or ']'."""
        m = _NOT_SPACE.search(self.text, k + 1)
        return m is not None and self.text[m.start()] in ",]"

    def peek(self) -> str:
        """The next character that is not white space or a comma ('' at the end)."""
        while True:
            self.pos = _SEPARATORS.match(self.text, self.pos).end()
            if self.pos < len(self.text) or not self._more():
                return self.text[self.pos : self.pos + 1]

    def expect(self, char: str, what: str) -> None:
        if self.peek() != char:
            found = self.text[self.pos : self.pos + 40] or "the end of the file"
            raise UsageError(
                f"{self.source}: not a Kineto trace: expected {what} ('{char}'), found {found!r}; "
                "give a file written by torch.profiler's export_chrome_trace (.json or .json.gz)"
            )
        self.pos += 1

    def value(self):
        """The next value; _TooDeep (after stepping over it) where it cannot be decoded but is well formed."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.text, self.pos)
            except RecursionError:
                self._skip()
                raise _TooDeep("nested deeper than the reader decodes (a Kineto event is a few levels deep)") from None
            except json.JSONDecodeError as e:
                if len(self.text) - self.pos > _LIMIT or not self._more():
                    raise UsageError(
                        f"{self.source}: not valid JSON near character {e.pos} of its window "
                        f"({e.msg}); the trace is cut or corrupt: export it again"
                    ) from None
                continue
            except ValueError:  # an integer of more than 4,300 digits (sys.get_int_max_str_digits)
                self._skip()
                raise _TooDeep("a number of thousands of digits") from None
            # a number cut by the window's end decodes as its prefix ('0' of '0.5'): unless a character that
            # cannot continue it follows, it may go on in the next chunk
            if (
                isinstance(value, (int, float))
                and not isinstance(value, bool)
                and not self.eof
                and not _AFTER_NUMBER.search(self.text, end)
                and self._more()
            ):
                continue
            self.pos = end
            return value

    def _skip(self) -> None:
        """Step over the value at pos without decoding it: brackets counted outside strings, the window grown
        as needed. A scalar (a long number) ends at the next ',', ']' or '}'."""
        if self.text[self.pos : self.pos + 1] not in ("[", "{"):
            while (m := re.compile(r"[,\]}]").search(self.text, self.pos)) is None:
                if not self._grow():
                    return
            self.pos = m.start()
            return
        depth, at = 0, self.pos
        while True:
            for m in _TOKENS.finditer(self.text, at):
                token = m.group()
                if token == '"':  # a string the window cuts: read on
                    break
                at = m.end()
                if token in "[{":
                    depth += 1
                elif token in "]}":
                    depth -= 1
                    if depth == 0:
                        self.pos = at
                        return
            offset = at - self.pos
            if not self._grow():
                raise UsageError(
                    f"{self.source}: not valid JSON: a value is not closed before the end of the file; "
                    "the trace is cut or corrupt: export it again"
                )
            at = self.pos + offset

    def _grow(self) -> bool:
        if len(self.text) - self.pos > _LIMIT:
            raise UsageError(
                f"{self.source}: a value longer than {_LIMIT >> 20} MiB: the trace is corrupt; export it again"
            )
        return self._more()


def _open(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def scan(
    path,
    on_event: Callable[[dict], None],
    on_bad: Callable[[int, str], None] | None = None,
    batches: tuple[Callable, Callable] | None = None,
) -> dict:
    """Call `on_event` for every event of `traceEvents` in file order, `on_bad(index, why)` for an element that is
    not one (not an object, nested too deep); return the other top-level keys. `batches` = (decode, on_batch):
    runs of events decoded by `decode(text)` and given to `on_batch(events)`, which returns whether it kept them
    (the C parser's path); a run refused by either is read one event at a time."""
    path = Path(path)
    top: dict = {}
    try:
        with _open(path) as f:
            w = _Window(f, str(path))
            w.expect("{", "a JSON object")
            while w.peek() not in ("}", ""):
                try:
                    key = w.value()
                except _TooDeep as e:  # a key that is a number of thousands of digits, or a nested value
                    raise UsageError(
                        f"{path}: not a Kineto trace: a key of the top-level object is {e}, not a "
                        "string; give a file written by torch.profiler"
                    ) from None
                w.expect(":", "a ':' after a key")
                if not isinstance(key, str):
                    raise UsageError(
                        f"{path}: not a Kineto trace: a key of the top-level object is "
                        f"{type(key).__name__}, not a string; give a file written by torch.profiler"
                    )
                if key != "traceEvents":
                    try:
                        top[key] = w.value()
                    except _TooDeep as e:
                        raise UsageError(
                            f"{path}: $.{key}: {e}; expected the flat values torch.profiler writes: "
                            "the trace is corrupt, export it again"
                        ) from None
                    continue
                w.expect("[", "traceEvents to be an array")
                top["traceEvents"] = 0
                index, slow_until = 0, 0
                while w.peek() not in ("]", ""):
                    if batches is not None and w.at >= slow_until:
                        events, stop = w.run(batches[0])
                        if events is not None and batches[1](events):
                            w.pos = stop - w.offset
                            top["traceEvents"] += len(events)
                            index += len(events)
                        else:  # read below, one event at a time, up to where the run ends
                            slow_until = stop
                        continue
                    try:
                        event = w.value()
                    except _TooDeep as e:
                        event = e
                    if isinstance(event, dict):
                        on_event(event)
                        top["traceEvents"] += 1
                    elif on_bad is not None:
                        on_bad(
                            index,
                            str(event)
                            if isinstance(event, _TooDeep)
                            else f"{type(event).__name__} {str(event)[:20]!r}, not an event object",
                        )
                    index += 1
                w.expect("]", "the end of traceEvents")
            w.expect("}", "the end of the JSON object")
    except (OSError, EOFError, zlib.error) as e:
        raise UsageError(f"{path}: cannot read it ({e}); give a Kineto trace (.json or .json.gz)") from None
    if "traceEvents" not in top:
        raise UsageError(
            f"{path}: no traceEvents array: not a PyTorch profiler (Kineto) trace; "
            "export one with prof.export_chrome_trace('trace.json')"
        )
    return top
