"""Record straight into HDF5: a write stream that indexes the ``.ovd`` bytes as they arrive.

Why: a long simulation should not have to write an ``.ovd`` and convert it afterwards, and a
crash should leave a readable recording. :class:`H5Stream` keeps the bytes it is given, and
every ``batch_bytes`` (and on ``flush``) tokenizes the complete commands received so far,
indexes them with the same :class:`~pvdkit.recording.IndexBuilder` as the ``.ovd`` reader and
appends them to the file in one batch (a few h5py calls per table and pool — never one per
attribute write). The incomplete last command waits for the next bytes.

Each batch adds one *segment* per series it touches; ``close()`` then (by default) compacts the
file so that every series is a single slice, which makes the result identical to
``convert``-ing the same bytes.
"""

from __future__ import annotations

import os

import numpy as np

from pvdkit.h5.format import H5Writer, h5_to_ovd_bytes, write_h5
from pvdkit.ovd.codec import HEADER_SIZE, decode_header
from pvdkit.ovd.tokenizer import tokenize
from pvdkit.recording import IndexBuilder
from pvdkit.types import PvdError

BytesLike = bytes | bytearray | memoryview


class H5Stream:
    """A :class:`pvdkit.streams.WriteStream` that records into an HDF5 file (``.h5``).

    ``batch_bytes``: how many stream bytes to collect before indexing and appending them (also
    done on every ``flush``). ``compact``: on close, rewrite a multi-batch file so each series is
    one contiguous slice (costs one extra pass over the data). The file is created at once, so a
    bad path fails immediately.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        batch_bytes: int = 8 << 20,
        compact: bool = True,
        compression: str | None = "gzip",
        compression_opts: int | None = 4,
    ) -> None:
        self.path = os.fspath(path)
        self.batch_bytes = int(batch_bytes)
        self.compact = compact
        self._comp = {"compression": compression, "compression_opts": compression_opts}
        self._pending = bytearray()
        self._dead = bytearray()  # bytes after unrecoverable damage: kept verbatim, never parsed
        self._error: str | None = None
        self._writer: H5Writer | None = None
        self._builder: IndexBuilder | None = None
        self._frame = -1
        self._offset = 0  # stream offset of self._pending[0]
        self.batches = 0
        self.bytes_written = 0
        self.closed = False
        try:
            with open(self.path, "wb"):
                pass
        except OSError as exc:
            raise PvdError(f"cannot create {self.path}: {exc.strerror or exc}") from None

    def write(self, data: BytesLike) -> None:
        """Receive the next bytes of the stream (header first); index them in batches."""
        if self.closed:
            raise PvdError(f"{self.path}: write after the stream was closed")
        n = memoryview(data).nbytes
        self.bytes_written += n
        if self._error is not None:
            self._dead += data
            return
        self._pending += data
        if len(self._pending) >= self.batch_bytes:
            self._index()

    def _index(self) -> None:
        if self._error is not None:
            return
        if self._writer is None:
            if len(self._pending) < HEADER_SIZE:
                return
            version = decode_header(bytes(self._pending[:HEADER_SIZE]), self.path)
            self._writer = H5Writer(self.path, version, source_name=os.path.basename(self.path), **self._comp)
            self._builder = IndexBuilder(version)
            del self._pending[:HEADER_SIZE]
            self._offset = HEADER_SIZE
        buf = np.frombuffer(bytes(self._pending), np.uint8)
        table = tokenize(buf, source_name=self.path, version=self._builder.version, start_frame=self._frame)
        if len(table):
            batch = self._builder.feed(buf, table)
            self._writer.append(batch)
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

    def flush(self) -> None:
        """Index and append everything complete received so far, and flush the file."""
        if self.closed:
            return
        self._index()
        if self._writer is not None:
            self._writer.flush()

    def close(self) -> None:
        """Append the rest, keep an incomplete tail verbatim, close, and compact (idempotent)."""
        if self.closed:
            return
        self.closed = True
        self._index()
        if self._writer is None:
            raise PvdError(
                f"{self.path}: the stream ended after {len(self._pending)} bytes, before its "
                f"{HEADER_SIZE}-byte OmniPVD header; nothing was recorded"
            )
        tail = bytes(self._pending) + bytes(self._dead)
        error = self._error
        if error is None and self._pending:
            error = (
                f"{self.path}: truncated at byte offset {self._offset}: the stream ended inside a "
                "command; every command before it was recorded"
            )
        self._writer.set_tail(tail, error)
        self._writer.close()
        if self.compact and self.batches > 1:
            self._compact()

    def _compact(self) -> None:
        data = np.frombuffer(h5_to_ovd_bytes(self.path), np.uint8)
        table = tokenize(data, source_name=self.path)
        tmp = self.path + ".compacting"
        write_h5(data, table, tmp, source_name=os.path.basename(self.path), **self._comp)
        os.replace(tmp, self.path)

    def __enter__(self) -> H5Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
