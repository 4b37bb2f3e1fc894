"""Suspension component (``PxVehicleSuspensionComponent``): wiring only.

By default the component hands the per-wheel arithmetic to one fused numba kernel
(:mod:`simcore.suspension._fast`, ~40x faster on a 4-wheel car); ``use_fast_path = False`` runs the plain
functions of :mod:`simcore.suspension.functions` instead. Both produce the same numbers.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from simcore.component import Component
from simcore.context import SimulationContext
from simcore.suspension._fast import FusedSuspension, suspension_update_fused
from simcore.suspension.functions import (
    anti_roll_force_update,
    suspension_compliance_update,
    suspension_force_update,
    suspension_state_update,
)

if TYPE_CHECKING:
    from simcore.vehicle import Vehicle


def steer_angles(vehicle: Vehicle, n: int) -> np.ndarray:
    """Per-wheel steer angles (n,) from ``states.steer_command_response`` (zeros if the vehicle has none)."""
    steer = getattr(vehicle.states, "steer_command_response", None)
    if steer is None:
        return np.zeros(n)
    return np.asarray(steer.response, dtype=np.float64)


class SuspensionComponent(Component):
    """Jounce, compliance, suspension forces and anti-roll torque for every wheel.

    Reads ``params.suspension_state_calculation``, ``params.wheel``, ``params.suspension``,
    ``params.suspension_compliance``, ``params.suspension_force``, ``params.anti_roll_bars``,
    ``params.rigid_body`` (mass); ``states.steer_command_response``, ``states.road_geometry``,
    ``states.rigid_body``; ``context.frame``, ``context.gravity``.
    Writes (in place) ``states.suspension``, ``states.suspension_compliance``,
    ``states.suspension_force``, ``states.anti_roll_force``.
    """

    #: Run the fused compiled kernel (:mod:`simcore.suspension._fast`); False runs the plain functions
    #: one after the other. Both give the same numbers; the kernel avoids numpy's per-call overhead.
    use_fast_path: bool = True

    def __init__(self, vehicle: Vehicle) -> None:
        self.vehicle = vehicle
        self._packed: FusedSuspension | None = None
        self._no_bars = np.zeros(3)

    def update(self, dt: float, context: SimulationContext) -> bool:
        if self.use_fast_path:
            return self._update_fused(dt, context)
        return self._update_plain(dt, context)

    def _packed_params(self, context: SimulationContext) -> FusedSuspension:
        """The kernel's packed params, rebuilt only when a params object (immutable) is replaced."""
        p = self.vehicle.params
        key = (context.frame, p.wheel, p.suspension, p.suspension_state_calculation,
               p.suspension_compliance, p.suspension_force, p.anti_roll_bars)
        packed = self._packed
        if packed is None or any(a is not b for a, b in zip(packed.key, key, strict=True)):
            packed = FusedSuspension.build(key, *key)
            self._packed = packed
        return packed

    def _update_fused(self, dt: float, context: SimulationContext) -> bool:
        p, s = self.vehicle.params, self.vehicle.states
        packed = self._packed_params(context)
        body = s.rigid_body
        road = s.road_geometry
        susp, comp, force = s.suspension, s.suspension_compliance, s.suspension_force
        arb = s.anti_roll_force
        with_bars = bool(p.anti_roll_bars) and arb is not None
        suspension_update_fused(
            packed if with_bars or packed.bars_k.size == 0 else _without_bars(packed),
            steer_angles(self.vehicle, p.suspension.nb_wheels),
            road.plane,
            road.hit_state,
            body.pos,
            body.quat,
            context.gravity,
            body.external_force,
            body.external_torque,
            p.rigid_body.mass,
            dt,
            (susp.jounce, susp.jounce_speed, susp.separation, comp.toe, comp.camber,
             comp.tire_force_app_point, comp.susp_force_app_point, force.force, force.torque,
             force.normal_force, arb.torque if with_bars else self._no_bars),
        )
        return True

    def _update_plain(self, dt: float, context: SimulationContext) -> bool:
        p, s = self.vehicle.params, self.vehicle.states
        n = p.suspension.nb_wheels
        body = s.rigid_body
        road = s.road_geometry
        susp = suspension_state_update(
            p.wheel,
            p.suspension,
            p.suspension_state_calculation,
            p.suspension_force.stiffness,
            p.suspension_force.damping,
            steer_angles(self.vehicle, n),
            road.plane,
            road.hit_state,
            body.pos,
            body.quat,
            dt,
            context.frame,
            context.gravity,
            s.suspension,
        )
        s.suspension.assign(susp)
        comp = suspension_compliance_update(p.suspension, p.suspension_compliance, susp.jounce)
        s.suspension_compliance.assign(comp)
        force = suspension_force_update(
            p.suspension,
            p.suspension_force,
            road.plane[:, :3],
            susp,
            comp,
            body.quat,
            body.external_force,
            body.external_torque,
            context.gravity,
            p.rigid_body.mass,
        )
        s.suspension_force.assign(force)
        bars = p.anti_roll_bars
        if bars and s.anti_roll_force is not None:
            s.anti_roll_force.assign(
                anti_roll_force_update(p.suspension, bars, susp.jounce, comp.susp_force_app_point, body.quat)
            )
        return True


def _without_bars(packed: FusedSuspension) -> FusedSuspension:
    """``packed`` with no anti-roll bars (the vehicle has bars but no state to write them to)."""
    return dataclasses.replace(packed, bars_w=np.zeros((0, 2), dtype=np.int64), bars_k=np.zeros(0))
