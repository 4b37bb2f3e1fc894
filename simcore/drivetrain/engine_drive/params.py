"""Engine-drive parameters (``PxVehicleDrivetrainParams.h``): engine, gearbox, autobox, clutch,
differentials.

Every class is a frozen dataclass with ``validate()`` (raises ``ValueError`` naming the field and,
where it applies, the wheel or gear) and ``transform_and_scale(src_frame, trg_frame, src_scale,
trg_scale)``. Only torques, moments of inertia and torque-time products change with the length
scale (as ``mass * length^2 / time^k``, so by ``scale^2``); nothing here depends on the frame.

Per-wheel arrays (differential torque ratios, average wheel speed ratios) are float64 with shape
``(n_wheels,)``: the differential holds one entry per wheel of the vehicle, where PhysX holds a
fixed array of :data:`~simcore.limits.MAX_NB_WHEELS`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import IntEnum

import numpy as np

from simcore.frame import Frame, Scale
from simcore.limits import MAX_NB_WHEELS

#: ``PxVehicleEngineParams::eMAX_NB_ENGINE_TORQUE_CURVE_ENTRIES``.
MAX_NB_ENGINE_TORQUE_CURVE_ENTRIES = 8
#: ``PxVehicleGearboxParams::eMAX_NB_GEARS`` (reverse and neutral included).
MAX_NB_GEARS = 32
#: ``PX_VEHICLE_FOUR_WHEEL_DIFFERENTIAL_MAXIMUM_STRENGTH`` (``PX_MAX_F32``): a limited-slip rate
#: that corrects a breached bias instantly. ``math.inf`` is accepted as the same thing.
FOUR_WHEEL_DIFFERENTIAL_MAXIMUM_STRENGTH = float(np.finfo(np.float32).max)


#: EngineParams' scalar fields; all but ``moi`` (which must be > 0) may be 0.
_ENGINE_SCALARS = (
    "moi", "peak_torque", "idle_omega", "max_omega", "damping_rate_full_throttle",
    "damping_rate_zero_throttle_clutch_engaged", "damping_rate_zero_throttle_clutch_disengaged",
)


def _torque_scale(src_scale: Scale, trg_scale: Scale) -> float:
    r = trg_scale.scale / src_scale.scale
    return r * r


def _frozen_array(values: object, dtype: type = np.float64) -> np.ndarray:
    a = np.array(values, dtype=dtype)
    a.setflags(write=False)
    return a


def _check_finite(value: float, cls: str, name: str) -> None:
    if not math.isfinite(value):
        raise ValueError(f"{cls}.{name} must be a finite number, got {value!r}")


# ----------------------------------------------------------------------------------------------
# Clutch
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ClutchCommandResponseParams:
    """``PxVehicleClutchCommandResponseParams``: strength of the fully engaged clutch.

    ``max_response``: range [0, inf), unit torque * time = ``mass * length^2 / time``. The clutch
    torque is ``strength * (G * average_wheel_speed - engine_speed)``; a stronger clutch brings
    engine and wheels to a common speed sooner, a weak one slips longer.
    """

    max_response: float

    def validate(self) -> None:
        """Raise ``ValueError`` unless ``max_response`` is finite and >= 0."""
        _check_finite(self.max_response, "ClutchCommandResponseParams", "max_response")
        if self.max_response < 0.0:
            raise ValueError(
                f"ClutchCommandResponseParams.max_response must be >= 0, got {self.max_response}"
            )

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> ClutchCommandResponseParams:
        """Same clutch in another frame/scale: ``max_response`` scales by ``scale^2``."""
        return ClutchCommandResponseParams(self.max_response * _torque_scale(src_scale, trg_scale))


class ClutchAccuracyMode(IntEnum):
    """``PxVehicleClutchAccuracyMode``: how the coupled engine + wheel speeds are solved.

    ESTIMATE runs a fixed number of Gauss-Seidel iterations (cheaper, approximate); BEST_POSSIBLE
    solves the linear system exactly by LU decomposition with full pivoting (recommended).
    """

    ESTIMATE = 0
    BEST_POSSIBLE = 1


@dataclass(frozen=True, eq=False)
class ClutchParams:
    """``PxVehicleClutchParams``: accuracy of the implicit engine + wheel speed solve.

    ``estimate_iterations`` (>= 1 in ESTIMATE mode) is the number of Gauss-Seidel sweeps; it has no
    effect in BEST_POSSIBLE mode. The clutch model is the same in both modes, only the accuracy of
    its solution changes.
    """

    accuracy_mode: ClutchAccuracyMode = ClutchAccuracyMode.BEST_POSSIBLE
    estimate_iterations: int = 5

    def __post_init__(self) -> None:
        try:
            mode = ClutchAccuracyMode(int(self.accuracy_mode))
        except ValueError as exc:
            raise ValueError(
                "ClutchParams.accuracy_mode must be 0 (ESTIMATE) or 1 (BEST_POSSIBLE), "
                f"got {self.accuracy_mode!r}"
            ) from exc
        object.__setattr__(self, "accuracy_mode", mode)

    def validate(self) -> None:
        """Raise ``ValueError`` if ESTIMATE mode is asked for with fewer than one iteration."""
        if int(self.estimate_iterations) != self.estimate_iterations:
            raise ValueError(
                f"ClutchParams.estimate_iterations must be an integer, got {self.estimate_iterations!r}"
            )
        if self.accuracy_mode == ClutchAccuracyMode.ESTIMATE and self.estimate_iterations < 1:
            raise ValueError(
                "ClutchParams.estimate_iterations must be greater than zero in ESTIMATE mode, "
                f"got {self.estimate_iterations}"
            )

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> ClutchParams:
        """Dimensionless: returned unchanged."""
        return self


# ----------------------------------------------------------------------------------------------
# Engine
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class EngineParams:
    """``PxVehicleEngineParams``: torque curve, inertia, speed range and damping of the engine.

    - ``torque_curve``: (k, 2) float64, 0 <= k <= 8, rows ``(normalised speed, normalised
      torque)`` = ``(engine speed / max_omega, torque / peak_torque)``; x strictly increasing.
      Between points it is linear, outside it holds the end values; an empty curve gives 0.
    - ``moi``: (0, inf), ``mass * length^2``.
    - ``peak_torque``: [0, inf), ``mass * length^2 / time^2``. Drive torque is
      ``throttle * peak_torque * torque_curve(speed / max_omega)``.
    - ``idle_omega``, ``max_omega``: [0, inf), radians / time; the solved engine speed is clamped
      to this range every update.
    - ``damping_rate_full_throttle``, ``damping_rate_zero_throttle_clutch_engaged``,
      ``damping_rate_zero_throttle_clutch_disengaged``: [0, inf), ``mass * length^2 / time``.
      The applied damping interpolates the zero-throttle rate (itself interpolated between
      engaged and disengaged by the normalised clutch response, neutral counting as disengaged)
      towards the full-throttle rate by the throttle.
    """

    torque_curve: np.ndarray
    moi: float
    peak_torque: float
    idle_omega: float
    max_omega: float
    damping_rate_full_throttle: float
    damping_rate_zero_throttle_clutch_engaged: float
    damping_rate_zero_throttle_clutch_disengaged: float

    def __post_init__(self) -> None:
        curve = np.array(self.torque_curve, dtype=np.float64)
        if curve.size == 0:
            curve = curve.reshape(0, 2)
        if curve.ndim != 2 or curve.shape[1] != 2:
            raise ValueError(
                f"EngineParams.torque_curve must have shape (k, 2) of (normalised speed, normalised torque) "
                f"pairs, got shape {curve.shape}"
            )
        curve.setflags(write=False)
        object.__setattr__(self, "torque_curve", curve)
        # Plain tuples make the per-update scalar interpolation cheap.
        object.__setattr__(self, "_curve_x", tuple(float(x) for x in curve[:, 0]))
        object.__setattr__(self, "_curve_y", tuple(float(y) for y in curve[:, 1]))
        for name in _ENGINE_SCALARS:
            object.__setattr__(self, name, float(getattr(self, name)))

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first field outside its range."""
        cls = "EngineParams"
        k = self.torque_curve.shape[0]
        if k > MAX_NB_ENGINE_TORQUE_CURVE_ENTRIES:
            raise ValueError(
                f"{cls}.torque_curve has {k} points; at most {MAX_NB_ENGINE_TORQUE_CURVE_ENTRIES} are allowed"
            )
        if not np.all(np.isfinite(self.torque_curve)):
            raise ValueError(f"{cls}.torque_curve must hold finite numbers")
        for i in range(1, k):
            if not self.torque_curve[i, 0] > self.torque_curve[i - 1, 0]:
                raise ValueError(
                    f"{cls}.torque_curve x values must be strictly increasing: point {i} "
                    f"(x={self.torque_curve[i, 0]}) does not exceed point {i - 1} "
                    f"(x={self.torque_curve[i - 1, 0]})"
                )
        for name in _ENGINE_SCALARS:
            _check_finite(getattr(self, name), cls, name)
        if not self.moi > 0.0:
            raise ValueError(f"{cls}.moi must be greater than zero, got {self.moi}")
        for name in _ENGINE_SCALARS[1:]:
            if getattr(self, name) < 0.0:
                raise ValueError(f"{cls}.{name} must be >= 0, got {getattr(self, name)}")
        if not self.max_omega > 0.0:
            raise ValueError(
                f"{cls}.max_omega must be greater than zero "
                "(the torque curve is indexed by speed / max_omega)"
            )
        if self.idle_omega > self.max_omega:
            raise ValueError(
                f"{cls}.idle_omega ({self.idle_omega}) must not exceed max_omega ({self.max_omega})"
            )

    def normalised_torque(self, normalised_speed: float) -> float:
        """The torque curve at ``normalised_speed`` (``PxVehicleFixedSizeLookupTable::interpolate``)."""
        xs: tuple[float, ...] = self._curve_x  # type: ignore[attr-defined]
        ys: tuple[float, ...] = self._curve_y  # type: ignore[attr-defined]
        n = len(xs)
        if n == 0:
            return 0.0
        if n == 1 or normalised_speed < xs[0]:
            return ys[0]
        for i in range(1, n):
            if normalised_speed < xs[i]:
                x0, y0 = xs[i - 1], ys[i - 1]
                return y0 + (ys[i] - y0) * (normalised_speed - x0) / (xs[i] - x0)
        return ys[-1]

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> EngineParams:
        """Same engine in another scale: inertia, torque and damping rates scale by ``scale^2``."""
        s = _torque_scale(src_scale, trg_scale)
        scaled = ("moi", "peak_torque", "damping_rate_full_throttle",
                  "damping_rate_zero_throttle_clutch_engaged", "damping_rate_zero_throttle_clutch_disengaged")
        return replace(self, **{name: getattr(self, name) * s for name in scaled})


