"""``pvdkit record``: simulate a simcore vehicle through a driving scenario and record it.

The command reaches ``pvdkit``'s command line through the ``pvdkit.commands`` entry point
``record = "simcore.cli:RECORD"`` (see :mod:`simcore.cli`); this module is imported only when
the command runs. The library function :func:`record` does the work (the CLI subcommand only
parses and prints):
it builds the vehicle (a preset name or a PhysX vehicle JSON file), attaches a
:class:`~simcore.pvd.recorder.PvdRecorder` writing to ``.ovd`` (PhysX's format, byte for byte)
or ``.h5`` (pvdkit's HDF5 recording), runs the scenario and returns a :class:`RecordSummary`.

Without arguments the default car (PhysX's snippet sedan) drives the default scenario into
``recordings/default_<scenario>.h5``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pvdkit.outputs import check_output, path_argument, require_input
from pvdkit.signals import Terminated, exit_status, interruption_reason, terminate_as_exception
from pvdkit.streams import OvdFileStream
from pvdkit.terminal import ProgressBar, on_terminal
from pvdkit.types import PvdError
from pvdkit.writer import OmniPvdWriter
from simcore.cli import RECORD_HELP

#: Where ``pvdkit record`` writes when no output is given.
DEFAULT_DIRECTORY = Path("recordings")
#: Default time step (s): PhysX snippets' 60 Hz.
DEFAULT_DT = 1.0 / 60.0
_SUFFIXES = (".ovd", ".h5", ".hdf5")
#: Vehicles built by the engine-drive package besides the presets: name -> (module, function).
ENGINE_DRIVE_VEHICLES = {
    "tank": ("simcore.drivetrain.engine_drive.vehicles", "tank_params"),
    "truck": ("simcore.drivetrain.engine_drive.vehicles", "truck_params"),
}


class RecordError(PvdError, ValueError):
    """Bad input to :func:`record`: unknown vehicle or scenario, unreadable vehicle file, bad
    output path, bad numbers.

    A :class:`~pvdkit.types.PvdError` (a user error: ``pvdkit record`` prints it as one line,
    exit status 2) and, for callers that caught it as such before, a ``ValueError``.
    """


@dataclass(frozen=True)
class RecordSummary:
    """What a recording run produced."""

    path: Path
    vehicle: str
    scenario: str
    steps: int
    frames: int
    objects: int
    file_size: int
    wall_time: float
    simulated_time: float
    vehicles: int = 1
    #: Wall time of the first step (s): creating every vehicle's object graph, writing the params
    #: and the first commit — for a fleet of a short run, most of the wall time.
    first_step_time: float = 0.0
    #: The kernels were compiled during this run (a fresh install's first run): the wall time and
    #: the first step include it, and the summary says so.
    compiled: bool = False

    @property
    def us_per_vehicle_step(self) -> float:
        """Wall time per vehicle per step after the first, simulation and recording together,
        closing the file included (µs); over every step when there is only one."""
        if self.steps > 1:
            return 1e6 * (self.wall_time - self.first_step_time) / ((self.steps - 1) * self.vehicles)
        return 1e6 * self.wall_time / max(self.steps * self.vehicles, 1)

    @property
    def realtime_factor(self) -> float:
        """Simulated time / wall time (> 1: faster than real time)."""
        return self.simulated_time / self.wall_time if self.wall_time > 0 else float("inf")

    def format(self) -> str:
        """The summary lines ``pvdkit record`` prints."""
        return "\n".join((
            f"recorded {self.vehicle} / {self.scenario} -> {self.path}",
            f"  frames:        {self.frames} ({self.steps} steps, {self.simulated_time:.3f} s simulated)",
            f"  objects:       {self.objects}",
            f"  file size:     {_human_bytes(self.file_size)} "
            f"({self.file_size / max(self.frames, 1):.0f} B/frame)",
            f"  wall time:     {self.wall_time:.2f} s"
            + (" (compiling the kernels included: first run only)" if self.compiled else ""),
            f"  sim / wall:    {self.realtime_factor:.2f}x real time",
            *([f"  vehicles:      {self.vehicles}"] if self.vehicles > 1 else []),
            f"  cost:          {self.us_per_vehicle_step:.1f} µs per vehicle-step (simulation + recording"
            + (f"; the first step, which creates the object graphs"
               f"{' and compiles the kernels' if self.compiled else ''}: {self.first_step_time:.2f} s)"
               if self.steps > 1 else ")"),
        ))


def _human_bytes(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


def load_vehicle_params(vehicle: Any) -> tuple[Any, str]:
    """``(VehicleParams, label)`` for a preset name (or ``tank`` / ``truck`` of the engine-drive
    package), a PhysX ``Base.json`` or its folder (the drivetrain file beside it,
    ``DirectDrive.json`` or ``EngineDrive.json``, decides the kind; with both, direct drive and a
    note), or that drivetrain file itself, or ready ``VehicleParams``; None means the default car."""
    from simcore.presets import PRESETS, default_vehicle, load_preset
    from simcore.vehicle import VehicleParams

    if vehicle is None or vehicle == "default":
        return default_vehicle(), "default"
    if isinstance(vehicle, VehicleParams):
        return vehicle, "vehicle"
    name = os.fspath(vehicle)
    if name in PRESETS:
        return load_preset(name), name
    if name in ENGINE_DRIVE_VEHICLES:
        import importlib

        module, function = ENGINE_DRIVE_VEHICLES[name]
        return getattr(importlib.import_module(module), function)(), name
    if name.lower().endswith(".physics"):
        from simcore.stingray import load_physics
        from simcore.stingray.sjson import SjsonError

        try:
            physics = load_physics(name)
        except SjsonError as exc:  # unreadable, not SJSON, or not a vehicle (StingrayError)
            raise RecordError(str(exc)) from None
        try:
            description = physics.vehicle()
        except KeyError as exc:  # no enabled vehicle in the file
            raise RecordError(str(exc.args[0])) from None
        return description, description.label
    path = Path(name)
    if path.is_dir():
        path = path / "Base.json"
    drivetrains = {"DirectDrive.json": "direct", "EngineDrive.json": "engine"}
    chosen = path.name if path.name in drivetrains else None
    if chosen is not None:  # a drivetrain file names the drivetrain; Base.json sits beside it
        path = path.parent / "Base.json"
    if not path.exists():
        if Path(name).exists():  # a folder, or a drivetrain file, without its Base.json
            raise RecordError(f"vehicle {name!r}: no Base.json in {str(path.parent)!r} (a PhysX vehicle "
                              "folder holds Base.json and DirectDrive.json or EngineDrive.json)")
        known = ", ".join(vehicle_names())
        raise RecordError(f"vehicle {name!r} is neither a preset ({known}) nor a PhysX vehicle JSON file "
                          "(Base.json, a folder holding one, or its DirectDrive.json / EngineDrive.json)")
    from simcore.io.physx_json import PhysXJsonError, load_physx_vehicle

    folder = path.parent
    present = [f for f in drivetrains if (folder / f).exists()]
    if not present:
        raise RecordError(f"vehicle file {path}: no DirectDrive.json or EngineDrive.json beside it "
                          "to say which drivetrain it has")
    if chosen is None:
        chosen = present[0]
        if len(present) > 1:
            where = "this folder" if folder == Path(".") else str(folder)
            print(f"note: {where} holds both DirectDrive.json and EngineDrive.json: recording direct drive "
                  f"(name {folder / 'EngineDrive.json'} for the engine drive)", file=sys.stderr)
    kind = drivetrains[chosen]
    try:  # a folder, FIFO or device under either name is one line here, not in the JSON reader
        require_input(path, "a PhysX vehicle JSON file")
        require_input(folder / chosen, "a PhysX drivetrain JSON file")
    except PvdError as exc:
        raise RecordError(str(exc)) from None
    try:
        params = load_physx_vehicle(path, folder / chosen, kind)
    except PhysXJsonError as exc:  # names the file, the JSON path and what was expected
        raise RecordError(str(exc)) from None
    # The folder names the vehicle ("." as typed from inside it names nothing: resolve it); the
    # engine drive of a folder that has both gets its own name, so its runs do not overwrite
    # the direct drive's.
    label = path.stem if path.stem != "Base" else folder.resolve().name or "vehicle"
    return params, f"{label}_engine" if kind == "engine" and len(present) > 1 else label


#: How often ``pvdkit record -o X.ovd`` hands what it recorded to the operating system: a run
#: killed loses at most about this much (as an .h5's commits bound it; an .ovd has no commits).
OVD_FLUSH_SECONDS = 1.0


def open_writer(path: Path, source: str) -> OmniPvdWriter:
    """A writer on a new ``.ovd`` file or HDF5 recording (by suffix); ``source`` says what
    writes it (an ``.h5``'s ``source`` attribute, e.g. ``pvdkit record default_accelerate``)."""
    suffix = path.suffix.lower()
    if suffix not in _SUFFIXES:
        raise RecordError(f"output {str(path)!r}: the file name must end in .ovd or .h5")
    check_output(path)
    if suffix == ".ovd":
        writer = OmniPvdWriter(OvdFileStream(path, flush_interval=OVD_FLUSH_SECONDS))
        writer.start()  # the header on disk at once (flushed with the first write)
        return writer
    from pvdkit.h5 import H5Stream

    # No compaction on close: a recording stays append-only (readable up to the last flush
    # after a crash) and closing costs nothing extra. Each 8 MiB batch adds one segment per
    # series; `pvdkit convert` produces the one-segment-per-series form when wanted.
    return OmniPvdWriter(H5Stream(path, compact=False, source=source))


# --------------------------------------------------------------------------------------------
# Recording
# --------------------------------------------------------------------------------------------


def record(
    vehicle: Any = None,
    scenario: str | None = None,
    *,
    duration: float | None = None,
    dt: float = DEFAULT_DT,
    substeps: int | None = None,
    out: str | os.PathLike | None = None,
    timestamps: str = "ns",
    progress: Callable[[int, int], None] | None = None,
    vehicles: int = 1,
    spacing: float = 4.0,
    vary: str | None = None,
    physx: bool | None = None,
    settings: Sequence[str] = (),
) -> RecordSummary:
    """Simulate ``vehicle`` through ``scenario`` and record every param and state.

    ``vehicle``: preset name, PhysX vehicle JSON path or ``VehicleParams`` (default: the default
    car). ``scenario``: a name of :data:`simcore.scenarios.SCENARIOS` (default ``accelerate``).
    ``duration`` (s, default: the scenario's), ``dt`` (s), ``substeps`` (default: simcore's 3).
    ``out``: ``.ovd`` or ``.h5`` path (default ``recordings/<vehicle>_<scenario>.h5``).
    ``timestamps``: frame timestamps in simulated nanoseconds (``"ns"``) or PhysX's frame
    counter (``"frame"``). ``progress(step, steps)`` is called after every step.
    ``vehicles``: simulate that many copies side by side, ``spacing`` apart, as one
    :class:`~simcore.fleet.Fleet` (``vehicle_000`` … in the recording); ``vary``
    (``PARAM=LO:HI``) spreads one param linearly across them. ``settings`` (``PARAM=VALUE``, e.g.
    ``rigid_body.mass=2200``) change params of the vehicle first. ``physx``: run the PhysX actor layer
    (:func:`simcore.physx_actor.physx_setup`: the chassis as PhysX's rigid actor, constraint rows
    solved once per step by the scene, Omni PhysX's substep rule and sticky-tire damping, sleep);
    None (default): on for Vehicle2 vehicles (presets, PhysX JSON) — what PhysX users see, a parked
    car at rest — and off for the models that are not Vehicle2 (Stingray, motorcycle); False:
    pure Vehicle2 (simcore's own rigid body, constraints solved every substep).
    """
    import math

    from simcore.limits import MAX_DT, MAX_STEPS, MAX_SUBSTEPS, MIN_DT
    from simcore.scenarios import DEFAULT_SCENARIO, ScenarioError, get_scenario
    from simcore.vehicle import DEFAULT_NB_SUBSTEPS, Vehicle

    if isinstance(dt, bool) or not isinstance(dt, int | float) or not MIN_DT <= dt <= MAX_DT:
        raise RecordError(f"--dt must be a time step in seconds in [{MIN_DT:g}, {MAX_DT:g}], got {dt!r}")
    if duration is not None:
        if isinstance(duration, bool) or not isinstance(duration, int | float) or not (
                math.isfinite(duration) and duration > 0.0):
            raise RecordError(f"--duration must be a positive, finite number of seconds, got {duration!r}")
        if duration / dt > MAX_STEPS:
            raise RecordError(f"--duration {duration:g} s is {duration / dt:.3g} steps of --dt {dt:g} s; "
                              f"at most {MAX_STEPS:,} steps are run ({MAX_STEPS * dt:g} s at that --dt)")
    if substeps is not None and (isinstance(substeps, bool) or not isinstance(substeps, int | float)
                                 or not float(substeps).is_integer() or not 1 <= substeps <= MAX_SUBSTEPS):
        raise RecordError(f"--substeps must be an integer in 1..{MAX_SUBSTEPS}, got {substeps!r}")
    if isinstance(vehicles, bool) or not isinstance(vehicles, int) or not 1 <= vehicles <= MAX_FLEET:
        raise RecordError(f"--vehicles must be a whole number in 1..{MAX_FLEET}, got {vehicles!r}")
    if not (isinstance(spacing, int | float) and math.isfinite(spacing) and spacing >= 0.0):
        raise RecordError(f"--spacing must be a distance >= 0 (m), got {spacing!r}")
    if vary is not None and settings:
        from simcore.param_paths import ParamPathError, parse_setting, parse_vary

        try:
            varied, set_paths = parse_vary(vary)[0], [parse_setting(t)[0] for t in settings]
        except ParamPathError as exc:
            raise RecordError(str(exc)) from None
        if varied in set_paths:  # --vary would silently replace the --set value
            raise RecordError(f"--set {varied} and --vary {vary}: the same param; give it once")
    if vary is not None and vehicles < 2:  # one vehicle would only take LO
        raise RecordError(f"--vary {vary}: spreads a param from LO to HI over a fleet; give --vehicles N "
                          "(2 or more)")
    fleet_run = vehicles > 1
    if _is_motorcycle(vehicle):
        if physx:
            raise RecordError("--physx: the motorcycle model is not a Vehicle2 vehicle; it has no PhysX "
                              "actor")
        if fleet_run:
            raise RecordError("--vehicles / --vary: the motorcycle model runs one vehicle at a time")
        if settings:
            raise RecordError("--set: the motorcycle model is not a Vehicle2 vehicle; --set changes the "
                              "params of presets and PhysX vehicle files")
        return _record_motorcycle(vehicle, scenario, duration=duration, dt=dt, out=out,
                                  timestamps=timestamps, progress=progress)
    try:
        sc = get_scenario(scenario or DEFAULT_SCENARIO)
    except ScenarioError as exc:
        raise RecordError(str(exc)) from None
    params, label = load_vehicle_params(vehicle)
    params = with_settings(params, label, settings)
    nb_substeps = int(substeps) if substeps is not None else DEFAULT_NB_SUBSTEPS
    params, context = _with_physx_actor(params, physx)
    if context is not None and substeps is not None:  # an explicit count replaces Omni PhysX's speed rule
        context = replace(context, substep_rule=None)
    if fleet_run:
        return _record_fleet(params, label, sc, vehicles, spacing, vary, duration=duration, dt=dt,
                             nb_substeps=nb_substeps, out=out, timestamps=timestamps, progress=progress,
                             context=context)
    if hasattr(params, "make_vehicle"):
        # A Stingray description installs its driver-input stage (smoothing, steer limit); the
        # scenario places the car and selects the gear itself.
        car = params.make_vehicle(nb_substeps=nb_substeps, place_on_road=False)
    else:
        car = Vehicle(params, context=context, nb_substeps=nb_substeps)
    return _run_and_record(car, car, label, f"{label}_{sc.name}", sc, duration=duration, dt=dt, out=out,
                           timestamps=timestamps, progress=progress)


def with_settings(params: Any, label: str, settings: Sequence[str]) -> Any:
    """``params`` with each ``PARAM=VALUE`` of ``settings`` applied in order (``--set``), checked as
    a whole; RecordError naming the setting otherwise."""
    if not settings:
        return params
    from simcore.limits import ParamsError
    from simcore.param_paths import ParamPathError, parse_setting, with_param

    paths = []
    for text in settings:
        try:
            paths.append(parse_setting(text)[0])
        except ParamPathError as exc:
            raise RecordError(str(exc)) from None
    twice = next((p for p in paths if paths.count(p) > 1), None)
    if twice is not None:  # which one would win is a guess; say so instead
        raise RecordError(f"--set {twice}: given twice; give each param once")

    if hasattr(params, "make_vehicle"):
        raise RecordError(f"--set: {label} is a Stingray vehicle; --set changes the params of presets and "
                          "PhysX vehicle files (edit the .physics file instead)")
    for text in settings:
        try:
            path, value = parse_setting(text)
            params = with_param(params, path, value)
        except ParamPathError as exc:
            message = str(exc) if str(exc).startswith("--set") else f"--set {text}: {exc}"
            raise RecordError(message) from None
    try:
        params.validate()
    except (ParamsError, ValueError) as exc:
        raise RecordError(f"--set {' --set '.join(settings)}: {exc}") from None
    return params


def _with_physx_actor(params: Any, physx: bool | None) -> tuple[Any, Any]:
    """``(params, context)`` as ``--physx`` asks (see :func:`record`): with the PhysX actor layer
    (:func:`simcore.physx_actor.physx_setup`) for True, and for None on Vehicle2 vehicles; else
    the params as they are and no context."""
    if physx and hasattr(params, "make_vehicle"):
        raise RecordError("--physx: a Stingray description runs its own vehicle model; use a preset or "
                          "a PhysX vehicle JSON")
    if physx or (physx is None and not hasattr(params, "make_vehicle")):
        from simcore.physx_actor import physx_setup

        return physx_setup(params)
    return params, None


def _run_and_record(subject: Any, one: Any, label: str, stem: str, sc: Any, *, duration: float | None,
                    dt: float, out: str | os.PathLike | None, timestamps: str,
                    progress: Callable[[int, int], None] | None, vehicles: int = 1) -> RecordSummary:
    """Check that vehicle ``one`` can drive scenario ``sc``, then run ``subject`` (that vehicle or
    a fleet of such) through it with a recorder attached, into ``out`` (default
    ``recordings/<stem>.h5``); an early stop closes the file marked incomplete."""
    from simcore.pvd.recorder import PvdRecorder
    from simcore.scenarios import ScenarioError

    try:
        sc.check(one)
    except ScenarioError as exc:
        raise RecordError(str(exc)) from None
    path = _output_path(out, stem)
    total = max(1, int(round((sc.duration if duration is None else duration) / dt)))
    writer = open_writer(path, f"pvdkit record {stem}")
    start = time.perf_counter()
    first_done = start

    def after_step(i: int) -> None:
        nonlocal first_done
        if i == 0:
            first_done = time.perf_counter()
        if progress is not None:
            progress(i + 1, total)

    with PvdRecorder(writer, timestamps=timestamps) as recorder, _marks_early_stop(writer):
        # The vehicle (and its PhysX actor) is named after what was recorded, in either layout, so
        # that `--object sedan/wheel 3` finds it in both (a fleet names its members vehicle_000 …).
        recorder.attach(subject, vehicle_name=label)
        steps = sc.run(subject, dt, total * dt, after_step=after_step)
    wall = time.perf_counter() - start
    return RecordSummary(path, label, sc.name, steps, recorder.frames, recorder.nb_objects,
                         path.stat().st_size, wall, recorder.time, vehicles=vehicles,
                         first_step_time=first_done - start)


#: Most vehicles ``pvdkit record --vehicles`` simulates in one fleet.
MAX_FLEET = 65536


def _fleet_params(params: Any, label: str, n: int, vary: str | None) -> list[Any]:
    """``n`` copies of ``params``, one param spread linearly from LO to HI if ``vary`` says so."""
    import numpy as np

    from simcore.limits import ParamsError
    from simcore.param_paths import ParamPathError, parse_vary, with_param

    if hasattr(params, "make_vehicle"):
        raise RecordError(f"--vehicles / --vary: {label} is a Stingray vehicle with its own driver-input "
                          "stage; fleets take presets and PhysX vehicle files")
    if vary is None:
        return [params] * n
    try:
        path, lo, hi = parse_vary(vary)
        if path.split(".")[0].split("[")[0] in ("scale", "frame"):
            raise RecordError(f"--vary {vary}: the vehicles of a fleet share one length scale and one frame "
                              "(scale, frame); vary a physical param instead")
        members = []
        for k, value in enumerate(np.linspace(lo, hi, n)):
            p = with_param(params, path, float(value))
            try:
                p.validate()
            except (ParamsError, ValueError) as exc:
                raise RecordError(f"--vary {vary}: vehicle {k} ({path} = {value:g}): {exc}") from None
            members.append(p)
    except ParamPathError as exc:
        raise RecordError(str(exc)) from None
    return members


def _record_fleet(params: Any, label: str, sc: Any, n: int, spacing: float, vary: str | None, *,
                  duration: float | None, dt: float, nb_substeps: int, out: str | os.PathLike | None,
                  timestamps: str, progress: Callable[[int, int], None] | None,
                  context: Any = None) -> RecordSummary:
    """``record`` for ``n`` vehicles stepped together as one :class:`~simcore.fleet.Fleet`."""
    from simcore.fleet import Fleet

    fleet = Fleet(_fleet_params(params, label, n, vary), context=context, nb_substeps=nb_substeps)
    fleet.spacing = spacing
    return _run_and_record(fleet, fleet[0], f"{n} x {label}", f"{label}_x{n}_{sc.name}", sc,
                           duration=duration, dt=dt, out=out, timestamps=timestamps, progress=progress,
                           vehicles=n)


def vehicle_names() -> list[str]:
    """Every vehicle name ``pvdkit record`` takes: the default car, the presets, the engine-drive
    package's vehicles, and the motorcycle with its presets."""
    from simcore.motorcycle import PRESETS as MOTORCYCLE_PRESETS
    from simcore.presets import PRESETS

    cars = sorted(set(PRESETS) | set(ENGINE_DRIVE_VEHICLES))
    return ["default", *cars, "motorcycle", *sorted(MOTORCYCLE_PRESETS)]


def _is_motorcycle(vehicle: Any) -> bool:
    """True when ``vehicle`` names the motorcycle model (``motorcycle`` or one of its presets)."""
    if not isinstance(vehicle, str):
        return False
    from simcore.motorcycle import PRESETS as MOTORCYCLE_PRESETS

    return vehicle == "motorcycle" or vehicle in MOTORCYCLE_PRESETS


def _record_motorcycle(vehicle: str, scenario: str | None, *, duration: float | None, dt: float,
                       out: str | os.PathLike | None, timestamps: str,
                       progress: Callable[[int, int], None] | None) -> RecordSummary:
    """``record`` for the two-wheeled model of :mod:`simcore.motorcycle` (its own scenarios)."""
    from simcore.motorcycle import DEFAULT_PRESET, MOTORCYCLE_SCENARIOS
    from simcore.motorcycle.pvd import record_motorcycle

    preset = DEFAULT_PRESET if vehicle == "motorcycle" else vehicle
    name = scenario or "brake-test"
    if name not in MOTORCYCLE_SCENARIOS:
        raise RecordError(f"scenario {name!r} is not a motorcycle scenario; the motorcycle has: "
                          f"{', '.join(MOTORCYCLE_SCENARIOS)}")
    path = _output_path(out, f"{preset}_{name}")
    writer = open_writer(path, f"pvdkit record {preset}_{name}")
    start = time.perf_counter()
    with _marks_early_stop(writer):
        trace, recorder = record_motorcycle(writer, preset, name, dt=dt, duration=duration,
                                            timestamps=timestamps, progress=progress)
    wall = time.perf_counter() - start
    return RecordSummary(path, preset, name, len(trace.time), recorder.frames, recorder.nb_objects,
                         path.stat().st_size, wall, recorder.time)


@contextmanager
def _marks_early_stop(writer: OmniPvdWriter) -> Iterator[None]:
    """If the block stops early (Ctrl-C, SIGTERM, an error), the recording closes with
    ``complete = false`` and the reason (streams that can say so: ``.h5``)."""
    try:
        yield
    except BaseException as exc:
        mark = getattr(writer.stream, "mark_interrupted", None)
        if mark is not None:
            mark(interruption_reason(exc) or f"stopped by an error: {exc}")
        raise


def _output_path(out: str | os.PathLike | None, stem: str) -> Path:
    """The output path: ``out``, or ``recordings/<stem>.h5`` (folder created) when None."""
    path = Path(out) if out is not None else DEFAULT_DIRECTORY / f"{stem}.h5"
    if path.parent and not path.parent.exists():
        if out is not None:
            raise RecordError(f"output {str(path)!r}: folder {str(path.parent)!r} does not exist")
        path.parent.mkdir(parents=True)
    return path


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def configure(p: argparse.ArgumentParser) -> None:
    """Add ``pvdkit record``'s arguments to its parser."""
    from simcore.scenarios import DEFAULT_SCENARIO, SCENARIOS

    p.description = (
        "Simulate a simcore vehicle through a driving scenario and record every param and state "
        "with PhysX Vehicle2's PVD schema. Without arguments the default car drives "
        f"'{DEFAULT_SCENARIO}' into recordings/default_{DEFAULT_SCENARIO}.h5.")
    p.add_argument("vehicle", nargs="?", default=None, metavar="VEHICLE",
                   help="a preset name (e.g. sedan, tank, truck, motorcycle, scooter), a PhysX vehicle "
                        "JSON file (Base.json or its folder; DirectDrive.json or EngineDrive.json beside "
                        "it picks the drivetrain) or a Stingray .physics file")
    from simcore.motorcycle import MOTORCYCLE_SCENARIOS

    every_scenario = list(dict.fromkeys([*SCENARIOS, *MOTORCYCLE_SCENARIOS]))  # `accelerate` is in both
    p.add_argument("--scenario", default=None, choices=every_scenario,
                   metavar="NAME",
                   help=f"cars: {', '.join(SCENARIOS)} (default: {DEFAULT_SCENARIO}); motorcycle: "
                        f"{', '.join(MOTORCYCLE_SCENARIOS)} (default: brake-test)")
    from simcore.limits import MAX_DT, MAX_STEPS, MAX_SUBSTEPS, MIN_DT

    p.add_argument("--duration", type=float, default=None, metavar="S",
                   help=f"simulated seconds (default: the scenario's; at most {MAX_STEPS:,} steps)")
    p.add_argument("--dt", type=float, default=DEFAULT_DT, metavar="S",
                   help=f"time step in seconds, {MIN_DT:g} … {MAX_DT:g} (default 1/60)")
    p.add_argument("--substeps", type=int, default=None, metavar="N",
                   help=f"substeps of the suspension/tire/rigid-body group, 1 … {MAX_SUBSTEPS} (default: "
                        "Omni PhysX's rule, 3 below 5 m/s and 1 above; with --pure-vehicle2, 3)")
    p.add_argument("-o", "--output", default=None, metavar="OUT", type=path_argument,
                   help="output file ending in .ovd or .h5 (default: recordings/<vehicle>_<scenario>.h5)")
    p.add_argument("--timestamps", choices=("ns", "frame"), default="ns",
                   help="frame timestamps: simulated nanoseconds (default) or PhysX's frame counter")
    p.add_argument("--vehicles", type=int, default=1, metavar="N",
                   help="simulate N copies side by side as one batch (vehicle_000 … in the recording)")
    p.add_argument("--spacing", type=float, default=4.0, metavar="M",
                   help="lateral distance between the copies, metres (default 4)")
    p.add_argument("--set", dest="settings", action="append", default=[], metavar="PARAM=VALUE",
                   help="change one param of the vehicle (repeatable): one number, or one per wheel "
                        "separated by commas, e.g. rigid_body.mass=2200 or wheel.radius=0.35,0.35,0.36,0.36; "
                        "param paths as in docs/sweep.md")
    p.add_argument("--vary", default=None, metavar="PARAM=LO:HI",
                   help="spread one param linearly across the copies, e.g. rigid_body.mass=1500:2500")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--physx", dest="physx", action="store_const", const=True, default=None,
                      help="the PhysX actor layer (the default for Vehicle2 vehicles): the chassis as "
                           "PhysX's rigid actor (constraints solved once per step, damping, sleep), Omni "
                           "PhysX's substep rule (3 below 5 m/s, else 1); recorded in PhysX's layout")
    mode.add_argument("--pure-vehicle2", dest="physx", action="store_const", const=False,
                      help="Vehicle2 alone: simcore's rigid body with the constraints solved every substep, "
                           "a fixed substep count, no sleep (a parked car creeps: docs/simcore.md)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--progress", action="store_true",
                   help="draw the progress bar even when stderr is not a terminal (by default a CI log or "
                        "a pipe gets none: it would keep every redraw)")


