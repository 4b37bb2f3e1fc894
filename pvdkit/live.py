"""Live OmniPVD: parse and record a stream that arrives in pieces (PhysX streaming over TCP).

Why: PhysX can stream OmniPVD live instead of writing a file, and a user debugging a running
simulation wants the recording as it happens — readable at every instant, whatever stops it.
This module is the socket-free part that the listener (:mod:`pvdkit.listen`), the viewer and
users' own tools share; they hand it bytes as they come (``docs/live.md``):

* :class:`Preamble` checks the 8 bytes PhysX sends first on a TCP connection (``"LDVO"``,
  version 1) and passes on what follows.
* :class:`StreamParser` tokenizes the ``.ovd`` stream incrementally: each :meth:`~StreamParser.feed`
  returns a :class:`Chunk` of the commands it completed, with the same
  :class:`~pvdkit.ovd.tokenizer.CommandTable` columns as a whole file. It keeps only the
  unconsumed tail (a command split across pieces), so the cost of a piece is proportional to its
  bytes, never a re-parse of what came before; feeding a stream byte by byte gives the same
  commands as feeding it whole.
* :class:`LiveRecorder` writes the stream as it arrives: into ``.h5`` through
  :class:`~pvdkit.h5.stream.H5Stream` (the same indexing and crash-safe commits as recording
  while simulating), or into ``.ovd`` byte for byte. ``close(reason)`` marks an interrupted
  recording ``complete = false`` with the reason.
"""

from __future__ import annotations

import os
import struct
import time
from dataclasses import dataclass

import numpy as np

from pvdkit.h5.stream import FLUSH_INTERVAL, H5Stream
from pvdkit.outputs import check_output
from pvdkit.ovd import kernels
from pvdkit.ovd.codec import HEADER_SIZE, OVD_VERSION, Version, decode_header, has_base_class
from pvdkit.ovd.tokenizer import CommandTable, tokenize
from pvdkit.signals import interruption_reason
from pvdkit.streams import OvdFileStream
from pvdkit.types import Command, PvdError

__all__ = [
    "PREAMBLE", "PREAMBLE_MAGIC", "PREAMBLE_SIZE", "PREAMBLE_VERSION", "Chunk", "LiveRecorder",
    "LiveSummary", "Preamble", "StreamParser", "output_format", "warm_up",
]

BytesLike = bytes | bytearray | memoryview

#: PhysX's OmniPVD TCP preamble: the u32 0x4F56444C ("LDVO" on the wire), then the u32 version 1.
PREAMBLE_MAGIC = 0x4F56444C
PREAMBLE_VERSION = 1
PREAMBLE = struct.pack("<II", PREAMBLE_MAGIC, PREAMBLE_VERSION)
PREAMBLE_SIZE = len(PREAMBLE)

_H5_EXTENSIONS = (".h5", ".hdf5")


def _hex(data: bytes) -> str:
    return " ".join(f"{b:02X}" for b in data)


def _ascii(data: bytes) -> str:
    return "".join(chr(b) if 32 <= b < 127 else "." for b in data)


class Preamble:
    """Checks PhysX's 8-byte TCP preamble; :meth:`feed` returns the bytes after it.

    Why a class: the 8 bytes may arrive in several pieces. A piece that already contradicts the
    magic fails at once (a web browser or a file sent with ``nc`` is named, not waited on).
    """

    def __init__(self, source_name: str = "<stream>") -> None:
        self.source_name = source_name
        self._got = bytearray()

    @property
    def done(self) -> bool:
        """True once the whole preamble was received and checked."""
        return len(self._got) == PREAMBLE_SIZE

    @property
    def received(self) -> bytes:
        """The preamble bytes received so far (for an error about a connection closed early)."""
        return bytes(self._got)

    def feed(self, data: BytesLike) -> memoryview:
        """Take the preamble's bytes from ``data``; return the rest (the ``.ovd`` stream).

        Raises :class:`PvdError` naming what was received when it is not PhysX's preamble.
        """
        view = memoryview(data).cast("B")
        if self.done:
            return view
        take = min(PREAMBLE_SIZE - len(self._got), len(view))
        self._got += view[:take]
        got = bytes(self._got)
        if got[:4] != PREAMBLE[: len(got[:4])]:
            raise PvdError(
                f"{self.source_name} sent {_hex(got)} ({_ascii(got)!r}), not PhysX's OmniPVD preamble "
                f"{_hex(PREAMBLE)} ('LDVO', version {PREAMBLE_VERSION}); is it a PhysX OmniPVD stream?"
            )
        if self.done:
            (version,) = struct.unpack_from("<I", got, 4)
            if version != PREAMBLE_VERSION:
                raise PvdError(
                    f"{self.source_name} sent OmniPVD preamble version {version} ({_hex(got)}); "
                    f"pvdkit reads version {PREAMBLE_VERSION} ({_hex(PREAMBLE)})"
                )
        return view[take:]


