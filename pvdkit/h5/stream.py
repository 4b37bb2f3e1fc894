"""Record straight into HDF5: a write stream that indexes the ``.ovd`` bytes as they arrive.

Why: a long simulation should not have to write an ``.ovd`` and convert it afterwards, and a
crash must leave a readable recording. :class:`H5Stream` keeps the bytes it is given and, at
least once per ``flush_interval`` of wall time (counted from the start of the last commit, less
the time that commit took, so that a kill loses at most about ``flush_interval``; and at the
end of the first frame), tokenizes
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

Prepared blocks (:meth:`pvdkit.writer.OmniPvdWriter.write_prepared`) reach the stream as blocks
(:meth:`H5Stream.write_prepared`), not bytes: their commands never change, so the stream indexes
a block once (its first write is indexed as ordinary bytes) and afterwards keeps only a copy of
each write's payloads — no tokenizing, no hashing per command. The file is the one the bytes
would give.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from pvdkit.h5.rebuild import h5_to_ovd_bytes
from pvdkit.h5.writer import (
    H5Writer,
    NoRoom,
    PreparedFrame,
    PreparedLayout,
    _os_reason,
    is_io_error,
    write_h5,
)
from pvdkit.index.builder import IndexBuilder
from pvdkit.index.tables import Batch
from pvdkit.outputs import check_output, free_bytes, temp_file_beside
from pvdkit.ovd.codec import HEADER_SIZE, decode_header
from pvdkit.ovd.tokenizer import CommandTable, tokenize
from pvdkit.signals import deferred_signals
from pvdkit.types import Command, PvdError

if TYPE_CHECKING:
    from pvdkit.writer import PreparedAttributes

BytesLike = bytes | bytearray | memoryview

#: Default longest wall time between two commits (s): what a kill can lose at most.
FLUSH_INTERVAL = 1.0
#: Free space below which no commit starts (bytes); a disk that fills during one is handled too.
MIN_FREE_BYTES = 64 << 10


#: Threads that compress the chunks of a commit the caller waits for (the first, the last).
_CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)

#: Prepared blocks smaller than this are received as bytes. The bytes written between blocks
#: (frame starts and stops …) are indexed part by part at the commit, at ~0.5 ms a part: worth
#: it for a fleet's block of 60,000 commands, not for one vehicle's 240 (a thousand frames a
#: second would make each commit take a second, and a crash lose two).
MIN_PREPARED_COMMANDS = 4096

#: gzip level of a recording written while simulating, deflated by ISA-L at its level 1
#: (:mod:`pvdkit.h5.chunks`): about 380 B per vehicle-step for 256 sedans, in about a seventh of
#: the time zlib's level 1 takes. ``pvdkit convert`` keeps HDF5's zlib at level 4: it runs once,
#: after the fact.
RECORDING_GZIP_LEVEL = 1

#: The file's ``source`` attribute when the writer of the stream does not name itself.
STREAM_SOURCE = "an OmniPVD stream"


class H5Stream:
    """A :class:`pvdkit.streams.WriteStream` that records into an HDF5 file (``.h5``).

    ``flush_interval``: longest wall time (s) between commits. ``batch_bytes``: also commit when
    this many stream bytes are waiting (bounds memory). ``compact``: on close, rewrite a
    multi-batch file so each series is one contiguous slice (one extra pass over the data).
    The output folder is checked at once, so a bad path fails immediately; the file appears
    when the stream's header arrives.

    ``background``: the commits that come on their own (a frame ended, the interval passed, the
    batch filled) are indexed, appended, compressed and flushed on a second thread while the
    caller goes on — h5py lets go of the GIL inside HDF5, and ISA-L and numpy while they compress and
    shuffle the chunks. The first commit (the first frame) is written at once, and so is every commit
    once the disk has room for fewer than two batches. One commit runs at a time: the next one,
    :meth:`flush` and :meth:`close` wait for it, and its failure (a full disk) is reported by
    the next of them. A kill meanwhile leaves the file of the commit before (as a kill during
    any commit does). Memory holds up to two batches then: the one written and the next.
    False: every commit is written before the call that triggered it returns.

    ``source``: what wrote the stream (``pvdkit record default_accelerate``, a PhysX peer's
    address), stored as the file's ``source`` attribute.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        batch_bytes: int = 64 << 20,
        flush_interval: float = FLUSH_INTERVAL,
        compact: bool = True,
        compression: str | None = "gzip",
        compression_opts: int | None = RECORDING_GZIP_LEVEL,
        background: bool = True,
        source: str = STREAM_SOURCE,
    ) -> None:
        self.path = os.fspath(path)
        # What wrote the stream, stored as the file's `source`: never the output's own name, so
        # that two runs of a deterministic simulation give byte-identical files.
        self.source = source
        self.background = background
        self._job: _CommitJob | None = None  # the commit being written on its own thread
        self._roomy = True  # room on the disk for two full batches: commits may overlap the caller
        self.batch_bytes = int(batch_bytes)
        self.flush_interval = float(flush_interval)
        self.compact = compact
        self._comp = {"compression": compression, "compression_opts": compression_opts}
        self._pending = bytearray()  # the latest bytes received (after self._parts)
        # Writes waiting for the next commit, before self._pending, in stream order: bytes, and
        # prepared-block writes as (block state, payload copy).
        self._parts: list[bytearray | tuple[_BlockState, np.ndarray]] = []
        self._waiting = 0  # stream bytes in self._parts and self._pending
        self._blocks: dict[int, _BlockState] = {}  # id(block) -> what the stream knows of it
        self._epoch = 0  # bumped when objects are created/destroyed: block layouts are re-learnt
        self._dead = bytearray()  # bytes after unrecoverable damage: kept verbatim, never parsed
        self._error: str | None = None
        self._interrupted: str | None = None
        self._writer: H5Writer | None = None
        self._builder: IndexBuilder | None = None
        self._frame = -1
        self._offset = 0  # stream offset of self._pending[0]
        self._last_commit = time.monotonic()  # when the last commit started
        self._commit_seconds = 0.0  # how long it took
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
        n = memoryview(data).nbytes
        self.bytes_written += n
        if self._error is not None:
            self._dead += data
            return
        self._pending += data
        self._waiting += n
        if self._writer is None and len(self._pending) >= HEADER_SIZE:
            self._guarded(self._start)
        self._maybe_flush()

    def write_commands(self, data: np.ndarray, table: CommandTable) -> None:
        """Receive complete commands already tokenized (``data`` exactly their bytes, ``table``
        their rows, frames numbered on from the stream's): the file is the one their bytes give.

        Why: a live stream's parser (:class:`pvdkit.live.LiveRecorder`) tokenizes every piece for
        the view anyway; one parse then serves the file too. Damaged or unstarted streams take
        the bytes path.
        """
        self._check_open()
        if self._writer is None or self._error is not None or self._pending or \
                (table.error is not None and not table.truncated):
            self.write(np.asarray(data, np.uint8).tobytes())
            return
        n = len(data)
        self.bytes_written += n
        self._parts.append(_Tokenized(np.asarray(data, np.uint8), table))
        self._waiting += n
        self._maybe_flush()

    def write_prepared(self, block: PreparedAttributes) -> None:
        """Receive one write of a prepared block (called by the writer instead of ``write``).

        The block's commands are indexed once; each later write costs one copy of its payloads
        here and, at the commit, a gather into the pools. The file is the one its bytes give.
        """
        self._check_open()
        if self._writer is None or self._error is not None or block.nb_commands < MIN_PREPARED_COMMANDS:
            self.write(block.buffer)
            return
        st = self._blocks.get(id(block))
        if st is None or st.block is not block:
            st = self._blocks[id(block)] = _BlockState(block, self._builder.version, self.batch_bytes)
        n = st.nbytes
        self.bytes_written += n
        if self._pending:
            self._parts.append(self._pending)
            self._pending = bytearray()
        self._parts.append((st, st.capture()))
        self._waiting += n
        self._maybe_flush()

    def _maybe_flush(self) -> None:
        if self._waiting >= self._budget or (not self._frame_hints and self._due()):
            self._commit_soon()

    def frame_end(self) -> None:
        """A frame was completed (called by the writer): commit the first one, then on time."""
        self._frame_hints = True
        if not self.closed and (self.batches == 0 or self._due()):
            self._commit_soon()

    def _commit_soon(self) -> None:
        """Start a commit of everything complete received so far (see ``background``)."""
        if self.closed:
            return
        self._check_open()
        self._guarded(self._commit)

    def flush(self) -> None:
        """Index, append and commit everything complete received so far; on return it is in
        the file."""
        self._commit_soon()
        if not self.closed:
            self._guarded(self._settle)

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
        # A kill loses what arrived since the last finished commit *started*: start the next one
        # early by the time the last one took, so that span stays within ``flush_interval``.
        lead = min(self._commit_seconds, 0.75 * self.flush_interval)
        return self._writer is not None and time.monotonic() - self._last_commit >= self.flush_interval - lead

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
        self._parts.clear()
        self._waiting = 0
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
        job, self._job = self._job, None
        if job is not None:  # the file is let go of after its last write, whatever that gives
            job.join()
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
            self.path, version, source_name=self.source, crash_safe=True,
            direct_chunks=True, **self._comp
        )
        self._builder = IndexBuilder(version)
        del self._pending[:HEADER_SIZE]
        self._waiting -= HEADER_SIZE
        self._offset = HEADER_SIZE

    def _take(self) -> list[bytearray | _Tokenized | tuple[_BlockState, np.ndarray]]:
        """Take out every write waiting for a commit, in stream order (caller's thread); the
        next captures start new arenas."""
        parts = [*self._parts, self._pending]
        self._parts, self._pending = [], bytearray()
        self._waiting = 0
        for st in self._blocks.values():
            st.new_arena()
        return parts

    def _index(self, parts: list) -> _Indexed:
        """Index the complete commands of ``parts`` (from :meth:`_take`) into the writer's parts.

        Bytes are tokenized and indexed; a prepared block's write is indexed as bytes the first
        time (which teaches the stream its layout), then passed on as payloads only.

        Runs in the commit's thread, beside the caller, so it touches only the parse state
        (builder, frame, epoch, offset — nothing else uses them while a commit runs) and the
        block states' layouts; what it finds for the stream (damage, an incomplete last
        command) is returned, and :meth:`_merge` takes it in, in the caller's thread.
        """
        res = _Indexed()
        if self._writer is None:
            return res
        out = res.parts
        raw = bytearray()  # bytes not indexed yet
        for i, part in enumerate(parts):
            if isinstance(part, bytearray):
                raw += part
                continue
            if isinstance(part, _Tokenized):
                if raw and not self._feed(raw, res):
                    self._bury(parts[i:], res)
                    break
                if raw:  # an incomplete command before it (never from a parser): as bytes
                    raw += part.data.tobytes()
                    continue
                self._feed_tokenized(part, out)
                continue
            st, payload = part
            if st.layout is not None and st.epoch == self._epoch:
                if raw and not self._feed(raw, res):
                    self._bury(parts[i:], res)
                    break
                if not raw and st.epoch == self._epoch:  # nothing in between changed its objects
                    out.append(PreparedFrame(self._builder.n_rows, self._frame, st.layout, payload))
                    self._builder.n_rows += st.layout.nb_commands
                    self._offset += st.nbytes
                    continue
            raw += st.bytes_of(payload)
            if not self._feed(raw, res):
                self._bury(parts[i + 1 :], res)
                break
            if not raw:  # the whole write was indexed: its commands end the last batch
                st.learn(out[-1], self._epoch)
        else:
            if raw:
                self._feed(raw, res)
        if res.error is None:
            res.rest = raw
        res.frame = self._frame
        res.nb_parts = len(out)
        return res

    def _merge(self, res: _Indexed) -> None:
        """Take in what indexing a commit found (caller's thread): after damage, everything
        received since is kept verbatim behind it; an incomplete last command waits, before
        what came since, for its end."""
        if res.nb_parts:
            self.batches += 1
        if res.error is not None:
            self._error = res.error
            self._dead += res.dead
            self._bury(self._take(), None)
        elif res.rest:
            self._parts.insert(0, res.rest)
            self._waiting += len(res.rest)

    def _feed(self, raw: bytearray, res: _Indexed) -> bool:
        """Tokenize and index the complete commands of ``raw`` into ``res.parts`` (removing them
        from ``raw``); False after damage (then ``raw`` is moved to ``res.dead``)."""
        buf = np.frombuffer(bytes(raw), np.uint8)
        table = tokenize(buf, source_name=self.path, version=self._builder.version, start_frame=self._frame)
        if len(table):
            res.parts.append(self._builder.feed(buf, table))
            self._frame = table.last_frame
            if np.any((table.kind == Command.CREATE_OBJECT) | (table.kind == Command.DESTROY_OBJECT)):
                self._epoch += 1  # a handle may now be another object: layouts are re-learnt
        if table.error is not None and not table.truncated:
            res.error = table.error.replace(
                f"offset {table.valid_end}", f"offset {self._offset + table.valid_end}"
            )
            res.dead += raw[table.valid_end :]
            raw.clear()
            self._offset += table.valid_end
            return False
        del raw[: table.valid_end]
        self._offset += table.valid_end
        return True

    def _feed_tokenized(self, part: _Tokenized, out: list[Batch | PreparedFrame]) -> None:
        """Index commands tokenized elsewhere (see :meth:`write_commands`) into ``out``."""
        table = part.table
        if len(table):
            out.append(self._builder.feed(part.data, table))
            self._frame = table.last_frame
            if np.any((table.kind == Command.CREATE_OBJECT) | (table.kind == Command.DESTROY_OBJECT)):
                self._epoch += 1
        self._offset += len(part.data)

    def _bury(self, parts: list, res: _Indexed | None) -> None:
        """After damage every later write is kept verbatim, never parsed (into ``res.dead``, or
        the stream's own dead bytes when None)."""
        dead = self._dead if res is None else res.dead
        for part in parts:
            if isinstance(part, bytearray):
                dead += part
            elif isinstance(part, _Tokenized):
                dead += part.data.tobytes()
            else:
                dead += part[0].bytes_of(part[1])

    def _commit(self) -> None:
        if self._writer is None:
            return
        self._settle()  # one commit at a time; the last one's failure stops this one
        if self._error is not None:  # after damage nothing more is indexed: close keeps the rest
            return
        started = time.monotonic()
        # Stop before HDF5 runs out of space in the middle of a write: it could not close the file.
        waiting = self._waiting
        need = int(waiting * self._h5_per_ovd_byte) + MIN_FREE_BYTES
        free = free_bytes(self.path)
        if free is not None and free < need:
            self._stop_before_disk_full()
        first = self.batches == 0
        job = _CommitJob(self._writer, self._index, self._take(), started, waiting,
                         os.path.getsize(self.path))
        self._last_commit = started
        # The first frame is in the file when its step returns; on a disk filling up each commit
        # is sized on the one before, so they are written one after the other.
        if self.background and not first and self._roomy:
            self._writer.compressing_on(1)  # the caller's thread needs the other core
            self._job = job
            job.start()
        else:
            self._writer.compressing_on(_CORES)  # the caller waits: every core compresses
            job.run()
            self._settled(job)

    def _settle(self) -> None:
        """Wait for the commit running on its own thread, if any; report its failure."""
        job, self._job = self._job, None
        if job is not None:
            job.join()
            self._settled(job)

    def _settled(self, job: _CommitJob) -> None:
        """Take in a finished commit: its failure stops the stream (an I/O error as one line,
        anything else — a bug — with its traceback); else measure it."""
        if job.error is not None:
            if isinstance(job.error, (OSError, RuntimeError)) and is_io_error(job.error):
                self._fail(_os_reason(job.error))
            raise job.error
        self._merge(job.indexed)
        if job.waiting >= (256 << 10):  # smaller batches mostly measure HDF5's fixed costs
            self._h5_per_ovd_byte = max((os.path.getsize(self.path) - job.size_before) / job.waiting, 0.01)
        # Commit sooner as the disk fills, so that every commit still fits.
        free = free_bytes(self.path)
        room = self.batch_bytes if free is None else (free - MIN_FREE_BYTES) / (1.5 * self._h5_per_ovd_byte)
        self._budget = int(max(min(self.batch_bytes, room), min(self.batch_bytes, 4096)))
        self._roomy = room >= 2 * self.batch_bytes
        self._commit_seconds = job.finished - job.started
        self.frames_committed = job.indexed.frame + 1

    def _finish(self) -> None:
        self._settle()
        self._writer.compressing_on(_CORES)
        res = self._index(self._take())  # its parts are written by the writer's close, in one step
        if res.nb_parts:
            self.batches += 1
        if res.error is not None:
            self._error = res.error
            self._dead += res.dead
        tail = bytes(res.rest) + bytes(self._dead)
        error = self._error
        if error is None and res.rest:
            # Named after what wrote the stream (a PhysX peer, pvdkit record): the reader puts the
            # file's own name first ("x.h5: made from a damaged stream: 127.0.0.1:5555: …").
            error = (
                f"{self.source}: truncated at byte offset {self._offset}: the stream ended inside a "
                "command; every command before it was recorded"
            )
        self._writer.close(tail, error, interrupted=self._interrupted, parts=res.parts)
        self.frames_committed = self._frame + 1

    def _compact(self) -> None:
        data = np.frombuffer(h5_to_ovd_bytes(self.path), np.uint8)
        table = tokenize(data, source_name=self.path)
        tmp = temp_file_beside(self.path)
        try:
            write_h5(data, table, tmp, source_name=self.source, **self._comp)
            os.replace(tmp, self.path)
        except OSError as exc:  # the uncompacted file stays: complete, just in several segments
            raise PvdError(f"{_os_reason(exc)} compacting {self.path}; the file is complete but "
                           "not compacted") from None
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)


