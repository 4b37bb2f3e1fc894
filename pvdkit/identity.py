"""Stable object identities across recordings: class, name and position in the object graph.

Why not handles: OmniPVD object handles are pointers (PhysX) or counters, and they change
between two runs of the same simulation. What stays is *what* an object is (class and name)
and *where* it hangs in the graph the recording itself describes through object-handle
attributes: ``Vehicle#0/wheelAttachmentSet[2]/tireForce`` is the TireForce of the third
wheel attachment of the first vehicle, whatever its handle.

The graph: an edge goes from object P to object C when an OBJECT_HANDLE attribute of P refers
to C — a plain attribute (label ``attr``; when the reference changes over time, later targets
are ``attr~1``, ``attr~2`` … in order of first appearance; arrays of handles ``attr.k``) or a
unique list (label ``attr[i]``, ``i`` = order of first insertion). Handles are resolved to the
object lifetime alive at the frame of the command (handles are reused after destruction).

The identity of an object is ``(class, name, parent identity, edge, ordinal)``: parents are
found by a breadth-first walk from the *roots* (objects nothing refers to) in order of
creation, so an object reachable several ways takes its shortest path (ties: the earlier root,
then attribute name, then list position). Objects only reachable through cycles become roots
in creation order. ``ordinal`` counts objects with the same class, name, parent and edge in
that walk order (creation order for roots) — the last resort that tells apart, say, four roots
all named ``Vehicle``.

The graph is read by :func:`handle_references`, the one reader of object-handle references:
:mod:`pvdkit.names` finds vehicles and wheels in the same graph through it. It reads only the
object-handle series (:meth:`~pvdkit.recording.Recording.sample_blocks_of`), so naming one
object of an unread ``.h5`` fleet does not read the file's every sample.
"""

from __future__ import annotations

import weakref
from collections import deque
from dataclasses import dataclass

import numpy as np

from pvdkit.index.tables import FAMILY_LIST, FAMILY_SET
from pvdkit.recording import ListSeries, Recording, Series
from pvdkit.types import Command, DataType

__all__ = ["NULL", "UNRESOLVED", "HandleReferences", "HandleResolver", "Matching", "ObjectIdentity",
           "handle_references", "match_objects", "object_identities", "reference_series", "sorted_unique"]

#: Object index / code of a null handle (0).
NULL = -1
#: Object index / code of a non-zero handle that names no object of the recording.
UNRESOLVED = -2

_GROUP_SHIFT = np.int64(1 << 33)


def _runs(sorted_values: np.ndarray) -> np.ndarray:
    """Start positions of the runs of equal values of a sorted array."""
    if not len(sorted_values):
        return np.zeros(0, np.int64)
    return np.flatnonzero(np.concatenate([[True], sorted_values[1:] != sorted_values[:-1]]))


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """The distinct values of a 1-D integer array, sorted (``np.unique(values)``).

    Why not ``np.unique``: NumPy 2 imports ``numpy.ma`` at the first plain call (a check for
    masked arrays), about 5 ms of every ``pvdkit diff`` process, for arrays that never are.
    """
    s = np.sort(values)
    return s[_runs(s)]


