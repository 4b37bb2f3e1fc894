"""Record PhysX's sample vehicle scene with real PhysX under a named drive profile (a development tool).

Never imported by the project's packages. It loads PhysX's recording script ``record.py`` (from
``--physx-tools DIR``, else ``$PVDKIT_PHYSX_TOOLS``, else the project's ``tools/physx``) as a
module, substitutes its ``profile_controls`` with one of :data:`PROFILES` and runs its ``drive``
mode: scene ``vehicle_read_write.usda`` (Basic, Standard, Tank, Raw), dt = 1/60 s, CPU PhysX,
``requestedGear = 255`` (automatic) on Standard and Tank as for the ``dev_drive.ovd`` fixture,
controls written before the step they affect. Needs the ``physx`` extra
(``pip install -e '.[physx]'``: ovphysx, physx-usd-schemas).

    python3 bench/physx_record.py PROFILE OUT.ovd STEPS [--csv CSV] [--physx-tools DIR]

prints PhysX's wall time of the stepping loop and the milliseconds per step. From Python:

    from physx_record import PROFILES, record_profile
    seconds = record_profile("/tmp/x.ovd", "holdout_slalom", 600)

A profile is a function ``step -> dict(accel, brake0, brake1, steer, thrust=(thrust0, thrust1))``
(the Raw vehicle gets record.py's per-wheel equivalent). The holdout profiles are timed for the
Standard (engine, autobox) vehicle; Basic and Raw are much weaker (direct drive, 250 N·m at the
front wheels) and reach only a fraction of its speed under the same commands.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

DEFAULT_TOOLS = Path(__file__).resolve().parents[1] / "tools" / "physx"
TOOLS_ENV = "PVDKIT_PHYSX_TOOLS"
DT = 1.0 / 60.0

Controls = dict[str, Any]


class PhysXToolsError(RuntimeError):
    """The PhysX recording tools (record.py, ovphysx) cannot be loaded."""


def _controls(accel: float = 0.0, brake0: float = 0.0, brake1: float = 0.0, steer: float = 0.0,
              thrust: tuple[float, float] = (1.0, 1.0)) -> Controls:
    return dict(accel=float(accel), brake0=float(brake0), brake1=float(brake1), steer=float(steer),
                thrust=(float(thrust[0]), float(thrust[1])))


def _tank_thrust(steer: float) -> tuple[float, float]:
    """Track thrusts that turn the tank the way ``steer`` turns a wheeled car (record.py's dev
    profile pairs steer -0.4 with thrusts 0.6 / 1.0): the inner track is slowed by |steer|."""
    return (1.0 - max(0.0, -steer), 1.0 - max(0.0, steer))


# --- profiles ---------------------------------------------------------------------------------

def dev(i: int) -> Controls:
    """record.py's own developer-visible profile (8 s), unchanged."""
    c = _controls()
    if i < 90:
        c["accel"] = 0.7 * i / 90.0
    elif i < 180:
        c.update(accel=0.8, steer=-0.4, thrust=(0.6, 1.0))
    elif i < 240:
        pass
    elif i < 330:
        c["brake0"] = 0.6
    elif i < 390:
        c["accel"] = 1.0
    else:
        c.update(accel=0.2, brake1=1.0, steer=0.3)
    return c


def holdout_slalom(i: int) -> Controls:
    """10 s: full throttle 3.3 s (Standard reaches ~10 m/s, Tank ~17), 3.2 s slalom at part
    throttle (0.25) with a sinusoidal steer of amplitude 0.3 at 0.5 Hz (tank: differential
    thrust), service brake 0.9 to a stop, then stand still the last 1 s on a light brake (0.3)."""
    t = i * DT
    if t < 3.3:
        return _controls(accel=1.0)
    if t < 6.5:
        s = 0.3 * math.sin(2.0 * math.pi * 0.5 * (t - 3.3))
        return _controls(accel=0.25, steer=s, thrust=_tank_thrust(s))
    if t < 9.0:
        return _controls(brake0=0.9)
    return _controls(brake0=0.3)


def holdout_stop_go(i: int) -> Controls:
    """10 s of stop-and-go: three throttle pulses (0.9 for 0.5 s, released 1 s), a hard brake
    (1.0, 1.25 s) to rest, 0.25 s standing with everything released, a standing start
    (accelerator 0.6 for 0.6 s, slight steer -0.15) and a coast with everything released to the
    end (Standard and Tank slow from ~2 m/s to ~0.5 / 0.3 m/s by 10 s; Basic and Raw have no
    drag and keep creeping at ~0.3 m/s)."""
    t = i * DT
    if t < 4.5:
        on = (t % 1.5) < 0.5
        return _controls(accel=0.9 if on else 0.0)
    if t < 5.75:
        return _controls(brake0=1.0)
    if t < 6.0:
        return _controls()
    if t < 6.6:
        return _controls(accel=0.6, steer=-0.15, thrust=_tank_thrust(-0.15))
    return _controls()


