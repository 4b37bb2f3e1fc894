"""Batched wheel component (rotation angle, wheel local pose) against each vehicle's WheelComponent."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from simcore.vehicle import Vehicle
from simcore.wheel.batch import WheelBatchComponent
from tests.simcore.test_batch_direct_drive import DT, FRAMES, assert_member_equal, make_fleet, run_manoeuvre

WHEEL_FIELDS = [("wheel_rigid_body_1d", "rotation_speed"),
                ("wheel_rigid_body_1d", "corrected_rotation_speed"),
                ("wheel_rigid_body_1d", "rotation_angle"), ("wheel_local_pose", "pos"),
                ("wheel_local_pose", "quat")]


@pytest.fixture(scope="module", params=list(FRAMES), ids=list(FRAMES))
def manoeuvred(request: pytest.FixtureRequest) -> list[Vehicle]:
    return run_manoeuvre(FRAMES[request.param])


@pytest.mark.parametrize("threshold", [None, 0.0, 30.0], ids=["default", "no_blend", "blend_all"])
def test_wheel(manoeuvred: list[Vehicle], threshold: float | None) -> None:
    """One update, with Vehicle2's threshold, none (no blending) and a high one (blend every free wheel)."""
    fleet = make_fleet(manoeuvred)
    ctx = fleet.context
    if threshold is not None:
        ctx = dataclasses.replace(ctx, threshold_forward_speed_for_wheel_angle_integration=threshold)
    batch = WheelBatchComponent(fleet)
    for _ in range(3):  # successive updates also exercise the angle wrap and the kept references
        assert batch.update(DT, ctx) is True
        for v in manoeuvred:
            assert v.reference_sequence().get("wheel").update(DT, ctx)
        assert_member_equal(fleet, manoeuvred, WHEEL_FIELDS)
    s = fleet.states
    corrected = s.wheel_rigid_body_1d.corrected_rotation_speed
    blended = corrected != s.wheel_rigid_body_1d.rotation_speed
    if threshold == 0.0:
        assert not np.any(blended)
    if threshold == 30.0:
        assert np.any(blended) and not np.all(blended)
    assert np.any(s.steer_command_response.response != 0.0)


def test_repack_after_params_change(manoeuvred: list[Vehicle]) -> None:
    fleet = make_fleet(manoeuvred)
    batch = WheelBatchComponent(fleet)
    p = manoeuvred[2].params
    susp = p.suspension
    new = p.replace(
        wheel=dataclasses.replace(p.wheel, radius=p.wheel.radius * 1.1),
        suspension=dataclasses.replace(susp, suspension_travel_dist=susp.suspension_travel_dist * 1.2,
                                       wheel_attachment_pos=susp.wheel_attachment_pos + 0.01),
    )
    manoeuvred[2].params = new
    fleet.params = tuple(v.params for v in manoeuvred)
    batch.repack()
    ctx = dataclasses.replace(fleet.context, threshold_forward_speed_for_wheel_angle_integration=30.0)
    batch.update(DT, ctx)
    for v in manoeuvred:
        v.reference_sequence().get("wheel").update(DT, ctx)
    assert_member_equal(fleet, manoeuvred, WHEEL_FIELDS)
