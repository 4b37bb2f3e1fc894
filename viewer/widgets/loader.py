"""Open recordings on a worker thread, with progress, so the window keeps repainting.

The index is built by compiled loops that hold the GIL while they run, so the UI can pause for
the length of one such loop (a fraction of a second on a 40 MB file; ``bench/bench_viewer.py``
measures the longest pause); everything else, including numba's first-use cache load, yields.
"""

from __future__ import annotations

import traceback

from PySide6.QtCore import QObject, QThread, Signal

from pvdkit.types import PvdError
from viewer.model.session import RecordingSession


class _Worker(QObject):
    # Fraction, or -1 for a step of unknown length. (Not None through ``object``: PySide 6.12
    # loses a reference to None on queued cross-thread emits, which crashes at exit.)
    progress = Signal(float, str)
    finished = Signal(object)  # RecordingSession
    failed = Signal(str)

    def __init__(self, path: str, up_axis: str) -> None:
        super().__init__()
        self.path = path
        self.up_axis = up_axis

    def _report(self, fraction: float | None, text: str) -> None:
        self.progress.emit(-1.0 if fraction is None else float(fraction), text)

    def run(self) -> None:
        try:
            session = RecordingSession.open(self.path, up_axis=self.up_axis, progress=self._report)
        except PvdError as exc:
            self.failed.emit(str(exc))
        except Exception as exc:  # a bug must reach the user, not kill the thread silently
            self.failed.emit(f"{self.path}: unexpected {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        else:
            self.finished.emit(session)


class RecordingLoader(QObject):
    """Opens one recording in a background thread.

    Signals (Qt, delivered on the thread that created the loader):

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

    def __init__(self, path: str, up_axis: str = "auto", parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self._thread = QThread()
        self._worker = _Worker(path, up_axis)
        self._worker.moveToThread(self._thread)
        self._thread.started.connect(self._worker.run)
        self._worker.progress.connect(self.progress)
        self._worker.finished.connect(self._on_finished)
        self._worker.failed.connect(self._on_failed)

    def start(self) -> None:
        self._thread.start()

    def wait(self, ms: int = -1) -> bool:
        """Block until the worker thread ended (for tests and shutdown)."""
        return self._thread.wait() if ms < 0 else self._thread.wait(ms)

    @property
    def running(self) -> bool:
        return self._thread.isRunning()

    def _stop(self) -> None:
        self._thread.quit()
        self._thread.wait()

    def _on_finished(self, session: object) -> None:
        self._stop()
        self.loaded.emit(session)

    def _on_failed(self, message: str) -> None:
        self._stop()
        self.failed.emit(message)
