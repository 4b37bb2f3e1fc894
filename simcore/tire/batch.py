"""Batched tire component: :class:`~simcore.tire.components.TireComponent` for every vehicle of a
fleet in one compiled call.

:class:`TireBatchComponent` packs every vehicle's tire params into arrays with a leading vehicle
axis and runs :func:`simcore.tire._fast._fused_batch` over ``fleet.states``: the kernel the
single-vehicle component runs on a batch of one, so the per-vehicle arithmetic is the same, to
the bit.

The reference component has no case its fused kernel leaves to the plain functions (directions,
contact speeds, slips, camber, grip, sticky state and the Michigan force model are all in the
kernel), so neither has this one; a fleet without steer state steers with zero, as
:func:`~simcore.suspension.components.steer_angles` does. Tire params may differ between vehicles;
the slip and sticky thresholds come from the context each update is given, as in the reference.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simcore.component import Component
from simcore.context import SimulationContext
from simcore.suspension._fast import GEOM_WIDTH, frame_axes
from simcore.suspension.batch import ParamsWatch
from simcore.tire._fast import SCALARS_WIDTH, TIRE_WIDTH, FusedTire, _fused_batch


class TireBatchComponent(Component):
    """Tire directions, contact speeds, slips, camber, grip, sticky state and forces of every vehicle.

    Reads, per vehicle, ``wheel``, ``suspension`` and ``tire_force`` from ``fleet.params``; from
    ``fleet.states`` what :class:`~simcore.tire.components.TireComponent` reads
    (``steer_command_response`` optional, ``rigid_body``, ``wheel_actuation``, ``road_geometry``,
    ``suspension``, ``suspension_compliance``, ``suspension_force``, ``wheel_rigid_body_1d``);
    ``fleet.frame``; ``context.tire_slip_params`` and ``context.tire_sticky_params`` (repacked when
    the context's are replaced). Writes (in place) ``tire_direction``, ``tire_speed``,
    ``tire_slip``, ``tire_camber``, ``tire_grip``, ``tire_sticky``, ``tire_force``.
    """

    def __init__(self, fleet: Any) -> None:
        self.fleet = fleet
        n, w = fleet.n_vehicles, fleet.nb_wheels
        s = fleet.states
        rb, road, comp = s.rigid_body.arrays, s.road_geometry.arrays, s.suspension_compliance.arrays
        act, grip, sticky, force = (s.wheel_actuation.arrays, s.tire_grip.arrays, s.tire_sticky.arrays,
                                    s.tire_force.arrays)
        steer = s.get("steer_command_response")
        self._inputs = (
            steer.arrays["response"] if steer is not None else np.zeros((n, w)), road["plane"],
            s.suspension.arrays["separation"], s.suspension.arrays["jounce"], comp["toe"], comp["camber"],
            comp["tire_force_app_point"], s.wheel_rigid_body_1d.arrays["rotation_speed"], rb["pos"],
            rb["quat"], rb["linear_velocity"], rb["angular_velocity"], road["velocity"], road["friction"],
            s.suspension_force.arrays["normal_force"], act["is_brake_applied"], act["is_drive_applied"],
        )
        self._outputs = (
            s.tire_direction.arrays["directions"], s.tire_speed.arrays["speed_states"],
            s.tire_slip.arrays["slips"], s.tire_camber.arrays["camber_angle"], grip["load"], grip["friction"],
            sticky["low_speed_time"], sticky["active_status"], force["forces"], force["torques"],
            force["aligning_moment"], force["wheel_torque"],
        )
        self.geometry = np.zeros((n, w, GEOM_WIDTH))
        self.tire = np.zeros((n, w, TIRE_WIDTH))
        self.scalars = np.zeros((n, SCALARS_WIDTH))
        self._watch = ParamsWatch(n)
        self._context: SimulationContext = fleet.context
        self.repack()

    def repack(self) -> None:
        """Pack the tire params of every vehicle whose params object was replaced (all on the first
        call), with the slip and sticky thresholds of the last context seen."""
        frame, ctx = self.fleet.frame, self._context
        self._axes, self._signs = frame_axes(frame)
        built: dict[int, FusedTire] = {}
        params = self.fleet.params
        for v in self._watch.replaced(params):
            p = params[v]
            one = built.get(id(p))
            if one is None:
                key = (frame, p.wheel, p.suspension, p.tire_force, ctx.tire_slip_params,
                       ctx.tire_sticky_params)
                one = built[id(p)] = FusedTire.build(key, *key)
            self.geometry[v] = one.geometry
            self.tire[v] = one.tire
            self.scalars[v] = one.scalars
            self._frame_axes_world = one.frame_axes_world

    def update(self, dt: float, context: SimulationContext) -> bool:
        last = self._context
        if (context.tire_slip_params is not last.tire_slip_params
                or context.tire_sticky_params is not last.tire_sticky_params):
            self._context = context
            self._watch.forget()
            self.repack()
        _fused_batch(self._axes, self._signs, self._frame_axes_world, self.geometry, self.tire, self.scalars,
                     float(dt), *self._inputs, *self._outputs)
        return True


__all__ = ["TireBatchComponent"]