# ----------------------------------------------------------------------------------------------
# Gearbox and autobox
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class GearboxParams:
    """``PxVehicleGearboxParams``: gear ratios, final drive and shift duration.

    - ``ratios``: (nb_ratios,) float64, 1 <= nb_ratios <= 32, ordered reverse gears (< 0), the
      neutral gear (== 0) at index ``neutral_gear``, then forward gears (> 0, strictly decreasing).
      The applied ratio is ``ratios[current_gear] * final_ratio`` (engine speed per wheel speed).
    - ``final_ratio``: (0, inf), dimensionless.
    - ``switch_time``: [0, inf), time. While a shift is under way the gearbox sits in neutral, so
      the clutch transmits nothing.
    """

    ratios: np.ndarray
    neutral_gear: int
    final_ratio: float
    switch_time: float

    def __post_init__(self) -> None:
        ratios = _frozen_array(self.ratios).reshape(-1)
        ratios.setflags(write=False)
        object.__setattr__(self, "ratios", ratios)
        object.__setattr__(self, "_ratios_t", tuple(float(r) for r in ratios))
        object.__setattr__(self, "final_ratio", float(self.final_ratio))
        object.__setattr__(self, "switch_time", float(self.switch_time))

    @property
    def nb_ratios(self) -> int:
        """Number of gears, reverse and neutral included."""
        return int(self.ratios.shape[0])

    @property
    def first_gear(self) -> int:
        """Index of the first forward gear (``neutral_gear + 1``)."""
        return self.neutral_gear + 1

    def ratio(self, gear: int) -> float:
        """Gear ratio of ``gear`` without the final ratio."""
        return self._ratios_t[gear]  # type: ignore[attr-defined]

    def validate(self) -> None:
        """Raise ``ValueError`` naming the offending gear if the ratios break Vehicle2's rules."""
        cls = "GearboxParams"
        n = self.nb_ratios
        if not 1 <= n <= MAX_NB_GEARS:
            raise ValueError(f"{cls}.ratios must hold 1..{MAX_NB_GEARS} gears, got {n}")
        if int(self.neutral_gear) != self.neutral_gear or not 0 <= self.neutral_gear < n:
            raise ValueError(f"{cls}.neutral_gear must be an index in 0..{n - 1}, got {self.neutral_gear!r}")
        _check_finite(self.final_ratio, cls, "final_ratio")
        _check_finite(self.switch_time, cls, "switch_time")
        if not self.final_ratio > 0.0:
            raise ValueError(f"{cls}.final_ratio must be greater than zero, got {self.final_ratio}")
        if self.switch_time < 0.0:
            raise ValueError(f"{cls}.switch_time must be >= 0, got {self.switch_time}")
        if not np.all(np.isfinite(self.ratios)):
            raise ValueError(f"{cls}.ratios must hold finite numbers")
        ng = self.neutral_gear
        for i in range(ng):
            if not self.ratios[i] < 0.0:
                raise ValueError(f"{cls}.ratios[{i}] is a reverse gear and must be < 0, got {self.ratios[i]}")
        if self.ratios[ng] != 0.0:
            raise ValueError(f"{cls}.ratios[{ng}] is the neutral gear and must be 0, got {self.ratios[ng]}")
        for i in range(ng + 1, n):
            if not self.ratios[i] > 0.0:
                raise ValueError(f"{cls}.ratios[{i}] is a forward gear and must be > 0, got {self.ratios[i]}")
        for i in range(ng + 2, n):
            if not self.ratios[i] < self.ratios[i - 1]:
                raise ValueError(
                    f"{cls}.ratios: forward gear ratios must decrease; ratios[{i}]={self.ratios[i]} "
                    f"is not below ratios[{i - 1}]={self.ratios[i - 1]}"
                )

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> GearboxParams:
        """Dimensionless ratios and a time: returned unchanged."""
        return self


