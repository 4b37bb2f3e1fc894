"""Wheel subsystem (Vehicle2 ``wheel/``), one module per role as in Vehicle2's headers:

- :mod:`simcore.wheel.params`: :class:`WheelParams`
- :mod:`simcore.wheel.states`: :class:`WheelActuationState`, :class:`WheelRigidBody1dState`,
  :class:`WheelLocalPoseState`
- :mod:`simcore.wheel.helpers`: wheel pose chain (``compute_rotation``, ``compute_wheel_local_pose``,
  ``compute_wheel_pose``, ``compute_wheel_orientation``, ``is_wheel_on_ground``)
- :mod:`simcore.wheel.functions`: ``wheel_rotation_angle_update``, ``wheel_local_pose_update``,
  ``wheel_rotation_speed_damped_update``, ``brake_torque_opposing_spin``, ``apply_brake_lock``
- :mod:`simcore.wheel.components`: ``WheelComponent``

The package re-exports params and states only, so that the subsystems (which depend on each
other's functions) can import each other's modules without import cycles.
"""

from simcore.wheel.params import WheelParams
from simcore.wheel.states import WheelActuationState, WheelLocalPoseState, WheelRigidBody1dState

__all__ = ["WheelActuationState", "WheelLocalPoseState", "WheelParams", "WheelRigidBody1dState"]
