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
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from pvdkit.index.tables import FAMILY_LIST, FAMILY_SET
from pvdkit.recording import ListSeries, Recording, Series
from pvdkit.types import Command, DataType

__all__ = ["NULL", "UNRESOLVED", "HandleResolver", "Matching", "ObjectIdentity", "match_objects",
           "object_identities"]

#: Object index / code of a null handle (0).
NULL = -1
#: Object index / code of a non-zero handle that names no object of the recording.
UNRESOLVED = -2

_GROUP_SHIFT = np.int64(1 << 33)


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
        self._handles, self._created = handles, created
        self._lives_by_handle: dict[int, list[tuple[int, int]]] | None = None

    @property
    def _lives(self) -> dict[int, list[tuple[int, int]]]:
        """handle -> [(created, index), …] for the scalar path (few values per call); built on
        first use (a bulk diff never needs it)."""
        if self._lives_by_handle is None:
            lives_of: dict[int, list[tuple[int, int]]] = {}
            for h, c, i in zip(self._handles.tolist(), self._created.tolist(), range(len(self._handles)),
                               strict=True):
                lives_of.setdefault(h, []).append((c, i))
            for lives in lives_of.values():
                lives.sort()
            self._lives_by_handle = lives_of
        return self._lives_by_handle

    def _resolve_one(self, h: int, f: int) -> int:
        if h == 0:
            return NULL
        lives = self._lives.get(h)
        if lives is None:
            return UNRESOLVED
        best = lives[0][1]
        for c, i in lives:
            if c <= f:
                best = i
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


def _edges(rec: Recording, resolver: HandleResolver) -> list[list[tuple[str, int, str, int, bool]]]:
    """Per object: ``(attribute, rank, label, child, primary)`` for every reference it holds;
    ``primary`` = a unique-list member or the first target of a reference attribute."""
    attrs = rec.attributes
    paths = rec.data.paths
    ref_paths = {}
    for pid, p in enumerate(paths):
        last = attrs.get(p[-1])
        if (last is not None and last.data_type == DataType.OBJECT_HANDLE
                and last.kind in ("value", "unique_list")):
            ref_paths[pid] = p
    out: list[list[tuple[str, int, str, int, bool]]] = [[] for _ in rec.objects]
    if not ref_paths:
        return out
    st = rec.series_table()
    # First gather every reference column, then resolve all handles in one vectorised call.
    entries: list[tuple[int, str, int, bool]] = []  # object, attribute, column, is list
    values: list[np.ndarray] = []
    frames: list[np.ndarray] = []
    cand = np.flatnonzero(np.isin(st.path, np.fromiter(ref_paths, np.int64)))
    c_obj, c_path = st.object[cand].astype(np.int64), st.path[cand].astype(np.int64)
    # The series rec.series(object, path) reads: the list family for a unique-list attribute,
    # else the set family (or, for a path through unregistered attributes, whichever exists).
    is_list = {pid: all(h in attrs for h in p) and attrs[p[-1]].kind == "unique_list"
               for pid, p in ref_paths.items()}
    c_fam = np.array([FAMILY_LIST if is_list[p] else FAMILY_SET for p in c_path.tolist()], np.int64)
    target = rec.series_ids(c_obj, c_path, c_fam)
    partial_path = {pid: not all(h in attrs for h in p) for pid, p in ref_paths.items()}
    partial = np.array([partial_path[p] for p in c_path.tolist()], bool)
    retry = partial & (target < 0)
    if retry.any():
        target[retry] = rec.series_ids(c_obj[retry], c_path[retry], np.full(int(retry.sum()), FAMILY_LIST))
    held = _held_handles(rec, target)
    names = {pid: rec.path_name(pid) for pid in ref_paths}
    for o, pid, sid in zip(c_obj.tolist(), c_path.tolist(), target.tolist(), strict=True):
        if sid < 0:
            continue
        name = names[pid]
        got = held.get(sid)
        if got is not None:
            vals, fr, added = got
            if added is not None:
                entries.append((o, name, -1, True))
                values.append(vals[added, 0])
                frames.append(fr[added])
                continue
            w = vals.shape[1]
            for j in range(w):
                entries.append((o, name, j if w > 1 else -1, False))
                values.append(vals[:, j])
                frames.append(fr)
            continue
        _series_columns(rec.series_by_id(sid), o, entries, values, frames)
    if not entries:
        return out
    targets = resolver.resolve(np.concatenate(values), np.concatenate(frames).astype(np.int64))
    # Distinct targets of each entry in order of first appearance, all entries at once.
    lens = np.fromiter((len(v) for v in values), np.int64, len(values))
    entry = np.repeat(np.arange(len(entries)), lens)
    pos = np.arange(len(targets))
    ok = targets >= 0
    entry, tgt, pos = entry[ok], targets[ok], pos[ok]
    by = np.lexsort((pos, tgt, entry))
    first = np.ones(len(by), bool)
    first[1:] = (entry[by][1:] != entry[by][:-1]) | (tgt[by][1:] != tgt[by][:-1])
    keep = by[first]
    keep = keep[np.lexsort((pos[keep], entry[keep]))]
    e_of, child_of = entry[keep], tgt[keep]
    rank = np.arange(len(keep)) - np.searchsorted(e_of, e_of)  # m: order within its entry
    for e, child, m in zip(e_of.tolist(), child_of.tolist(), rank.tolist(), strict=True):
        o, name, col, is_list = entries[e]
        if is_list:
            out[o].append((name, m, f"{name}[{m}]", child, True))
            continue
        base = name if col < 0 else f"{name}.{col}"
        out[o].append((name, max(col, 0) * (1 << 20) + m, base if m == 0 else f"{base}~{m}", child, m == 0))
    return out


