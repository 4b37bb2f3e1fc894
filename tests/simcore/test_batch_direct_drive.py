"""Batched direct drive (command responses, actuation, wheel spin) against each vehicle's own components.

Four sedans with different params run a varied manoeuvre alone; their states are then stacked and
one batch update must reproduce, field by field, what each vehicle's own component writes.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable

import numpy as np
import pytest

from simcore.braking.params import BrakeCommandResponseParams
from simcore.commands.batch import BrakeSteerResponseBatch
from simcore.commands.params import CommandNonLinearResponseParams
from simcore.commands.states import DirectDriveGear
from simcore.drivetrain.direct_batch import (
    DirectDriveActuationBatchComponent,
    DirectDriveCommandResponseBatchComponent,
    DirectDrivetrainBatchComponent,
)
from simcore.fleet.states import FleetStates
from simcore.frame import SAE_J670, Frame
from simcore.presets import load_preset
from simcore.steering.params import AckermannParams
from simcore.vehicle import Vehicle, VehicleParams

DT = 1.0 / 60.0
SUB_DT = DT / 3.0
FRAMES = {"preset_y_up_z_fwd": None, "default": Frame(), "sae_j670": SAE_J670}

# (throttle, brake, handbrake, steer, gear) phases of the manoeuvre; vehicle i starts at phase i.
F, N, R = DirectDriveGear.FORWARD, DirectDriveGear.NEUTRAL, DirectDriveGear.REVERSE
PHASES = [
    (1.0, 0.0, 0.0, 0.3, F),
    (0.6, 0.0, 0.0, -0.6, F),
    (0.0, 0.7, 0.0, 0.8, F),
    (0.0, 0.2, 1.0, -0.2, F),
    (0.5, 0.0, 0.0, 0.1, N),
    (0.8, 0.0, 0.0, -1.0, R),
    (0.4, 0.3, 0.0, 0.5, F),
    (0.0, 0.0, 0.0, 0.0, F),
]


def variants(frame: Frame | None) -> list[VehicleParams]:
    """Four direct-drive sedans differing in steer, Ackermann, brake, throttle and wheel params."""
    base = load_preset("sedan", frame=frame)
    steer, thr, w = base.steer_command_response, base.direct_drive_throttle_response, base.wheel
    brake, hand = base.brake_command_response
    table = CommandNonLinearResponseParams.from_pairs(
        [(0.0, [[0.0, 0.0], [30.0, 0.0]]), (0.5, [[0.0, 0.6], [10.0, 0.4], [30.0, 0.2]]),
         (1.0, [[0.0, 1.0], [15.0, 0.7], [40.0, 0.3]])])
    ack = base.ackermann[0]
    bias = np.array([1.2, 1.2, 0.8, 0.8])
    v1 = base.replace(
        steer_command_response=dataclasses.replace(steer, max_response=0.7),
        ackermann=(dataclasses.replace(ack, strength=0.5),),
        brake_command_response=(dataclasses.replace(brake, max_response=2500.0),
                                dataclasses.replace(hand, max_response=900.0)),
        direct_drive_throttle_response=dataclasses.replace(
            thr, max_response=900.0, nonlinear_response=CommandNonLinearResponseParams()),
        wheel=dataclasses.replace(w, radius=w.radius * 1.05, moi=w.moi * 1.3),
    )
    v2 = base.replace(
        steer_command_response=dataclasses.replace(steer, max_response=0.45, nonlinear_response=table),
        ackermann=(),
        brake_command_response=(dataclasses.replace(brake, nonlinear_response=table),
                                BrakeCommandResponseParams(1500.0, np.array([0.0, 0.0, 1.0, 1.0]))),
        wheel=dataclasses.replace(w, damping_rate=w.damping_rate * 4.0, moi=w.moi * 0.8),
    )
    v3 = base.replace(
        ackermann=(dataclasses.replace(ack, strength=0.0), dataclasses.replace(ack, strength=0.8,
                                                                              track_width=1.7)),
        direct_drive_throttle_response=dataclasses.replace(
            thr, max_response=600.0, wheel_response_multipliers=np.array([0.0, 0.0, 1.0, 1.0])),
        brake_command_response=(dataclasses.replace(brake, max_response=1500.0,
                                                    wheel_response_multipliers=bias),
                                dataclasses.replace(hand, max_response=1200.0)),
        wheel=dataclasses.replace(w, radius=w.radius * 0.95),
    )
    return [base, v1, v2, v3]


def set_commands(vehicle: Vehicle, phase: int) -> None:
    throttle, brake, handbrake, steer, gear = PHASES[phase % len(PHASES)]
    c = vehicle.commands
    c.throttle, c.brake, c.handbrake, c.steer, c.gear = throttle, brake, handbrake, steer, gear


def run_manoeuvre(frame: Frame | None, nb_steps: int = 64, phase_len: int = 16) -> list[Vehicle]:
    """The four variants, each driven alone through the manoeuvre (phases offset per vehicle)."""
    vehicles = []
    for i, params in enumerate(variants(frame)):
        v = Vehicle(params)
        v.place_on_road(clearance=-0.05, speed=8.0 + 3.0 * i)
        for k in range(nb_steps):
            set_commands(v, k // phase_len + i)
            v.step(DT)
        set_commands(v, nb_steps // phase_len + i)
        vehicles.append(v)
    vehicles[3].states.commands.nb_brakes = 1  # its handbrake is read by no channel
    vehicles[3].commands.handbrake = 1.0
    return vehicles


def make_fleet(vehicles: list[Vehicle]) -> types.SimpleNamespace:
    """A stand-in for the lead's Fleet over copies of the vehicles' current states."""
    v0 = vehicles[0]
    return types.SimpleNamespace(
        params=tuple(v.params for v in vehicles), states=FleetStates.stack([v.states for v in vehicles]),
        road=v0.road, context=v0.context, n_vehicles=len(vehicles), nb_wheels=v0.nb_wheels, frame=v0.frame)


Fields = list[tuple[str, str]]


def assert_member_equal(fleet: types.SimpleNamespace, vehicles: list[Vehicle], fields: Fields) -> None:
    """Every listed (state, field) of the batch equals each vehicle's own (bitwise)."""
    for i, v in enumerate(vehicles):
        for state, name in fields:
            got = fleet.states.get(state).arrays[name][i]
            want = getattr(getattr(v.states, state), name)
            np.testing.assert_array_equal(got, want, err_msg=f"vehicle {i}: {state}.{name}")


