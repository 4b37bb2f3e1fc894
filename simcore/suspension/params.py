"""Suspension parameters (``PxVehicleSuspensionParams.h``), per-wheel fields as struct of arrays.

Jounce is the compression measured from maximum droop: 0 at full extension, ``suspension_travel_dist``
at full compression. Compliance graphs use the normalised jounce ``jounce / suspension_travel_dist``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import numpy as np

from simcore.axle import AxleDescription
from simcore.frame import (
    Frame,
    Scale,
    frame_to_frame_matrix,
    scale_ratio,
    transform_direction,
    transform_vector,
)
from simcore.maths import quat_transform_frame
from simcore.wheel._soa import check_same_wheel_count, freeze, per_wheel_records, require, wheel_array

#: |length - 1| below which a vector or quaternion is unit (``PxVec3::isNormalized``, ``PxQuat::isUnit``).
_UNIT_TOLERANCE = 1e-4
#: Maximum number of points of a compliance graph (``PxVehicleFixedSizeLookupTable<T, 3>``).
MAX_NB_COMPLIANCE_POINTS = 3


class JounceCalculationType(IntEnum):
    """How the jounce is found from the road plane (``PxVehicleSuspensionJounceCalculationType``)."""

    RAYCAST = 0  #: a ray along the travel direction through the wheel's lowest point
    SWEEP = 1  #: a cylinder (radius, half-width) swept along the travel direction; exact for a plane


@dataclass(frozen=True)
class SuspensionStateCalculationParams:
    """Vehicle-wide choice of jounce computation (``PxVehicleSuspensionStateCalculationParams``).

    ``limit_suspension_expansion_velocity``: when True the suspension may not extend faster than
    its spring/damper can push the wheel mass within one step, so a sudden drop in the ground leaves
    the wheel in the air briefly instead of snapping down (which would create large damping forces).
    """

    suspension_jounce_calculation_type: JounceCalculationType = JounceCalculationType.SWEEP
    limit_suspension_expansion_velocity: bool = False

    def __post_init__(self) -> None:
        try:
            t = JounceCalculationType(self.suspension_jounce_calculation_type)
        except ValueError as exc:
            raise ValueError(
                "SuspensionStateCalculationParams.suspension_jounce_calculation_type must be "
                f"0 (RAYCAST) or 1 (SWEEP), got {self.suspension_jounce_calculation_type!r}"
            ) from exc
        object.__setattr__(self, "suspension_jounce_calculation_type", t)
        object.__setattr__(
            self, "limit_suspension_expansion_velocity", bool(self.limit_suspension_expansion_velocity)
        )

    def validate(self) -> None:
        """Always valid once constructed (the enum is checked on construction)."""

    def transform_and_scale(
        self, src_frame: Frame, trg_frame: Frame, src_scale: Scale, trg_scale: Scale
    ) -> SuspensionStateCalculationParams:
        """Frame- and scale-independent: returns ``self``."""
        return self


_SUSP_FIELDS = (
    "suspension_attachment_pos",
    "suspension_attachment_quat",
    "suspension_travel_dir",
    "suspension_travel_dist",
    "wheel_attachment_pos",
    "wheel_attachment_quat",
)
_SUSP_TAILS = {
    "suspension_attachment_pos": (3,),
    "suspension_attachment_quat": (4,),
    "suspension_travel_dir": (3,),
    "suspension_travel_dist": (),
    "wheel_attachment_pos": (3,),
    "wheel_attachment_quat": (4,),
}


@dataclass(frozen=True, eq=False)
class SuspensionParams:
    """Suspension and wheel frames of each wheel (``PxVehicleSuspensionParams``), rigid body frame.

    - ``suspension_attachment_pos`` (n, 3) ``length`` and ``suspension_attachment_quat`` (n, 4): the
      wheel pose at maximum compression. Camber, steer and toe are applied in this frame.
    - ``suspension_travel_dir`` (n, 3): unit direction of extension (usually "down").
    - ``suspension_travel_dist`` (n,) (0, inf) ``length``: maximum extension from the attachment;
      ``pos + dir * dist`` is the wheel centre at maximum droop.
    - ``wheel_attachment_pos`` (n, 3) ``length`` and ``wheel_attachment_quat`` (n, 4): the wheel pose
      in the suspension frame; the rotation angle is applied in this frame.
    """

    suspension_attachment_pos: np.ndarray
    suspension_attachment_quat: np.ndarray
    suspension_travel_dir: np.ndarray
    suspension_travel_dist: np.ndarray
    wheel_attachment_pos: np.ndarray
    wheel_attachment_quat: np.ndarray

    def __post_init__(self) -> None:
        arrays = {
            f: wheel_array("SuspensionParams", f, getattr(self, f), _SUSP_TAILS[f]) for f in _SUSP_FIELDS
        }
        check_same_wheel_count("SuspensionParams", arrays)
        for f, a in arrays.items():
            object.__setattr__(self, f, freeze(a))

    @classmethod
    def from_wheels(cls, wheels: Sequence[Mapping[str, Any] | Any]) -> SuspensionParams:
        """Build from one dict per wheel; quaternions default to identity, ``wheel_attachment_pos`` to 0."""
        filled = []
        for w in wheels:
            d = (
                dict(w)
                if isinstance(w, Mapping)
                else {f: getattr(w, f) for f in _SUSP_FIELDS if hasattr(w, f)}
            )
            d.setdefault("suspension_attachment_quat", (0.0, 0.0, 0.0, 1.0))
            d.setdefault("wheel_attachment_pos", (0.0, 0.0, 0.0))
            d.setdefault("wheel_attachment_quat", (0.0, 0.0, 0.0, 1.0))
            filled.append(d)
        return cls(**per_wheel_records("SuspensionParams", filled, _SUSP_FIELDS))

    @property
    def nb_wheels(self) -> int:
        """Number of wheels."""
        return int(self.suspension_travel_dist.shape[0])

    def validate(self) -> None:
        """Raise ``ValueError`` naming the field and wheel of the first value Vehicle2 would reject."""
        c = "SuspensionParams"
        for f in _SUSP_FIELDS:
            a = getattr(self, f)
            require(c, f, np.isfinite(a), "must be finite", a)
        for f in ("suspension_attachment_quat", "wheel_attachment_quat"):
            a = getattr(self, f)
            require(
                c,
                f,
                np.abs(np.linalg.norm(a, axis=1) - 1.0) < _UNIT_TOLERANCE,
                "must be a unit quaternion",
                a,
            )
        d = self.suspension_travel_dir
        require(
            c,
            "suspension_travel_dir",
            np.abs(np.linalg.norm(d, axis=1) - 1.0) < _UNIT_TOLERANCE,
            "must be a unit vector",
            d,
        )
        require(
            c,
            "suspension_travel_dist",
            self.suspension_travel_dist > 0.0,
            "must be greater than zero",
            self.suspension_travel_dist,
        )

    def transform_and_scale(
        self, src_frame: Frame, trg_frame: Frame, src_scale: Scale, trg_scale: Scale
    ) -> SuspensionParams:
        """Poses and travel direction rotated into ``trg_frame``; positions and travel distance rescaled."""
        rot = frame_to_frame_matrix(src_frame, trg_frame)
        return SuspensionParams(
            suspension_attachment_pos=transform_vector(
                src_frame, trg_frame, src_scale, trg_scale, self.suspension_attachment_pos
            ),
            suspension_attachment_quat=quat_transform_frame(self.suspension_attachment_quat, rot),
            suspension_travel_dir=transform_direction(src_frame, trg_frame, self.suspension_travel_dir),
            suspension_travel_dist=self.suspension_travel_dist * scale_ratio(src_scale, trg_scale),
            wheel_attachment_pos=transform_vector(
                src_frame, trg_frame, src_scale, trg_scale, self.wheel_attachment_pos
            ),
            wheel_attachment_quat=quat_transform_frame(self.wheel_attachment_quat, rot),
        )


@dataclass(frozen=True, eq=False)
class ComplianceTable:
    """Per-wheel piecewise-linear graph of up to 3 points against normalised jounce
    (``PxVehicleFixedSizeLookupTable<T, 3>``).

    - ``x`` (n, 3): normalised jounce in [0, 1], strictly increasing over the used points.
    - ``y`` (n, 3) for angles or (n, 3, 3) for points: the values.
    - ``nb_points`` (n,) int in [0, 3]: how many leading points each wheel uses; unused slots are 0.

    Lookup rule (Vehicle2's): no points -> 0; one point, or ``x`` before the first point -> first
    value; between two points -> linear interpolation; at or after the last point -> last value.
    """

    x: np.ndarray
    y: np.ndarray
    nb_points: np.ndarray

    def __post_init__(self) -> None:
        x = wheel_array("ComplianceTable", "x", self.x, (MAX_NB_COMPLIANCE_POINTS,))
        y = np.array(self.y, dtype=np.float64)
        if (
            y.ndim not in (2, 3)
            or y.shape[1] != MAX_NB_COMPLIANCE_POINTS
            or (y.ndim == 3 and y.shape[2] != 3)
        ):
            raise ValueError(
                f"ComplianceTable.y: expected shape (n_wheels, 3) or (n_wheels, 3, 3), got {y.shape}"
            )
        nb = wheel_array("ComplianceTable", "nb_points", self.nb_points, (), dtype=np.int64)
        check_same_wheel_count("ComplianceTable", {"x": x, "y": y, "nb_points": nb})
        if np.any((nb < 0) | (nb > MAX_NB_COMPLIANCE_POINTS)):
            w = int(np.flatnonzero((nb < 0) | (nb > MAX_NB_COMPLIANCE_POINTS))[0])
            raise ValueError(f"ComplianceTable.nb_points[wheel {w}] must be in [0, 3], got {nb[w]}")
        for name, a in (("x", x), ("y", y), ("nb_points", nb)):
            object.__setattr__(self, name, freeze(a))
        # Tables of 0 or 1 points are constant in jounce (the common case): precompute the value.
        constant = None
        if np.all(nb <= 1):
            mask = (nb == 1).reshape((-1,) + (1,) * (y.ndim - 2))
            constant = freeze(np.where(mask, y[:, 0], 0.0))
        object.__setattr__(self, "_constant", constant)

    @property
    def is_vector(self) -> bool:
        """True when the values are 3-vectors (force application points)."""
        return self.y.ndim == 3

    @classmethod
    def from_points(
        cls, points_per_wheel: Sequence[Sequence[tuple[float, Any]]], vector: bool
    ) -> ComplianceTable:
        """Build from a list (one per wheel) of up to 3 ``(x, y)`` points; ``y`` a float or a 3-vector."""
        n = len(points_per_wheel)
        x = np.zeros((n, MAX_NB_COMPLIANCE_POINTS))
        y = np.zeros((n, MAX_NB_COMPLIANCE_POINTS, 3)) if vector else np.zeros((n, MAX_NB_COMPLIANCE_POINTS))
        nb = np.zeros(n, dtype=np.int64)
        for w, pts in enumerate(points_per_wheel):
            pts = list(pts)
            if len(pts) > MAX_NB_COMPLIANCE_POINTS:
                raise ValueError(
                    f"ComplianceTable[wheel {w}]: at most {MAX_NB_COMPLIANCE_POINTS} points, got {len(pts)}"
                )
            for i, (px, py) in enumerate(pts):
                x[w, i] = px
                if vector:
                    v = np.asarray(py, dtype=np.float64)
                    if v.shape != (3,):
                        raise ValueError(
                            f"ComplianceTable[wheel {w}] point {i}: expected a 3-vector, got {py!r}"
                        )
                    y[w, i] = v
                else:
                    y[w, i] = float(py)
            nb[w] = len(pts)
        return cls(x, y, nb)

    @classmethod
    def empty(cls, n: int, vector: bool) -> ComplianceTable:
        """``n`` wheels with no points (value 0 everywhere)."""
        return cls.from_points([[] for _ in range(n)], vector)

    def points(self, wheel: int) -> list[tuple[float, Any]]:
        """The used points of one wheel as ``(x, y)`` pairs."""
        k = int(self.nb_points[wheel])
        return [
            (
                float(self.x[wheel, i]),
                self.y[wheel, i].tolist() if self.is_vector else float(self.y[wheel, i]),
            )
            for i in range(k)
        ]

    def interpolate(self, r: np.ndarray) -> np.ndarray:
        """Value at normalised jounce ``r`` (n,) for every wheel: (n,) or (n, 3)."""
        if self._constant is not None:
            return self._constant.copy()
        r = np.asarray(r, dtype=np.float64)
        n = self.x.shape[0]
        rows = np.arange(n)
        nb = self.nb_points
        last = np.maximum(nb - 1, 0)
        y = self.y
        vec = self.is_vector
        out = y[rows, last].copy()
        done = nb <= 1
        done = done | (r < self.x[:, 0])
        out[r < self.x[:, 0]] = y[r < self.x[:, 0], 0]
        for i in range(1, MAX_NB_COMPLIANCE_POINTS):
            x0 = self.x[:, i - 1]
            x1 = self.x[:, i]
            seg = ~done & (nb > i) & (r >= x0) & (r < x1)
            if np.any(seg):
                t = (r[seg] - x0[seg]) / (x1[seg] - x0[seg])
                if vec:
                    t = t[:, None]
                out[seg] = y[seg, i - 1] + (y[seg, i] - y[seg, i - 1]) * t
                done = done | seg
        out[nb == 0] = 0.0
        return out

    def validate(self, cls_name: str, field: str, y_range: tuple[float, float] | None) -> None:
        """Check x in [0, 1] and strictly increasing, optionally y in ``y_range``; name the wheel."""
        for w in range(self.x.shape[0]):
            k = int(self.nb_points[w])
            xs = self.x[w, :k]
            if np.any(~np.isfinite(xs)) or np.any(~np.isfinite(self.y[w, :k])):
                raise ValueError(
                    f"{cls_name}.{field}[wheel {w}] must hold finite numbers, got {self.points(w)}"
                )
            if np.any(np.diff(xs) <= 0.0):
                raise ValueError(
                    f"{cls_name}.{field}[wheel {w}] x values must be strictly increasing, got {xs.tolist()}"
                )
            if np.any((xs < 0.0) | (xs > 1.0)):
                raise ValueError(
                    f"{cls_name}.{field}[wheel {w}] must be points (x, y) with x in [0, 1] "
                    f"(normalised jounce), got {xs.tolist()}"
                )
            if y_range is not None:
                ys = self.y[w, :k]
                if np.any((ys < y_range[0]) | (ys > y_range[1])):
                    raise ValueError(
                        f"{cls_name}.{field}[wheel {w}] must be points (x, y) with y in "
                        f"[{y_range[0]:.6g}, {y_range[1]:.6g}], got {ys.tolist()}"
                    )

    def transform_points(
        self, src_frame: Frame, trg_frame: Frame, src_scale: Scale, trg_scale: Scale
    ) -> ComplianceTable:
        """Vector values rotated into ``trg_frame`` and rescaled (angles are returned unchanged)."""
        if not self.is_vector:
            return self
        y = transform_vector(src_frame, trg_frame, src_scale, trg_scale, self.y)
        return ComplianceTable(self.x.copy(), y, self.nb_points.copy())


_COMPLIANCE_FIELDS = ("wheel_toe_angle", "wheel_camber_angle", "susp_force_app_point", "tire_force_app_point")
_COMPLIANCE_VECTOR = {
    "wheel_toe_angle": False,
    "wheel_camber_angle": False,
    "susp_force_app_point": True,
    "tire_force_app_point": True,
}


@dataclass(frozen=True, eq=False)
class SuspensionComplianceParams:
    """How toe, camber and force application points vary with normalised jounce
    (``PxVehicleSuspensionComplianceParams``).

    - ``wheel_toe_angle``, ``wheel_camber_angle``: :class:`ComplianceTable` of radians in [-pi, pi],
      applied in the suspension frame.
    - ``susp_force_app_point``, ``tire_force_app_point``: :class:`ComplianceTable` of 3-vectors
      (``length``), offsets from the suspension attachment in the suspension frame where the
      suspension / tire forces act (they set the torques on the rigid body).
    """

    wheel_toe_angle: ComplianceTable
    wheel_camber_angle: ComplianceTable
    susp_force_app_point: ComplianceTable
    tire_force_app_point: ComplianceTable

    def __post_init__(self) -> None:
        for f in _COMPLIANCE_FIELDS:
            t = getattr(self, f)
            if not isinstance(t, ComplianceTable):
                raise ValueError(
                    f"SuspensionComplianceParams.{f} must be a ComplianceTable, got {type(t).__name__}"
                )
            if t.is_vector != _COMPLIANCE_VECTOR[f]:
                kind = "3-vector" if _COMPLIANCE_VECTOR[f] else "scalar"
                raise ValueError(f"SuspensionComplianceParams.{f} must hold {kind} values")
        check_same_wheel_count(
            "SuspensionComplianceParams", {f: getattr(self, f).x for f in _COMPLIANCE_FIELDS}
        )

    @classmethod
    def from_wheels(cls, wheels: Sequence[Mapping[str, Any]]) -> SuspensionComplianceParams:
        """Build from one dict per wheel mapping each field to a list of ``(x, y)`` points (missing: none)."""
        if len(wheels) == 0:
            raise ValueError("SuspensionComplianceParams.from_wheels needs at least one wheel")
        tables = {}
        for f in _COMPLIANCE_FIELDS:
            tables[f] = ComplianceTable.from_points([w.get(f, ()) for w in wheels], _COMPLIANCE_VECTOR[f])
        return cls(**tables)

    @classmethod
    def zero(cls, n: int) -> SuspensionComplianceParams:
        """No compliance: zero toe and camber, forces applied at the suspension attachment."""
        return cls(*(ComplianceTable.empty(n, _COMPLIANCE_VECTOR[f]) for f in _COMPLIANCE_FIELDS))

    @property
    def nb_wheels(self) -> int:
        """Number of wheels."""
        return int(self.wheel_toe_angle.x.shape[0])

    def validate(self) -> None:
        """Raise ``ValueError`` naming the graph and wheel that Vehicle2 would reject."""
        c = "SuspensionComplianceParams"
        self.wheel_toe_angle.validate(c, "wheel_toe_angle", (-np.pi, np.pi))
        self.wheel_camber_angle.validate(c, "wheel_camber_angle", (-np.pi, np.pi))
        self.susp_force_app_point.validate(c, "susp_force_app_point", None)
        self.tire_force_app_point.validate(c, "tire_force_app_point", None)

    def transform_and_scale(
        self, src_frame: Frame, trg_frame: Frame, src_scale: Scale, trg_scale: Scale
    ) -> SuspensionComplianceParams:
        """Force application points rotated and rescaled; angle graphs unchanged."""
        return SuspensionComplianceParams(
            wheel_toe_angle=self.wheel_toe_angle,
            wheel_camber_angle=self.wheel_camber_angle,
            susp_force_app_point=self.susp_force_app_point.transform_points(
                src_frame, trg_frame, src_scale, trg_scale
            ),
            tire_force_app_point=self.tire_force_app_point.transform_points(
                src_frame, trg_frame, src_scale, trg_scale
            ),
        )


_FORCE_FIELDS = ("stiffness", "damping", "sprung_mass")


@dataclass(frozen=True, eq=False)
class SuspensionForceParams:
    """Linear spring-damper of each suspension (``PxVehicleSuspensionForceParams``).

    - ``stiffness`` (n,) (0, inf) ``mass / time^2``.
    - ``damping`` (n,) [0, inf) ``mass / time``.
    - ``sprung_mass`` (n,) (0, inf) ``mass``: the share of the rigid body mass this spring carries
      (see :func:`simcore.suspension.helpers.compute_sprung_masses`); at rest the jounce is
      ``sprung_mass * g / stiffness``.

    None of these units contains a length, so ``transform_and_scale`` leaves them unchanged.
    """

    stiffness: np.ndarray
    damping: np.ndarray
    sprung_mass: np.ndarray

    def __post_init__(self) -> None:
        arrays = {f: wheel_array("SuspensionForceParams", f, getattr(self, f)) for f in _FORCE_FIELDS}
        check_same_wheel_count("SuspensionForceParams", arrays)
        for f, a in arrays.items():
            object.__setattr__(self, f, freeze(a))

    @classmethod
    def from_wheels(cls, wheels: Sequence[Mapping[str, Any] | Any]) -> SuspensionForceParams:
        """Build from one dict (or object) per wheel with keys ``stiffness, damping, sprung_mass``."""
        return cls(**per_wheel_records("SuspensionForceParams", wheels, _FORCE_FIELDS))

    @property
    def nb_wheels(self) -> int:
        """Number of wheels."""
        return int(self.stiffness.shape[0])

    def validate(self) -> None:
        """Raise ``ValueError`` naming the field and wheel of the first value Vehicle2 would reject."""
        c = "SuspensionForceParams"
        require(c, "stiffness", self.stiffness > 0.0, "must be greater than zero", self.stiffness)
        require(c, "damping", self.damping >= 0.0, "must be greater than or equal to zero", self.damping)
        require(c, "sprung_mass", self.sprung_mass > 0.0, "must be greater than zero", self.sprung_mass)

    def transform_and_scale(
        self, src_frame: Frame, trg_frame: Frame, src_scale: Scale, trg_scale: Scale
    ) -> SuspensionForceParams:
        """Frame- and scale-independent (``mass / time^2``, ``mass / time``, ``mass``): returns ``self``."""
        return self


@dataclass(frozen=True)
class AntiRollBarParams:
    """One anti-roll bar between two wheels (``PxVehicleAntiRollForceParams``).

    The bar produces a torque on the rigid body that reduces the jounce difference of ``wheel0``
    and ``wheel1`` (same axle: anti-roll; same side: anti-pitch). ``stiffness`` in ``mass / time^2``
    (force per jounce difference); negative values increase the difference. Frame/scale-free.
    """

    wheel0: int
    wheel1: int
    stiffness: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "wheel0", int(self.wheel0))
        object.__setattr__(self, "wheel1", int(self.wheel1))
        object.__setattr__(self, "stiffness", float(self.stiffness))

    def validate(self, axle_description: AxleDescription | int | None = None) -> None:
        """Stiffness finite, two different wheels, both on the vehicle (axle description or wheel count)."""
        if not np.isfinite(self.stiffness):
            raise ValueError(f"AntiRollBarParams.stiffness must be finite, got {self.stiffness}")
        if self.wheel0 == self.wheel1:
            raise ValueError(f"AntiRollBarParams.wheel0 and wheel1 must differ, both are {self.wheel0}")
        if axle_description is None:
            return
        if isinstance(axle_description, AxleDescription):
            wheels = set(axle_description.wheel_ids_in_axle_order)
        else:
            wheels = set(range(int(axle_description)))
        for name in ("wheel0", "wheel1"):
            w = getattr(self, name)
            if w not in wheels:
                raise ValueError(
                    f"AntiRollBarParams.{name} = {w} is not a wheel of the vehicle (wheels {sorted(wheels)})"
                )

    def transform_and_scale(
        self, src_frame: Frame, trg_frame: Frame, src_scale: Scale, trg_scale: Scale
    ) -> AntiRollBarParams:
        """Frame- and scale-independent: returns ``self``."""
        return self


#: Vehicle2's name for :class:`AntiRollBarParams`.
AntiRollForceParams = AntiRollBarParams