def run(args: argparse.Namespace) -> int:
    """Run ``pvdkit record``: print the summary, return 0.

    User errors are :class:`~pvdkit.types.PvdError` s, which ``pvdkit`` prints as one line
    (exit status 2): the simulation's own (:class:`RecordError`,
    :class:`~simcore.scenarios.ScenarioError`, :class:`~simcore.limits.SimulationDiverged`,
    :class:`~simcore.limits.ParamsError`) and an :class:`OSError` (the output cannot be
    written) get a ``record:`` prefix; pvdkit's (``disk full writing …``) pass as they are.
    Anything else is a bug and keeps its traceback. Ctrl-C / SIGTERM close the recording and
    exit 130 / 143. On a fresh install the kernels are compiled first: it says so before they
    are (:func:`prepare_kernels`).
    """
    from pvdkit import jit
    from simcore.limits import ParamsError, SimulationDiverged
    from simcore.scenarios import ScenarioError

    show = not args.quiet and (args.progress or on_terminal())  # a log or a pipe would keep every redraw
    bar = ProgressBar(width=30, unit="steps", min_interval=0.1) if show else None
    helper = None
    done = False
    try:
        helper = prepare_kernels(args.vehicle, args.output, args.physx)
        with terminate_as_exception():
            summary = record(args.vehicle, args.scenario, duration=args.duration, dt=args.dt,
                             substeps=args.substeps, out=args.output, timestamps=args.timestamps,
                             progress=bar, vehicles=args.vehicles, spacing=args.spacing,
                             vary=args.vary, physx=args.physx, settings=args.settings)
        done = True
    except (KeyboardInterrupt, Terminated) as exc:
        print(f"\nrecord: {interruption_reason(exc)}; the recording keeps every frame written before",
              file=sys.stderr)
        return exit_status(exc)
    except (RecordError, ScenarioError, SimulationDiverged, ParamsError, OSError) as exc:
        raise PvdError(f"record: {exc}") from None
    finally:
        jit.stop(helper, 30.0 if done else 0.0)  # let it finish its cache entries, unless stopped
    if jit.found_cold():
        summary = replace(summary, compiled=True)
    print(summary.format())
    return 0