COMMAND_FIELDS = [("brake_command_response", "response"), ("steer_command_response", "response"),
                  ("direct_drive_throttle_response", "response")]
ACTUATION_FIELDS = [("wheel_actuation", "is_brake_applied"), ("wheel_actuation", "is_drive_applied")]
SPIN_FIELDS = [("wheel_rigid_body_1d", "rotation_speed")]


@pytest.fixture(scope="module", params=list(FRAMES), ids=list(FRAMES))
def manoeuvred(request: pytest.FixtureRequest) -> list[Vehicle]:
    return run_manoeuvre(FRAMES[request.param])


def _check(vehicles: list[Vehicle], name: str, make: Callable, dt: float, fields: Fields) -> None:
    fleet = make_fleet(vehicles)
    batch = make(fleet)
    assert batch.update(dt, fleet.context) is True
    for v in vehicles:
        assert v.reference_sequence().get(name).update(dt, v.context)
    assert_member_equal(fleet, vehicles, fields)


def test_states_are_varied(manoeuvred: list[Vehicle]) -> None:
    s = FleetStates.stack([v.states for v in manoeuvred])
    assert set(s.direct_drive_transmission.gear.tolist()) == {int(F), int(N), int(R)}
    assert np.count_nonzero(s.wheel_rigid_body_1d.rotation_speed) >= 12
    speeds = [v.states.rigid_body.longitudinal_speed(v.frame) for v in manoeuvred]
    assert len({round(x, 6) for x in speeds}) == len(speeds)