@dataclass(frozen=True, eq=False)
class AutoboxParams:
    """``PxVehicleAutoboxParams``: when the automatic gearbox shifts.

    - ``up_ratios``, ``down_ratios``: (nb_ratios,) float64 in [0, 1], indexed by the current gear.
      A shift up starts when ``engine speed / max_omega > up_ratios[gear]`` (never from the top
      gear), a shift down when it is ``< down_ratios[gear]`` (never below first gear). Entries
      for reverse and neutral are unused. Shorter arrays than the gearbox are padded with zeros,
      as PhysX's fixed arrays are.
    - ``latency``: [0, inf), time; the minimum time between two autobox-initiated shifts.
    """

    up_ratios: np.ndarray
    down_ratios: np.ndarray
    latency: float

    def __post_init__(self) -> None:
        for name in ("up_ratios", "down_ratios"):
            a = np.array(getattr(self, name), dtype=np.float64).reshape(-1)
            a.setflags(write=False)
            object.__setattr__(self, name, a)
        object.__setattr__(self, "latency", float(self.latency))

    def up_ratio(self, gear: int) -> float:
        """Up-shift threshold of ``gear`` (0 beyond the stored entries)."""
        return float(self.up_ratios[gear]) if gear < self.up_ratios.shape[0] else 0.0

    def down_ratio(self, gear: int) -> float:
        """Down-shift threshold of ``gear`` (0 beyond the stored entries)."""
        return float(self.down_ratios[gear]) if gear < self.down_ratios.shape[0] else 0.0

    def validate(self, gearbox: GearboxParams | None = None) -> None:
        """Raise ``ValueError`` naming the gear whose ratio is out of range.

        With ``gearbox`` the check follows ``PxVehicleAutoboxParams::isValid`` (only the forward
        gears that can shift up / down are checked); without it every entry must be in [0, 1].
        """
        cls = "AutoboxParams"
        _check_finite(self.latency, cls, "latency")
        if self.latency < 0.0:
            raise ValueError(f"{cls}.latency must be >= 0, got {self.latency}")
        for name in ("up_ratios", "down_ratios"):
            a = getattr(self, name)
            if a.shape[0] > MAX_NB_GEARS:
                raise ValueError(f"{cls}.{name} has {a.shape[0]} entries; at most {MAX_NB_GEARS}")
            if not np.all(np.isfinite(a)):
                raise ValueError(f"{cls}.{name} must hold finite numbers")
        if gearbox is None:
            up_gears: Sequence[int] = range(self.up_ratios.shape[0])
            down_gears: Sequence[int] = range(self.down_ratios.shape[0])
        else:
            gearbox.validate()
            up_gears = range(gearbox.neutral_gear + 1, gearbox.nb_ratios - 1)
            down_gears = range(gearbox.neutral_gear + 2, gearbox.nb_ratios)
        for i in up_gears:
            if not 0.0 <= self.up_ratio(i) <= 1.0:
                raise ValueError(f"{cls}.up_ratios[{i}] must be in [0, 1], got {self.up_ratio(i)}")
        for i in down_gears:
            if not 0.0 <= self.down_ratio(i) <= 1.0:
                raise ValueError(f"{cls}.down_ratios[{i}] must be in [0, 1], got {self.down_ratio(i)}")

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> AutoboxParams:
        """Dimensionless ratios and a time: returned unchanged."""
        return self