class _CommitJob:
    """One commit — the writes taken for it indexed (:meth:`H5Stream._index`), appended, then
    committed — run on its own thread (:meth:`start`, then :meth:`join`) or in the caller's
    (:meth:`run`). Its failure is kept in ``error`` for the stream to report.

    Why the indexing is here too: the few commands between a fleet's blocks (a frame's end and
    start) cost ~0.1 ms a frame to index, which the simulation no longer waits for."""

    def __init__(self, writer: H5Writer, index: Callable[[list], _Indexed], writes: list, started: float,
                 waiting: int, size_before: int) -> None:
        self.writer = writer
        self.index = index
        self.writes = writes  # from H5Stream._take
        self.indexed = _Indexed()  # what indexing them gave
        self.started = started  # when the stream started it
        self.finished = started
        self.waiting = waiting  # stream bytes it commits
        self.size_before = size_before  # the file's size before it
        self.error: BaseException | None = None
        # Not a daemon: an interpreter that exits meanwhile lets the commit finish first.
        self._thread = threading.Thread(target=self.run, name="pvdkit-h5-commit")

    def run(self) -> None:
        try:
            self.indexed = self.index(self.writes)
            self.writes = []
            if self.indexed.parts:
                self.writer.append_parts(self.indexed.parts)
            self.writer.commit()
        except BaseException as exc:  # noqa: BLE001 - handed to the stream, which reports it
            self.error = exc
        self.indexed.parts = []
        self.finished = time.monotonic()

    def start(self) -> None:
        self._thread.start()

    def join(self) -> None:
        self._thread.join()


