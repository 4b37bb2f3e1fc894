"""Recordings that grow while the viewer shows them: PhysX streaming over TCP, or a file still
being written.

Why a background thread and a queue: bytes arrive whenever PhysX sends them, and receiving,
tokenizing and writing them to disk must not wait for the window to repaint. A :class:`LiveFeed`
does all of that on its own thread (through :class:`pvdkit.live.LiveRecorder`, one parse for the
file and the view) and queues the parsed chunks; the GUI thread calls :meth:`LiveFeed.drain`
from a timer and appends them to the :class:`~pvdkit.recording.LiveRecording` it shows, so the
query model is only ever touched by one thread and each chunk costs its own size
(``docs/live.md``).

* :class:`TcpFeed` listens for one PhysX connection (``pvdkit view --listen``, File ▸ Listen…)
  and records it — into ``--save OUT`` or a temporary ``.h5`` that :meth:`TcpFeed.save_as`
  keeps (the window offers it on close).
* :class:`OvdFileFeed` follows an ``.ovd`` that another program is still writing.
* :class:`H5FileWatch` says when an ``.h5`` being written (``pvdkit listen``, ``pvdkit record``:
  crash-safe, committed at least once a second) has new commits; the window then reopens it.
  An ``.h5`` cannot be appended to in place the way a byte stream can: its index is re-read,
  the size of the index, not of the samples.
"""

from __future__ import annotations

import os
import queue
import shutil
import socket
import tempfile
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass

from pvdkit.h5.reader import WRITER_OPEN
from pvdkit.h5.stream import FLUSH_INTERVAL
from pvdkit.index.stream import Chunk, StreamParser
from pvdkit.listen import FIRST_BYTES_SECONDS, listen_socket, parse_address, receive
from pvdkit.live import PREAMBLE, PREAMBLE_SIZE, LiveRecorder, LiveSummary, output_format, warm_up
from pvdkit.outputs import check_output
from pvdkit.ovd.layout import HEADER_SIZE
from pvdkit.recording import LiveRecording, Recording
from pvdkit.types import PvdError
from viewer.model.session import file_stamp

#: How often a feed's thread looks for new data or a stop request (s).
POLL_SECONDS = 0.05
#: Bytes arriving within this time (s) are parsed and shown as one piece (see _Coalescing).
COALESCE_SECONDS = 0.01
#: ... unless they reach this many bytes first.
COALESCE_BYTES = 4 << 20
#: Bytes read from a followed file at once.
READ_BYTES = 1 << 20
#: A file modified this recently (s) is taken to be still written (``pvdkit view FILE``).
FRESH_SECONDS = 10.0
#: How long an ``.h5`` being followed stays unchanged before it is read once more (s).
QUIET_SECONDS = 2.0

#: Feed states: no data yet; data arriving; the sender closed the stream cleanly; the stream
#: was cut, reset or damaged; the user stopped it; a file being followed.
STATES = ("waiting", "receiving", "ended", "lost", "stopped", "following")


class _Stop(Exception):
    """Raised inside a feed's thread to leave a blocking receive loop when asked to stop."""


@dataclass(frozen=True)
class Growth:
    """What one :meth:`LiveFeed.drain` added to the recording."""

    frames_before: int
    frames: int
    objects_before: int
    objects: int
    series_before: int = 0
    series: int = 0
    ended: bool = False
    #: The recording was read again as a whole (an .h5 reopened at a commit): everything may
    #: have changed.
    reopened: bool = False

    @property
    def new_frames(self) -> int:
        return self.frames - self.frames_before

    @property
    def structure_changed(self) -> bool:
        """Objects, or attributes written for the first time (names, links between objects,
        which define vehicles and wheels), arrived."""
        return self.reopened or self.objects != self.objects_before or self.series != self.series_before


