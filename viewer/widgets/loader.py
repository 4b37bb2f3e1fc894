"""Open recordings on a worker thread, with progress, so the window keeps repainting.

The index is built by compiled loops that hold the GIL while they run, so the UI can pause for
the length of one such loop (a fraction of a second on a 40 MB file; ``bench/bench_viewer.py``
measures the longest pause); everything else, including numba's first-use cache load, yields.

Why a queue and a timer rather than Qt signals emitted by the worker: a signal emitted from a
Python thread takes Qt's locks and then needs the GIL, while the GUI thread, holding the GIL,
may be deleting a Python-owned Qt object (a removed plot's menu, collected as garbage) and need
the same locks — a deadlock, seen once in the tests. The worker only touches a Python queue;
the GUI thread drains it from a timer, as the live feeds do (``viewer/model/live.py``), and
emits the signals itself.
"""

from __future__ import annotations

import queue
import threading
import traceback

from PySide6.QtCore import QObject, QTimer, Signal

from pvdkit.types import PvdError
from viewer.model.session import RecordingSession

#: How often the GUI thread looks for the worker's progress and result (ms).
POLL_MS = 30


class RecordingLoader(QObject):
    """Opens one recording in a background thread.

    Signals (Qt, emitted on the GUI thread that created the loader):

    ============  =========================  =============================================
    signal        arguments                  emitted when
    ============  =========================  =============================================
    ``progress``  ``fraction, text``         a loading step started (-1: length unknown)
    ``loaded``    ``RecordingSession``       the recording is open and indexed
    ``failed``    ``message: str``           it could not be opened
    ============  =========================  =============================================
    """

    progress = Signal(float, str)
    loaded = Signal(object)
    failed = Signal(str)

    def __init__(self, path: str, up_axis: str = "auto", parent: QObject | None = None, *,
                 snapshot: bool = False) -> None:
        super().__init__(parent)
        self.path = path
        self.up_axis = up_axis
        self.snapshot = snapshot  # RecordingSession.open's
        self._messages: queue.SimpleQueue[tuple[str, object]] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=f"load {path}", daemon=True)
        self._ended = False
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self.deliver)

    def start(self) -> None:
        self._thread.start()
        self._timer.start()

    def wait(self, ms: int = -1) -> bool:
        """Block until the worker thread ended (for tests and shutdown); True if it did.
        What it reported is delivered by the next :meth:`deliver`."""
        self._thread.join(None if ms < 0 else ms / 1000)
        return not self._thread.is_alive()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    # ------------------------------------------------------------------ worker thread

    def _run(self) -> None:
        try:
            session = RecordingSession.open(self.path, up_axis=self.up_axis, progress=self._report,
                                            snapshot=self.snapshot)
        except PvdError as exc:
            self._messages.put(("failed", str(exc)))
        except Exception as exc:  # a bug must reach the user, not kill the thread silently
            self._messages.put(("failed", f"{self.path}: unexpected {type(exc).__name__}: {exc}\n"
                                          f"{traceback.format_exc()}"))
        else:
            self._messages.put(("loaded", session))

    def _report(self, fraction: float | None, text: str) -> None:
        self._messages.put(("progress", (-1.0 if fraction is None else float(fraction), text)))

    # ------------------------------------------------------------------ GUI thread

    def deliver(self) -> None:
        """Emit what the worker reported since the last call (the timer calls this)."""
        while not self._ended:
            try:
                kind, payload = self._messages.get_nowait()
            except queue.Empty:
                return
            if kind == "progress":
                self.progress.emit(*payload)
                continue
            self._ended = True
            self._timer.stop()
            self._thread.join()
            if kind == "loaded":
                self.loaded.emit(payload)
            else:
                self.failed.emit(payload)