@dataclass(frozen=True, eq=False)
class Chunk:
    """The commands one :meth:`StreamParser.feed` completed.

    ``data`` holds exactly their bytes (uint8, a private copy); ``table`` indexes them with
    offsets relative to ``data``; ``offset`` is the stream offset of ``data[0]`` (the 12-byte
    header counts, a TCP preamble does not). Frame numbers in ``table.frame`` continue across
    chunks, as in one table of the whole stream.
    """

    data: np.ndarray
    table: CommandTable
    offset: int

    @property
    def frames_started(self) -> int:
        """START_FRAME commands in this chunk."""
        return int(np.count_nonzero(self.table.kind == Command.START_FRAME))

    @property
    def frames_stopped(self) -> int:
        """STOP_FRAME commands in this chunk."""
        return int(np.count_nonzero(self.table.kind == Command.STOP_FRAME))


class StreamParser:
    """Tokenizes an OmniPVD stream (12-byte header, then commands) fed in arbitrary pieces.

    Only the unconsumed tail is kept between pieces: a piece costs time proportional to its
    bytes, and a command split over many pieces is tokenized once, when its last byte arrives.
    After damage (an unknown command code, an impossible field) ``error`` says where; the rest
    is counted but not parsed, as a damaged file is read.
    """

    def __init__(self, source_name: str = "<stream>") -> None:
        self.source_name = source_name
        self.version: Version | None = None
        self.header = b""  # the 12 header bytes, once received
        self.bytes_received = 0  # stream bytes fed (header included)
        self.parsed_bytes = 0  # stream offset where the last complete command ends
        self.commands = 0
        self.frames = 0  # START_FRAME commands
        self.objects = 0  # CREATE_OBJECT commands (object lifetimes)
        self.frame = -1  # index of the frame in force (the last START_FRAME's)
        self.error: str | None = None
        self._buf = bytearray()  # the header until complete, then the unconsumed tail
        self._need = HEADER_SIZE  # tokenize no sooner than this many bytes are buffered
        self._base_len = 4

    @property
    def pending(self) -> int:
        """Bytes received after the last complete command (an incomplete command, or damage)."""
        return self.bytes_received - self.parsed_bytes

    def feed(self, data: BytesLike) -> Chunk | None:
        """Take the next bytes of the stream; the commands they complete (None if none).

        Raises :class:`PvdError` for a header that is not OmniPVD's (or too new to read).
        """
        view = memoryview(data).cast("B")
        self.bytes_received += len(view)
        if self.error is not None:
            return None
        self._buf += view
        if len(self._buf) < self._need:
            return None
        if self.version is None:
            self.header = bytes(self._buf[:HEADER_SIZE])
            self.version = decode_header(np.frombuffer(self.header, np.uint8), self.source_name)
            self._base_len = 8 if has_base_class(self.version) else 4
            del self._buf[:HEADER_SIZE]
            self.parsed_bytes = HEADER_SIZE
            self._need = 1
            if not self._buf:
                return None
        if not self._first_command_complete():
            return None
        return self._tokenize()

    def _first_command_complete(self) -> bool:
        """Whether the first buffered command has all its bytes (cheap: its length fields only);
        if not, remember how many bytes to wait for — so a command split over many pieces is
        tokenized once, when its last byte arrives."""
        buf = np.frombuffer(self._buf, np.uint8)
        status, _, end, _ = kernels.command_end(buf, 0, len(buf), self._base_len)
        del buf  # release the export: _buf grows again
        if status != kernels.TRUNCATED:
            return True  # complete, or damaged: the tokenizer reports which
        self._need = int(end) if end > 0 else len(self._buf) + 1
        return False

    def _tokenize(self) -> Chunk | None:
        data = np.frombuffer(bytes(self._buf), np.uint8)
        table = tokenize(data, source_name=self.source_name, version=self.version, start_frame=self.frame)
        start = self.parsed_bytes
        end = table.valid_end
        self._buf = bytearray(data[end:]) if end < len(data) else bytearray()
        self.parsed_bytes += end
        self._need = 1
        if table.error is not None and not table.truncated:
            self.error = table.error.replace(f"offset {end}", f"offset {start + end}", 1)
            self._buf = bytearray()  # the damaged rest is counted in ``pending``, never parsed
        if not len(table):
            return None
        kind = table.kind
        self.commands += len(table)
        self.frames += int(np.count_nonzero(kind == Command.START_FRAME))
        self.objects += int(np.count_nonzero(kind == Command.CREATE_OBJECT))
        self.frame = table.last_frame
        return Chunk(data[:end], table, start)

    def finish(self) -> str | None:
        """Why the stream cannot be complete as received: None when it ends after a complete
        command, else the damage or the incomplete command at the end (with its offset)."""
        if self.error is not None:
            return self.error
        if self.version is None:
            return (f"{self.source_name}: the stream ended after {self.bytes_received} bytes, before its "
                    f"{HEADER_SIZE}-byte OmniPVD header")
        if self.pending:
            return (f"{self.source_name}: the stream ended inside a command at byte offset "
                    f"{self.parsed_bytes} ({self.pending} bytes of it received)")
        return None


