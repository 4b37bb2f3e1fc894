"""Tire parameters (``PxVehicleTireForceParams``), all wheels as a struct of arrays."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from simcore.frame import Frame, Scale, scale_ratio
from simcore.wheel._soa import check_same_wheel_count, freeze, per_wheel_records, require, wheel_array

_FIELDS = (
    "lat_stiff_x",
    "lat_stiff_y",
    "long_stiff",
    "camber_stiff",
    "friction_vs_slip",
    "rest_load",
    "load_filter",
)
_TAILS = {
    "lat_stiff_x": (),
    "lat_stiff_y": (),
    "long_stiff": (),
    "camber_stiff": (),
    "friction_vs_slip": (3, 2),
    "rest_load": (),
    "load_filter": (2, 2),
}


@dataclass(frozen=True, eq=False)
class TireForceParams:
    """Stiffnesses, friction graph, rest load and load filter of each tire (``PxVehicleTireForceParams``).

    - ``lat_stiff_x`` (n,) [0, inf): the normalised load (load / rest_load) from which the lateral
      stiffness stops growing with load; 0 makes it load-independent.
    - ``lat_stiff_y`` (n,) (0, inf) ``mass * length / time^2`` (force per unit lateral slip): the
      maximum lateral stiffness.
    - ``long_stiff`` (n,) (0, inf) ``mass * length / time^2``: force per unit longitudinal slip.
    - ``camber_stiff`` (n,) [0, inf) ``mass * length / time^2``: force per radian of camber.
    - ``friction_vs_slip`` (n, 3, 2): three (|longitudinal slip|, friction multiplier) points: at zero
      slip, at peak friction, and the end of the graph (constant beyond). Multiplies road friction.
    - ``rest_load`` (n,) (0, inf) ``mass * length / time^2``: tire load at rest on flat ground
      (about ``(sprung_mass + wheel_mass) g``); normalises the load.
    - ``load_filter`` (n, 2, 2): two (normalised load, filtered normalised load) points; loads are
      clamped to and interpolated between them, which smooths time-step-dependent load spikes.
      ``load_filter[:, 0, 0]`` must be 0.

    Forces scale with length, so ``transform_and_scale`` rescales ``lat_stiff_y``, ``long_stiff``,
    ``camber_stiff`` and ``rest_load``; the dimensionless graphs stay.
    """

    lat_stiff_x: np.ndarray
    lat_stiff_y: np.ndarray
    long_stiff: np.ndarray
    camber_stiff: np.ndarray
    friction_vs_slip: np.ndarray
    rest_load: np.ndarray
    load_filter: np.ndarray

    def __post_init__(self) -> None:
        arrays = {f: wheel_array("TireForceParams", f, getattr(self, f), _TAILS[f]) for f in _FIELDS}
        check_same_wheel_count("TireForceParams", arrays)
        for f, a in arrays.items():
            object.__setattr__(self, f, freeze(a))

    @classmethod
    def from_wheels(cls, wheels: Sequence[Mapping[str, Any] | Any]) -> TireForceParams:
        """Build from one dict (or object) per wheel with the field names as keys."""
        return cls(**per_wheel_records("TireForceParams", wheels, _FIELDS))

    @property
    def nb_wheels(self) -> int:
        """Number of wheels."""
        return int(self.rest_load.shape[0])

    def validate(self) -> None:
        """Raise ``ValueError`` naming the field and wheel of the first value Vehicle2 would reject."""
        c = "TireForceParams"
        for f in _FIELDS:
            a = getattr(self, f)
            require(c, f, np.isfinite(a), "must be finite", a)
        require(
            c,
            "lat_stiff_x",
            self.lat_stiff_x >= 0.0,
            "must be greater than or equal to zero",
            self.lat_stiff_x,
        )
        require(c, "lat_stiff_y", self.lat_stiff_y > 0.0, "must be greater than zero", self.lat_stiff_y)
        require(c, "long_stiff", self.long_stiff > 0.0, "must be greater than zero", self.long_stiff)
        require(
            c,
            "camber_stiff",
            self.camber_stiff >= 0.0,
            "must be greater than or equal to zero",
            self.camber_stiff,
        )
        require(c, "rest_load", self.rest_load > 0.0, "must be greater than zero", self.rest_load)
        lf = self.load_filter
        require(
            c,
            "load_filter",
            lf[:, 1, 0] >= lf[:, 0, 0],
            "must have load_filter[1][0] >= load_filter[0][0]",
            lf,
        )
        require(c, "load_filter", lf[:, 1, 1] > 0.0, "must have load_filter[1][1] > 0", lf)
        require(c, "load_filter", lf[:, 0, 0] == 0.0, "must have load_filter[0][0] == 0", lf)
        fvs = self.friction_vs_slip
        require(
            c,
            "friction_vs_slip",
            np.all(fvs >= 0.0, axis=(1, 2)),
            "must hold non-negative (slip, friction) points",
            fvs,
        )
        require(
            c,
            "friction_vs_slip",
            (fvs[:, 1, 0] > fvs[:, 0, 0]) & (fvs[:, 2, 0] > fvs[:, 1, 0]),
            "slips must be strictly increasing (x0 < x1 < x2)",
            fvs,
        )

    def transform_and_scale(
        self, src_frame: Frame, trg_frame: Frame, src_scale: Scale, trg_scale: Scale
    ) -> TireForceParams:
        """Forces and force-per-slip stiffnesses x s; dimensionless fields unchanged; frame-free."""
        s = scale_ratio(src_scale, trg_scale)
        return TireForceParams(
            lat_stiff_x=self.lat_stiff_x.copy(),
            lat_stiff_y=self.lat_stiff_y * s,
            long_stiff=self.long_stiff * s,
            camber_stiff=self.camber_stiff * s,
            friction_vs_slip=self.friction_vs_slip.copy(),
            rest_load=self.rest_load * s,
            load_filter=self.load_filter.copy(),
        )