# ----------------------------------------------------------------------------------------------
# Differentials
# ----------------------------------------------------------------------------------------------


def _wheel_array(values: object, cls: str, name: str) -> np.ndarray:
    a = np.array(values, dtype=np.float64)
    if a.ndim != 1:
        raise ValueError(f"{cls}.{name} must be a 1-d array with one entry per wheel, got shape {a.shape}")
    a.setflags(write=False)
    return a


def _validate_multi_wheel(self: MultiWheelDriveDifferentialParams, cls: str) -> None:
    n = self.nb_wheels
    if not 1 <= n <= MAX_NB_WHEELS:
        raise ValueError(f"{cls}.torque_ratios must have 1..{MAX_NB_WHEELS} entries (one per wheel), got {n}")
    if self.ave_wheel_speed_ratios.shape[0] != n:
        raise ValueError(
            f"{cls}.ave_wheel_speed_ratios has {self.ave_wheel_speed_ratios.shape[0]} entries but "
            f"torque_ratios has {n}; both need one entry per wheel"
        )
    for w in range(n):
        t = self.torque_ratios[w]
        a = self.ave_wheel_speed_ratios[w]
        if not (math.isfinite(t) and abs(t) <= 1.0):
            raise ValueError(f"{cls}.torque_ratios[{w}] (wheel {w}) must be in [-1, 1], got {t}")
        if not (math.isfinite(a) and 0.0 <= a <= 1.0):
            raise ValueError(f"{cls}.ave_wheel_speed_ratios[{w}] (wheel {w}) must be in [0, 1], got {a}")
    s_t = float(np.sum(np.abs(self.torque_ratios)))
    s_a = float(np.sum(self.ave_wheel_speed_ratios))
    if not 0.99 <= s_a <= 1.01:
        raise ValueError(f"{cls}.ave_wheel_speed_ratios must sum to 1 (±0.01), got {s_a}")
    if not 0.99 <= s_t <= 1.01:
        raise ValueError(f"{cls}.torque_ratios must have absolute values summing to 1 (±0.01), got {s_t}")