@dataclass(frozen=True)
class LiveSummary:
    """What a :class:`LiveRecorder` recorded: ``path`` is None when nothing was (the stream
    ended before its header); ``reason`` says why it is incomplete (None: complete);
    ``damage`` is the stream's damage, if any; ``bytes`` counts everything received, ``seconds``
    is the wall time from the first byte to the last."""

    path: str | None
    format: str
    frames: int
    objects: int
    commands: int
    bytes: int
    seconds: float
    reason: str | None = None
    damage: str | None = None

    @property
    def complete(self) -> bool:
        """True when the stream ended cleanly and was recorded whole."""
        return self.path is not None and self.reason is None

    @property
    def rate(self) -> float:
        """Bytes received per second of wall time, first byte to last."""
        return self.bytes / self.seconds if self.seconds > 0 else 0.0


def warm_up() -> None:
    """Load the compiled tokenizer now (from numba's cache: about half a second the first time in
    a process), so that a listener shows and records the first frames without that delay."""
    empty = np.zeros(0, np.uint8)
    tokenize(empty, version=OVD_VERSION)
    kernels.command_end(np.zeros(1, np.uint8), 0, 1, 4)


def output_format(path: str | os.PathLike) -> str:
    """``"h5"`` or ``"ovd"`` by extension; :class:`PvdError` for any other."""
    low = os.fspath(path).lower()
    if low.endswith(_H5_EXTENSIONS):
        return "h5"
    if low.endswith(".ovd"):
        return "ovd"
    raise PvdError(f"{os.fspath(path)}: unknown output format; use a .h5, .hdf5 or .ovd extension")