class HandleResolver:
    """Vectorised handle → object lifetime lookup (the lifetime created at or before the frame,
    else the first one; as :meth:`Recording.resolve`, without a Python call per value)."""

    def __init__(self, rec: Recording) -> None:
        ot = rec.data.objects
        handles = ot.handle.astype(np.uint64)
        created = ot.created.astype(np.int64)
        order = np.lexsort((np.arange(len(handles)), created, handles))
        self._h = handles[order]
        self._index = order.astype(np.int64)
        group = np.zeros(len(order), np.int64)
        if len(order):
            group[1:] = np.cumsum(self._h[1:] != self._h[:-1])
        self._group = group
        # (group, created) as one sortable int64 key: frames are int32 ≥ -1.
        self._key = group * _GROUP_SHIFT + (created[order] + 1)
        self._created = created
        self._ranges: dict[int, tuple[int, int]] | None = None
        self._sorted_created: list[int] = []
        self._sorted_index: list[int] = []

    def _resolve_one(self, h: int, f: int) -> int:
        """The scalar path (few values per call): the lifetimes of ``h`` are a run of the sorted
        handles, found in a dictionary built on first use."""
        if h == 0:
            return NULL
        if self._ranges is None:
            starts = _runs(self._h)
            ends = np.append(starts[1:], len(self._h)).tolist()
            self._ranges = dict(zip(self._h[starts].tolist(), zip(starts.tolist(), ends, strict=True),
                                    strict=True))
            self._sorted_created = self._created[self._index].tolist()
            self._sorted_index = self._index.tolist()
        run = self._ranges.get(h)
        if run is None:
            return UNRESOLVED
        lo, hi = run
        created, index = self._sorted_created, self._sorted_index
        best = index[lo]  # lifetimes in order of creation: the last one created at or before f
        for k in range(lo + 1, hi):
            if created[k] <= f:
                best = index[k]
        return best

    def resolve(self, handles: np.ndarray, frames: np.ndarray | int) -> np.ndarray:
        """Object indices of ``handles`` (any shape) at ``frames`` (broadcast); :data:`NULL`
        for 0, :data:`UNRESOLVED` for handles that no object of the recording has."""
        h = np.asarray(handles, np.uint64)
        f = np.broadcast_to(np.asarray(frames, np.int64), h.shape)
        flat_h, flat_f = h.reshape(-1), f.reshape(-1)
        if len(flat_h) <= 32:  # small series: a dict lookup beats a dozen numpy calls
            return np.array([self._resolve_one(x, y) for x, y in zip(flat_h.tolist(), flat_f.tolist(),
                                                                     strict=True)],
                            np.int64).reshape(h.shape)
        out = np.full(flat_h.shape, UNRESOLVED, np.int64)
        if len(self._h) and len(flat_h):
            lo = np.searchsorted(self._h, flat_h, side="left")
            lo_c = np.minimum(lo, len(self._h) - 1)
            found = self._h[lo_c] == flat_h
            q = self._group[lo_c] * _GROUP_SHIFT + np.clip(flat_f + 1, 0, None)
            pos = np.searchsorted(self._key, q, side="right") - 1
            pos = np.maximum(pos, lo_c)
            out[found] = self._index[pos[found]]
        out[flat_h == 0] = NULL
        return out.reshape(h.shape)


@dataclass(frozen=True)
class ObjectIdentity:
    """Who an object is, independent of its handle.

    ``key`` is compared across recordings; ``label`` is for people
    (``Vehicle#0/wheelAttachmentSet[2]/tireForce``);
    ``classes`` is the class then its bases (for tolerance rules).
    """

    key: tuple
    label: str
    cls: str
    name: str
    classes: tuple[str, ...]
    depth: int


@dataclass(frozen=True, eq=False)
class HandleReferences:
    """Every object-handle reference a recording holds, read at once (:func:`handle_references`):
    the graph ``pvdkit diff``'s identities (:func:`object_identities`) and :mod:`pvdkit.names`'
    vehicle walk (:func:`pvdkit.names.handle_refs`) follow. Read-only numpy columns.

    An *entry* is one reference column of one series: a unique list of handles (the items it
    added), a single handle, or element ``k`` of an array of handles. Per entry, in series then
    element order: ``series`` (row of :meth:`~pvdkit.recording.Recording.series_table`),
    ``object`` (its object index), ``path`` (path id), ``column`` (``k``; -1 for a single handle
    or a list), ``is_list``.

    A *reference*: each object an entry pointed at, once, in order of first reference; per
    reference ``entry``, ``target`` (object index), ``rank`` (0, 1 … within its entry) and
    ``sample`` (the sample of the series that first pointed at it). Sorted by entry, then rank.
    Handles are resolved to the lifetime alive at each sample's frame (:class:`HandleResolver`);
    null handles and handles of no recorded object are no references; an object referring to
    itself is one.
    """

    series: np.ndarray
    object: np.ndarray
    path: np.ndarray
    column: np.ndarray
    is_list: np.ndarray
    entry: np.ndarray
    target: np.ndarray
    rank: np.ndarray
    sample: np.ndarray


