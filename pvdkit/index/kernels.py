"""Compiled (numba) kernels of the index: hash maps, the index pass, grouping and gathers.

Why a module of its own: importing numba and loading its cached machine code costs about half a
second, and only indexing an ``.ovd`` stream (or writing HDF5 from one) needs these loops.
:mod:`pvdkit.index.builder` and the HDF5 writer import this module on first use, so opening
an ``.h5`` recording, the query model and ``pvdkit diff`` on ``.h5`` files do not need numba.

The command layout is not spelled here: the fused pass inlines the readers of
:mod:`pvdkit.ovd.kernels` (``command_end``, ``command_fields``, ``store_row``) and names
commands and offsets by the constants of :mod:`pvdkit.ovd.layout`. numba's cache does not
follow those inlined helpers into their file: after changing them, delete this module's cache
(``rm -r ~/.cache/pvdkit/numba``, see :mod:`pvdkit.jit`).

Every kernel releases the GIL (``nogil``): the live viewer tokenizes and indexes on its
receive thread while the GUI thread draws.

A hash map is three arrays (keys u64, values i64, used u8) of a power-of-two capacity with
linear probing; it is grown (:func:`grow`) before it gets more than half full.
"""

from __future__ import annotations

import numpy as np

from pvdkit.index.tables import FAMILY_LIST, FAMILY_SET
from pvdkit.jit import njit
from pvdkit.ovd.kernels import command_end, command_fields, is_attribute_command, read_u32, store_row
from pvdkit.ovd.layout import (
    ATTR_FIXED_BYTES,
    ATTR_PATH,
    CMD_CREATE_OBJECT,
    CMD_DESTROY_OBJECT,
    CMD_SET_ATTRIBUTE,
    CMD_START_FRAME,
)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, inline="always")
def _probe(keys, used, key):
    mask = keys.shape[0] - 1
    i = np.int64((key * _GOLDEN) >> np.uint64(40)) & mask
    while used[i] and keys[i] != key:
        i = (i + 1) & mask
    return i


@njit(cache=True, inline="always")
def _put(keys, vals, used, i, key, val):
    """Store ``key`` → ``val`` in slot ``i`` of a map (a free slot or ``key``'s, see ``_probe``)."""
    keys[i] = key
    vals[i] = val
    used[i] = 1


@njit(cache=True, inline="always")
def _id_of(keys, vals, used, key, next_id):
    """(id of ``key``, False) if the map holds it, else (``next_id``, True) after adding it."""
    i = _probe(keys, used, key)
    if used[i]:
        return vals[i], False
    _put(keys, vals, used, i, key, next_id)
    return next_id, True


@njit(cache=True, nogil=True)
def grow(keys, vals, used):
    cap = keys.shape[0] * 2
    nk = np.zeros(cap, np.uint64)
    nv = np.zeros(cap, np.int64)
    nu = np.zeros(cap, np.uint8)
    for j in range(keys.shape[0]):
        if used[j]:
            _put(nk, nv, nu, _probe(nk, nu, keys[j]), keys[j], vals[j])
    return nk, nv, nu


@njit(cache=True, nogil=True)
def _path_hash(b, q, d):
    """Hash of the ``d`` u32 handles of an attribute path stored at ``q``."""
    h = np.uint64(d)
    for j in range(d):
        h = (h ^ np.uint64(read_u32(b, q + 4 * j))) * _GOLDEN
        h ^= h >> np.uint64(29)
    return h


@njit(cache=True, nogil=True)
def _deep_find(b, q, d, dk, dv, du, dh, ds):
    """Id of the multi-handle path of ``d`` handles at ``q`` (see :func:`deep_add`), -1 if unknown.

    ``dk``/``dv``/``du``: path hash → id (a hash map whose equal keys may repeat), ``dh`` the
    handles of every known path end to end, path ``i`` being ``dh[ds[i]:ds[i + 1]]``.
    """
    h = _path_hash(b, q, d)
    mask = dk.shape[0] - 1
    i = np.int64((h * _GOLDEN) >> np.uint64(40)) & mask
    while du[i]:
        if dk[i] == h:
            pid = dv[i]
            s0 = ds[pid]
            if ds[pid + 1] - s0 == d:
                same = True
                for j in range(d):
                    if np.int64(dh[s0 + j]) != read_u32(b, q + 4 * j):
                        same = False
                        break
                if same:
                    return pid
        i = (i + 1) & mask
    return -1


@njit(cache=True, nogil=True)
def deep_add(dk, dv, du, h, pid):
    """Insert hash ``h`` → path id ``pid`` (the map must have a free slot)."""
    mask = dk.shape[0] - 1
    i = np.int64((h * _GOLDEN) >> np.uint64(40)) & mask
    while du[i]:
        i = (i + 1) & mask
    _put(dk, dv, du, i, h, pid)