@dataclass(frozen=True, eq=False)
class MultiWheelDriveDifferentialParams:
    """``PxVehicleMultiWheelDriveDifferentialParams``: an open differential to any set of wheels.

    - ``torque_ratios``: (n_wheels,) in [-1, 1]; the share of the clutch torque each wheel gets.
      Wheels with 0 are not connected to the differential. The absolute values sum to 1; a
      negative entry gears that wheel backwards.
    - ``ave_wheel_speed_ratios``: (n_wheels,) in [0, 1], summing to 1; each wheel's weight in the
      average wheel speed seen at the clutch.
    """

    torque_ratios: np.ndarray
    ave_wheel_speed_ratios: np.ndarray

    def __post_init__(self) -> None:
        cls = type(self).__name__
        object.__setattr__(self, "torque_ratios", _wheel_array(self.torque_ratios, cls, "torque_ratios"))
        object.__setattr__(self, "ave_wheel_speed_ratios",
                           _wheel_array(self.ave_wheel_speed_ratios, cls, "ave_wheel_speed_ratios"))

    @property
    def nb_wheels(self) -> int:
        """Number of wheels the differential describes."""
        return int(self.torque_ratios.shape[0])

    def validate(self) -> None:
        """Raise ``ValueError`` naming the wheel whose ratio is out of range, or a bad sum."""
        _validate_multi_wheel(self, type(self).__name__)

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> MultiWheelDriveDifferentialParams:
        """Dimensionless: returned unchanged."""
        return self