_REFERENCES: weakref.WeakKeyDictionary[Recording, tuple[tuple[int, ...], HandleReferences]] = \
    weakref.WeakKeyDictionary()


def reference_series(rec: Recording) -> np.ndarray:
    """Ids of the series that hold object-handle references, in series order: per object and
    OBJECT_HANDLE attribute path (a value or a unique list), the series
    :meth:`~pvdkit.recording.Recording.series` reads — the list family for a unique list, else
    the set family (for a path through unregistered attributes, whichever exists)."""
    attrs = rec.attributes
    paths = rec.data.paths
    n_paths = max(len(paths), 1)
    is_ref = np.zeros(n_paths, bool)
    fam = np.full(n_paths, FAMILY_SET, np.int64)
    partial = np.zeros(n_paths, bool)
    for pid, p in enumerate(paths):
        last = attrs.get(p[-1])
        if (last is not None and last.data_type == DataType.OBJECT_HANDLE
                and last.kind in ("value", "unique_list")):
            is_ref[pid] = True
            if not all(h in attrs for h in p):
                partial[pid] = True
            elif last.kind == "unique_list":
                fam[pid] = FAMILY_LIST
    st = rec.series_table()
    if not is_ref.any() or not len(st):
        return np.zeros(0, np.int64)
    c_path = st.path.astype(np.int64)
    cand = np.flatnonzero(is_ref[c_path])
    c_obj, c_path = st.object[cand].astype(np.int64), c_path[cand]
    target = rec.series_ids(c_obj, c_path, fam[c_path])
    retry = partial[c_path] & (target < 0)
    if retry.any():
        target[retry] = rec.series_ids(c_obj[retry], c_path[retry], np.full(int(retry.sum()), FAMILY_LIST))
    target = target[target >= 0]
    _, first = np.unique(target, return_index=True)
    return target[np.sort(first)]


def handle_references(rec: Recording, resolver: HandleResolver | None = None, *,
                      series: np.ndarray | None = None) -> HandleReferences:
    """The object-handle references of ``rec`` (:class:`HandleReferences`): of every series of
    :func:`reference_series` (kept per recording until it gains objects, series, samples or
    registrations), or of the series ids ``series`` only.

    Why one reader: only the object-handle series are read, in one
    :meth:`~pvdkit.recording.Recording.sample_blocks_of` (an HDF5 fleet of 28,000 objects
    reads ~30,000 short series, not its 130,000), and every handle is resolved in one
    vectorised call; series stored otherwise are read through the query model."""
    if series is not None:
        sids = np.asarray(series, np.int64).reshape(-1)
        return _read_references(rec, sids, resolver or HandleResolver(rec))
    st = rec.series_table()
    size = (len(rec.objects), len(st), int(st.count.sum()), len(rec.data.registrations))
    got = _REFERENCES.get(rec)
    if got is None or got[0] != size:
        got = _REFERENCES[rec] = (size, _read_references(rec, reference_series(rec),
                                                         resolver or HandleResolver(rec)))
    return got[1]


