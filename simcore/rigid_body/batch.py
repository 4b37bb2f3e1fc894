"""Batched compiled components of the rigid body part of the step, over (vehicle, wheel).

Each component runs one numba kernel over every vehicle of a fleet (vehicles sharing one topology,
differing in any param value) and writes the fleet's state arrays in place:

* :class:`RigidBodyBeginBatchComponent` - ``rigid_body_begin`` (keeps the start-of-step velocities);
* :class:`VehicleConstraintBatchComponent` - ``constraints`` (sticky-tire and suspension-limit rows,
  Vehicle2's ``PxVehiclePhysXConstraintComponent``);
* :class:`RigidBodyBatchComponent` - ``rigid_body`` (loads -> velocities -> constraint solve -> pose).

The kernels mirror the per-vehicle components of :mod:`simcore.rigid_body.components` operation by
operation; the plain functions of :mod:`simcore.rigid_body.constraints` and
:mod:`simcore.rigid_body.functions` remain the reference they are tested against. The load
integration and the pose update call the very kernels the reference uses, so they are bitwise
equal. The constraint solve cannot be: the reference builds its small matrices with numpy's BLAS
matmul and solves with LAPACK's ``lstsq``; :func:`_solve_rows` solves the same system (minimum-norm
least squares, the same singular-value cut-off) with a Cholesky factorisation, or a Jacobi
eigen-decomposition when the system may be rank deficient (four coplanar suspension-limit rows),
and agrees to rounding: ~1e-15 relative, ~1e-13 on rank-deficient systems; on ill-conditioned
ones (near-rigid sticky damping, ~1e9 / time) both carry ~cond * eps and agree to that.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pvdkit.jit import njit
from simcore.component import Component
from simcore.context import SimulationContext
from simcore.maths import qrot
from simcore.rigid_body.constraints import SuspensionLimitDirection
from simcore.rigid_body.functions import _k_integrate_pose, _k_integrate_velocities_into

_JIT = {"cache": True, "nogil": True}

# Per-wheel geometry packed by VehicleConstraintBatchComponent (n, W, GEOMETRY_WIDTH): suspension
# attachment position (3) and rotation (4), suspension travel direction (3), then the vehicle's
# suspension-limit restitution and direction (repeated on every wheel, to keep one params array).
G_POS, G_QUAT, G_TDIR, G_REST, G_DIR = 0, 3, 7, 10, 11
GEOMETRY_WIDTH = 12

# Per-vehicle body params packed by RigidBodyBatchComponent (n, BODY_WIDTH): mass, inverse moments
# of inertia (3), 1.0 when the vehicle has anti-roll bars (their torque is then summed).
B_MASS, B_INV_MOI, B_ANTI_ROLL = 0, 1, 4
BODY_WIDTH = 5

_DIR_SUSPENSION = int(SuspensionLimitDirection.SUSPENSION)
_DIR_ROAD_NORMAL = int(SuspensionLimitDirection.ROAD_GEOMETRY_NORMAL)

_EPS = float(np.finfo(np.float64).eps)
#: Cholesky is used when ``trace(m) trace(m^-1)`` (>= the condition number) stays below this: the
#: matrix is then far from the ``eps * rows`` singular-value cut-off of ``lstsq`` and its
#: pseudo-inverse is its inverse. (Pivots alone cannot tell: a pivot can exceed the smallest
#: eigenvalue by many orders, e.g. with two nearly coincident suspension-limit rows.)
_CHOLESKY_MAX_CONDITION = 1e10


# ------------------------------------------------------------------------------------ rigid_body_begin


@njit(**_JIT)
def _k_begin(lin, ang, prev_lin, prev_ang):  # pragma: no cover - compiled
    for v in range(lin.shape[0]):
        for k in range(3):
            prev_lin[v, k] = lin[v, k]
            prev_ang[v, k] = ang[v, k]


class RigidBodyBeginBatchComponent(Component):
    """``rigid_body_begin`` for a fleet: keeps every body's velocities at the start of the step as
    ``previous_linear/angular_velocity`` (where Vehicle2's ``PxVehiclePhysXActorBeginComponent``
    reads the actor state)."""

    def __init__(self, fleet: Any) -> None:
        self.fleet = fleet
        rb = fleet.states.rigid_body.arrays
        self._args = (rb["linear_velocity"], rb["angular_velocity"], rb["previous_linear_velocity"],
                      rb["previous_angular_velocity"])
        self.repack()

    def repack(self) -> None:
        """No params to pack."""

    def update(self, dt: float, context: SimulationContext) -> bool:
        _k_begin(*self._args)
        return True


# ------------------------------------------------------------------------------------------ constraints


@njit(**_JIT)
def _k_constraints(geometry, sticky_damping, separation, plane, directions, sticky_active, tire_app_point,
                   quat, tire_active, tire_linears, tire_angulars, tire_damping, susp_active, susp_linear,
                   susp_angular, susp_error, restitution):  # pragma: no cover - compiled
    n, nb_wheels = separation.shape
    for v in range(n):
        any_sticky = False
        any_penetration = False
        for w in range(nb_wheels):
            any_sticky |= sticky_active[v, w, 0] or sticky_active[v, w, 1]
            any_penetration |= separation[v, w] < 0.0
        if not any_sticky and not any_penetration:
            # No row wanted: clear stale rows (only when some are still flagged, as the reference).
            stale = False
            for w in range(nb_wheels):
                stale |= tire_active[v, w, 0] or tire_active[v, w, 1] or susp_active[v, w]
            if stale:
                for w in range(nb_wheels):
                    for d in range(2):
                        tire_active[v, w, d] = False
                        tire_damping[v, w, d] = 0.0
                        for k in range(3):
                            tire_linears[v, w, d, k] = 0.0
                            tire_angulars[v, w, d, k] = 0.0
                    susp_active[v, w] = False
                    susp_error[v, w] = 0.0
                    restitution[v, w] = 0.0
                    for k in range(3):
                        susp_linear[v, w, k] = 0.0
                        susp_angular[v, w, k] = 0.0
            continue
        bx, by, bz, bw = quat[v, 0], quat[v, 1], quat[v, 2], quat[v, 3]
        for w in range(nb_wheels):
            g = geometry[v, w]
            # Arm from the centre of mass to the tire force application point (world frame).
            rx, ry, rz = qrot(g[G_QUAT], g[G_QUAT + 1], g[G_QUAT + 2], g[G_QUAT + 3],
                              tire_app_point[v, w, 0], tire_app_point[v, w, 1], tire_app_point[v, w, 2])
            ax, ay, az = qrot(bx, by, bz, bw, g[G_POS] + rx, g[G_POS + 1] + ry, g[G_POS + 2] + rz)
            # Sticky tire rows: damp the contact velocity along each sticky tire direction.
            for d in range(2):
                if sticky_active[v, w, d]:
                    dx, dy, dz = directions[v, w, d, 0], directions[v, w, d, 1], directions[v, w, d, 2]
                    tire_active[v, w, d] = True
                    tire_linears[v, w, d, 0] = dx
                    tire_linears[v, w, d, 1] = dy
                    tire_linears[v, w, d, 2] = dz
                    tire_angulars[v, w, d, 0] = ay * dz - az * dy
                    tire_angulars[v, w, d, 1] = az * dx - ax * dz
                    tire_angulars[v, w, d, 2] = ax * dy - ay * dx
                    tire_damping[v, w, d] = sticky_damping[d]
                else:
                    tire_active[v, w, d] = False
                    tire_damping[v, w, d] = 0.0
                    for k in range(3):
                        tire_linears[v, w, d, k] = 0.0
                        tire_angulars[v, w, d, k] = 0.0
            # Suspension-limit row: a one-sided row removing the penetration of the wheel; an
            # inactive row is reset, as PhysX resets every wheel's rows before setting the active ones.
            mode = int(g[G_DIR])
            active = separation[v, w] < 0.0
            lx, ly, lz = 0.0, 0.0, 0.0
            if not active:
                pass
            elif mode == _DIR_ROAD_NORMAL:
                lx, ly, lz = plane[v, w, 0], plane[v, w, 1], plane[v, w, 2]
            elif mode == _DIR_SUSPENSION:
                tx, ty, tz = qrot(bx, by, bz, bw, g[G_TDIR], g[G_TDIR + 1], g[G_TDIR + 2])
                proj = 0.0
                proj += plane[v, w, 0] * tx
                proj += plane[v, w, 1] * ty
                proj += plane[v, w, 2] * tz
                active = active and proj != 0.0
                sign = np.sign(proj)
                lx, ly, lz = tx * sign, ty * sign, tz * sign
            else:
                active = False
            susp_active[v, w] = active
            if active:
                susp_linear[v, w, 0] = lx
                susp_linear[v, w, 1] = ly
                susp_linear[v, w, 2] = lz
                susp_angular[v, w, 0] = ay * lz - az * ly
                susp_angular[v, w, 1] = az * lx - ax * lz
                susp_angular[v, w, 2] = ax * ly - ay * lx
                susp_error[v, w] = separation[v, w]
                restitution[v, w] = g[G_REST]
            else:
                for k in range(3):
                    susp_linear[v, w, k] = 0.0
                    susp_angular[v, w, k] = 0.0
                susp_error[v, w] = 0.0
                restitution[v, w] = 0.0


class VehicleConstraintBatchComponent(Component):
    """``constraints`` for a fleet: the sticky-tire and suspension-limit rows of every vehicle
    (``PxVehiclePhysXConstraintComponent``), enforced by :class:`RigidBodyBatchComponent`."""

    def __init__(self, fleet: Any) -> None:
        self.fleet = fleet
        s = fleet.states
        c = s.constraints.arrays
        self._states = (s.suspension.arrays["separation"], s.road_geometry.arrays["plane"],
                        s.tire_direction.arrays["directions"], s.tire_sticky.arrays["active_status"],
                        s.suspension_compliance.arrays["tire_force_app_point"], s.rigid_body.arrays["quat"],
                        c["tire_active_status"], c["tire_linears"], c["tire_angulars"], c["tire_damping"],
                        c["susp_active_status"], c["susp_linear"], c["susp_angular"],
                        c["susp_geometric_error"], c["restitution"])
        self._context: SimulationContext | None = None
        self._sticky_damping = np.zeros(2)
        self.repack()

    def repack(self) -> None:
        """Pack the suspension geometry and suspension-limit params of every vehicle."""
        packed = []
        for p in self.fleet.params:
            susp, limit = p.suspension, p.suspension_limit_constraint
            g = np.empty((p.nb_wheels, GEOMETRY_WIDTH))
            g[:, G_POS:G_POS + 3] = susp.suspension_attachment_pos
            g[:, G_QUAT:G_QUAT + 4] = susp.suspension_attachment_quat
            g[:, G_TDIR:G_TDIR + 3] = susp.suspension_travel_dir
            g[:, G_REST] = limit.restitution
            g[:, G_DIR] = float(int(limit.direction))
            packed.append(g)
        self._geometry = np.ascontiguousarray(np.stack(packed))

    def update(self, dt: float, context: SimulationContext) -> bool:
        if context is not self._context:  # the sticky damping rates come from the shared context
            sticky = context.tire_sticky_params
            self._sticky_damping = np.array([sticky.longitudinal.damping, sticky.lateral.damping])
            self._context = context
        _k_constraints(self._geometry, self._sticky_damping, *self._states)
        return True


# ------------------------------------------------------------------------------------------- rigid_body


@njit(**_JIT)
def _cholesky_solve(m, b, size, floor, chol, x):  # pragma: no cover - compiled
    """Solve ``m x = b`` (symmetric, lower triangle of the leading ``size`` block) by Cholesky; False
    when ``m`` may be near singular (see :data:`_CHOLESKY_MAX_CONDITION`; use the pseudo-inverse).
    ``floor`` is a lower bound of the smallest eigenvalue (or 0): ``m = K + diag(reg)`` with K
    positive semi-definite, so the smallest regularisation bounds it and, when large enough,
    spares the ``trace(m^-1)`` check. A zero row (a row with zero vectors) decouples and gets
    ``x = 0``, its minimum-norm value. ``chol`` holds the factor, its diagonal as reciprocals."""
    trace = 0.0
    for j in range(size):
        mjj = m[j, j]
        if mjj == 0.0:
            for i in range(j):
                if m[j, i] != 0.0:
                    return False
            for i in range(j + 1, size):
                if m[i, j] != 0.0:
                    return False
            for i in range(j, size):
                chol[i, j] = 0.0
            continue
        trace += mjj
        d = mjj
        for p in range(j):
            d -= chol[j, p] * chol[j, p]
        if not d > _EPS * mjj:
            return False
        inv_ljj = 1.0 / np.sqrt(d)
        chol[j, j] = inv_ljj
        for i in range(j + 1, size):
            s = m[i, j]
            for p in range(j):
                s -= chol[i, p] * chol[j, p]
            chol[i, j] = s * inv_ljj
    if not (floor > 0.0 and trace < _CHOLESKY_MAX_CONDITION * floor):
        # trace(m^-1) = |chol^-1|_F^2, column by column (x as scratch); 1 / trace(m^-1) <= min eigenvalue.
        trace_inv = 0.0
        for j in range(size):
            for i in range(j, size):
                if i == j:
                    y = chol[j, j]
                else:
                    s = 0.0
                    for p in range(j, i):
                        s -= chol[i, p] * x[p]
                    y = s * chol[i, i]
                x[i] = y
                trace_inv += y * y
        if not trace * trace_inv < _CHOLESKY_MAX_CONDITION:
            return False
    for i in range(size):  # forward: chol y = b
        s = b[i]
        for p in range(i):
            s -= chol[i, p] * x[p]
        x[i] = s * chol[i, i]
    for i in range(size - 1, -1, -1):  # backward: chol^T x = y
        s = x[i]
        for p in range(i + 1, size):
            s -= chol[p, i] * x[p]
        x[i] = s * chol[i, i]
    return True


@njit(**_JIT)
def _pinv_solve(m, b, size, a, vec, x):  # pragma: no cover - compiled
    """Minimum-norm least-squares solution of symmetric ``m x = b`` (``np.linalg.lstsq`` with numpy's
    default cut-off: singular values at or below ``eps * size * max`` count as zero), by cyclic Jacobi
    eigen-decomposition (singular values of a symmetric matrix are its eigenvalues' magnitudes).
    Reads the lower triangle of ``m``."""
    fro = 0.0
    for i in range(size):
        for j in range(size):
            a[i, j] = m[i, j] if j <= i else m[j, i]
            vec[i, j] = 1.0 if i == j else 0.0
            fro += a[i, j] * a[i, j]
    for _ in range(60):
        off = 0.0
        for p in range(size):
            for q in range(p + 1, size):
                off += a[p, q] * a[p, q]
        if off <= 1e-36 * fro:
            break
        for p in range(size):
            for q in range(p + 1, size):
                apq = a[p, q]
                if apq == 0.0:
                    continue
                theta = (a[q, q] - a[p, p]) / (2.0 * apq)
                t = 1.0 / (abs(theta) + np.sqrt(theta * theta + 1.0))
                if theta < 0.0:
                    t = -t
                c = 1.0 / np.sqrt(t * t + 1.0)
                s = t * c
                for k in range(size):  # columns p, q
                    akp, akq = a[k, p], a[k, q]
                    a[k, p] = c * akp - s * akq
                    a[k, q] = s * akp + c * akq
                for k in range(size):  # rows p, q
                    apk, aqk = a[p, k], a[q, k]
                    a[p, k] = c * apk - s * aqk
                    a[q, k] = s * apk + c * aqk
                a[p, q] = 0.0
                a[q, p] = 0.0
                for k in range(size):
                    vkp, vkq = vec[k, p], vec[k, q]
                    vec[k, p] = c * vkp - s * vkq
                    vec[k, q] = s * vkp + c * vkq
    largest = 0.0
    for i in range(size):
        largest = max(largest, abs(a[i, i]))
    cut = _EPS * size * largest
    for i in range(size):
        x[i] = 0.0
    for j in range(size):
        lam = a[j, j]
        if not abs(lam) > cut:
            continue
        proj = 0.0
        for i in range(size):
            proj += vec[i, j] * b[i]
        proj /= lam
        for i in range(size):
            x[i] += vec[i, j] * proj


# Rows of the 2-d scratch ``work`` (see _work_shape) after its four (R, R) matrices, R = 3 per wheel:
# the rows' linear parts, angular parts and I^-1 angular parts stored as (3, R) (component-major),
# then one row per vector of the solve, then the body's scratch (3 x 3 blocks in the first columns).
W_ROWS = 0
W_VECTORS = 9
_V_JV, _V_REG, _V_RHS, _V_LAM, _V_USE, _V_B, _V_X = range(7)
W_BODY = W_VECTORS + 7
W_BODY_ROWS = 3 + 3 + 3  # rotation, inverse inertia, (force, torque, zero)


def _work_shape(nb_wheels: int) -> tuple[int, int]:
    """Scratch of :func:`_k_rigid_body`: up to 3 constraint rows per wheel (two sticky, one limit)."""
    rows = 3 * nb_wheels
    return 4 * rows + W_BODY + W_BODY_ROWS, max(rows, 3)


@njit(**_JIT)
def _solve_rows(mass, inv_inertia, dt, t_active, t_linears, t_angulars, t_damping, s_active, s_linear,
                s_angular, s_error, s_restitution, lin, ang, work):  # pragma: no cover - compiled
    """Apply the impulses of one vehicle's active rows to its velocities; mirrors
    :func:`simcore.rigid_body.constraints.solve_vehicle_constraints` step by step (row order, active
    set loop), with ``work`` (see :func:`_work_shape`) as scratch."""
    nb_wheels = t_active.shape[0]
    rows = 3 * nb_wheels
    kmat = work[0:rows]
    msub = work[rows:2 * rows]
    fact = work[2 * rows:3 * rows]
    eig = work[3 * rows:4 * rows]
    o = 4 * rows + W_ROWS
    lr = work[o:o + 3]  # lr[c, i]: component c of row i's linear part
    ar = work[o + 3:o + 6]
    minv_a = work[o + 6:o + 9]
    o = 4 * rows + W_VECTORS
    jv = work[o + _V_JV]
    reg = work[o + _V_REG]
    rhs = work[o + _V_RHS]
    lam = work[o + _V_LAM]
    use = work[o + _V_USE]  # 1.0 for the rows in the current active set
    bsub = work[o + _V_B]
    xsub = work[o + _V_X]
    # Rows: the sticky tire rows (wheel-major, longitudinal then lateral), then the suspension limits.
    k = 0
    for w in range(nb_wheels):
        for d in range(2):
            if t_active[w, d]:
                for c in range(3):
                    lr[c, k] = t_linears[w, d, c]
                    ar[c, k] = t_angulars[w, d, c]
                reg[k] = t_damping[w, d] * dt  # damping_dt until the diagonal is known
                k += 1
    nt = k
    for w in range(nb_wheels):
        if s_active[w]:
            for c in range(3):
                lr[c, k] = s_linear[w, c]
                ar[c, k] = s_angular[w, c]
            k += 1
    if k == 0:
        return 0
    for i in range(k):  # I^-1 a_i
        for j in range(3):
            minv_a[j, i] = (ar[0, i] * inv_inertia[j, 0] + ar[1, i] * inv_inertia[j, 1]
                            + ar[2, i] * inv_inertia[j, 2])
    for i in range(k):  # K = J M^-1 J^T; symmetric, so only its lower triangle is built and read
        for j in range(i + 1):
            ll = lr[0, i] * lr[0, j] + lr[1, i] * lr[1, j] + lr[2, i] * lr[2, j]
            aa = ar[0, i] * minv_a[0, j] + ar[1, i] * minv_a[1, j] + ar[2, i] * minv_a[2, j]
            kmat[i, j] = ll / mass + aa
        jv[i] = ((lr[0, i] * lin[0] + lr[1, i] * lin[1] + lr[2, i] * lin[2])
                 + (ar[0, i] * ang[0] + ar[1, i] * ang[1] + ar[2, i] * ang[2]))
    # Sticky rows: implicit acceleration springs (regularised); suspension limits: J v' >= target.
    for i in range(nt):
        damping_dt = reg[i]
        if damping_dt > 0.0:
            reg[i] = kmat[i, i] / damping_dt
            use[i] = 1.0
        else:
            reg[i] = 0.0
            use[i] = 0.0
        rhs[i] = 0.0 - jv[i]
    i = nt
    for w in range(nb_wheels):
        if s_active[w]:
            bias = -s_error[w] / dt
            bounce = -s_restitution[w] * min(jv[i], 0.0)
            rhs[i] = max(bias, bounce) - jv[i]
            reg[i] = 0.0
            use[i] = 1.0
            i += 1
    for _ in range(k + 1):
        for i in range(k):
            lam[i] = 0.0
        size = np.int64(0)  # not the literal 0: that would compile the solvers twice
        floor = np.inf  # smallest regularisation of the rows in use: bounds the smallest eigenvalue
        for i in range(k):
            if use[i] != 0.0:
                floor = min(floor, reg[i])
                bsub[size] = rhs[i]
                b = 0
                for j in range(i):
                    if use[j] != 0.0:
                        msub[size, b] = kmat[i, j]
                        b += 1
                msub[size, size] = kmat[i, i] + reg[i]
                size += 1
        if size == 0:
            break
        if not _cholesky_solve(msub, bsub, size, floor, fact, xsub):
            _pinv_solve(msub, bsub, size, fact, eig, xsub)
        a = 0
        for i in range(k):
            if use[i] != 0.0:
                lam[i] = xsub[a]
                a += 1
        # One-sided rows may only push; those already satisfied without pushing drop out.
        dropped = False
        for i in range(nt, k):
            if use[i] != 0.0 and lam[i] < 0.0:
                use[i] = 0.0
                dropped = True
        if not dropped:
            break
    for c in range(3):
        dl = 0.0
        da = 0.0
        for i in range(k):
            dl += lr[c, i] * lam[i]
            da += minv_a[c, i] * lam[i]
        lin[c] += dl / mass
        ang[c] += da
    return k


@njit(cache=True, nogil=True, inline="always")
def _has_rows(t_active, s_active):  # pragma: no cover - compiled
    for w in range(t_active.shape[0]):
        if t_active[w, 0] or t_active[w, 1] or s_active[w]:
            return True
    return False


@njit(**_JIT)
def _k_rigid_body(body, gravity, dt, susp_force, susp_torque, tire_forces, tire_torques, anti_roll,
                  pos, quat, lin, ang, ext_force, ext_torque, t_active, t_linears, t_angulars, t_damping,
                  s_active, s_linear, s_angular, s_error, s_restitution, work, solve):  # pragma: no cover
    o = 4 * 3 * t_active.shape[1] + W_BODY  # the body's scratch: nothing is allocated per call
    rot = work[o:o + 3, 0:3]
    inv_inertia = work[o + 3:o + 6, 0:3]
    force = work[o + 6, 0:3]
    torque = work[o + 7, 0:3]
    no_torque = work[o + 8, 0:3]
    for k in range(3):
        no_torque[k] = 0.0
    for v in range(body.shape[0]):
        mass = body[v, B_MASS]
        extra = anti_roll[v] if body[v, B_ANTI_ROLL] != 0.0 else no_torque
        _k_integrate_velocities_into(mass, body[v, B_INV_MOI:B_INV_MOI + 3], susp_force[v], susp_torque[v],
                                     tire_forces[v], tire_torques[v], extra, gravity, ext_force[v],
                                     ext_torque[v], quat[v], lin[v], ang[v], dt, force, torque, rot,
                                     inv_inertia)
        # ``solve`` None (the PhysX actor layer solves the rows) prunes this branch before typing:
        # the solver is compiled only for pure Vehicle2 runs, which pass True.
        if solve is not None and solve and _has_rows(t_active[v], s_active[v]):
            _solve_rows(mass, inv_inertia, dt, t_active[v], t_linears[v], t_angulars[v], t_damping[v],
                        s_active[v], s_linear[v], s_angular[v], s_error[v], s_restitution[v], lin[v], ang[v],
                        work)
        _k_integrate_pose(dt, pos[v], quat[v], lin[v], ang[v])
        for c in range(3):
            ext_force[v, c] = 0.0
            ext_torque[v, c] = 0.0


class RigidBodyBatchComponent(Component):
    """``rigid_body`` for a fleet (``PxVehicleRigidBodyComponent`` + the PhysX solver's vehicle rows):
    sums each body's suspension, tire, anti-roll (where fitted), gravity and external loads,
    integrates the velocities, enforces the ``constraints`` rows, integrates the pose and resets the
    external loads. With ``solve_constraints=False`` (the PhysX actor layer: the scene solves the
    rows once per step) the rows are left alone."""

    def __init__(self, fleet: Any, solve_constraints: bool = True) -> None:
        self.fleet = fleet
        self.solve_constraints = solve_constraints
        s = fleet.states
        rb, c = s.rigid_body.arrays, s.constraints.arrays
        self._loads = (s.suspension_force.arrays["force"], s.suspension_force.arrays["torque"],
                       s.tire_force.arrays["forces"], s.tire_force.arrays["torques"],
                       s.anti_roll_force.arrays["torque"])
        self._rest = (rb["pos"], rb["quat"], rb["linear_velocity"], rb["angular_velocity"],
                      rb["external_force"], rb["external_torque"], c["tire_active_status"], c["tire_linears"],
                      c["tire_angulars"], c["tire_damping"], c["susp_active_status"], c["susp_linear"],
                      c["susp_angular"], c["susp_geometric_error"], c["restitution"])
        self._work = np.empty(_work_shape(fleet.nb_wheels))
        self.repack()

    def repack(self) -> None:
        """Pack the mass, inverse moments of inertia and anti-roll flag of every vehicle."""
        body = np.empty((len(self.fleet.params), BODY_WIDTH))
        for v, p in enumerate(self.fleet.params):
            body[v, B_MASS] = p.rigid_body.mass
            body[v, B_INV_MOI:B_INV_MOI + 3] = p.rigid_body.inverse_moi
            body[v, B_ANTI_ROLL] = 1.0 if p.anti_roll_bars else 0.0
        self._body = body

    def update(self, dt: float, context: SimulationContext) -> bool:
        _k_rigid_body(self._body, context.gravity, dt, *self._loads, *self._rest, self._work,
                      True if self.solve_constraints else None)
        return True


__all__ = ["RigidBodyBatchComponent", "RigidBodyBeginBatchComponent", "VehicleConstraintBatchComponent"]
