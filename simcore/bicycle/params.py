"""Parameters of the linear 2-DOF bicycle (single-track) model.

The model lumps each axle into one wheel on the vehicle's centre line. Its seven numbers are the
ones a vehicle-dynamics engineer quotes for a car's handling: mass, yaw inertia, where the centre
of mass sits between the axles, how stiff each axle's tires are in cornering, and the (constant)
forward speed at which the model is linearised.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

from simcore.axle import AxleDescription
from simcore.frame import Frame, Scale, scale_ratio

#: The bicycle has two virtual wheels, one per axle: 0 = front, 1 = rear. Per-axle arrays in
#: :mod:`simcore.bicycle.states` use this order, and the PVD recording uses this description to
#: make one per-axle object each.
BICYCLE_AXLES = AxleDescription(((0,), (1,)))
#: Names of the two axles, in :data:`BICYCLE_AXLES` order.
AXLE_NAMES = ("front", "rear")


@dataclass(frozen=True)
class BicycleParams:
    """The linear bicycle model's parameters (SI units when the scale is 1).

    - ``mass``: vehicle mass m, (0, inf), ``mass``.
    - ``iz``: yaw moment of inertia I_z about the vertical axis through the centre of mass,
      (0, inf), ``mass * length^2``.
    - ``lf``: distance from the centre of mass forward to the front axle, (0, inf), ``length``.
    - ``lr``: distance from the centre of mass back to the rear axle, (0, inf), ``length``.
    - ``cf``: cornering stiffness of the whole front axle (both tires), C_f = dF_y/dα at zero
      slip, (0, inf), ``mass * length / time^2`` per radian (N/rad).
    - ``cr``: cornering stiffness of the whole rear axle, as ``cf``.
    - ``speed``: constant forward speed V the model is linearised at, (0, inf),
      ``length / time``. The equations divide by V, so V = 0 is excluded.

    Frame-free: every value is a scalar about the vehicle's own vertical axis, so
    :meth:`transform_and_scale` only rescales lengths.
    """

    mass: float
    iz: float
    lf: float
    lr: float
    cf: float
    cr: float
    speed: float

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            try:
                object.__setattr__(self, f.name, float(value))
            except (TypeError, ValueError):
                raise ValueError(f"BicycleParams.{f.name} must be a number, got {value!r}") from None

    @property
    def wheelbase(self) -> float:
        """L = lf + lr (``length``)."""
        return self.lf + self.lr

    @property
    def axle_description(self) -> AxleDescription:
        """One virtual wheel per axle (front 0, rear 1): what per-axle PVD objects are made from."""
        return BICYCLE_AXLES

    @property
    def nb_wheels(self) -> int:
        """Two: the front and the rear axle."""
        return 2

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first field that is not a finite number > 0."""
        for f in fields(self):
            value = getattr(self, f.name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"BicycleParams.{f.name} must be a finite number greater than zero, "
                                 f"got {value!r}")

    def with_speed(self, speed: float) -> BicycleParams:
        """The same vehicle linearised at another forward speed."""
        return replace(self, speed=speed)

    def replace(self, **changes: float) -> BicycleParams:
        """A copy with some fields replaced (params are immutable)."""
        return replace(self, **changes)

    def as_dict(self) -> dict[str, float]:
        """The seven values under the names the CLI uses: m, iz, lf, lr, cf, cr, speed."""
        return {"m": self.mass, "iz": self.iz, "lf": self.lf, "lr": self.lr, "cf": self.cf,
                "cr": self.cr, "speed": self.speed}

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> BicycleParams:
        """Lengths x s, speed x s, stiffness (force) x s, inertia x s^2; frames do not matter (scalars
        about the vertical axis)."""
        s = scale_ratio(src_scale, trg_scale)
        return BicycleParams(mass=self.mass, iz=self.iz * s * s, lf=self.lf * s, lr=self.lr * s,
                             cf=self.cf * s, cr=self.cr * s, speed=self.speed * s)


#: A mid-size saloon car: 1500 kg, 2.8 m wheelbase with the centre of mass 1.2 m behind the front
#: axle, understeering (K ~ 0.0043 rad per m/s^2, characteristic speed ~ 25.5 m/s), at 20 m/s.
DEFAULT_BICYCLE = BicycleParams(mass=1500.0, iz=2500.0, lf=1.2, lr=1.6, cf=80000.0, cr=100000.0,
                                speed=20.0)
