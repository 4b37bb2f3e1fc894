"""Hard limits of the simulation core: Vehicle2's own, and simcore's sanity bounds.

* Vehicle2's ``PxVehicleLimits`` (wheels, axles, components, substep groups).
* Time stepping (:data:`MIN_DT` … :data:`MAX_DT`, :data:`MAX_STEPS`, :data:`MAX_SUBSTEPS`):
  what ``pvdkit record`` accepts for ``--dt``, ``--duration`` and ``--substeps``.
* Physical bounds of params (:data:`PARAM_BOUNDS`, checked by
  :meth:`simcore.vehicle.VehicleParams.validate` through :func:`check_param_bounds`): Vehicle2
  only asks for positive masses, radii and stiffnesses, so a wheel radius of 1e9 m or a body of
  1e30 kg used to be simulated into ``inf``. The bounds are generous on purpose — every real
  vehicle from a scooter to a 800 t mining truck (or NASA's 2,700 t crawler) passes with an
  order of magnitude or more to spare; what fails is a typo or a unit mistake. Bounds are in SI
  units and follow the params' :class:`~simcore.frame.Scale` (a vehicle described in
  centimetres has radii up to 1,000 cm).
* Divergence bounds of states (:data:`MAX_WHEEL_SPEED`, :data:`MAX_BODY_SPEED`,
  :data:`MAX_BODY_ANGULAR_SPEED`, :data:`MAX_ENGINE_SPEED`, and finiteness of every checked
  value), checked after every :meth:`simcore.vehicle.Vehicle.step` by
  :func:`check_vehicle_states`: a simulation that blows up stops with
  :class:`SimulationDiverged` naming the step, the object and the attribute, instead of
  recording ``inf`` and ``nan`` for the rest of the run.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from pvdkit.types import PvdError

MAX_NB_WHEELS = 20
MAX_NB_AXLES = MAX_NB_WHEELS
#: ``PxVehicleComponentSequenceLimits``
MAX_NB_COMPONENTS = 64
MAX_NB_SUBGROUPS = 16

# --------------------------------------------------------------------------------------------
# Time stepping
# --------------------------------------------------------------------------------------------

#: Smallest time step (s): below it the nanosecond frame timestamps of a recording stop being
#: distinct, and a second of simulation takes a million steps.
MIN_DT = 1e-6
#: Largest time step (s): beyond it no vehicle model here stays stable (PhysX uses 1/60).
MAX_DT = 1.0
#: Most steps of one run (about 46 hours simulated at 60 Hz).
MAX_STEPS = 10_000_000
#: Most substeps of the suspension / tire / rigid-body group.
MAX_SUBSTEPS = 1000

#: Largest magnitude of an integer field of a vehicle file (gear indices, iteration counts):
#: they become C ints in the kernels.
MAX_INT_FIELD = 2**31 - 1


def is_finite_number(value: object) -> bool:
    """True for an int or float (not a bool) that is finite as a float. Why not just
    ``math.isfinite``: JSON and TOML integers are unbounded, and a 400-digit one makes it raise
    OverflowError instead of answering."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def is_int_field(value: object) -> bool:
    """True for a whole number (an int, or a float such as 3.0) within :data:`MAX_INT_FIELD`."""
    return is_finite_number(value) and float(value).is_integer() and abs(value) <= MAX_INT_FIELD


# --------------------------------------------------------------------------------------------
# Physical bounds of params
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bound:
    """Largest magnitude ``limit`` (SI ``unit``) of a param; ``length_power``: how the value
    scales with the length unit (``Scale``): 1 for lengths and forces, 2 for moments of inertia
    and torques, 0 for masses, stiffnesses in N/m and angular speeds."""

    limit: float
    unit: str
    length_power: int = 0
    #: Smallest magnitude (same units; 0: none). Masses and inertias are positive by Vehicle2's
    #: own checks; far below these, their inverses overflow the integration (1e-300 kg m^2 gave
    #: a division by zero in the first step).
    smallest: float = 0.0


