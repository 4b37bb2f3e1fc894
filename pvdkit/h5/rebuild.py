"""Rebuild the exact ``.ovd`` bytes an HDF5 recording was made from (:func:`h5_to_ovd_bytes`).

Lossless by construction: the command log (kind and series of every command) orders the
tables' rows and the samples back into the original stream; attribute commands are written
field by field by :func:`pvdkit.ovd.kernels.emit_commands`, every other command by its codec
dataclass. Reads go through the reader's checks (:mod:`pvdkit.h5.reader`), so a damaged or
hostile file fails as one :class:`~pvdkit.types.PvdError`.
"""

from __future__ import annotations

import os

import h5py
import numpy as np

from pvdkit.h5.layout import (
    DESTROY_DTYPE,
    EXCEPTION_DTYPE,
    FRAME_DTYPE,
    MESSAGE_DTYPE,
    OBJECT_DTYPE,
    STOP_DTYPE,
    Progress,
    _dec,
)
from pvdkit.h5.reader import (
    _H5_ERRORS,
    MAX_EXPANSION,
    READ_SLACK_BYTES,
    _check_source,
    _check_spans,
    _command_codes,
    _open_file,
    _paths,
    _pools,
    _registrations,
    _segments,
    _series,
    _Source,
    _type_name,
)
from pvdkit.ovd.codec import CreateObject, RecordMessage, Version, encode_header
from pvdkit.ovd.layout import ATTR_FIXED_BYTES, HEADER_SIZE, PAIR_BYTES, PAIR_DTYPE
from pvdkit.types import Command, PvdError

__all__ = ["h5_to_ovd_bytes"]


def h5_to_ovd_bytes(
    source: str | os.PathLike | bytes | h5py.File, name: str | None = None, progress: Progress | None = None
) -> bytes:
    """Rebuild the exact ``.ovd`` bytes an HDF5 recording was made from (header, every command in
    its original order, and the verbatim damaged tail if there was one).

    Holds the samples in memory (about the size of the ``.ovd``). A damaged or hostile file
    raises :class:`PvdError` naming the file and dataset; the rebuilt stream may be at most
    ``MAX_EXPANSION`` × the file's size (the compression bound of its datasets).
    """
    own = not isinstance(source, h5py.File)
    label = name or (
        source.filename
        if isinstance(source, h5py.File)
        else "<memory>"
        if isinstance(source, (bytes, bytearray))
        else os.fspath(source)
    )
    f = _open_file(source, label) if own else source
    try:
        src = _Source(f, label)
        version = _check_source(src)
        return _rebuild(src, version, progress)
    finally:
        if own:
            f.close()


