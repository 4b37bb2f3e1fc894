"""``pvdkit replay`` speed: milliseconds per recorded step, against PhysX's own recording time.

On PhysX's 8 s drive (``tests/data/dev_drive.h5``: 480 steps, four vehicles — direct, engine,
tank, raw) it times, after a warm-up (numba compilation excluded):

* ``load``: ``vehicles_from_recording`` (the recording read into params, commands and states);
* ``open-loop`` and ``one-step``: the re-simulation of all four vehicles (the replay engine
  without recording or report), per recorded step;
* ``open-loop + .h5``: the same while recording the replay (PhysX's layout) to an ``.h5``;
* ``PhysX``: when ``ovphysx`` and PhysX's recording tool are available (``bench/physx_record.py``,
  ``tools/physx``), PhysX stepping the same scene under the same profile with OmniPVD
  recording on, per step — and the ratio of replay to PhysX.

Best and median of ``--repeats`` runs: the machine is shared and noisy, so compare within one run.

    python3 bench/bench_replay.py [--repeats 5] [--recording FILE] [--no-physx] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from simcore.replay import vehicles_from_recording
from simcore.replay.engine import build, replay

HERE = Path(__file__).resolve().parent
DEV_DRIVE = HERE.parent / "tests" / "data" / "dev_drive.h5"


def _best_median(values: list[float]) -> tuple[float, float]:
    return min(values), statistics.median(values)


def _time_replay(recording: Path, mode: str, repeats: int, record: bool = False) -> list[float]:
    """Seconds per recorded step of ``repeats`` replays (all vehicles)."""
    out = []
    for _ in range(repeats):
        run = vehicles_from_recording(recording)
        vehicles = build(run)
        with tempfile.TemporaryDirectory() as tmp:
            around = None
            if record:
                from simcore.cli.record import open_writer
                from simcore.pvd.recorder import PvdRecorder

                recorder = PvdRecorder(open_writer(Path(tmp) / "replay.h5", "bench_replay"),
                                       timestamps="frame")
                for rep in vehicles:
                    recorder.attach_fleet(rep.fleet)
                around = recorder.frame
            t = time.perf_counter()
            if around is not None:
                replay(run, mode, vehicles=vehicles, around_step=around)
                recorder.close()
            else:
                replay(run, mode, vehicles=vehicles)
            out.append((time.perf_counter() - t) / run.scene.nb_steps)
    return out


def _time_load(recording: Path, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        vehicles_from_recording(recording)
        out.append(time.perf_counter() - t)
    return out


def _time_physx(steps: int, repeats: int) -> list[float] | str:
    """Seconds per step of PhysX recording the scene, or why it could not run."""
    sys.path.insert(0, str(HERE))
    try:
        import physx_record  # a development tool beside this bench: records with real PhysX
    except Exception as exc:  # noqa: BLE001 - any reason PhysX is unavailable is reported, not raised
        return f"PhysX not available ({type(exc).__name__}: {exc})"
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(repeats):
            try:
                seconds = physx_record.record_profile(Path(tmp) / f"physx_{k}.ovd", "dev", steps)
            except Exception as exc:  # noqa: BLE001 - as above
                return f"PhysX not available ({type(exc).__name__}: {exc})"
            out.append(seconds / steps)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--recording", type=Path, default=DEV_DRIVE)
    ap.add_argument("--no-physx", action="store_true", help="skip the PhysX timing")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()

    run = vehicles_from_recording(args.recording)
    steps = run.scene.nb_steps
    replay(run, "open-loop")  # warm-up: compiles (or loads) every kernel
    figures: dict[str, object] = {"recording": str(args.recording), "steps": steps,
                                  "vehicles": len(run.vehicles)}
    figures["load_s"] = _best_median(_time_load(args.recording, args.repeats))
    for mode in ("open-loop", "one-step"):
        figures[f"{mode}_ms_per_step"] = tuple(1e3 * x for x in _best_median(
            _time_replay(args.recording, mode, args.repeats)))
    figures["open-loop+h5_ms_per_step"] = tuple(1e3 * x for x in _best_median(
        _time_replay(args.recording, "open-loop", max(1, args.repeats // 2), record=True)))
    physx = "skipped" if args.no_physx else _time_physx(steps, min(args.repeats, 3))
    if isinstance(physx, list):
        figures["physx_ms_per_step"] = tuple(1e3 * x for x in _best_median(physx))
    else:
        figures["physx"] = physx
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"replay of {args.recording.name}: {steps} steps x {len(run.vehicles)} vehicles (best / median)")
    load = figures["load_s"]
    print(f"  load the recording      {load[0]:8.3f} / {load[1]:.3f} s")
    for key, label in (("open-loop_ms_per_step", "open-loop"), ("one-step_ms_per_step", "one-step"),
                       ("open-loop+h5_ms_per_step", "open-loop + .h5")):
        b, m = figures[key]
        print(f"  {label:22s}  {b:8.3f} / {m:.3f} ms per recorded step ({1e3 * b / len(run.vehicles):.0f} us "
              "per vehicle-step)")
    if "physx_ms_per_step" in figures:
        pb, pm = figures["physx_ms_per_step"]
        ob, om = figures["open-loop_ms_per_step"]
        print(f"  PhysX (record, dev)     {pb:8.3f} / {pm:.3f} ms per step")
        print(f"  replay / PhysX          {ob / pb:8.2f} / {om / pm:.2f} x")
    else:
        print(f"  PhysX: {figures['physx']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
