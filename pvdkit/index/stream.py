"""Incremental tokenizing of an OmniPVD stream that arrives in pieces (:class:`StreamParser`).

Why here, below the query model: the parser is the first step of both the live recorder
(:mod:`pvdkit.live`, which re-exports it) and the growing query model
(:class:`pvdkit.recording.LiveRecording`, through :class:`pvdkit.index.growing.GrowingIndex`);
those two are sibling layers that may not import each other, so what they share lives here. It
uses only the codec (:mod:`pvdkit.ovd`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pvdkit.ovd import kernels
from pvdkit.ovd.codec import HEADER_SIZE, Version, decode_header, has_base_class
from pvdkit.ovd.tokenizer import CommandTable, tokenize
from pvdkit.types import Command

__all__ = ["BytesLike", "Chunk", "StreamParser"]

BytesLike = bytes | bytearray | memoryview


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
        # The frame left open (a START_FRAME with no STOP_FRAME yet): its DESTROY_OBJECT commands
        # and its other ones. PhysX ends a recording inside such a frame holding the destroys of
        # every object; a sender killed mid-frame leaves one holding others only (finish()).
        self.in_frame = False
        self.open_frame_destroys = 0
        self.open_frame_others = 0
        self.error: str | None = None
        self._buf = bytearray()  # the header until complete, then the unconsumed tail
        self._need = HEADER_SIZE  # tokenize no sooner than this many bytes are buffered
        self._base_len = 4
        self._damaged = b""

    @property
    def tail(self) -> bytes:
        """The bytes received after the last complete command, not damaged (an incomplete
        command being received)."""
        return bytes(self._buf) if self.version is not None and self.error is None else b""

    def take_damaged(self) -> bytes:
        """The bytes from the damage to the end of the piece that revealed it (once; later
        pieces are the caller's): what a recorder keeps verbatim after damage."""
        out, self._damaged = self._damaged, b""
        return out

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
            # The damaged rest is counted in ``pending``, never parsed; a recorder that keeps
            # it verbatim takes it once (take_damaged).
            self._damaged = bytes(data[end:])
            self._buf = bytearray()
        if not len(table):
            return None
        kind = table.kind
        self.commands += len(table)
        self.frames += int(np.count_nonzero(kind == Command.START_FRAME))
        self.objects += int(np.count_nonzero(kind == Command.CREATE_OBJECT))
        self.frame = table.last_frame
        self._track_open_frame(kind)
        return Chunk(data[:end], table, start)

    def _track_open_frame(self, kind: np.ndarray) -> None:
        """Update :attr:`in_frame` and the open frame's command counts with a chunk's kinds."""
        marks = np.flatnonzero((kind == Command.START_FRAME) | (kind == Command.STOP_FRAME))
        if len(marks):
            last = int(marks[-1])
            self.in_frame = bool(kind[last] == Command.START_FRAME)
            self.open_frame_destroys = self.open_frame_others = 0
            after = kind[last + 1:]
        else:
            after = kind
        if self.in_frame:
            destroys = int(np.count_nonzero(after == Command.DESTROY_OBJECT))
            self.open_frame_destroys += destroys
            self.open_frame_others += len(after) - destroys

    def finish(self) -> str | None:
        """Why the stream cannot be complete as received: None when it ends after a complete
        command, else the damage, the incomplete command at the end (with its offset), or a
        last frame cut short: open, holding commands but none of the destroys PhysX writes
        when it stops recording (the sender was killed between two commands)."""
        if self.error is not None:
            return self.error
        if self.version is None:
            return (f"{self.source_name}: the stream ended after {self.bytes_received} bytes, before its "
                    f"{HEADER_SIZE}-byte OmniPVD header")
        if self.pending:
            return (f"{self.source_name}: the stream ended inside a command at byte offset "
                    f"{self.parsed_bytes} ({self.pending} bytes of it received)")
        if self.in_frame and self.open_frame_others and not self.open_frame_destroys:
            return (f"{self.source_name}: the stream ended inside frame {self.frame} "
                    f"({self.open_frame_others:,} commands into it) without the destroy commands "
                    "PhysX writes when it stops recording: the sender stopped without closing the "
                    "recording (killed or crashed)")
        return None
