"""SJSON parser: the seed's examples (Stingray's vehicle documentation) and broken files."""

from __future__ import annotations

import os
import warnings

import pytest

from simcore.stingray.sjson import SjsonError, SjsonWarning, load, loads, plain

# Verbatim from Stingray's vehicle physics documentation (seed 001).
SEED_VEHICLES = '''vehicles = [
    {
        enabled = true
        name = "m1a1"
        actor_name = "tank_actor"
        vehicle_physics_model = "tank"
        tank_drive_model = "special"
'''
SEED_CHASSIS = '''    chassis = {
        mass = 1500.0
        scene_graph_shape_node = "c_body"
        scene_graph_render_nodes = [
            {
                node = "j_body"
                transform_type = "full"
            }
        ]

        center_of_mass_offset = [
            0
            0.5
            -0.5
        ]

        moment_of_inertia = {
            raw = [
                1000
                1000
                1000
            ]
            cuboid = [
                mass_factor = 0.08
                scale = [
                    1.0
                    1.0
                    0.5
                ]
            ]
            mass_factor = 0.055
            responsiveness = 0.9
        }
    }
'''
SEED_DIFFERENTIAL = '''    differential = {
        type = "ls_4wd"
        front_rear_split = 0.45
        front_left_right_split = 0.5
        rear_left_right_split = 0.5
        center_bias = 1.3
        front_bias = 1.3
        rear_bias = 1.3
    }
'''
SEED_GEARS = '''    gears = {
        use_auto_gears = true
        final_ratio = 4.0
        switch_time = 0.5
        ratios = [
            -4
            0
            4.2
            2.0
            1.1
            1.0
        ]
    }
'''
SEED_CLUTCH = '''    clutch  = {
        strength = 10.0
    }
'''
SEED_ACKERMANN = '''    ackermann_correction = {
        accuracy = 1.0
    }
'''
SEED_STEER = '''    steer_vs_forward_speed = [
        0.0 1.0
        5.0 0.75
        30.0 0.22
        120.0 0.19
    ]
'''
SEED_SMOOTHING = '''    input_smoothing = {
        rise_rates = {
            acceleration = 6.0
            brake = 6.0
            handbrake = 12.0
            steer_left = 2.5
            steer_right = 2.5
        }
        fall_rates = {
            acceleration = 10.0
            brake = 10.0
            handbrake = 12.0
            steer_left = 4.0
            steer_right = 4.0
        }
    }
'''
SEED_WHEELS = '''    wheels = [
        {
            wheel 1 properties
        }
        {
            wheel 2 properties
        }
        {
            wheel 3 properties
        }
        {
            wheel 4 properties
        }
    ]
'''
SEED_FRICTION = '''    friction_versus_slip = [
                        0.0 1.0
                        0.5 1.0
                        1.0 1.0
                    ]
'''
SEED_TRAVEL = '''    travel_direction = [
                        0
                        0
                        -1
'''
SEED_FORCE_OFFSET = '''    force_application_offset = [
                        0
                        0
                        -0.3
'''


def error_of(text: str) -> SjsonError:
    with pytest.raises(SjsonError) as info:
        loads(text, "seed.physics")
    return info.value


# ------------------------------------------------------------------------------ seed examples


def test_seed_chassis_example_with_its_cuboid_written_as_an_array() -> None:
    with pytest.warns(SjsonWarning, match=r"seed\.physics:23:22: chassis\.moment_of_inertia\.cuboid: an "
                                          r"array written with key = value pairs is read as an object"):
        doc = loads(SEED_CHASSIS, "seed.physics")
    assert plain(doc) == {"chassis": {
        "mass": 1500.0, "scene_graph_shape_node": "c_body",
        "scene_graph_render_nodes": [{"node": "j_body", "transform_type": "full"}],
        "center_of_mass_offset": [0, 0.5, -0.5],
        "moment_of_inertia": {"raw": [1000, 1000, 1000],
                              "cuboid": {"mass_factor": 0.08, "scale": [1.0, 1.0, 0.5]},
                              "mass_factor": 0.055, "responsiveness": 0.9},
    }}
    moi = doc["chassis"]["moment_of_inertia"]
    assert isinstance(moi["raw"][0], int) and isinstance(moi["mass_factor"], float)
    loc = moi.location("responsiveness")
    assert (loc.line, loc.column) == (32, 30)
    assert (moi["raw"].location(2).line, moi["raw"].location(2).column) == (21, 17)


@pytest.mark.parametrize("text, expected", [
    (SEED_DIFFERENTIAL, {"differential": {"type": "ls_4wd", "front_rear_split": 0.45,
                                          "front_left_right_split": 0.5, "rear_left_right_split": 0.5,
                                          "center_bias": 1.3, "front_bias": 1.3,
                                          "rear_bias": 1.3}}),
    (SEED_GEARS, {"gears": {"use_auto_gears": True, "final_ratio": 4.0, "switch_time": 0.5,
                            "ratios": [-4, 0, 4.2, 2.0, 1.1, 1.0]}}),
    (SEED_CLUTCH, {"clutch": {"strength": 10.0}}),
    (SEED_ACKERMANN, {"ackermann_correction": {"accuracy": 1.0}}),
    (SEED_STEER, {"steer_vs_forward_speed": [0.0, 1.0, 5.0, 0.75, 30.0, 0.22, 120.0, 0.19]}),
    (SEED_FRICTION, {"friction_versus_slip": [0.0, 1.0, 0.5, 1.0, 1.0, 1.0]}),
    (SEED_SMOOTHING, {"input_smoothing": {
        "rise_rates": {"acceleration": 6.0, "brake": 6.0, "handbrake": 12.0, "steer_left": 2.5,
                       "steer_right": 2.5},
        "fall_rates": {"acceleration": 10.0, "brake": 10.0, "handbrake": 12.0, "steer_left": 4.0,
                       "steer_right": 4.0}}}),
])
def test_seed_examples_parse(text: str, expected: dict) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert plain(loads(text)) == expected


