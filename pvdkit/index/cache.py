"""The index of an ``.ovd`` file, cached on disk: opening the same recording again reads a few
tables instead of parsing the stream, and needs no numba.

Why: parsing is fast (a 38 MB PhysX recording indexes in ~45 ms), but the compiled parser needs
numba, whose import and cache load cost ~0.35 s — most of a warm ``pvdkit info`` (0.49 s on that
file before this cache). Measured alternatives: the numba-free reader pvdkit has (the codec,
command by command in Python) takes 2.6 s for that file (15 MB/s); commands are variable-length,
so numpy cannot vectorise finding them; a compiled extension built by ``pip install`` would be
a second implementation of the byte layout (in C) and need a compiler at install. The cache keeps
the one parser (:mod:`pvdkit.ovd.kernels` through :mod:`pvdkit.index.builder`) and stores what
it produced: opening a cached 38 MB file costs its CRC-32 (~8-17 ms, on a second thread) and
reading ~4 bytes per attribute command of tables (a warm ``pvdkit info`` ~0.1 s above
``python -c "import numpy"``, ``bench/bench_start.py``).

What is stored (one file per recording path under ``<cache>/index``, :func:`pvdkit.jit.cache_dir`):
the :class:`~pvdkit.index.tables.RecordingData` tables (objects, frames, series, paths, messages,
command counts, damage), the byte offsets of the registrations (decoded again with the codec on
load) and of every attribute command grouped by series. Samples are read from the stream with
numpy at those offsets (:func:`pvdkit.ovd.layout.attribute_payloads`): the same bytes the
compiled gathers read. ``preload`` (bulk reads for ``pvdkit diff``) indexes the stream afresh and
uses the compiled path, as without a cache.

Never a wrong answer: an entry is used only if it was written by the same index code (the size
and modification time of each of the indexer's source files), for a stream of the same length
and the same CRC-32 of all its bytes (computed on every open): a file rewritten in place (even
with its old size and modification time restored), truncated or grown is indexed again; one
that was only touched or copied back keeps its entry. The entry carries a CRC-32 of its own
bytes too, checked on every load, so a damaged entry (a flipped bit on disk, a torn copy) is
ignored rather than trusted; its header's length is checked against the file before anything is
read. Writing is atomic (a temporary file renamed over the entry); an unreadable, foreign or
damaged entry is ignored; any error reading or writing the cache only means the stream is
parsed as without it.

Limits: files under :data:`MIN_BYTES` are not cached (parsing them is cheap, but numba's load is
not: set ``PVDKIT_INDEX_CACHE_MIN`` lower to cache those too), only the :data:`MAX_ENTRIES` most
recently used entries and :data:`MAX_BYTES` in all are kept, and ``PVDKIT_INDEX_CACHE=0``
switches the cache off.
"""

from __future__ import annotations

import json
import mmap
import os
import threading
import time
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pvdkit.index.tables import FrameTable, Message, ObjectTable, RecordingData, Samples, SeriesTable
from pvdkit.ovd.codec import Version, decode_command_at
from pvdkit.ovd.layout import attribute_payloads
from pvdkit.types import Command

if TYPE_CHECKING:
    from pvdkit.index.tables import Batch
    from pvdkit.ovd.tokenizer import Scan

__all__ = ["ENV", "MAX_BYTES", "MAX_ENTRIES", "MIN_BYTES", "entry_path", "load", "store"]

#: ``PVDKIT_INDEX_CACHE=0`` (or ``off``, ``no``, ``false``) switches the index cache off.
ENV = "PVDKIT_INDEX_CACHE"
#: Smallest file whose index is cached (bytes); ``PVDKIT_INDEX_CACHE_MIN`` overrides it.
MIN_BYTES = 256 << 10
#: Entries kept (the least recently used beyond this are deleted).
MAX_ENTRIES = 256
#: Bytes kept in all (the least recently used beyond this are deleted).
MAX_BYTES = 2 << 30

