"""The bicycle model's component: one exact zero-order-hold step of (β, r, ψ) plus the position."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from simcore.bicycle.functions import advance_position, discretize, lateral_forces, slip_angles
from simcore.component import Component
from simcore.context import SimulationContext

if TYPE_CHECKING:
    from simcore.bicycle.simulation import BicycleModel


class BicycleComponent(Component):
    """Reads ``model.params`` and the steer command ``model.steer`` (rad, held for the step) and
    writes ``model.states``: body (β, r, ψ, position, a_y, time) and axles (slip, force, steer).

    The discretisation (Φ, Γ) is cached per (params, dt): params are immutable, so a new params
    object or a new dt is the only reason to recompute it.
    """

    def __init__(self, model: BicycleModel) -> None:
        self.model = model
        self._key: tuple[int, float] | None = None
        self._phi = np.eye(3)
        self._gamma = np.zeros(3)

    def update(self, dt: float, context: SimulationContext) -> bool:
        p = self.model.params
        key = (id(p), float(dt))
        if key != self._key:
            self._phi, self._gamma = discretize(p, dt)
            self._key = key
        body = self.model.states.body
        axles = self.model.states.axles
        steer = float(self.model.steer)
        course0 = body.yaw + body.sideslip
        z = self._phi @ body.state_vector + self._gamma * steer
        body.sideslip, body.yaw_rate, body.yaw = float(z[0]), float(z[1]), float(z[2])
        body.pos[:] = advance_position(body.pos, course0, body.yaw + body.sideslip, p.speed, dt)
        body.steer = steer
        body.time += dt
        slip = slip_angles(p, body.sideslip, body.yaw_rate, steer)
        force = lateral_forces(p, slip)
        axles.slip_angle[:] = slip
        axles.lateral_force[:] = force
        axles.steer[:] = (steer, 0.0)
        body.lateral_acceleration = float(force.sum()) / p.mass
        return True