def _rebuild(src: _Source, version: Version, progress: Progress | None) -> bytes:
    f, label = src.f, src.name
    kinds_ds = src.dataset("log/kind")
    kinds = _command_codes(src, kinds_ds, src.rows(kinds_ds, "log/kind"))
    ser_ds = src.dataset("log/series")
    if ser_ds.dtype.kind not in "iu":
        raise src.error(ser_ds.name, f"is {_type_name(ser_ds.dtype)}, expected int32 series ids")
    ser = src.read(ser_ds, 0, src.rows(ser_ds, "log/series")).astype(np.int64)
    n = len(kinds)
    if len(ser) != n:
        raise src.error(ser_ds.name, f"has {len(ser)} entries, /log/kind {n} (one per command)")
    is_attr = (kinds >= Command.SET_ATTRIBUTE) & (kinds <= Command.REMOVE_FROM_UNIQUE_LIST_ATTRIBUTE)

    # Pre-encoded records of every other command kind, in stream order per kind.
    regs = [r for _, r in _registrations(src)]
    reg_bytes = [r.encode(version) for r in regs]
    o = src.table("objects", OBJECT_DTYPE)
    created = o[o["create_command"] >= 0]
    created = created[np.argsort(created["create_command"], kind="stable")]
    creates = [
        CreateObject(int(r["context"]), int(r["class"]), int(r["handle"]), _dec(r["name"])).encode(version)
        for r in created
    ]
    d = src.table("destroys", DESTROY_DTYPE)
    fr = src.table("frames", FRAME_DTYPE)
    has_stops = src.get("frame_stops") is not None
    st = src.table("frame_stops", STOP_DTYPE) if has_stops else np.zeros(0, STOP_DTYPE)
    msgs = [
        RecordMessage(
            int(r["context"]),
            _dec(r["message"]),
            _dec(r["file"]),
            int(r["line"]),
            int(r["type"]),
            int(r["class"]),
        ).encode(version)
        for r in src.table("messages", MESSAGE_DTYPE)
    ]

    def pairs(code: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        arr = np.zeros(len(a), PAIR_DTYPE)
        arr["cmd"], arr["a"], arr["b"] = code, a, b
        return arr.view(np.uint8).reshape(len(a), PAIR_BYTES)

    per_kind_blobs = {
        "reg": reg_bytes,
        int(Command.CREATE_OBJECT): creates,
        int(Command.RECORD_MESSAGE): msgs,
        int(Command.DESTROY_OBJECT): pairs(Command.DESTROY_OBJECT, d["context"], d["handle"]),
        int(Command.START_FRAME): pairs(Command.START_FRAME, fr["context"], fr["start"]),
        int(Command.STOP_FRAME): pairs(Command.STOP_FRAME, st["context"], st["time"]),
    }
    group_of_kind = {
        int(Command.REGISTER_CLASS): "reg",
        int(Command.REGISTER_ATTRIBUTE): "reg",
        int(Command.REGISTER_CLASS_ATTRIBUTE): "reg",
        int(Command.REGISTER_UNIQUE_LIST_ATTRIBUTE): "reg",
    }
    rec_len = np.zeros(n, np.int64)
    rec_off = np.zeros(n, np.int64)
    blobs: list[np.ndarray] = []
    base = 0
    for key, items in per_kind_blobs.items():
        ks = [k for k, g in group_of_kind.items() if g == key] if key == "reg" else [key]
        rows = np.flatnonzero(np.isin(kinds, ks))
        if isinstance(items, np.ndarray):
            lens = np.full(len(items), PAIR_BYTES, np.int64)
            flat = items.reshape(-1)
        else:
            lens = np.array([len(b) for b in items], np.int64)
            flat = np.frombuffer(b"".join(items), np.uint8)
        if len(rows) != len(lens):
            raise PvdError(
                f"{label}: the log has {len(rows)} commands of kind {ks} but the tables hold {len(lens)}"
            )
        rec_len[rows] = lens
        rec_off[rows] = base + np.concatenate([[0], np.cumsum(lens)[:-1]]) if len(lens) else 0
        blobs.append(flat)
        base += len(flat)
    rec_src = np.concatenate(blobs) if blobs else np.zeros(0, np.uint8)

    # Attribute commands: object, path, context of their series; sample j of the series.
    paths = [np.asarray(p, np.uint32) for p in _paths(src)]
    s = _series(src, len(o), len(paths))
    objs_handle = o["handle"].astype(np.uint64)
    path_depth = np.array([len(p) for p in paths], np.int64)
    path_start = (
        np.concatenate([[0], np.cumsum(path_depth)[:-1]]).astype(np.int64)
        if len(paths)
        else np.zeros(0, np.int64)
    )
    path_flat = np.concatenate(paths).astype(np.uint32) if paths else np.zeros(0, np.uint32)
    a_rows = np.flatnonzero(is_attr)
    a_sid = ser[a_rows]
    if len(a_rows) and (a_sid.min() < 0 or a_sid.max() >= len(s)):
        raise PvdError(f"{label}: /log/series refers to series outside /series (0..{len(s) - 1})")
    a_idx = np.zeros(n, np.int64)
    a_idx[a_rows] = np.arange(len(a_rows))
    a_ctx = s["context"].astype(np.uint64)[a_sid]
    exc = src.table("log/context_exceptions", EXCEPTION_DTYPE)
    if len(exc):
        ec = exc["command"]
        bad = (ec < 0) | (ec >= n)
        bad[~bad] = ~is_attr[ec[~bad]]
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise src.error(f"/log/context_exceptions row {i}",
                            f"command {int(ec[i])} is not an attribute command of the log")
        a_ctx[a_idx[ec]] = exc["context"]
    a_obj = objs_handle[s["object"][a_sid]]
    a_path = s["path"][a_sid]
    a_depth = path_depth[a_path].astype(np.uint8)
    a_path_start = path_start[a_path]

    data_flat, series_samples, series_start, samp_off, samp_len = _samples_for_rebuild(src, s)
    # Sample order: the j-th command of a series is its j-th sample.
    from pvdkit.index.kernels import group_rows
    from pvdkit.ovd.kernels import emit_commands

    grouped_pos, starts = group_rows(a_sid, np.arange(len(a_rows), dtype=np.int64), len(s))
    if not np.array_equal(np.diff(starts), np.diff(series_start)):
        raise PvdError(f"{label}: sample counts in /segments do not match the commands in /log/series")
    sample_of_cmd = np.empty(len(a_rows), np.int64)
    sample_of_cmd[grouped_pos] = series_samples
    a_data_off = samp_off[sample_of_cmd]
    a_data_len = samp_len[sample_of_cmd]

    lengths = rec_len.copy()
    lengths[a_rows] = ATTR_FIXED_BYTES + 4 * a_depth.astype(np.int64) + a_data_len
    cmd_off = np.empty(n, np.int64)
    if n:
        cmd_off[0] = HEADER_SIZE
        np.cumsum(lengths[:-1], out=cmd_off[1:])
        cmd_off[1:] += HEADER_SIZE
    tail = b""
    if src.get("log/tail") is not None:
        tail_ds = src.dataset("log/tail")
        if tail_ds.dtype.kind not in "iu" or tail_ds.dtype.itemsize != 1:
            raise src.error(tail_ds.name,
                            f"is {_type_name(tail_ds.dtype)}, expected the stream's bytes (uint8)")
        tail = src.read(tail_ds).astype(np.uint8, copy=False).tobytes()
    total = HEADER_SIZE + int(lengths.sum()) + len(tail)
    try:
        file_size = f.id.get_filesize()
    except _H5_ERRORS as exc:
        raise src.error("file", f"cannot tell its size ({exc})") from None
    if total > MAX_EXPANSION * file_size + READ_SLACK_BYTES:
        raise PvdError(
            f"{label}: the .ovd this recording describes would be {total:,} bytes, more than "
            f"{MAX_EXPANSION} × the file's {file_size:,} bytes — a damaged or hostile file"
        )
    out = np.empty(total, np.uint8)
    out[:HEADER_SIZE] = np.frombuffer(encode_header(version), np.uint8)
    emit_commands(out, cmd_off, kinds, is_attr.astype(np.uint8), rec_src, rec_off, rec_len, a_idx, a_ctx,
                  a_obj, a_path_start, a_depth, path_flat, a_data_off, a_data_len, data_flat)
    if tail:
        out[total - len(tail) :] = np.frombuffer(tail, np.uint8)
    if progress is not None:
        progress(1.0)
    return out.tobytes()


def _samples_for_rebuild(src: _Source, s: np.ndarray):
    """Every sample's bytes in one flat array, and for each series its samples in order.

    Returns ``data_flat``, ``series_samples``, ``series_start`` (global sample ids of series g are
    ``series_samples[series_start[g]:series_start[g+1]]``), and each sample's byte offset and
    length in ``data_flat``. Reads each pool up to the rows its segments use; checks that every
    sample lies inside its pool and that no two samples share bytes (so the rebuilt stream is
    no larger than the data read).
    """
    names, pools = _pools(src)
    seg = _segments(src, pools, s)
    used = np.zeros(len(pools), np.int64)
    if len(seg):
        np.maximum.at(used, seg["pool"], seg["start"] + seg["count"])
    flats, offs, lens = [], [], []
    pool_base = np.zeros(len(names) + 1, np.int64)
    byte_base = 0
    for p, pool in enumerate(pools):
        nsamp = int(used[p])
        if pool.starts is None:
            vals = src.read(pool.values, 0, nsamp)
            raw = np.ascontiguousarray(vals.astype(vals.dtype.newbyteorder("<"), copy=False)).view(np.uint8)
            raw = raw.reshape(-1)
            w = raw.size // nsamp if nsamp else 0
            offs.append(np.arange(nsamp, dtype=np.int64) * w + byte_base)
            lens.append(np.full(nsamp, w, np.int64))
        else:
            item = pool.values.dtype.itemsize
            st = src.read(pool.starts, 0, nsamp).astype(np.int64)
            ln = src.read(pool.lengths, 0, nsamp).astype(np.int64)
            _check_spans(src, pool.values, st, ln, 0)
            full = np.flatnonzero(ln > 0)  # an empty sample shares no element
            order = full[np.argsort(st[full], kind="stable")]
            if len(order) > 1 and (st[order][1:] < (st + ln)[order][:-1]).any():
                raise src.error(pool.starts.name, "two samples share elements of the pool's values")
            extent = int((st + ln).max()) if nsamp else 0
            vals = src.read(pool.values, 0, extent)
            raw = np.ascontiguousarray(vals.astype(vals.dtype.newbyteorder("<"), copy=False)).view(np.uint8)
            raw = raw.reshape(-1)
            offs.append(st * item + byte_base)
            lens.append(ln * item)
        flats.append(raw)
        byte_base += raw.size
        pool_base[p + 1] = pool_base[p] + nsamp
    counts = seg["count"].astype(np.int64)
    first = pool_base[seg["pool"]] + seg["start"]
    # Expand each segment into its sample ids (segments do not overlap: bounded by the pools).
    seg_pos = np.repeat(
        np.concatenate([[0], np.cumsum(counts)[:-1]]) if len(counts) else np.zeros(0, np.int64), counts
    )
    series_samples = np.repeat(first, counts) + (np.arange(int(counts.sum())) - seg_pos)
    per_series = np.bincount(seg["series"], weights=counts, minlength=len(s)).astype(np.int64)
    series_start = np.concatenate([[0], np.cumsum(per_series)])
    data_flat = np.concatenate(flats) if flats else np.zeros(0, np.uint8)
    samp_off = np.concatenate(offs).astype(np.int64) if offs else np.zeros(0, np.int64)
    samp_len = np.concatenate(lens).astype(np.int64) if lens else np.zeros(0, np.int64)
    return data_flat, series_samples.astype(np.int64), series_start, samp_off, samp_len
