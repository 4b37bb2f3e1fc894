"""Angles that wrap and quaternions in ``pvdkit diff``: how far apart two samples are.

A wheel's ``rotationAngle`` is kept in (-2π, 2π) by Vehicle2, so two runs a hair apart read
6.2831 and 0.0001 at the frame where only one has wrapped; the wheel's local pose quaternion,
built from the half angle, flips to −q there. Both describe the same wheel: the distance is
taken around the circle and up to the quaternion's sign, in both comparison paths (one series
at a time and the bulk path), in the max errors and in the plots' B curve.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from pvdkit.diff.distance import as_compared, distances
from pvdkit.diff.engine import Comparison, compare_files, open_recording
from pvdkit.diff.result import DiffOptions
from pvdkit.diff.tolerance import Tolerance, ToleranceConfig, ToleranceRule
from pvdkit.streams import OvdFileStream
from pvdkit.types import DataType, PvdError
from pvdkit.writer import OmniPvdWriter

TWO_PI = 2.0 * math.pi
WHEELS = 4
FRAMES = 60
#: Rad per frame: the angle wraps a few times in the recording.
SPIN = 0.9
#: B runs this far (rad) ahead of A.
AHEAD = 2e-4


def phase(k: int) -> float:
    """Wheel ``k``'s angle at frame 0: A's reaches 2π − AHEAD/2 at frame 5 + 3k, where B's
    (AHEAD further on) has wrapped and A's has not."""
    return TWO_PI - AHEAD / 2 - SPIN * (5 + 3 * k)


def wrapped(angle: np.ndarray) -> np.ndarray:
    """Vehicle2's wrap: whole turns removed, truncating towards zero."""
    return angle - np.trunc(angle / TWO_PI) * TWO_PI


def half_angle_quat(angle: float) -> np.ndarray:
    """The wheel's spin about its axle (y) as a quaternion (x, y, z, w)."""
    return np.array([0.0, math.sin(angle / 2), 0.0, math.cos(angle / 2)], np.float32)


def write(path: Path, offset: float, flip_pose: bool = False, move: float = 0.0) -> Path:
    """Wheels whose angle is ``SPIN·frame + offset`` wrapped; a chassis whose PhysX pose is
    (q, p) — written as (−q, p) with ``flip_pose`` and its position moved by ``move``."""
    w = OmniPvdWriter(OvdFileStream(path))
    wheel = w.register_class("WheelRigidBodyState")
    angle = w.register_attribute(wheel, "rotationAngle", DataType.FLOAT32, 1)
    pose_cls = w.register_class("WheelLocalPoseState")
    quat = w.register_attribute(pose_cls, "quatInRbodyFrame", DataType.FLOAT32, 4)
    actor = w.register_class("PxRigidDynamic")
    pose = w.register_attribute(actor, "globalPose", DataType.FLOAT32, 7)
    w.create_object(1, actor, 0x10, "chassis")
    for k in range(WHEELS):
        w.create_object(1, wheel, 0x100 + k, f"wheel{k}")
        w.create_object(1, pose_cls, 0x200 + k, f"pose{k}")
    for f in range(FRAMES):
        w.start_frame(1, 1000 * f)
        q = half_angle_quat(0.01 * f)
        w.set_attribute(1, 0x10, pose, np.concatenate([-q if flip_pose else q,
                                                       np.float32([f + move, 0.5, 2.0])]).astype(np.float32))
        for k in range(WHEELS):
            a = float(wrapped(np.array(SPIN * f + phase(k) + offset)))
            w.set_attribute(1, 0x100 + k, angle, np.float32(a))
            w.set_attribute(1, 0x200 + k, quat, half_angle_quat(a))
        w.stop_frame(1, 1000 * f)
    w.close()
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path, Path]:
    """A; B a hair ahead (some frames wrapped in B only) with its pose written as −q; C with
    the chassis moved 0.25 m."""
    d = tmp_path_factory.mktemp("geometry")
    return (write(d / "a.ovd", 0.0), write(d / "b.ovd", AHEAD, flip_pose=True),
            write(d / "c.ovd", 0.0, move=0.25))