# --------------------------------------------------------------------------------------------
# A fresh install: compiling the kernels
# --------------------------------------------------------------------------------------------

#: Seconds a cold ``pvdkit record`` takes, start to end (the default scenario; 2-core x86-64,
#: ``bench/bench_start.py``), by the drivetrain of the car: what the first-run message announces.
COLD_SECONDS = {"direct": 13.0, "engine": 18.0}
#: Seconds compiling pvdkit's recording kernels adds when they cannot compile alongside.
H5_COLD_SECONDS = 5.0


def prepare_kernels(vehicle: Any, out: str | os.PathLike | None, physx: bool | None
                    ) -> subprocess.Popen | None:
    """Before a cold ``pvdkit record`` compiles (its kernels are not in numba's cache yet):
    print the first-run message (:func:`pvdkit.jit.notice_if_cold`) and compile in a second
    process (:func:`warm_record_kernels`) what this one needs later — for an ``.h5`` output
    pvdkit's recording kernels, needed when the first frame is stored, then the simulator's from
    the end of its sequence backwards while this process compiles them from the front: each
    finds in numba's cache what the other wrote. Only on a command line (notices on). Returns
    that process (pass it to :func:`pvdkit.jit.stop` when done), or None."""
    from pvdkit import jit

    if not jit.notices_enabled():
        return None
    kernels: list[Any] = []
    seconds = 0.0
    simulator_cold = False
    if not _is_motorcycle(vehicle):  # the motorcycle model is numpy only
        from simcore.suspension._fast import _fused_batch as suspension
        from simcore.tire._fast import _fused_batch as tire

        kernels += [suspension, tire]
        if physx is not False:
            from simcore.physx_actor.components import _k_end

            kernels.append(_k_end)
        simulator_cold = not all(jit.is_cached(k) is not False for k in kernels)
        if simulator_cold:
            seconds += COLD_SECONDS["engine" if _engine_car(vehicle) else "direct"]
    path = Path(out) if out is not None else Path("x.h5")
    h5_cold = False
    if path.suffix.lower() in (".h5", ".hdf5"):
        from pvdkit.index.kernels import index_rows
        from pvdkit.ovd.kernels import scan

        h5_cold = not all(jit.is_cached(k) is not False for k in (scan, index_rows))
        if h5_cold:
            kernels += [scan, index_rows]
    helper = None
    if simulator_cold:
        helper = jit.warm_in_background(f"{__name__}:warm_record_kernels", _vehicle_arg(vehicle),
                                        _PHYSX_TEXT[physx], "1" if h5_cold else "0")
    if h5_cold and helper is None:
        seconds += H5_COLD_SECONDS
    jit.notice_if_cold(kernels, seconds)
    return helper


