"""Live OmniPVD: parse and record a stream that arrives in pieces (PhysX streaming over TCP).

Why: PhysX can stream OmniPVD live instead of writing a file, and a user debugging a running
simulation wants the recording as it happens — readable at every instant, whatever stops it.
This module is the socket-free part that the listener (:mod:`pvdkit.listen`), the viewer and
users' own tools share; they hand it bytes as they come (``docs/live.md``):

* :class:`Preamble` checks the 8 bytes PhysX sends first on a TCP connection (``"LDVO"``,
  version 1) and passes on what follows.
* :class:`StreamParser` (defined in :mod:`pvdkit.index.stream`, below the query model that also
  uses it) tokenizes the ``.ovd`` stream incrementally: each :meth:`~StreamParser.feed`
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
from pvdkit.index.stream import BytesLike, Chunk, StreamParser
from pvdkit.outputs import check_output
from pvdkit.ovd import kernels
from pvdkit.ovd.codec import HEADER_SIZE, OVD_VERSION
from pvdkit.ovd.tokenizer import tokenize
from pvdkit.signals import interruption_reason
from pvdkit.streams import OvdFileStream
from pvdkit.types import PvdError

__all__ = [
    "PREAMBLE", "PREAMBLE_MAGIC", "PREAMBLE_SIZE", "PREAMBLE_VERSION", "Chunk", "LiveRecorder",
    "LiveSummary", "Preamble", "StreamParser", "output_format", "warm_up",
]

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
        damaged_before = self.parser.error is not None
        chunk = self.parser.feed(view)
        if self._sink is None:
            if self.parser.version is None:
                return chunk
            self._open_sink()
            view = view[HEADER_SIZE - before :]
        if isinstance(self._sink, OvdFileStream):
            if len(view):
                self._sink.write(view)
                self._sink.flush()
            return chunk
        # .h5: the commands the parser completed, tokenized once for the file and the caller;
        # after damage, the bytes verbatim (the file keeps them as its damaged tail).
        if chunk is not None:
            self._sink.write_commands(chunk.data, chunk.table)
            self._uncommitted += len(chunk.data)
        if self.parser.error is not None:
            rest = view if damaged_before else self.parser.take_damaged()
            if len(rest):
                self._sink.write(rest)
                self._uncommitted += len(rest)
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
            self._sink = H5Stream(self.path, flush_interval=self.flush_interval, compact=self.compact,
                                  source=self.source_name)
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
        if reason is None and damage is None and self.parser.version is not None:
            reason = self.parser.finish()  # an incomplete command, or a last frame cut short
        if self.preamble is not None and not self.preamble.done and reason is None:
            got = self.preamble.received
            reason = (f"{self.source_name}: the stream ended after {len(got)} bytes ({_hex(got)}), "
                      f"before PhysX's {PREAMBLE_SIZE}-byte OmniPVD preamble")
        elif self.parser.version is None and reason is None:
            reason = self.parser.finish()
        sink, self._sink = self._sink, None
        if isinstance(sink, H5Stream):
            tail = self.parser.tail  # an incomplete last command: kept verbatim, as bytes
            if tail:
                sink.write(tail)
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
