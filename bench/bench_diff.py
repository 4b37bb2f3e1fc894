"""Benchmark ``pvdkit diff`` against ``h5diff`` on the same pair of ~100 MB recordings.

Usage: ``python3 bench/bench_diff.py [--mb 100] [--repeat 3] [--keep DIR] [--venv DIR] [--physx [H5]]``

Generates recording A (``--mb`` MB of ``.ovd``, :func:`pvdkit.synthetic.write_large_recording`)
and B = A with one float value changed late in the file (a wheel's ``rotationSpeed`` at about
90 % of the frames), converts both to HDF5, then times (best of ``--repeat``):

* ``compare_files`` in-process on the ``.ovd`` pair and on the ``.h5`` pair (the library cost);
* ``python3 -m pvdkit.diff A.h5 B.h5`` as a process (what a CI job pays: interpreter, numpy
  and h5py imports included); the script also says whether the ``.h5`` path imported numba
  (it needs not: numba only indexes ``.ovd`` streams);
* ``h5diff A.h5 B.h5`` (Debian's hdf5-tools) on the same ``.h5`` pair, when installed — it
  compares raw datasets byte by byte with one tolerance and reports no identity, time or
  first divergence; it skips datasets it cannot compare (compound types with strings);
* both as processes on A and a byte-identical copy of A, and ``python -c "import h5py"``:
  the floor any Python diff of an ``.h5`` pays (interpreter, numpy, h5py). Processes run
  interleaved, round after round (best and median); ``--venv DIR`` runs them with a user's
  install (``DIR/bin/python``, ``pip install .`` without ``-e``) instead of this interpreter with
  the project on ``PYTHONPATH`` (whose editable-install finder and ``.pth`` files cost every
  process start).

``--physx`` adds the same table for PhysX's own ``dev_drive`` recording (or the ``.h5`` given)
and a copy with one ``WheelRigidBodyState.rotationSpeed`` perturbed.

Throughput is (size of A + size of B) / time, both in file MB/s and in "recording MB/s" (the
``.ovd`` size of the two recordings, the same for both formats); the closing ratio is
h5diff time / pvdkit time on the same ``.h5`` pair (> 1: pvdkit is faster). The script also
checks that pvdkit found exactly the planted difference.

``--fleet N`` instead times fleet recordings (many small series, 28,000 objects at N = 256):
``pvdkit record sedan --vehicles N --duration 5`` twice (two identical runs, stored in other
HDF5 segments) and once with ``--vary rigid_body.mass=1500:1510``, then, as processes (best of
``--repeat``), ``pvdkit diff`` of the identical pair and of the varied pair, and ``pvdkit series
--object`` of a wheel (the vehicle walk) and of an identity label (``pvdkit diff``'s identities).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pvdkit.convert import convert  # noqa: E402
from pvdkit.diff import compare_files  # noqa: E402
from pvdkit.ovd.tokenizer import open_ovd  # noqa: E402
from pvdkit.recording import Recording  # noqa: E402
from pvdkit.streams import OvdFileStream  # noqa: E402
from pvdkit.synthetic import write_large_recording  # noqa: E402
from pvdkit.types import Command  # noqa: E402

MB = 1e6
#: PhysX's own dev_drive recording (../shared/fixtures/ovd/dev_drive.ovd converted to .h5).
PHYSX_PAIR_SOURCE = ROOT / "tests" / "data" / "dev_drive.h5"
#: The environment of timed processes: the project importable, and bytecode written (a user's
#: install has its .pyc files; this machine's PYTHONDONTWRITEBYTECODE would time compiling).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPATH": str(ROOT)}


@dataclass
class Processes:
    """The interpreter the timed ``pvdkit diff`` processes run with, and their environment."""

    python: str = sys.executable
    env: dict[str, str] = field(default_factory=lambda: dict(ENV))
    label: str = f"this interpreter ({sys.executable}) with the project on PYTHONPATH"


#: Set by ``--venv``: a user's install (``pip install .``, no editable finder, no PYTHONPATH).
PROC = Processes()


def plant_difference(src: Path, dst: Path, cls: str = "Wheel",
                     attr: str = "rotationSpeed") -> tuple[int, str]:
    """Copy ``src`` to ``dst`` with one ``cls.attr`` value (a float32) changed (+1.0) at about
    90 % of the frames (a byte patch of the payload); returns (frame, attribute name)."""
    shutil.copyfile(src, dst)
    buf, table = open_ovd(src)
    rec = Recording.open(src)
    target = rec.cls(cls).attributes[attr].handle
    n_frames = len(rec.frames)
    want = int(n_frames * 0.9)
    rows = np.flatnonzero((table.kind == Command.SET_ATTRIBUTE) & (table.attribute == target)
                          & (table.frame == want))
    row = int(rows[len(rows) // 2])
    off = int(table.data_offset[row])
    value = np.frombuffer(bytes(buf[off:off + 4]), "<f4")[0]
    del buf, table
    rec.close()
    with open(dst, "r+b") as f:
        f.seek(off)
        f.write(np.float32(value + 1.0).tobytes())
    return want, attr


def best_of(repeat: int, fn) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=100.0, help="size of each .ovd recording in MB (100)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per measurement (best is kept)")
    ap.add_argument("--keep", metavar="DIR", help="write the recordings into DIR and keep them")
    ap.add_argument("--fleet", type=int, metavar="N", help="time fleet recordings of N vehicles instead")
    ap.add_argument("--venv", metavar="DIR",
                    help="time the diff processes with DIR/bin/python and the pvdkit installed there "
                         "(a user's install: pip install ., without -e), not this interpreter")
    ap.add_argument("--physx", metavar="H5", nargs="?", const=str(PHYSX_PAIR_SOURCE),
                    help="also time a real PhysX pair: this recording (default tests/data/dev_drive.h5, "
                         "PhysX's dev_drive.ovd converted) and a copy with one value perturbed")
    args = ap.parse_args()
    if args.venv:
        python = str(Path(args.venv) / "bin" / "python")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
        PROC.python, PROC.env, PROC.label = python, env, f"{python} (its installed pvdkit)"

    tmp = None
    if args.keep:
        d = Path(args.keep)
        d.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="bench_diff_")
        d = Path(tmp.name)
    try:
        if args.fleet:
            return bench_fleet(d, args.fleet, args.repeat)
        a_ovd, b_ovd, a_h5, b_h5 = d / "a.ovd", d / "b.ovd", d / "a.h5", d / "b.h5"
        t = time.perf_counter()
        info = write_large_recording(OvdFileStream(a_ovd), int(args.mb * MB))
        frame, attr = plant_difference(a_ovd, b_ovd)
        convert(a_ovd, a_h5)
        convert(b_ovd, b_h5)
        print(f"recordings: {info.frames:,} frames, {info.vehicles} vehicles, {info.wheels} wheels, "
              f"{info.set_attribute_commands:,} set_attribute commands each; planted +1.0 in "
              f"Wheel.{attr} at frame {frame} (setup {time.perf_counter() - t:.1f} s)")
        ovd_mb = (a_ovd.stat().st_size + b_ovd.stat().st_size) / MB
        h5_mb = (a_h5.stat().st_size + b_h5.stat().st_size) / MB
        print(f"sizes: .ovd pair {ovd_mb:.1f} MB, .h5 pair {h5_mb:.1f} MB")

        time_pair(a_ovd, b_ovd, a_h5, b_h5, frame, attr, ovd_mb, h5_mb, args.repeat)
        if args.physx:
            print()
            bench_physx_pair(d, Path(args.physx), args.repeat)
        return 0
    finally:
        if tmp is not None:
            tmp.cleanup()


def time_pair(a_ovd: Path, b_ovd: Path, a_h5: Path, b_h5: Path, frame: int, attr: str, ovd_mb: float,
              h5_mb: float, repeat: int) -> None:
    """Time pvdkit diff in-process and as a process, and h5diff, on the pair (which differs in
    ``attr`` at ``frame`` only) and on A against a byte-identical copy of itself."""
    compare_files(a_h5, b_h5)  # warm-up: numba caches, page cache
    rows = []
    for label, pa, pb, size in (("pvdkit diff .ovd (in-process)", a_ovd, b_ovd, ovd_mb),
                                ("pvdkit diff .h5 (in-process)", a_h5, b_h5, h5_mb)):
        sec, res = best_of(repeat, lambda pa=pa, pb=pb: compare_files(pa, pb))
        diff = res.differing_series
        ok = (len(diff) == 1 and diff[0].attribute == attr and diff[0].first_frame == frame
              and not res.objects_only_a and not res.schema)
        if not ok:
            print(f"  ERROR: {label} did not find exactly the planted difference: "
                  f"{[(s.object, s.attribute, s.first_frame) for s in diff[:5]]}")
        rows.append((label, sec, size, f"found {diff[0].object}.{diff[0].attribute} @ frame "
                                       f"{diff[0].first_frame}" if diff else "found nothing"))
    same = a_h5.with_name(a_h5.stem + "_copy.h5")
    shutil.copyfile(a_h5, same)
    h5diff = shutil.which("h5diff")
    processes = {"pvdkit diff": [PROC.python, "-m", "pvdkit.diff", "--quiet"]}
    if h5diff is None:
        print("h5diff not found: skipping the comparison (Debian: apt-get install hdf5-tools)")
    else:
        processes["h5diff"] = [h5diff]
    processes["import h5py (floor)"] = [PROC.python, "-c", "import h5py"]
    # A first run writes the .pyc files.
    subprocess.run([*processes["pvdkit diff"], str(a_h5), str(b_h5)], capture_output=True, env=PROC.env)
    # Processes interleaved round by round (the load of a shared machine drifts): best and median.
    as_process: dict[tuple[str, str], tuple[float, float]] = {}
    for pair, pb in (("pair", b_h5), ("identical", same)):
        times: dict[str, list[float]] = {tool: [] for tool in processes}
        last: dict[str, subprocess.CompletedProcess] = {}
        for _ in range(repeat):
            for tool, argv in processes.items():
                if tool.startswith("import") and pair != "pair":
                    continue
                t = time.perf_counter()
                files = [] if tool.startswith("import") else [str(a_h5), str(pb)]
                last[tool] = subprocess.run([*argv, *files], capture_output=True, text=True, env=PROC.env)
                times[tool].append(time.perf_counter() - t)
        for tool, ts in times.items():
            if not ts:
                continue
            best, median = min(ts), statistics.median(ts)
            as_process[tool, pair] = (best, median)
            proc = last[tool]
            if tool.startswith("import"):
                rows.append(("python -c 'import h5py' (floor)", best, h5_mb,
                             "interpreter + numpy + h5py imports", median))
                continue
            note = (proc.stdout.strip().splitlines() or [""])[0][:60]
            size = 2 * a_h5.stat().st_size / MB if pair == "identical" else h5_mb
            rows.append((f"{tool} .h5 {pair} (process)", best, size, f"exit {proc.returncode}; {note}",
                         median))
    print(f"processes run by {PROC.label}")
    print(f"{'':34} {'best s':>8} {'median s':>9} {'file MB/s':>10} {'rec. MB/s':>10}")
    for label, sec, size, note, *median in rows:
        med = f"{median[0]:9.3f}" if median else f"{'':9}"
        print(f"{label:34} {sec:8.3f} {med} {size / sec:10.1f} {ovd_mb / sec:10.1f}   {note}")
    probe = ("import sys; from pvdkit.diff.cli import main; main([sys.argv[1], sys.argv[2], '--quiet']); "
             "print('numba' in sys.modules)")
    out = subprocess.run([PROC.python, "-c", probe, str(a_h5), str(b_h5)], capture_output=True,
                         text=True, env=PROC.env).stdout.split()
    print(f"numba imported by the .h5 diff process: {'yes' if out and out[-1] == 'True' else 'no'}")
    if h5diff is not None:
        inproc = rows[1][1]
        h5d, mine = as_process["h5diff", "pair"], as_process["pvdkit diff", "pair"]
        h5s, mine_s = as_process["h5diff", "identical"], as_process["pvdkit diff", "identical"]
        print(f"h5diff time / pvdkit time (> 1: pvdkit faster), best / median: pair {h5d[0] / inproc:.2f}x "
              f"in-process, {h5d[0] / mine[0]:.2f}x / {h5d[1] / mine[1]:.2f}x as a process; identical files "
              f"{h5s[0] / mine_s[0]:.2f}x / {h5s[1] / mine_s[1]:.2f}x as a process")


def bench_physx_pair(d: Path, source: Path, repeat: int) -> None:
    """The same timings on PhysX's own recording and a copy with one wheel speed perturbed."""
    a_ovd, b_ovd, a_h5, b_h5 = d / "physx_a.ovd", d / "physx_b.ovd", d / "physx_a.h5", d / "physx_b.h5"
    convert(source, a_ovd)
    frame, attr = plant_difference(a_ovd, b_ovd, "WheelRigidBodyState", "rotationSpeed")
    convert(a_ovd, a_h5)
    convert(b_ovd, b_h5)
    ovd_mb = (a_ovd.stat().st_size + b_ovd.stat().st_size) / MB
    h5_mb = (a_h5.stat().st_size + b_h5.stat().st_size) / MB
    print(f"PhysX pair: {source.name} ({ovd_mb / 2:.1f} MB .ovd, {h5_mb / 2:.1f} MB .h5) and a copy with "
          f"WheelRigidBodyState.{attr} +1.0 at frame {frame}")
    time_pair(a_ovd, b_ovd, a_h5, b_h5, frame, attr, ovd_mb, h5_mb, repeat)