#: ``(VehicleParams field, attribute) -> Bound``. Every value must be finite and its magnitude
#: at most the bound (positivity and the like are Vehicle2's own checks, made first).
PARAM_BOUNDS: dict[tuple[str, str], Bound] = {
    ("rigid_body", "mass"): Bound(1e7, "kg", smallest=1e-3),
    ("rigid_body", "moi"): Bound(1e10, "kg m^2", 2, smallest=1e-6),
    ("wheel", "radius"): Bound(10.0, "m", 1),
    ("wheel", "half_width"): Bound(10.0, "m", 1),
    ("wheel", "mass"): Bound(1e5, "kg", smallest=1e-4),
    ("wheel", "moi"): Bound(1e6, "kg m^2", 2, smallest=1e-8),
    ("wheel", "damping_rate"): Bound(1e7, "kg m^2/s", 2),
    ("suspension", "suspension_attachment_pos"): Bound(1e3, "m", 1),
    ("suspension", "suspension_travel_dist"): Bound(10.0, "m", 1),
    ("suspension", "wheel_attachment_pos"): Bound(1e3, "m", 1),
    ("suspension_force", "stiffness"): Bound(1e9, "N/m"),
    ("suspension_force", "damping"): Bound(1e8, "N s/m"),
    ("suspension_force", "sprung_mass"): Bound(1e7, "kg"),
    ("tire_force", "lat_stiff_x"): Bound(1e3, "(normalised load)"),
    ("tire_force", "lat_stiff_y"): Bound(1e10, "N", 1),
    ("tire_force", "long_stiff"): Bound(1e10, "N", 1),
    ("tire_force", "camber_stiff"): Bound(1e10, "N/rad", 1),
    ("tire_force", "rest_load"): Bound(1e9, "N", 1),
    ("direct_drive_throttle_response", "max_response"): Bound(1e8, "N m", 2),
    ("engine", "moi"): Bound(1e5, "kg m^2", 2, smallest=1e-8),
    ("engine", "peak_torque"): Bound(1e8, "N m", 2),
    ("engine", "idle_omega"): Bound(1e5, "rad/s"),
    ("engine", "max_omega"): Bound(1e5, "rad/s"),
    ("gearbox", "ratios"): Bound(1e3, "(ratio)"),
    ("gearbox", "final_ratio"): Bound(1e3, "(ratio)"),
}
#: The length unit a vehicle may be described in, in units per metre (PhysX's ``Scale``: 1 for
#: metres, 100 for centimetres): from kilometres to micrometres.
MIN_SCALE, MAX_SCALE = 1e-3, 1e6
#: Brake responses are torques: ``brake_command_response[i].max_response``.
BRAKE_TORQUE_BOUND = Bound(1e8, "N m", 2)
#: Anti-roll bar stiffness (``AntiRollBarParams.stiffness``, torque per radian of roll).
ANTI_ROLL_BOUND = Bound(1e10, "N m/rad", 2)


class ParamsError(PvdError, ValueError):
    """Params simcore rejects: a user error (a typo or a unit mistake in a vehicle file), not a
    bug. A :class:`~pvdkit.types.PvdError`, so the command line prints it as one line, and a
    ``ValueError``, so the callers that catch what ``validate()`` raises keep working. The
    bounds check raises it (:class:`ParamBoundsError`); the parts' ``validate()`` methods still
    raise plain ``ValueError``, which the file loaders turn into their own located errors."""


class ParamBoundsError(ParamsError):
    """A param outside :data:`PARAM_BOUNDS`; ``part`` is the ``VehicleParams`` field holding
    it (e.g. ``"wheel"``), so a loader can point at the matching section of its file."""

    def __init__(self, message: str, part: str) -> None:
        super().__init__(message)
        self.part = part


#: Parts whose arrays have one entry per wheel (the first axis).
_PER_WHEEL = frozenset({"wheel", "suspension", "suspension_force", "tire_force"})


def _check(part_name: str, obj: Any, attr: str, bound: Bound, scale: float, label: str | None = None) -> None:
    raw = np.asarray(getattr(obj, attr), dtype=np.float64)
    limit = bound.limit * scale ** bound.length_power
    smallest = bound.smallest * scale ** bound.length_power
    bad = ~(np.abs(raw) <= limit) | ((np.abs(raw) < smallest) & (raw != 0.0))
    if not bad.any():
        return
    k = tuple(int(i) for i in np.unravel_index(int(np.flatnonzero(bad.reshape(-1))[0]), raw.shape))
    if part_name in _PER_WHEEL and k:
        where = f" of wheel {k[0]}" + (f" [{', '.join(map(str, k[1:]))}]" if len(k) > 1 else "")
    else:
        where = f"[{', '.join(map(str, k))}]" if k else ""
    value = float(raw[k])
    scaled = scale != 1.0 and bound.length_power != 0
    unit = f"{bound.unit} x scale^{bound.length_power}" if scaled else bound.unit
    name = label or f"{type(obj).__name__}.{attr}"
    what = "must be finite" if not math.isfinite(value) else "is physically absurd"
    span = f"from {smallest:.3g} to {limit:.3g}" if smallest else f"up to {limit:.3g}"
    raise ParamBoundsError(
        f"{name}{where} = {value:.6g}{'' if scaled else ' ' + bound.unit} {what}: simcore accepts "
        f"magnitudes {span} {unit} (simcore.limits.PARAM_BOUNDS)", part_name)


