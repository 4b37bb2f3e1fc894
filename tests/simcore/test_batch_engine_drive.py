"""The batched engine drive equals each vehicle's own components, field by field.

Vehicles of one topology with different params (gear tables, torque curves, clutch strength and
accuracy mode, inertias, limited slip, tank drive models) drive a varied manoeuvre — throttle,
brakes, clutch, manual and automatic gears, steer, an icy axle — so that shifts are under way and
constraint groups engage. At checkpoints their states are stacked and every batched component
runs once next to each vehicle's own; the written fields must agree (bitwise is expected; the
tolerance is 1e-12).
"""

from __future__ import annotations

import timeit
import types
from dataclasses import replace

import numpy as np
import pytest

from simcore.commands.states import AUTOMATIC_GEAR
from simcore.component import Component
from simcore.context import SimulationContext
from simcore.drivetrain.engine_drive.batch import (
    EngineDriveActuationStateBatchComponent,
    EngineDriveCommandResponseBatchComponent,
    EngineDrivetrainBatchComponent,
    constraint_group_batch,
    differential_state_batch_component,
    engine_batch_components,
)
from simcore.drivetrain.engine_drive.components import ComponentChain, wheel_constraint_groups
from simcore.drivetrain.engine_drive.params import (
    FOUR_WHEEL_DIFFERENTIAL_MAXIMUM_STRENGTH,
    AutoboxParams,
    ClutchAccuracyMode,
    ClutchCommandResponseParams,
    ClutchParams,
    GearboxParams,
)
from simcore.drivetrain.engine_drive.vehicles import engage_first_gear, make_vehicle, tank_params
from simcore.fleet.states import FleetStates, StateBatch
from simcore.presets import load_preset
from simcore.vehicle import Vehicle

DT = 1.0 / 60.0
TOL = 1e-12


class _AxleOnIce(Component):
    """The road query, then low friction under some wheels (to engage the limited slip)."""

    def __init__(self, vehicle: Vehicle, wheels: tuple[int, ...], mu: float) -> None:
        self.vehicle, self.wheels, self.mu = vehicle, wheels, mu
        self.inner = vehicle.sequence.get("road_geometry")

    def update(self, dt: float, context: SimulationContext) -> bool:
        ok = self.inner.update(dt, context)
        self.vehicle.states.road_geometry.friction[list(self.wheels)] = self.mu
        return ok


def _engine(p, **changes):  # noqa: ANN001, ANN202
    return p.replace(engine=replace(p.engine, **changes))


def _sedans(name: str) -> list:
    """Four variants of a preset: gear table, torque curve, clutch, inertias, accuracy mode."""
    base = load_preset(name)
    g, a = base.gearbox, base.autobox
    five = GearboxParams(np.array([-3.5, 0.0, 3.6, 2.1, 1.3]), g.neutral_gear, g.final_ratio * 1.1, 0.3)
    return [
        base,
        _engine(base, peak_torque=650.0, moi=0.7).replace(
            gearbox=five, autobox=AutoboxParams(np.full(5, 0.55), np.full(5, 0.35), 0.6),
            clutch_command_response=ClutchCommandResponseParams(25.0)),
        _engine(base, torque_curve=np.array([[0.0, 0.8], [0.4, 1.0], [0.8, 0.9], [1.0, 0.6]]),
                idle_omega=60.0, damping_rate_full_throttle=0.3).replace(
            clutch=ClutchParams(ClutchAccuracyMode.ESTIMATE, 4),
            wheel=replace(base.wheel, moi=base.wheel.moi * 1.4)),
        _engine(base, max_omega=700.0, peak_torque=400.0).replace(
            gearbox=replace(g, switch_time=0.1), autobox=replace(a, latency=0.4),
            clutch_command_response=ClutchCommandResponseParams(6.0)),
    ]