@dataclass(frozen=True, eq=False)
class FourWheelDriveDifferentialParams(MultiWheelDriveDifferentialParams):
    """``PxVehicleFourWheelDriveDifferentialParams``: a multi-wheel differential with limited slip.

    On top of the open split it watches the speed ratio of the two front wheels, of the two rear
    wheels and of the front sum to the rear sum. A bias of 0 disables that check; a bias > 1
    allows that ratio before the differential steps in, and then constrains the wheels towards the
    target ratio (1 < target < bias; bias = target = 1 locks). ``rate`` (1/time, >= 0) is how fast
    the ratio is pulled down to the target each update (``ratio - rate * dt``, never below the
    target); :data:`FOUR_WHEEL_DIFFERENTIAL_MAXIMUM_STRENGTH` or ``inf`` corrects instantly and 0
    disables limited slip.

    ``front_wheel_ids`` / ``rear_wheel_ids``: two distinct wheel ids each.

    ``predict_breach`` (not in Vehicle2; default True): also check the biases on the speeds the
    drivetrain's solve predicts for the end of the update and re-solve with the constraint when
    they would be breached (see ``engine_drivetrain_update``'s ``limited_slip``). Vehicle2 only
    checks the speeds at the start of an update, so a wheel on ice can spin far past the bias in
    one update; False reproduces that exactly.
    """

    front_wheel_ids: tuple[int, int] = (0, 1)
    rear_wheel_ids: tuple[int, int] = (2, 3)
    front_bias: float = 0.0
    front_target: float = 0.0
    rear_bias: float = 0.0
    rear_target: float = 0.0
    center_bias: float = 0.0
    center_target: float = 0.0
    rate: float = 0.0
    predict_breach: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "front_wheel_ids", tuple(int(w) for w in self.front_wheel_ids))
        object.__setattr__(self, "rear_wheel_ids", tuple(int(w) for w in self.rear_wheel_ids))
        for name in ("front_bias", "front_target", "rear_bias", "rear_target", "center_bias",
                     "center_target", "rate"):
            object.__setattr__(self, name, float(getattr(self, name)))
        object.__setattr__(self, "predict_breach", bool(self.predict_breach))

    @property
    def instantaneous(self) -> bool:
        """True if ``rate`` asks for instant correction of a breached bias."""
        return self.rate >= FOUR_WHEEL_DIFFERENTIAL_MAXIMUM_STRENGTH

    def validate(self) -> None:
        """Raise ``ValueError`` naming the bias, target or wheel id that breaks Vehicle2's rules."""
        cls = "FourWheelDriveDifferentialParams"
        _validate_multi_wheel(self, cls)
        n = self.nb_wheels
        for name in ("front_wheel_ids", "rear_wheel_ids"):
            ids = getattr(self, name)
            if len(ids) != 2:
                raise ValueError(f"{cls}.{name} must hold exactly two wheel ids, got {ids}")
        for name in ("front_bias", "front_target", "rear_bias", "rear_target", "center_bias",
                     "center_target"):
            _check_finite(getattr(self, name), cls, name)
        if math.isnan(self.rate) or self.rate < 0.0:
            raise ValueError(f"{cls}.rate must be >= 0, got {self.rate}")
        checks = (
            ("front", self.front_bias, self.front_target, self.front_wheel_ids),
            ("rear", self.rear_bias, self.rear_target, self.rear_wheel_ids),
            ("center", self.center_bias, self.center_target, self.front_wheel_ids + self.rear_wheel_ids),
        )
        for label, bias, target, ids in checks:
            if bias == 0.0:
                continue
            if bias < 1.0:
                raise ValueError(
                    f"{cls}.{label}_bias must be 0 (off), 1 (locked) or greater than 1 (limited slip), "
                    f"got {bias}"
                )
            for w in ids:
                if not 0 <= w < n:
                    raise ValueError(
                        f"{cls}: {label}_bias is enabled but wheel id {w} is not a wheel of the vehicle "
                        f"(0..{n - 1})"
                    )
                if self.torque_ratios[w] == 0.0:
                    raise ValueError(
                        f"{cls}: {label}_bias is enabled but wheel {w} is not connected to the differential "
                        "(torque_ratios is 0)"
                    )
            if len(set(ids)) != len(ids):
                raise ValueError(f"{cls}: {label}_bias is enabled but its wheel ids {ids} are not distinct")
            locked = bias == 1.0 and target == 1.0
            if not locked and not 1.0 < target < bias:
                raise ValueError(
                    f"{cls}.{label}_target must lie in (1, {label}_bias={bias}) for a limited slip "
                    f"(or bias = target = 1 to lock), got {target}"
                )