def _read_references(rec: Recording, sids: np.ndarray, resolver: HandleResolver) -> HandleReferences:
    st = rec.series_table()
    blocks = rec.sample_blocks_of(sids)
    # Entries as (k, column, is list), k = position in sids; values as (k, column, sample,
    # handle, frame): whole blocks of 8-byte handles at once, other series one by one.
    e_k, e_col, e_list = [], [], []
    v_k, v_col, v_smp, v_h, v_f = [], [], [], [], []
    slow = [np.flatnonzero(blocks.block < 0)]
    for b in range(len(blocks.raw)):
        ks = np.flatnonzero(blocks.block == b)
        if not len(ks):
            continue
        raw, ops = blocks.raw[b], blocks.ops[b]
        width = raw.shape[1]
        if width % 8 or (ops is not None and width != 8):
            slow.append(ks)
            continue
        rows = blocks.rows(ks)
        cnt = blocks.count[ks]
        owner = np.repeat(ks, cnt)
        smp = np.arange(len(rows), dtype=np.int64) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        vals = raw[rows].view("<u8")
        fr = blocks.frames[b][rows]
        if ops is not None:
            added = ops[rows] == Command.ADD_TO_UNIQUE_LIST_ATTRIBUTE
            e_k.append(ks)
            e_col.append(np.full(len(ks), -1, np.int64))
            e_list.append(np.ones(len(ks), bool))
            v_k.append(owner[added])
            v_col.append(np.full(int(added.sum()), -1, np.int64))
            v_smp.append(smp[added])
            v_h.append(vals[added, 0])
            v_f.append(fr[added])
            continue
        w = width // 8
        e_k.append(np.repeat(ks, w))
        e_col.append(np.tile(np.arange(w, dtype=np.int64), len(ks)) if w > 1 else np.full(len(ks) * w, -1))
        e_list.append(np.zeros(len(ks) * w, bool))
        for j in range(w):
            v_k.append(owner)
            v_col.append(np.full(len(rows), j if w > 1 else -1, np.int64))
            v_smp.append(smp)
            v_h.append(vals[:, j])
            v_f.append(fr)
    for k in np.concatenate(slow).tolist():
        for col, is_list, vals, fr, smp in _series_columns(rec.series_by_id(int(sids[k]))):
            e_k.append(np.array([k], np.int64))
            e_col.append(np.array([col], np.int64))
            e_list.append(np.array([is_list]))
            v_k.append(np.full(len(vals), k, np.int64))
            v_col.append(np.full(len(vals), col, np.int64))
            v_smp.append(np.asarray(smp, np.int64))
            v_h.append(np.asarray(vals, np.uint64))
            v_f.append(np.asarray(fr))

    def cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
        return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)

    ek, ecol, elist = cat(e_k, np.int64), cat(e_col, np.int64), cat(e_list, bool)
    # Entries in series order, then element order.
    eorder = np.lexsort((ecol, ek))
    ek, ecol, elist = ek[eorder], ecol[eorder], elist[eorder]
    ekey = ek * (int(ecol.max(initial=-1)) + 2) + ecol + 1
    vk, vcol, vsmp = cat(v_k, np.int64), cat(v_col, np.int64), cat(v_smp, np.int64)
    vh, vf = cat(v_h, np.uint64), cat(v_f, np.int64)
    entry = np.searchsorted(ekey, vk * (int(ecol.max(initial=-1)) + 2) + vcol + 1)
    # Resolve every handle at its frame, then keep each entry's distinct targets in order of
    # first appearance.
    targets = resolver.resolve(vh, vf) if len(vh) else np.zeros(0, np.int64)
    ok = targets >= 0
    entry, tgt, smp = entry[ok], targets[ok], vsmp[ok]
    by = np.lexsort((smp, tgt, entry))
    first = np.ones(len(by), bool)
    first[1:] = (entry[by][1:] != entry[by][:-1]) | (tgt[by][1:] != tgt[by][:-1])
    keep = by[first]
    keep = keep[np.lexsort((smp[keep], entry[keep]))]
    e_of = entry[keep]
    rank = np.arange(len(keep)) - np.searchsorted(e_of, e_of)
    sid = sids[ek]
    out = HandleReferences(sid, st.object[sid].astype(np.int64), st.path[sid].astype(np.int64), ecol, elist,
                           e_of.astype(np.int64), tgt[keep].astype(np.int64), rank.astype(np.int64),
                           smp[keep].astype(np.int64))
    for a in vars(out).values():
        a.setflags(write=False)
    return out