class _Indexed:
    """What indexing one commit's writes gave: the writer's parts, the frame reached, the bytes
    of an incomplete last command (they wait for the next commit) and, after damage, the error
    and the bytes kept verbatim from there on."""

    def __init__(self) -> None:
        self.parts: list[Batch | PreparedFrame] = []  # emptied once written
        self.nb_parts = 0
        self.frame = -1
        self.rest = bytearray()
        self.error: str | None = None
        self.dead = bytearray()


class _Tokenized:
    """Commands received already tokenized (:meth:`H5Stream.write_commands`)."""

    __slots__ = ("data", "table")

    def __init__(self, data: np.ndarray, table: CommandTable) -> None:
        self.data = data
        self.table = table


def _frames(n: int) -> str:
    return f"{n} frame" if n == 1 else f"{n} frames"


class _BlockState:
    """What the stream knows of one prepared block: where its payloads are (tokenized once)
    and, once a write of it was indexed, its :class:`PreparedLayout`."""

    def __init__(self, block: PreparedAttributes, version, batch_bytes: int) -> None:
        self.block = block  # held, so that its id is not reused while the stream knows it
        self.payload = block.payload  # the values, end to end: what a capture copies
        self.nbytes = block.nbytes
        # Captured payloads are the rows of an arena started at each commit (a commit holds at
        # most ``batch_bytes`` of the stream), so that a commit's frames are one array end to
        # end: no copy of them all when it is written (pvdkit.h5.writer._end_to_end). Rows never
        # written take no memory.
        self.frames_per_commit = batch_bytes // max(self.nbytes, 1) + 2
        self._arena: np.ndarray | None = None
        self._next = 0
        table = tokenize(np.frombuffer(block.buffer, np.uint8), version=version)
        if len(table) == 0 or table.valid_end != self.nbytes or np.any(table.kind != Command.SET_ATTRIBUTE):
            raise PvdError("write_prepared: the block is not a sequence of SET_ATTRIBUTE commands")
        sizes = table.data_size.astype(np.int64)
        self.sizes = table.data_size.copy()
        self.offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.payload_bytes = int(sizes.sum())
        if self.payload_bytes != len(self.payload):  # the block's payloads are its commands' own
            raise PvdError("write_prepared: the block's values do not match its commands")
        self.layout: PreparedLayout | None = None
        self.epoch = -1

    def new_arena(self) -> None:
        """The next capture starts an arena (a commit took the frames captured so far)."""
        self._arena = None

    def capture(self) -> np.ndarray:
        """A copy of the block's payloads as they are now (end to end, in command order)."""
        if self._arena is None or self._next == len(self._arena):
            self._arena = np.empty((self.frames_per_commit, self.payload_bytes), np.uint8)
            self._next = 0
        out = self._arena[self._next]
        self._next += 1
        out[...] = self.payload
        return out

    def bytes_of(self, payload: np.ndarray) -> bytearray:
        """The stream bytes of a write whose payloads were ``payload``."""
        return bytearray(self.block.encoded_with(payload))

    def learn(self, batch: Batch, epoch: int) -> None:
        """Take the layout from ``batch``, whose last commands are one write of the block."""
        c = len(self.sizes)
        n = len(batch.table)
        series = np.full(n, -1, np.int32)
        series[batch.attr_rows] = batch.attr_series
        first = batch.row0 + n - c
        cmd, _ = batch.context_exceptions
        exc = cmd[cmd >= first] - first
        self.layout = PreparedLayout(series[n - c :].copy(), self.sizes, self.offsets, exc.astype(np.int64),
                                     int(self.block.context))
        self.epoch = epoch