@njit(cache=True, nogil=True)
def deep_hash_at(b, q, d):
    return _path_hash(b, q, d)


# Counters of :func:`index_rows` (one small int64 array, updated in place).
(
    C_LIFE,
    C_PATH,
    C_SERIES,
    C_ATTR,
    C_DESTROY,
    C_NEW_LIFE,
    C_NEW_PATH,
    C_NEW_SERIES,
    C_EXC,
    C_OTHER,
) = range(10)

# What :func:`index_rows` stops for: done, grow a map (lifetimes, paths, series, ``s_ctx``), or
# register a multi-handle path it has not seen.
DONE, GROW_LIFE, GROW_PATH, GROW_SERIES, GROW_SCTX, NEW_DEEP = range(6)


@njit(cache=True, nogil=True)
def index_rows(from_bytes, b, base_len, pos, fr, start, n, cols, cnt, life, paths, series, s_ctx, s_cnt,
               deep, out):
    """Assign lifetimes, path ids and series ids to rows ``start``..``n-1``, in stream order.

    With ``from_bytes`` the rows are also tokenized here, in the same pass: the commands start
    at byte ``pos`` of ``b`` (``fr`` = frame index before it; all ``n`` rows are known complete
    from the tokenizer's counting pass) and their stored :class:`CommandTable` columns ``cols``
    are written; otherwise the columns are read (an already tokenized table over ``b``).

    Maps (each a tuple of arrays): ``life`` handle → lifetime, ``paths`` path key → path id,
    ``series`` series key → series id, ``deep`` the multi-handle paths (see ``_deep_find``);
    ``s_ctx`` the context of each series, ``s_cnt`` its number of samples in this batch; ``cnt``
    the counters (see ``C_*``). Path keys are the attribute handle, or for multi-handle paths the
    path's id with bit 32 set. Appends to the compact outputs ``out`` (attribute rows and their
    series, lifetime of each destroy, things first seen, rows whose context differs from their
    series', rows of every other command but CREATE_OBJECT). Stops before a row that could
    overfill a map or has an unseen multi-handle path and returns (row to resume at, its byte
    position, frame index before it, ``GROW_*``/``NEW_DEEP``; ``DONE`` = done): growing inside
    the loop would make numba's code slow.
    """
    kind, offset, frame, context, obj, attribute, depth, data_size, data_type = cols
    lk, lv, lu = life
    pk, pv, pu = paths
    sk, sv, su = series
    dk, dv, du, dh, ds = deep
    (attr_rows, attr_sid, destroy_life, new_life_row, new_life_implicit, new_path_key, new_s_life,
     new_s_path, new_s_family, exc_rows, other_rows) = out
    # The counters live in locals inside the loop (an array would be reloaded after every store
    # to an output, as numba cannot prove they do not alias) and are written back on return.
    n_life, n_path, n_series, n_attr, n_destroy = cnt[0], cnt[1], cnt[2], cnt[3], cnt[4]
    n_new_life, n_new_path, n_new_series, n_exc, n_other = cnt[5], cnt[6], cnt[7], cnt[8], cnt[9]
    size = b.shape[0]
    last_h = np.uint64(0)
    last_life = np.int64(-1)
    has_last = False
    stop = DONE
    resume = n
    for r in range(start, n):
        if from_bytes:
            _, k, e, dt = command_end(b, pos, size, base_len)
            ctx, h, at, dp, nb = command_fields(b, pos, k)
            p0 = pos
        else:
            k = np.int64(kind[r])
            ctx = context[r]
            h = obj[r]
            at = np.int64(attribute[r])
            dp = np.int64(depth[r])
            p0 = offset[r]
        is_attr = is_attribute_command(k)
        key = np.uint64(at)
        if (k == CMD_CREATE_OBJECT or is_attr) and 2 * (n_life + 1) > lk.shape[0]:
            stop = GROW_LIFE
        elif is_attr:
            if 2 * (n_path + 1) > pk.shape[0]:
                stop = GROW_PATH
            elif 2 * (n_series + 1) > sk.shape[0]:
                stop = GROW_SERIES
            elif n_series + 1 > s_ctx.shape[0] or n_series + 1 > s_cnt.shape[0]:
                stop = GROW_SCTX
            elif dp > 1:
                did = _deep_find(b, p0 + ATTR_PATH, dp, dk, dv, du, dh, ds)
                if did < 0:
                    stop = NEW_DEEP
                key = np.uint64(did) | np.uint64(1 << 32)
        if stop != DONE:
            resume = r
            break
        if from_bytes:
            if k == CMD_START_FRAME:
                fr += 1
            store_row(cols, r, k, pos, fr, ctx, h, at, dp, nb, dt)
            pos = e
        if k == CMD_CREATE_OBJECT:
            ln = n_life
            _put(lk, lv, lu, _probe(lk, lu, h), h, ln)
            new_life_row[n_new_life] = r
            new_life_implicit[n_new_life] = 0
            n_new_life += 1
            n_life = ln + 1
            has_last = False
        elif not is_attr:
            other_rows[n_other] = r
            n_other += 1
            if k == CMD_DESTROY_OBJECT:
                i = _probe(lk, lu, h)
                destroy_life[n_destroy] = lv[i] if lu[i] else -1
                n_destroy += 1
        else:
            if has_last and h == last_h:
                life = last_life
            else:
                life, new = _id_of(lk, lv, lu, h, n_life)
                if new:
                    new_life_row[n_new_life] = r
                    new_life_implicit[n_new_life] = 1
                    n_new_life += 1
                    n_life = life + 1
                last_h = h
                last_life = life
                has_last = True
            path, new = _id_of(pk, pv, pu, key, n_path)
            if new:
                new_path_key[n_new_path] = key
                n_new_path += 1
                n_path = path + 1
            fam = FAMILY_SET if k == CMD_SET_ATTRIBUTE else FAMILY_LIST
            skey = (np.uint64(life) << np.uint64(32)) | (np.uint64(path) << np.uint64(1)) | np.uint64(fam)
            i = _probe(sk, su, skey)
            if su[i]:
                sid = sv[i]
                if s_ctx[sid] != ctx:
                    exc_rows[n_exc] = r
                    n_exc += 1
            else:
                sid = n_series
                _put(sk, sv, su, i, skey, sid)
                s_ctx[sid] = ctx
                new_s_life[n_new_series] = life
                new_s_path[n_new_series] = path
                new_s_family[n_new_series] = fam
                n_new_series += 1
                n_series = sid + 1
            attr_rows[n_attr] = r
            attr_sid[n_attr] = sid
            s_cnt[sid] += 1
            n_attr += 1
    cnt[0], cnt[1], cnt[2], cnt[3], cnt[4] = n_life, n_path, n_series, n_attr, n_destroy
    cnt[5], cnt[6], cnt[7], cnt[8], cnt[9] = n_new_life, n_new_path, n_new_series, n_exc, n_other
    return resume, pos, fr, stop


