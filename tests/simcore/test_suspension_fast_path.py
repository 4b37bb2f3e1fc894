"""The suspension component's fused kernel equals the plain functions, bit for bit.

``SuspensionComponent`` runs :mod:`simcore.suspension._fast` by default and the plain functions of
:mod:`simcore.suspension.functions` with ``use_fast_path = False``. The kernel mirrors every plain
operation in the same order (and both take their sines and cosines from numba), so the results
must be identical, not merely close. The inputs are randomised over the regimes the functions
distinguish: on the ground, beyond max compression, in the air, no road hit, unspecified previous
jounce, expansion faster than the spring allows, tilted roads, several frames, both jounce
calculations, multi-point compliance tables and anti-roll bars.
"""

from __future__ import annotations

import numpy as np
import pytest

from simcore.frame import DEFAULT_FRAME, SAE_J670, Y_UP_Z_FORWARD, Frame
from simcore.maths import quat_from_axis_angle, quat_multiply
from simcore.presets import default_vehicle
from simcore.suspension.components import SuspensionComponent
from simcore.suspension.params import (
    AntiRollBarParams,
    ComplianceTable,
    JounceCalculationType,
    SuspensionComplianceParams,
    SuspensionStateCalculationParams,
)
from simcore.suspension.states import UNSPECIFIED_JOUNCE
from simcore.vehicle import Vehicle, VehicleParams

STATES = ("suspension", "suspension_compliance", "suspension_force", "anti_roll_force")


def _compliance(n: int) -> SuspensionComplianceParams:
    toe = ComplianceTable.from_points([[(0.0, 0.01), (0.5, 0.0), (1.0, -0.02)]] * n, False)
    camber = ComplianceTable.from_points([[(0.2, -0.01), (0.9, 0.03)]] * (n - 1) + [[]], False)
    tire_app = ComplianceTable.from_points([[(0.0, [0.0, -0.1, 0.01]), (1.0, [0.01, -0.2, 0.0])]] * n, True)
    susp_app = ComplianceTable.from_points(
        [[(0.3, [0.0, -0.12, 0.0]), (0.6, [0.0, -0.05, 0.02]), (1.0, [0.0, 0.0, 0.0])]] * n, True
    )
    return SuspensionComplianceParams(toe, camber, susp_app, tire_app)


def _params(frame: Frame, calc: JounceCalculationType, limit: bool, compliance: bool) -> VehicleParams:
    p = default_vehicle(frame)
    changes: dict[str, object] = {
        "suspension_state_calculation": SuspensionStateCalculationParams(calc, limit),
        "anti_roll_bars": (AntiRollBarParams(0, 1, 1500.0), AntiRollBarParams(2, 3, 700.0)),
    }
    if compliance:
        changes["suspension_compliance"] = _compliance(p.nb_wheels)
    return p.replace(**changes)


def _randomise(v: Vehicle, rng: np.random.Generator) -> None:
    """A random but physically shaped situation: body near its ride height, roads tilted a little."""
    p, s, f = v.params, v.states, v.frame
    n = v.nb_wheels
    v.place_on_road(clearance=rng.uniform(-0.25, 0.1))
    tilt = quat_from_axis_angle(f.lng, rng.uniform(-0.3, 0.3))
    s.rigid_body.quat[:] = quat_multiply(quat_from_axis_angle(f.vrt, rng.uniform(-np.pi, np.pi)), tilt)
    s.rigid_body.pos[:] += rng.normal(0.0, 0.05, 3)
    s.rigid_body.external_force[:] = rng.normal(0.0, 2000.0, 3)
    s.rigid_body.external_torque[:] = rng.normal(0.0, 500.0, 3) * (rng.random() < 0.7)
    s.steer_command_response.response[:] = rng.uniform(-0.5, 0.5, n)
    # Road planes through points near each wheel's bottom, with tilted normals.
    normals = f.vrt + rng.normal(0.0, 0.15, (n, 3))
    normals /= np.linalg.norm(normals, axis=1)[:, None]
    height = s.rigid_body.pos @ f.vrt - rng.uniform(0.3, 0.9, n)
    points = s.rigid_body.pos + np.outer(height - s.rigid_body.pos @ f.vrt, f.vrt)
    s.road_geometry.plane[:, :3] = normals
    s.road_geometry.plane[:, 3] = -np.einsum("ij,ij->i", normals, points)
    s.road_geometry.hit_state[:] = rng.random(n) < 0.85
    travel = p.suspension.suspension_travel_dist
    jounce = rng.uniform(0.0, 1.0, n) * travel
    jounce[rng.random(n) < 0.15] = UNSPECIFIED_JOUNCE
    s.suspension.jounce[:] = jounce
    s.suspension.jounce_speed[:] = rng.normal(0.0, 2.0, n)
    s.suspension.separation[:] = rng.normal(0.0, 0.01, n)


def _on_flat_ground(v: Vehicle, clearance: float) -> None:
    """Place the vehicle and give every wheel the ground plane (what the road query would find)."""
    v.place_on_road(clearance=clearance)
    v.states.road_geometry.plane[:, :3] = v.frame.vrt
    v.states.road_geometry.plane[:, 3] = 0.0
    v.states.road_geometry.hit_state[:] = True