class LiveFeed(ABC):
    """An OmniPVD stream received on a background thread and shown as it grows.

    ``recording`` is the :class:`~pvdkit.recording.LiveRecording` the viewer queries; it only
    changes in :meth:`drain` (call it from the thread that reads it). ``state`` is one of
    :data:`STATES`; ``reason`` says why a stream ended early (None: cleanly or still running).
    """

    def __init__(self, source_name: str) -> None:
        self.source_name = source_name
        self.recording: LiveRecording = Recording.stream(source_name)
        self.state = "waiting"
        self.reason: str | None = None
        self.peer: str | None = None
        self.bytes_received = 0
        self.started: float | None = None
        self._queue: queue.SimpleQueue[Chunk | None] = queue.SimpleQueue()
        self._stop = threading.Event()
        #: Why it was stopped (recorded as the recording's ``interrupted``).
        self._stop_reason = "stopped in the viewer"
        self._thread: threading.Thread | None = None
        self._ended_seen = False

    # ------------------------------------------------------------------ life cycle

    def start(self) -> None:
        """Start receiving on the feed's own thread."""
        warm_up()  # the compiled tokenizer, loaded before the first bytes arrive
        self._thread = threading.Thread(target=self._run_thread, name=f"live {self.source_name}",
                                        daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0, reason: str | None = None) -> None:
        """Stop receiving (what arrived stays); returns when the thread has finished. ``reason``
        (default "stopped in the viewer") is recorded as why the recording is incomplete."""
        if reason is not None and not self._stop.is_set():
            self._stop_reason = reason
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self._closed()

    def _closed(self) -> None:  # noqa: B027 - a hook; most feeds hold nothing to release
        """Release what the feed holds once stopped (sockets)."""

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def live(self) -> bool:
        """True while more data may arrive."""
        return self.state in ("waiting", "receiving", "following")

    def _run_thread(self) -> None:
        try:
            self._run()
        except _Stop:
            self._finish("stopped", self._stop_reason)
        except PvdError as exc:
            self._finish("lost", " ".join(str(exc).split()))
        except Exception as exc:  # a bug: say it, keep what arrived
            self._finish("lost", f"unexpected {type(exc).__name__}: {exc}")
            raise
        finally:
            self._queue.put(None)

    @abstractmethod
    def _run(self) -> None:
        """Receive until the stream ends (on the feed's thread): queue each parsed chunk."""

    def _finish(self, state: str, reason: str | None) -> None:
        self.state = state
        self.reason = reason

    def _check_stop(self) -> None:
        if self._stop.is_set():
            raise _Stop

    def _received(self, n: int) -> None:
        if self.started is None:
            self.started = time.monotonic()
        self.bytes_received += n

    # ------------------------------------------------------------------ GUI side

    def drain(self, max_chunks: int = 1 << 30) -> Growth | None:
        """Append the chunks received since the last call to :attr:`recording`; what grew
        (None: nothing arrived and nothing changed)."""
        rec = self.recording
        frames0, objects0, series0 = len(rec.frames), len(rec.objects), rec.series_count
        appended = 0
        ended = False
        while appended < max_chunks:
            try:
                chunk = self._queue.get_nowait()
            except queue.Empty:
                break
            if chunk is None:
                ended = not self._ended_seen
                self._ended_seen = True
                if self.reason is not None:
                    rec.incomplete = self.reason
                continue
            rec.append(chunk)
            appended += 1
        if not appended and not ended:
            return None
        return Growth(frames0, len(rec.frames), objects0, len(rec.objects), series0, rec.series_count,
                      ended)

    @property
    def rate(self) -> float:
        """Bytes per second since the first byte."""
        if self.started is None:
            return 0.0
        return self.bytes_received / max(time.monotonic() - self.started, 1e-9)

    def status_text(self) -> str:
        """One line for the status bar."""
        rec = self.recording
        got = (f"{len(rec.frames):,} frames · {len(rec.objects):,} objects · "
               f"{self.bytes_received / 1e6:.1f} MB")
        if self.state == "waiting":
            return f"waiting for {self.source_name}"
        if self.state == "receiving":
            return f"live from {self.peer or self.source_name}: {got} · {self.rate / 1e6:.1f} MB/s"
        if self.state == "following":
            return f"following {self.source_name} as it grows: {got}"
        if self.state == "ended":
            return f"{self.peer or self.source_name} ended the stream: {got}"
        who, reason = self.peer or self.source_name, self.reason or ""
        # the recorder's reasons already name the peer: not twice
        said = reason if reason.startswith(f"{who}:") else f"{who}: {reason}"
        return f"{said}; kept {got}"


