"""simcore.param_paths: one params field addressed by a dotted path."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.param_paths import ParamPathError, param_value, parse_setting, parse_vary, with_param
from simcore.presets import load_preset


@pytest.fixture(scope="module")
def sedan():
    return load_preset("sedan")


def test_a_scalar_field_is_replaced_in_new_params(sedan):
    heavy = with_param(sedan, "rigid_body.mass", 2500)
    assert heavy.rigid_body.mass == 2500.0 and sedan.rigid_body.mass != 2500.0
    assert param_value(heavy, "rigid_body.mass") == 2500.0
    assert heavy.tire_force is sedan.tire_force  # the rest is shared, params being immutable


def test_a_per_wheel_field_takes_one_number_or_one_per_wheel(sedan):
    assert with_param(sedan, "tire_force.long_stiff", 1000.0).tire_force.long_stiff.tolist() == [1000.0] * 4
    four = with_param(sedan, "wheel.radius", [0.3, 0.3, 0.35, 0.35])
    assert four.wheel.radius.tolist() == [0.3, 0.3, 0.35, 0.35]
    with pytest.raises(ParamPathError, match=r"expected one number or shape \(4,\), got shape \(3,\)"):
        with_param(sedan, "wheel.radius", [0.3, 0.3, 0.3])


def test_tuple_fields_are_indexed(sedan):
    p = with_param(sedan, "brake_command_response[1].max_response", 1234.0)
    assert p.brake_command_response[1].max_response == 1234.0
    assert p.brake_command_response[0] is sedan.brake_command_response[0]
    with pytest.raises(ParamPathError, match=r"brake_command_response has 2 entries to index with \[5\]"):
        with_param(sedan, "brake_command_response[5].max_response", 1.0)


@pytest.mark.parametrize(("path", "message"), [
    ("rigid_body.mas", "RigidBodyParams has no field 'mas' \\(fields: mass, moi\\)"),
    ("chassis.mass", "VehicleParams has no field 'chassis'"),
    ("rigid_body", "names a whole RigidBodyParams; add one of its fields"),
    ("engine.peak_torque", "this vehicle has no engine \\(None\\)"),
    ("rigid_body.mass!", "is not a field name"),
])
def test_a_bad_path_is_one_line_naming_it(sedan, path, message):
    with pytest.raises(ParamPathError, match=message) as info:
        with_param(sedan, path, 1.0)
    assert "\n" not in str(info.value)


def test_parse_vary():
    assert parse_vary("rigid_body.mass=1500:2500") == ("rigid_body.mass", 1500.0, 2500.0)
    for bad in ("rigid_body.mass", "rigid_body.mass=1:", "=1:2", "x=a:b"):
        with pytest.raises(ParamPathError, match="expected PARAM=LO:HI"):
            parse_vary(bad)
    assert np.isfinite(parse_vary("a.b=-1e3:2.5")[1])
    for bad in ("rigid_body.mass=inf:inf", "rigid_body.mass=1e400:2", "rigid_body.mass=nan:1"):
        with pytest.raises(ParamPathError, match="LO and HI must be finite numbers"):
            parse_vary(bad)


def test_parse_setting():
    assert parse_setting("rigid_body.mass=2200") == ("rigid_body.mass", 2200.0)
    assert parse_setting("wheel.radius=0.3, 0.3,0.4,0.4") == ("wheel.radius", [0.3, 0.3, 0.4, 0.4])
    for bad in ("rigid_body.mass", "=1", "x=", "x=a", "x=nan", "x=1,inf"):
        with pytest.raises(ParamPathError, match="expected PARAM=VALUE"):
            parse_setting(bad)


def test_a_per_wheel_field_takes_no_index(sedan):
    with pytest.raises(ParamPathError, match=r"radius is an array \(4 numbers\) and takes no \[i\]"):
        with_param(sedan, "wheel.radius[0]", 0.3)


def test_integer_fields_take_whole_numbers_that_fit_a_c_int():
    """An iteration or point count set to 4294967296 wrapped to 0 in the kernels' C int (and was
    recorded so), 1e300 overflowed with a traceback, 1.7 was cut to 1 (fuzzing finds)."""
    engine = load_preset("sedan_engine")
    assert with_param(engine, "clutch.estimate_iterations", 7.0).clutch.estimate_iterations == 7
    for bad in (4294967296, 5e9, 1e300, 1.7, -(2**31) - 1):
        with pytest.raises(ParamPathError, match="expected a whole number of magnitude at most 2147483647"):
            with_param(engine, "clutch.estimate_iterations", bad)
    sedan = load_preset("sedan")
    with pytest.raises(ParamPathError, match="expected a whole number"):
        with_param(sedan, "suspension_compliance.wheel_toe_angle.nb_points", [1.2, 1, 1, 1])
