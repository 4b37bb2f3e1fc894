"""The batched suspension component equals the single-vehicle component on every vehicle, bit for bit.

:class:`~simcore.suspension.batch.SuspensionBatchComponent` runs the single-vehicle fused kernel on
each vehicle's rows of the fleet's states, so its results must be identical to
:class:`~simcore.suspension.components.SuspensionComponent` run on a standalone copy of each
vehicle — also when the vehicles of one batch differ (jounce calculation, expansion limit,
compliance tables, springs, masses, and — in a batch a :class:`~simcore.fleet.Fleet` would refuse —
the number of anti-roll bars). The helpers here (:func:`fleet_and_singles`, :class:`LooseFleet`,
:func:`assert_rows_equal`) serve the road and tire batch tests too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest

from simcore.fleet import Fleet, FleetStates
from simcore.frame import DEFAULT_FRAME, SAE_J670, Y_UP_Z_FORWARD
from simcore.rigid_body.params import RigidBodyParams
from simcore.road.geometry import RoadGeometry
from simcore.suspension.batch import SuspensionBatchComponent
from simcore.suspension.components import SuspensionComponent
from simcore.suspension.params import AntiRollBarParams, JounceCalculationType, SuspensionForceParams
from simcore.vehicle import Vehicle, VehicleParams, VehicleStates
from tests.simcore.test_suspension_fast_path import STATES, _params, _randomise

RAY, SWEEP = JounceCalculationType.RAYCAST, JounceCalculationType.SWEEP
DT = 1.0 / 180.0


class LooseFleet:
    """What the batch components read from a fleet (``params``, ``states``, ``road``, ``context``,
    ``n_vehicles``, ``nb_wheels``, ``frame``), without :class:`~simcore.fleet.Fleet`'s topology
    check, and optionally without some states: for the cases a Fleet never builds."""

    def __init__(self, params: Sequence[VehicleParams], drop: Sequence[str] = ()) -> None:
        self.params = tuple(params)
        self.n_vehicles, self.nb_wheels, self.frame = len(params), params[0].nb_wheels, params[0].frame
        full = FleetStates.stack([VehicleStates.for_params(p) for p in params])
        self.members = [Vehicle(p, states=VehicleStates(**{k: b.member(i) for k, b in full.items()}))
                        for i, p in enumerate(params)]
        self.states = FleetStates({k: b for k, b in full.items() if k not in drop})
        self.road, self.context = self.members[0].road, self.members[0].context

    def __getitem__(self, i: int) -> Vehicle:
        return self.members[i]


Randomise = Callable[[Vehicle, np.random.Generator], None]


def fleet_and_singles(params: Sequence[VehicleParams], randomise: Randomise, seed: int,
                      road: RoadGeometry | None = None,
                      loose: bool = False) -> tuple[Fleet | LooseFleet, list[Vehicle]]:
    """A fleet and standalone vehicles with the same params, road and randomised situation."""
    fleet = LooseFleet(params) if loose else Fleet(params, road=road)
    singles = [Vehicle(p, road=road) for p in params]
    for i, single in enumerate(singles):
        randomise(single, np.random.default_rng(1000 * seed + i))
        randomise(fleet[i], np.random.default_rng(1000 * seed + i))
    return fleet, singles


def assert_rows_equal(fleet: Fleet | LooseFleet, singles: Sequence[Vehicle], names: Sequence[str], what: str,
                      atol: float = 0.0, rtol: float = 0.0) -> None:
    """Row ``i`` of each state of ``fleet`` equals ``singles[i]``'s (exactly, unless a tolerance is
    given; booleans always exactly)."""
    for i, single in enumerate(singles):
        for name in names:
            for field, expected in getattr(single.states, name).as_dict().items():
                got = getattr(fleet.states, name).arrays[field][i]
                msg = f"{what}: vehicle {i} {name}.{field}"
                if (atol or rtol) and expected.dtype != np.bool_:
                    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=msg)
                else:
                    np.testing.assert_array_equal(got, expected, err_msg=msg)


def _mixed_params(frame, bars: bool = False) -> list[VehicleParams]:
    """Vehicles that differ in everything the kernel packs per vehicle (with ``bars``, in the number
    of anti-roll bars too, which a Fleet refuses)."""
    base = _params(frame, SWEEP, True, compliance=True)  # two anti-roll bars
    f = base.suspension_force
    params = [
        base,
        _params(frame, RAY, False, compliance=False),
        _params(frame, RAY, True, compliance=True),
        base.replace(
            suspension_force=SuspensionForceParams(f.stiffness * 1.7, f.damping * 0.6, f.sprung_mass),
            rigid_body=RigidBodyParams(base.rigid_body.mass * 1.3, base.rigid_body.moi),
            anti_roll_bars=(AntiRollBarParams(0, 2, 800.0), AntiRollBarParams(1, 3, -300.0)),
        ),
        _params(frame, SWEEP, False, compliance=True),
    ]
    if bars:
        params[1] = params[1].replace(anti_roll_bars=())
        params[2] = params[2].replace(anti_roll_bars=(
            AntiRollBarParams(0, 1, 900.0), AntiRollBarParams(2, 3, 400.0), AntiRollBarParams(0, 2, -250.0)))
    return params


def _run(fleet: Fleet | LooseFleet, singles: Sequence[Vehicle], batch: SuspensionBatchComponent,
         what: str, updates: int = 3) -> None:
    refs = [SuspensionComponent(v) for v in singles]
    for k in range(updates):  # later updates start from the jounce the previous one left
        assert batch.update(DT, fleet.context)
        for ref, v in zip(refs, singles, strict=True):
            assert ref.update(DT, v.context)
        assert_rows_equal(fleet, singles, STATES, f"{what} update {k}")


@pytest.mark.parametrize("frame", [DEFAULT_FRAME, Y_UP_Z_FORWARD, SAE_J670], ids=["xyz", "yup", "sae"])
def test_batch_equals_the_single_vehicle_component_bit_for_bit(frame) -> None:
    params = _mixed_params(frame)
    for seed in range(5):
        fleet, singles = fleet_and_singles(params, _randomise, seed)
        _run(fleet, singles, SuspensionBatchComponent(fleet), f"seed {seed}")


def test_different_anti_roll_bar_counts_are_padded() -> None:
    """Zero, two and three bars in one batch: each vehicle's kernel sees only its own bars, and a
    vehicle without bars keeps its anti-roll torque untouched, as the reference does."""
    params = _mixed_params(DEFAULT_FRAME, bars=True)
    for seed in range(4):
        fleet, singles = fleet_and_singles(params, _randomise, seed, loose=True)
        for v in [*singles, fleet[1]]:
            v.states.anti_roll_force.torque[:] = 7.0
        batch = SuspensionBatchComponent(fleet)
        assert batch.packed.bars_k.shape == (5, 3)
        assert list(batch.packed.nb_bars) == [2, 0, 3, 2, 2]
        _run(fleet, singles, batch, f"seed {seed}", updates=2)
        np.testing.assert_array_equal(fleet.states.anti_roll_force.torque[1], 7.0)


def test_set_params_repacks_only_the_replaced_vehicle() -> None:
    params = _mixed_params(DEFAULT_FRAME)
    fleet, singles = fleet_and_singles(params, _randomise, 7)
    batch = SuspensionBatchComponent(fleet)
    fleet.sequence.replace("suspension", batch)
    geometry = batch.packed.geometry.copy()
    f = params[1].suspension_force
    stiffer = params[1].replace(
        suspension_force=SuspensionForceParams(f.stiffness * 2.0, f.damping, f.sprung_mass))
    fleet.set_params(1, stiffer)  # the fleet calls repack() on its sequence's components
    singles[1].params = stiffer
    changed = np.any(batch.packed.geometry != geometry, axis=(1, 2))
    np.testing.assert_array_equal(changed, [False, True, False, False, False])
    _run(fleet, singles, batch, "after set_params", updates=2)


def test_vehicles_sharing_one_params_object_are_packed_once() -> None:
    p = _params(DEFAULT_FRAME, SWEEP, True, compliance=True)
    fleet, singles = fleet_and_singles([p] * 6, _randomise, 2)
    batch = SuspensionBatchComponent(fleet)
    assert np.all(batch.packed.geometry == batch.packed.geometry[0])
    _run(fleet, singles, batch, "one params object", updates=1)


def test_a_fleet_without_steer_or_anti_roll_state() -> None:
    """Zero steer without a steer state (``steer_angles``); no bar torque without somewhere to write it."""
    params = _mixed_params(DEFAULT_FRAME)
    fleet, singles = fleet_and_singles(params, _randomise, 3, loose=True)
    bare = LooseFleet(params, drop=("steer_command_response", "anti_roll_force"))
    for i, v in enumerate(singles):
        _randomise(bare[i], np.random.default_rng(3000 + i))
        v.states.steer_command_response.response[:] = 0.0
    batch = SuspensionBatchComponent(bare)
    assert not batch.packed.nb_bars.any()
    assert batch.update(DT, bare.context)
    for ref, v in zip([SuspensionComponent(v) for v in singles], singles, strict=True):
        ref.update(DT, v.context)
    assert_rows_equal(bare, singles, ("suspension", "suspension_compliance", "suspension_force"), "bare")