class TankDriveModel(IntEnum):
    """Stingray's ``tank_drive_model``: which way the tracks may be driven.

    STANDARD: tracks only drive forwards (a negative thrust command is treated as 0; turn with the
    per-track brakes or a slower track). SPECIAL: each track can be driven forwards and backwards
    (thrusts in [-1, 1], Vehicle2's own behaviour), so the tank can reverse a track and pivot.
    """

    STANDARD = 0
    SPECIAL = 1

    @classmethod
    def parse(cls, value: str | int | TankDriveModel) -> TankDriveModel:
        """Accept ``"standard"``, ``"special"`` (any case), 0, 1 or a member."""
        if isinstance(value, str):
            key = value.strip().upper()
            if key in cls.__members__:
                return cls[key]
            raise ValueError(f"tank drive model must be 'standard' or 'special', got {value!r}")
        try:
            return cls(int(value))
        except ValueError as exc:
            raise ValueError(f"tank drive model must be 0 (standard) or 1 (special), got {value!r}") from exc


@dataclass(frozen=True, eq=False)
class TankDriveDifferentialParams(MultiWheelDriveDifferentialParams):
    """``PxVehicleTankDriveDifferentialParams``: a multi-wheel differential feeding tank tracks.

    - ``tracks``: tuple of tracks, each a tuple of >= 1 wheel ids; a wheel is on at most one track.
      Every wheel of a track is constrained to the same contact-patch speed (rotation speeds in
      the ratio of the radii), so all wheels of a track turn together.
    - ``thrust_id_per_track``: for each track, the thrust command (0 or 1) that scales its torque.
      By default track ``i`` uses thrust ``i`` (as PhysX's JSON loader assigns them).
    - ``drive_model``: :class:`TankDriveModel` (Stingray's "standard" / "special"); SPECIAL is
      Vehicle2's behaviour.

    A wheel on a track and connected to the differential gets ``torque_ratio * thrust``; on a
    track but not connected it gets no engine torque but still follows its track.
    """

    tracks: tuple[tuple[int, ...], ...] = ()
    thrust_id_per_track: tuple[int, ...] | None = None
    drive_model: TankDriveModel = TankDriveModel.SPECIAL

    def __post_init__(self) -> None:
        super().__post_init__()
        tracks = tuple(tuple(int(w) for w in t) for t in self.tracks)
        object.__setattr__(self, "tracks", tracks)
        thrust_ids = (tuple(range(len(tracks))) if self.thrust_id_per_track is None
                      else tuple(int(t) for t in self.thrust_id_per_track))
        object.__setattr__(self, "thrust_id_per_track", thrust_ids)
        object.__setattr__(self, "drive_model", TankDriveModel.parse(self.drive_model))

    @property
    def nb_tracks(self) -> int:
        """Number of tracks."""
        return len(self.tracks)

    @property
    def nb_wheels_per_track(self) -> tuple[int, ...]:
        """Number of wheels on each track (``nbWheelsPerTrack``)."""
        return tuple(len(t) for t in self.tracks)

    @property
    def wheel_ids_in_track_order(self) -> tuple[int, ...]:
        """All track wheel ids, track after track (``wheelIdsInTrackOrder``)."""
        return tuple(w for t in self.tracks for w in t)

    @property
    def track_to_wheel_ids(self) -> tuple[int, ...]:
        """Offset of each track's first wheel in :attr:`wheel_ids_in_track_order` (``trackToWheelIds``)."""
        offsets, k = [], 0
        for t in self.tracks:
            offsets.append(k)
            k += len(t)
        return tuple(offsets)

    def validate(self) -> None:
        """Raise ``ValueError`` naming the track or wheel that breaks Vehicle2's rules."""
        cls = "TankDriveDifferentialParams"
        _validate_multi_wheel(self, cls)
        n = self.nb_wheels
        if len(self.thrust_id_per_track) != self.nb_tracks:
            raise ValueError(
                f"{cls}.thrust_id_per_track has {len(self.thrust_id_per_track)} entries "
                f"for {self.nb_tracks} tracks"
            )
        seen: dict[int, int] = {}
        for i, track in enumerate(self.tracks):
            if not track:
                raise ValueError(f"{cls}.tracks[{i}] has no wheels")
            if self.thrust_id_per_track[i] not in (0, 1):
                raise ValueError(
                    f"{cls}.thrust_id_per_track[{i}] must be 0 or 1, got {self.thrust_id_per_track[i]}"
                )
            for w in track:
                if not 0 <= w < n:
                    raise ValueError(f"{cls}.tracks[{i}] names wheel {w}, which is not a wheel 0..{n - 1}")
                if w in seen:
                    raise ValueError(
                        f"{cls}: wheel {w} is on track {seen[w]} and track {i}; "
                        "a wheel can be on one track only"
                    )
                seen[w] = i
        if len(seen) > MAX_NB_WHEELS:
            raise ValueError(f"{cls}: {len(seen)} wheels on tracks; at most {MAX_NB_WHEELS}")


