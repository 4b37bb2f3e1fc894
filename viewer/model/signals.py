"""A minimal Qt-free signal: the model layer tells widgets what changed without importing Qt.

Why not Qt signals: the model must be importable and testable without Qt (and without a
QApplication), and a frame change must reach every subscriber synchronously so that a benchmark
can time "frame changed → every view updated" as one call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


class Signal:
    """A list of callbacks called in connection order by :meth:`emit`.

    A callback that raises does not stop the others; the first error is re-raised after every
    callback ran, so one broken view cannot leave the rest showing a stale frame.
    """

    __slots__ = ("_slots", "_blocked", "name")

    def __init__(self, name: str = "") -> None:
        self.name = name
        self._slots: list[Callable[..., Any]] = []
        self._blocked = 0

    def connect(self, slot: Callable[..., Any]) -> None:
        """Call ``slot(*args)`` on every emit (connecting the same slot twice is a no-op)."""
        if slot not in self._slots:
            self._slots.append(slot)

    def disconnect(self, slot: Callable[..., Any]) -> None:
        """Stop calling ``slot``; unknown slots are ignored."""
        try:
            self._slots.remove(slot)
        except ValueError:
            pass

    def disconnect_all(self) -> None:
        """Drop every connection."""
        self._slots.clear()

    @property
    def receivers(self) -> int:
        """Number of connected slots."""
        return len(self._slots)

    @contextmanager
    def blocked(self) -> Iterator[None]:
        """Suppress emits inside the ``with`` block (to apply several changes as one)."""
        self._blocked += 1
        try:
            yield
        finally:
            self._blocked -= 1

    def emit(self, *args: Any) -> None:
        """Call every connected slot with ``args``."""
        if self._blocked:
            return
        error: BaseException | None = None
        for slot in list(self._slots):
            try:
                slot(*args)
            except Exception as exc:  # re-raised below, after the other slots ran
                if error is None:
                    error = exc
        if error is not None:
            raise error

    def __repr__(self) -> str:
        return f"<Signal {self.name or '?'} ({len(self._slots)} slots)>"
