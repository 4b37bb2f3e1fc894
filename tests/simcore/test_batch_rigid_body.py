"""Batched rigid body components (:mod:`simcore.rigid_body.batch`) against the per-vehicle ones.

Real vehicles with different params run a varied manoeuvre (a drop onto the suspension limits,
throttle, steer, brake, handbrake, standing still on sticky tires); at checkpoints their states
are stacked, the batch component runs once over the stack and each vehicle's own component once
over a clone of the vehicle; every state of every vehicle must then agree. ``rigid_body_begin``
and ``constraints`` are bitwise; ``rigid_body`` is bitwise without active constraint rows and
within 1e-12 with them (the reference solves them with BLAS/LAPACK).
"""

from __future__ import annotations

import dataclasses
import types
import zlib
from collections.abc import Callable

import numpy as np
import pytest

from simcore.context import SimulationContext, TireAxisStickyParams, TireStickyParams
from simcore.fleet.states import FleetStates
from simcore.frame import DEFAULT_FRAME
from simcore.maths import quat_from_axis_angle, quat_normalize
from simcore.presets import load_preset
from simcore.rigid_body.batch import (
    RigidBodyBatchComponent,
    RigidBodyBeginBatchComponent,
    VehicleConstraintBatchComponent,
    _solve_rows,
    _work_shape,
)
from simcore.rigid_body.constraints import (
    SuspensionLimitConstraintParams,
    SuspensionLimitDirection,
    VehicleConstraintState,
    solve_vehicle_constraints,
)
from simcore.rigid_body.functions import world_inverse_inertia
from simcore.suspension.params import AntiRollBarParams
from simcore.vehicle import Vehicle, VehicleParams, default_context

DT = 1.0 / 60.0
NB_SUBSTEPS = 3
SUB_DT = DT / NB_SUBSTEPS
BATCHES = {
    "rigid_body_begin": RigidBodyBeginBatchComponent,
    "constraints": VehicleConstraintBatchComponent,
    "rigid_body": RigidBodyBatchComponent,
}
#: States that the solve of the constraint rows reaches (compared to 1e-12 rather than bitwise).
SOLVED = {"rigid_body"}


# ------------------------------------------------------------------------------------------- helpers


def _variants(base: VehicleParams) -> list[VehicleParams]:
    """Four members differing in mass, inertia, tire stiffness, anti-roll bars and suspension limits."""
    rb, tire = base.rigid_body, base.tire_force
    heavy = base.replace(
        rigid_body=dataclasses.replace(rb, mass=rb.mass * 1.3, moi=rb.moi * np.array([1.4, 1.1, 1.25])),
        anti_roll_bars=(AntiRollBarParams(0, 1, 9000.0), AntiRollBarParams(2, 3, 7000.0)),
        suspension_limit_constraint=SuspensionLimitConstraintParams(0.4, SuspensionLimitDirection.SUSPENSION),
    )
    light = base.replace(
        rigid_body=dataclasses.replace(rb, mass=rb.mass * 0.7, moi=rb.moi * np.array([0.8, 0.75, 0.9])),
        tire_force=dataclasses.replace(tire, long_stiff=tire.long_stiff * 1.5,
                                       lat_stiff_y=tire.lat_stiff_y * 0.6),
        suspension_limit_constraint=SuspensionLimitConstraintParams(0.25),
    )
    no_limit = base.replace(
        rigid_body=dataclasses.replace(rb, mass=rb.mass * 1.05),
        suspension_limit_constraint=SuspensionLimitConstraintParams(0.0, SuspensionLimitDirection.NONE),
    )
    return [base, heavy, light, no_limit]


def _context(frame: object) -> SimulationContext:
    """The shared context, with sticky params other than the defaults."""
    return dataclasses.replace(default_context(frame), tire_sticky_params=TireStickyParams(
        TireAxisStickyParams(0.3, 0.5, 1.5), TireAxisStickyParams(0.3, 0.5, 0.2)))


def _fleet(vehicles: list[Vehicle], states: FleetStates | None = None) -> types.SimpleNamespace:
    """Stand-in for ``simcore.fleet.Fleet`` over (copies of) the vehicles' states."""
    first = vehicles[0]
    states = states if states is not None else FleetStates.stack([v.states for v in vehicles])
    return types.SimpleNamespace(params=tuple(v.params for v in vehicles), states=states, road=first.road,
                                 context=first.context, n_vehicles=len(vehicles), nb_wheels=first.nb_wheels,
                                 frame=first.frame)


def _copy_into(dst: object, src: object) -> None:
    for f in dataclasses.fields(src):
        value = getattr(src, f.name)
        if isinstance(value, np.ndarray):
            getattr(dst, f.name)[...] = value
        else:
            setattr(dst, f.name, value)


