"""Regenerate (or check) the golden recordings in this folder.

The goldens are the default car (PhysX's snippet sedan, direct drive) driving a few scenarios
as pure Vehicle2 (``pvdkit record --pure-vehicle2``: simcore's own rigid body, no PhysX actor
layer), recorded at 60 Hz with 3 substeps into pvdkit's HDF5 format:

    golden_accelerate.h5   full throttle from rest (5 s)
    golden_brake.h5        full throttle for 3 s, then full brake (6 s)
    golden_step-steer.h5   rolling at 15 m/s, steering step at 1 s (5 s)
    golden_slalom.h5       rolling at 12 m/s, sinusoidal steering (8 s)

(``pvdkit record`` without arguments writes ``default_accelerate.h5`` here; the goldens have
their own names so that it never overwrites one.)

``python3 recordings/regenerate.py`` rewrites them (after an intended change of the physics or
of the schema). ``python3 recordings/regenerate.py --check`` records each scenario again into a
temporary folder and compares every series of every object with the golden; it prints the first
differences and exits with status 1 if any (simulation and recording are deterministic, so a
golden matches exactly until simcore's behaviour changes).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pvdkit.recording import ListSeries, Recording  # noqa: E402
from simcore.cli.record import record  # noqa: E402

#: (scenario, file name) of every golden recording.
GOLDENS = [(s, f"golden_{s}.h5") for s in ("accelerate", "brake", "step-steer", "slalom")]


def series_of(rec: Recording) -> dict[tuple[str, str, str], tuple[np.ndarray, object]]:
    """``(class, object name, attribute) -> (frames, raw values)`` of a recording."""
    out = {}
    for obj in rec.objects:
        for s in rec.all_series(obj):
            key = (obj.cls.name if obj.cls else "?", obj.name, s.name)
            raw = (np.asarray(s.added), s.items) if isinstance(s, ListSeries) else s.raw
            out[key] = (np.asarray(s.frames), raw)
    return out


def differences(golden: Path, fresh: Path, limit: int = 10) -> list[str]:
    """Human-readable differences between two recordings (empty when they hold the same data)."""
    a, b = series_of(Recording.open(golden)), series_of(Recording.open(fresh))
    out = [f"only in {golden.name}: {k}" for k in sorted(set(a) - set(b))]
    out += [f"only in the new recording: {k}" for k in sorted(set(b) - set(a))]
    for k in sorted(set(a) & set(b)):
        (fa, va), (fb, vb) = a[k], b[k]
        same = np.array_equal(fa, fb) and _equal(va, vb)
        if not same:
            out.append(f"{k[1]}.{k[2]} ({k[0]}) differs")
        if len(out) >= limit:
            break
    return out


def _equal(a: object, b: object) -> bool:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(np.array_equal(np.asarray(a), np.asarray(b)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare fresh recordings with the goldens")
    args = ap.parse_args(argv)
    if not args.check:
        for scenario, name in GOLDENS:
            s = record(None, scenario, out=HERE / name, physx=False)
            print(f"{name}: {s.frames} frames, {s.file_size / 1024:.0f} KB")
        return 0
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for scenario, name in GOLDENS:
            fresh = Path(tmp) / name
            record(None, scenario, out=fresh, physx=False)
            diff = differences(HERE / name, fresh)
            print(f"{name}: {'OK' if not diff else 'DIFFERS'}")
            for line in diff:
                print(f"  {line}")
            failed |= bool(diff)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
