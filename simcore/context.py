"""Simulation context (``PxVehicleSimulationContext``): what every component shares.

Gravity, frame and scale, the tire slip denominators, the sticky-tire thresholds, the
forward speed below which wheel rotation angles are blended, and optionally the speed-dependent
substep rule of Omni PhysX. Frozen: build a new one to change it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from simcore.frame import DEFAULT_FRAME, DEFAULT_SCALE, Frame, Scale, transform_vector
from simcore.physx_actor.params import SubstepRule


@dataclass(frozen=True)
class TireSlipParams:
    """``PxVehicleTireSlipParams``: minimum denominators (velocity = length / time) of slip ratios.

    Defaults are Vehicle2's: lateral 1.0, active longitudinal 0.1, passive longitudinal 4.0 (m/s).
    """

    min_lat_slip_denominator: float = 1.0
    min_active_long_slip_denominator: float = 0.1
    min_passive_long_slip_denominator: float = 4.0

    def validate(self) -> None:
        for name in ("min_lat_slip_denominator", "min_active_long_slip_denominator",
                     "min_passive_long_slip_denominator"):
            if not getattr(self, name) > 0.0:
                raise ValueError(f"TireSlipParams.{name} must be greater than zero")

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> TireSlipParams:
        r = trg_scale.scale / src_scale.scale
        return TireSlipParams(self.min_lat_slip_denominator * r, self.min_active_long_slip_denominator * r,
                              self.min_passive_long_slip_denominator * r)


@dataclass(frozen=True)
class TireAxisStickyParams:
    """``PxVehicleTireAxisStickyParams`` for one tire axis (longitudinal or lateral).

    threshold_speed: velocity (length/time) below which the timer runs; threshold_time: time
    below it before the tire turns sticky; damping: 1/time, rate of the velocity constraint.
    """

    threshold_speed: float
    threshold_time: float
    damping: float

    def validate(self) -> None:
        for name in ("threshold_speed", "threshold_time", "damping"):
            if not getattr(self, name) >= 0.0:
                raise ValueError(f"TireAxisStickyParams.{name} must be >= 0")

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> TireAxisStickyParams:
        return replace(self, threshold_speed=self.threshold_speed * trg_scale.scale / src_scale.scale)


@dataclass(frozen=True)
class TireStickyParams:
    """``PxVehicleTireStickyParams``: index 0 longitudinal, 1 lateral (``PxVehicleTireDirectionModes``)."""

    longitudinal: TireAxisStickyParams = TireAxisStickyParams(0.2, 1.0, 1.0)
    lateral: TireAxisStickyParams = TireAxisStickyParams(0.2, 1.0, 0.1)

    def __getitem__(self, direction: int) -> TireAxisStickyParams:
        return (self.longitudinal, self.lateral)[direction]

    def validate(self) -> None:
        self.longitudinal.validate()
        self.lateral.validate()

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> TireStickyParams:
        return TireStickyParams(
            self.longitudinal.transform_and_scale(src_frame, trg_frame, src_scale, trg_scale),
            self.lateral.transform_and_scale(src_frame, trg_frame, src_scale, trg_scale),
        )


@dataclass(frozen=True)
class SimulationContext:
    """Everything shared by all components of a vehicle for one update.

    ``gravity`` is a world vector (length/time^2) in the same frame and scale as the vehicle.
    ``threshold_forward_speed_for_wheel_angle_integration`` (length/time, Vehicle2 default 5 m/s)
    is the forward speed below which the rotation angle blends towards the rolling-without-slip value.
    """

    gravity: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, -9.81]))
    frame: Frame = DEFAULT_FRAME
    scale: Scale = DEFAULT_SCALE
    tire_slip_params: TireSlipParams = TireSlipParams()
    tire_sticky_params: TireStickyParams = TireStickyParams()
    threshold_forward_speed_for_wheel_angle_integration: float = 5.0
    #: Substep count by forward speed (Omni PhysX's rule, :class:`~simcore.physx_actor.SubstepRule`);
    #: None keeps the sequence's own fixed count.
    substep_rule: SubstepRule | None = None

    def __post_init__(self) -> None:
        g = np.asarray(self.gravity, dtype=np.float64).reshape(3)
        g.setflags(write=False)
        object.__setattr__(self, "gravity", g)

    def validate(self) -> None:
        self.tire_slip_params.validate()
        self.tire_sticky_params.validate()
        if not self.threshold_forward_speed_for_wheel_angle_integration >= 0.0:
            raise ValueError("threshold_forward_speed_for_wheel_angle_integration must be >= 0")
        if self.substep_rule is not None:
            self.substep_rule.validate()

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> SimulationContext:
        """The same context expressed in another frame and scale (gravity and speeds converted)."""
        r = trg_scale.scale / src_scale.scale
        return SimulationContext(
            gravity=transform_vector(src_frame, trg_frame, src_scale, trg_scale, self.gravity),
            frame=trg_frame,
            scale=trg_scale,
            tire_slip_params=self.tire_slip_params.transform_and_scale(
                src_frame, trg_frame, src_scale, trg_scale),
            tire_sticky_params=self.tire_sticky_params.transform_and_scale(
                src_frame, trg_frame, src_scale, trg_scale),
            threshold_forward_speed_for_wheel_angle_integration=(
                self.threshold_forward_speed_for_wheel_angle_integration * r),
            substep_rule=(None if self.substep_rule is None else
                          self.substep_rule.transform_and_scale(src_frame, trg_frame, src_scale, trg_scale)),
        )