DifferentialParams = (
    MultiWheelDriveDifferentialParams | FourWheelDriveDifferentialParams | TankDriveDifferentialParams
)


@dataclass(frozen=True, eq=False)
class EngineDrivetrainParams:
    """Every engine-drive parameter of one vehicle, as PhysX's JSON file ``EngineDrive.json`` and
    the snippets' ``EngineDrivetrainParams`` group them.

    A file carries all three differentials; a vehicle uses one of them (see
    :meth:`differential`).
    """

    autobox: AutoboxParams
    clutch_command_response: ClutchCommandResponseParams
    engine: EngineParams
    gearbox: GearboxParams
    multi_wheel_differential: MultiWheelDriveDifferentialParams
    four_wheel_differential: FourWheelDriveDifferentialParams
    tank_differential: TankDriveDifferentialParams
    clutch: ClutchParams

    def differential(self, kind: str) -> DifferentialParams:
        """``"multi_wheel"``, ``"four_wheel"`` or ``"tank"``: the differential of that kind."""
        table = {"multi_wheel": self.multi_wheel_differential, "four_wheel": self.four_wheel_differential,
                 "tank": self.tank_differential}
        if kind not in table:
            raise ValueError(f"differential kind must be one of {sorted(table)}, got {kind!r}")
        return table[kind]

    def validate(self) -> None:
        """Validate every member (the autobox against the gearbox)."""
        self.gearbox.validate()
        self.autobox.validate(self.gearbox)
        self.clutch_command_response.validate()
        self.engine.validate()
        self.multi_wheel_differential.validate()
        self.four_wheel_differential.validate()
        self.tank_differential.validate()
        self.clutch.validate()

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> EngineDrivetrainParams:
        """Every member in another frame and scale."""
        args = (src_frame, trg_frame, src_scale, trg_scale)
        return EngineDrivetrainParams(
            self.autobox.transform_and_scale(*args),
            self.clutch_command_response.transform_and_scale(*args),
            self.engine.transform_and_scale(*args),
            self.gearbox.transform_and_scale(*args),
            self.multi_wheel_differential.transform_and_scale(*args),
            self.four_wheel_differential.transform_and_scale(*args),
            self.tank_differential.transform_and_scale(*args),
            self.clutch.transform_and_scale(*args),
        )