def _clone(vehicle: Vehicle) -> Vehicle:
    """A new vehicle with ``vehicle``'s params, road, context and state values (its own sequence)."""
    twin = Vehicle(vehicle.params, road=vehicle.road, context=vehicle.context, nb_substeps=NB_SUBSTEPS)
    for name, state in vehicle.states.items():
        _copy_into(getattr(twin.states, name), state)
    return twin


def _assert_member_equal(fs: FleetStates, i: int, twin: Vehicle, solved: bool, where: str) -> None:
    """Every field of every state of member ``i`` equals ``twin``'s (bitwise, or 1e-12 if solved)."""
    for name, batch in fs.items():
        ref = getattr(twin.states, name)
        for field, arr in batch.items():
            got, want = arr[i], np.asarray(getattr(ref, field))
            msg = f"{where}: vehicle {i} {name}.{field}"
            if solved and name in SOLVED:
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=msg)
            else:
                np.testing.assert_array_equal(got, want, err_msg=msg)


def _check_components(vehicles: list[Vehicle], where: str,
                      perturb: Callable[[list[Vehicle]], None] | None = None) -> dict[str, int]:
    """Run every batch component once over the stacked states and each vehicle's component once over
    a clone; compare. Returns counts of the constraint rows seen (coverage)."""
    seen = {"sticky_rows": 0, "limit_rows": 0, "solved_vehicles": 0}
    for name, batch_cls in BATCHES.items():
        twins = [_clone(v) for v in vehicles]
        if perturb is not None:
            perturb(twins)
        fleet = _fleet(twins)
        component = batch_cls(fleet)
        assert component.update(SUB_DT, twins[0].context) is True
        for i, twin in enumerate(twins):
            rows = twin.states.constraints
            has_rows = bool(rows.tire_active_status.any() or rows.susp_active_status.any())
            solved = name == "rigid_body" and has_rows
            assert twin.reference_sequence().get(name).update(SUB_DT, twin.context)
            _assert_member_equal(fleet.states, i, twin, solved, f"{where} {name}")
            if name == "rigid_body":
                seen["sticky_rows"] += int(rows.tire_active_status.sum())
                seen["limit_rows"] += int(rows.susp_active_status.sum())
                seen["solved_vehicles"] += solved
    return seen


def _commands(vehicle: Vehicle, i: int, step: int) -> None:
    """A manoeuvre that differs per member: land, drive and steer, brake (some with handbrake), stand."""
    c = vehicle.commands
    c.throttle = 0.8 if 50 <= step < 140 else 0.0
    c.steer = float(np.clip(0.6 * np.sin(0.05 * step + i), -1.0, 1.0)) if 70 <= step < 150 else 0.0
    c.brake = 1.0 if step >= 150 else 0.0
    c.handbrake = 1.0 if (step >= 150 and i % 2 == 1) or (100 <= step < 110 and i == 2) else 0.0


def _start(params: list[VehicleParams], context: SimulationContext) -> list[Vehicle]:
    vehicles = []
    f = params[0].frame
    for i, p in enumerate(params):
        v = Vehicle(p, context=context, nb_substeps=NB_SUBSTEPS)
        v.place_on_road(lng=0.0, lat=4.0 * i, clearance=(0.05, 2.5, 1.2, 3.0)[i % 4])
        tilt = quat_from_axis_angle(f.lng, (0.0, 0.0, 0.06, -0.04)[i % 4])
        v.place(v.pos, quat=quat_normalize(tilt), angular_velocity=0.2 * i * f.vrt)
        vehicles.append(v)
    return vehicles


def _run(params: list[VehicleParams], context: SimulationContext, steps: int, every: int) -> dict[str, int]:
    vehicles = _start(params, context)
    seen = {"sticky_rows": 0, "limit_rows": 0, "solved_vehicles": 0}
    for step in range(steps):
        for i, v in enumerate(vehicles):
            _commands(v, i, step)
            v.step(DT)
        landing = any((v.states.suspension.separation < 0.0).any() for v in vehicles)
        if step % every == 0 or landing:
            for k, n in _check_components(vehicles, f"step {step}").items():
                seen[k] += n
    return seen


# --------------------------------------------------------------------------------------------- tests


@pytest.mark.parametrize("frame", [None, DEFAULT_FRAME], ids=["y_up_z_forward", "z_up_x_forward"])
def test_direct_drive_members_match_their_vehicles(frame: object) -> None:
    base = load_preset("sedan") if frame is None else load_preset("sedan", frame=frame)
    seen = _run(_variants(base), _context(base.frame), steps=210, every=9)
    # the manoeuvre reached both kinds of rows
    assert seen["sticky_rows"] > 0
    assert seen["limit_rows"] > 0


