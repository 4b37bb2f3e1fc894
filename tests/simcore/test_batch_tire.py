"""The batched tire component equals the single-vehicle component on every vehicle, bit for bit.

:class:`~simcore.tire.batch.TireBatchComponent` runs the single-vehicle fused tire kernel on each
vehicle's rows of the fleet's states, so its results must be identical to
:class:`~simcore.tire.components.TireComponent` on a copy of each vehicle, with tire params that
differ between the vehicles of one batch, over repeated updates (sticky timers carry over) and
after a member's params or the context's slip / sticky params are replaced.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pytest

from simcore.context import TireAxisStickyParams, TireSlipParams, TireStickyParams
from simcore.frame import DEFAULT_FRAME, SAE_J670, Y_UP_Z_FORWARD
from simcore.presets import default_vehicle
from simcore.tire.batch import TireBatchComponent
from simcore.tire.components import TireComponent
from simcore.tire.params import TireForceParams
from simcore.vehicle import Vehicle, VehicleParams
from tests.simcore.test_batch_suspension import LooseFleet, assert_rows_equal, fleet_and_singles
from tests.simcore.test_tire_fast_path import STATES, _params, _randomise

DT = 1.0 / 180.0


def _mixed_params(frame) -> list[VehicleParams]:
    """Vehicles whose tires differ in every packed column."""
    base = _params(frame)
    t = base.tire_force
    n = base.nb_wheels
    soft = TireForceParams(
        lat_stiff_x=t.lat_stiff_x * 1.5,
        lat_stiff_y=t.lat_stiff_y * 0.7,
        long_stiff=t.long_stiff * 1.2,
        camber_stiff=np.zeros(n),
        friction_vs_slip=np.tile([[0.0, 0.9], [0.2, 1.1], [0.8, 0.6]], (n, 1, 1)),
        rest_load=t.rest_load * 1.1,
        load_filter=np.tile([[0.0, 0.0], [3.0, 3.0]], (n, 1, 1)),
    )
    return [base, base.replace(tire_force=soft), default_vehicle(frame), base]


def _run(fleet, singles: Sequence[Vehicle], batch: TireBatchComponent, what: str, updates: int = 3) -> None:
    refs = [TireComponent(v) for v in singles]
    for k in range(updates):  # sticky timers are read back from the state the update wrote
        assert batch.update(DT, fleet.context)
        for ref, v in zip(refs, singles, strict=True):
            assert ref.update(DT, v.context)
        assert_rows_equal(fleet, singles, STATES, f"{what} update {k}")


@pytest.mark.parametrize("frame", [DEFAULT_FRAME, Y_UP_Z_FORWARD, SAE_J670], ids=["xyz", "yup", "sae"])
def test_batch_equals_the_single_vehicle_component_bit_for_bit(frame) -> None:
    params = _mixed_params(frame)
    for seed in range(10):
        fleet, singles = fleet_and_singles(params, _randomise, seed)
        _run(fleet, singles, TireBatchComponent(fleet), f"seed {seed}")


def test_set_params_and_a_new_context_reach_the_kernel() -> None:
    params = _mixed_params(DEFAULT_FRAME)
    fleet, singles = fleet_and_singles(params, _randomise, 11)
    batch = TireBatchComponent(fleet)
    fleet.sequence.replace("tire", batch)
    _run(fleet, singles, batch, "before", updates=1)
    fleet.set_params(0, params[1])
    singles[0].params = params[1]
    context = dataclasses.replace(
        fleet.context,
        tire_slip_params=TireSlipParams(2.0, 0.3, 6.0),
        tire_sticky_params=TireStickyParams(TireAxisStickyParams(0.5, 0.5, 1.0),
                                            TireAxisStickyParams(0.4, 0.2, 0.1)),
    )
    fleet.context = context
    for i, v in enumerate(singles):
        v.context = context
        _randomise(v, np.random.default_rng(40 + i))
        _randomise(fleet[i], np.random.default_rng(40 + i))
    _run(fleet, singles, batch, "after set_params and a new context", updates=2)


def test_a_fleet_without_steer_state_steers_straight() -> None:
    params = _mixed_params(DEFAULT_FRAME)
    bare = LooseFleet(params, drop=("steer_command_response",))
    singles = [Vehicle(p) for p in params]
    for i, v in enumerate(singles):
        _randomise(v, np.random.default_rng(2000 + i))
        _randomise(bare[i], np.random.default_rng(2000 + i))
        v.states.steer_command_response.response[:] = 0.0
    _run(bare, singles, TireBatchComponent(bare), "no steer state", updates=1)