def holdout_high_speed(i: int) -> Controls:
    """10 s: full throttle 6 s straight, then a handbrake turn (brake1 1.0, steer -0.5, tank
    thrusts 0.2 / 1.0, throttle off) for 1.5 s, then handbrake released, wheels straight and a
    service brake 0.5 to the end."""
    t = i * DT
    if t < 6.0:
        return _controls(accel=1.0)
    if t < 7.5:
        return _controls(brake1=1.0, steer=-0.5, thrust=(0.2, 1.0))
    return _controls(brake0=0.5)


def holdout_standstill(i: int) -> Controls:
    """Parked: service brake and handbrake held from the first step, nothing else; the vehicles
    settle on their suspensions and stay at rest (sticky tire rows active throughout, the
    actors' sleep counters cycling)."""
    return _controls(brake0=1.0, brake1=1.0)


PROFILES: dict[str, Callable[[int], Controls]] = {
    "dev": dev,
    "holdout_slalom": holdout_slalom,
    "holdout_stop_go": holdout_stop_go,
    "holdout_high_speed": holdout_high_speed,
    "holdout_standstill": holdout_standstill,
}


# --- loading record.py ------------------------------------------------------------------------

def tools_dir(override: str | Path | None = None) -> Path:
    """Where record.py and ovcommon.py are: ``override``, else ``$PVDKIT_PHYSX_TOOLS``, else the default."""
    if override is not None:
        return Path(override)
    env = os.environ.get(TOOLS_ENV)
    return Path(env) if env else DEFAULT_TOOLS


_loaded: dict[Path, ModuleType] = {}


def load_record_module(directory: str | Path | None = None) -> ModuleType:
    """``record.py`` from the tools directory, imported as a module (cached per directory)."""
    d = tools_dir(directory).resolve()
    if d in _loaded:
        return _loaded[d]
    script = d / "record.py"
    if not script.is_file() or not (d / "ovcommon.py").is_file():
        raise PhysXToolsError(f"PhysX recording tools not found: no record.py/ovcommon.py in {d} "
                              f"(set --physx-tools DIR or ${TOOLS_ENV})")
    if importlib.util.find_spec("ovphysx") is None:
        raise PhysXToolsError("ovphysx is not installed (pip install -e '.[physx]')")
    if str(d) not in sys.path:
        sys.path.insert(0, str(d))  # record.py does `import ovcommon`
    spec = importlib.util.spec_from_file_location(f"_physx_record_tools_{len(_loaded)}", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ImportError as e:
        raise PhysXToolsError(f"cannot load {script}: {e}") from e
    if not callable(getattr(module, "run_vehicles", None)) or not hasattr(module, "profile_controls"):
        raise PhysXToolsError(f"{script} has no run_vehicles/profile_controls: not PhysX's record.py")
    _loaded[d] = module
    return module


def record_profile(out: str | Path, profile: str, steps: int, csv: str | Path | None = None) -> float:
    """Record ``steps`` steps of the vehicle scene driven by ``PROFILES[profile]`` to ``out`` (a
    ``.ovd`` path or ``tcp://HOST:PORT``), optionally with record.py's readback CSV; returns PhysX's
    wall time in seconds of the stepping loop (recording on; from before the first step to after
    the last, control writes included, scene load/attach excluded; with ``csv`` the per-step
    readback is inside the loop too, so time without it)."""
    if profile not in PROFILES:
        raise KeyError(f"unknown profile {profile!r}; one of {', '.join(PROFILES)}")
    if steps <= 0:
        raise ValueError(f"steps must be positive, got {steps}")
    rec = load_record_module()
    original = rec.profile_controls
    rec.profile_controls = PROFILES[profile]  # run_vehicles looks it up in its module globals
    try:
        csv_path = None if csv is None else str(csv)
        return float(rec.run_vehicles(str(out), int(steps), "drive", csv_path=csv_path, auto_gear=True))
    finally:
        rec.profile_controls = original


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("profile", choices=sorted(PROFILES))
    ap.add_argument("out", help="output .ovd file (or tcp://HOST:PORT)")
    ap.add_argument("steps", type=int)
    ap.add_argument("--csv", help="also write record.py's per-step readback CSV (slows the loop)")
    ap.add_argument("--physx-tools", metavar="DIR",
                    help=f"directory of record.py/ovcommon.py (default ${TOOLS_ENV} or {DEFAULT_TOOLS})")
    a = ap.parse_args(argv)
    if a.physx_tools:
        os.environ[TOOLS_ENV] = a.physx_tools
    try:
        load_record_module()
        seconds = record_profile(a.out, a.profile, a.steps, a.csv)
    except (PhysXToolsError, ValueError) as e:
        print(f"physx_record: error: {e}", file=sys.stderr)
        return 2
    print(f"{a.profile}: {a.steps} steps to {a.out}: PhysX loop {seconds:.3f} s, "
          f"{1000.0 * seconds / a.steps:.3f} ms/step")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
