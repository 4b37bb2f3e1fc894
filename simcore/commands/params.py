"""Command response params (``PxVehicleCommandResponseParams``, ``PxVehicleCommandNonLinearResponseParams``).

A driver command (throttle, brake, steer: a number in [0, 1] or [-1, 1]) becomes a per-wheel
response (a torque or an angle) as ``normalised(command, speed) * max_response *
wheel_response_multipliers[wheel]``. ``normalised`` is the command itself unless a nonlinear
response table is given, in which case it is interpolated from the table in command value and
longitudinal speed — how the reference car's throttle fades to zero at 60 m/s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Self

import numpy as np

from simcore.axle import AxleDescription
from simcore.frame import Frame, Scale
from simcore.maths import frozen_array

#: ``PxVehicleCommandNonLinearResponseParams::eMAX_NB_COMMAND_VALUES``
MAX_NB_COMMAND_VALUES = 8
#: ``PxVehicleCommandValueResponseTable::eMAX_NB_SPEED_RESPONSES`` (all tables together)
MAX_NB_SPEED_RESPONSES = 64


@dataclass(frozen=True, eq=False)
class CommandValueResponseTable:
    """Normalised response vs longitudinal speed for one command value.

    command_value: in [0, 1]. speeds: (k,) strictly increasing, length/time. responses: (k,)
    in [0, 1], dimensionless.
    """

    command_value: float
    speeds: np.ndarray
    responses: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "speeds", frozen_array(self.speeds, (None,), "speeds"))
        object.__setattr__(self, "responses", frozen_array(self.responses, (None,), "responses"))


@dataclass(frozen=True, eq=False)
class CommandNonLinearResponseParams:
    """``PxVehicleCommandNonLinearResponseParams``: response tables for increasing command values.

    Empty (the default) means a linear response independent of speed.
    """

    tables: tuple[CommandValueResponseTable, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "tables", tuple(self.tables))

    @classmethod
    def from_pairs(
        cls, entries: Sequence[tuple[float, Sequence[Sequence[float]]]]
    ) -> CommandNonLinearResponseParams:
        """Build from ``[(command_value, [[speed, response], ...]), ...]``, the JSON layout."""
        tables = []
        for value, curve in entries:
            arr = np.asarray(curve, dtype=np.float64).reshape(-1, 2)
            tables.append(CommandValueResponseTable(float(value), arr[:, 0], arr[:, 1]))
        return cls(tuple(tables))

    @property
    def is_linear(self) -> bool:
        """True when there is no table (plain linear response)."""
        return not self.tables

    def validate(self, owner: str = "CommandNonLinearResponseParams") -> None:
        """Raise ``ValueError`` unless the tables are ones Vehicle2's ``addResponse`` would accept."""
        if len(self.tables) > MAX_NB_COMMAND_VALUES:
            raise ValueError(f"{owner}.nonlinear_response: at most {MAX_NB_COMMAND_VALUES} command values, "
                             f"got {len(self.tables)}")
        total = sum(len(t.speeds) for t in self.tables)
        if total > MAX_NB_SPEED_RESPONSES:
            raise ValueError(f"{owner}.nonlinear_response: at most {MAX_NB_SPEED_RESPONSES} speed responses "
                             f"in all, got {total}")
        prev = -np.inf
        for i, t in enumerate(self.tables):
            where = f"{owner}.nonlinear_response.tables[{i}]"
            if not 0.0 <= t.command_value <= 1.0:
                raise ValueError(f"{where}.command_value must be in [0, 1], got {t.command_value}")
            if not t.command_value > prev:
                raise ValueError(f"{where}.command_value must be greater than the previous one ({prev})")
            prev = t.command_value
            if len(t.speeds) == 0 or len(t.speeds) != len(t.responses):
                raise ValueError(f"{where}: speeds and responses need the same non-zero length")
            if np.any(np.diff(t.speeds) <= 0.0):
                raise ValueError(f"{where}.speeds must be strictly increasing, got {t.speeds.tolist()}")
            if np.any((t.responses < 0.0) | (t.responses > 1.0)):
                raise ValueError(f"{where}.responses must be in [0, 1], got {t.responses.tolist()}")

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> CommandNonLinearResponseParams:
        """Speeds are lengths per time: they scale with the length scale."""
        r = trg_scale.scale / src_scale.scale
        if r == 1.0:
            return self
        return CommandNonLinearResponseParams(
            tuple(CommandValueResponseTable(t.command_value, t.speeds * r, t.responses) for t in self.tables)
        )


def _default_multipliers() -> np.ndarray:
    return frozen_array(np.zeros(0), (None,), "wheel_response_multipliers")


@dataclass(frozen=True, eq=False)
class CommandResponseParams:
    """``PxVehicleCommandResponseParams``: maximum response and a multiplier per wheel.

    max_response: the response at command 1 and multiplier 1 (unit set by the subclass).
    wheel_response_multipliers: (n_wheels,), dimensionless, indexed by wheel id.
    nonlinear_response: optional table of normalised response vs command and speed.
    """

    max_response: float = 0.0
    wheel_response_multipliers: np.ndarray = field(default_factory=_default_multipliers)
    nonlinear_response: CommandNonLinearResponseParams = field(default_factory=CommandNonLinearResponseParams)

    #: How many powers of the length scale the response carries (2 for a torque, 0 for an angle).
    _LENGTH_POWER = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_response", float(self.max_response))
        object.__setattr__(
            self,
            "wheel_response_multipliers",
            frozen_array(
                self.wheel_response_multipliers, (None,), f"{type(self).__name__}.wheel_response_multipliers"
            ),
        )

    @property
    def nb_wheels(self) -> int:
        """Number of wheels the multipliers cover."""
        return int(self.wheel_response_multipliers.shape[0])

    def validate(self, axle_description: AxleDescription | None = None) -> None:
        """Raise ``ValueError`` naming the field (and wheel) that Vehicle2 would reject."""
        name = type(self).__name__
        if not np.isfinite(self.max_response):
            raise ValueError(f"{name}.max_response must be finite, got {self.max_response}")
        m = self.wheel_response_multipliers
        if axle_description is not None and m.shape[0] < axle_description.nb_wheels:
            raise ValueError(
                f"{name}.wheel_response_multipliers has {m.shape[0]} entries; the axle description has "
                f"{axle_description.nb_wheels} wheels"
            )
        bad = np.flatnonzero(~np.isfinite(m))
        if bad.size:
            raise ValueError(f"{name}.wheel_response_multipliers[{bad[0]}] must be finite")
        self.nonlinear_response.validate(name)

    def transform_and_scale(
        self, src_frame: Frame, trg_frame: Frame, src_scale: Scale, trg_scale: Scale
    ) -> Self:
        """The same params in another frame and length scale (the response scales with its unit)."""
        r = trg_scale.scale / src_scale.scale
        return type(self)(
            max_response=self.max_response * r ** self._LENGTH_POWER,
            wheel_response_multipliers=self.wheel_response_multipliers,
            nonlinear_response=self.nonlinear_response.transform_and_scale(
                src_frame, trg_frame, src_scale, trg_scale
            ),
        )