def _four_wheel_drives() -> list:
    sedans = _sedans("sedan_engine_4wd")
    d = sedans[0].differential
    return [
        sedans[0],
        sedans[1].replace(differential=replace(d, predict_breach=False)),
        sedans[2].replace(differential=replace(d, rate=FOUR_WHEEL_DIFFERENTIAL_MAXIMUM_STRENGTH,
                                               front_bias=1.1, front_target=1.05, rear_bias=1.1,
                                               rear_target=1.05)),
        sedans[3].replace(differential=replace(d, predict_breach=False, center_bias=1.05, center_target=1.02,
                                               rate=4.0)),
    ]


def _tanks() -> list:
    t = tank_params(6)
    special = t.replace(clutch=ClutchParams(ClutchAccuracyMode.ESTIMATE, 6))
    return [t, tank_params(6, "standard"), _engine(special, peak_torque=t.engine.peak_torque * 1.3, moi=2.5)]


def _vehicles(params: list, ice: bool = False) -> list[Vehicle]:
    vs = []
    for i, p in enumerate(params):
        v = make_vehicle(p)
        engage_first_gear(v)
        if ice and i % 2 == 0:
            v.sequence.replace("road_geometry", _AxleOnIce(v, (0, 1), 0.05))
        vs.append(v)
    return vs


def _transmission(v: Vehicle):  # noqa: ANN202
    s = v.states
    return s.tank_drive_transmission if s.tank_drive_transmission is not None else s.engine_drive_transmission


def _commands(vs: list[Vehicle], step: int) -> None:
    """A manoeuvre: full throttle and automatic gears, steer, a manual gear, clutch, brakes."""
    for i, v in enumerate(vs):
        c, tx = v.commands, _transmission(v)
        phase = (step + 7 * i) % 90
        c.throttle = 1.0 if phase < 50 else (0.4 if phase < 70 else 0.0)
        c.steer = 0.6 * np.sin(0.07 * step + i)
        c.brake = 0.7 if 70 <= phase < 80 else 0.0
        c.handbrake = 0.5 if 80 <= phase < 84 else 0.0
        tx.clutch = 0.6 if 45 <= phase < 55 else 0.0
        if phase == 60 and i % 2 == 1:
            tx.target_gear = v.params.gearbox.neutral_gear + 2
        elif phase == 85:
            first = v.params.gearbox.neutral_gear + 1
            tx.target_gear = AUTOMATIC_GEAR if v.params.autobox is not None else first
        if v.states.tank_drive_transmission is not None:
            other = 0.3 - 0.9 * (i % 2) + 0.5 * np.sin(0.05 * step)
            v.states.tank_drive_transmission.thrusts[:] = (1.0, other)


def _fleet(vs: list[Vehicle]) -> types.SimpleNamespace:
    v0 = vs[0]
    states = FleetStates.stack([v.states for v in vs])
    return types.SimpleNamespace(params=tuple(v.params for v in vs), states=states, road=v0.road,
                                 context=v0.context, n_vehicles=len(vs), nb_wheels=v0.params.nb_wheels,
                                 frame=v0.context.frame)


def _groups(vs: list[Vehicle]) -> StateBatch:
    return StateBatch.stack([wheel_constraint_groups(v.states, v.params.nb_wheels) for v in vs])


def _assert_same(batch: StateBatch, states: list, what: str) -> None:
    for name, arr in batch.items():
        for i, s in enumerate(states):
            ref = np.asarray(getattr(s, name))
            got = arr[i]
            if ref.dtype.kind == "f":
                np.testing.assert_allclose(got, ref, rtol=0, atol=TOL, err_msg=f"{what}.{name} vehicle {i}")
            else:
                np.testing.assert_array_equal(got, ref, err_msg=f"{what}.{name} vehicle {i}")


