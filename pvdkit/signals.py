"""Stopping a long write cleanly: SIGINT/SIGTERM become exceptions, never a half-written file.

Why: a recording killed by Ctrl-C or ``kill`` (SIGTERM) should be closed like any other, marked
``complete = false`` with the reason. Python turns SIGINT into :class:`KeyboardInterrupt`, but
SIGTERM kills the process outright, and either can arrive in the middle of a multi-step file
update. Two tools:

* :func:`terminate_as_exception` (used by the command line) makes SIGTERM raise
  :class:`Terminated`, so ``finally``/``with`` blocks close files as for Ctrl-C.
* :func:`deferred_signals` holds SIGINT/SIGTERM back for the few milliseconds of an update that
  must not be cut in two (one batch appended to an HDF5 recording), then delivers them.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Terminated(BaseException):
    """SIGTERM arrived (a ``BaseException`` like :class:`KeyboardInterrupt`: not an error)."""

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__(f"terminated by {signal.Signals(signum).name}")
        self.signum = signum


def interruption_reason(exc: BaseException) -> str | None:
    """The words a recording stores for an interruption, or None when ``exc`` is not one."""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted by SIGINT (Ctrl-C)"
    if isinstance(exc, Terminated):
        return f"interrupted by {signal.Signals(exc.signum).name}"
    return None


def exit_status(exc: BaseException) -> int:
    """The shell's status for a process stopped by ``exc``'s signal: 128 + signal number."""
    return 128 + (exc.signum if isinstance(exc, Terminated) else int(signal.SIGINT))


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated(signum)


@contextmanager
def terminate_as_exception() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` (main thread only; else a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


@contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block ends, then deliver them to the usual handlers.

    Only the main thread receives Python signal handlers, so elsewhere this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    previous = {s: signal.signal(s, lambda signum, frame: pending.append(signum)) for s in _SIGNALS}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler if handler is not None else signal.SIG_DFL)
        for s in dict.fromkeys(pending):
            signal.raise_signal(s)