#: ``--physx`` None / True / False as the text a second process is given, and back.
_PHYSX_TEXT = {None: "", True: "1", False: "0"}
_PHYSX_ARG = {text: value for value, text in _PHYSX_TEXT.items()}


def _vehicle_arg(vehicle: Any) -> str:
    """``vehicle`` as :func:`warm_record_kernels` takes it: a preset name or a file's path ("" for
    the default car; a params object, from library use, warms the default car's kernels)."""
    return os.fspath(vehicle) if isinstance(vehicle, str | os.PathLike) else ""


def warm_record_kernels(vehicle: str = "", physx: str = "", h5: str = "0") -> None:
    """Compile what a cold ``pvdkit record`` of ``vehicle`` (a preset name or a file, "" for the
    default car; ``physx`` "", "1" or "0" for its ``--physx`` None, True, False) needs late:
    pvdkit's ``.h5`` recording kernels first when ``h5`` is "1" (:func:`warm_h5_kernels`), then
    the simulator's, one component of the vehicle's sequence at a time from the last: the
    command compiles from the first, and each process loads from numba's cache what the other
    already compiled. Run in a second process by :func:`prepare_kernels`; a component that
    cannot run on a fresh vehicle is left for the command to compile."""
    if h5 == "1":
        warm_h5_kernels()
    if _is_motorcycle(vehicle or None):  # numpy only: nothing to compile
        return
    from simcore.vehicle import Vehicle

    params, _ = load_vehicle_params(vehicle or None)
    if hasattr(params, "make_vehicle"):  # a Stingray vehicle: its own sequence, compiled by the command
        return
    params, context = _with_physx_actor(params, _PHYSX_ARG[physx])
    car = Vehicle(params, context=context)
    fleet = car.fleet
    for entry in reversed(fleet.sequence.entries()):
        try:
            entry.component.update(DEFAULT_DT / 3, fleet.context)
        except Exception:  # noqa: BLE001 - a warm-up only: the command compiles what this could not
            continue


def _engine_car(vehicle: Any) -> bool:
    """True when ``vehicle`` (a name or file, as :func:`record` takes it) has an engine drivetrain."""
    try:
        params, _ = load_vehicle_params(vehicle)
    except Exception:  # record() reports a bad vehicle; the estimate just takes the default's
        return False
    return getattr(params, "drivetrain", "direct") != "direct"


def warm_h5_kernels() -> None:
    """Compile what recording into ``.h5`` compiles in pvdkit — the tokenizer, the index pass
    and the HDF5 writer's gathers, with the argument types :func:`record` gives them — by
    recording pvdkit's every-command stream into a temporary file. Run in a second process by
    :func:`prepare_kernels` (``python -m pvdkit.jit warm simcore.cli.record:warm_h5_kernels``)."""
    import tempfile

    from pvdkit.synthetic import write_every_command

    with tempfile.TemporaryDirectory(prefix="pvdkit-warm-") as d:
        write_every_command(open_writer(Path(d) / "warm.h5", "kernel warm-up").stream)


#: One-line help of the subcommand (the entry point's, :data:`simcore.cli.RECORD_HELP`).
HELP = RECORD_HELP