def _edges(rec: Recording, resolver: HandleResolver) -> list[list[tuple[str, int, str, int, bool]]]:
    """Per object: ``(attribute, rank, label, child, primary)`` for every reference it holds
    (:func:`handle_references`); ``primary`` = a unique-list member or the first target of a
    reference attribute."""
    refs = handle_references(rec, resolver)
    out: list[list[tuple[str, int, str, int, bool]]] = [[] for _ in rec.objects]
    names = {pid: rec.path_name(pid) for pid in sorted_unique(refs.path).tolist()}
    e = refs.entry
    for o, pid, col, is_list, child, m in zip(refs.object[e].tolist(), refs.path[e].tolist(),
                                              refs.column[e].tolist(), refs.is_list[e].tolist(),
                                              refs.target.tolist(), refs.rank.tolist(), strict=True):
        name = names[pid]
        if is_list:
            out[o].append((name, m, f"{name}[{m}]", child, True))
            continue
        base = name if col < 0 else f"{name}.{col}"
        out[o].append((name, max(col, 0) * (1 << 20) + m, base if m == 0 else f"{base}~{m}", child, m == 0))
    return out


def _series_columns(s: Series | ListSeries) -> list[tuple[int, bool, np.ndarray, np.ndarray, np.ndarray]]:
    """The reference columns of one series read through the query model (any storage):
    ``(column, is list, handles, frames, sample indices)`` each."""
    if len(s) == 0:
        return []
    if isinstance(s, ListSeries):
        items = s.items
        if isinstance(items, np.ndarray) and items.dtype == np.uint64 and items.ndim == 1:
            return [(-1, True, items[s.added], s.frames[s.added], np.flatnonzero(s.added))]
        return []
    raw = s.raw
    if isinstance(raw, list):
        width = max((len(r) for r in raw), default=0)
        cols = [np.array([i for i, r in enumerate(raw) if len(r) > j], np.int64) for j in range(width)]
        columns = [(np.array([raw[i][j] for i in c.tolist()]), s.frames[c], c) for j, c in enumerate(cols)]
    elif raw.ndim == 1:
        columns = [(raw, s.frames, np.arange(len(raw)))]
    else:
        columns = [(raw[:, j], s.frames, np.arange(len(raw))) for j in range(raw.shape[1])]
    out = []
    for j, (vals, fr, smp) in enumerate(columns):
        if vals.dtype != np.uint64:
            break
        out.append((j if len(columns) > 1 else -1, False, vals, fr, smp))
    return out


def object_identities(rec: Recording, resolver: HandleResolver | None = None) -> list[ObjectIdentity]:
    """The identity of every object (lifetime) of ``rec``, indexed like ``rec.objects``."""
    resolver = resolver or HandleResolver(rec)
    n = len(rec.objects)
    edges = _edges(rec, resolver)
    # Plain lists, not numpy arrays: this walk touches one element at a time.
    referenced = [False] * n
    for o, es in enumerate(edges):
        if es:
            es.sort(key=lambda e: (e[0], e[1]))
            for _, _, _, child, _ in es:
                if child != o:
                    referenced[child] = True
    parent = [-1] * n
    edge_label: list[str | None] = [None] * n
    depth = [0] * n
    visited = [False] * n
    order: list[int] = []

    def walk(seeds: list[int], secondary: bool) -> None:
        """Breadth-first from ``seeds`` (already visited); ``secondary`` also follows later
        targets of changing references (``attr~k``)."""
        queue = deque(seeds)
        while queue:
            p = queue.popleft()
            for _, _, label, child, primary in edges[p]:
                if not visited[child] and (primary or secondary):
                    visited[child] = True
                    parent[child] = p
                    edge_label[child] = label
                    depth[child] = depth[p] + 1
                    order.append(child)
                    queue.append(child)

    def add_roots(roots: list[int]) -> list[int]:
        for r in roots:
            visited[r] = True
            order.append(r)
        return roots

    # Ownership first: roots and the first target of every reference; later targets of changing
    # references only for what that leaves unreached; then objects reachable only through cycles.
    walk(add_roots([i for i in range(n) if not referenced[i]]), secondary=False)
    walk(list(order), secondary=True)
    for i in range(n):
        if not visited[i]:
            walk(add_roots([i]), secondary=True)

    objects = rec.objects
    bases: list[tuple] = [()] * n
    keys: list[tuple] = [()] * n
    counters: dict[tuple, int] = {}
    for i in order:
        o = objects[i]
        cls = o.cls.name if o.cls is not None else "<implicit>"
        p = parent[i]
        base = (cls, o.name, keys[p] if p >= 0 else None, edge_label[i])
        k = counters.get(base, 0)
        counters[base] = k + 1
        bases[i] = base
        keys[i] = (*base, k)

    labels: list[str] = [""] * n
    chains: dict[int, tuple[str, ...]] = {}
    out: dict[int, ObjectIdentity] = {}
    for i in order:
        o = objects[i]
        base, k = bases[i], keys[i][-1]
        cls = base[0]
        p = parent[i]
        if p < 0:
            text = o.name if o.name else f"<{cls}>"
        else:
            text = f"{labels[p]}/{edge_label[i]}"
        if counters[base] > 1:
            text += f"#{k}"
        labels[i] = text
        if o.cls is not None:
            classes = chains.get(id(o.cls))
            if classes is None:
                classes = chains[id(o.cls)] = tuple(c.name for c in o.cls.mro)
        else:
            classes = (cls,)
        out[i] = ObjectIdentity(keys[i], text, cls, o.name, classes, depth[i])
    return [out[i] for i in range(n)]


