"""Terminal output of the commands: one progress bar and one column table.

Why here: ``pvdkit convert`` (progress as a fraction) and ``pvdkit record`` (progress in steps)
each had a progress bar of their own with different call signatures and looks; both now draw
the same bar, and every command lines up columns with the same helper. Standard library only.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from typing import TextIO

__all__ = ["READER_GONE_STATUS", "ProgressBar", "format_table", "on_terminal", "printable", "reader_gone"]

#: Exit status of a command whose output reader went away (``pvdkit series … | head``): what a
#: shell reports for a process that SIGPIPE ended, 128 + 13, so ``set -o pipefail`` sees it.
READER_GONE_STATUS = 141


def reader_gone() -> None:
    """Call after a :class:`BrokenPipeError` on stdout (its reader, ``head``, has exited): points
    stdout at the null device, so that what is still buffered, and Python's flush at exit, go
    nowhere instead of raising again."""
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, sys.stdout.fileno())
    finally:
        os.close(null)


#: Control characters as escapes (C0, DEL and C1): a name or string of a recording holding ESC
#: [2J, a carriage return or a bell cleared the screen or broke a table. Newlines are kept by
#: :func:`printable` unless ``one_line`` (a report has lines; a name or a value does not).
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))} | {
    0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}
_CONTROLS_KEEP_LINES = {c: e for c, e in _CONTROLS.items() if c != 0x0A}


def printable(text: str, *, one_line: bool = False) -> str:
    """``text`` as any UTF-8 output — a terminal, a report file, XML, a plot title — shows it
    as it is: the bytes of a name that are no UTF-8 (PhysX writes ``char*`` names verbatim;
    pvdkit keeps them as surrogates) as ``\\xNN``, control characters as escapes (``\\x1b``,
    ``\\r``), newlines too when ``one_line`` (a name, a value, a table cell, a warning)."""
    text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return text.translate(_CONTROLS if one_line else _CONTROLS_KEEP_LINES)


def shown(value: object, limit: int = 80) -> str:
    """``value`` for a one-line message: an integer too long to read as the count of its digits
    (TOML and JSON integers are unbounded), lists and tables element by element, the whole cut
    to about ``limit`` characters (a config value can be a whole table)."""
    def text(v: object) -> str:
        if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10**20:
            return f"an integer of about {int(v.bit_length() * 0.30103) + 1} digits"
        if isinstance(v, list):
            return "[" + ", ".join(text(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k!r}: {text(x)}" for k, x in v.items()) + "}"
        return repr(v)

    out = text(value)
    return out if len(out) <= limit else out[:limit - 1] + "…"


def on_terminal(stream: TextIO | None = None) -> bool:
    """True when ``stream`` (default stderr) is a terminal: where a progress bar redrawn in place
    belongs. A CI log or a pipe would keep every redraw, so the commands draw none there."""
    stream = stream if stream is not None else sys.stderr
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or a closed stream
        return False


class ProgressBar:
    """A one-line progress bar on ``stream`` (default stderr), redrawn in place.

    Call it with a fraction (``bar(0.5)``: ``label [#####.....]  50%``) or with a step and a
    total (``bar(3, 6)``: ``label [#####.....]  50% 3/6 steps``, ``unit`` names the steps), so
    it is a ready ``progress`` callback of :func:`pvdkit.convert.convert` and of the
    simulator's ``record``. It redraws only when the text changes and at most once per
    ``min_interval`` seconds (the last step is always drawn); reaching 100 % ends the line, and
    :meth:`done` draws 100 % and ends it if that has not happened (an early finish).
    """

    def __init__(self, label: str = "", stream: TextIO | None = None, width: int = 40, *,
                 unit: str = "steps", min_interval: float = 0.0) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.unit = unit
        self.min_interval = min_interval
        self._text = ""
        self._last = float("-inf")
        self._finished = False

    @property
    def shown(self) -> bool:
        """True once anything was drawn."""
        return bool(self._text)

    def __call__(self, done: float, total: float | None = None) -> None:
        if total is None:
            fraction, count = done, ""
        else:
            fraction = done / total if total > 0 else 1.0
            count = f" {_number(done)}/{_number(total)} {self.unit}".rstrip()
        fraction = max(0.0, min(1.0, fraction))
        pct = int(fraction * 100)
        complete = pct >= 100
        if self._finished and not complete:  # a new run on the same bar
            self._finished = False
        now = time.perf_counter()
        if not complete and now - self._last < self.min_interval:
            return
        filled = pct * self.width // 100
        head = f"{self.label} " if self.label else ""
        text = f"{head}[{'#' * filled}{'.' * (self.width - filled)}] {pct:3d}%{count}"
        if text == self._text or (complete and self._finished):
            return
        self._last = now
        self._text = text
        self.stream.write(f"\r{text}")
        if complete:
            self.stream.write("\n")
            self._finished = True
        self.stream.flush()

    def done(self) -> None:
        """Draw 100 % and end the line, if the bar was drawn and has not finished."""
        if self.shown and not self._finished:
            self(1.0)


def _number(x: float) -> str:
    return str(x) if isinstance(x, int) else f"{x:g}"


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]], *, align: str = "right",
                 indent: str = "") -> list[str]:
    """``header`` and ``rows`` (text cells) as lines with columns two spaces apart, each column
    as wide as its widest cell; ``align`` is ``"right"`` or ``"left"`` (trailing spaces are cut)."""
    widths = [max([len(h)] + [len(r[j]) for r in rows if j < len(r)]) for j, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        fit = [c.rjust(w) if align == "right" else c.ljust(w) for c, w in zip(cells, widths, strict=False)]
        return (indent + "  ".join(fit)).rstrip()

    return [line(header), *(line(r) for r in rows)]
