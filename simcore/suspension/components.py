"""Suspension component (``PxVehicleSuspensionComponent``): wiring only."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from simcore.component import Component
from simcore.context import SimulationContext
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

    def __init__(self, vehicle: Vehicle) -> None:
        self.vehicle = vehicle

    def update(self, dt: float, context: SimulationContext) -> bool:
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