def _run_both(params: VehicleParams, seed: int, dt: float) -> tuple[dict, dict]:
    results = []
    for fast in (False, True):
        v = Vehicle(params)
        _randomise(v, np.random.default_rng(seed))
        comp = SuspensionComponent(v)
        comp.use_fast_path = fast
        assert comp.update(dt, v.context)
        results.append({name: {k: a.copy() for k, a in getattr(v.states, name).as_dict().items()}
                        for name in STATES})
    return results[0], results[1]


@pytest.mark.parametrize("frame", [DEFAULT_FRAME, Y_UP_Z_FORWARD, SAE_J670], ids=["xyz", "yup", "sae"])
@pytest.mark.parametrize(
    "calc", [JounceCalculationType.RAYCAST, JounceCalculationType.SWEEP], ids=["ray", "sweep"]
)
@pytest.mark.parametrize("limit", [False, True], ids=["free", "limited"])
def test_fused_suspension_update_equals_plain_functions(frame, calc, limit) -> None:
    params = _params(frame, calc, limit, compliance=True)
    for seed in range(12):
        plain, fused = _run_both(params, seed, dt=1.0 / 180.0)
        for name in STATES:
            for field, expected in plain[name].items():
                np.testing.assert_array_equal(
                    fused[name][field], expected, err_msg=f"seed {seed}: {name}.{field}"
                )


def test_random_inputs_reach_every_regime() -> None:
    """The randomised situations above cover ground contact, bump stop, air, and the expansion limit."""
    params = _params(DEFAULT_FRAME, JounceCalculationType.SWEEP, True, compliance=False)
    unlimited = _params(DEFAULT_FRAME, JounceCalculationType.SWEEP, False, compliance=False)
    seen = {"on_ground": 0, "bump_stop": 0, "air": 0, "limited": 0}
    for seed in range(12):
        plain, _ = _run_both(params, seed, dt=1.0 / 180.0)
        free, _ = _run_both(unlimited, seed, dt=1.0 / 180.0)
        sep = plain["suspension"]["separation"]
        seen["on_ground"] += int(np.sum(sep == 0.0))
        seen["bump_stop"] += int(np.sum(sep < 0.0))
        seen["air"] += int(np.sum(sep > 0.0))
        seen["limited"] += int(np.sum(plain["suspension"]["jounce"] != free["suspension"]["jounce"]))
    assert all(count > 0 for count in seen.values()), seen


def test_packed_params_follow_a_params_replacement() -> None:
    """Params are immutable; replacing them must reach the kernel (stiffer springs, bigger force)."""
    params = _params(DEFAULT_FRAME, JounceCalculationType.SWEEP, False, compliance=False)
    v = Vehicle(params)
    comp = SuspensionComponent(v)
    _on_flat_ground(v, -0.1)
    comp.update(1.0 / 180.0, v.context)
    soft = v.states.suspension_force.normal_force.copy()
    stiffer = params.suspension_force.__class__(
        stiffness=params.suspension_force.stiffness * 2.0,
        damping=params.suspension_force.damping,
        sprung_mass=params.suspension_force.sprung_mass,
    )
    v.params = params.replace(suspension_force=stiffer)
    _on_flat_ground(v, -0.1)
    comp.update(1.0 / 180.0, v.context)
    stiff = v.states.suspension_force.normal_force.copy()
    assert np.all(soft > 0.0)
    np.testing.assert_allclose(stiff, 2.0 * soft, rtol=1e-9)  # same jounce, zero jounce speed
    comp.use_fast_path = False
    _on_flat_ground(v, -0.1)
    comp.update(1.0 / 180.0, v.context)
    np.testing.assert_array_equal(v.states.suspension_force.normal_force, stiff)


def test_whole_vehicle_trajectory_is_unchanged_by_the_fast_path() -> None:
    """Two seconds of driving with both suspension and tire fast paths on and off: same states."""
    params = _params(DEFAULT_FRAME, JounceCalculationType.SWEEP, True, compliance=True)
    finals = []
    for fast in (False, True):
        v = Vehicle(params, nb_substeps=3)
        for entry in v.sequence.entries():
            if entry.name in ("suspension", "tire"):
                entry.component.use_fast_path = fast
        v.place_on_road(clearance=-0.1, speed=8.0)
        for i in range(120):
            v.commands.throttle = 0.6 if i < 60 else 0.0
            v.commands.brake = 0.0 if i < 60 else 0.7
            v.commands.steer = 0.5 * np.sin(i / 20.0)
            v.step(1.0 / 60.0)
        finals.append(v.states)
    for name, state in finals[0].items():
        if not hasattr(state, "as_dict"):
            continue
        other = getattr(finals[1], name).as_dict()
        for field, expected in state.as_dict().items():
            np.testing.assert_allclose(other[field], expected, rtol=1e-9, atol=1e-9,
                                       err_msg=f"{name}.{field}")