def check_param_bounds(params: Any) -> None:
    """Raise :class:`ParamBoundsError` for the first value of ``params`` (a ``VehicleParams``)
    outside :data:`PARAM_BOUNDS`, naming class, field and wheel."""
    scale = float(params.scale.scale)
    if not MIN_SCALE <= scale <= MAX_SCALE:  # the bounds scale with it (scale ** 2 overflowed at 1e308)
        raise ParamBoundsError(f"Scale.scale = {scale:.6g} is outside {MIN_SCALE:g} … {MAX_SCALE:g} "
                               "(lengths per metre: 1 for metres, 100 for centimetres)", "scale")
    for (part_name, attr), bound in PARAM_BOUNDS.items():
        part = getattr(params, part_name, None)
        if part is None or not hasattr(part, attr):
            continue
        _check(part_name, part, attr, bound, scale)
    for i, brake in enumerate(params.brake_command_response):
        _check("brake_command_response", brake, "max_response", BRAKE_TORQUE_BOUND, scale,
               f"brake_command_response[{i}].max_response")
    for i, bar in enumerate(params.anti_roll_bars):
        _check("anti_roll_bars", bar, "stiffness", ANTI_ROLL_BOUND, scale, f"anti_roll_bars[{i}].stiffness")
    for f in dataclasses.fields(params):
        part = getattr(params, f.name)
        if _RECORDABLE_CHECKED.get(id(part)) is part:  # params are immutable: checked once
            continue
        _check_recordable(f.name, part, f.name)
        if len(_RECORDABLE_CHECKED) >= 4096:
            _RECORDABLE_CHECKED.clear()
        _RECORDABLE_CHECKED[id(part)] = part


#: Params parts already found recordable, by id (the part kept, so that its id is not reused): a
#: fleet's members share every part but the varied one, and the walk costs ~0.35 ms a vehicle.
_RECORDABLE_CHECKED: dict[int, object] = {}


#: Largest magnitude a float param may have: PVD records params as float32 (PhysX's PxReal), so
#: a larger one (1e308 as a brake multiplier) was recorded as inf, with a numpy warning only.
FLOAT32_MAX = float(np.finfo(np.float32).max)
#: Smallest non-zero magnitude float32 holds (a subnormal); below it a param is recorded as 0.
FLOAT32_SMALLEST = float(np.finfo(np.float32).smallest_subnormal)


def _check_recordable(part_name: str, value: Any, path: str) -> None:
    """:class:`ParamBoundsError` for the first float under ``value`` (a params dataclass, a tuple
    of them, an array or a number) that is not finite or does not fit float32."""
    if dataclasses.is_dataclass(value):
        for f in dataclasses.fields(value):
            _check_recordable(part_name, getattr(value, f.name), f"{type(value).__name__}.{f.name}")
    elif isinstance(value, tuple):
        for i, item in enumerate(value):
            _check_recordable(part_name, item, f"{path}[{i}]")
    elif isinstance(value, float | np.ndarray | np.floating):
        a = np.asarray(value)
        if a.dtype.kind != "f" or not a.size:
            return
        with np.errstate(over="ignore", under="ignore"):
            lost = (a != 0) & (a.astype(np.float32) == 0)  # below float32's range: recorded as 0
        bad = ~(np.abs(a) <= FLOAT32_MAX) | lost
        if bad.any():
            k = tuple(int(i) for i in np.unravel_index(int(np.flatnonzero(bad.reshape(-1))[0]), a.shape))
            v = float(a[k])
            where = f"[{', '.join(map(str, k))}]" if k else ""
            fits = (f"does not fit the float32 PVD records params in (magnitudes from "
                    f"{FLOAT32_SMALLEST:.3g} to {FLOAT32_MAX:.3g}, or 0)")
            what = "must be finite" if not math.isfinite(v) else fits
            raise ParamBoundsError(f"{path}{where} = {v:.6g} {what}", part_name)