def _check_all(vs: list[Vehicle], stats: dict) -> None:
    """Stack, run each batched component once next to the vehicles' own, compare what they wrote."""
    fleet = _fleet(vs)
    groups = _groups(vs)
    nb_substeps = vs[0].sequence.entries()[-2].dt_divisor

    def compare(names: tuple[str, ...]) -> None:
        for name in names:
            _assert_same(getattr(fleet.states, name), [getattr(v.states, name) for v in vs], name)
        _assert_same(groups, [wheel_constraint_groups(v.states, v.params.nb_wheels) for v in vs],
                     "wheel_constraint_group")

    cr = EngineDriveCommandResponseBatchComponent(fleet)
    assert cr.update(DT, fleet.context)
    for v in vs:
        v.reference_sequence().get("command_response").update(DT, v.context)
    compare(("brake_command_response", "steer_command_response", "gearbox", "autobox",
             "clutch_command_response", "throttle_command_response"))

    diff = differential_state_batch_component(fleet, groups)
    act = EngineDriveActuationStateBatchComponent(fleet)
    assert diff.update(DT, fleet.context) and act.update(DT, fleet.context)
    for v in vs:
        v.reference_sequence().get("actuation").update(DT, v.context)
    compare(("differential", "wheel_actuation"))

    sub_dt = DT / nb_substeps
    dtc = EngineDrivetrainBatchComponent(fleet, groups)
    assert dtc.update(sub_dt, fleet.context)
    for v in vs:
        v.reference_sequence().get("drivetrain").update(sub_dt, v.context)
    compare(("gearbox", "wheel_rigid_body_1d", "engine", "clutch_slip"))
    stats["checks"] += 1
    stats["shifting"] += int(np.sum(fleet.states.gearbox.current_gear != fleet.states.gearbox.target_gear))
    stats["groups"] += int(np.sum(groups.nb_groups))


def _run(vs: list[Vehicle], steps: int = 240, every: int = 6) -> dict:
    stats = {"checks": 0, "shifting": 0, "groups": 0}
    for step in range(steps):
        _commands(vs, step)
        for v in vs:
            v.step(DT)
        if step % every == every - 1:
            _check_all(vs, stats)
    return stats


def test_sedans_match_their_own_components() -> None:
    vs = _vehicles(_sedans("sedan_engine"))
    stats = _run(vs)
    assert stats["shifting"] > 0  # gear shifts under way at some checkpoints
    gears = {int(v.states.gearbox.current_gear) for v in vs}
    assert max(gears) > vs[0].params.gearbox.neutral_gear + 1


def test_sedans_without_autobox_match() -> None:
    params = [p.replace(autobox=None) for p in _sedans("sedan_engine")]
    _run(_vehicles(params), steps=120)


def test_four_wheel_drives_with_limited_slip_match() -> None:
    stats = _run(_vehicles(_four_wheel_drives(), ice=True))
    assert stats["groups"] > 0  # the limited slip engaged at some checkpoints


def test_tanks_match() -> None:
    stats = _run(_vehicles(_tanks()), steps=150)
    assert stats["groups"] > 0


def test_engine_batch_components_fill_the_three_slots() -> None:
    vs = _vehicles(_tanks())
    fleet = _fleet(vs)
    cr, chain, dt = engine_batch_components(fleet)
    assert isinstance(chain, ComponentChain)
    assert chain.get("differential").groups is dt.groups is constraint_group_batch(fleet)
    assert cr.update(DT, fleet.context) and chain.update(DT, fleet.context)
    assert dt.update(DT / 3, fleet.context)
    for c in (cr, chain.get("differential"), chain.get("actuation"), dt):
        c.repack()


@pytest.mark.parametrize("n", [1, 256])
def test_kernel_timing(n: int, capsys: pytest.CaptureFixture[str]) -> None:
    """Per-call cost of each batched component (printed with ``-s``)."""
    vs = _vehicles(_sedans("sedan_engine"))
    for step in range(30):
        _commands(vs, step)
        for v in vs:
            v.step(DT)
    members = [vs[i % len(vs)] for i in range(n)]
    fleet = _fleet(members)
    cr, chain, dt = engine_batch_components(fleet)
    ctx = fleet.context
    out = []
    for name, c, step_dt in (("command_response", cr, DT), ("differential", chain.get("differential"), DT),
                             ("actuation", chain.get("actuation"), DT), ("drivetrain", dt, DT / 3)):
        c.update(step_dt, ctx)
        t = min(timeit.repeat(lambda c=c, step_dt=step_dt: c.update(step_dt, ctx), number=200,
                              repeat=5)) / 200
        out.append(f"{name} {t * 1e6:.2f} us")
    with capsys.disabled():
        print(f"\nn={n}: " + ", ".join(out))