@njit(cache=True, nogil=True)
def group_rows(keys, rows, n_groups):
    """Counting sort: ``rows`` grouped by ``keys`` (0..n_groups-1), order within a group kept.

    Returns the grouped rows and ``starts`` (group g is ``grouped[starts[g]:starts[g+1]]``).
    """
    starts = np.zeros(n_groups + 1, np.int64)
    for i in range(keys.shape[0]):
        starts[keys[i] + 1] += 1
    for g in range(n_groups):
        starts[g + 1] += starts[g]
    fill = starts[:-1].copy()
    grouped = np.empty(keys.shape[0], np.int64)
    for i in range(keys.shape[0]):
        g = keys[i]
        grouped[fill[g]] = rows[i]
        fill[g] += 1
    return grouped, starts


@njit(cache=True, nogil=True)
def gather_fixed(buf, offsets, size):
    out = np.empty((offsets.shape[0], size), np.uint8)
    for i in range(offsets.shape[0]):
        o = offsets[i]
        for j in range(size):
            out[i, j] = buf[o + j]
    return out


@njit(cache=True, nogil=True)
def insert_rows(base, at, extra):
    """``np.insert(base, at, extra, axis=0)`` for rows of bytes and ``at`` ascending: row ``j``
    of ``extra`` goes before row ``at[j]`` of ``base`` (after it all when ``at[j]`` is its
    length). Why: numpy inserts by fancy indexing, row by row of a few bytes — ~4 ms a pool of
    a fleet's commit where the other samples of a block's pools join its series."""
    n, m, w = base.shape[0], extra.shape[0], base.shape[1]
    out = np.empty((n + m, w), np.uint8)
    flat, src_b, src_e = out.reshape(-1), base.reshape(-1), extra.reshape(-1)
    done = 0  # rows of base copied
    row = 0  # rows of out written
    for j in range(m):  # base's rows up to the insert point as one run, then the inserted row
        stop = min(at[j], n)
        if stop > done:
            flat[row * w:(row + stop - done) * w] = src_b[done * w:stop * w]
            row += stop - done
            done = stop
        flat[row * w:(row + 1) * w] = src_e[j * w:(j + 1) * w]
        row += 1
    flat[row * w:] = src_b[done * w:]
    return out


