"""A user's own tire model plugs into a vehicle by replacing one named component (examples/custom_tire.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from simcore.tire.components import TireComponent

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "custom_tire.py"


@pytest.fixture(scope="module")
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("custom_tire_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_example_runs_with_the_custom_tire(example: ModuleType) -> None:
    v = example.main(duration=2.0)
    tire = v.sequence.get("tire")
    assert isinstance(tire, example.LinearTireComponent)
    assert not any(isinstance(c, TireComponent) for c in v.sequence)
    # the states hold the custom law's forces, recomputed here from the slips and grip
    s = v.states
    f_lng, f_lat = example.linear_friction_circle_forces(s.tire_slip.lng_slip, s.tire_slip.lat_slip,
                                                         s.tire_grip.load, s.tire_grip.friction,
                                                         float(tire.c_lng[0, 0]), float(tire.c_lat[0, 0]))
    lng = np.einsum("nj,nj->n", s.tire_force.lng_force, s.tire_direction.lng_direction)
    lat = np.einsum("nj,nj->n", s.tire_force.lat_force, s.tire_direction.lat_direction)
    np.testing.assert_allclose(lng, f_lng)
    np.testing.assert_allclose(lat, f_lat)
    np.testing.assert_allclose(s.tire_force.wheel_torque, -f_lng * v.params.wheel.radius)
    # each torque is the lever arm crossed with its force: perpendicular to it
    dots = np.einsum("wdj,wdj->wd", s.tire_force.torques, s.tire_force.forces)
    assert np.abs(dots).max() <= 1e-9 * max(1.0, float(np.abs(s.tire_force.forces).max()) ** 2)
    # and the car drives: faster than it started, turning left (positive steer, positive yaw)
    assert v.forward_speed > 12.0
    assert v.yaw_rate > 0.05


def test_one_component_serves_a_fleet_with_a_coefficient_per_car(example: ModuleType) -> None:
    fleet = example.fleet_demo(n=3, duration=2.0)
    assert isinstance(fleet.sequence.get("tire"), example.LinearTireComponent)
    yaw = [member.yaw_rate for member in fleet]
    assert yaw[0] < yaw[1] < yaw[2]  # stiffer cornering, same steer: a tighter turn
    single = example.main(duration=2.0)  # the middle car (c_lat 10) alone, as a vehicle of its own
    np.testing.assert_allclose(yaw[1], single.yaw_rate, rtol=1e-9)


def test_friction_circle_caps_the_combined_force(example: ModuleType) -> None:
    f_lng, f_lat = example.linear_friction_circle_forces(np.array([0.5, 0.01]), np.array([0.3, 0.0]),
                                                         np.array([4000.0, 4000.0]), np.array([1.0, 1.0]),
                                                         12.0, 10.0)
    assert np.hypot(f_lng[0], f_lat[0]) == pytest.approx(4000.0)
    assert f_lng[1] == pytest.approx(12.0 * 4000.0 * 0.01)
    assert f_lat[0] < 0.0  # opposes a positive slip angle
