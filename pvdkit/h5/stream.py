"""Record straight into HDF5: a write stream that indexes the ``.ovd`` bytes as they arrive.

Why: a long simulation should not have to write an ``.ovd`` and convert it afterwards, and a
crash must leave a readable recording. :class:`H5Stream` keeps the bytes it is given and, at
least once per ``flush_interval`` of wall time (and at the end of the first frame), tokenizes
the complete commands received so far, indexes them with the same
:class:`~pvdkit.index.builder.IndexBuilder` as the ``.ovd`` reader, appends them to the file in one
batch (a few h5py calls per table and pool — never one per attribute write) and *commits* them.

The file is crash-safe (:class:`~pvdkit.h5.writer.H5Writer` with ``crash_safe=True``): at any
instant it holds every committed frame, ``complete = false`` until ``close()``. SIGINT/SIGTERM
arriving during a batch are delivered after it; :meth:`H5Stream.mark_interrupted` before
``close()`` records why a recording stopped early. A full disk or another I/O error stops the
stream with one :class:`~pvdkit.types.PvdError`; the file keeps what was committed.

Each batch adds one *segment* per series it touches; ``close()`` can compact the file so that
every series is a single slice, which makes the result identical to ``convert``-ing the bytes.
"""

from __future__ import annotations

import os
import time

import numpy as np

from pvdkit.h5.rebuild import h5_to_ovd_bytes
from pvdkit.h5.writer import H5Writer, NoRoom, _os_reason, is_io_error, write_h5
from pvdkit.index.builder import IndexBuilder
from pvdkit.outputs import check_output, free_bytes, temp_file_beside
from pvdkit.ovd.codec import HEADER_SIZE, decode_header
from pvdkit.ovd.tokenizer import tokenize
from pvdkit.signals import deferred_signals
from pvdkit.types import PvdError

BytesLike = bytes | bytearray | memoryview

#: Default longest wall time between two commits (s): what a kill can lose at most.
FLUSH_INTERVAL = 1.0
#: Free space below which no commit starts (bytes); a disk that fills during one is handled too.
MIN_FREE_BYTES = 64 << 10