def _results(a: Path, b: Path, options: DiffOptions) -> list[dict]:
    """Every series diff of both comparison paths (they must agree)."""
    out = []
    for bulk in (False, True):
        ra, _ = open_recording(str(a), "A")
        rb, _ = open_recording(str(b), "B")
        res = Comparison(ra, rb, options, str(a), str(b), bulk=bulk).run()
        out.append(res.to_dict(include_equal=True)["series"])
        ra.close()
        rb.close()
    assert out[0] == out[1]
    return out[1]


def _by_attribute(rows: list[dict], attribute: str) -> list[dict]:
    found = [r for r in rows if r["attribute"] == attribute]
    assert found, attribute
    return found


def test_the_pair_really_wraps_apart(runs):
    """The premise: at some frames A and B hold angles a turn apart, quaternions of opposite sign."""
    for k in range(WHEELS):
        a = wrapped(SPIN * np.arange(FRAMES) + phase(k))
        b = wrapped(SPIN * np.arange(FRAMES) + phase(k) + AHEAD)
        f = 5 + 3 * k
        assert abs(a[f] - b[f]) > 6
        qa, qb = half_angle_quat(float(a[f])), half_angle_quat(float(b[f]))
        assert np.abs(qa + qb).max() < 1e-3 < np.abs(qa - qb).max()


def test_wrapped_angles_and_flipped_quaternions_are_near_within_tolerance(runs):
    a, b, _ = runs
    rows = _results(a, b, DiffOptions(ToleranceConfig(Tolerance(atol=1e-3))))
    for r in _by_attribute(rows, "rotationAngle") + _by_attribute(rows, "quatInRbodyFrame"):
        assert r["status"] == "equal", r
        assert r["max_abs_error"] < 3e-4  # the 2e-4 rad offset (and its half in the quaternion)
        assert r["frames_compared"] == FRAMES
    angle = _by_attribute(rows, "rotationAngle")[0]
    assert angle["tolerance"] == {"atol": 1e-3, "rtol": 0.0, "nan_equal": False, "period": TWO_PI}
    assert _by_attribute(rows, "quatInRbodyFrame")[0]["tolerance"]["quaternion"] is True


def test_exact_comparison_still_differs_but_reports_the_real_error(runs):
    """With no tolerance the angles differ (they do, by 2e-4), and the report says by how much
    rather than 6.28; a pose written as −q is the same pose exactly."""
    a, b, _ = runs
    rows = _results(a, b, DiffOptions())
    (angle, *_) = _by_attribute(rows, "rotationAngle")
    assert angle["status"] == "different" and 1e-4 < angle["max_abs_error"] < 3e-4
    (pose,) = _by_attribute(rows, "globalPose")
    assert pose["status"] == "equal" and pose["max_abs_error"] == 0.0


def test_a_pose_is_told_by_its_type_whatever_its_name(tmp_path):
    """Any 7-float attribute is a PxTransform, as `pvdkit series` and the viewer read it (an
    articulation's joint frames, a user's own poses): q and −q compare equal there too; a
    4-float attribute that is no quaternion by name stays plain."""
    def pose_file(path: Path, sign: float) -> Path:
        w = OmniPvdWriter(OvdFileStream(path))
        joint = w.register_class("MyJoint")
        frame = w.register_attribute(joint, "parentFrame", DataType.FLOAT32, 7)
        colour = w.register_attribute(joint, "colour", DataType.FLOAT32, 4)
        w.create_object(1, joint, 0x10, "joint")
        w.start_frame(1, 1)
        q = half_angle_quat(0.3)
        w.set_attribute(1, 0x10, frame, np.concatenate([sign * q, np.float32([1, 2, 3])]).astype(np.float32))
        w.set_attribute(1, 0x10, colour, (sign * q).astype(np.float32))
        w.stop_frame(1, 1)
        w.close()
        return path

    rows = _results(pose_file(tmp_path / "a.ovd", 1.0), pose_file(tmp_path / "b.ovd", -1.0), DiffOptions())
    (frame,) = _by_attribute(rows, "parentFrame")
    (colour,) = _by_attribute(rows, "colour")
    assert frame["status"] == "equal" and frame["tolerance"]["quaternion"] is True
    assert colour["status"] == "different"