def test_engine_drive_members_match_their_vehicles() -> None:
    base = load_preset("sedan_engine")
    seen = _run(_variants(base)[:3], _context(base.frame), steps=200, every=12)
    assert seen["sticky_rows"] > 0


def test_forced_rows_in_every_mode() -> None:
    """Every vehicle penetrating on some wheels and sticky on some axes, in every limit mode
    (including four coplanar limit rows: a rank-deficient system), against the reference."""
    base = load_preset("sedan")
    params = _variants(base)
    vehicles = _start(params, _context(base.frame))
    for step in range(40):
        for i, v in enumerate(vehicles):
            _commands(v, i, step + 60)
            v.step(DT)
    rng = np.random.default_rng(3)

    def perturb(twins: list[Vehicle]) -> None:
        for i, t in enumerate(twins):
            s = t.states
            n = t.nb_wheels
            penetration = -rng.uniform(0.001, 0.05, n) if i < 2 else rng.uniform(-0.03, 0.01, n)
            s.suspension.separation[:] = penetration
            s.tire_sticky.active_status[:] = rng.uniform(size=(n, 2)) < (0.9 if i != 1 else 0.0)
            s.rigid_body.linear_velocity[:] += rng.normal(size=3)
            s.rigid_body.angular_velocity[:] += 0.3 * rng.normal(size=3)
            s.rigid_body.external_force[:] = rng.normal(size=3) * 500.0
            s.rigid_body.external_torque[:] = rng.normal(size=3) * 100.0
            # the rows of these states, for the rigid body's solve
            t.reference_sequence().get("constraints").update(SUB_DT, t.context)

    for _ in range(3):
        seen = _check_components(vehicles, "forced", perturb)
        assert seen["limit_rows"] >= 4
        assert seen["sticky_rows"] > 0


def test_stale_rows_are_cleared_and_kept_as_the_reference() -> None:
    """No sticky axis and no penetration: flagged rows are reset; unflagged stale values stay."""
    base = load_preset("sedan")
    vehicles = _start(_variants(base)[:2], _context(base.frame))

    def perturb(twins: list[Vehicle]) -> None:
        for i, t in enumerate(twins):
            s = t.states
            s.suspension.separation[:] = 0.1
            s.tire_sticky.active_status[:] = False
            c = s.constraints
            c.tire_linears[:] = 1.5
            c.susp_linear[:] = -2.5
            c.tire_active_status[:] = False
            c.susp_active_status[:] = False
            c.susp_active_status[1] = i == 0

    _check_components(vehicles, "stale", perturb)


def test_suspension_rows_are_reset_while_only_sticky_rows_are_active() -> None:
    """A wheel that stopped penetrating while a tire stays sticky (a car braked at rest) has its
    suspension-limit row reset, as PhysX resets every wheel's rows before setting the active
    ones: the rows of the step it landed were recorded forever after (``suspLinear`` [0, 1, 0]
    where PhysX records 0)."""
    base = load_preset("sedan")
    vehicles = _start(_variants(base)[:2], _context(base.frame))

    def perturb(twins: list[Vehicle]) -> None:
        for t in twins:
            s = t.states
            s.suspension.separation[:] = 0.1
            s.tire_sticky.active_status[:] = True
            c = s.constraints
            c.susp_active_status[:] = True
            c.susp_linear[:] = (0.0, 1.0, 0.0)
            c.susp_angular[:] = (-1.6, 0.0, 0.8)
            c.susp_geometric_error[:] = -0.149
            c.restitution[:] = 0.2

    twins = [_clone(v) for v in vehicles]
    perturb(twins)
    for t in twins:
        assert t.reference_sequence().get("constraints").update(SUB_DT, t.context)
        c = t.states.constraints
        assert c.tire_active_status.all() and not c.susp_active_status.any()
        for field in ("susp_linear", "susp_angular", "susp_geometric_error", "restitution"):
            assert not getattr(c, field).any(), field
    _check_components(vehicles, "sticky only", perturb)  # the batch resets them too


def test_repack_follows_changed_params() -> None:
    base = load_preset("sedan")
    vehicles = _start(_variants(base)[:2], _context(base.frame))
    for step in range(30):
        for i, v in enumerate(vehicles):
            _commands(v, i, step + 150)
            v.step(DT)
    twins = [_clone(v) for v in vehicles]
    fleet = _fleet(twins)
    component = RigidBodyBatchComponent(fleet)
    new = twins[1].params.replace(rigid_body=dataclasses.replace(twins[1].params.rigid_body, mass=900.0),
                                  anti_roll_bars=())
    twins[1].params = new
    fleet.params = tuple(t.params for t in twins)
    component.repack()
    component.update(SUB_DT, twins[0].context)
    for i, t in enumerate(twins):
        t.reference_sequence().get("rigid_body").update(SUB_DT, t.context)
        _assert_member_equal(fleet.states, i, t, True, "repacked")


