"""Every attribute series of every matched object pair compared at once (``pvdkit diff`` on
recordings of many objects).

Why: comparing series one by one costs a few hundred microseconds of Python per series (read
it, prepare it, align it), so a 256-vehicle recording (~150,000 series per side) took 20 s.
Here the series of all matched pairs are paired with numpy (by object pair and attribute
name), their samples read from the recordings' :class:`~pvdkit.index.tables.SampleBlocks`
and compared by *group* — series of one kind, element type and width — with the same
arithmetic as :meth:`Comparison._compare_prepared <pvdkit.diff.engine.Comparison>` applied
to all of them in one pass: zero-order hold, union grid, tolerance test, max errors.
Python work per series is left to building its :class:`SeriesDiff` (and the value text of a
differing one).

Unique lists of object handles that made the same changes on both sides (frame, add or
remove, member's identity) are equal without replaying them (:func:`_equal_lists`; a fleet has
one per vehicle and wheel list). What is not handled here goes through the per-series path
unchanged (the two give the same results, which ``tests/pvdkit/test_diff_bulk.py`` checks):
series on one side only, empty or variable-size series, retyped attributes, strings, bytes,
other unique lists and lists that differ, and every series of an object with two attribute
paths of the same name.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from pvdkit.diff.distance import distances
from pvdkit.diff.result import DIFFERENT, EQUAL, SeriesDiff
from pvdkit.identity import sorted_unique
from pvdkit.index.tables import FAMILY_LIST, FAMILY_SET, SampleBlocks, _ranges
from pvdkit.recording import Recording, Samples, _decode_kind, _typed

if TYPE_CHECKING:
    from pvdkit.diff.engine import Comparison
    from pvdkit.diff.tolerance import Tolerance

__all__ = ["compare_pairs"]


@dataclass
class _Tolerances:
    """Each entry's tolerance, as columns (:class:`~pvdkit.diff.tolerance.Tolerance` fields)."""

    atol: np.ndarray
    rtol: np.ndarray
    nan_eq: np.ndarray
    period: np.ndarray
    quaternion: np.ndarray

    @classmethod
    def of(cls, distinct: list[Tolerance], which: np.ndarray) -> _Tolerances:
        """The columns of ``distinct[which[e]]`` for each entry ``e``."""
        def column(field: str, dtype: type) -> np.ndarray:
            return np.array([getattr(t, field) for t in distinct], dtype).reshape(-1)[which]
        return cls(column("atol", np.float64), column("rtol", np.float64), column("nan_equal", bool),
                   column("period", np.float64), column("quaternion", bool))

    def __getitem__(self, idx: np.ndarray) -> _Tolerances:
        return _Tolerances(self.atol[idx], self.rtol[idx], self.nan_eq[idx], self.period[idx],
                           self.quaternion[idx])

    @property
    def plain(self) -> np.ndarray:
        """Entries compared as plain numbers (no period, no quaternion)."""
        return (self.period == 0) & ~self.quaternion


#: Kinds compared here (numbers, enum/flags words, object references).
_BULK_KINDS = ("float", "int", "enum", "flags", "reference")
_NUMERIC = ("float", "int")
#: Frames shifted into a non-negative 32-bit field of a (series, frame) sort key.
_FRAME_BIAS = np.int64(1 << 31)
_SERIES_SHIFT = np.int64(1 << 32)


@dataclass
class _Side:
    """One recording's series of the matched pairs, in that recording's ``all_series`` order."""

    rec: Recording
    blocks: SampleBlocks
    sid: np.ndarray  # series ids
    pair: np.ndarray  # live pair index of each
    key: np.ndarray  # name id * 2 + family
    names: list[str]  # path id -> name


def _side(rec: Recording, pair_of: np.ndarray, name_ids: dict[str, int]) -> tuple[_Side, np.ndarray]:
    """The series of objects in live pairs; also the path id → name id table."""
    st = rec.series_table()
    names = [rec.path_name(p) for p in range(len(rec.data.paths))]
    path_name = np.array([name_ids.setdefault(n, len(name_ids)) for n in names], np.int64)
    order = np.lexsort((np.arange(len(st)), st.family, st.path, st.object))
    obj = st.object[order].astype(np.int64)
    keep = pair_of[obj] >= 0
    sid = order[keep]
    key = path_name[st.path[sid]] * 2 + st.family[sid] if len(path_name) else np.zeros(0, np.int64)
    return _Side(rec, rec.sample_blocks(), sid, pair_of[obj[keep]], key.astype(np.int64), names), path_name