class H5Stream:
    """A :class:`pvdkit.streams.WriteStream` that records into an HDF5 file (``.h5``).

    ``flush_interval``: longest wall time (s) between commits. ``batch_bytes``: also commit when
    this many stream bytes are waiting (bounds memory). ``compact``: on close, rewrite a
    multi-batch file so each series is one contiguous slice (one extra pass over the data).
    The output folder is checked at once, so a bad path fails immediately; the file appears
    when the stream's header arrives.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        batch_bytes: int = 64 << 20,
        flush_interval: float = FLUSH_INTERVAL,
        compact: bool = True,
        compression: str | None = "gzip",
        compression_opts: int | None = 4,
    ) -> None:
        self.path = os.fspath(path)
        self.batch_bytes = int(batch_bytes)
        self.flush_interval = float(flush_interval)
        self.compact = compact
        self._comp = {"compression": compression, "compression_opts": compression_opts}
        self._pending = bytearray()
        self._dead = bytearray()  # bytes after unrecoverable damage: kept verbatim, never parsed
        self._error: str | None = None
        self._interrupted: str | None = None
        self._writer: H5Writer | None = None
        self._builder: IndexBuilder | None = None
        self._frame = -1
        self._offset = 0  # stream offset of self._pending[0]
        self._last_commit = time.monotonic()
        self._h5_per_ovd_byte = 1.0  # file growth per stream byte, measured at each commit
        self._budget = self.batch_bytes  # stream bytes to collect before the next commit
        self._frame_hints = False  # the writer calls frame_end(): commit on frame boundaries only
        self._failure: str | None = None
        self.batches = 0
        self.frames_committed = 0
        self.bytes_written = 0
        self.closed = False
        self.failed = False
        check_output(self.path)  # fail now on a bad path, not after the first frame
        os.remove(temp_file_beside(self.path))

    # ------------------------------------------------------------------ the stream protocol

    def write(self, data: BytesLike) -> None:
        """Receive the next bytes of the stream (header first); commit them in batches."""
        self._check_open()
        self.bytes_written += memoryview(data).nbytes
        if self._error is not None:
            self._dead += data
            return
        self._pending += data
        if self._writer is None and len(self._pending) >= HEADER_SIZE:
            self._guarded(self._start)
        if len(self._pending) >= self._budget or (not self._frame_hints and self._due()):
            self.flush()

    def frame_end(self) -> None:
        """A frame was completed (called by the writer): commit the first one, then on time."""
        self._frame_hints = True
        if not self.closed and (self.frames_committed == 0 or self._due()):
            self.flush()

    def flush(self) -> None:
        """Index, append and commit everything complete received so far."""
        if self.closed:
            return
        self._check_open()
        self._guarded(self._commit)

    def mark_interrupted(self, reason: str) -> None:
        """Record why the recording stops early; ``close()`` then leaves ``complete = false``."""
        self._interrupted = reason

    def close(self) -> None:
        """Commit the rest, keep an incomplete tail verbatim, close, and compact (idempotent)."""
        if self.closed:
            return
        self.closed = True
        if self.failed:
            return
        if self._writer is None and len(self._pending) >= HEADER_SIZE:
            self._guarded(self._start)
        if self._writer is None:
            raise PvdError(
                f"{self.path}: the stream ended after {len(self._pending)} bytes, before its "
                f"{HEADER_SIZE}-byte OmniPVD header; nothing was recorded"
            )
        self._guarded(self._finish)
        if self.compact and self.batches > 1 and self._interrupted is None:
            self._compact()

    def __enter__(self) -> H5Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ work

    def _check_open(self) -> None:
        if self.failed:
            raise PvdError(self._failure or f"{self.path}: the recording stopped on an error")
        if self.closed:
            raise PvdError(f"{self.path}: write after the stream was closed")

    def _due(self) -> bool:
        return self._writer is not None and time.monotonic() - self._last_commit >= self.flush_interval

    def _guarded(self, step) -> None:
        """Run one file update whole: signals wait for it; an I/O error stops the stream."""
        try:
            with deferred_signals():
                step()
        except (OSError, RuntimeError) as exc:
            if not is_io_error(exc):
                raise
            self._fail(_os_reason(exc))

    def _stop_before_disk_full(self) -> None:
        """Too little room for the next commit: close the file cleanly (it keeps every committed
        frame and says why it stopped), then report."""
        self.mark_interrupted("stopped: disk full")
        self._pending.clear()
        try:
            self._writer.close(b"", self._error, interrupted=self._interrupted)
        except NoRoom:  # it cannot say why in the file, but it keeps every committed frame
            self._writer.abort()
        self.failed = self.closed = True
        self._failure = (
            f"disk full writing {self.path} after {_frames(self.frames_committed)}; "
            "the file keeps every frame committed before"
        )
        raise PvdError(self._failure)

    def _fail(self, reason: str) -> None:
        """Stop on a disk failure: let go of the file (it keeps its last commit) and report."""
        self.failed = self.closed = True
        if self._writer is not None:
            self._writer.abort()
        self._failure = (
            f"{reason} writing {self.path} after {_frames(self.frames_committed)}; "
            "the file keeps every frame committed before"
        )
        raise PvdError(self._failure) from None

    def _start(self) -> None:
        version = decode_header(bytes(self._pending[:HEADER_SIZE]), self.path)
        self._writer = H5Writer(
            self.path, version, source_name=os.path.basename(self.path), crash_safe=True, **self._comp
        )
        self._builder = IndexBuilder(version)
        del self._pending[:HEADER_SIZE]
        self._offset = HEADER_SIZE

    def _index(self) -> None:
        """Tokenize, index and append the complete commands waiting (not yet committed)."""
        if self._error is not None or self._writer is None:
            return
        buf = np.frombuffer(bytes(self._pending), np.uint8)
        table = tokenize(buf, source_name=self.path, version=self._builder.version, start_frame=self._frame)
        if len(table):
            self._writer.append(self._builder.feed(buf, table))
            self.batches += 1
            self._frame = table.last_frame
        if table.error is not None and not table.truncated:
            self._error = table.error.replace(
                f"offset {table.valid_end}", f"offset {self._offset + table.valid_end}"
            )
            self._dead += self._pending[table.valid_end :]
            self._pending.clear()
        else:
            del self._pending[: table.valid_end]
        self._offset += table.valid_end

    def _commit(self) -> None:
        if self._writer is None:
            return
        # Stop before HDF5 runs out of space in the middle of a write: it could not close the file.
        waiting = len(self._pending)
        need = int(waiting * self._h5_per_ovd_byte) + MIN_FREE_BYTES
        free = free_bytes(self.path)
        if free is not None and free < need:
            self._stop_before_disk_full()
        size = os.path.getsize(self.path)
        self._index()
        self._writer.commit()
        if waiting >= (256 << 10):  # smaller batches mostly measure HDF5's fixed costs
            self._h5_per_ovd_byte = max((os.path.getsize(self.path) - size) / waiting, 0.01)
        # Commit sooner as the disk fills, so that every commit still fits.
        free = free_bytes(self.path)
        room = self.batch_bytes if free is None else (free - MIN_FREE_BYTES) / (1.5 * self._h5_per_ovd_byte)
        self._budget = int(max(min(self.batch_bytes, room), min(self.batch_bytes, 4096)))
        self._last_commit = time.monotonic()
        self.frames_committed = self._frame + 1

    def _finish(self) -> None:
        self._index()
        tail = bytes(self._pending) + bytes(self._dead)
        error = self._error
        if error is None and self._pending:
            error = (
                f"{self.path}: truncated at byte offset {self._offset}: the stream ended inside a "
                "command; every command before it was recorded"
            )
        self._writer.close(tail, error, interrupted=self._interrupted)
        self.frames_committed = self._frame + 1

    def _compact(self) -> None:
        data = np.frombuffer(h5_to_ovd_bytes(self.path), np.uint8)
        table = tokenize(data, source_name=self.path)
        tmp = temp_file_beside(self.path)
        try:
            write_h5(data, table, tmp, source_name=os.path.basename(self.path), **self._comp)
            os.replace(tmp, self.path)
        except OSError as exc:  # the uncompacted file stays: complete, just in several segments
            raise PvdError(f"{_os_reason(exc)} compacting {self.path}; the file is complete but "
                           "not compacted") from None
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)


def _frames(n: int) -> str:
    return f"{n} frame" if n == 1 else f"{n} frames"
