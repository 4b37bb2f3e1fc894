"""Velocity constraints on the vehicle body: sticky tires and suspension limits.

In Vehicle2 these are ``PxConstraint`` rows handed to the PhysX scene's solver
(``PxVehiclePhysXConstraintStatesUpdate``, ``vehicleConstraintSolverPrep``):

* **sticky tire** (per wheel and axis, when the tire's sticky state is active): an acceleration
  spring with zero stiffness and damping ``c`` (1/time) driving the contact-point velocity along
  the tire direction to zero. Implicitly integrated over ``dt`` a lone row gives
  ``v' = v / (1 + c dt)``.
* **suspension limit** (per wheel, when ``separation < 0``: the wheel would penetrate the road even
  at full compression): a one-sided row along the road normal (or the suspension direction) that
  removes approaching velocity plus the penetration over one step: ``J v' >= -separation / dt``.

Without a PhysX scene, :func:`solve_vehicle_constraints` solves the same rows for the single
body exactly: the equality (sticky) rows are coupled through the body's mass matrix and solved
as one small linear system; one-sided rows use an active-set loop. Call it between the velocity
and the pose integration of the rigid body update.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import IntEnum

import numpy as np

from simcore.frame import Frame, Scale
from simcore.maths import pose_transform_point, quat_rotate
from simcore.wheel._soa import WheelStateMixin


class SuspensionLimitDirection(IntEnum):
    """``PxVehiclePhysXSuspensionLimitConstraintParams::DirectionSpecifier``."""

    #: Push along the suspension direction (like a bump-stop spring).
    SUSPENSION = 0
    #: Push along the road normal (like a tire contact). Vehicle2 snippets' choice.
    ROAD_GEOMETRY_NORMAL = 1
    #: No suspension limit constraint.
    NONE = 2


@dataclass(frozen=True)
class SuspensionLimitConstraintParams:
    """``PxVehiclePhysXSuspensionLimitConstraintParams`` (one setting for every wheel).

    restitution: [0, 1], dimensionless — fraction of the approach speed returned at the limit.
    direction: see :class:`SuspensionLimitDirection`.
    """

    restitution: float = 0.0
    direction: SuspensionLimitDirection = SuspensionLimitDirection.ROAD_GEOMETRY_NORMAL

    def __post_init__(self) -> None:
        object.__setattr__(self, "direction", SuspensionLimitDirection(self.direction))

    def validate(self) -> None:
        """Raise ``ValueError`` unless restitution is in [0, 1]."""
        if not 0.0 <= self.restitution <= 1.0:
            raise ValueError(
                f"SuspensionLimitConstraintParams.restitution must be in [0, 1], got {self.restitution}"
            )

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> SuspensionLimitConstraintParams:
        """Frame- and scale-free."""
        return replace(self)


@dataclass(eq=False)
class VehicleConstraintState(WheelStateMixin):
    """Per-wheel constraint rows (``PxVehiclePhysXConstraintState``), world frame. Recordable.

    - ``tire_active_status`` (n, 2) bool; ``tire_linears`` (n, 2, 3); ``tire_angulars`` (n, 2, 3);
      ``tire_damping`` (n, 2) ``1 / time`` — sticky tire rows (index 0 longitudinal, 1 lateral).
    - ``susp_active_status`` (n,) bool; ``susp_linear`` (n, 3); ``susp_angular`` (n, 3);
      ``susp_geometric_error`` (n,) ``length`` (the negative separation); ``restitution`` (n,).

    A row's velocity is ``linear . v + angular . w`` (``angular = arm x linear``).
    """

    tire_active_status: np.ndarray
    tire_linears: np.ndarray
    tire_angulars: np.ndarray
    tire_damping: np.ndarray
    susp_active_status: np.ndarray
    susp_linear: np.ndarray
    susp_angular: np.ndarray
    susp_geometric_error: np.ndarray
    restitution: np.ndarray

    @classmethod
    def default(cls, n: int) -> VehicleConstraintState:
        """``n`` wheels, no active row."""
        return cls(np.zeros((n, 2), dtype=bool), np.zeros((n, 2, 3)), np.zeros((n, 2, 3)), np.zeros((n, 2)),
                   np.zeros(n, dtype=bool), np.zeros((n, 3)), np.zeros((n, 3)), np.zeros(n), np.zeros(n))

    zeros = default

    def set_to_default(self) -> None:
        """No active row."""
        for a in self.as_dict().values():
            a[...] = 0

    @property
    def nb_active_rows(self) -> int:
        """Number of active rows."""
        return int(self.tire_active_status.sum() + self.susp_active_status.sum())


def suspension_limit_constraint_update(
    params: SuspensionLimitConstraintParams,
    separation: np.ndarray,
    plane_normal: np.ndarray,
    suspension_travel_dir_world: np.ndarray,
    arm: np.ndarray,
    out: VehicleConstraintState,
) -> VehicleConstraintState:
    """Suspension-limit rows (the suspension part of ``PxVehiclePhysXConstraintStatesUpdate``).

    Active where ``separation < 0`` (n,); ``plane_normal``, ``suspension_travel_dir_world`` and
    ``arm`` (centre of mass to the tire force application point) are (n, 3), world frame.
    """
    active = separation < 0.0
    if params.direction == SuspensionLimitDirection.NONE:
        active[:] = False
        linear = np.zeros_like(plane_normal)
    elif params.direction == SuspensionLimitDirection.ROAD_GEOMETRY_NORMAL:
        linear = plane_normal
    else:
        proj = np.einsum("ij,ij->i", plane_normal, suspension_travel_dir_world)
        active &= proj != 0.0
        linear = suspension_travel_dir_world * np.sign(proj)[:, None]
    out.susp_active_status[:] = active
    out.susp_linear[:] = np.where(active[:, None], linear, 0.0)
    out.susp_angular[:] = np.where(active[:, None], np.cross(arm, linear), 0.0)
    out.susp_geometric_error[:] = np.where(active, separation, 0.0)
    out.restitution[:] = np.where(active, params.restitution, 0.0)
    return out


def force_application_arms(suspension_attachment_pos: np.ndarray, suspension_attachment_quat: np.ndarray,
                           app_point: np.ndarray, body_quat: np.ndarray) -> np.ndarray:
    """World vectors (n, 3) from the centre of mass to the force application points (suspension frame
    offsets ``app_point`` (n, 3) mapped through the suspension attachment, then rotated by the body)."""
    return quat_rotate(body_quat, pose_transform_point(suspension_attachment_pos, suspension_attachment_quat,
                                                       app_point))


def solve_vehicle_constraints(
    mass: float,
    inverse_inertia_world: np.ndarray,
    constraints: VehicleConstraintState,
    dt: float,
    linear_velocity: np.ndarray,
    angular_velocity: np.ndarray,
) -> int:
    """Apply the impulses of all active rows to ``linear_velocity``/``angular_velocity`` (3,) in place.

    Sticky row i (``a_i = damping_i * dt``): ``lambda_i = -(a_i / K_ii) (J_i v')`` — the implicit
    acceleration spring of Vehicle2's sticky tire. Suspension-limit row: ``J_i v' >= -error_i / dt``
    (or ``-restitution * J_i v`` if larger) with ``lambda_i >= 0``. All rows are coupled through
    ``K = J M^-1 J^T`` and solved together; one-sided rows that would pull are dropped (active
    set). Returns the number of rows solved.
    """
    tire = constraints.tire_active_status
    susp = constraints.susp_active_status
    if not (tire.any() or susp.any()):
        return 0
    L = np.concatenate((constraints.tire_linears[tire], constraints.susp_linear[susp]))
    A = np.concatenate((constraints.tire_angulars[tire], constraints.susp_angular[susp]))
    nt = L.shape[0] - int(susp.sum())
    k = L.shape[0]
    minv_a = A @ inverse_inertia_world.T  # row i: I^-1 a_i
    K = (L @ L.T) / mass + A @ minv_a.T
    jv = L @ linear_velocity + A @ angular_velocity
    damping_dt = constraints.tire_damping[tire] * dt
    reg = np.zeros(k)
    use = np.ones(k, dtype=bool)
    diag = np.diag(K)
    positive = damping_dt > 0.0
    reg[:nt][positive] = diag[:nt][positive] / damping_dt[positive]
    use[:nt] = positive
    target = np.zeros(k)
    bias = -constraints.susp_geometric_error[susp] / dt
    bounce = -constraints.restitution[susp] * np.minimum(jv[nt:], 0.0)
    target[nt:] = np.maximum(bias, bounce)
    one_sided = np.zeros(k, dtype=bool)
    one_sided[nt:] = True
    rhs = target - jv
    lam = np.zeros(k)
    for _ in range(k + 1):
        lam[:] = 0.0
        idx = np.flatnonzero(use)
        if idx.size == 0:
            break
        m = K[np.ix_(idx, idx)] + np.diag(reg[idx])
        lam[idx] = np.linalg.lstsq(m, rhs[idx], rcond=None)[0]
        # One-sided rows may only push; those already satisfied without pushing drop out.
        bad = one_sided & use & (lam < 0.0)
        if not np.any(bad):
            break
        use &= ~bad
    linear_velocity += (L.T @ lam) / mass
    angular_velocity += minv_a.T @ lam
    return int(np.count_nonzero(use))
