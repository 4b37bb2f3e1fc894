"""Axle description (``PxVehicleAxleDescription``): which wheel ids sit on which axle."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from simcore.limits import MAX_NB_AXLES, MAX_NB_WHEELS


@dataclass(frozen=True)
class AxleDescription:
    """The vehicle's axles, each a tuple of wheel ids; wheel ids are 0..n_wheels-1.

    Example: ``AxleDescription(((0, 1), (2, 3)))`` is a car with front wheels 0, 1 and rear 2, 3.
    """

    axles: tuple[tuple[int, ...], ...]

    def __init__(self, axles: Sequence[Sequence[int]]):
        axles_t = tuple(tuple(int(w) for w in axle) for axle in axles)
        object.__setattr__(self, "axles", axles_t)
        self.validate()

    def validate(self) -> None:
        """Raise ``ValueError`` unless the description is one Vehicle2 would accept."""
        if not self.axles:
            raise ValueError("AxleDescription needs at least one axle")
        if any(len(a) == 0 for a in self.axles):
            raise ValueError("AxleDescription: every axle needs at least one wheel")
        wheels = [w for axle in self.axles for w in axle]
        if len(wheels) > MAX_NB_WHEELS:
            raise ValueError(
                f"AxleDescription has {len(wheels)} wheels; Vehicle2 supports at most {MAX_NB_WHEELS}"
            )
        if len(self.axles) > MAX_NB_AXLES:
            raise ValueError(f"AxleDescription has {len(self.axles)} axles; at most {MAX_NB_AXLES}")
        if sorted(wheels) != list(range(len(wheels))):
            raise ValueError(
                f"AxleDescription wheel ids must be 0..{len(wheels) - 1}, each once; got {wheels}"
            )

    @property
    def nb_wheels(self) -> int:
        """Number of wheels on the vehicle."""
        return sum(len(a) for a in self.axles)

    @property
    def nb_axles(self) -> int:
        """Number of axles."""
        return len(self.axles)

    @property
    def wheel_ids_in_axle_order(self) -> tuple[int, ...]:
        """All wheel ids, axle by axle (``wheelIdsInAxleOrder``)."""
        return tuple(w for axle in self.axles for w in axle)

    def axle_of(self, wheel_id: int) -> int:
        """Index of the axle holding ``wheel_id``."""
        for i, axle in enumerate(self.axles):
            if wheel_id in axle:
                return i
        raise KeyError(f"wheel {wheel_id} is on no axle")