class TcpFeed(LiveFeed):
    """Listens on ``[HOST:]PORT`` for one PhysX OmniPVD connection and records it.

    ``save``: the recording's path (``.h5`` or ``.ovd``); None records into a temporary ``.h5``
    that :meth:`save_as` keeps and :meth:`discard` deletes. The socket is bound at once, so
    a port in use is a :class:`PvdError` here, not later.
    """

    def __init__(self, address: str, save: str | None = None, *,
                 flush_interval: float = FLUSH_INTERVAL) -> None:
        host, port = parse_address(address)
        if save is not None:
            output_format(save)
            check_output(save)
        self.server = listen_socket(host, port)
        self._tmpdir: str | None = None
        if save is None:
            self._tmpdir = tempfile.mkdtemp(prefix="pvdkit-live-")
            save = os.path.join(self._tmpdir, time.strftime("live-%Y%m%d-%H%M%S.h5"))
        self.path = save
        bound = self.server.getsockname()
        self.port = int(bound[1])
        self.address = f"{bound[0]}:{bound[1]}" if ":" not in str(bound[0]) else f"[{bound[0]}]:{bound[1]}"
        super().__init__(self.address)
        self.flush_interval = flush_interval
        self.recorder: LiveRecorder | None = None
        self.summary: LiveSummary | None = None

    def _closed(self) -> None:
        self.server.close()


    @property
    def recorded(self) -> bool:
        """True once something was recorded (the stream's header arrived)."""
        return os.path.exists(self.path)

    @property
    def temporary(self) -> bool:
        """True while the recording lives in a temporary file nobody chose to keep."""
        return self._tmpdir is not None

    def _run(self) -> None:
        try:
            self.server.settimeout(POLL_SECONDS)
            while True:
                self._check_stop()
                try:
                    conn, addr = self.server.accept()
                except TimeoutError:
                    continue
                if self._speaks(conn):
                    break
                conn.close()  # connected and said nothing: not PhysX, which sends its preamble at once
        except OSError:
            self._check_stop()  # stopped (the socket closed) before or while this thread waited
            raise
        finally:
            self.server.close()
        self.peer = f"{addr[0]}:{addr[1]}"
        self.state = "receiving"
        recorder = LiveRecorder(self.path, preamble=True, source_name=self.peer,
                                flush_interval=self.flush_interval)
        self.recorder = recorder

        coalescing = _Coalescing(recorder, self)

        def tick() -> None:
            coalescing.poll()
            self._check_stop()

        try:
            with conn:
                lost = receive(conn, coalescing, tick, COALESCE_SECONDS)
            coalescing.flush()
        except _Stop:
            coalescing.flush()
            self.summary = recorder.close(self._stop_reason)
            raise
        except BaseException as exc:
            self.summary = recorder.close(f"stopped by an error: {' '.join(str(exc).split())}")
            raise
        self.summary = recorder.close(f"{self.peer}: {lost}" if lost else None)
        s = self.summary
        if s.complete and s.damage is None:
            self._finish("ended", None)
        else:
            self._finish("lost", s.damage if s.complete else s.reason)

    def _speaks(self, conn: socket.socket) -> bool:
        """True once ``conn`` has sent PhysX's preamble and stream header, or bytes that are not
        PhysX's (left unread: the recorder reports them); False when it does neither within
        :data:`pvdkit.listen.FIRST_BYTES_SECONDS` (a port probe, or a few bytes and then
        silence, would otherwise hold the one connection the viewer takes, and PhysX could not
        connect) or closes first."""
        want = PREAMBLE_SIZE + HEADER_SIZE
        conn.settimeout(POLL_SECONDS)
        end = time.monotonic() + FIRST_BYTES_SECONDS
        while time.monotonic() < end:
            self._check_stop()
            try:
                got = conn.recv(want, socket.MSG_PEEK)
            except TimeoutError:
                continue
            except OSError:
                return False
            if not got:  # closed
                return False
            if len(got) >= want or not PREAMBLE.startswith(got[:PREAMBLE_SIZE]):
                return True  # whole, or not PhysX: the recorder says which, as for any connection
            time.sleep(POLL_SECONDS / 5)  # a peek returns at once while fewer bytes wait
        return False

    def save_as(self, path: str) -> str:
        """Keep the (finished) temporary recording as ``path`` (``.h5``: moved; ``.ovd``:
        converted). Stops the feed first. Returns the path."""
        from pvdkit.convert import convert

        self.stop()
        fmt = output_format(path)
        check_output(path)
        if not self.recorded:
            raise PvdError(f"nothing was recorded from {self.source_name} to save")
        if fmt == "h5" and self.path.lower().endswith((".h5", ".hdf5")):
            shutil.move(self.path, path)
        else:
            convert(self.path, path)
        self.discard()
        self.path = path
        return path

    def discard(self) -> None:
        """Delete the temporary recording (nothing, when the user chose the file)."""
        self.stop()
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None