_MAGIC = b"PVDKIDX\x02"
_FORMAT = 2
#: An entry starts with the magic, the header's length (u64) and the CRC-32 (u64) of every byte
#: after these 24.
_HEAD = 24
_ALIGN = 64
#: The files whose code decides what an index holds: an entry written by other code is not used.
_CODE_FILES = (
    "index/builder.py", "index/cache.py", "index/kernels.py", "index/tables.py",
    "ovd/_kernels.py", "ovd/codec.py", "ovd/layout.py", "ovd/tokenizer.py",
)
_code: str | None = None
#: The array columns of the tables stored (``o_``, ``f_``, ``s_`` + the field).
_OBJECT_FIELDS = ("handle", "cls", "context", "created", "destroyed", "create_command", "destroy_command")
_FRAME_FIELDS = ("context", "start", "stop", "stopped", "command")
_SERIES_FIELDS = ("object", "path", "family", "context", "count")


def _code_stamp() -> str:
    """The size and modification time of each of :data:`_CODE_FILES` (any new install or edit
    of the index code changes it)."""
    global _code
    if _code is None:
        root = Path(__file__).resolve().parents[1]
        parts = [str(_FORMAT)]
        for name in _CODE_FILES:
            try:
                st = os.stat(root / name)
                parts.append(f"{name} {st.st_size} {st.st_mtime_ns}")
            except OSError:
                parts.append(f"{name} -")
        _code = "; ".join(parts)
    return _code


def _enabled() -> bool:
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "off", "no", "false")


def _min_bytes() -> int:
    try:
        return int(os.environ.get("PVDKIT_INDEX_CACHE_MIN", MIN_BYTES))
    except ValueError:
        return MIN_BYTES


def entry_path(source_name: str, size: int) -> Path | None:
    """The cache file of the recording at path ``source_name`` whose stream is ``size`` bytes;
    None when there is none to use: the cache is off, ``source_name`` is not a regular file of
    that size (bytes in memory, a stream), the file is small, or no cache directory is writable."""
    if not _enabled() or size < _min_bytes():
        return None
    try:
        real = os.path.realpath(source_name)
        if not os.path.isfile(real) or os.path.getsize(real) != size:
            return None
    except (OSError, ValueError, TypeError):
        return None
    from pvdkit.jit import cache_dir

    d = cache_dir("index")
    if d is None:
        return None
    # 64 bits of the real path name the entry (which is checked against the bytes anyway)
    key = real.encode("utf-8", "surrogateescape")
    return d / f"{zlib.crc32(key):08x}{zlib.adler32(key):08x}.idx"


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


def _base(header_bytes: int) -> int:
    """Where the arrays of an entry start: after the magic, the header's length, the entry's
    CRC and the header."""
    return -(-(_HEAD + header_bytes) // _ALIGN) * _ALIGN


def load(entry: Path, buf: np.ndarray, source_name: str) -> RecordingData | None:
    """The cached index of the stream ``buf`` (read from ``source_name``), or None when ``entry``
    is missing, unreadable, or not the index of exactly these bytes by this code."""
    try:
        with open(entry, "rb") as f:
            head = f.read(_HEAD)
            if len(head) != _HEAD or head[:8] != _MAGIC:
                return None
            n = int.from_bytes(head[8:16], "little")
            if n > os.fstat(f.fileno()).st_size - _HEAD:  # a damaged length: read nothing of it
                return None
            meta = json.loads(f.read(n))
            wanted = (_FORMAT, _code_stamp(), len(buf))
            if not isinstance(meta, dict):
                return None
            if (meta.get("format"), meta.get("code"), meta.get("size")) != wanted:
                return None
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError, TypeError, MemoryError):
        return None
    # The CRCs of the stream (the proof that the entry is this stream's) and of the entry (the
    # proof that it is undamaged) run on a second thread (zlib releases the GIL) while the tables
    # are rebuilt; they are dropped if either differs.
    crc: list[int] = []
    own = int.from_bytes(head[16:], "little")

    def checksums() -> None:
        with memoryview(mm) as body:
            crc.extend((zlib.crc32(buf), zlib.crc32(body[_HEAD:])))

    check = threading.Thread(target=checksums, daemon=True)
    check.start()
    try:
        base = _base(n)
        arrays = {name: np.frombuffer(mm, np.dtype(dt), int(np.prod(shape)), base + off).reshape(shape)
                  for name, (dt, shape, off) in meta["arrays"].items()}
        data = _data(meta, arrays, buf, source_name)
    except Exception:  # a damaged entry, or (then the CRC differs too) other bytes: parse instead
        data = None
    check.join()
    if data is None or crc != [meta.get("crc32"), own]:
        return None
    try:
        os.utime(entry)  # most recently used
    except OSError:
        pass
    return data


