"""Engine-drive states (``PxVehicleDrivetrainStates.h``).

Engine, gearbox, autobox, clutch and throttle responses are single numbers per vehicle and are
held as plain Python scalars (cheap to update every substep, trivially recordable). The
differential and the wheel constraint groups are struct-of-arrays with a leading wheel axis.
``default(n)`` / ``zeros(n)`` build a state at Vehicle2's ``setToDefault`` values and
``set_to_default()`` resets one in place; ``assign(other)`` copies values in place so that
references held elsewhere (a recorder, the vehicle container) stay valid.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Self

import numpy as np

#: ``PX_VEHICLE_NO_GEAR_SWITCH_PENDING``: ``GearboxState.gear_switch_time`` when no shift is under way.
NO_GEAR_SWITCH_PENDING = -1.0
#: ``PX_VEHICLE_GEAR_SWITCH_INITIATED``: a shift was just requested; the gearbox update turns it into 0.
GEAR_SWITCH_INITIATED = -2.0
#: ``PX_VEHICLE_UNSPECIFIED_TIME_SINCE_LAST_SHIFT`` (``PX_MAX_F32``).
UNSPECIFIED_TIME_SINCE_LAST_SHIFT = float(np.finfo(np.float32).max)


class _ScalarState:
    """``copy``/``assign``/``as_dict`` for dataclasses of plain numbers."""

    def copy(self) -> Self:
        """An independent copy."""
        return type(self)(**{f.name: getattr(self, f.name) for f in fields(self)})  # type: ignore[arg-type]

    def assign(self, other: Self) -> None:
        """Copy every field of ``other`` into this state (in place)."""
        for f in fields(self):  # type: ignore[arg-type]
            setattr(self, f.name, getattr(other, f.name))

    def as_dict(self) -> dict[str, object]:
        """Field name -> value, for recording."""
        return {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]


class _WheelArrayState:
    """``copy``/``assign``/``as_dict`` for dataclasses mixing per-wheel arrays and counters."""

    def copy(self) -> Self:
        """An independent deep copy."""
        values = {}
        for f in fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            values[f.name] = v.copy() if isinstance(v, np.ndarray) else v
        return type(self)(**values)

    def assign(self, other: Self) -> None:
        """Copy ``other`` into this state in place (arrays keep their identity)."""
        for f in fields(self):  # type: ignore[arg-type]
            v = getattr(other, f.name)
            if isinstance(v, np.ndarray):
                getattr(self, f.name)[...] = v
            else:
                setattr(self, f.name, v)

    def as_dict(self) -> dict[str, object]:
        """Field name -> value, for recording."""
        return {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]


@dataclass(eq=False)
class ClutchCommandResponseState(_ScalarState):
    """``PxVehicleClutchCommandResponseState``.

    - ``normalised_command_response``: [0, 1]; 1 - clutch pedal (1 = fully engaged).
    - ``command_response``: clutch strength, ``normalised * max_response``, torque * time.
    """

    normalised_command_response: float = 0.0
    command_response: float = 0.0

    @classmethod
    def default(cls) -> ClutchCommandResponseState:
        """Zero response (Vehicle2's ``setToDefault``)."""
        return cls()

    def set_to_default(self) -> None:
        """Zero both responses."""
        self.normalised_command_response = 0.0
        self.command_response = 0.0


@dataclass(eq=False)
class EngineDriveThrottleCommandResponseState(_ScalarState):
    """``PxVehicleEngineDriveThrottleCommandResponseState``: ``command_response`` in [0, 1]."""

    command_response: float = 0.0

    @classmethod
    def default(cls) -> EngineDriveThrottleCommandResponseState:
        """Zero throttle response."""
        return cls()

    def set_to_default(self) -> None:
        """Zero throttle response."""
        self.command_response = 0.0


@dataclass(eq=False)
class EngineState(_ScalarState):
    """``PxVehicleEngineState``: ``rotation_speed`` in radians / time, kept in [idle, max omega]."""

    rotation_speed: float = 0.0

    @classmethod
    def default(cls) -> EngineState:
        """Engine at rest."""
        return cls()

    def set_to_default(self) -> None:
        """Engine at rest."""
        self.rotation_speed = 0.0


@dataclass(eq=False)
class GearboxState(_ScalarState):
    """``PxVehicleGearboxState``.

    - ``current_gear``: index into ``GearboxParams.ratios``; the neutral gear while shifting.
    - ``target_gear``: the gear being shifted to (== current when no shift is under way).
    - ``gear_switch_time``: time since the shift started, or :data:`NO_GEAR_SWITCH_PENDING`
      (-1) / :data:`GEAR_SWITCH_INITIATED` (-2).
    """

    current_gear: int = 0
    target_gear: int = 0
    gear_switch_time: float = NO_GEAR_SWITCH_PENDING

    @classmethod
    def default(cls) -> GearboxState:
        """Gear 0, no shift pending (Vehicle2's ``setToDefault``)."""
        return cls()

    def set_to_default(self) -> None:
        """Gear 0, no shift pending."""
        self.current_gear = 0
        self.target_gear = 0
        self.gear_switch_time = NO_GEAR_SWITCH_PENDING

    @property
    def is_shifting(self) -> bool:
        """True while a shift is under way (the clutch transmits nothing)."""
        return self.current_gear != self.target_gear


@dataclass(eq=False)
class AutoboxState(_ScalarState):
    """``PxVehicleAutoboxState``.

    - ``time_since_last_shift``: time since the autobox last started a shift;
      :data:`UNSPECIFIED_TIME_SINCE_LAST_SHIFT` when unknown (manual gear commands).
    - ``active_autobox_gear_shift``: True while a shift the autobox started is under way (it
      holds the throttle at zero meanwhile). PVD name ``activeAutoboxShift``.
    """

    time_since_last_shift: float = UNSPECIFIED_TIME_SINCE_LAST_SHIFT
    active_autobox_gear_shift: bool = False

    @classmethod
    def default(cls) -> AutoboxState:
        """No shift known, none active."""
        return cls()

    def set_to_default(self) -> None:
        """No shift known, none active."""
        self.time_since_last_shift = UNSPECIFIED_TIME_SINCE_LAST_SHIFT
        self.active_autobox_gear_shift = False


@dataclass(eq=False)
class ClutchSlipState(_ScalarState):
    """``PxVehicleClutchSlipState``: ``clutch_slip`` = G * average wheel speed - engine speed,
    radians / time, measured before the update's solve."""

    clutch_slip: float = 0.0

    @classmethod
    def default(cls) -> ClutchSlipState:
        """No slip."""
        return cls()

    def set_to_default(self) -> None:
        """No slip."""
        self.clutch_slip = 0.0


@dataclass(eq=False)
class DifferentialState(_WheelArrayState):
    """``PxVehicleDifferentialState``: how the clutch torque and speed are shared this update.

    - ``connected_wheels``: (n,) int64; the first ``nb_connected_wheels`` entries are the wheels
      coupled to the clutch, in axle order, the rest -1.
    - ``nb_connected_wheels``: int.
    - ``torque_ratios_all_wheels``: (n,) in [-1, 1]; share of clutch torque per wheel (0 when not
      connected; negative = geared backwards).
    - ``ave_wheel_speed_contribution_all_wheels``: (n,) in [0, 1]; weight of each wheel in the
      average wheel speed at the clutch.
    """

    connected_wheels: np.ndarray
    nb_connected_wheels: int
    torque_ratios_all_wheels: np.ndarray
    ave_wheel_speed_contribution_all_wheels: np.ndarray

    @classmethod
    def default(cls, n: int) -> DifferentialState:
        """No wheel connected, all ratios zero."""
        return cls(np.full(n, -1, dtype=np.int64), 0, np.zeros(n), np.zeros(n))

    zeros = default

    @property
    def nb_wheels(self) -> int:
        """Number of wheels of the vehicle."""
        return int(self.torque_ratios_all_wheels.shape[0])

    def set_to_default(self) -> None:
        """No wheel connected, all ratios zero."""
        self.connected_wheels[:] = -1
        self.nb_connected_wheels = 0
        self.torque_ratios_all_wheels[:] = 0.0
        self.ave_wheel_speed_contribution_all_wheels[:] = 0.0

    def connected(self) -> np.ndarray:
        """The connected wheel ids, shape (nb_connected_wheels,) (a view)."""
        return self.connected_wheels[: self.nb_connected_wheels]


@dataclass(eq=False)
class WheelConstraintGroupState(_WheelArrayState):
    """``PxVehicleWheelConstraintGroupState``: wheels whose rotation speeds are tied together.

    A group fixes each member's speed to ``multiplier * speed of the group's reference wheel``
    (the first wheel added, multiplier 1). Tank tracks and engaged limited-slip differentials
    create groups; the drivetrain solve then has one unknown per group instead of one per wheel.

    - ``group``: (n,) int64, the group of each wheel or -1.
    - ``multiplier``: (n,) float64, dimensionless (meaningful where ``group >= 0``).
    - ``nb_groups``: int.
    """

    group: np.ndarray
    multiplier: np.ndarray
    nb_groups: int

    @classmethod
    def default(cls, n: int) -> WheelConstraintGroupState:
        """No groups."""
        return cls(np.full(n, -1, dtype=np.int64), np.zeros(n), 0)

    zeros = default

    def set_to_default(self) -> None:
        """Remove every group."""
        self.group[:] = -1
        self.multiplier[:] = 0.0
        self.nb_groups = 0

    def add_constraint_group(self, wheel_ids: np.ndarray | tuple[int, ...] | list[int],
                             multipliers: np.ndarray | tuple[float, ...] | list[float]) -> int:
        """Add a group; ``multipliers[j]`` is wheel j's speed relative to ``wheel_ids[0]``.

        Returns the new group's index. Raises ``ValueError`` if a wheel already belongs to a group.
        """
        ids = np.asarray(wheel_ids, dtype=np.int64)
        if np.any(self.group[ids] >= 0):
            taken = [int(w) for w in ids if self.group[w] >= 0]
            raise ValueError(f"WheelConstraintGroupState: wheels {taken} are already in a constraint group")
        g = self.nb_groups
        self.group[ids] = g
        self.multiplier[ids] = np.asarray(multipliers, dtype=np.float64)
        self.nb_groups = g + 1
        return g

    def wheels_in_group(self, g: int) -> np.ndarray:
        """Wheel ids of group ``g`` in wheel-id order."""
        return np.flatnonzero(self.group == g)