class _Coalescing:
    """The :class:`LiveRecorder` as :func:`pvdkit.listen.receive` sees it: bytes arriving within
    :data:`COALESCE_SECONDS` of each other are recorded and parsed as one piece, and that
    piece's chunk is queued for the view. Why: a sender pacing small packets would otherwise
    cost the view one append per packet; a chunk per 10 ms costs the same at any rate."""

    def __init__(self, recorder: LiveRecorder, feed: TcpFeed) -> None:
        self.recorder = recorder
        self.owner = feed
        self.pending = bytearray()
        self.since = 0.0

    def feed(self, data) -> None:
        self.owner._received(len(data))
        if not self.pending:
            self.since = time.monotonic()
        self.pending += data
        if len(self.pending) >= COALESCE_BYTES:
            self.flush()

    def poll(self) -> None:
        if self.pending and time.monotonic() - self.since >= COALESCE_SECONDS:
            self.flush()
        self.recorder.poll()

    def flush(self) -> None:
        if self.pending:
            data, self.pending = self.pending, bytearray()
            chunk = self.recorder.feed(data)
            if chunk is not None:
                self.owner._queue.put(chunk)


class OvdFileFeed(LiveFeed):
    """Follows an ``.ovd`` file that another program is still writing: reads what is there,
    then what is appended, until stopped. A file that shrinks (rewritten) stops the feed."""

    def __init__(self, path: str) -> None:
        super().__init__(os.path.basename(path))
        self.path = path
        self.parser = StreamParser(path)

    def _run(self) -> None:
        self.state = "following"
        buf = bytearray(READ_BYTES)
        view = memoryview(buf)
        with open(self.path, "rb", buffering=0) as f:
            while True:
                self._check_stop()
                n = f.readinto(view)
                if n:
                    self._received(n)
                    chunk = self.parser.feed(view[:n])
                    if chunk is not None:
                        self._queue.put(chunk)
                    if self.parser.error is not None:
                        self._finish("lost", self.parser.error)
                        return
                    continue
                if os.path.getsize(self.path) < f.tell():
                    self._finish("lost", f"{self.path} was truncated or rewritten while followed")
                    return
                time.sleep(POLL_SECONDS)


class H5FileWatch:
    """Whether an ``.h5`` recording that is being written has new commits since :meth:`seen`.

    Polled from a GUI timer (a ``stat`` call). ``done`` once the recording read last says its
    writer closed it (complete, or interrupted with a reason).

    The file's size and modification time are taken *before* it is read (``stamp``), so a write
    that lands while it is read still counts as new. A write that leaves both unchanged (the
    same size, within the file system's timestamp tick) is caught by one more look once the
    file has been quiet for :data:`QUIET_SECONDS`.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.done = False
        self._stamp: tuple[int, int] | None = None
        self._seen_at = 0.0
        self._looked_again = False

    def stamp(self) -> tuple[int, int] | None:
        """The file's (size, mtime in ns) now; None if it cannot be read."""
        return file_stamp(self.path)

    def seen(self, recording: Recording, stamp: tuple[int, int] | None) -> None:
        """The file was (re)opened as ``recording``; ``stamp`` is :meth:`stamp` from before."""
        if stamp != self._stamp:
            self._looked_again = False
        self._stamp = stamp
        self._seen_at = time.monotonic()
        self.done = recording.incomplete != WRITER_OPEN

    def changed(self) -> bool:
        """True when the file should be opened again (it changed, or it is time for the one
        more look) while it is still followed — also once its writer closed it: closing
        compacts the file, after the state read last had already said it was complete."""
        now = self.stamp()
        if now is None:
            return False
        if now != self._stamp:
            return True
        if self.done:
            return False
        if not self._looked_again and time.monotonic() - self._seen_at > QUIET_SECONDS:
            self._looked_again = True
            return True
        return False

    def finished(self) -> bool:
        """True once the writer closed the file and it stayed unchanged for :data:`QUIET_SECONDS`
        since it was read: nothing more to follow."""
        return self.done and time.monotonic() - self._seen_at > QUIET_SECONDS and self.stamp() == self._stamp


def being_written(path: str, recording: Recording | None = None, *, recently: bool = True,
                  now: float | None = None) -> bool:
    """Whether ``pvdkit view FILE`` should follow ``path``: it was modified in the last
    :data:`FRESH_SECONDS` (unless ``recently`` is False: ``--follow``) and, for an ``.h5``
    (opened as ``recording``), its writer has not closed it."""
    try:
        age = (time.time() if now is None else now) - os.stat(path).st_mtime
    except OSError:
        return False
    if recently and age > FRESH_SECONDS:
        return False
    if path.lower().endswith((".h5", ".hdf5")):
        return recording is not None and recording.incomplete == WRITER_OPEN
    return True