def _duplicated_pairs(pair: np.ndarray, key: np.ndarray, stride: int) -> np.ndarray:
    """Pairs in which one object has two series of the same (name, family)."""
    ck = np.sort(pair * stride + key)
    dup = ck[1:][ck[1:] == ck[:-1]]
    return sorted_unique(dup // stride)


def _runs(seg: np.ndarray) -> np.ndarray:
    """Start positions of the runs of equal values of a sorted array (O(n), no sort)."""
    if not len(seg):
        return np.zeros(0, np.int64)
    return np.concatenate([[0], np.flatnonzero(seg[1:] != seg[:-1]) + 1])


def _reduce(ufunc: np.ufunc, values: np.ndarray, seg: np.ndarray, n: int, empty: float) -> np.ndarray:
    """``ufunc`` over each segment of ``values`` (``seg`` sorted), ``empty`` for segments without rows."""
    dtype = np.int8 if values.dtype == bool else values.dtype
    out = np.full(n, empty, dtype)
    if len(values):
        starts = _runs(seg)
        out[seg[starts]] = ufunc.reduceat(values.astype(dtype, copy=False), starts)
    return out


def _first_per_segment(seg: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """Per segment, the first of ``rows`` (sorted positions, ``seg`` sorted) in it; -1 if none."""
    out = np.full(n, -1, np.int64)
    if len(rows):
        sr = seg[rows]
        starts = _runs(sr)
        out[sr[starts]] = rows[starts]
    return out


def _zoh(frames: np.ndarray, seg: np.ndarray, lo: int | None, hi: int | None
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per series (``seg``), as :func:`pvdkit.diff.engine._zoh`: (frames, series, row) of the
    value in force at the end of each frame with samples."""
    f = frames if lo is None else np.maximum(frames, lo)
    n = len(f)
    last = np.ones(n, bool)
    if n:
        last[:-1] = (f[1:] != f[:-1]) | (seg[1:] != seg[:-1])
    idx = np.flatnonzero(last)
    fr, sg = f[idx], seg[idx]
    if hi is not None:
        keep = fr < hi
        idx, fr, sg = idx[keep], fr[keep], sg[keep]
    return fr, sg, idx


def _rows_equal(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per row, whether two typed matrices of one dtype hold the same bytes."""
    row = a.shape[1] * a.dtype.itemsize
    a = np.ascontiguousarray(a).view(np.uint8).reshape(len(a), row)
    b = np.ascontiguousarray(b).view(np.uint8).reshape(len(b), row)
    return ~_row_bytes_differ(a, b)


def _cols(ufunc: np.ufunc, m: np.ndarray) -> np.ndarray:
    """``ufunc.reduce(m, axis=1)`` column by column: numpy's row-wise reduction of a narrow
    matrix (3 or 4 elements, the usual vectors) runs an inner loop per row, several times
    slower. Not for NaN-holding floats (``np.maximum`` and ``max`` agree only without)."""
    if m.shape[1] == 0:  # samples of no element (a variable-length attribute set to b""): the identity
        return np.full(len(m), 0 if ufunc.identity is None else ufunc.identity, m.dtype)
    if m.shape[1] > 16:
        return ufunc.reduce(m, axis=1)
    out = m[:, 0].copy()
    for k in range(1, m.shape[1]):
        ufunc(out, m[:, k], out=out)
    return out


@dataclass
class _Group:
    """Series pairs of one kind, element type, width and blocks: compared together."""

    kind: str
    dtype: np.dtype
    width: int
    block_a: int
    block_b: int
    entries: np.ndarray  # entry indices


@dataclass
class _Found:
    """Per-entry results of the bulk comparison (arrays over every entry)."""

    done: np.ndarray  # bool: decided here
    compared: np.ndarray
    differing: np.ndarray
    first_frame: np.ndarray
    max_abs: np.ndarray  # NaN = None
    max_rel: np.ndarray
    component: np.ndarray


def compare_pairs(cmp: Comparison, pairs: list[tuple[int, int]]) -> tuple[list[list[SeriesDiff]], int]:
    """The :class:`SeriesDiff` of every attribute of each object pair ``(i, j)`` (in the order
    :meth:`Comparison._object_series` gives them) and the number of series ignored."""
    a, b = cmp.a, cmp.b
    n_pairs = len(pairs)
    out: list[list[SeriesDiff]] = [[] for _ in range(n_pairs)]
    if not n_pairs:
        return out, 0
    pi = np.array([p[0] for p in pairs], np.int64)
    pj = np.array([p[1] for p in pairs], np.int64)
    pair_of_a = np.full(len(a.objects), -1, np.int64)
    pair_of_b = np.full(len(b.objects), -1, np.int64)
    pair_of_a[pi] = np.arange(n_pairs)
    pair_of_b[pj] = np.arange(n_pairs)
    name_ids: dict[str, int] = {}
    sa, _ = _side(a, pair_of_a, name_ids)
    sb, _ = _side(b, pair_of_b, name_ids)
    stride = 2 * max(len(name_ids), 1)
    names = [""] * len(name_ids)
    for n, k in name_ids.items():
        names[k] = n

    # Pairs with duplicate names go the per-object way, whole.
    slow = sorted_unique(np.concatenate((_duplicated_pairs(sa.pair, sa.key, stride),
                                         _duplicated_pairs(sb.pair, sb.key, stride))))
    ignored = 0
    for k in slow.tolist():
        ignored += cmp._object_series(out[k], int(pi[k]), int(pj[k]))
    if len(slow):
        ka, kb = ~np.isin(sa.pair, slow), ~np.isin(sb.pair, slow)
        sa.sid, sa.pair, sa.key = sa.sid[ka], sa.pair[ka], sa.key[ka]
        sb.sid, sb.pair, sb.key = sb.sid[kb], sb.pair[kb], sb.key[kb]

    # Pair series by (object pair, name, family): A's in A's order, then B's missing in A.
    ck_a, ck_b = sa.pair * stride + sa.key, sb.pair * stride + sb.key
    order_b = np.argsort(ck_b, kind="stable")
    sorted_b = ck_b[order_b]
    pos = np.minimum(np.searchsorted(sorted_b, ck_a), max(len(sorted_b) - 1, 0))
    hit = sorted_b[pos] == ck_a if len(sorted_b) else np.zeros(len(ck_a), bool)
    y_of_a = np.full(len(ck_a), -1, np.int64)
    y_of_a[hit] = sb.sid[order_b[pos[hit]]]
    matched_b = np.zeros(len(ck_b), bool)
    matched_b[order_b[pos[hit]]] = True
    only_b = np.flatnonzero(~matched_b)
    # Entries: (pair, section, rank) → A series x (or -1), B series y (or -1), name key.
    e_pair = np.concatenate([sa.pair, sb.pair[only_b]])
    e_sec = np.concatenate([np.zeros(len(sa.sid), np.int8), np.ones(len(only_b), np.int8)])
    e_rank = np.concatenate([np.arange(len(sa.sid)), only_b])
    e_x = np.concatenate([sa.sid, np.full(len(only_b), -1, np.int64)])
    e_y = np.concatenate([y_of_a, sb.sid[only_b]])
    e_key = np.concatenate([sa.key, sb.key[only_b]])
    order = np.lexsort((e_rank, e_sec, e_pair))
    e_pair, e_x, e_y, e_key = e_pair[order], e_x[order], e_y[order], e_key[order]

    # Tolerances: one look-up per (class chain, name).
    ids_a = cmp.matching.ids_a
    chain_ids: dict[tuple[str, ...], int] = {}
    pair_chain = np.array([chain_ids.setdefault(ids_a[i].classes, len(chain_ids)) for i in pi.tolist()],
                          np.int64)
    chains = list(chain_ids)
    combo = pair_chain[e_pair] * stride + e_key
    uniq, inv = np.unique(combo, return_inverse=True)
    tol_of = [cmp.tolerance_of(chains[int(c) // stride], names[int(c) % stride // 2]) for c in uniq.tolist()]
    ign = np.array([t.ignore for t in tol_of], bool)[inv] if len(uniq) else np.zeros(0, bool)
    ignored += int(np.count_nonzero(ign))
    keep = ~ign
    e_pair, e_x, e_y, e_key, inv = e_pair[keep], e_x[keep], e_y[keep], e_key[keep], inv[keep]
    n_e = len(e_pair)
    tols = _Tolerances.of(tol_of, inv)

    found = _Found(np.zeros(n_e, bool), np.zeros(n_e, np.int64), np.zeros(n_e, np.int64),
                   np.zeros(n_e, np.int64), np.full(n_e, np.nan), np.full(n_e, np.nan),
                   np.zeros(n_e, np.int64))
    texts: dict[int, tuple[str, str]] = {}
    kinds: dict[int, str] = {}
    shared = _SharedLayout.of(sa.blocks, sb.blocks) if cmp.fmap_b is None else None
    for g in _groups(cmp, sa, sb, e_x, e_y, e_key):
        _compare_group(cmp, g, sa, sb, e_x, e_y, tols, found, texts, shared)
        for e in g.entries.tolist():
            kinds[e] = g.kind
    for e in _equal_lists(cmp, sa, sb, e_x, e_y, e_key, found).tolist():
        kinds[e] = "list"

    # Build the results in order (the per-series path for what the groups did not decide).
    # The decided entries, most of a fleet's 100,000s, are built column-wise: every column a
    # list first (a numpy scalar per read costs more than the object built).
    labels = [(ids_a[i].label, ids_a[i].cls) for i in pi.tolist()]
    kind_of = [""] * n_e
    for e, kd in kinds.items():
        kind_of[e] = kd
    pi_l, pj_l = pi.tolist(), pj.tolist()
    names_of = [names[k // 2] for k in e_key.tolist()]
    pair_l, tol_l = e_pair.tolist(), inv.tolist()
    made: list[SeriesDiff | None] = [None] * n_e
    decided = found.done & (found.compared > 0)
    for status in (EQUAL, DIFFERENT):
        idx = np.flatnonzero(decided & ((found.differing > 0) == (status == DIFFERENT)))
        # No finite difference seen: max_abs is NaN, shown as None with component 0.
        unseen = np.isnan(found.max_abs[idx])
        columns = (idx.tolist(), found.compared[idx].tolist(), found.differing[idx].tolist(),
                   found.first_frame[idx].tolist(), _none_where(found.max_abs[idx], unseen),
                   _none_where(found.max_rel[idx], unseen),
                   np.where(unseen, 0, found.component[idx]).tolist())
        times: dict[int, int | None] = {}  # first frame → its time (most series share a few)
        for e, n, d, ff, ma, mr, comp in zip(*columns, strict=True):
            k = pair_l[e]
            label, cls = labels[k]
            if status == EQUAL:
                sd = SeriesDiff(label, cls, names_of[e], kind_of[e], EQUAL, tol_of[tol_l[e]], n, 0, None,
                                None, None, None, ma, mr, comp, pi_l[k], pj_l[k])
            else:
                if ff not in times:
                    times[ff] = cmp.frame_time(ff)
                ta, tb = texts[e]
                sd = SeriesDiff(label, cls, names_of[e], kind_of[e], DIFFERENT, tol_of[tol_l[e]], n, d, ff,
                                times[ff], ta, tb, ma, mr, comp, pi_l[k], pj_l[k])
            made[e] = sd
    x_l, y_l = e_x.tolist(), e_y.tolist()
    for e in np.flatnonzero(~found.done).tolist():
        k = pair_l[e]
        label, cls = labels[k]
        x, y = x_l[e], y_l[e]
        sx = a.series_by_id(x) if x >= 0 else None
        sy = b.series_by_id(y) if y >= 0 else None
        sd = cmp._series_pair(sx, sy, label, cls, names_of[e], tol_of[tol_l[e]])
        if sd is not None:
            sd.index_a, sd.index_b = pi_l[k], pj_l[k]
            made[e] = sd
    for k, sd in zip(pair_l, made, strict=True):
        if sd is not None:
            out[k].append(sd)
    return out, ignored


def _none_where(values: np.ndarray, none: np.ndarray) -> list[float | None]:
    """``values`` as Python floats, None where ``none``."""
    out = values.astype(object)
    out[none] = None
    return out.tolist()


def _groups(cmp: Comparison, sa: _Side, sb: _Side, e_x: np.ndarray, e_y: np.ndarray,
            e_key: np.ndarray) -> list[_Group]:
    """Entries that the bulk path compares, grouped; the rest stay for the per-series path."""
    both = (e_x >= 0) & (e_y >= 0) & (e_key % 2 == FAMILY_SET)
    ba, bb = sa.blocks, sb.blocks
    cand = np.flatnonzero(both)
    if not len(cand):
        return []
    blk_a, blk_b = ba.block[e_x[cand]], bb.block[e_y[cand]]
    held = (blk_a >= 0) & (blk_b >= 0)
    cand, blk_a, blk_b = cand[held], blk_a[held], blk_b[held]
    size_a = np.array([r.shape[1] for r in ba.raw], np.int64)[blk_a] if len(ba.raw) else blk_a
    size_b = np.array([r.shape[1] for r in bb.raw], np.int64)[blk_b] if len(bb.raw) else blk_b
    same = size_a == size_b
    cand, blk_a, blk_b, size = cand[same], blk_a[same], blk_b[same], size_a[same]
    if not len(cand):
        return []
    path_a, path_b = sa.rec.series_table().path, sb.rec.series_table().path
    # Attribute → how its samples type (same signature on both sides required).
    key = np.stack([path_a[e_x[cand]].astype(np.int64), path_b[e_y[cand]].astype(np.int64), blk_a, blk_b,
                    size])
    # Distinct keys in sorted order, each with its entries in entry order (a lexsort: np.unique
    # over columns sorts a structured view, several times slower).
    by_key = np.lexsort(key[::-1])
    ks = key[:, by_key]
    head = np.ones(len(by_key), bool)
    head[1:] = (ks[:, 1:] != ks[:, :-1]).any(axis=0)
    bounds = np.append(np.flatnonzero(head), len(by_key))
    groups: dict[tuple, list[np.ndarray]] = {}
    for u in range(len(bounds) - 1):
        pa, pb, xa, xb, sz = (int(v) for v in ks[:, bounds[u]])
        kind = _bulk_kind(cmp, sa.rec, pa, sb.rec, pb, sz)
        if kind is None:
            continue
        members = cand[by_key[bounds[u]:bounds[u + 1]]]
        groups.setdefault((kind[0], kind[1], kind[2], xa, xb), []).append(members)
    return [_Group(kd, dt, w, xa, xb, np.sort(np.concatenate(parts)))
            for (kd, dt, w, xa, xb), parts in groups.items()]


def _equal_lists(cmp: Comparison, sa: _Side, sb: _Side, e_x: np.ndarray, e_y: np.ndarray, e_key: np.ndarray,
                 found: _Found) -> np.ndarray:
    """Unique lists of object handles that are the same on both sides: the same changes (frame,
    add or remove, member's identity) in the same order give the same members after every
    change, so the per-series path would find them equal. Recorded into ``found``; returns
    their entries. Only without a frame window or map (the grid is then each list's frames);
    any other list, and one that differs in any change, is left to the per-series path."""
    if cmp.fmap_b is not None or cmp.window.start is not None or cmp.window.stop is not None:
        return np.zeros(0, np.int64)
    ba, bb = sa.blocks, sb.blocks
    cand = np.flatnonzero((e_x >= 0) & (e_y >= 0) & (e_key % 2 == FAMILY_LIST) & ~found.done)
    cand = cand[(ba.block[e_x[cand]] >= 0) & (bb.block[e_y[cand]] >= 0)]
    cand = cand[ba.count[e_x[cand]] == bb.count[e_y[cand]]]
    if not len(cand):
        return np.zeros(0, np.int64)
    path_a, path_b = sa.rec.series_table().path, sb.rec.series_table().path
    pa, pb = path_a[e_x[cand]].astype(np.int64), path_b[e_y[cand]].astype(np.int64)
    ok_path: dict[tuple[int, int], bool] = {}
    for x, y in set(zip(pa.tolist(), pb.tolist(), strict=True)):
        sig = _handle_list(sa.rec, x)
        ok_path[(x, y)] = sig is not None and sig == _handle_list(sb.rec, y)
    cand = cand[np.array([ok_path[k] for k in zip(pa.tolist(), pb.tolist(), strict=True)], bool)]
    end = min(cmp.end_a, cmp.end_b)
    done = []
    blk_a, blk_b = ba.block[e_x[cand]], bb.block[e_y[cand]]
    for xa, xb in sorted(set(zip(blk_a.tolist(), blk_b.tolist(), strict=True))):
        raw_a, raw_b, ops_a, ops_b = ba.raw[xa], bb.raw[xb], ba.ops[xa], bb.ops[xb]
        if raw_a.shape[1] != 8 or raw_b.shape[1] != 8 or ops_a is None or ops_b is None:
            continue
        ent = cand[(blk_a == xa) & (blk_b == xb)]
        xs, ys = e_x[ent], e_y[ent]
        rows_a, rows_b = ba.rows(xs), bb.rows(ys)
        fa, fb = ba.frames[xa].take(rows_a).astype(np.int64), bb.frames[xb].take(rows_b).astype(np.int64)
        items_a = raw_a.view("<u8").reshape(-1).take(rows_a)
        items_b = raw_b.view("<u8").reshape(-1).take(rows_b)
        code_a = cmp.matching.reference_codes("a", cmp.resolver_a.resolve(items_a, fa))
        code_b = cmp.matching.reference_codes("b", cmp.resolver_b.resolve(items_b, fb))
        seg = np.repeat(np.arange(len(ent)), ba.count[xs])
        bad = (fa != fb) | (ops_a.take(rows_a) != ops_b.take(rows_b)) | (code_a != code_b) | (fa >= end)
        same = np.ones(len(ent), bool)
        same[seg[bad]] = False
        last = _last_in_frame(fa, seg)
        cnt = np.bincount(seg[last], minlength=len(ent))
        _record_same(found, ent[same], cnt[same], False)
        done.append(ent[same])
    return np.concatenate(done) if done else np.zeros(0, np.int64)


def _handle_list(rec: Recording, path: int) -> str | None:
    """The type signature of a unique list of 8-byte items that the per-series path compares as
    object handles (whose ``items`` are uint64), else None."""
    from pvdkit.diff.engine import _kind_of

    chain, _ = rec._path_name(path)
    attr = chain[-1] if chain else None
    if attr is None or attr.kind != "unique_list" or _decode_kind(attr)[1] != np.uint64:
        return None
    kind, sig = _kind_of(attr, FAMILY_LIST)
    return sig if kind == "list" else None


def _bulk_kind(cmp: Comparison, ra: Recording, pa: int, rb: Recording, pb: int,
               size: int) -> tuple[str, np.dtype, int] | None:
    """(kind, element dtype, width) of a series pair of paths ``pa``/``pb`` with ``size``-byte
    samples, when the bulk path compares it as the per-series path would; else None."""
    from pvdkit.diff.engine import _kind_of

    chain_a, _ = ra._path_name(pa)
    chain_b, _ = rb._path_name(pb)
    attr_a = chain_a[-1] if chain_a else None
    attr_b = chain_b[-1] if chain_b else None
    kind = _kind_of(attr_a, FAMILY_SET)
    if kind != _kind_of(attr_b, FAMILY_SET) or kind[0] not in _BULK_KINDS:
        return None
    typed = []
    for attr in (attr_a, attr_b):
        dk, dt = _decode_kind(attr)
        empty = Samples(np.zeros(0, np.int32), fixed=np.zeros((0, size), np.uint8))
        raw = _typed(empty, dt, uint_by_size=dk in ("enum", "flags", "word"))
        raw = raw[:, None] if raw.ndim == 1 else raw
        if raw.dtype == np.uint8 and (dt is None or dt.itemsize != 1) and size != 1:
            return None  # not a whole number of elements: compared as bytes
        typed.append(raw)
    if typed[0].dtype != typed[1].dtype or typed[0].shape[1] != typed[1].shape[1]:
        return None
    dtype, width = typed[0].dtype, typed[0].shape[1]
    if kind[0] == "float" and dtype.kind != "f":
        return None
    if kind[0] == "reference" and dtype != np.uint64:
        return None
    return kind[0], dtype, width


def _row_bytes_differ(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per row of two ``(n, size)`` uint8 matrices, whether their bytes differ (compared as
    whole words where the size allows)."""
    n, size = a.shape
    if size == 0:  # empty samples hold the same (no) bytes
        return np.zeros(n, bool)
    for word in (8, 4, 2):
        if size % word == 0:
            dt = np.dtype(f"<u{word}")
            wa, wb = a.view(dt), b.view(dt)
            out = wa[:, 0] != wb[:, 0]
            for k in range(1, size // word):
                out |= wa[:, k] != wb[:, k]
            return out
    return (a != b).any(axis=1)


class _Counter:
    """How many of a row flag array's set flags lie in row ranges. Few set flags (the usual
    case: a few differing rows) are counted by binary search over the set rows; many (every
    dynamic value of a fleet differs when a param is varied) by a running sum, whose look-ups
    are two gathers where the binary search over millions of rows costs 0.3 s per fleet diff."""

    #: Above this fraction of set flags, the running sum is used.
    DENSE = 1 / 64

    def __init__(self, flags: np.ndarray) -> None:
        self.rows: np.ndarray | None = None
        self.running: np.ndarray | None = None
        if np.count_nonzero(flags) > self.DENSE * len(flags):
            # Summed as bytes into int32 (pools hold under 2**31 rows): numpy's bool → int64
            # running sum casts element by element, 8× slower.
            self.running = np.zeros(len(flags) + 1, np.int32)
            np.cumsum(flags.view(np.uint8), dtype=np.int32, out=self.running[1:])
        else:
            self.rows = np.flatnonzero(flags)

    def count(self, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        """Set flags in rows ``start[k] : end[k]`` (0 where ``end <= start``)."""
        if self.running is not None:
            n = self.running[end] - self.running[np.minimum(start, end)]
        elif not len(self.rows):
            return np.zeros(len(start), np.int64)
        else:
            n = np.searchsorted(self.rows, end) - np.searchsorted(self.rows, start)
        return np.maximum(n, 0)


class _SharedLayout:
    """Both recordings store every series in the same segments of the same pools (two runs of
    one program, written the same way): series ``x`` of A and of B are then the same rows of
    their pools, so whether a series is byte-identical — and how many frames it holds — is
    found over whole pools in place, without gathering any series (the gather and the
    per-series zero-order hold of the general path cost seconds on 18 M samples)."""

    def __init__(self, ba: SampleBlocks, bb: SampleBlocks) -> None:
        self.ba, self.bb = ba, bb
        self._bad: dict[int, _Counter | None] = {}
        self._moved: dict[int, _Counter | None] = {}
        self._chg: dict[int, _Counter] = {}
        self._nan: dict[tuple[int, str], _Counter | None] = {}

    @staticmethod
    def of(ba: SampleBlocks, bb: SampleBlocks) -> _SharedLayout | None:
        """The shared layout of two recordings' blocks, None when they are stored differently."""
        if (len(ba.raw) != len(bb.raw) or any(x.shape != y.shape for x, y in zip(ba.raw, bb.raw, strict=True))
                or any(len(x) != len(y) for x, y in zip(ba.frames, bb.frames, strict=True))):
            return None
        for k in ("block", "count", "first", "seg_start", "seg_count"):
            if not np.array_equal(getattr(ba, k), getattr(bb, k)):
                return None
        return _SharedLayout(ba, bb)

    def _bad_rows(self, b: int) -> _Counter | None:
        """Cumulative count of rows of block ``b`` whose frame or bytes differ (None: none do)."""
        if b not in self._bad:
            fa, fb = self.ba.frames[b], self.bb.frames[b]
            ra, rb = self.ba.raw[b], self.bb.raw[b]
            cum = moved = None
            if not (fa is fb and ra is rb):
                bad = _row_bytes_differ(ra, rb)
                if fa is not fb:
                    other = fa != fb
                    if other.any():
                        moved = _Counter(other)
                        bad |= other
                cum = _Counter(bad) if bad.any() else None
            self._bad[b] = cum
            self._moved[b] = moved
        return self._bad[b]

    def frames_moved(self, b: int, sids: np.ndarray) -> np.ndarray:
        """Per series of ``sids`` (held in block ``b``), whether some sample has another frame in B."""
        self._bad_rows(b)
        moved = self._moved[b]
        out = np.zeros(len(sids), bool)
        if moved is not None:
            bl = self.ba
            nseg = bl.first[sids + 1] - bl.first[sids]
            segs = _ranges(bl.first[sids], nseg)
            owner = np.repeat(np.arange(len(sids)), nseg)
            start = bl.seg_start[segs]
            out[owner[moved.count(start, start + bl.seg_count[segs]) > 0]] = True
        return out

    def _repeats(self, b: int) -> _Counter:
        """Rows of block ``b`` at the same frame as the row before (rare: one sample per frame)."""
        if b not in self._chg:
            f = self.ba.frames[b]
            rep = np.zeros(len(f), bool)
            rep[1:] = f[1:] == f[:-1]
            self._chg[b] = _Counter(rep)
        return self._chg[b]

    def _nan_rows(self, g: _Group) -> _Counter | None:
        """Cumulative count of A's rows of block ``g.block_a`` holding a NaN (None: none do)."""
        key = (g.block_a, g.dtype.str)
        if key not in self._nan:
            raw = self.ba.raw[g.block_a]
            flat = raw.reshape(-1).view(g.dtype)
            cum = None
            if np.isnan(flat).any():
                cum = _Counter(_cols(np.logical_or, np.isnan(flat.reshape(len(raw), -1))))
            self._nan[key] = cum
        return self._nan[key]

    def same_series(self, g: _Group, sids: np.ndarray, nan_eq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per series of ``sids`` (of group ``g``, the same ids on both sides): whether both
        sides hold the same bytes at the same frames (and no NaN unless ``nan_eq``), as
        ``_compare_group``'s check; and the number of distinct frames it holds (no window)."""
        bl = self.ba
        n = len(sids)
        nseg = bl.first[sids + 1] - bl.first[sids]
        segs = _ranges(bl.first[sids], nseg)
        owner = np.repeat(np.arange(n), nseg)
        cnt_s = bl.seg_count[segs]
        full = cnt_s > 0
        segs, owner, cnt_s = segs[full], owner[full], cnt_s[full]
        start = bl.seg_start[segs]
        end = start + cnt_s
        same = np.ones(n, bool)
        bad = self._bad_rows(g.block_a)
        if bad is not None:
            same[owner[bad.count(start, end) > 0]] = False
        if g.kind == "float" and not nan_eq.all():
            nan = self._nan_rows(g)
            if nan is not None:
                has = np.zeros(n, bool)
                has[owner[nan.count(start, end) > 0]] = True
                same &= ~has | nan_eq
        # Distinct frames: runs inside each segment, less joins of a series' consecutive
        # segments that continue the same frame.
        runs = cnt_s - self._repeats(g.block_a).count(start + 1, end)
        f = bl.frames[g.block_a]
        join = np.zeros(len(segs), bool)
        if len(segs) > 1:
            join[1:] = (owner[1:] == owner[:-1]) & (f[start[1:]] == f[end[:-1] - 1])
        cnt = np.bincount(owner, weights=runs - join, minlength=n).astype(np.int64)
        return same, cnt


def _gather(blocks: SampleBlocks, b: int, sids: np.ndarray, dtype: np.dtype, width: int
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(frames int64, typed values (n, width), series position) of series ``sids`` of block ``b``."""
    frames, raw = blocks.frames[b], blocks.raw[b]
    seg = np.repeat(np.arange(len(sids)), blocks.count[sids])
    rows = blocks.rows(sids)
    if len(rows) == len(raw) and (not len(rows) or (rows[0] == 0 and bool((np.diff(rows) == 1).all()))):
        return frames.astype(np.int64), raw.view(dtype).reshape(len(raw), width), seg
    return frames.take(rows).astype(np.int64), _take_rows(raw, rows, dtype, width), seg


def _take_rows(raw: np.ndarray, rows: np.ndarray, dtype: np.dtype, width: int) -> np.ndarray:
    """Rows ``rows`` of a block's ``(n, size)`` bytes as ``(len(rows), width)`` of ``dtype``:
    each row taken as one element (a void of ``size`` bytes), half the time of indexing the
    typed ``(n, width)`` matrix (numpy copies its rows element by element)."""
    size = raw.shape[1]
    if not size or not raw.flags.c_contiguous:
        return raw.view(dtype).reshape(len(raw), width)[rows]
    return raw.view(f"V{size}").reshape(-1).take(rows).view(dtype).reshape(len(rows), width)


def _compare_group(cmp: Comparison, g: _Group, sa: _Side, sb: _Side, e_x: np.ndarray, e_y: np.ndarray,
                   tols: _Tolerances, found: _Found, texts: dict[int, tuple[str, str]],
                   shared: _SharedLayout | None = None) -> None:
    """Compare the series pairs of one group; results into ``found`` and ``texts``."""
    ent = g.entries
    if len(ent) > 1:
        rows = np.cumsum(np.maximum(sa.blocks.count[e_x[ent]], sb.blocks.count[e_y[ent]]))
        if int(rows[-1]) > 2 * _BATCH_ROWS:
            cuts = np.searchsorted(rows, np.arange(_BATCH_ROWS, int(rows[-1]), _BATCH_ROWS), side="right")
            for part in np.split(ent, sorted_unique(cuts[(cuts > 0) & (cuts < len(ent))])):
                _compare_group(cmp, replace(g, entries=part), sa, sb, e_x, e_y, tols, found, texts,
                               shared)
            return
    xs, ys = e_x[ent], e_y[ent]
    n = len(ent)
    w = cmp.window
    lo, hi = w.start, w.stop
    numeric = g.kind in _NUMERIC
    # Same frames on both sides and no window: a series' grid is its own zero-order hold.
    plain = cmp.fmap_b is None and g.kind != "reference" and lo is None and hi is None
    if plain and shared is not None and g.block_a == g.block_b and np.array_equal(xs, ys):
        # Stored at the same rows: byte-identical series are found in place, without a gather.
        same, cnt = shared.same_series(g, xs, tols.nan_eq[ent])
        _record_same(found, ent[same], cnt[same], numeric)
        rest = np.flatnonzero(~same)
        if not len(rest):
            return
        moved = shared.frames_moved(g.block_a, xs[rest])
        lined = rest[~moved]
        if len(lined):
            rows = sa.blocks.rows(xs[lined])
            va, vb = _typed_rows(sa.blocks, g, rows), _typed_rows(sb.blocks, g, rows)
            f = sa.blocks.frames[g.block_a][rows]
            seg = np.repeat(np.arange(len(lined)), sa.blocks.count[xs[lined]])
            if _compare_lined_up(cmp, g, ent[lined], xs[lined], ys[lined], f, seg, va, vb, tols, found,
                                 texts, sa, sb):
                rest = rest[moved]
                if not len(rest):
                    return
        ent, xs, ys, n = ent[rest], xs[rest], ys[rest], len(rest)
    fa, va, seg_a = _gather(sa.blocks, g.block_a, xs, g.dtype, g.width)
    fb_raw, vb, seg_b = _gather(sb.blocks, g.block_b, ys, g.dtype, g.width)
    fb = cmp._map_b(fb_raw) if cmp.fmap_b is not None else fb_raw
    if g.kind == "reference":
        va = cmp.matching.reference_codes("a", cmp.resolver_a.resolve(va, fa[:, None]))
        vb = cmp.matching.reference_codes("b", cmp.resolver_b.resolve(vb, fb_raw[:, None]))

    # Byte-identical series at the same frames are equal without aligning (as _identical).
    same = np.zeros(n, bool)
    lined_up = False  # every series holds as many samples on both sides: rows line up
    if cmp.fmap_b is None and g.kind != "reference":
        same = sa.blocks.count[xs] == sb.blocks.count[ys]
        if same.all():  # rows of series of equal length line up one to one
            lined_up = True
            ra = rb = slice(None)
            seg_r = seg_a
        else:
            ra, rb = same[seg_a], same[seg_b]
            seg_r = seg_a[ra]
        frame_same = fa[ra] == fb[rb]
        row_same = frame_same & _rows_equal(va[ra], vb[rb])
        same[seg_r[~row_same]] = False
        if g.kind == "float":
            nan_rows = np.flatnonzero(_cols(np.logical_or, np.isnan(va)))
            has_nan = np.zeros(n, bool)
            has_nan[seg_a[nan_rows]] = True
            same &= ~has_nan | tols.nan_eq[ent]
    last = None  # rows holding the value at the end of their frame (plain case)
    if same.any():
        if plain:
            last = _last_in_frame(fa, seg_a)
            cnt = np.bincount(seg_a[last], minlength=n)
        else:
            fr, sg, _ = _zoh(fa, seg_a, lo, hi)
            cnt = np.bincount(sg, minlength=n)
        _record_same(found, ent[same], cnt[same], numeric)
    rest = np.flatnonzero(~same)
    if not len(rest):
        return
    if plain and lined_up:
        # Series at the same frames on both sides: compared row by row, nothing to align.
        moved = np.zeros(n, bool)
        moved[seg_a[~frame_same]] = True
        lined = rest[~moved[rest]]
        if len(lined):
            if len(lined) == n:
                keep, seg_l = slice(None), seg_a
            else:
                keep, seg_l = _rows_of(seg_a, lined, n)
            if _compare_lined_up(cmp, g, ent[lined], xs[lined], ys[lined], fa[keep], seg_l, va[keep],
                                 vb[keep], tols, found, texts, sa, sb,
                                 last[keep] if last is not None else None):
                rest = rest[moved[rest]]
                if not len(rest):
                    return
    if len(rest) < n:  # keep the rows of the other series only
        ka, seg_a = _rows_of(seg_a, rest, n)
        kb, seg_b = _rows_of(seg_b, rest, n)
        row_a, row_b = np.flatnonzero(ka), np.flatnonzero(kb)
        fa, fb = fa[ka], fb[kb]
    else:
        row_a, row_b = np.arange(len(fa)), np.arange(len(fb))
    m = len(rest)
    ent_r = ent[rest]
    _compare_aligned(cmp, g, ent_r, fa, seg_a, row_a, va, fb, seg_b, row_b, vb, m, lo, hi,
                     tols[ent_r], found, texts, xs[rest], ys[rest], sa, sb)


def _last_in_frame(f: np.ndarray, seg: np.ndarray) -> np.ndarray:
    """Rows (of series ``seg``, frames ``f``) that are their series' last in their frame."""
    last = np.ones(len(f), bool)
    if len(f):
        last[:-1] = (f[1:] != f[:-1]) | (seg[1:] != seg[:-1])
    return last


def _record_same(found: _Found, idx: np.ndarray, cnt: np.ndarray, numeric: bool) -> None:
    """Entries ``idx`` are equal series of ``cnt`` compared frames."""
    found.done[idx] = True
    found.compared[idx] = cnt
    if numeric:
        zero = idx[cnt > 0]
        found.max_abs[zero] = 0.0
        found.max_rel[zero] = 0.0


def _rows_of(seg: np.ndarray, which: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Mask of the rows of series ``which`` (positions among ``n``) and their series renumbered
    ``0..len(which)-1``."""
    remap = np.full(n, -1, np.int64)
    remap[which] = np.arange(len(which))
    r = remap[seg]
    keep = r >= 0
    return keep, r[keep]


def _typed_rows(blocks: SampleBlocks, g: _Group, rows: np.ndarray) -> np.ndarray:
    """Rows ``rows`` of block ``g.block_a`` as ``(n, g.width)`` of ``g.dtype``."""
    return _take_rows(blocks.raw[g.block_a], rows, g.dtype, g.width)


def _compare_lined_up(cmp: Comparison, g: _Group, ent: np.ndarray, xs: np.ndarray, ys: np.ndarray,
                      f: np.ndarray, seg: np.ndarray, va: np.ndarray, vb: np.ndarray, tols: _Tolerances,
                      found: _Found, texts: dict[int, tuple[str, str]],
                      sa: _Side, sb: _Side, last: np.ndarray | None = None) -> bool:
    """Compare series pairs whose samples sit at the same frames on both sides (rows ``va[r]``
    and ``vb[r]`` of series ``seg[r]`` at frame ``f[r]``; no window, no frame map): the union
    grid is each series' own zero-order hold, the same rows on both sides, so nothing is
    aligned. False (nothing done) when a frame lies past the end of either recording."""
    m = len(ent)
    if len(f) and int(f.max()) >= min(cmp.end_a, cmp.end_b):
        return False
    if last is None:
        last = _last_in_frame(f, seg)
    if last.all():
        sel = np.arange(len(f))
        a, b, gseg, gframe = va, vb, seg, f
    else:
        sel = np.flatnonzero(last)
        a, b, gseg, gframe = va[sel], vb[sel], seg[sel], f[sel]
    found.done[ent] = True
    found.compared[ent] = np.bincount(gseg, minlength=m)
    if g.kind in _NUMERIC:
        row_ok = _numeric_stats(g, a, b, gseg, m, tols[ent], ent, found)
    else:
        row_ok = _cols(np.logical_and, a == b)
    bad = np.flatnonzero(~row_ok)
    differing = np.bincount(gseg[bad], minlength=m)
    found.differing[ent] = differing
    first = _first_per_segment(gseg, bad, m)
    ident = np.arange(len(f))
    for k in np.flatnonzero(differing).tolist():
        r = int(first[k])
        found.first_frame[ent[k]] = int(gframe[r])
        i = int(sel[r])
        texts[int(ent[k])] = (_value_text(cmp, g, "a", sa, int(xs[k]), va, i, ident, seg, k),
                              _value_text(cmp, g, "b", sb, int(ys[k]), vb, i, ident, seg, k))
    return True


def _compare_aligned(cmp: Comparison, g: _Group, ent: np.ndarray, fa: np.ndarray, seg_a: np.ndarray,
                     row_a: np.ndarray, va: np.ndarray, fb: np.ndarray, seg_b: np.ndarray, row_b: np.ndarray,
                     vb: np.ndarray, m: int, lo: int | None, hi: int | None, tols: _Tolerances,
                     found: _Found, texts: dict[int, tuple[str, str]],
                     xs: np.ndarray, ys: np.ndarray, sa: _Side, sb: _Side) -> None:
    """Align (as :func:`pvdkit.diff.engine._align`) and compare (as ``_compare_matrix``) ``m``
    series pairs; ``row_a``/``row_b`` map their sample rows to rows of ``va``/``vb``."""
    gfa, gsa, ia = _zoh(fa, seg_a, lo, hi)
    gfb, gsb, ib = _zoh(fb, seg_b, lo, hi)
    key_a = gsa * _SERIES_SHIFT + (gfa + _FRAME_BIAS)
    key_b = gsb * _SERIES_SHIFT + (gfb + _FRAME_BIAS)
    if np.array_equal(key_a, key_b):
        grid = key_a
        ja = jb = np.arange(len(grid))
    else:
        allk = np.sort(np.concatenate([key_a, key_b]), kind="stable")
        keep = np.ones(len(allk), bool)
        keep[1:] = allk[1:] != allk[:-1]
        grid = allk[keep]
        ja = np.searchsorted(key_a, grid, side="right") - 1
        jb = np.searchsorted(key_b, grid, side="right") - 1
    gseg = grid // _SERIES_SHIFT
    gframe = grid % _SERIES_SHIFT - _FRAME_BIAS

    def held(j: np.ndarray, gs: np.ndarray, idx: np.ndarray, rows: np.ndarray) -> np.ndarray:
        if not len(gs):
            return np.full(len(grid), -1, np.int64)
        jc = np.maximum(j, 0)
        ok = (j >= 0) & (gs[jc] == gseg)
        return np.where(ok, rows[idx[jc]], -1)

    xa, xb = held(ja, gsa, ia, row_a), held(jb, gsb, ib, row_b)
    xa[gframe >= cmp.end_a] = -1
    xb[gframe >= cmp.end_b] = -1
    compared = np.bincount(gseg, minlength=m)
    found.done[ent] = True
    found.compared[ent] = compared

    both = (xa >= 0) & (xb >= 0)
    sel = np.flatnonzero(both)
    row_ok = np.zeros(len(grid), bool)
    numeric = g.kind in _NUMERIC
    if len(sel):
        a, b = va[xa[sel]], vb[xb[sel]]
        sseg = gseg[sel]
        if not numeric:
            row_ok[sel] = (a == b).all(axis=1)
        else:
            row_ok[sel] = _numeric_stats(g, a, b, sseg, m, tols, ent, found)
    bad = np.flatnonzero(~row_ok)
    differing = np.bincount(gseg[bad], minlength=m)
    found.differing[ent] = differing
    first = _first_per_segment(gseg, bad, m)
    for s in np.flatnonzero(differing).tolist():
        r = int(first[s])
        f = int(gframe[r])
        found.first_frame[ent[s]] = f
        texts[int(ent[s])] = (
            "none (A ended)" if f >= cmp.end_a else _value_text(cmp, g, "a", sa, int(xs[s]), va, int(xa[r]),
                                                                 row_a, seg_a, s),
            "none (B ended)" if f >= cmp.end_b else _value_text(cmp, g, "b", sb, int(ys[s]), vb, int(xb[r]),
                                                                 row_b, seg_b, s),
        )


#: Sample rows of the series compared per pass of :func:`_compare_group`: a group of many
#: millions (every float of a fleet) is split into batches of series, so that its temporaries
#: (a few per row) are small enough for the allocator to reuse instead of mapping fresh pages
#: each time (page faults cost seconds of system time on 18 M samples). 2^18 rows: temporaries
#: of a few MB; a 256-car fleet pair compares in 0.85 s instead of 1.3 s with 2^20 (0.36 s of
#: it system time), and in the same time with 2^17.
_BATCH_ROWS = 1 << 18

#: Rows of numeric samples processed per pass of :func:`_numeric_stats`: its float64
#: temporaries stay small and are reused (fresh memory is costly to fault in).
_CHUNK_ROWS = 1 << 15


def _numeric_stats(g: _Group, a: np.ndarray, b: np.ndarray, sseg: np.ndarray, m: int, tols: _Tolerances,
                   ent: np.ndarray, found: _Found) -> np.ndarray:
    """Row verdicts of numeric rows ``a``/``b`` (series ``sseg``) and each series' max errors
    (into ``found``), as ``_compare_matrix`` computes them for one series."""
    n = len(a)
    row_ok = np.empty(n, bool)
    row_max = np.empty(n, np.float64)  # largest finite |a - b| of the row, -1 if none
    row_rel = np.empty(n, np.float64)  # largest |a - b| / |b| over finite, |b| > 0
    row_inf = np.empty(n, bool)  # a finite |a - b| > 0 where b == 0
    is_float = g.kind == "float"
    atol, rtol, nan_eq = tols.atol, tols.rtol, tols.nan_eq
    geometric = is_float and not tols.plain.all()
    uniform = is_float and len(atol) and (atol == atol[0]).all() and (rtol == rtol[0]).all() \
        and (nan_eq == nan_eq[0]).all()
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for lo in range(0, n, _CHUNK_ROWS):
            hi = min(lo + _CHUNK_ROWS, n)
            ca, cb = a[lo:hi], b[lo:hi]
            af, bf = ca.astype(np.float64), cb.astype(np.float64)
            if geometric:
                cs = sseg[lo:hi]
                d, bf = distances(af, bf, tols.period[cs], tols.quaternion[cs])
            else:
                d = np.abs(af - bf)
            absb = np.abs(bf)
            if not is_float:
                ok = ca == cb
            elif uniform and atol[0] == 0 and rtol[0] == 0 and not nan_eq[0] and not geometric:
                ok = af == bf  # d <= 0 adds nothing: d == 0 exactly when a == b (finite)
            else:
                cs = sseg[lo:hi]
                if uniform:
                    ok = (d <= atol[0] + rtol[0] * absb) | (af == bf)
                else:
                    ok = (d <= atol[cs][:, None] + rtol[cs][:, None] * absb) | (af == bf)
                ne = nan_eq[cs]
                if ne.any():
                    ok |= ne[:, None] & np.isnan(af) & np.isnan(bf)
            row_ok[lo:hi] = _cols(np.logical_and, ok)
            fin = np.isfinite(d)
            all_fin = bool(fin.all())
            dm = d if all_fin else np.where(fin, d, -1.0)
            row_max[lo:hi] = _cols(np.maximum, dm)
            nz = absb > 0
            if not all_fin:
                nz &= fin
            np.divide(d, absb, out=af, where=nz)
            af[~nz] = 0.0
            row_rel[lo:hi] = _cols(np.maximum, af)
            zero_div = (absb == 0) & (d > 0)
            if not all_fin:
                zero_div &= fin
            row_inf[lo:hi] = _cols(np.logical_or, zero_div)
    smax = _reduce(np.maximum, row_max, sseg, m, -np.inf)
    srel = _reduce(np.maximum, row_rel, sseg, m, 0.0)
    sinf = _reduce(np.maximum, row_inf, sseg, m, 0)
    has = smax >= 0  # some finite difference (row_max is -1 elsewhere)
    at_max = np.flatnonzero(row_max == smax[sseg])
    first = _first_per_segment(sseg, at_max, m)
    comp = np.zeros(m, np.int64)
    rows = first[has]
    if len(rows) and a.shape[1]:  # (samples of no element: component 0)
        ra, rb = a[rows].astype(np.float64), b[rows].astype(np.float64)
        if geometric:
            d, _ = distances(ra, rb, tols.period[sseg[rows]], tols.quaternion[sseg[rows]])
        else:
            with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: not finite, skipped below
                d = np.abs(ra - rb)
        comp[has] = np.where(np.isfinite(d), d, -1.0).argmax(axis=1)
    idx = ent[has]
    found.max_abs[idx] = smax[has]
    found.max_rel[idx] = np.where(sinf[has] > 0, np.inf, srel[has])
    found.component[idx] = comp[has]
    return row_ok


def _value_text(cmp: Comparison, g: _Group, side: str, s: _Side, sid: int, values: np.ndarray, i: int,
                rows: np.ndarray, seg: np.ndarray, k: int) -> str:
    """The report text of value row ``i`` of ``values`` (-1: unset), as ``Comparison._text``."""
    from pvdkit.diff.engine import _Prepared

    if i < 0:
        return "unset"
    if g.kind in _NUMERIC:  # as Comparison._text: numpy scalars print their shortest round-trip form
        vals = [str(v) for v in values[i]]
        return vals[0] if len(vals) == 1 else "[" + ", ".join(vals) + "]"
    if g.kind in ("enum", "flags"):
        series = s.rec.series_by_id(sid)
        first = int(rows[int(np.searchsorted(seg, k))])
        return cmp._text(_Prepared(g.kind, "", np.zeros(0, np.int64), values, None, series), i - first, side)
    return cmp._text(_Prepared(g.kind, "", np.zeros(0, np.int64), values, None, None), i, side)