def bench_fleet(d: Path, n: int, repeat: int) -> int:
    """Time ``pvdkit diff`` and ``pvdkit series --object`` on fleet recordings (see ``--fleet``)."""
    env = ENV
    pvdkit = [sys.executable, "-m", "pvdkit"]
    runs = {"a": [], "a2": [], "b": ["--vary", "rigid_body.mass=1500:1510"]}
    t = time.perf_counter()
    for name, extra in runs.items():
        out = d / f"fleet_{name}.h5"
        if not out.exists():
            argv = ["record", "sedan", "--vehicles", str(n), "--duration", "5", "-o", str(out), "--quiet"]
            subprocess.run([*pvdkit, *argv, *extra], check=True, capture_output=True, env=env)
    a, a2, b = (str(d / f"fleet_{k}.h5") for k in runs)
    rec = Recording.open(a)
    print(f"fleet of {n}: {len(rec.objects):,} objects, {len(rec.series_table()):,} series, "
          f"{int(rec.series_table().count.sum()):,} samples per file (setup {time.perf_counter() - t:.1f} s)")
    from pvdkit.identity import object_identities

    label = object_identities(rec)[rec.objects_of_class("TireForce")[-1].index].label
    rec.close()
    jobs = [("diff, identical runs", ["diff", a, a2, "--quiet"]),
            ("diff, masses spread", ["diff", a, b, "--quiet"]),
            ("series --object <wheel>", ["series", a, "TireForce.lngForce", "--object",
                                         f"vehicle_{n - 1:03d}/wheel 1"]),
            ("series --object <identity label>", ["series", a, "TireForce.lngForce", "--object", label])]
    for what, argv in jobs:
        sec, proc = best_of(repeat, lambda argv=argv: subprocess.run([*pvdkit, *argv], capture_output=True,
                                                                     text=True, env=env))
        print(f"{what:34} {sec:6.2f} s  (exit {proc.returncode})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