# --------------------------------------------------------------------------------------------
# Divergence of a running simulation
# --------------------------------------------------------------------------------------------

#: Largest wheel spin (rad/s): 1e5 rad/s is a 0.3 m wheel at 3e4 m/s.
MAX_WHEEL_SPEED = 1e5
#: Largest body speed (m/s, times the length scale): 30 times the speed of sound.
MAX_BODY_SPEED = 1e4
#: Largest body angular speed (rad/s): 1,600 turns a second.
MAX_BODY_ANGULAR_SPEED = 1e4
#: Largest engine speed (rad/s): about a million rpm.
MAX_ENGINE_SPEED = 1e5


class SimulationDiverged(PvdError, ValueError):
    """A simulation state left :mod:`simcore.limits`' bounds (or became inf / NaN).

    A :class:`~pvdkit.types.PvdError` (the params or the scenario asked for it, not a bug in
    simcore: ``pvdkit record`` prints it as one line) and a ``ValueError``, as it always was.

    The message is one line: ``simulation diverged at step 812: wheel 2 rotation_speed =
    1.4e+12 rad/s (limit 1e+05)``. ``step`` (1-based steps since the vehicle was placed),
    ``what`` (object and attribute), ``value`` and ``limit`` (None: not finite) are kept as
    attributes. A recorder attached to the vehicle has written the diverged step already, so a
    recording ends with the first bad frame.
    """

    def __init__(self, step: int, what: str, value: float, limit: float | None, unit: str) -> None:
        bound = "must be finite" if limit is None else f"limit {limit:.3g}"
        shown = f"{value:.3g} {unit}" if unit else f"{value:.3g}"
        super().__init__(f"simulation diverged at step {step}: {what} = {shown} ({bound})")
        self.step = step
        self.what = what
        self.value = value
        self.limit = limit


def check_vehicle_states(states: Any, scale: float, step: int) -> None:
    """Raise :class:`SimulationDiverged` when a vehicle state is not finite or beyond its
    bound. Cheap (plain float comparisons on a few short arrays, about 3 µs), so it runs after
    every step; a NaN fails every comparison and is caught with the out-of-bound values."""
    speeds = states.wheel_rigid_body_1d.rotation_speed.tolist()
    for k, x in enumerate(speeds):
        if not -MAX_WHEEL_SPEED <= x <= MAX_WHEEL_SPEED:
            raise SimulationDiverged(step, f"wheel {k} rotation_speed", x,
                                     MAX_WHEEL_SPEED if math.isfinite(x) else None, "rad/s")
    rb = states.rigid_body
    vx, vy, vz = rb.linear_velocity.tolist()
    lin_limit = MAX_BODY_SPEED * scale
    if not vx * vx + vy * vy + vz * vz <= lin_limit * lin_limit:
        lin = math.sqrt(vx * vx + vy * vy + vz * vz)
        raise SimulationDiverged(step, "rigid body |linear_velocity|", lin,
                                 lin_limit if math.isfinite(lin) else None,
                                 "m/s" if scale == 1.0 else "length/s")
    wx, wy, wz = rb.angular_velocity.tolist()
    if not wx * wx + wy * wy + wz * wz <= MAX_BODY_ANGULAR_SPEED * MAX_BODY_ANGULAR_SPEED:
        ang = math.sqrt(wx * wx + wy * wy + wz * wz)
        raise SimulationDiverged(step, "rigid body |angular_velocity|", ang,
                                 MAX_BODY_ANGULAR_SPEED if math.isfinite(ang) else None, "rad/s")
    for name in ("pos", "quat"):
        values = getattr(rb, name).tolist()
        if not math.isfinite(sum(values)):  # a NaN or inf, or finite values too large to add
            for k, x in enumerate(values):
                if not math.isfinite(x):
                    raise SimulationDiverged(step, f"rigid body {name}[{k}]", x, None, "")
    engine = getattr(states, "engine", None)
    if engine is not None:
        omega = float(engine.rotation_speed)
        if not -MAX_ENGINE_SPEED <= omega <= MAX_ENGINE_SPEED:
            raise SimulationDiverged(step, "engine rotation_speed", omega,
                                     MAX_ENGINE_SPEED if math.isfinite(omega) else None, "rad/s")