def _data(meta: dict[str, Any], a: dict[str, np.ndarray], buf: np.ndarray, source_name: str) -> RecordingData:
    from pvdkit.ovd.tokenizer import _describe

    version: Version = tuple(meta["version"])
    registrations = [decode_command_at(buf, int(o), version, source_name)[0] for o in a["reg_offset"]]
    objects = ObjectTable(name=list(meta["names"]), **{k: a["o_" + k].copy() for k in _OBJECT_FIELDS})
    frames = FrameTable(**{k: a["f_" + k].copy() for k in _FRAME_FIELDS})
    series = SeriesTable(**{k: a["s_" + k].copy() for k in _SERIES_FIELDS})
    messages = [Message(*m) for m in meta["messages"]]
    counts = dict(meta["counts"])
    offsets, starts, frame_at = a["sample_offset"], a["sample_start"], a["frame_offset"]
    fresh: list[RecordingData] = []

    def load_samples(sid: int) -> Samples:
        if fresh:
            return fresh[0].load_samples(sid)
        return _samples(buf, offsets[starts[sid]:starts[sid + 1]], frame_at)

    def preload(other: RecordingData | None = None) -> None:
        if not fresh:  # bulk reads use the compiled gathers over a fresh index of the stream
            from pvdkit.index.builder import read_ovd_data

            fresh.append(read_ovd_data(buf, source_name=source_name, use_cache=False))
        fresh[0].preload(other)

    return RecordingData(
        version=version,
        source_name=source_name,
        registrations=registrations,
        objects=objects,
        frames=frames,
        messages=messages,
        paths=[tuple(p) for p in meta["paths"]],
        series=series,
        counts=lambda: dict(counts),
        load_samples=load_samples,
        error=_describe(meta["status"], buf, meta["valid_end"], source_name),
        n_commands=meta["n_commands"],
        preload=preload,
    )


def _samples(buf: np.ndarray, offsets: np.ndarray, frame_at: np.ndarray) -> Samples:
    """Samples of one series whose attribute commands start at ``offsets`` (the same arrays as
    :func:`pvdkit.index.builder.samples_from_rows` gives for them)."""
    offsets = offsets.astype(np.int64)
    kinds, at, sizes = attribute_payloads(buf, offsets)
    frames = (np.searchsorted(frame_at, offsets, "right") - 1).astype(np.int32)
    ops = kinds.copy() if len(kinds) and kinds[0] != Command.SET_ATTRIBUTE else None
    n = len(offsets)
    if n == 0 or sizes.min() == sizes.max():
        size = int(sizes[0]) if n else 0
        fixed = buf[at[:, None] + np.arange(size)] if n else np.empty((0, 0), np.uint8)
        return Samples(frames, fixed=fixed, ops=ops)
    starts = np.zeros(n + 1, np.int64)
    np.cumsum(sizes, out=starts[1:])
    flat = buf[np.repeat(at - starts[:-1], sizes) + np.arange(starts[-1])]
    return Samples(frames, flat=flat, offsets=starts, ops=ops)


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def store(entry: Path, scan: Scan, batch: Batch, data: RecordingData, grouped: tuple[np.ndarray, np.ndarray]
          ) -> None:
    """Write the index ``data`` of the stream ``scan.data`` (indexed as ``batch``; ``grouped``:
    the attribute rows grouped by series and each series' first row) to ``entry``, then trim
    the cache. Errors are ignored: the cache is an optimisation."""
    try:
        _write(entry, scan, batch, data, grouped)
        _trim(entry.parent)
    except (OSError, ValueError, TypeError, OverflowError):
        pass