def _held_handles(rec: Recording, sids: np.ndarray
                  ) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
    """(handles ``(n, width)`` uint64, frames, added mask of a list or None) of the series
    ``sids`` held in the recording's sample blocks with whole 8-byte handles, read in one gather
    per block (the rest: :func:`_series_columns`)."""
    blocks = rec.sample_blocks()
    out: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray | None]] = {}
    sids = np.unique(sids[sids >= 0])
    blk = blocks.block[sids]
    for b in np.unique(blk[blk >= 0]).tolist():
        raw, ops = blocks.raw[b], blocks.ops[b]
        if raw.shape[1] % 8 or (ops is not None and raw.shape[1] != 8):
            continue
        these = sids[blk == b]
        rows = blocks.rows(these)
        vals = raw.view(np.uint64)[rows]
        fr = blocks.frames[b][rows]
        added = ops[rows] == Command.ADD_TO_UNIQUE_LIST_ATTRIBUTE if ops is not None else None
        ends = np.cumsum(blocks.count[these])
        for sid, e, n in zip(these.tolist(), ends.tolist(), blocks.count[these].tolist(), strict=True):
            out[sid] = (vals[e - n:e], fr[e - n:e], added[e - n:e] if added is not None else None)
    return out


def _series_columns(s: Series | ListSeries, o: int, entries: list[tuple[int, str, int, bool]],
                    values: list[np.ndarray], frames: list[np.ndarray]) -> None:
    """The reference columns of one series read through the query model (any storage)."""
    if len(s) == 0:
        return
    if isinstance(s, ListSeries):
        items = s.items
        if isinstance(items, np.ndarray) and items.dtype == np.uint64 and items.ndim == 1:
            entries.append((o, s.name, -1, True))
            values.append(items[s.added])
            frames.append(s.frames[s.added])
        return
    raw = s.raw
    if isinstance(raw, list):
        width = max((len(r) for r in raw), default=0)
        cols = [[i for i, r in enumerate(raw) if len(r) > j] for j in range(width)]
        columns = [(np.array([raw[i][j] for i in c]), s.frames[c]) for j, c in enumerate(cols)]
    elif raw.ndim == 1:
        columns = [(raw, s.frames)]
    else:
        columns = [(raw[:, j], s.frames) for j in range(raw.shape[1])]
    for j, (vals, fr) in enumerate(columns):
        if vals.dtype != np.uint64:
            break
        entries.append((o, s.name, j if len(columns) > 1 else -1, False))
        values.append(vals)
        frames.append(fr)


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
