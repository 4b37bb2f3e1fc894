"""Fuzz pvdkit's readers with mutated ``.ovd`` and ``.h5`` recordings.

Usage::

    python3 bench/fuzz_pvd.py --format ovd --cases 100000 --seed 1 --workers 1
    python3 bench/fuzz_pvd.py --format h5 --cases 10000 --seed 1 --workers 1

Why: a recording is input from anywhere (a crash dump, a bug report, a download), so reading
one must end in a result or one :class:`~pvdkit.types.PvdError` line — never another
exception, a hang or an allocation the file cannot justify. Each case mutates a seed recording,
then exercises it the way the tools do: ``Recording.open``, counts and classes (``pvdkit
info``), every series' values and a point query, ``state_at`` at a few frames, the bulk
``preload``, and for ``.ovd`` the lossless ``.h5`` round trip, for ``.h5`` the ``.ovd`` rebuild
(``pvdkit dump`` / ``convert``). Truncated ``.ovd`` cases also check the promise that a cut at
any offset yields exactly the complete prefix (and a warning when a command was cut).

Seeds: ``tests/data/vehicles_short.ovd`` (PhysX), :func:`pvdkit.synthetic.write_every_command`,
a small :func:`~pvdkit.synthetic.write_large_recording`, a hand-built stream of tricky schema
(class attributes through a cycle, enum/flags of every width, an unregistered enum class, base
class cycles, reused handles) and, for ``.h5``, the conversions of those.

``.ovd`` mutations: truncation, bit flips, inflated lengths / depths / counts / types, command
swaps, splices (of other commands and of generated ones), repeats, zero fill, handle
collisions, payload resizes, header edits. ``.h5`` mutations: byte damage of the file, and
structured edits with h5py (resized tables, changed attributes, wrong dtypes and shapes,
deleted datasets, out-of-range ids, garbage starts/lengths, links).

Each case runs in a worker process (``--workers``) under a time cap (``--timeout``, 5 s) and an
address-space cap (``--memory-gib``, 2 GiB: an allocation over about 1 GiB fails with
MemoryError). Outcomes: ``ok``, ``pvderror`` (expected), ``crash`` (any other exception, a
broken invariant, or a dead worker), ``hang`` (over the time cap), ``memory`` (MemoryError).
Reproducers of every failure go to ``--out`` (``bench/out/``) with their traceback; the exit
status is 1 when there was any failure. Cases are deterministic in ``(--seed, case index)``.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import shutil
import struct
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OUTCOMES = ("ok", "pvderror", "crash", "hang", "memory")
FAILURES = ("crash", "hang", "memory")
FIXTURE = ROOT / "tests" / "data" / "vehicles_short.ovd"
#: Largest mutated input (bytes): repeats and splices stay below it.
MAX_CASE_BYTES = 4 << 20

# Seeds and how often a case starts from each (the PhysX fixture is the slowest to exercise).
OVD_SEEDS = {"every": 0.40, "tricky": 0.30, "small": 0.15, "fixture": 0.15}
H5_SEEDS = {"every": 0.40, "tricky": 0.30, "small": 0.20, "fixture": 0.10}
#: Share of opened ``.ovd`` cases that also go through the ``.h5`` round trip.
ROUND_TRIP_SHARE = 0.06


# ============================================================================================
# Seeds
# ============================================================================================


def _s(text: bytes) -> bytes:
    return struct.pack("<H", len(text)) + text


def tricky_stream() -> bytes:
    """A stream of the schema features hostile input abuses, all valid: class attributes
    through a cycle (data set through 1-, 2- and 3-deep paths), enum and flags words of 1, 2,
    4, 8 and 3 bytes, a flags attribute of an enum class never registered, a base-class cycle,
    unique lists of handles and strings, reused object handles, two interleaved contexts, an
    unstopped frame and a message."""
    from pvdkit.ovd import codec
    from pvdkit.types import DataType

    out = [codec.encode_header()]

    def add(c) -> None:
        out.append(c.encode())

    add(codec.RegisterClass(1, "Bits"))
    for h, (name, v) in enumerate((("eA", 1), ("eB", 2), ("eC", 4), ("eALL", 7), ("eALIAS", 2)), start=1):
        add(codec.RegisterEnumValue(1, h, v, name))
    add(codec.RegisterClass(2, "Kind"))
    for h, (name, v) in enumerate((("eZERO", 0), ("eONE", 1), ("eTWO", 2)), start=6):
        add(codec.RegisterEnumValue(2, h, v, name))
    add(codec.RegisterClass(3, "Node"))
    add(codec.RegisterAttribute(3, 9, DataType.FLOAT32, 1, "value"))
    add(codec.RegisterClassAttribute(3, 10, 3, "child"))  # Node contains Node
    add(codec.RegisterFlagsAttribute(3, 11, 1, "bits"))
    add(codec.RegisterFlagsAttribute(3, 12, 2, "kind"))
    add(codec.RegisterFlagsAttribute(3, 13, 99, "ghost"))  # enum class 99 is never registered
    add(codec.RegisterUniqueListAttribute(3, 14, DataType.OBJECT_HANDLE, "links"))
    add(codec.RegisterUniqueListAttribute(3, 15, DataType.STRING, "tags"))
    add(codec.RegisterAttribute(3, 16, DataType.STRING, 1, "label"))
    add(codec.RegisterAttribute(3, 17, DataType.UINT32, 0, "ids"))
    add(codec.RegisterClass(4, "Ping", 5))
    add(codec.RegisterClass(5, "Pong", 4))  # a base-class cycle
    add(codec.RegisterAttribute(4, 18, DataType.INT16, 2, "ping"))
    add(codec.RegisterClassAttribute(5, 19, 4, "inner"))
    add(codec.RegisterClass(6, "Leaf", 3))
    add(codec.CreateObject(1, 3, 100, "node_a"))
    add(codec.CreateObject(1, 6, 101, "leaf_b"))
    add(codec.CreateObject(2, 4, 102, "ping_c"))
    words = (b"\x01", b"\x03\x00", b"\x05\x00\x00\x00", b"\x07" + b"\x00" * 7, b"\x01\x02\x03")
    for frame in range(4):
        add(codec.StartFrame(1, 10 + frame))
        add(codec.StartFrame(2, 50 + frame))
        add(codec.SetAttribute(1, 100, (9,), struct.pack("<f", frame)))
        add(codec.SetAttribute(1, 100, (10, 9), struct.pack("<f", -frame)))
        add(codec.SetAttribute(1, 100, (10, 10, 9), struct.pack("<f", 2 * frame)))
        add(codec.SetAttribute(1, 100, (11,), words[frame]))
        add(codec.SetAttribute(1, 100, (12,), words[(frame + 1) % 5]))
        add(codec.SetAttribute(1, 100, (13,), words[(frame + 2) % 5]))
        add(codec.SetAttribute(1, 101, (11,), words[(frame + 3) % 5]))
        add(codec.SetAttribute(1, 101, (16,), b"leaf\x00"))
        add(codec.SetAttribute(1, 101, (17,), struct.pack(f"<{frame}I", *range(frame))))
        add(codec.AddToUniqueList(1, 100, (14,), struct.pack("<Q", 101)))
        add(codec.AddToUniqueList(1, 100, (15,), b"tag%d" % frame))
        if frame % 2:
            add(codec.RemoveFromUniqueList(1, 100, (14,), struct.pack("<Q", 101)))
        add(codec.SetAttribute(2, 102, (18,), struct.pack("<hh", frame, -frame)))
        add(codec.SetAttribute(2, 102, (19, 18), struct.pack("<hh", 1, 2)))
        add(codec.StopFrame(2, 50 + frame))
        if frame < 3:
            add(codec.StopFrame(1, 10 + frame))
        if frame == 1:
            add(codec.DestroyObject(1, 101))
            add(codec.CreateObject(1, 3, 101, "reborn"))
            add(codec.SetAttribute(1, 103, (9,), struct.pack("<f", 7.0)))  # never created
    add(codec.RecordMessage(1, "message", "file.cpp", 12, 1, 3))
    return b"".join(out)


def build_seeds(folder: Path) -> dict[str, dict[str, Path]]:
    """Write the seed recordings (``.ovd`` and their ``.h5``) into ``folder``."""
    import warnings as _w

    from pvdkit.convert import convert
    from pvdkit.streams import MemoryStream
    from pvdkit.synthetic import write_every_command, write_large_recording

    folder.mkdir(parents=True, exist_ok=True)
    blobs: dict[str, bytes] = {}
    s = MemoryStream()
    write_every_command(s)
    blobs["every"] = s.getvalue()
    s = MemoryStream()
    write_large_recording(s, 40_000, vehicles=2, wheels_per_vehicle=2, frames_per_call=16)
    blobs["small"] = s.getvalue()
    blobs["tricky"] = tricky_stream()
    blobs["fixture"] = FIXTURE.read_bytes()
    seeds: dict[str, dict[str, Path]] = {"ovd": {}, "h5": {}}
    for name, data in blobs.items():
        p = folder / f"{name}.ovd"
        if not p.exists() or p.read_bytes() != data:
            p.write_bytes(data)
        h = folder / f"{name}.h5"
        if not h.exists() or h.stat().st_mtime < p.stat().st_mtime:
            with _w.catch_warnings():
                _w.simplefilter("ignore")
                convert(p, h)
        seeds["ovd"][name], seeds["h5"][name] = p, h
    return seeds


# ============================================================================================
# Cases
# ============================================================================================


@dataclass
class Case:
    """One fuzz input: its format, mutation kinds, seed, bytes and what to check."""

    index: int
    fmt: str
    kinds: list[str]
    seed: str
    data: bytes
    notes: list[str] = field(default_factory=list)
    round_trip: bool = False
    cut: int | None = None  # a pure truncation: the offset

    @property
    def label(self) -> str:
        return "+".join(self.kinds)


def _choose(rng: np.random.Generator, weights: dict[str, float]) -> str:
    names = list(weights)
    p = np.array([weights[n] for n in names], float)
    return names[int(rng.choice(len(names), p=p / p.sum()))]


def make_case(fmt: str, seeds: dict[str, bytes], master_seed: int, index: int) -> Case:
    """The case ``index`` of a run: deterministic in (format, seed bytes, master seed, index)."""
    rng = np.random.default_rng([master_seed, index, 0 if fmt == "ovd" else 1])
    seed = _choose(rng, OVD_SEEDS if fmt == "ovd" else H5_SEEDS)
    if fmt == "ovd":
        return _ovd_case(rng, seeds, seed, index)
    return _h5_case(rng, seeds, seed, index)


# ---------------------------------------------------------------------------------- .ovd

OVD_KINDS = {
    "truncate": 0.10, "bitflip": 0.14, "inflate": 0.12, "swap": 0.07, "splice": 0.09,
    "repeat": 0.07, "zero": 0.06, "handle": 0.12, "header": 0.04, "payload": 0.10, "inject": 0.09,
}


def _ovd_case(rng: np.random.Generator, seeds: dict[str, bytes], seed: str, index: int) -> Case:
    data = bytearray(seeds[seed])
    first = _choose(rng, OVD_KINDS)
    case = Case(index, "ovd", [], seed, b"")
    if first == "truncate":
        cut = int(_pick_offset(rng, bytes(data)))
        case.kinds, case.data, case.cut = ["truncate"], bytes(data[:cut]), cut
        return case
    kinds = [first] + [_choose(rng, {k: w for k, w in OVD_KINDS.items() if k != "truncate"})
                       for _ in range(int(rng.choice([0, 0, 0, 1, 2])))]
    for kind in kinds:
        data = bytearray(_OVD_MUTATORS[kind](rng, bytes(data), seeds, case.notes))[:MAX_CASE_BYTES]
    case.kinds, case.data = kinds, bytes(data)
    case.round_trip = bool(rng.random() < ROUND_TRIP_SHARE)
    return case


def _layout(data: bytes):
    """(offsets, ends, kinds) of the complete commands of ``data`` (empty if no header)."""
    from pvdkit.ovd.tokenizer import tokenize
    from pvdkit.types import PvdError

    try:
        t = tokenize(data)
    except PvdError:
        e = np.zeros(0, np.int64)
        return e, e, np.zeros(0, np.uint8), (0, 4, 0)
    return t.offset, t.end, t.kind, t.version


def _pick_offset(rng: np.random.Generator, data: bytes) -> int:
    """A cut point: anywhere, or at / next to a command boundary (where bugs hide)."""
    _, ends, _, _ = _layout(data)
    if len(ends) and rng.random() < 0.5:
        return int(min(len(data), max(0, int(rng.choice(ends)) + int(rng.integers(-2, 3)))))
    return int(rng.integers(0, len(data) + 1))


def _pick_command(rng: np.random.Generator, data: bytes, kinds: tuple[int, ...] | None = None):
    offs, ends, ks, version = _layout(data)
    idx = np.arange(len(offs)) if kinds is None else np.flatnonzero(np.isin(ks, kinds))
    if not len(idx):
        return None
    i = int(rng.choice(idx))
    return int(offs[i]), int(ends[i]), int(ks[i]), version


def _put(data: bytes, at: int, fmt: str, value: int) -> bytes:
    size = struct.calcsize(fmt)
    if at < 0 or at + size > len(data):
        return data
    mask = (1 << (8 * size)) - 1
    return data[:at] + struct.pack(fmt, value & mask) + data[at + size:]


def _get(data: bytes, at: int, fmt: str) -> int | None:
    size = struct.calcsize(fmt)
    if at < 0 or at + size > len(data):
        return None
    return struct.unpack_from(fmt, data, at)[0]


def _m_bitflip(rng, data: bytes, seeds, notes) -> bytes:
    raw = bytearray(data)
    if not raw:
        return data
    for _ in range(int(rng.integers(1, 9))):
        if rng.random() < 0.5:
            c = _pick_command(rng, data)
            pos = c[0] + int(rng.integers(0, 24)) if c else int(rng.integers(0, len(raw)))
        else:
            pos = int(rng.integers(0, len(raw)))
        pos = min(pos, len(raw) - 1)
        raw[pos] ^= 1 << int(rng.integers(0, 8))
    return bytes(raw)


#: (command code, offset, struct format) of every length / count / depth / type field.
_SIZE_FIELDS = {
    1: [(9, "<H")], 3: [(9, "<H"), (11, "<I"), (15, "<H")], 4: [(13, "<H")], 5: [(9, "<H"), (11, "<H")],
    9: [(21, "<H")], 13: [(9, "<H")],
}


def _m_inflate(rng, data: bytes, seeds, notes) -> bytes:
    c = _pick_command(rng, data)
    if c is None:
        return data
    at, end, k, version = c
    if k in (6, 7, 8):
        depth = data[at + 17]
        if rng.random() < 0.4:
            new = int(rng.choice([0, 1, 2, 255, depth + 1, max(0, depth - 1), 64]))
            notes.append(f"depth {depth}->{new} at {at}")
            return _put(data, at + 17, "<B", new)
        size_at = at + 18 + 4 * depth
        size = _get(data, size_at, "<I") or 0
        new = int(rng.choice([0, 1, size + 1, max(0, size - 1), size * 2, 0xFFFFFFFF, 0x7FFFFFFF, 5000]))
        notes.append(f"data size {size}->{new} at {at}")
        return _put(data, size_at, "<I", new)
    fields = list(_SIZE_FIELDS.get(k, []))
    if k == 1 and version[:2] < (0, 3):
        fields = [(5, "<H")]
    if not fields:
        return _m_bitflip(rng, data, seeds, notes)
    off, fmt = fields[int(rng.integers(0, len(fields)))]
    old = _get(data, at + off, fmt) or 0
    top = (1 << (8 * struct.calcsize(fmt))) - 1
    new = int(rng.choice([0, 1, old + 1, max(0, old - 1), top, top // 2, 12, 13, 14, 1 << 20]))
    notes.append(f"field +{off} of command {k}: {old}->{new} at {at}")
    return _put(data, at + off, fmt, new)


def _m_swap(rng, data: bytes, seeds, notes) -> bytes:
    a, b = _pick_command(rng, data), _pick_command(rng, data)
    if a is None or b is None or a[0] == b[0]:
        return data
    (a0, a1), (b0, b1) = sorted([(a[0], a[1]), (b[0], b[1])])
    if b0 < a1:
        return data
    notes.append(f"swap commands at {a0} and {b0}")
    return data[:a0] + data[b0:b1] + data[a1:b0] + data[a0:a1] + data[b1:]


def _m_splice(rng, data: bytes, seeds, notes) -> bytes:
    donor = seeds[str(rng.choice(sorted(seeds)))]
    offs, ends, _, _ = _layout(donor)
    if rng.random() < 0.6 and len(offs):
        i = int(rng.integers(0, len(offs)))
        j = min(len(offs), i + int(rng.integers(1, 21)))
        piece = donor[int(offs[i]):int(ends[j - 1])]
    else:
        lo = int(rng.integers(0, len(donor)))
        piece = donor[lo:lo + int(rng.integers(1, 200))]
    at = _pick_offset(rng, data)
    if rng.random() < 0.2:  # the tail of the donor after a prefix of the data
        notes.append(f"tail of a donor after {at}")
        return data[:at] + donor[int(rng.integers(12, max(13, len(donor)))):]
    notes.append(f"splice {len(piece)} bytes at {at}")
    return data[:at] + piece + data[at:]


def _m_repeat(rng, data: bytes, seeds, notes) -> bytes:
    offs, ends, _, _ = _layout(data)
    if not len(offs):
        return data
    i = int(rng.integers(0, len(offs)))
    j = min(len(offs), i + int(rng.integers(1, 6)))
    run = data[int(offs[i]):int(ends[j - 1])]
    k = int(rng.choice([2, 10, 100, 1000]))
    k = max(1, min(k, MAX_CASE_BYTES // max(1, len(run)) // 2))
    notes.append(f"repeat commands {i}..{j - 1} x{k}")
    at = int(ends[j - 1])
    return data[:at] + run * (k - 1) + data[at:]


def _m_zero(rng, data: bytes, seeds, notes) -> bytes:
    c = _pick_command(rng, data)
    if c is not None and rng.random() < 0.5:
        lo, hi = c[0] + int(rng.integers(0, 4)), c[1]
    else:
        lo = int(rng.integers(0, max(1, len(data))))
        hi = lo + int(rng.integers(1, 65))
    hi = min(hi, len(data))
    notes.append(f"zero {lo}..{hi}")
    return data[:lo] + bytes(max(0, hi - lo)) + data[hi:]


#: (command code, offset, format, what) of every handle field.
_HANDLE_FIELDS = {
    1: [(1, "<I", "class"), (5, "<I", "class")],
    3: [(1, "<I", "class"), (5, "<I", "attr"), (11, "<I", "class")],
    4: [(1, "<I", "class"), (5, "<I", "attr"), (9, "<I", "class")],
    5: [(1, "<I", "class"), (5, "<I", "attr")],
    6: [(1, "<Q", "ctx"), (9, "<Q", "obj"), (18, "<I", "attr")],
    7: [(1, "<Q", "ctx"), (9, "<Q", "obj"), (18, "<I", "attr")],
    8: [(1, "<Q", "ctx"), (9, "<Q", "obj"), (18, "<I", "attr")],
    9: [(1, "<Q", "ctx"), (9, "<I", "class"), (13, "<Q", "obj")],
    10: [(1, "<Q", "ctx"), (9, "<Q", "obj")],
    11: [(1, "<Q", "ctx")], 12: [(1, "<Q", "ctx")], 13: [(1, "<Q", "ctx")],
}


def _handle_pool(data: bytes) -> dict[str, list[int]]:
    """Handle values of each sort found in the complete commands of ``data``."""
    offs, _, ks, version = _layout(data)
    pool: dict[str, list[int]] = {"class": [0], "attr": [0], "obj": [0], "ctx": [0]}
    for at, k in zip(offs[:4000].tolist(), ks[:4000].tolist(), strict=True):
        for off, fmt, what in _HANDLE_FIELDS.get(k, []):
            if k == 1 and off == 5 and version[:2] < (0, 3):
                continue
            v = _get(data, at + off, fmt)
            if v is not None:
                pool[what].append(v)
    return pool


def _m_handle(rng, data: bytes, seeds, notes) -> bytes:
    c = _pick_command(rng, data)
    if c is None:
        return data
    at, _, k, version = c
    fields = [f for f in _HANDLE_FIELDS.get(k, []) if not (k == 1 and f[0] == 5 and version[:2] < (0, 3))]
    if not fields:
        return data
    off, fmt, what = fields[int(rng.integers(0, len(fields)))]
    if k in (6, 7, 8) and what == "attr":
        depth = data[at + 17]
        off = 18 + 4 * int(rng.integers(0, max(1, depth)))
    pool = _handle_pool(data)
    r = rng.random()
    if r < 0.6:  # a value used elsewhere, of any sort (collisions, self-reference, cycles)
        sort = what if rng.random() < 0.7 else str(rng.choice(sorted(pool)))
        new = int(rng.choice(pool[sort]))
    elif r < 0.8 and k in (1, 4):  # a class naming itself (base = self, nested = owner)
        new = _get(data, at + 1, "<I") or 0
    else:
        new = int(rng.choice([0, 1, 2, 0xFFFFFFFF, 0x7FFFFFFF, int(rng.integers(0, 1 << 31))]))
    notes.append(f"{what} field +{off} of command {k} at {at} -> {new}")
    return _put(data, at + off, fmt, new)


_HEADERS = [(0, 2, 0), (0, 3, 0), (0, 4, 0), (0, 4, 7), (0, 5, 0), (1, 0, 0), (0, 1, 0), (0, 0, 0),
            (255, 255, 255), (0, 4, 0xFFFFFFFF), (0, 256, 0), (0x20202020, 0, 0)]


def _m_header(rng, data: bytes, seeds, notes) -> bytes:
    if rng.random() < 0.8:
        v = _HEADERS[int(rng.integers(0, len(_HEADERS)))]
    else:
        v = tuple(int(x) for x in rng.integers(0, 1 << 32, 3, dtype=np.uint64))
    notes.append(f"header {v}")
    return struct.pack("<III", *v) + data[12:]


def _m_payload(rng, data: bytes, seeds, notes) -> bytes:
    c = _pick_command(rng, data, (6, 7, 8))
    if c is None:
        return _m_inflate(rng, data, seeds, notes)
    at, end, _, _ = c
    depth = data[at + 17]
    head = data[at:at + 18 + 4 * depth]
    n = int(rng.choice([0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 64, 1000, 5000, 40000]))
    fill = int(rng.integers(0, 3))
    payload = (bytes(n) if fill == 0 else b"\xff" * n if fill == 1
               else rng.integers(0, 256, n, dtype=np.uint8).tobytes())
    notes.append(f"payload of command at {at} -> {n} bytes")
    return data[:at] + head + struct.pack("<I", n) + payload + data[end:]


def _m_inject(rng, data: bytes, seeds, notes) -> bytes:
    """Insert a few generated, well-formed commands whose handles come from the stream."""
    from pvdkit.ovd import codec

    pool = _handle_pool(data)

    def h(sort: str) -> int:
        return int(rng.choice(pool[sort])) if rng.random() < 0.85 else int(rng.integers(0, 1 << 16))

    made = []
    for _ in range(int(rng.integers(1, 6))):
        k = int(rng.choice([1, 3, 3, 4, 4, 5, 6, 6, 6, 7, 8, 9, 10, 11, 12, 13]))
        # Names of every length up to the format's 65535 bytes (long ones make long paths).
        name = f"x{int(rng.integers(0, 100))}" * int(rng.choice([1, 1, 1, 1, 30, 3000, 21845]))
        if k == 1:
            made.append(codec.RegisterClass(h("class"), name, h("class")))
        elif k == 3:
            t = int(rng.integers(0, 14))
            counts = [0, 1, 3, 4, 1 << 20, int(rng.integers(0, 64))]
            extra = h("class") if t == 13 else int(rng.choice(counts))
            made.append(codec.RegisterAttribute(h("class"), h("attr"), t, extra, name)
                        if t < 12 else codec.RegisterEnumValue(h("class"), h("attr"), extra, name)
                        if t == 12 else codec.RegisterFlagsAttribute(h("class"), h("attr"), extra, name))
        elif k == 4:
            made.append(codec.RegisterClassAttribute(h("class"), h("attr"), h("class"), name))
        elif k == 5:
            t = int(rng.integers(0, 14))
            made.append(codec.RegisterUniqueListAttribute(h("class"), h("attr"), t, name))
        elif k in (6, 7, 8):
            path = tuple(h("attr") for _ in range(int(rng.choice([1, 1, 2, 3, 5, 17]))))
            n = int(rng.choice([0, 1, 2, 4, 8, 3, 12, 100]))
            payload = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
            cls = {6: codec.SetAttribute, 7: codec.AddToUniqueList, 8: codec.RemoveFromUniqueList}[k]
            made.append(cls(h("ctx"), h("obj"), path, payload))
        elif k == 9:
            made.append(codec.CreateObject(h("ctx"), h("class"), h("obj"), name))
        elif k == 10:
            made.append(codec.DestroyObject(h("ctx"), h("obj")))
        elif k in (11, 12):
            frame_cls = codec.StartFrame if k == 11 else codec.StopFrame
            made.append(frame_cls(h("ctx"), int(rng.integers(0, 1 << 40))))
        else:
            made.append(codec.RecordMessage(h("ctx"), name, "f", 1, 2, h("class")))
    blob = b"".join(c.encode() for c in made)
    offs, ends, _, _ = _layout(data)
    at = int(rng.choice(np.concatenate([ends, [12]]))) if len(ends) else min(12, len(data))
    notes.append(f"inject {len(made)} commands at {at}")
    return data[:at] + blob + data[at:]


_OVD_MUTATORS = {
    "bitflip": _m_bitflip, "inflate": _m_inflate, "swap": _m_swap, "splice": _m_splice,
    "repeat": _m_repeat, "zero": _m_zero, "handle": _m_handle, "header": _m_header,
    "payload": _m_payload, "inject": _m_inject,
}


# ---------------------------------------------------------------------------------- .h5

H5_KINDS = {"bytes": 0.30, "resize": 0.12, "attrs": 0.12, "dtype": 0.10, "delete": 0.08,
            "ids": 0.18, "values": 0.06, "link": 0.04}

_TABLES = ("registry/classes", "registry/attributes", "objects", "destroys", "frames", "frame_stops",
           "messages", "paths", "series", "segments", "log/kind", "log/series", "log/context_exceptions",
           "log/tail")


def _h5_case(rng: np.random.Generator, seeds: dict[str, bytes], seed: str, index: int) -> Case:
    kinds = [_choose(rng, H5_KINDS) for _ in range(int(rng.choice([1, 1, 1, 2, 3])))]
    case = Case(index, "h5", kinds, seed, b"")
    data = seeds[seed]
    structured = [k for k in kinds if k != "bytes"]
    if structured:
        data = _edit_h5(rng, data, structured, case.notes)
    if "bytes" in kinds:
        data = _damage_bytes(rng, data, case.notes)
    case.data = data
    return case


def _damage_bytes(rng: np.random.Generator, data: bytes, notes: list[str]) -> bytes:
    raw = bytearray(data)
    how = int(rng.integers(0, 4))
    if how == 0:
        for _ in range(int(rng.integers(1, 17))):
            span = len(raw) if rng.random() < 0.5 else min(len(raw), 4096)  # the superblock is first
            pos = int(rng.integers(0, span))
            raw[pos] ^= 1 << int(rng.integers(0, 8))
        notes.append("bit flips")
    elif how == 1:
        lo = int(rng.integers(0, len(raw)))
        hi = min(len(raw), lo + int(rng.choice([8, 64, 512, 4096])))
        raw[lo:hi] = bytes(hi - lo)
        notes.append(f"zero {lo}..{hi}")
    elif how == 2:
        lo = int(rng.integers(0, len(raw)))
        n = min(len(raw) - lo, int(rng.choice([4, 16, 256])))
        raw[lo:lo + n] = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        notes.append(f"random bytes {lo}..{lo + n}")
    else:
        cut = int(rng.integers(0, len(raw)))
        del raw[cut:]
        notes.append(f"truncate at {cut}")
    return bytes(raw)


def _edit_h5(rng: np.random.Generator, data: bytes, kinds: list[str], notes: list[str]) -> bytes:
    """Apply structured h5py edits to a copy of ``data`` (in memory) and return its bytes."""
    import io

    import h5py

    bio = io.BytesIO(data)
    with h5py.File(bio, "r+") as f:
        for kind in kinds:
            try:
                _H5_EDITS[kind](rng, f, notes)
            except (OSError, KeyError, ValueError, TypeError, RuntimeError, IndexError, MemoryError) as exc:
                # The edit itself could not be made (e.g. it would read a table an earlier edit
                # inflated to 2**40 rows): the case goes on with the edits made so far.
                notes.append(f"{kind} edit failed: {type(exc).__name__}")
    return bio.getvalue()


def _datasets(f) -> list[str]:
    import h5py

    names: list[str] = []
    f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
    return sorted(names)


def _e_resize(rng, f, notes) -> None:
    names = [n for n in _datasets(f) if f[n].maxshape and f[n].maxshape[0] is None]
    if not names:
        return
    n = str(rng.choice(names))
    ds = f[n]
    new = int(rng.choice([0, 1, ds.shape[0] + 1, max(0, ds.shape[0] - 1), 10**6, 10**9, 2**40]))
    notes.append(f"resize {n} {ds.shape[0]}->{new}")
    ds.resize((new, *ds.shape[1:]))


def _e_attrs(rng, f, notes) -> None:
    pools = f.get("pools")
    targets = [(f, "format"), (f, "format_version"), (f, "ovd_version"), (f, "complete"), (f, "error"),
               (f, "command_counts"), (f, "interrupted"), (f, "source")]
    if pools is not None:
        targets.append((pools, "order"))
    obj, key = targets[int(rng.integers(0, len(targets)))]
    values = [
        np.array([9, 9, 9], np.uint32), np.array([0, 4], np.uint32), np.array([0, 2, 0], np.int64),
        np.array([0x20202020, 1, 0], np.uint32), "0.4.0", 2, -1, 10**6, True, False,
        np.arange(5), "[]", "[\"nope\"]", "[" * 5000, "{}", "not json", '{"register_class": -1}',
        np.zeros((3, 3)), b"\xff\xfe", "pvdkit.recording", "x" * 100000,
    ]
    v = values[int(rng.integers(0, len(values)))]
    if rng.random() < 0.15:
        notes.append(f"delete attribute {key}")
        if key in obj.attrs:
            del obj.attrs[key]
        return
    notes.append(f"attribute {key} = {str(v)[:40]!r}")
    obj.attrs[key] = v


def _e_dtype(rng, f, notes) -> None:
    names = _datasets(f)
    if not names:
        return
    n = str(rng.choice(names))
    ds = f[n]
    shape = (min(ds.shape[0], _MAX_EDIT_ROWS), *ds.shape[1:]) if ds.shape else ()
    choice = int(rng.integers(0, 6))
    if choice == 0:
        new = np.zeros(shape[:1], np.float32)
    elif choice == 1:
        new = np.zeros((shape[0] if shape else 1, 3), np.int64)
    elif choice == 2:
        new = np.array([b"text"] * (shape[0] if shape else 1))
    elif choice == 3 and ds.dtype.names:
        drop = ds.dtype.names[int(rng.integers(0, len(ds.dtype.names)))]
        keep = [d for d in ds.dtype.descr if d[0] != drop]
        new = np.zeros(shape[:1], np.dtype([(k, "<i8") for k, *_ in keep] or [("x", "<i8")]))
    elif choice == 4:
        new = np.full(shape[:1] or (1,), -1, np.int64)
    else:
        new = np.zeros((), np.int32)
    notes.append(f"replace {n} ({ds.dtype}, {shape}) with {new.dtype} {new.shape}")
    del f[n]
    f.create_dataset(n, data=new)


def _e_delete(rng, f, notes) -> None:
    names = _datasets(f) + ["pools", "registry", "log"] + [f"pools/{p}" for p in f.get("pools", {})]
    n = str(rng.choice(names))
    if n in f:
        notes.append(f"delete {n}")
        del f[n]


#: Largest dataset an edit rewrites (one an earlier resize inflated is left alone: the time of
#: rewriting a 10**9-row table would count against the reader's time cap).
_MAX_EDIT_ROWS = 10**6


def _e_ids(rng, f, notes) -> None:
    """An id or range field of a table set to something out of range (or a random row's field
    to another row's value)."""
    fields = [("segments", "series"), ("segments", "pool"), ("segments", "start"), ("segments", "count"),
              ("series", "object"), ("series", "path"), ("series", "family"), ("objects", "create_command"),
              ("objects", "destroy_command"), ("objects", "class"), ("frames", "command"),
              ("registry/attributes", "command"), ("registry/attributes", "data_type"),
              ("registry/attributes", "extra"), ("registry/classes", "base"), ("destroys", "object"),
              ("log/context_exceptions", "command"), ("messages", "frame")]
    for p in f.get("pools", {}):
        for k in ("frames", "ops", "starts", "lengths"):
            if f"pools/{p}/{k}" in f:
                fields.append((f"pools/{p}/{k}", None))
    fields += [("log/series", None), ("log/kind", None)]
    table, col = fields[int(rng.integers(0, len(fields)))]
    if table not in f or f[table].shape == () or not f[table].shape[0]:
        return
    ds = f[table]
    if ds.size > _MAX_EDIT_ROWS:
        return  # an earlier edit inflated it: rewriting it would time the harness, not the reader
    arr = ds[()]
    row = int(rng.integers(0, len(arr)))
    vals = [-1, -(2**31), 2**31 - 1, 2**40, len(arr), len(arr) + 1, 0, 255, 14, 2, 12, 13]
    v = int(rng.choice(vals))
    if col and (arr.dtype.names is None or col not in arr.dtype.names):
        return  # an earlier edit changed the table's dtype: nothing to point at
    target = arr[col] if col else arr
    info = np.iinfo(target.dtype) if target.dtype.kind in "iu" else None
    if info is not None:
        v = int(np.clip(v, info.min, info.max))
    if rng.random() < 0.3:
        target[:] = v
        notes.append(f"{table}[{col or ''}] all = {v}")
    else:
        target[row] = v
        notes.append(f"{table}[{row}][{col or ''}] = {v}")
    ds[...] = arr


def _e_values(rng, f, notes) -> None:
    """Random bits in a pool's values or a table's numeric fields (data, not structure)."""
    names = [n for n in _datasets(f)
             if 0 < f[n].size <= _MAX_EDIT_ROWS and f[n].dtype.kind in "iuf"]
    if not names:
        return
    n = str(rng.choice(names))
    arr = f[n][()]
    raw = arr.view(np.uint8).reshape(-1)
    for _ in range(int(rng.integers(1, 9))):
        raw[int(rng.integers(0, len(raw)))] = int(rng.integers(0, 256))
    f[n][...] = arr
    notes.append(f"random bytes in {n}")


def _e_link(rng, f, notes) -> None:
    import h5py

    names = _datasets(f)
    if not names:
        return
    n = str(rng.choice(names))
    del f[n]
    how = int(rng.integers(0, 3))
    if how == 0:
        f[n] = h5py.SoftLink(f"/{n}")  # a link to itself
    elif how == 1:
        f[n] = h5py.ExternalLink("/etc/hostname", "/x")
    else:
        other = str(rng.choice(names))
        f[n] = h5py.SoftLink(f"/{other}")
    notes.append(f"{n} replaced by link ({how})")


_H5_EDITS = {"resize": _e_resize, "attrs": _e_attrs, "dtype": _e_dtype, "delete": _e_delete,
             "ids": _e_ids, "values": _e_values, "link": _e_link}


# ============================================================================================
# Exercising one case (in a worker)
# ============================================================================================


class _Worker:
    """State of one worker process: seed bytes, seed tables, a scratch folder."""

    def __init__(self, fmt: str, seed_paths: dict[str, dict[str, Path]], master_seed: int) -> None:
        from pvdkit.ovd.tokenizer import tokenize

        self.fmt = fmt
        self.master_seed = master_seed
        self.paths = seed_paths[fmt]
        self.seeds = {k: p.read_bytes() for k, p in self.paths.items()}
        self.ovd = {k: p.read_bytes() for k, p in seed_paths["ovd"].items()}
        self.ends = {k: tokenize(v).end for k, v in self.ovd.items()}
        self.tmp = Path(tempfile.mkdtemp(prefix="pvdfuzz."))
        self._partner: dict[str, object] = {}

    def close(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def partner(self, seed: str):
        """The seed recording, preloaded (the ``other`` of a bulk comparison)."""
        from pvdkit.recording import Recording

        if seed not in self._partner:
            rec = Recording.open(self.paths[seed])
            rec.preload()
            self._partner[seed] = rec
        return self._partner[seed]

    def run(self, index: int) -> tuple[str, str, str]:
        """(outcome, case label, detail) of case ``index``."""
        from pvdkit.types import PvdError

        case = make_case(self.fmt, self.seeds, self.master_seed, index)
        try:
            exercise(case, self)
        except PvdError as exc:
            return "pvderror", case.label, str(exc).split("\n")[0][:300]
        except MemoryError:
            return "memory", case.label, traceback.format_exc()
        except BaseException as exc:  # the point of the harness: anything else is a finding
            if isinstance(exc, KeyboardInterrupt):
                raise
            return "crash", case.label, traceback.format_exc()
        return "ok", case.label, ""


def exercise(case: Case, w: _Worker) -> None:
    """Read ``case`` the way the tools do; raise whatever the library raises (or AssertionError
    for a broken promise)."""
    from pvdkit.types import PvdWarning

    # A new file per case: the previous case's recording may still map its file.
    path = w.tmp / f"case{case.index}.{case.fmt}"
    path.write_bytes(case.data)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if case.fmt == "ovd":
                _check_ovd_promises(case, w)
            _exercise_recording(path, case, w)
        if case.cut is not None:
            ends = w.ends[case.seed]
            complete = case.cut == 12 or case.cut in set(ends.tolist())
            warned = [x for x in caught if issubclass(x.category, PvdWarning)]
            assert complete or warned, f"a cut at {case.cut} inside a command opened without a warning"
        if case.fmt == "ovd" and case.round_trip:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PvdWarning)
                _round_trip(path, case, w)
    finally:
        path.unlink(missing_ok=True)


def _check_ovd_promises(case: Case, w: _Worker) -> None:
    """The tokenizer's promises: a truncation yields exactly the complete prefix; any input
    yields contiguous rows whose payloads end where their command ends."""
    from pvdkit.ovd.tokenizer import tokenize
    from pvdkit.types import PvdError

    try:
        t = tokenize(case.data, source_name="case.ovd")
    except PvdError:
        if case.cut is not None:
            assert case.cut < 12, f"a cut at {case.cut} >= 12 raised instead of reading the prefix"
        return
    if len(t):
        assert (t.offset[1:] == t.end[:-1]).all() and t.end[-1] == t.valid_end <= len(case.data)
    if case.cut is not None:
        ends = w.ends[case.seed]
        n = int(np.searchsorted(ends, case.cut, side="right"))
        assert len(t) == n and (t.end == ends[:n]).all(), (
            f"cut at {case.cut}: {len(t)} commands read, the complete prefix has {n}")
        assert (t.error is None) == (t.valid_end == len(case.data))
        if t.error is not None:
            assert t.truncated and f"truncated at byte offset {t.valid_end}" in t.error


def _exercise_recording(path: Path, case: Case, w: _Worker) -> None:
    """Open, count, read every series, query state at a few frames, preload (and for an
    ``.h5`` rebuild the ``.ovd``)."""
    from pvdkit.recording import ListSeries, Recording

    rec = Recording.open(path)
    try:
        counts = rec.counts()
        assert all(isinstance(v, int) and v >= 0 for v in counts.values()), counts
        per_class: dict[str, int] = {}
        for o in rec.objects:
            if o.cls is not None:
                per_class[o.cls.name] = per_class.get(o.cls.name, 0) + 1
                o.cls.is_a(o.cls.name)
        nf = len(rec.frames)
        frames = sorted({-1, 0, nf // 2, max(nf - 1, 0), nf + 5})
        for f in frames[1:3]:
            rec.objects_at(f)
        if nf:
            rec.frames[nf - 1]
            rec.frames.time(np.arange(-1, nf + 1))
        for o in rec.objects:
            o.attribute_names()
            for s in rec.all_series(o):
                if isinstance(s, ListSeries):
                    _touch(s.items, s.members_at(frames[2]))
                else:
                    _touch(s.values, s.raw, s.times, s.at(frames[2]))
        inside = [f for f in frames if f < nf]  # point queries refuse frames past the last
        for o in rec.objects[:48]:
            for f in inside:
                state = o.state_at(f)
            if o.cls is not None:
                for name in list(o.cls.paths)[:6]:
                    o.value_at(name, inside[-1])
            for name in list(state)[:4]:
                rec.series(o, name)
        for m in rec.messages[:5]:
            repr(m)
        repr(rec)
        if case.fmt == "h5":  # every third case against the intact seed (the diff's bulk path)
            rec.preload(w.partner(case.seed) if case.index % 3 == 0 else None)
        else:
            rec.preload()
        for o in rec.objects[:16]:
            for s in rec.all_series(o):
                _touch(s.items if isinstance(s, ListSeries) else s.values)
        if case.fmt == "h5":
            _rebuild_ovd(path)
    finally:
        rec.close()


def _touch(*values: object) -> None:
    """Take computed values: computing them (lazy properties, decoding) is what is tested."""


def _rebuild_ovd(path: Path) -> None:
    """What ``pvdkit dump`` / ``convert`` do with an ``.h5``: rebuild the ``.ovd`` and read it."""
    from pvdkit.h5 import h5_to_ovd_bytes
    from pvdkit.ovd.tokenizer import iter_commands, tokenize

    data = h5_to_ovd_bytes(path)
    t = tokenize(data, source_name=f"{path} (rebuilt)")
    for _ in iter_commands(data, t, range(min(len(t), 2000))):
        pass


def _round_trip(path: Path, case: Case, w: _Worker) -> None:
    """``.ovd`` → ``.h5`` → ``.ovd`` gives the same bytes, and the ``.h5`` the same counts."""
    from pvdkit.convert import convert
    from pvdkit.h5 import h5_to_ovd_bytes
    from pvdkit.recording import Recording

    h5 = w.tmp / "round.h5"
    if h5.exists():
        h5.unlink()
    convert(path, h5)
    back = h5_to_ovd_bytes(h5)
    assert back == case.data, f"round trip changed the bytes ({len(case.data)} -> {len(back)})"
    with Recording.open(h5) as again, Recording.open(path) as first:
        assert again.counts() == first.counts(), "the .h5 counts differ from the .ovd's"
        assert len(again.objects) == len(first.objects) and len(again.frames) == len(first.frames)


# ============================================================================================
# Running: worker processes under a time and memory cap
# ============================================================================================


def _worker_main(conn: Connection, fmt: str, seed_paths: dict[str, dict[str, Path]], master_seed: int,
                 memory_bytes: int) -> None:
    import resource

    import numba

    # One core per worker. Set here, in the worker, before its first compiled call: changing the
    # variable in the calling process (a test run) would clash with numba threads it already has.
    numba.set_num_threads(1)
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    w = _Worker(fmt, seed_paths, master_seed)
    try:
        for seed in w.seeds:  # warm up (numba's cached code, h5py) outside any time cap
            exercise(Case(-1, fmt, ["none"], seed, w.seeds[seed]), w)
        conn.send(("ready",))
        while True:
            msg = conn.recv()
            if msg is None:
                break
            t = time.perf_counter()
            result = w.run(int(msg))
            conn.send((*result, time.perf_counter() - t))
    except (EOFError, KeyboardInterrupt, BrokenPipeError):
        pass
    finally:
        w.close()


@dataclass
class Report:
    """Counts per outcome and per mutation kind, and the failures found."""

    fmt: str
    counts: Counter = field(default_factory=Counter)
    by_kind: dict[str, Counter] = field(default_factory=dict)
    failures: list[tuple[int, str, str, str]] = field(default_factory=list)  # index, outcome, label, detail
    errors: Counter = field(default_factory=Counter)
    wall: float = 0.0

    def add(self, index: int, outcome: str, label: str, detail: str) -> None:
        self.counts[outcome] += 1
        for k in label.split("+"):
            self.by_kind.setdefault(k, Counter())[outcome] += 1
        if outcome in FAILURES:
            self.failures.append((index, outcome, label, detail))
        elif outcome == "pvderror":
            self.errors[_error_shape(detail)] += 1

    @property
    def n(self) -> int:
        return sum(self.counts.values())

    @property
    def failed(self) -> int:
        return sum(self.counts[o] for o in FAILURES)


def _error_shape(msg: str) -> str:
    """A PvdError message without the file name and numbers, for the tally of kinds."""
    import re

    text = msg.split(": ", 1)[1] if ": " in msg else msg
    return re.sub(r"-?\d[\d,]*", "N", text)[:90]


class _Slot:
    """One worker process with the case it is running."""

    def __init__(self, ctx, fmt: str, seed_paths, master_seed: int, memory_bytes: int) -> None:
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, fmt, seed_paths, master_seed, memory_bytes),
                                daemon=True)
        self.proc.start()
        child.close()
        self.case: int | None = None
        self.started = 0.0
        if not self.conn.poll(120):
            raise RuntimeError("a fuzz worker did not start within 120 s")
        self.conn.recv()

    def send(self, index: int) -> None:
        self.case, self.started = index, time.monotonic()
        self.conn.send(index)

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.proc.kill()
        else:
            try:
                self.conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        self.proc.join(10)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.conn.close()


def run(fmt: str, cases: int, seed: int = 0, workers: int = 1, timeout: float = 5.0,
        memory_gib: float = 2.0, out: Path | None = None, progress_every: int = 0,
        seeds_dir: Path | None = None, first: int = 0) -> Report:
    """Run cases ``first .. first + cases - 1`` of ``fmt`` (``"ovd"``/``"h5"``) and return the
    report; reproducers of failures are written to ``out`` (when given)."""
    seeds_dir = seeds_dir or Path(tempfile.gettempdir()) / "pvdkit_fuzz_seeds"
    seed_paths = build_seeds(seeds_dir)
    seed_bytes = {k: p.read_bytes() for k, p in seed_paths[fmt].items()}
    ctx = mp.get_context("spawn")
    memory_bytes = int(memory_gib * (1 << 30))
    report = Report(fmt)
    t0 = time.monotonic()
    slots = [_Slot(ctx, fmt, seed_paths, seed, memory_bytes) for _ in range(max(1, workers))]
    todo = iter(range(first, first + cases))
    done = 0
    shown = 0

    def feed(slot: _Slot) -> None:
        nxt = next(todo, None)
        slot.case = None
        if nxt is not None:
            slot.send(nxt)

    def fail(slot: _Slot, outcome: str, detail: str) -> _Slot:
        """Count a case whose worker died or went over the cap; kill it and start another."""
        index = slot.case
        assert index is not None
        case = make_case(fmt, seed_bytes, seed, index)
        report.add(index, outcome, case.label, detail)
        _save(out, case, outcome, detail)
        slot.stop(kill=True)
        return _Slot(ctx, fmt, seed_paths, seed, memory_bytes)

    def finished(index: int, outcome: str, label: str, detail: str, seconds: float) -> None:
        if seconds > timeout:  # it ended, but after the cap: a hang all the same
            detail = f"took {seconds:.2f} s, over the {timeout:g} s cap (outcome {outcome})\n{detail}"
            outcome = "hang"
        report.add(index, outcome, label, detail)
        if outcome in FAILURES:
            _save(out, make_case(fmt, seed_bytes, seed, index), outcome, detail)

    try:
        for s in slots:
            feed(s)
        while any(s.case is not None for s in slots):
            busy = [s for s in slots if s.case is not None]
            ready = wait([s.conn for s in busy], timeout=min(0.1, timeout / 2))
            for i, s in enumerate(slots):
                if s.case is None:
                    continue
                if s.conn in ready:
                    try:
                        outcome, label, detail, seconds = s.conn.recv()
                    except (EOFError, OSError):
                        code = s.proc.exitcode
                        s.proc.join(1)
                        slots[i] = s = fail(s, "crash", f"worker died (exit code {s.proc.exitcode or code})")
                        done += 1
                        feed(s)
                        continue
                    finished(s.case, outcome, label, detail, seconds)
                    done += 1
                    feed(s)
                elif time.monotonic() - s.started > timeout:
                    slots[i] = s = fail(s, "hang", f"no result within {timeout:g} s")
                    done += 1
                    feed(s)
            if progress_every and done - shown >= progress_every:
                shown = done - done % progress_every
                _progress(report, done, cases, time.monotonic() - t0)
    finally:
        for s in slots:
            s.stop()
    report.wall = time.monotonic() - t0
    return report


def _save(out: Path | None, case: Case, outcome: str, detail: str) -> None:
    if out is None:
        return
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"{case.fmt}_{outcome}_{case.index}_{case.label}"
    stem.with_suffix(f".{case.fmt}").write_bytes(case.data)
    stem.with_suffix(".txt").write_text(
        f"case {case.index} seed {case.seed} kinds {case.label}\nnotes: {case.notes}\n\n{detail}\n")


def _progress(report: Report, done: int, total: int, elapsed: float) -> None:
    parts = " ".join(f"{o}={report.counts[o]}" for o in OUTCOMES)
    rate = done / max(elapsed, 1e-9)
    print(f"[{report.fmt}] {done}/{total} cases, {elapsed:,.0f} s ({rate:.1f}/s): {parts}", flush=True)


def print_report(report: Report, max_failures: int = 5, file=sys.stdout) -> None:
    p = lambda *a: print(*a, file=file)  # noqa: E731
    p(f"\n== fuzz {report.fmt}: {report.n:,} cases in {report.wall:,.1f} s "
      f"({report.n / max(report.wall, 1e-9):.1f} cases/s)")
    for o in OUTCOMES:
        p(f"  {o:<9} {report.counts[o]:>9,}")
    p("  by mutation kind:")
    for k in sorted(report.by_kind):
        c = report.by_kind[k]
        p(f"    {k:<9} " + "  ".join(f"{o}={c[o]}" for o in OUTCOMES))
    if report.errors:
        p("  most frequent PvdError kinds:")
        for text, n in report.errors.most_common(8):
            p(f"    {n:>7,}  {text}")
    for index, outcome, label, detail in report.failures[:max_failures]:
        p(f"\n-- {outcome} in case {index} ({label}):\n{detail}")
    if len(report.failures) > max_failures:
        p(f"\n… and {len(report.failures) - max_failures} more failures")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--format", choices=("ovd", "h5"), default="ovd")
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--first", type=int, default=0,
                    help="index of the first case (to rerun one: --first K --cases 1)")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=5.0, help="seconds per case (5)")
    ap.add_argument("--memory-gib", type=float, default=2.0, help="address-space cap per worker (2)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out", help="reproducers (bench/out)")
    ap.add_argument("--progress", type=int, default=1000, metavar="N", help="a progress line every N cases")
    args = ap.parse_args(argv)
    report = run(args.format, args.cases, args.seed, args.workers, args.timeout, args.memory_gib, args.out,
                 args.progress, first=args.first)
    print_report(report)
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