@njit(cache=True, nogil=True)
def gather_frames(buf, first, stride, k, size):
    """Row ``c * k + f``: the ``size`` bytes at ``first[c] + f * stride`` — each column of a
    block through ``k`` frames laid end to end, ``stride`` bytes apart (a recorder's frames).

    Copied as 32-bit words when every offset and size allows (a fleet's float32 payloads):
    about twice as fast as :func:`gather_fixed`'s bytes, with no offset per sample."""
    n = first.shape[0]
    out = np.empty((n * k, size), np.uint8)
    aligned = size % 4 == 0 and stride % 4 == 0 and buf.shape[0] % 4 == 0
    for c in range(n):
        aligned = aligned and first[c] % 4 == 0
    if aligned:
        words = buf.view(np.uint32)
        flat = out.reshape(-1).view(np.uint32)
        w, sw = size // 4, stride // 4
        for c in range(n):
            base = first[c] // 4
            for f in range(k):
                src = base + f * sw
                dst = (c * k + f) * w
                for j in range(w):
                    flat[dst + j] = words[src + j]
        return out
    for c in range(n):
        for f in range(k):
            src = first[c] + f * stride
            row = c * k + f
            for j in range(size):
                out[row, j] = buf[src + j]
    return out


@njit(cache=True, nogil=True)
def gather_ragged(buf, offsets, sizes):
    n = offsets.shape[0]
    starts = np.zeros(n + 1, np.int64)
    for i in range(n):
        starts[i + 1] = starts[i] + sizes[i]
    out = np.empty(starts[n], np.uint8)
    for i in range(n):
        o = offsets[i]
        s = starts[i]
        for j in range(sizes[i]):
            out[s + j] = buf[o + j]
    return out, starts


# ============================================================================================
# Bulk samples of every series (:meth:`pvdkit.recording.Recording.preload` on an ``.ovd``)
# ============================================================================================


@njit(cache=True, nogil=True)
def gather_all(buf, attr_rows, attr_series, n_series, kind, offset, depth, data_size, frame):
    """The samples of every series at once, grouped by series (stream order within a series).

    Reads the stream in row order (sequential) and writes each sample to its series' region,
    instead of one random-access gather per series. Returns ``frames`` (int32), ``ops`` (the
    command code of each sample), ``flat`` payload bytes, ``sample_start`` (byte start of each
    sample in ``flat``), ``row_starts`` / ``byte_starts`` (series s is rows
    ``row_starts[s]:row_starts[s+1]`` and bytes ``byte_starts[s]:byte_starts[s+1]``) and the
    smallest / largest payload size of each series.
    """
    n = attr_rows.shape[0]
    row_starts = np.zeros(n_series + 1, np.int64)
    byte_starts = np.zeros(n_series + 1, np.int64)
    smin = np.full(n_series, np.iinfo(np.int64).max, np.int64)
    smax = np.zeros(n_series, np.int64)
    for i in range(n):
        s = attr_series[i]
        nb = np.int64(data_size[attr_rows[i]])
        row_starts[s + 1] += 1
        byte_starts[s + 1] += nb
        smin[s] = min(smin[s], nb)
        smax[s] = max(smax[s], nb)
    for s in range(n_series):
        row_starts[s + 1] += row_starts[s]
        byte_starts[s + 1] += byte_starts[s]
    rfill = row_starts[:-1].copy()
    bfill = byte_starts[:-1].copy()
    frames = np.empty(n, np.int32)
    ops = np.empty(n, np.uint8)
    sample_start = np.empty(n, np.int64)
    flat = np.empty(byte_starts[n_series], np.uint8)
    for i in range(n):
        r = attr_rows[i]
        s = attr_series[i]
        d = rfill[s]
        rfill[s] = d + 1
        frames[d] = frame[r]
        ops[d] = kind[r]
        q = bfill[s]
        sample_start[d] = q
        nb = np.int64(data_size[r])
        src = np.int64(offset[r]) + ATTR_FIXED_BYTES + 4 * np.int64(depth[r])
        for j in range(nb):
            flat[q + j] = buf[src + j]
        bfill[s] = q + nb
    return frames, ops, flat, sample_start, row_starts, byte_starts, smin, smax


# ============================================================================================
# Samples of one series in a growing index (:mod:`pvdkit.index.growing`)
# ============================================================================================


@njit(cache=True, nogil=True)
def chain_rows(prev, last, n):
    """The ``n`` sample rows of a series whose rows are linked backwards (``prev[r]`` is the
    series' sample before row ``r``), ending at row ``last``: in stream order."""
    out = np.empty(n, np.int64)
    r = last
    for i in range(n - 1, -1, -1):
        out[i] = r
        r = prev[r]
    return out