def test_the_position_of_a_pose_is_not_flipped(runs):
    """Only a pose's quaternion (its first four elements) is compared up to sign."""
    a, _, c = runs
    (pose,) = _by_attribute(_results(a, c, DiffOptions()), "globalPose")
    assert pose["status"] == "different" and pose["max_abs_error"] == pytest.approx(0.25)
    assert pose["component"] == 4


def test_a_config_rule_can_undo_the_geometry(runs):
    a, b, _ = runs
    cfg = ToleranceConfig(Tolerance(atol=1e-3), (ToleranceRule("*.rotationAngle", period=0.0),
                                                 ToleranceRule("*.globalPose", quaternion=False)))
    rows = _results(a, b, DiffOptions(cfg))
    angles = _by_attribute(rows, "rotationAngle")
    assert any(r["status"] == "different" and r["max_abs_error"] > 6 for r in angles)
    (pose,) = _by_attribute(rows, "globalPose")
    assert pose["status"] == "different" and pose["max_abs_error"] > 0.0099


def test_reports_name_the_geometry(runs):
    from pvdkit.diff.report import to_junit

    a, b, _ = runs
    res = compare_files(str(a), str(b))
    assert "(atol=0 rtol=0 period=6.28319)" in to_junit(res)
    (row, *_) = res.find("WheelRigidBodyState.rotationAngle")
    assert row.tolerance.describe() == "atol=0 rtol=0 period=6.28319"


def test_plots_draw_b_as_compared(runs):
    """The plot's A − B is the difference judged: B's angle moved by whole turns next to A."""
    a, b, _ = runs
    ra, _ = open_recording(str(a), "A")
    rb, _ = open_recording(str(b), "B")
    cmp = Comparison(ra, rb, DiffOptions(), str(a), str(b))
    res = cmp.run()
    (row, *_) = res.find("WheelRigidBodyState.rotationAngle")
    aligned = cmp.aligned(row)
    assert np.nanmax(np.abs(aligned.a - aligned.b)) < 3e-4
    ra.close()
    rb.close()


def test_config_keys_period_and_quaternion(tmp_path):
    cfg = tmp_path / "tol.toml"
    cfg.write_text('[attributes]\n"Spinner.phase" = { period = 360.0, atol = 0.5 }\n'
                   '"Body.orientation" = { quaternion = true }\n')
    tc = ToleranceConfig.load(cfg)
    assert tc.for_attribute("Spinner", "phase") == Tolerance(atol=0.5, period=360.0)
    assert tc.for_attribute("Body", "orientation").quaternion
    assert tc.for_attribute("WheelRigidBodyState", "rotationAngle").period == TWO_PI  # built in
    assert tc.to_dict()["rules"][0] == {"pattern": "Spinner.phase", "atol": 0.5, "period": 360.0}
    for text, message in (('"X.y" = { period = -1.0 }', "period must be a finite number >= 0"),
                          ('"X.y" = { quaternion = 1 }', "quaternion must be true or false"),
                          ('"X.y" = { period = "2pi" }', "period must be a number")):
        cfg.write_text("[attributes]\n" + text + "\n")
        with pytest.raises(PvdError, match=message):
            ToleranceConfig.load(cfg)


def test_distance_around_the_circle_and_up_to_sign():
    a = np.array([[6.2831], [0.1], [-6.2], [np.inf]])
    b = np.array([[0.0001], [0.1 + TWO_PI * 3], [0.08], [np.inf]])
    d, moved = distances(a, b, TWO_PI, False)
    assert d[:3, 0] == pytest.approx([0.0001 - (6.2831 - TWO_PI), 0.0, abs(-6.2 - (0.08 - TWO_PI))], abs=1e-9)
    assert moved[3, 0] == np.inf  # infinities are left for the a == b test
    q = np.array([[0.1, 0.2, 0.3, 0.927, 5.0, 6.0, 7.0]])
    flipped = np.concatenate([-q[:, :4], q[:, 4:]], axis=1)
    assert (as_compared(q, flipped, 0.0, True) == q).all()  # the sign nearer A; position untouched
    assert (as_compared(q, flipped, 0.0, False) == flipped).all()
    narrow = np.array([[1.0, 2.0, 3.0]])  # fewer than four elements: no quaternion to flip
    assert as_compared(narrow, -narrow, 0.0, True) is not None
    assert (as_compared(narrow, -narrow, 0.0, True) == -narrow).all()