def test_command_response(manoeuvred: list[Vehicle]) -> None:
    _check(manoeuvred, "command_response", DirectDriveCommandResponseBatchComponent, DT, COMMAND_FIELDS)
    # the responses are not trivial: braking, driving (both signs) and Ackermann-corrected steering
    brake = np.array([v.states.brake_command_response.response for v in manoeuvred])
    drive = np.array([v.states.direct_drive_throttle_response.response for v in manoeuvred])
    steer = np.array([v.states.steer_command_response.response for v in manoeuvred])
    assert np.any(brake > 0.0) and np.any(drive > 0.0) and np.any(drive < 0.0)
    assert np.any(steer[:, 0] != steer[:, 1])


def test_brake_steer_response_batch(manoeuvred: list[Vehicle]) -> None:
    """The shared brake/steer part alone, and the forward speed it leaves for the drivetrain."""
    fleet = make_fleet(manoeuvred)
    bs = BrakeSteerResponseBatch(fleet)
    bs.update(DT)
    for v in manoeuvred:
        v.reference_sequence().get("command_response").update(DT, v.context)
    assert_member_equal(fleet, manoeuvred, COMMAND_FIELDS[:2])
    want = [v.states.rigid_body.longitudinal_speed(v.context.frame) for v in manoeuvred]
    np.testing.assert_array_equal(bs.speed, want)


def test_actuation(manoeuvred: list[Vehicle]) -> None:
    _check(manoeuvred, "actuation", DirectDriveActuationBatchComponent, DT, ACTUATION_FIELDS)


def test_drivetrain(manoeuvred: list[Vehicle]) -> None:
    _check(manoeuvred, "drivetrain", DirectDrivetrainBatchComponent, SUB_DT, SPIN_FIELDS)


def test_chained_updates_and_repack(manoeuvred: list[Vehicle]) -> None:
    """Several updates through the kept state references, then a member's params change."""
    fleet = make_fleet(manoeuvred)
    batch = [DirectDriveCommandResponseBatchComponent(fleet), DirectDriveActuationBatchComponent(fleet),
             DirectDrivetrainBatchComponent(fleet)]
    names = ["command_response", "actuation", "drivetrain"]
    all_fields = COMMAND_FIELDS + ACTUATION_FIELDS + SPIN_FIELDS

    def step(k: int) -> None:
        for i, v in enumerate(manoeuvred):
            set_commands(v, k + i)
        # the fleet's commands are its own copy: mirror the vehicles' commands into it
        for name in ("brakes", "nb_brakes", "throttle", "steer"):
            fleet.states.commands.arrays[name][...] = [getattr(v.states.commands, name) for v in manoeuvred]
        fleet.states.direct_drive_transmission.gear = [v.commands.gear for v in manoeuvred]
        for comp, name in zip(batch, names, strict=True):
            for _ in range(3 if name == "drivetrain" else 1):
                dt = SUB_DT if name == "drivetrain" else DT
                comp.update(dt, fleet.context)
                for v in manoeuvred:
                    v.reference_sequence().get(name).update(dt, v.context)
        assert_member_equal(fleet, manoeuvred, all_fields)

    for k in range(len(PHASES)):
        step(k)
    # change vehicle 1's params (steer, brake, throttle, wheel) and repack
    p = manoeuvred[1].params
    new = p.replace(
        steer_command_response=dataclasses.replace(p.steer_command_response, max_response=0.3),
        ackermann=(AckermannParams((0, 1), 2.5, 1.4, 0.9),),
        brake_command_response=(dataclasses.replace(p.brake_command_response[0], max_response=3000.0),
                                p.brake_command_response[1]),
        direct_drive_throttle_response=dataclasses.replace(p.direct_drive_throttle_response,
                                                           max_response=400.0),
        wheel=dataclasses.replace(p.wheel, moi=p.wheel.moi * 2.0, damping_rate=p.wheel.damping_rate + 1.0),
    )
    manoeuvred[1].params = new
    fleet.params = tuple(v.params for v in manoeuvred)
    for comp in batch:
        comp.repack()
    for k in range(3):
        step(k + 2)


def test_invalid_gear_raises() -> None:
    vehicles = [Vehicle(p) for p in variants(None)[:2]]
    vehicles[1].states.direct_drive_transmission.gear = 7
    fleet = make_fleet(vehicles)
    with pytest.raises(ValueError, match="gear"):
        DirectDriveCommandResponseBatchComponent(fleet).update(DT, fleet.context)