@dataclass
class Matching:
    """Objects of recordings A and B paired by identity.

    ``pairs`` lists ``(index in A, index in B)`` in A's object order; ``only_a`` / ``only_b``
    the unmatched objects. ``code_a`` / ``code_b`` give, per object index, the pair number
    (≥ 0) or a negative code unique to that unmatched object, so references can be compared
    as integers: equal codes ⇔ the same identity.
    """

    ids_a: list[ObjectIdentity]
    ids_b: list[ObjectIdentity]
    pairs: list[tuple[int, int]]
    only_a: list[int]
    only_b: list[int]
    code_a: np.ndarray
    code_b: np.ndarray

    def reference_codes(self, side: str, objects: np.ndarray) -> np.ndarray:
        """Codes of resolved object indices (``NULL``/``UNRESOLVED`` kept) of side ``"a"``/``"b"``."""
        code = self.code_a if side == "a" else self.code_b
        idx = np.asarray(objects, np.int64)
        out = idx.copy()
        ok = idx >= 0
        out[ok] = code[idx[ok]]
        return out

    def label_of_code(self, code: int) -> str:
        """Readable form of a reference code (for reports)."""
        if code == NULL:
            return "null"
        if code == UNRESOLVED:
            return "<handle of no recorded object>"
        if code >= 0:
            return self.ids_a[self.pairs[code][0]].label
        c = -code - 3
        ids = self.ids_a if c % 2 == 0 else self.ids_b
        return ids[c // 2].label


def match_objects(ids_a: list[ObjectIdentity], ids_b: list[ObjectIdentity]) -> Matching:
    """Pair objects of A and B with equal identity keys."""
    by_key_b = {idt.key: j for j, idt in enumerate(ids_b)}
    pairs: list[tuple[int, int]] = []
    only_a: list[int] = []
    used_b = np.zeros(len(ids_b), bool)
    for i, idt in enumerate(ids_a):
        j = by_key_b.get(idt.key)
        if j is None:
            only_a.append(i)
        else:
            pairs.append((i, j))
            used_b[j] = True
    only_b = [int(j) for j in np.flatnonzero(~used_b)]
    code_a = -(3 + 2 * np.arange(len(ids_a), dtype=np.int64))
    code_b = -(4 + 2 * np.arange(len(ids_b), dtype=np.int64))
    for p, (i, j) in enumerate(pairs):
        code_a[i] = p
        code_b[j] = p
    return Matching(ids_a, ids_b, pairs, only_a, only_b, code_a, code_b)
