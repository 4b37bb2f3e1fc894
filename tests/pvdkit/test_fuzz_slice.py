"""A bounded slice of the fuzz harness (``bench/fuzz_pvd.py``) as a test: every mutated
``.ovd`` and ``.h5`` case must end as a result or a PvdError — no crash, hang or MemoryError.

The full runs (``--cases 100000``) are done on demand; this slice keeps the habit in CI and
checks that the harness itself tells failures apart (so that zero failures means something).
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _harness():
    # Spawned workers import the harness by name, with the parent's sys.path: put bench/ on it.
    if str(ROOT / "bench") not in sys.path:
        sys.path.insert(0, str(ROOT / "bench"))
    return importlib.import_module("fuzz_pvd")


fuzz = _harness()


@pytest.fixture(scope="module")
def seeds(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("fuzz_seeds")
    fuzz.build_seeds(folder)
    return folder


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("fmt", "cases"), [("ovd", 240), ("h5", 100)])
def test_fuzz_slice_has_no_crash_hang_or_memory_failure(seeds, tmp_path, fmt, cases):
    report = fuzz.run(fmt, cases, seed=2024, workers=1, timeout=5.0, memory_gib=2.0, out=tmp_path,
                      seeds_dir=seeds)
    assert report.n == cases
    failures = "\n\n".join(f"case {i} ({label}) {outcome}:\n{detail}"
                           for i, outcome, label, detail in report.failures[:3])
    assert report.failed == 0, failures
    assert report.counts["ok"] > 0 and report.counts["pvderror"] > 0  # both paths were exercised


def test_cases_are_deterministic_and_cover_every_mutation(seeds):
    blobs = {k: p.read_bytes() for k, p in fuzz.build_seeds(seeds)["ovd"].items()}
    a = fuzz.make_case("ovd", blobs, 7, 123)
    b = fuzz.make_case("ovd", blobs, 7, 123)
    assert (a.kinds, a.seed, a.data) == (b.kinds, b.seed, b.data)
    kinds = {k for i in range(400) for k in fuzz.make_case("ovd", blobs, 7, i).kinds}
    assert kinds == set(fuzz.OVD_KINDS)


def test_the_harness_tells_crashes_and_memory_errors_apart(seeds, monkeypatch):
    w = fuzz._Worker("ovd", fuzz.build_seeds(seeds), 0)
    try:
        def crash(case, worker):
            raise IndexError("a bug")

        def memory(case, worker):
            raise MemoryError

        monkeypatch.setattr(fuzz, "exercise", crash)
        outcome, _, detail = w.run(0)
        assert outcome == "crash" and "IndexError: a bug" in detail
        monkeypatch.setattr(fuzz, "exercise", memory)
        assert w.run(1)[0] == "memory"
    finally:
        w.close()


@pytest.mark.timeout(120)
def test_the_harness_kills_a_case_over_its_time_cap_and_keeps_the_reproducer(seeds, tmp_path):
    # A cap of 1 ms is below what any case takes (open, every series, a round trip: tens of ms
    # on the PhysX fixture), so the first case's worker is killed mid-case whatever the machine.
    w = fuzz._Worker("ovd", fuzz.build_seeds(seeds), 1)
    try:
        slow = next(i for i in range(1000) if fuzz.make_case("ovd", w.seeds, 1, i).seed == "fixture")
        assert _seconds(w, slow) > 0.005
    finally:
        w.close()
    report = fuzz.run("ovd", 2, seed=1, workers=1, timeout=0.001, out=tmp_path, seeds_dir=seeds, first=slow)
    assert report.n == 2  # the next case ran, on a new worker
    killed = [detail for i, outcome, _, detail in report.failures if i == slow and outcome == "hang"]
    assert killed and killed[0].startswith("no result within 0.001 s")
    saved = " ".join(sorted(p.name for p in tmp_path.iterdir()))
    assert f"ovd_hang_{slow}_" in saved and ".ovd" in saved and ".txt" in saved


def _seconds(w, index: int) -> float:
    t = time.perf_counter()
    w.run(index)
    return time.perf_counter() - t
