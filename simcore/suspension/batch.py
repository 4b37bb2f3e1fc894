"""Batched suspension component: :class:`~simcore.suspension.components.SuspensionComponent` for
every vehicle of a fleet in one compiled call.

A fleet (:mod:`simcore.fleet`) stores each state kind once, with a leading vehicle axis
(``fleet.states.suspension.jounce`` is ``(n_vehicles, n_wheels)``). :class:`SuspensionBatchComponent`
packs every vehicle's params into arrays with that same leading axis and runs
:func:`simcore.suspension._fast._fused_batch`, the kernel the single-vehicle component runs on a
batch of one. The per-vehicle arithmetic is therefore the single-vehicle component's, to the
bit; only the Python work (packing, argument checks, the kernel dispatch) is shared.

Every case the reference component handles is covered: raycast and sweep jounce, the expansion
velocity limit, multi-point compliance tables, anti-roll bars (any count per vehicle: the arrays
are padded to the largest count and the kernel reads only a vehicle's own rows; none are applied
when the fleet has no anti-roll state, as the reference skips them without one) and a fleet
without steer state (zero steer). Params may differ between vehicles in every value.

:class:`ParamsWatch` is shared with the road and tire batch components: ``repack()`` repacks only
the vehicles whose params object was replaced, and packs a params object shared by several
vehicles (``Fleet.from_preset``) once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from simcore.component import Component
from simcore.context import SimulationContext
from simcore.suspension._fast import GEOM_WIDTH, FusedSuspension, _fused_batch, frame_axes


class SuspensionBatchComponent(Component):
    """Jounce, compliance, suspension forces and anti-roll torque for every wheel of every vehicle.

    Reads, per vehicle, what :class:`~simcore.suspension.components.SuspensionComponent` reads
    (``params.suspension_state_calculation``, ``wheel``, ``suspension``, ``suspension_compliance``,
    ``suspension_force``, ``anti_roll_bars``, ``rigid_body`` mass) from ``fleet.params``;
    ``steer_command_response`` (optional), ``road_geometry`` and ``rigid_body`` from
    ``fleet.states``; ``fleet.frame``; ``context.gravity``. Writes (in place) the fleet's
    ``suspension``, ``suspension_compliance``, ``suspension_force`` and ``anti_roll_force`` (for
    vehicles with bars, as the reference does).
    """

    def __init__(self, fleet: Any) -> None:
        self.fleet = fleet
        n, w = fleet.n_vehicles, fleet.nb_wheels
        s = fleet.states
        rb, road = s.rigid_body.arrays, s.road_geometry.arrays
        susp, comp, force = s.suspension.arrays, s.suspension_compliance.arrays, s.suspension_force.arrays
        steer = s.get("steer_command_response")
        arb = s.get("anti_roll_force")
        self._with_arb_state = arb is not None
        self._inputs = (steer.arrays["response"] if steer is not None else np.zeros((n, w)),
                        road["plane"], road["hit_state"], rb["pos"], rb["quat"])
        self._loads = (rb["external_force"], rb["external_torque"])
        self._outputs = (susp["jounce"], susp["jounce_speed"], susp["separation"], comp["toe"],
                         comp["camber"], comp["tire_force_app_point"], comp["susp_force_app_point"],
                         force["force"], force["torque"], force["normal_force"],
                         arb.arrays["torque"] if arb is not None else np.zeros((n, 3)))
        self.packed = SuspensionBatchParams(n, w)
        self._watch = ParamsWatch(n)
        self.repack()

    def repack(self) -> None:
        """Pack the params of every vehicle whose params object was replaced (all on the first call)."""
        self._axes, self._signs = frame_axes(self.fleet.frame)
        self._lat_axis = np.ascontiguousarray(self.fleet.frame.lat, dtype=np.float64)
        built: dict[int, FusedSuspension] = {}
        params = self.fleet.params
        for v in self._watch.replaced(params):
            p = params[v]
            one = built.get(id(p))
            if one is None:
                key = (self.fleet.frame, p.wheel, p.suspension, p.suspension_state_calculation,
                       p.suspension_compliance, p.suspension_force, p.anti_roll_bars)
                one = built[id(p)] = FusedSuspension.build(key, *key)
            self.packed.set_vehicle(v, one, p.rigid_body.mass, self._with_arb_state)

    def update(self, dt: float, context: SimulationContext) -> bool:
        k = self.packed
        _fused_batch(
            k.mode, k.limit, self._axes, self._signs, self._lat_axis, k.geometry, *self._inputs,
            np.ascontiguousarray(context.gravity, dtype=np.float64), *self._loads, float(dt), k.vehicle_mass,
            k.tables_x, k.tables_nb, k.toe_y, k.camber_y, k.tfa_y, k.sfa_y, k.bars_w, k.bars_k, k.nb_bars,
            *self._outputs,
        )
        return True


class SuspensionBatchParams:
    """The fused kernel's packed params (:class:`~simcore.suspension._fast.FusedSuspension`) of every
    vehicle, stacked along a leading vehicle axis.

    - ``mode`` (n,) int64: 0 raycast, 1 sweep jounce; ``limit`` (n,) bool: expansion velocity limit.
    - ``geometry`` (n, W, GEOM_WIDTH); ``vehicle_mass`` (n,) ``mass``.
    - ``tables_x`` (n, 4, W, 3), ``tables_nb`` (n, 4, W): the toe, camber, tire and suspension
      force application point tables; ``toe_y``/``camber_y`` (n, W, 3, 1), ``tfa_y``/``sfa_y``
      (n, W, 3, 3). Vehicle2's tables have a fixed size (3 points), so they stack without padding.
    - ``bars_w`` (n, B, 2), ``bars_k`` (n, B): anti-roll bars padded to the largest count B;
      ``nb_bars`` (n,) how many rows each vehicle uses (0 when the fleet has no anti-roll state).
    """

    def __init__(self, n_vehicles: int, n_wheels: int) -> None:
        n, w = n_vehicles, n_wheels
        self.mode = np.zeros(n, dtype=np.int64)
        self.limit = np.zeros(n, dtype=np.bool_)
        self.geometry = np.zeros((n, w, GEOM_WIDTH))
        self.vehicle_mass = np.ones(n)
        self.tables_x = np.zeros((n, 4, w, 3))
        self.tables_nb = np.zeros((n, 4, w), dtype=np.int64)
        self.toe_y = np.zeros((n, w, 3, 1))
        self.camber_y = np.zeros((n, w, 3, 1))
        self.tfa_y = np.zeros((n, w, 3, 3))
        self.sfa_y = np.zeros((n, w, 3, 3))
        self.bars_w = np.zeros((n, 0, 2), dtype=np.int64)
        self.bars_k = np.zeros((n, 0))
        self.nb_bars = np.zeros(n, dtype=np.int64)

    def set_vehicle(self, v: int, one: FusedSuspension, mass: float, with_arb_state: bool) -> None:
        """Vehicle ``v``'s rows from its single-vehicle packing ``one`` and its body ``mass``; its bars
        only when the fleet has an anti-roll state to write their torque to."""
        self.mode[v] = one.mode
        self.limit[v] = one.limit
        self.geometry[v] = one.geometry
        self.vehicle_mass[v] = mass
        self.tables_x[v] = one.tables_x
        self.tables_nb[v] = one.tables_nb
        self.toe_y[v] = one.toe_y
        self.camber_y[v] = one.camber_y
        self.tfa_y[v] = one.tfa_y
        self.sfa_y[v] = one.sfa_y
        nb = one.bars_k.shape[0] if with_arb_state else 0
        if nb > self.bars_k.shape[1]:
            self.bars_w = _grow(self.bars_w, nb)
            self.bars_k = _grow(self.bars_k, nb)
        self.bars_w[v] = 0
        self.bars_k[v] = 0.0
        self.bars_w[v, :nb] = one.bars_w[:nb]
        self.bars_k[v, :nb] = one.bars_k[:nb]
        self.nb_bars[v] = nb


def _grow(a: np.ndarray, size: int) -> np.ndarray:
    """``a`` (n, B, ...) zero-padded along axis 1 to ``size`` rows."""
    out = np.zeros((a.shape[0], size) + a.shape[2:], dtype=a.dtype)
    out[:, :a.shape[1]] = a
    return out


# ------------------------------------------------------------------------ shared batch helpers


class ParamsWatch:
    """Which vehicles' params were replaced since the last look (params are immutable, so identity
    tells). Every vehicle counts as replaced on the first call."""

    def __init__(self, n_vehicles: int) -> None:
        self._seen: list[object] = [None] * n_vehicles

    def replaced(self, params: Sequence[Any]) -> list[int]:
        """Indices of vehicles whose params object changed; remembers the current ones."""
        seen = self._seen
        out = []
        for i, p in enumerate(params):
            if p is not seen[i]:
                seen[i] = p
                out.append(i)
        return out

    def forget(self) -> None:
        """Count every vehicle as replaced on the next call."""
        self._seen = [None] * len(self._seen)


__all__ = ["ParamsWatch", "SuspensionBatchComponent", "SuspensionBatchParams"]