class LiveRecorder:
    """Records an OmniPVD stream fed in pieces into ``path`` (``.h5`` or ``.ovd``).

    ``preamble``: the bytes start with PhysX's TCP preamble (checked, not recorded).
    The file appears when the stream's 12-byte header has arrived and been checked, so a
    connection that was not PhysX leaves nothing behind. ``.h5``: through
    :class:`~pvdkit.h5.stream.H5Stream` — committed at the end of the first frame and then at
    least every ``flush_interval`` seconds while data arrives (:meth:`poll` commits during a
    pause), so a killed process keeps every committed frame. ``.ovd``: the bytes written through
    and flushed to the operating system after each piece (a reader tolerates a cut tail).
    """

    def __init__(self, path: str | os.PathLike, *, preamble: bool = False, source_name: str | None = None,
                 flush_interval: float = FLUSH_INTERVAL, compact: bool = True) -> None:
        self.path = os.fspath(path)
        self.format = output_format(self.path)
        check_output(self.path)
        self.source_name = source_name or "<stream>"
        self.preamble = Preamble(self.source_name) if preamble else None
        self.parser = StreamParser(self.source_name)
        self.flush_interval = float(flush_interval)
        self.compact = compact
        self.bytes_received = 0
        self.started: float | None = None  # time.monotonic() of the first byte
        self.last_byte: float | None = None  # and of the last
        self.closed = False
        self._sink: H5Stream | OvdFileStream | None = None
        self._batches = 0
        self._last_commit = time.monotonic()
        self._uncommitted = 0  # bytes written to the .h5 sink since its last commit
        self._summary: LiveSummary | None = None

    @property
    def recording(self) -> bool:
        """True once the output file exists (the header was received)."""
        return self._sink is not None

    def feed(self, data: BytesLike) -> Chunk | None:
        """Record the next bytes; the commands they complete (see :meth:`StreamParser.feed`).

        Raises :class:`PvdError` for a wrong preamble or header, and for a failed write (disk
        full: the file keeps every frame committed before).
        """
        if self.closed:
            raise PvdError(f"{self.path}: feed after the recording was closed")
        view = memoryview(data).cast("B")
        if not len(view):
            return None
        self.last_byte = time.monotonic()
        if self.started is None:
            self.started = self.last_byte
        self.bytes_received += len(view)
        if self.preamble is not None and not self.preamble.done:
            view = self.preamble.feed(view)
        before = self.parser.bytes_received
        chunk = self.parser.feed(view)
        if self._sink is None:
            if self.parser.version is None:
                return chunk
            self._open_sink()
            view = view[HEADER_SIZE - before :]
        if len(view):
            self._sink.write(view)
            if isinstance(self._sink, OvdFileStream):
                self._sink.flush()
            else:
                self._uncommitted += len(view)
        if isinstance(self._sink, H5Stream):
            if chunk is not None and chunk.frames_stopped:
                self._sink.frame_end()  # commits the first frame at once, then on time
            self._note_commits()
        return chunk

    def poll(self) -> None:
        """Commit what waited ``flush_interval`` or more (call it when no data arrives: a
        pause in the stream must not hold received frames back from the file)."""
        if isinstance(self._sink, H5Stream) and not self.closed and self._uncommitted:
            if time.monotonic() - self._last_commit >= self.flush_interval:
                self._sink.flush()
                self._note_commits(force=True)

    def _note_commits(self, force: bool = False) -> None:
        if force or self._sink.batches != self._batches:
            self._batches = self._sink.batches
            self._last_commit = time.monotonic()
            self._uncommitted = 0

    def _open_sink(self) -> None:
        if self.format == "h5":
            self._sink = H5Stream(self.path, flush_interval=self.flush_interval, compact=self.compact)
        else:
            self._sink = OvdFileStream(self.path)
        self._sink.write(self.parser.header)

    def close(self, reason: str | None = None) -> LiveSummary:
        """Finish the recording and say what it holds (idempotent).

        ``reason``: why it stops early (``interrupted by SIGINT (Ctrl-C)``, ``connection lost``);
        a stream that ended inside a command gets its own. An ``.h5`` is then closed with
        ``complete = false`` and the reason (its incomplete tail kept verbatim); an ``.ovd`` keeps
        the bytes received, which a reader reports as truncated.
        """
        if self._summary is not None:
            return self._summary
        self.closed = True
        damage = self.parser.error
        if reason is None and damage is None and self.parser.pending and self.parser.version is not None:
            reason = self.parser.finish()
        if self.preamble is not None and not self.preamble.done and reason is None:
            got = self.preamble.received
            reason = (f"{self.source_name}: the stream ended after {len(got)} bytes ({_hex(got)}), "
                      f"before PhysX's {PREAMBLE_SIZE}-byte OmniPVD preamble")
        elif self.parser.version is None and reason is None:
            reason = self.parser.finish()
        sink, self._sink = self._sink, None
        if isinstance(sink, H5Stream):
            if reason is not None:
                sink.mark_interrupted(reason)
            sink.close()
        elif sink is not None:
            sink.close()
        p = self.parser
        self._summary = LiveSummary(
            path=self.path if sink is not None else None, format=self.format, frames=p.frames,
            objects=p.objects, commands=p.commands, bytes=self.bytes_received,
            seconds=self.last_byte - self.started if self.started is not None else 0.0,
            reason=reason, damage=damage,
        )
        return self._summary

    def __enter__(self) -> LiveRecorder:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        """Close; an exception on the way out marks the recording incomplete with its reason."""
        if exc is None:
            self.close()
        elif not self.closed:
            try:
                self.close(interruption_reason(exc) or f"stopped by an error: {exc}")
            except PvdError:
                pass  # the original exception says more
