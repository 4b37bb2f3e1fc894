"""Stingray .physics -> simcore mapping: every documented property, errors, shipped files, driving."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from simcore.drivetrain.engine_drive.params import FourWheelDriveDifferentialParams, TankDriveModel
from simcore.frame import DEFAULT_FRAME
from simcore.stingray import (
    EXAMPLE_CAR,
    EXAMPLE_TANK,
    STINGRAY_FRAME,
    StingrayError,
    StingrayWarning,
    load_physics,
    load_physics_vehicle,
    loads,
    physics_from_sjson,
)
from simcore.stingray.physics import GRAVITY
from simcore.stingray.smoothing import (
    DriverInputParams,
    InputSmoothingParams,
    InputSmoothingState,
    commands_from_channels,
    raw_channels,
    smooth_channels,
)

SHAPES = """shapes = {
    body = { position = [0 0 0.8] half_extents = [0.9 2.0 0.5] }
    w0 = { position = [-0.8 1.3 0.3] radius = 0.3 half_width = 0.1 }
    w1 = { position = [0.8 1.3 0.3] radius = 0.3 half_width = 0.1 }
    w2 = { position = [-0.8 -1.3 0.3] radius = 0.3 half_width = 0.1 }
    w3 = { position = [0.8 -1.3 0.3] radius = 0.3 half_width = 0.1 }
    w4 = { position = [-0.8 -2.3 0.3] radius = 0.3 half_width = 0.1 }
    w5 = { position = [0.8 -2.3 0.3] radius = 0.3 half_width = 0.1 }
}
"""
M = 1200.0


def text_of(vehicle: str = "", chassis: str = "", wheels: tuple[str, ...] = ("", "", "", "")) -> str:
    ws = "\n".join(f'        {{ scene_graph_shape_node = "w{i}" {w} }}' for i, w in enumerate(wheels))
    return (
        SHAPES + 'vehicles = [\n    {\n        name = "car"\n'
        f'        chassis = {{ mass = {M} scene_graph_shape_node = "body" {chassis} }}\n'
        f"        {vehicle}\n        wheels = [\n{ws}\n        ]\n    }}\n]\n"
    )


def mapped(vehicle: str = "", chassis: str = "", wheels: tuple[str, ...] = ("", "", "", "")):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return physics_from_sjson(loads(text_of(vehicle, chassis, wheels), "t.physics")).vehicle()


def fails(where: str, text: str) -> StingrayError:
    with pytest.raises(StingrayError) as info:
        physics_from_sjson(loads(text, "t.physics"))
    assert str(info.value).startswith(where), str(info.value)
    return info.value


def line_col(text: str, needle: str, offset: int = 0) -> str:
    i = text.index(needle) + offset
    line = text.count("\n", 0, i) + 1
    col = i - (text.rfind("\n", 0, i) + 1) + 1
    return f"t.physics:{line}:{col}"


# -------------------------------------------------------------------------------- defaults


def test_minimal_file_takes_physx3_defaults() -> None:
    v = mapped()
    p = v.params
    assert v.physics_model == "vehicle" and v.driver_inputs is None and p.frame == STINGRAY_FRAME
    assert p.rigid_body.mass == M and p.nb_wheels == 4
    np.testing.assert_allclose(p.suspension_force.sprung_mass, M / 4)
    np.testing.assert_allclose(p.tire_force.rest_load, (M / 4 + 20.0) * GRAVITY)
    np.testing.assert_allclose(p.tire_force.lat_stiff_y, 18.0 * p.tire_force.rest_load)
    np.testing.assert_allclose(p.tire_force.long_stiff, 1000.0 * GRAVITY)
    np.testing.assert_allclose(p.wheel.moi, 20.0 * 0.3 * 0.3)
    assert p.brake_command_response[0].max_response == 1500.0
    assert p.brake_command_response[1].max_response == 0.0 and p.steer_command_response.max_response == 0.0
    assert p.engine.peak_torque == 500.0 and p.engine.max_omega == 600.0
    assert p.gearbox.ratios.tolist() == [-4.0, 0.0, 4.0, 2.0, 1.5, 1.1, 1.0] and p.autobox is not None
    d = p.differential
    assert isinstance(d, FourWheelDriveDifferentialParams)
    np.testing.assert_allclose(d.torque_ratios, [0.225, 0.225, 0.275, 0.275])
    assert (d.center_bias, d.center_target, d.rate) == (1.3, pytest.approx(1.29), 10.0)
    assert p.clutch_command_response.max_response == 10.0


# ---------------------------------------------------------------------------------- chassis


def test_moment_of_inertia_raw_over_cuboid_over_default() -> None:
    w, length, h = 1.8, 4.0, 1.0
    base = M * np.array([length**2 + h**2, w**2 + h**2, w**2 + length**2])
    raw = mapped(chassis="moment_of_inertia = { raw = [100 200 300] cuboid = { mass_factor = 0.08 } }")
    np.testing.assert_allclose(raw.params.rigid_body.moi, [100, 200, 300])
    cub = mapped(
        chassis="moment_of_inertia = { cuboid = { mass_factor = 0.08 scale = [1 2 0.5] } "
        "mass_factor = 0.05 responsiveness = 0.3 }"
    )
    np.testing.assert_allclose(cub.params.rigid_body.moi, 0.08 * base * [1, 2, 0.5])
    cub2 = mapped(chassis="moment_of_inertia = { cuboid = { scale = [1 1 2] } mass_factor = 0.05 }")
    np.testing.assert_allclose(cub2.params.rigid_body.moi, 0.05 * base * [1, 1, 2])
    default = mapped(chassis="moment_of_inertia = { mass_factor = 0.05 responsiveness = 0.6 }")
    np.testing.assert_allclose(default.params.rigid_body.moi, 0.05 * base * [1, 1, 0.6])
    np.testing.assert_allclose(mapped().params.rigid_body.moi, base / 12 * [1, 1, 0.8])


def test_seed_chassis_example_maps_with_raw_taking_precedence() -> None:
    text = (
        SHAPES
        + """vehicles = [ { chassis = {
        mass = 1500.0
        scene_graph_shape_node = "body"
        scene_graph_render_nodes = [ { node = "j_body" transform_type = "full" } ]
        center_of_mass_offset = [ 0 0.5 -0.5 ]
        moment_of_inertia = {
            raw = [ 1000 1000 1000 ]
            cuboid = [ mass_factor = 0.08 scale = [ 1.0 1.0 0.5 ] ]
            mass_factor = 0.055
            responsiveness = 0.9
        }
    } wheels = [ { scene_graph_shape_node = "w0" } { scene_graph_shape_node = "w1" }
                 { scene_graph_shape_node = "w2" } { scene_graph_shape_node = "w3" } ] } ]"""
    )
    with pytest.warns(Warning) as caught:
        v = physics_from_sjson(loads(text, "t.physics")).vehicle()
    assert [type(c.message).__name__ for c in caught] == ["SjsonWarning"]  # the cuboid-as-array, nothing else
    np.testing.assert_allclose(v.params.rigid_body.moi, [1000, 1000, 1000])
    assert v.chassis_render_nodes == ("j_body",)


def test_centre_of_mass_offset_moves_the_wheels_relative_to_the_body() -> None:
    p = mapped(chassis="center_of_mass_offset = [0.1 0.2 -0.3]").params
    # wheel centre w0 (-0.8, 1.3, 0.3) relative to the centre of mass (0.1, 0.2, 0.5), lifted by the
    # default max compression 0.3 along -travel (up)
    np.testing.assert_allclose(p.suspension.suspension_attachment_pos[0], [-0.9, 1.1, -0.2 + 0.3])
    np.testing.assert_allclose(p.suspension.suspension_travel_dist, 0.3 + 0.1)


# ----------------------------------------------------------------------------- drivetrain


def test_engine_gears_clutch() -> None:
    p = mapped("""engine = { peak_torque = 800 max_omega = 700
                     damping_rate = { full_throttle = 0.2 zero_throttle_clutch_engaged = 3
                                      zero_throttle_clutch_disengaged = 0.5 } }
        gears = { auto_gears_enabled = false final_ratio = 3.5 switch_time = 0.25
                  ratios = [-3.5 0 3 1.8 1.2] }
        clutch = { strength = 25 }""").params
    e = p.engine
    assert (
        e.peak_torque,
        e.max_omega,
        e.damping_rate_full_throttle,
        e.damping_rate_zero_throttle_clutch_engaged,
        e.damping_rate_zero_throttle_clutch_disengaged,
    ) == (800, 700, 0.2, 3, 0.5)
    assert p.gearbox.ratios.tolist() == [-3.5, 0, 3, 1.8, 1.2] and p.gearbox.neutral_gear == 1
    assert (p.gearbox.final_ratio, p.gearbox.switch_time) == (3.5, 0.25)
    assert p.autobox is None
    assert p.clutch_command_response.max_response == 25
    thirty = " ".join(str(30 - i) for i in range(30))
    assert (
        mapped(f"gears = {{ use_auto_gears = true ratios = [-1 0 {thirty}] }}").params.gearbox.nb_ratios == 32
    )


@pytest.mark.parametrize(
    "kind, ratios, biases",
    [
        ("ls_4wd", [0.6 * 0.7, 0.6 * 0.3, 0.4 * 0.2, 0.4 * 0.8], (1.5, 1.4, 1.2)),
        ("open_4wd", [0.6 * 0.7, 0.6 * 0.3, 0.4 * 0.2, 0.4 * 0.8], (0, 0, 0)),
        ("ls_frontwd", [0.7, 0.3, 0, 0], (0, 1.4, 0)),
        ("ls_rearwd", [0, 0, 0.2, 0.8], (0, 0, 1.2)),
        ("open_frontwd", [0.7, 0.3, 0, 0], (0, 0, 0)),
        ("open_rearwd", [0, 0, 0.2, 0.8], (0, 0, 0)),
    ],
)
def test_differential_types(kind: str, ratios: list[float], biases: tuple[float, float, float]) -> None:
    text = text_of(f"""differential = {{ type = "{kind}" front_rear_split = 0.6 front_left_right_split = 0.7
                                   rear_left_right_split = 0.2 center_bias = 1.5 front_bias = 1.4
                                   rear_bias = 1.2 }}""")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = physics_from_sjson(loads(text, "t.physics")).vehicle().params.differential
    np.testing.assert_allclose(d.torque_ratios, ratios)
    np.testing.assert_allclose(d.ave_wheel_speed_ratios, ratios)
    assert (d.center_bias, d.front_bias, d.rear_bias) == biases
    for bias, target in (
        (d.center_bias, d.center_target),
        (d.front_bias, d.front_target),
        (d.rear_bias, d.rear_target),
    ):
        assert target == (0.0 if bias == 0 else pytest.approx(1 + 29 / 30 * (bias - 1)))
    assert d.rate == (10.0 if kind.startswith("ls") else 0.0)
    expected = {
        "ls_4wd": 0,
        "open_4wd": 3,
        "ls_frontwd": 4,
        "ls_rearwd": 4,
        "open_frontwd": 5,
        "open_rearwd": 5,
    }
    assert len(caught) == expected[kind], [str(c.message) for c in caught]  # "does not apply" warnings


def test_locked_differential_bias_one() -> None:
    d = mapped('differential = { type = "ls_rearwd" rear_bias = 1.0 }').params.differential
    assert (d.rear_bias, d.rear_target) == (1.0, 1.0)


# ------------------------------------------------------------------------- driver controls


def test_ackermann_steer_table_and_smoothing() -> None:
    steer = "max_steer = 0.5"
    v = mapped(
        """ackermann_correction = { accuracy = 0.7 }
        steer_vs_forward_speed = [ 0 1  10 0.5  30 0.2 ]
        input_smoothing = { rise_rates = { acceleration = 3 steer_right = 1.5 }
                            fall_rates = { brake = 7 handbrake = 8 steer_left = 9 } }""",
        wheels=(steer, steer, "", ""),
    )
    p = v.params
    (ack,) = p.ackermann
    assert ack.wheel_ids == (1, 0)  # the right wheel (unit +X) is on Vehicle2's negative lateral side
    assert (ack.wheel_base, ack.track_width, ack.strength) == (pytest.approx(2.6), pytest.approx(1.6), 0.7)
    assert p.steer_command_response.max_response == 0.5
    np.testing.assert_allclose(p.steer_command_response.wheel_response_multipliers, [1, 1, 0, 0])
    inputs = v.driver_inputs
    assert inputs.max_steer(0.0) == 1.0 and inputs.max_steer(-20.0) == pytest.approx(0.35)
    assert inputs.max_steer(100.0) == pytest.approx(0.2)
    np.testing.assert_allclose(inputs.smoothing.rise_rates, [3, 6, 6, 2.5, 1.5])
    np.testing.assert_allclose(inputs.smoothing.fall_rates, [10, 7, 8, 9, 5])
    assert (
        mapped("ackermann_correction = { accuracy = 0 }", wheels=(steer, steer, "", "")).params.ackermann
        == ()
    )


def test_steer_table_nested_pairs_and_errors() -> None:
    v = mapped("steer_vs_forward_speed = [ [0 1] [5 0.75] ]")
    np.testing.assert_allclose(v.driver_inputs.steer_vs_forward_speed, [[0, 1], [5, 0.75]])
    for table, what in (
        ("[0 1 5]", "odd count"),
        ("[5 1 0 0.5]", "increase"),
        ("[0 1.5]", "[0, 1]"),
        ("[0 1 x = 1]", None),
    ):
        text = text_of(f"steer_vs_forward_speed = {table}")
        if what is None:
            with pytest.raises(Exception, match="pair inside an array"):
                loads(text, "t.physics")
            continue
        err = fails(line_col(text, "steer_vs_forward_speed = ", 25), text)
        assert what in err.message and err.path == "vehicles[0].steer_vs_forward_speed"


# ------------------------------------------------------------------------------------ wheels


def test_wheel_tire_and_suspension_properties() -> None:
    w0 = """mass = 25 moi = 1.7 position_offset = [0.05 0 0.01] radius_scale = 1.1 damping_rate = 0.5
            max_brake_torque = 2000 max_handbrake_torque = 0 max_steer = 0.4
            tire = { type = "slick" lateral_stiffness_x = 1.5 lateral_stiffness_y = 15
                     longitudal_stiffness = 1800 friction_versus_slip = [0 0.9 0.2 1.1 1.0 0.8]
                     force_application_offset = [0 0.1 -0.2] }
            suspension = { sprung_mass = 300 max_compression = 0.15 max_droop = 0.05 camber_rest = -0.01
                           camber_max_compression = -0.03 camber_max_droop = 0.02 spring_strength = 40000
                           spring_damper_rate = 3000 travel_direction = [0 0.6 -0.8]
                           force_application_offset = [0.02 0 -0.25] }"""
    w2 = (
        'max_handbrake_torque = 4000 tire = { longitudinal_stiffness = 1200 } wheel_raycast_filter = "wheels"'
    )
    v = mapped(wheels=(w0, "", w2, ""))
    p = v.params
    r = 0.3 * 1.1
    assert p.wheel.radius[0] == pytest.approx(r) and p.wheel.radius[1] == 0.3
    assert (p.wheel.mass[0], p.wheel.moi[0], p.wheel.damping_rate[0]) == (25, 1.7, 0.5)
    assert p.wheel.moi[1] == pytest.approx(20 * 0.09) and p.wheel.half_width[0] == 0.1
    np.testing.assert_allclose(
        p.brake_command_response[0].max_response * p.brake_command_response[0].wheel_response_multipliers,
        [2000, 1500, 1500, 1500],
    )
    np.testing.assert_allclose(
        p.brake_command_response[1].max_response * p.brake_command_response[1].wheel_response_multipliers,
        [0, 0, 4000, 0],
    )
    np.testing.assert_allclose(
        p.steer_command_response.max_response * p.steer_command_response.wheel_response_multipliers,
        [0.4, 0, 0, 0],
    )
    assert p.ackermann == ()  # only one front wheel steers
    t = p.tire_force
    rest = (300 + 25) * GRAVITY
    assert (t.lat_stiff_x[0], t.rest_load[0]) == (1.5, pytest.approx(rest))
    assert t.lat_stiff_y[0] == pytest.approx(15 * rest)
    assert t.long_stiff[0] == pytest.approx(1800 * GRAVITY) and t.long_stiff[2] == pytest.approx(
        1200 * GRAVITY
    )
    np.testing.assert_allclose(t.friction_vs_slip[0], [[0, 0.9], [0.2, 1.1], [1.0, 0.8]])
    assert v.wheels[0].tire_type == "slick" and v.wheels[2].raycast_filter == "wheels"
    s, f, c = p.suspension, p.suspension_force, p.suspension_compliance
    d = np.array([0, 0.6, -0.8])
    centre = np.array([-0.8 + 0.05, 1.3, 0.3 + 0.01 - 0.8])  # relative to the centre of mass (body at 0.8)
    np.testing.assert_allclose(s.suspension_travel_dir[0], d)
    np.testing.assert_allclose(s.suspension_attachment_pos[0], centre - 0.15 * d)
    assert s.suspension_travel_dist[0] == pytest.approx(0.2)
    assert (f.stiffness[0], f.damping[0], f.sprung_mass[0]) == (40000, 3000, 300)
    assert f.sprung_mass[1] == M / 4  # default 0 -> chassis mass / wheels
    assert c.wheel_camber_angle.points(0) == [(0.0, 0.02), (pytest.approx(0.25), -0.01), (1.0, -0.03)]
    origin = np.array([centre[0], centre[1], 0.0])  # (wheel_x, wheel_y, chassis_z)
    np.testing.assert_allclose(
        c.susp_force_app_point.points(0)[0][1], origin + [0.02, 0, -0.25] - s.suspension_attachment_pos[0]
    )
    np.testing.assert_allclose(
        c.tire_force_app_point.points(0)[0][1], origin + [0, 0.1, -0.2] - s.suspension_attachment_pos[0]
    )


def test_more_wheels_drive_only_the_first_four() -> None:
    v = mapped(wheels=("", "", "", "", "", ""))
    assert v.params.axle_description.axles == ((0, 1), (2, 3), (4, 5))
    np.testing.assert_allclose(v.params.differential.torque_ratios, [0.225, 0.225, 0.275, 0.275, 0, 0])


# ------------------------------------------------------------------------------------- tanks


def test_tank_tracks_brakes_and_drive_model() -> None:
    text = text_of('vehicle_physics_model = "tank" tank_drive_model = "standard"', wheels=("",) * 6)
    v = physics_from_sjson(loads(text, "t.physics")).vehicle()
    d = v.params.differential
    assert d.tracks == ((0, 2, 4), (1, 3, 5)) and d.drive_model == TankDriveModel.STANDARD
    np.testing.assert_allclose(d.torque_ratios, 1 / 6)
    left, right = v.params.brake_command_response
    np.testing.assert_allclose(left.wheel_response_multipliers, [1, 0, 1, 0, 1, 0])
    np.testing.assert_allclose(right.wheel_response_multipliers, [0, 1, 0, 1, 0, 1])
    assert v.params.steer_command_response.max_response == 0.0 and v.tank_drive_model == "standard"
    with pytest.warns(StingrayWarning, match="a tank drives all wheels through its tracks; ignored"):
        physics_from_sjson(
            loads(
                text_of(
                    'vehicle_physics_model = "tank" tank_drive_model = "special" '
                    'differential = { type = "open_4wd" }'
                ),
                "t.physics",
            )
        )
    text = text_of('vehicle_physics_model = "tank"')
    fails(line_col(text, "{\n        name"), text)  # tank_drive_model missing: points at the entry
    text = text_of('vehicle_physics_model = "tank" tank_drive_model = "special"', wheels=("",) * 5)
    err = fails(line_col(text, "[\n        {"), text)
    assert "an even number of wheels" in err.message


# ------------------------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    "vehicle, chassis, wheel0, needle, offset, path, what",
    [
        ("", "", "mass = -5", "mass = -5", 7, "vehicles[0].wheels[0].mass", "greater than 0"),
        (
            "",
            "",
            'suspension = { spring_strength = "stiff" }',
            '"stiff"',
            0,
            "vehicles[0].wheels[0].suspension.spring_strength",
            "expected a number",
        ),
        (
            "",
            "",
            "tire = { friction_versus_slip = [0 1 0.1 1] }",
            "[0 1 0.1",
            0,
            "vehicles[0].wheels[0].tire.friction_versus_slip",
            "expected 3 (slip, friction) pairs",
        ),
        (
            "",
            "",
            "position_offset = [0 0 true]",
            "true]",
            0,
            "vehicles[0].wheels[0].position_offset[2]",
            "expected a number, got true",
        ),
        (
            'vehicle_physics_model = "boat"',
            "",
            "",
            '"boat"',
            0,
            "vehicles[0].vehicle_physics_model",
            "expected one of 'vehicle', 'tank'",
        ),
        (
            'differential = { type = "ls_6wd" }',
            "",
            "",
            '"ls_6wd"',
            0,
            "vehicles[0].differential.type",
            "ls_4wd",
        ),
        (
            "differential = { center_bias = 0.5 }",
            "",
            "",
            "0.5 }",
            0,
            "vehicles[0].differential.center_bias",
            "at least 1",
        ),
        (
            "gears = { ratios = [-4 1 3 2] }",
            "",
            "",
            "[-4 1",
            0,
            "vehicles[0].gears.ratios",
            "neutral and must be 0",
        ),
        ("gears = { ratios = [-4 0 3 3.5] }", "", "", "[-4 0", 0, "vehicles[0].gears.ratios", "decrease"),
        (
            "gears = { use_auto_gears = true auto_gears_enabled = false }",
            "",
            "",
            "true",
            0,
            "vehicles[0].gears.use_auto_gears",
            "contradicts",
        ),
        (
            "ackermann_correction = { accuracy = 1.5 }",
            "",
            "",
            "1.5",
            0,
            "vehicles[0].ackermann_correction.accuracy",
            "at most 1",
        ),
        (
            "input_smoothing = { rise_rates = { brake = 0 } }",
            "",
            "",
            "0 }",
            0,
            "vehicles[0].input_smoothing.rise_rates.brake",
            "greater than 0",
        ),
        (
            "",
            "moment_of_inertia = { raw = [1 0 1] }",
            "",
            "[1 0 1]",
            0,
            "vehicles[0].chassis.moment_of_inertia.raw",
            "moments > 0",
        ),
        (
            "",
            "center_of_mass_offset = [0 0]",
            "",
            "[0 0]",
            0,
            "vehicles[0].chassis.center_of_mass_offset",
            "expected 3 numbers",
        ),
        (
            "",
            "",
            'scene_graph_shape_node = "w9"',
            '"w9"',
            0,
            "vehicles[0].wheels[0].scene_graph_shape_node",
            "has no entry in the top-level 'shapes'",
        ),
    ],
)
def test_invalid_values_fail_with_file_line_and_path(
    vehicle, chassis, wheel0, needle, offset, path, what
) -> None:
    text = text_of(vehicle, chassis, (wheel0, "", "", ""))
    if "w9" in wheel0:
        text = text.replace('scene_graph_shape_node = "w0" ', "", 1)
    err = fails(line_col(text, needle, offset), text)
    assert err.path == path and what in err.message, str(err)


def test_unknown_keys_warn_with_their_position() -> None:
    text = text_of("turbo = true", "", ("tire = { grip = 2 }", "", "", ""))
    with pytest.warns(StingrayWarning) as caught:
        physics_from_sjson(loads(text, "t.physics"))
    msgs = sorted(str(c.message) for c in caught)
    assert msgs == sorted(
        [
            f"{line_col(text, 'true')}: vehicles[0].turbo: unknown property, ignored",
            f"{line_col(text, '2 }')}: vehicles[0].wheels[0].tire.grip: unknown property, ignored",
        ]
    )


def test_missing_required_parts() -> None:
    text = SHAPES + "vehicles = [ { wheels = [] } ]"
    assert "'chassis' is missing" in fails("t.physics:", text).message
    assert "'vehicles' is missing" in fails("t.physics:1:1", SHAPES).message
    text = text_of(wheels=("", "", ""))
    assert "4 to 20 wheels, got 3" in fails(line_col(text, "[\n        {"), text).message


# ------------------------------------------------------------------------------ shipped files


def test_shipped_files_load_cleanly_and_convert_frames() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        car = load_physics_vehicle(EXAMPLE_CAR)
        tank = load_physics(EXAMPLE_TANK).vehicle("m1a1")
    assert car.name == "4wheel" and car.params.nb_wheels == 4 and car.driver_inputs.smoothing is not None
    assert tank.physics_model == "tank" and tank.params.nb_wheels == 10
    assert tank.params.differential.drive_model == TankDriveModel.SPECIAL
    z_up = load_physics_vehicle(EXAMPLE_CAR, frame=DEFAULT_FRAME)
    assert z_up.params.frame == DEFAULT_FRAME
    # Stingray (x right, y fwd, z up) -> Vehicle2 default (x fwd, y left, z up): pitch and roll swap
    np.testing.assert_allclose(z_up.params.rigid_body.moi, car.params.rigid_body.moi[[1, 0, 2]])
    np.testing.assert_allclose(
        z_up.params.suspension.suspension_attachment_pos[0], [1.25, 0.8, -0.11], atol=1e-12
    )


# ------------------------------------------------------------------------------ driver inputs


def test_smoothing_rates_are_exact() -> None:
    p = InputSmoothingParams(np.array([6, 6, 12, 2.5, 2.5]), np.array([10, 10, 12, 4, 4]))
    s = InputSmoothingState()
    s.raw[:] = (1.0, 0.5, 0.0, -1.0)
    for _ in range(10):
        s.smoothed[:] = smooth_channels(raw_channels(s.raw), s.smoothed, p, 0.01)
    np.testing.assert_allclose(s.smoothed, [0.6, 0.5, 0.0, 0.0, 0.25])  # brake stops at its raw value
    s.raw[:] = (0.0, 0.0, 0.0, 1.0)
    for _ in range(5):
        s.smoothed[:] = smooth_channels(raw_channels(s.raw), s.smoothed, p, 0.01)
    np.testing.assert_allclose(s.smoothed, [0.1, 0.0, 0.0, 0.125, 0.05], atol=1e-15)
    assert commands_from_channels(s.smoothed) == pytest.approx((0.1, 0.0, 0.0, 0.075), abs=1e-15)
    np.testing.assert_allclose(raw_channels(np.array([0, 0, 0, -0.8]), max_steer=0.3), [0, 0, 0, 0, 0.3])
    with pytest.raises(ValueError, match="fall_rates.steer_left"):
        InputSmoothingParams(fall_rates=np.array([1, 1, 1, 0, 1])).validate()
    with pytest.raises(ValueError, match="increasing"):
        DriverInputParams(steer_vs_forward_speed=np.array([[5, 1], [1, 1]])).validate()


def test_vehicle_commands_are_raw_inputs_and_the_states_smoothed() -> None:
    car = load_physics_vehicle(EXAMPLE_CAR).make_vehicle()
    car.commands.throttle = 1.0
    car.commands.handbrake = 1.0
    car.commands.steer = -1.0
    car.step(0.05)
    c = car.states.commands
    assert car.commands.throttle == 1.0 and car.commands.steer == -1.0
    assert c.throttle == pytest.approx(0.3) and c.brakes[1] == pytest.approx(0.6)
    assert c.steer == pytest.approx(-0.125)  # 2.5 /s rise; limit 1.0 at rest
    car.commands.release()
    car.step(0.05)
    assert c.throttle == pytest.approx(0.0) and c.steer == pytest.approx(0.0) and c.brakes[1] == 0.0
    with pytest.raises(ValueError, match="steer command"):
        car.commands.steer = 1.5


# --------------------------------------------------------------------------------- driving


def test_physics_car_accelerates_brakes_and_steers() -> None:
    desc = load_physics_vehicle(EXAMPLE_CAR)
    car = desc.make_vehicle()
    dt = 1.0 / 60.0
    z0 = float(car.pos[2])
    for _ in range(30):
        car.step(dt)
    assert abs(float(car.pos[2]) - 0.65) < 0.01, "settles at the mesh's rest height"
    assert abs(car.forward_speed) < 0.05 and z0 > 0.65
    car.commands.throttle = 1.0
    for _ in range(90):
        car.step(dt)
    v_accel = car.forward_speed
    assert v_accel > 4.0 and car.pos[1] > 2.0  # +Y is forward in the unit frame
    car.commands.throttle = 0.3
    car.commands.steer = 0.5
    for _ in range(45):
        car.step(dt)
    assert car.yaw_rate > 0.2  # steer left: counter-clockwise about +Z
    limit = desc.driver_inputs.max_steer(car.forward_speed)  # the steer-vs-speed table caps the command
    assert limit < 0.75 and car.states.commands.steer == pytest.approx(min(0.5, limit), abs=0.01)
    car.commands.steer = 0.0
    car.commands.throttle = 0.0
    car.commands.brake = 1.0
    v_brake = car.forward_speed
    for _ in range(45):
        car.step(dt)
    assert car.forward_speed < v_brake - 3.0 and car.forward_speed >= -0.05


def test_physics_tank_turns_on_the_spot() -> None:
    tank = load_physics_vehicle(EXAMPLE_TANK).make_vehicle()
    tank.commands.throttle = 1.0
    tank.states.tank_drive_transmission.thrusts[:] = (1.0, -1.0)  # left track forward, right backward
    for _ in range(45):
        tank.step(1.0 / 60.0)
    assert tank.yaw_rate < -0.1  # clockwise seen from above: a right turn
    assert abs(tank.forward_speed) < 0.2
    assert math.isfinite(float(tank.pos[2]))