def _write(entry: Path, scan: Scan, batch: Batch, data: RecordingData, grouped: tuple[np.ndarray, np.ndarray]
           ) -> None:
    buf, table = scan.data, batch.table
    rows, starts = grouped
    offset_type = np.uint32 if len(buf) < 2**32 else np.int64
    o, f, s = data.objects, data.frames, data.series
    arrays = {
        **{"o_" + k: getattr(o, k) for k in _OBJECT_FIELDS},
        **{"f_" + k: getattr(f, k) for k in _FRAME_FIELDS},
        **{"s_" + k: getattr(s, k) for k in _SERIES_FIELDS},
        "reg_offset": table.offset[np.asarray([r for r, _ in batch.registrations], np.int64)],
        "sample_offset": table.offset[rows].astype(offset_type),
        "sample_start": np.asarray(starts, np.int64),
        "frame_offset": table.offset[f.command],
    }
    meta: dict[str, Any] = {
        "format": _FORMAT, "code": _code_stamp(), "size": len(buf), "crc32": zlib.crc32(buf),
        "version": list(data.version), "status": scan.status, "valid_end": scan.valid_end,
        "n_commands": data.n_commands, "counts": data.counts(), "names": list(o.name),
        "paths": [list(p) for p in data.paths],
        "messages": [[m.context, m.message, m.file, m.line, m.type, m.class_handle, m.frame, m.command]
                     for m in data.messages],
    }
    # The arrays follow the header, each aligned; offsets count from the first (see _base).
    layout, pos = {}, 0
    for name, arr in arrays.items():
        layout[name] = [arr.dtype.str, list(arr.shape), pos]
        pos += -(-arr.nbytes // _ALIGN) * _ALIGN
    meta["arrays"] = layout
    text = json.dumps(meta, separators=(",", ":")).encode()
    base = _base(len(text))
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=".tmp-", suffix=".idx")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(_MAGIC + len(text).to_bytes(8, "little") + bytes(8))  # its CRC, written last
            body = [text, b"\0" * (base - _HEAD - len(text))]
            for arr in arrays.values():
                raw = np.ascontiguousarray(arr).tobytes()
                body += [raw, b"\0" * (-len(raw) % _ALIGN)]
            crc = 0
            for part in body:
                out.write(part)
                crc = zlib.crc32(part, crc)
            out.seek(16)
            out.write(crc.to_bytes(8, "little"))
        os.replace(tmp, entry)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _trim(directory: Path) -> None:
    """Delete the least recently used entries beyond :data:`MAX_ENTRIES` / :data:`MAX_BYTES`
    (and temporary files of writers that died)."""
    entries = []
    for e in os.scandir(directory):
        try:
            st = e.stat()
        except OSError:
            continue
        if e.name.endswith(".idx"):
            entries.append((st.st_mtime, st.st_size, e.path, e.name.startswith(".tmp-")))
    entries.sort(reverse=True)
    total, kept = 0, 0
    for mtime, size, path, temporary in entries:
        if temporary:
            if time.time() - mtime > 3600:
                _unlink(path)
            continue
        total += size
        kept += 1
        if kept > MAX_ENTRIES or total > MAX_BYTES:
            _unlink(path)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
