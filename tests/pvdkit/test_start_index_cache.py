"""The on-disk cache of ``.ovd`` indexes (:mod:`pvdkit.index.cache`): the same answers as a
fresh parse, invalidated by any change of the bytes, never trusted when damaged, and no numba
on a hit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pvdkit import jit
from pvdkit.index import cache
from pvdkit.index.builder import read_ovd_data
from pvdkit.ovd.tokenizer import read_file
from pvdkit.recording import Recording
from pvdkit.streams import MemoryStream
from pvdkit.synthetic import write_every_command
from pvdkit.types import PvdWarning

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "data" / "vehicles_short.ovd"


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    """Every test has its own cache directory and caches files of any size."""
    monkeypatch.setenv(jit.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv("PVDKIT_INDEX_CACHE_MIN", "0")
    monkeypatch.delenv(cache.ENV, raising=False)


def entries(tmp_path: Path) -> list[Path]:
    d = tmp_path / "cache" / "index"
    return sorted(d.glob("*.idx")) if d.is_dir() else []


def assert_same(a, b) -> None:
    """Two RecordingData hold the same tables, registrations, messages and samples."""
    for name in ("objects", "frames", "series"):
        ta, tb = getattr(a, name), getattr(b, name)
        for field, va in vars(ta).items():
            vb = getattr(tb, field)
            if isinstance(va, np.ndarray):
                assert va.dtype == vb.dtype and np.array_equal(va, vb), f"{name}.{field}"
            else:
                assert va == vb, f"{name}.{field}"
    for name in ("version", "source_name", "registrations", "messages", "paths", "error", "incomplete",
                 "n_commands"):
        assert getattr(a, name) == getattr(b, name), name
    assert a.counts() == b.counts()
    for sid in range(len(a.series)):
        sa, sb = a.load_samples(sid), b.load_samples(sid)
        for field in ("frames", "fixed", "flat", "offsets", "ops"):
            va, vb = getattr(sa, field), getattr(sb, field)
            assert (va is None) == (vb is None), (sid, field)
            if va is not None:
                assert va.dtype == vb.dtype and np.array_equal(va, vb), (sid, field)


def from_cache(data) -> bool:
    """True when ``data`` was read from the cache (its preload is the cache's)."""
    return data.preload.__module__ == cache.__name__


def open_twice(path: Path):
    """(fresh parse, the data read back from the cache) for the file at ``path``."""
    buf = read_file(path)
    fresh = read_ovd_data(buf, source_name=str(path))
    cached = read_ovd_data(buf, source_name=str(path))
    assert not from_cache(fresh) and from_cache(cached)
    return fresh, cached


def every_command(path: Path) -> Path:
    ms = MemoryStream()
    write_every_command(ms)
    path.write_bytes(ms.getvalue())
    return path


def test_a_cached_index_answers_as_the_parse_did(tmp_path):
    for path in (FIXTURE, every_command(tmp_path / "every.ovd")):
        fresh, cached = open_twice(path)
        assert_same(fresh, cached)
        assert_same(read_ovd_data(read_file(path), use_cache=False, source_name=str(path)), cached)
    assert len(entries(tmp_path)) == 2


def test_a_damaged_file_is_cached_with_its_damage_named_after_the_path_opened(tmp_path, monkeypatch):
    data = FIXTURE.read_bytes()
    cut = tmp_path / "cut.ovd"
    cut.write_bytes(data[: len(data) * 2 // 3])
    fresh, cached = open_twice(cut)
    assert fresh.error and "truncated at byte offset" in fresh.error
    assert_same(fresh, cached)
    monkeypatch.chdir(tmp_path)  # the same file by another name: the message names that one
    again = read_ovd_data(read_file("cut.ovd"), source_name="cut.ovd")
    assert again.error == fresh.error.replace(str(cut), "cut.ovd")


def test_recordings_opened_again_use_the_cache_and_do_not_parse(tmp_path, monkeypatch):
    path = shutil.copy(FIXTURE, tmp_path / "v.ovd")
    with Recording.open(path) as rec:
        first = rec.series(rec.objects_of_class("PxScene")[0], "elapsedTime").values.copy()

    def no_parse(*a, **k):
        raise AssertionError("parsed although the index is cached")

    monkeypatch.setattr("pvdkit.ovd.tokenizer.count_commands", no_parse)
    with Recording.open(path) as rec:
        assert np.array_equal(rec.series(rec.objects_of_class("PxScene")[0], "elapsedTime").values, first)
        assert len(rec.frames) == 25 and rec.counts()["set_attribute"] == 24005
        monkeypatch.undo()
        rec.preload()  # bulk reads: a fresh parse (compiled gathers), the same values
        assert np.array_equal(rec.series(rec.objects_of_class("PxScene")[0], "elapsedTime").values, first)


def _last_value(path: Path) -> tuple[int, int]:
    """(byte offset, size) of the payload of the last 4-byte SET_ATTRIBUTE."""
    from pvdkit.ovd.tokenizer import open_ovd
    from pvdkit.types import Command

    _, table = open_ovd(path)
    rows = np.flatnonzero((table.kind == Command.SET_ATTRIBUTE) & (table.data_size == 4))
    r = int(rows[-1])
    return int(table.data_offset[r]), int(table.data_size[r])


def test_a_file_changed_in_place_is_parsed_again_even_with_its_old_size_and_time(tmp_path):
    path = Path(shutil.copy(FIXTURE, tmp_path / "v.ovd"))
    before = read_ovd_data(read_file(path), source_name=str(path))
    last = [before.load_samples(sid).payload(-1) for sid in range(len(before.series))]
    st = path.stat()
    off, size = _last_value(path)
    raw = bytearray(path.read_bytes())
    raw[off:off + size] = bytes(b ^ 0xFF for b in raw[off:off + size])
    path.write_bytes(bytes(raw))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size, same modification time
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    after = read_ovd_data(read_file(path), source_name=str(path))
    assert not from_cache(after), "a stale entry was used"
    assert_same(after, read_ovd_data(read_file(path), source_name=str(path), use_cache=False))
    changed = [sid for sid, b in enumerate(last) if after.load_samples(sid).payload(-1) != b]
    assert len(changed) == 1, "the new value is read"


def test_a_grown_or_truncated_file_is_parsed_again(tmp_path):
    path = Path(shutil.copy(FIXTURE, tmp_path / "v.ovd"))
    full = read_ovd_data(read_file(path), source_name=str(path))
    data = path.read_bytes()
    path.write_bytes(data[:-100])
    cut = read_ovd_data(read_file(path), source_name=str(path))
    assert cut.error is not None and full.error is None
    assert_same(cut, read_ovd_data(read_file(path), source_name=str(path), use_cache=False))
    path.write_bytes(data)
    again = read_ovd_data(read_file(path), source_name=str(path))
    assert again.error is None and again.n_commands == full.n_commands


def test_a_damaged_or_foreign_entry_is_ignored(tmp_path):
    path = Path(shutil.copy(FIXTURE, tmp_path / "v.ovd"))
    fresh = read_ovd_data(read_file(path), source_name=str(path))
    (entry,) = entries(tmp_path)
    good = entry.read_bytes()
    for bad in (b"", b"garbage" * 100, good[:100], good[: len(good) // 2], good[:16] + b"{" + good[17:]):
        entry.write_bytes(bad)
        assert_same(fresh, read_ovd_data(read_file(path), source_name=str(path)))
    # An entry written by other index code (another version, an edited indexer) is not used.
    assert from_cache(read_ovd_data(read_file(path), source_name=str(path)))
    stamp = cache._code_stamp()
    try:
        cache._code = stamp + " edited"
        assert not from_cache(read_ovd_data(read_file(path), source_name=str(path)))
    finally:
        cache._code = stamp


def test_an_entry_with_any_bit_flipped_is_never_trusted(tmp_path):
    """A flipped bit anywhere in an entry (a disk error, a torn copy) gave wrong counts, tracebacks
    or a MemoryError (the header's length) before entries carried their own CRC-32: every byte
    of the entry's head, and a spread of its header and arrays, each flipped, gives the fresh
    parse's answer."""
    path = every_command(tmp_path / "every.ovd")
    fresh = read_ovd_data(read_file(path), source_name=str(path), use_cache=False)
    read_ovd_data(read_file(path), source_name=str(path))  # writes the entry
    (entry,) = entries(tmp_path)
    good = entry.read_bytes()
    n = int.from_bytes(good[8:16], "little")
    offsets = sorted({*range(24), *range(24, 24 + n, max(1, n // 60)),
                      *range(24 + n, len(good), max(1, (len(good) - 24 - n) // 60))})
    buf = read_file(path)
    for off in offsets:
        for bit in (0, 7) if off < 24 else (off % 8,):
            bad = bytearray(good)
            bad[off] ^= 1 << bit
            entry.write_bytes(bytes(bad))
            assert cache.load(entry, buf, str(path)) is None, f"byte {off} bit {bit}: damaged entry used"
    entry.write_bytes(bad)
    assert_same(fresh, read_ovd_data(buf, source_name=str(path)))  # parsed again, and the entry rewritten
    assert cache.load(entry, buf, str(path)) is not None
    assert_same(fresh, read_ovd_data(read_file(path), source_name=str(path)))


def test_no_cache_for_bytes_in_memory_small_files_or_when_switched_off(tmp_path, monkeypatch):
    path = every_command(tmp_path / "every.ovd")
    read_ovd_data(path.read_bytes())  # bytes, no path
    read_ovd_data(read_file(path), source_name="<memory>")
    assert entries(tmp_path) == []
    monkeypatch.setenv(cache.ENV, "0")
    read_ovd_data(read_file(path), source_name=str(path))
    assert entries(tmp_path) == []
    monkeypatch.delenv(cache.ENV)
    monkeypatch.setenv("PVDKIT_INDEX_CACHE_MIN", str(path.stat().st_size + 1))
    read_ovd_data(read_file(path), source_name=str(path))
    assert entries(tmp_path) == []


def test_only_the_most_recently_used_entries_are_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "MAX_ENTRIES", 2)
    paths = [every_command(tmp_path / f"r{i}.ovd") for i in range(3)]
    for i, p in enumerate(paths):
        read_ovd_data(read_file(p), source_name=str(p))
        for e in entries(tmp_path):  # distinct times, oldest first
            os.utime(e, (e.stat().st_atime, e.stat().st_mtime - 10))
        assert len(entries(tmp_path)) == min(i + 1, 2)
    assert cache.entry_path(str(paths[0]), paths[0].stat().st_size) not in entries(tmp_path)


def test_a_damaged_recording_warns_the_same_from_the_cache(tmp_path):
    cut = tmp_path / "cut.ovd"
    cut.write_bytes(FIXTURE.read_bytes()[:500_000])
    for _ in range(2):
        with pytest.warns(PvdWarning, match="truncated at byte offset"):
            Recording.open(cut).close()


def test_opening_a_cached_recording_does_not_load_numba(tmp_path):
    path = shutil.copy(FIXTURE, tmp_path / "v.ovd")
    code = ("import sys; from pvdkit.recording import Recording; r = Recording.open(sys.argv[1]); "
            "print(len(r.frames), r.counts()['set_attribute'], 'numba' in sys.modules)")
    env = {**os.environ, jit.CACHE_ENV: str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    run = [sys.executable, "-c", code, str(path)]
    first = subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout.split()
    second = subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout.split()
    assert first == ["25", "24005", "True"]
    assert second == ["25", "24005", "False"]
