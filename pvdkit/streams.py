"""Where a writer's bytes go: the :class:`WriteStream` protocol and its file and memory streams.

The writer (:class:`pvdkit.writer.OmniPvdWriter`) only produces bytes; a stream decides where
they land — an ``.ovd`` file (:class:`OvdFileStream`), memory (:class:`MemoryStream`), or an
HDF5 recording (``pvdkit.h5``), which tokenizes the bytes as they arrive. Anything with these
three methods is a stream; no base class is needed.

Protocol contract, which every stream (and everything that feeds one) keeps:

* ``write(data)`` receives a bytes-like object (``bytes``, ``bytearray`` or a ``memoryview``
  of bytes) holding the *next* bytes of one OmniPVD stream: first the 12-byte version header,
  then commands. A call may end in the middle of a command (bulk writes are large chunks;
  other writers may split differently), so a stream that parses must keep the tail. The
  stream must not keep a reference to ``data`` after returning: the caller may reuse it.
* ``flush()`` pushes buffered bytes to the destination; it may be called any time.
* ``close()`` flushes and releases the destination; it is idempotent. Writing after close
  raises :class:`~pvdkit.types.PvdError`.
* Failures are reported as :class:`~pvdkit.types.PvdError` naming the destination.
* Optional: ``frame_end()``, called by the writer after each complete frame (after
  STOP_FRAME); a crash-safe stream (``pvdkit.h5.H5Stream``) commits on frame boundaries.
"""

from __future__ import annotations

import os
import time
from typing import Protocol, runtime_checkable

from pvdkit.types import PvdError

BytesLike = bytes | bytearray | memoryview


@runtime_checkable
class WriteStream(Protocol):
    """Destination of an OmniPVD byte stream (see the module docstring for the contract)."""

    def write(self, data: BytesLike) -> None:
        """Append ``data`` (the next bytes of the stream)."""

    def flush(self) -> None:
        """Push buffered bytes to the destination."""

    def close(self) -> None:
        """Flush and release the destination; idempotent."""


class OvdFileStream:
    """A buffered ``.ovd`` file: the bytes exactly as written, as PhysX's file stream does.

    The file is created (truncated) when the stream is made, so a bad path fails at once.
    """

    def __init__(self, path: str | os.PathLike, buffer_size: int = 1 << 20,
                 flush_interval: float | None = None) -> None:
        """``flush_interval``: hand the buffered bytes to the operating system at least this
        often (seconds; None: when the buffer fills), so that a writer killed loses at most
        about that much of the recording (a killed ``pvdkit record`` left a 0-byte .ovd)."""
        self.path = os.fspath(path)
        try:
            self._file = open(self.path, "wb", buffering=buffer_size)  # noqa: SIM115 - closed in close()
        except OSError as exc:
            raise PvdError(f"cannot create {self.path}: {exc.strerror or exc}") from None
        self.bytes_written = 0
        self.flush_interval = flush_interval
        self._flushed = time.monotonic()

    def write(self, data: BytesLike) -> None:
        if self._file.closed:
            raise PvdError(f"{self.path}: write after the stream was closed")
        try:
            self._file.write(data)
        except OSError as exc:
            raise PvdError(f"{self.path}: write failed: {exc.strerror or exc}") from None
        self.bytes_written += memoryview(data).nbytes
        if self.flush_interval is not None:
            now = time.monotonic()
            # The first bytes (the version header) at once: a file cut at any later instant reads.
            if now - self._flushed >= self.flush_interval or self.bytes_written == memoryview(data).nbytes:
                self._flushed = now
                self.flush()

    def flush(self) -> None:
        if not self._file.closed:
            try:
                self._file.flush()
            except OSError as exc:
                raise PvdError(f"{self.path}: flush failed: {exc.strerror or exc}") from None

    def close(self) -> None:
        if not self._file.closed:
            try:
                self._file.close()
            except OSError as exc:
                raise PvdError(f"{self.path}: close failed: {exc.strerror or exc}") from None

    @property
    def closed(self) -> bool:
        return self._file.closed

    def __repr__(self) -> str:
        return f"OvdFileStream({self.path!r}, bytes_written={self.bytes_written})"


class MemoryStream:
    """The stream in memory, for tests, previews and in-process conversion.

    ``getvalue()`` stays available after ``close()``, so a writer used as a context manager
    can be read back afterwards.
    """

    def __init__(self) -> None:
        self._data = bytearray()
        self._closed = False

    def write(self, data: BytesLike) -> None:
        if self._closed:
            raise PvdError("memory stream: write after the stream was closed")
        self._data += data

    def flush(self) -> None:
        """Nothing to push: memory is the destination."""

    def close(self) -> None:
        self._closed = True

    @property
    def closed(self) -> bool:
        return self._closed

    def getvalue(self) -> bytes:
        """All bytes written so far (a copy)."""
        return bytes(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"MemoryStream({len(self._data)} bytes)"