def _random_rows(rng: np.random.Generator, n: int, case: str) -> VehicleConstraintState:
    c = VehicleConstraintState.default(n)
    arms = np.column_stack((rng.choice([-1.5, 1.3], n), rng.choice([-0.8, 0.8], n), np.full(n, -0.45)))
    arms += 0.01 * rng.normal(size=(n, 3))
    normal = np.array([0.0, 0.0, 1.0]) if case == "coplanar" else quat_normalize(rng.normal(size=4))[:3]
    normal = normal / np.linalg.norm(normal)
    c.tire_active_status[:] = rng.uniform(size=(n, 2)) < (0.7 if case != "limits" else 0.0)
    d = rng.normal(size=(n, 2, 3))
    d[:, :, 2] = 0.0
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    if case == "airborne":
        d[0] = 0.0  # sticky while the directions are zero: zero rows
        c.tire_active_status[0] = True
    c.tire_linears[:] = np.where(c.tire_active_status[..., None], d, 0.0)
    c.tire_angulars[:] = np.where(c.tire_active_status[..., None], np.cross(arms[:, None, :], d), 0.0)
    damping = {"rigid": 1e9, "zero": 0.0}.get(case, 1.0)
    c.tire_damping[:] = np.where(c.tire_active_status, damping * rng.uniform(0.1, 2.0, (n, 2)), 0.0)
    if case in ("coplanar", "limits", "mixed"):
        c.susp_active_status[:] = True if case != "mixed" else rng.uniform(size=n) < 0.6
        c.susp_linear[:] = np.where(c.susp_active_status[:, None], normal, 0.0)
        c.susp_angular[:] = np.where(c.susp_active_status[:, None], np.cross(arms, normal), 0.0)
        c.susp_geometric_error[:] = np.where(c.susp_active_status, -rng.uniform(0.0, 0.05, n), 0.0)
        c.restitution[:] = np.where(c.susp_active_status, rng.uniform(0.0, 1.0, n), 0.0)
    return c


@pytest.mark.parametrize("case", ["sticky", "rigid", "zero", "airborne", "coplanar", "limits", "mixed"])
def test_compiled_solve_matches_the_reference_solver(case: str) -> None:
    """The compiled row solve against :func:`solve_vehicle_constraints` on synthetic rows, including
    near-rigid sticky rows, zero damping, zero rows and rank-deficient coplanar limit rows.

    Near-rigid rows (damping 1e9 / time) make the system ill-conditioned (~1e8): there the reference
    itself is only good to ~1e-10 (checked against 50-digit arithmetic when this was written), and
    the two solvers agree to that, not to 1e-12. Coplanar limit rows make it singular: the two
    solvers sum in different orders and agree to 4e-10 at worst over 240 seeds (1e-12 on most).
    Each case draws from its own fixed seed (``hash`` of a string changes with every process)."""
    tol = {"rigid": 1e-8, "coplanar": 1e-9, "limits": 1e-9, "mixed": 1e-9}.get(case, 1e-12)
    rng = np.random.default_rng(zlib.crc32(case.encode()))
    for nb_wheels in (4, 6):
        work = np.empty(_work_shape(nb_wheels))
        for _ in range(120):
            c = _random_rows(rng, nb_wheels, case)
            moi = rng.uniform(500.0, 4000.0, 3)
            r = quat_normalize(rng.normal(size=4))
            inv_i = world_inverse_inertia(r, 1.0 / moi)
            mass, dt = rng.uniform(800.0, 3000.0), rng.choice([1 / 180, 1 / 60, 0.02])
            v, w = rng.normal(size=3) * 3.0, rng.normal(size=3)
            v_ref, w_ref, v_got, w_got = v.copy(), w.copy(), v.copy(), w.copy()
            solve_vehicle_constraints(mass, inv_i, c, dt, v_ref, w_ref)
            _solve_rows(mass, inv_i, dt, c.tire_active_status, c.tire_linears, c.tire_angulars,
                        c.tire_damping, c.susp_active_status, c.susp_linear, c.susp_angular,
                        c.susp_geometric_error, c.restitution, v_got, w_got, work)
            np.testing.assert_allclose(v_got, v_ref, rtol=tol, atol=tol)
            np.testing.assert_allclose(w_got, w_ref, rtol=tol, atol=tol)
