"""Vehicle frames and length scales (``PxVehicleFrame``, ``PxVehicleScale``).

A frame names which world axis is the vehicle's longitudinal (forward), lateral and vertical
(up) direction. Every params type converts between frames and scales with
``transform_and_scale(src_frame, trg_frame, src_scale, trg_scale)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np


class Axis(IntEnum):
    """``PxVehicleAxes``: a signed world axis."""

    POS_X = 0
    NEG_X = 1
    POS_Y = 2
    NEG_Y = 3
    POS_Z = 4
    NEG_Z = 5

    @property
    def vector(self) -> np.ndarray:
        """The unit vector of this axis (a fresh float64 array of shape (3,))."""
        return _BASIS[self].copy()

    @classmethod
    def parse(cls, text: str) -> Axis:
        """Parse ``"+X"``, ``"-z"``, ``"ePosX"``, ``"POS_X"`` or an integer string."""
        key = text.strip().upper().replace("_", "")
        aliases = {
            "+X": 0, "X": 0, "POSX": 0, "EPOSX": 0, "-X": 1, "NEGX": 1, "ENEGX": 1,
            "+Y": 2, "Y": 2, "POSY": 2, "EPOSY": 2, "-Y": 3, "NEGY": 3, "ENEGY": 3,
            "+Z": 4, "Z": 4, "POSZ": 4, "EPOSZ": 4, "-Z": 5, "NEGZ": 5, "ENEGZ": 5,
        }
        if key in aliases:
            return cls(aliases[key])
        if key.isdigit() and int(key) < 6:
            return cls(int(key))
        raise ValueError(f"not an axis: {text!r} (expected one of +X, -X, +Y, -Y, +Z, -Z)")


_BASIS = np.array(
    [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], dtype=np.float64
)


@dataclass(frozen=True)
class Frame:
    """Which world axes are longitudinal, lateral and vertical. Default: +X fwd, +Y lat, +Z up.

    The three axes must form a right-handed orthonormal basis, as ``PxVehicleFrame::isValid``
    demands (PhysX builds a quaternion from the matrix). SAE J670 (X fwd, Y right, Z down) is
    the frame ``lng=+X, lat=-Y, vrt=-Z``: up is -Z and left (Vehicle2's lateral) is -Y; see
    :data:`SAE_J670`.
    """

    lng_axis: Axis = Axis.POS_X
    lat_axis: Axis = Axis.POS_Y
    vrt_axis: Axis = Axis.POS_Z

    def __post_init__(self) -> None:
        for name in ("lng_axis", "lat_axis", "vrt_axis"):
            object.__setattr__(self, name, Axis(getattr(self, name)))
        m = self.matrix
        if abs(np.linalg.det(m) - 1.0) > 1e-9:
            raise ValueError(
                f"Frame(lng={self.lng_axis.name}, lat={self.lat_axis.name}, vrt={self.vrt_axis.name}) "
                "is not a right-handed orthonormal basis"
            )

    @property
    def matrix(self) -> np.ndarray:
        """3x3 matrix whose columns are the lng, lat and vrt axes (``PxVehicleFrame::getFrame``)."""
        return np.column_stack([_BASIS[self.lng_axis], _BASIS[self.lat_axis], _BASIS[self.vrt_axis]])

    @property
    def lng(self) -> np.ndarray:
        """Longitudinal (forward) unit vector in world coordinates."""
        return _BASIS[self.lng_axis].copy()

    @property
    def lat(self) -> np.ndarray:
        """Lateral unit vector in world coordinates."""
        return _BASIS[self.lat_axis].copy()

    @property
    def vrt(self) -> np.ndarray:
        """Vertical (up) unit vector in world coordinates."""
        return _BASIS[self.vrt_axis].copy()

    def compute_translation(self, lng: float, lat: float, vrt: float) -> np.ndarray:
        """World vector with the given lng/lat/vrt components (``PxVehicleComputeTranslation``)."""
        return self.matrix @ np.array([lng, lat, vrt], dtype=np.float64)


@dataclass(frozen=True)
class Scale:
    """Length scale: 1 means lengths are in metres, 100 means centimetres (``PxVehicleScale``)."""

    scale: float = 1.0

    def __post_init__(self) -> None:
        if not self.scale > 0.0:
            raise ValueError(f"Scale.scale must be greater than zero, got {self.scale}")


DEFAULT_FRAME = Frame()
DEFAULT_SCALE = Scale()
#: PhysX snippets' and USD's vehicle frame: Y up, Z forward (so X is lateral).
Y_UP_Z_FORWARD = Frame(Axis.POS_Z, Axis.POS_X, Axis.POS_Y)
#: SAE J670 coordinates (X forward, Y right, Z down): Vehicle2's lateral (left) is -Y, up is -Z.
SAE_J670 = Frame(Axis.POS_X, Axis.NEG_Y, Axis.NEG_Z)


def frame_to_frame_matrix(src: Frame, trg: Frame) -> np.ndarray:
    """Rotation taking a vector expressed in ``src`` to the same vehicle-relative vector in ``trg``.

    ``PxVehicleTransformFrameToFrame``: ``trg.matrix @ src.matrix.T``.
    """
    return trg.matrix @ src.matrix.T


def transform_vector(src: Frame, trg: Frame, src_scale: Scale, trg_scale: Scale, v: np.ndarray) -> np.ndarray:
    """Map a length-valued vector (or an array of them, last axis 3) from one frame and scale to another."""
    v = np.asarray(v, dtype=np.float64)
    r = v @ frame_to_frame_matrix(src, trg).T
    return r * (trg_scale.scale / src_scale.scale)


def transform_direction(src: Frame, trg: Frame, v: np.ndarray) -> np.ndarray:
    """Map a dimensionless direction (or an array of them, last axis 3) between frames."""
    v = np.asarray(v, dtype=np.float64)
    return v @ frame_to_frame_matrix(src, trg).T


def scale_ratio(src_scale: Scale, trg_scale: Scale) -> float:
    """``trg.scale / src.scale``: multiply a length by this to change scale."""
    return trg_scale.scale / src_scale.scale
