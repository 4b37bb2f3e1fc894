"""The bulk comparison (:mod:`pvdkit.diff.bulk`, all object pairs at once) gives exactly what
the per-object path gives: every series diff, in the same order, with the same numbers and
value texts, for ``.ovd`` and ``.h5`` inputs and every option that changes the comparison."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pvdkit import convert
from pvdkit.diff.engine import Comparison, open_recording
from pvdkit.diff.report import format_text
from pvdkit.diff.result import DiffOptions, FrameWindow
from pvdkit.diff.tolerance import Tolerance, ToleranceConfig, ToleranceRule
from tests.pvdkit.diff_helpers import Spec, pair

OPTIONS = {
    "default": DiffOptions(),
    "by_time": DiffOptions(align="time"),
    "window": DiffOptions(frames=FrameWindow(3, 40)),
    "tolerant": DiffOptions(ToleranceConfig(Tolerance(atol=1e-3, rtol=1e-4))),
    "nan_equal": DiffOptions(ToleranceConfig(Tolerance(nan_equal=True))),
    "rules": DiffOptions(ToleranceConfig(Tolerance(), (ToleranceRule("*.lngForce", atol=0.5),
                                                        ToleranceRule("*.gear", ignore=True)))),
}


def _both(a: Path, b: Path, options: DiffOptions) -> tuple[dict, dict, str, str]:
    """Result dicts (every series) and text reports of the per-object and the bulk path."""
    out = []
    for bulk in (False, True):
        ra, _ = open_recording(str(a), "A")
        rb, _ = open_recording(str(b), "B")
        ra.preload()
        rb.preload(ra)
        res = Comparison(ra, rb, options, str(a), str(b), bulk=bulk).run()
        d = res.to_dict(include_equal=True)
        d.pop("seconds")
        res.seconds = 0.0
        out.append((d, format_text(res)))
        ra.close()
        rb.close()
    return out[0][0], out[1][0], out[0][1], out[1][1]


def _assert_same(a: Path, b: Path, options: DiffOptions) -> dict:
    slow, fast, slow_text, fast_text = _both(a, b, options)
    for x, y in zip(slow["series"], fast["series"], strict=False):
        assert x == y
    assert slow == fast
    assert slow_text == fast_text
    return fast


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> tuple[Path, Path, Path]:
    """Eight-vehicle recordings: A, an identical run, and one with masses spread."""
    from simcore.cli.record import record

    d = tmp_path_factory.mktemp("fleet")
    a, a2, b = d / "a.h5", d / "a2.h5", d / "b.h5"
    record("sedan", vehicles=8, duration=0.5, out=a)
    record("sedan", vehicles=8, duration=0.5, out=a2)
    record("sedan", vehicles=8, duration=0.5, out=b, vary="rigid_body.mass=2000:2100")
    return a, a2, b


@pytest.mark.parametrize("opt", list(OPTIONS))
def test_fleet_pairs_same_as_per_object_path(fleet, opt):
    a, a2, b = fleet
    equal = _assert_same(a, a2, OPTIONS[opt])
    assert equal["equal"]
    different = _assert_same(a, b, OPTIONS[opt])
    assert not different["equal"]
    assert different["summary"]["attributes_compared"] > 1000


def test_fleet_ovd_pair_same_as_per_object_path(fleet, tmp_path):
    a, _, b = fleet
    oa, ob = tmp_path / "a.ovd", tmp_path / "b.ovd"
    convert.convert(a, oa)
    convert.convert(b, ob)
    _assert_same(oa, ob, DiffOptions())
    _assert_same(oa, b, DiffOptions())


CRAFTED = {
    "perturbed": Spec(perturb={(1, "lngForce", 7): 0.25, (2, "rotationSpeed", 12): -1.0}),
    "nan": Spec(nan={(0, 5), (3, 9)}),
    "missing_tire": Spec(drop_tire=2),
    "extra_attribute": Spec(extra_attribute=True),
    "retyped": Spec(retype_rotation=True),
    "stops_early": Spec(stop_rotation_after=11),
    "swapped_references": Spec(swap_tires_at=6),
    "list_change": Spec(remove_wheel_at=8),
    "gear": Spec(gear_change=(4, 3)),
    "enum_mode": Spec(mode_at=(9, "eSPORT")),
    "flags_width": Spec(mode_storage=np.uint16),
    "shorter": Spec(frames=15),
    "shifted_times": Spec(first_frame=2),
}


@pytest.mark.parametrize("case", list(CRAFTED))
@pytest.mark.parametrize("fmt", ["ovd", "h5"])
def test_crafted_pairs_same_as_per_object_path(tmp_path, case, fmt):
    a, b = pair(tmp_path, Spec(), CRAFTED[case])
    if fmt == "h5":
        convert.convert(a, tmp_path / "a.h5")
        convert.convert(b, tmp_path / "b.h5")
        a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    for opt in OPTIONS.values():
        _assert_same(a, b, opt)
        _assert_same(a, a, opt)


def _edited_copy(src: Path, dst: Path, edit) -> Path:
    """A byte copy of an ``.h5`` recording with ``edit(file)`` applied to its pools in place:
    the same segments and pools as ``src`` (the bulk path's shared-layout case)."""
    import shutil

    import h5py

    shutil.copyfile(src, dst)
    with h5py.File(dst, "r+") as f:
        edit(f)
    return dst


def _values_changed(f) -> None:
    v = f["pools/set_float32x1/values"]
    v[5:40] = v[5:40] * 1.5 + 0.25
    w = f["pools/set_float32x3/values"]
    row = w[7]
    row[1] = np.nan
    w[7] = row
    u = f["pools/set_uint32x1/values"]
    u[3:9] = u[3:9] + 1


def _frames_moved(f) -> None:
    _values_changed(f)
    fr = f["pools/set_float32x1/frames"]
    n = fr.shape[0]
    tail = fr[n - 400:n]
    tail[::80] = np.maximum(tail[::80] - 1, 0)  # a few late samples moved to the frame before
    fr[n - 400:n] = tail


def _most_values_changed(f) -> None:
    """Half the rows of a pool differ, and many frames moved: the counts over dense row flags."""
    v = f["pools/set_float32x1/values"]
    v[::2] = v[::2] * 1.5 + 0.25
    fr = f["pools/set_float32x3/frames"]
    n = fr.shape[0]
    tail = fr[n // 2:]
    tail[::4] = np.maximum(tail[::4] - 1, 0)
    fr[n // 2:] = tail


@pytest.mark.parametrize("edit", [_values_changed, _frames_moved, _most_values_changed])
@pytest.mark.parametrize("opt", list(OPTIONS))
def test_shared_layout_pairs_same_as_per_object_path(fleet, tmp_path, edit, opt):
    """B stored exactly as A (same segments and pools) with values, NaN and frames changed in
    place: the in-place comparison of whole pools agrees with the per-object path."""
    a, _, _ = fleet
    b = _edited_copy(a, tmp_path / "b.h5", edit)
    different = _assert_same(a, b, OPTIONS[opt])
    assert not different["equal"]
    _assert_same(b, a, OPTIONS[opt])


@pytest.mark.parametrize("density", [0.0, 0.001, 0.2, 1.0])
def test_row_counter_counts_set_flags_in_ranges(density):
    """Sparse flags (binary search) and dense flags (running sum) count alike, empty and
    reversed ranges included."""
    from pvdkit.diff.bulk import _Counter

    rng = np.random.default_rng(7)
    flags = rng.random(5000) < density
    start = rng.integers(0, 5001, 400)
    end = rng.integers(0, 5001, 400)
    want = [int(flags[s:e].sum()) for s, e in zip(start, end, strict=True)]
    counter = _Counter(flags)
    assert (counter.running is not None) == (flags.sum() > _Counter.DENSE * len(flags))
    assert counter.count(start, end).tolist() == want