@pytest.mark.parametrize("text, line, column, path, what", [
    (SEED_VEHICLES, 2, 5, "vehicles[0]", "unterminated object"),  # the page cuts the example short
    (SEED_WHEELS, 3, 19, "wheels[0].wheel", "expected '=' after the key 'wheel', found '1'"),  # placeholder
    (SEED_TRAVEL, 1, 24, "travel_direction", "unterminated array"),
    (SEED_FORCE_OFFSET, 1, 32, "force_application_offset", "unterminated array"),
])
def test_seed_fragments_that_are_not_sjson(text: str, line: int, column: int, path: str, what: str) -> None:
    err = error_of(text)
    assert (err.location.line, err.location.column, err.path) == (line, column, path)
    assert what in err.message
    assert str(err).startswith(f"seed.physics:{line}:{column}: {path}: ")


# -------------------------------------------------------------------------------- the syntax


def test_syntax_features() -> None:
    doc = loads('''{   // optional outer braces
        "quoted key": "tab\\tquote\\" \\u00e9"   /* block
        comment */ a: 1, b = -2.5e-3,, c = [1, 2 3 ,] d = { x = null y = false z = true }
        raw = """no \\escapes here"""  e = [] f = {} g = +4 h = .5
    }''')
    assert plain(doc) == {"quoted key": 'tab\tquote" é', "a": 1, "b": -0.0025, "c": [1, 2, 3],
                          "d": {"x": None, "y": False, "z": True}, "raw": "no \\escapes here", "e": [],
                          "f": {}, "g": 4, "h": 0.5}


@pytest.mark.parametrize("text, line, column, path, what", [
    ("a = 1\nb = ", 2, 5, "b", "expected a value, found the end of the file"),
    ("a = { b = 1\n c = 2", 1, 5, "a", "unterminated object"),
    ("x = 1\n/* open", 2, 1, "", "unterminated /* comment"),
    ("name = \"m1a1\nnext = 1", 1, 8, "name", "unterminated string (a line break inside quotes)"),
    ("s = \"bad \\q\"", 1, 10, "s", "invalid escape '\\q'"),
    ("mass = 1500\n  mass = 1600", 2, 3, "mass", "duplicate key 'mass' (first at line 1, column 1)"),
    ("type = ls_4wd", 1, 8, "type", "bare word 'ls_4wd' (strings need quotes)"),
    ("v = [1 2 x = 3]", 1, 10, "v", "a key = value pair inside an array of values"),
    ("v = [x = 3 4]", 1, 12, "v", "a plain value inside a bracket of key = value pairs"),
    ("ratio = 1.2.3", 1, 9, "ratio", "malformed number '1.2.3'"),
    ("a = { b = [ { c = 1 } } ]", 1, 23, "a.b[1]", "expected a value, found '}'"),
    ("{ a = 1 } b = 2", 1, 11, "", "unexpected 'b' after the top-level object"),
    ("= 3", 1, 1, "", "expected a key"),
    ("a = 1 @", 1, 7, "", "expected a key (a name or a quoted string), found '@'"),
])
def test_broken_files_report_line_column_and_path(text: str, line: int, column: int, path: str,
                                                  what: str) -> None:
    err = error_of(text)
    assert (err.location.line, err.location.column) == (line, column), str(err)
    assert err.path == path and what in err.message, str(err)


def test_deep_nesting_is_refused_not_recursed() -> None:
    err = error_of("a = " + "[" * 500 + "]" * 500)
    assert "nesting deeper than" in err.message


def test_load_names_the_file(tmp_path) -> None:
    f = tmp_path / "broken.physics"
    f.write_text("vehicles = [\n  { mass = }\n]\n", encoding="utf-8")
    with pytest.raises(SjsonError, match=r"broken\.physics:2:12: vehicles\[0\]\.mass: expected a value"):
        load(f)
    with pytest.raises(SjsonError, match=r"missing\.physics:1:1: no such file"):
        load(tmp_path / "missing.physics")
    f.write_bytes(b"a = \"\xff\"")
    with pytest.raises(SjsonError, match="not UTF-8"):
        load(f)
    # a FIFO blocked the reader and /dev/zero filled the memory (fuzzing finds): refused unread
    fifo = tmp_path / "fifo.physics"
    os.mkfifo(fifo)
    with pytest.raises(SjsonError, match=r"fifo\.physics:1:1: is not a regular file \(a FIFO or pipe\)"):
        load(fifo)
    with pytest.raises(SjsonError, match=r"is not a regular file \(a character device\)"):
        load("/dev/zero")
