"""Every Vehicle2 vehicle of a real PhysX OmniPVD recording, rebuilt as simcore params plus the
recorded per-step commands and states.

Why: the only ground truth for simcore's Vehicle2 port is PhysX itself. A recording made by
PhysX (``ovphysx``) holds each vehicle's params, the commands of every step and the resulting
states, so a replay can run simcore from the same params and commands and compare step by step.
This module turns the recording into exactly that: :func:`vehicles_from_recording` returns a
:class:`RecordedRun` (the scene: frame, gravity, ground plane, dt, step count) with one
:class:`RecordedVehicle` per vehicle (params that validate, the chassis actor, per-step commands,
``states_at(step)`` and ``actor_at(step)``).

PhysX writes two frames per step: pvdkit frame ``2i`` holds step ``i``'s Vehicle2 state (after
the vehicle update, before PhysX's solver), frame ``2i + 1`` the PhysX actor results of that
step (the chassis pose at the actor origin, velocities).

Conventions: values are float64 in the recording's units and world frame; gear numbers are
simcore's, which are Vehicle2's (``GearboxState.current_gear`` indexes the ratio table: 0
reverse, 1 neutral, 2 first gear with the recorded gearbox; ovphysx's readback API shows that
number minus one); ``target_gear`` 255 is the autobox request (``simcore.commands.states.AUTOMATIC_GEAR``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import simcore.frame as _frames
from pvdkit.names import vehicle_named
from pvdkit.recording import Object, Recording
from pvdkit.types import PvdError
from simcore.frame import Frame
from simcore.maths import quat_rotate_inv
from simcore.replay.recorded_params import (
    DEFAULT_STICKY_DAMPING,
    VehicleGraph,
    suspension_limit,
    vehicle_graph,
    vehicle_params,
)
from simcore.replay.recorded_source import RecordingError, Source, _as_bool  # noqa: F401
from simcore.replay.recorded_states import commands as _commands
from simcore.replay.recorded_states import responses as _responses
from simcore.replay.recorded_states import states as _states
from simcore.replay.recorded_states import sticky_damping as _sticky_damping
from simcore.rigid_body.constraints import SuspensionLimitConstraintParams
from simcore.road import PlaneRoad
from simcore.vehicle import VehicleParams

__all__ = [
    "RecordedActor",
    "RecordedRun",
    "RecordedScene",
    "RecordedVehicle",
    "RecordingError",
    "vehicles_from_recording",
]


@dataclass(frozen=True)
class RecordedActor:
    """The chassis ``PxRigidDynamic`` as recorded (values in force at step 0's frame)."""

    name: str
    mass: float
    inertia: np.ndarray
    cmass_local_pos: np.ndarray
    cmass_local_quat: np.ndarray
    linear_damping: float
    angular_damping: float
    max_linear_velocity: float
    max_angular_velocity: float
    gyroscopic: bool
    disable_gravity: bool
    sleep_threshold: float
    wake_counter_reset: float
    position_iterations: int
    velocity_iterations: int


@dataclass(frozen=True)
class RecordedScene:
    """The scene every vehicle shares: frame, gravity, ground plane, step length and count."""

    path: str
    frame: Frame
    gravity: np.ndarray
    road: PlaneRoad
    dt: float
    nb_steps: int
    solver_type: str
    #: Actor names in the order ``PxPhysics.rigidDynamics`` lists them (a replay recorded in
    #: PhysX's layout lists its actors the same way, so ``pvdkit diff`` pairs them).
    actor_order: tuple[str, ...] = ()


@dataclass
class RecordedVehicle:
    """One recorded vehicle: simcore params, its chassis actor and per-step data.

    ``commands`` / ``states`` map a :class:`~simcore.vehicle.VehicleStates` field name to
    {state field: array with a leading step axis}; ``responses`` (kind 'raw' only) holds the
    per-wheel ``brake``, ``drive`` and ``steer`` responses ``(nb_steps, n)`` that drive a vehicle
    without drivetrain commands. ``actor_pos`` … ``actor_angvel`` are the chassis actor after
    PhysX's solve of each step (frame ``2i + 1``), pose at the actor origin.
    """

    name: str
    handle: int
    kind: str
    params: VehicleParams
    actor: RecordedActor
    sticky_damping: tuple[float, float]
    suspension_limit: SuspensionLimitConstraintParams
    commands: dict[str, dict[str, np.ndarray]]
    responses: dict[str, np.ndarray]
    states: dict[str, dict[str, np.ndarray]] = field(repr=False)
    actor_pos: np.ndarray = field(repr=False)
    actor_quat: np.ndarray = field(repr=False)
    actor_linvel: np.ndarray = field(repr=False)
    actor_angvel: np.ndarray = field(repr=False)
    #: The actor's globalPose [qx, qy, qz, qw, px, py, pz] before step 0 (frame 0): where a
    #: replay from the first step starts.
    initial_pose: np.ndarray = field(repr=False, default_factory=lambda: np.array([0, 0, 0, 1, 0, 0, 0.0]))

    @property
    def nb_steps(self) -> int:
        return int(self.actor_pos.shape[0])

    def _check_step(self, step: int) -> int:
        i = int(step)
        if not 0 <= i < self.nb_steps:
            raise RecordingError(f"{self.name}: step {step} out of range (the recording has steps "
                                 f"0..{self.nb_steps - 1})")
        return i

    def states_at(self, step: int) -> dict[str, dict[str, np.ndarray]]:
        """Step ``step``'s recorded Vehicle2 states (frame ``2*step``), as state name -> field ->
        array (copies) with simcore's names, units and shapes; per-wheel fields ``(n, ...)``,
        scalars 0-d arrays. Commands in force during the step are included."""
        i = self._check_step(step)
        return {name: {f: np.array(a[i]) for f, a in fields.items()} for name, fields in self.states.items()}

    def actor_at(self, step: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(pos (3,), quat (4,) xyzw, linear velocity (3,), angular velocity (3,)) of the chassis
        actor after PhysX's solve of step ``step`` (frame ``2*step + 1``); pos/quat of the actor
        origin, not the centre of mass."""
        i = self._check_step(step)
        return (self.actor_pos[i].copy(), self.actor_quat[i].copy(), self.actor_linvel[i].copy(),
                self.actor_angvel[i].copy())


@dataclass
class RecordedRun:
    """A recording's scene and vehicles."""

    scene: RecordedScene
    vehicles: list[RecordedVehicle]
    #: Every vehicle of the recording by name, in PhysX's creation order (also those not picked).
    recorded_order: tuple[str, ...] = ()

    @property
    def every_vehicle(self) -> bool:
        """True when every vehicle of the recording is replayed, in its order: what ``pvdkit
        diff`` of the replay against the recording needs (it compares whole recordings and pairs
        vehicles of one class and name by their order of creation)."""
        return tuple(v.name for v in self.vehicles) == self.recorded_order

    def vehicle(self, name: str) -> RecordedVehicle:
        """The vehicle of that name ('/World/Tank'; the last path element 'Tank' also matches
        when unique); RecordingError naming the known names otherwise."""
        found = vehicle_named(name, [v.name for v in self.vehicles])
        if found is None:
            raise RecordingError(f"{self.scene.path}: no vehicle {name!r} (vehicles: "
                                 f"{', '.join(v.name for v in self.vehicles) or 'none'})")
        return self.vehicles[found]


# ----------------------------------------------------------------------------------------------
# Small maths (numpy, float64): no JIT warm-up for a few vectors
# ----------------------------------------------------------------------------------------------


def _qrot_f32(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``PxQuat::rotate`` in float32, operation by operation."""
    x, y, z, w = (np.float32(c) for c in q)
    two = np.float32(2.0)
    vx, vy, vz = two * np.float32(v[0]), two * np.float32(v[1]), two * np.float32(v[2])
    w2 = w * w - np.float32(0.5)
    dot2 = x * vx + y * vy + z * vz
    return np.array([vx * w2 + (y * vz - z * vy) * w + x * dot2,
                     vy * w2 + (z * vx - x * vz) * w + y * dot2,
                     vz * w2 + (x * vy - y * vx) * w + z * dot2], dtype=np.float32)


def _qmul_f32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``PxQuat::operator*`` in float32."""
    ax, ay, az, aw = (np.float32(c) for c in a)
    bx, by, bz, bw = (np.float32(c) for c in b)
    return np.array([aw * bx + ax * bw + ay * bz - az * by, aw * by + ay * bw + az * bx - ax * bz,
                     aw * bz + az * bw + ax * by - ay * bx, aw * bw - ax * bx - ay * by - az * bz],
                    dtype=np.float32)


def _axis(v: np.ndarray) -> np.ndarray | None:
    """The signed world axis ``v`` points along (within ~8 degrees), or None."""
    n = float(np.linalg.norm(v))
    if not n > 0.0:
        return None
    u = v / n
    k = int(np.argmax(np.abs(u)))
    if abs(u[k]) < 0.99:
        return None
    out = np.zeros(3)
    out[k] = np.sign(u[k])
    return out


# ----------------------------------------------------------------------------------------------
# Scene
# ----------------------------------------------------------------------------------------------


def _objects(src: Source, cls: str) -> list[Object]:
    try:
        return src.rec.objects_of_class(cls)
    except PvdError:
        return []


def _nb_steps(rec: Recording) -> int:
    """Complete steps: both frames of a step closed (the last frame of a PhysX recording is never
    closed: it holds the destroy commands written when recording stopped)."""
    stopped = np.asarray(rec.frames.stopped, dtype=bool)
    closed = int(np.argmin(stopped)) if not stopped.all() else len(stopped)
    return closed // 2


def _pick_frame(src: Source, gravity: np.ndarray, graphs: list[VehicleGraph]) -> Frame:
    """The named simcore frame (``simcore.frame``'s module-level frames) whose vertical axis
    opposes gravity (else the suspensions' travel) and whose longitudinal axis is the vehicles'
    rolling direction (tire ``lngDir`` at step 0 in the body frame)."""
    vrt = _axis(-gravity)
    lng_votes: list[np.ndarray] = []
    susp_dirs: list[np.ndarray] = []
    for g in graphs:
        rb = src.link(g.vehicle, "rigidBodyState", g.frame, g.label)
        q = src.floats(rb, "quat", g.frame, g.label, 4)
        for w in g.wheels:
            tire = src.link(w, "tireDirectionState", g.frame, g.label)
            d = src.floats(tire, "lngDir", g.frame, g.label, 3)
            if np.linalg.norm(d) > 0.5:
                lng_votes.append(quat_rotate_inv(q, d))
            sp = src.link(w, "suspParams", g.frame, g.label)
            susp_dirs.append(src.floats(sp, "suspDir", g.frame, g.label, 3))
    if vrt is None and susp_dirs:
        vrt = _axis(-np.mean(susp_dirs, axis=0))
    lng = _axis(np.mean(lng_votes, axis=0)) if lng_votes else None
    if vrt is None or lng is None:
        raise src.error("scene", "PxScene.gravity / TireDirectionState.lngDir",
                        f"axis-aligned vertical and longitudinal directions (gravity {gravity.tolist()})")
    if susp_dirs and float(np.mean(susp_dirs, axis=0) @ vrt) > -0.5:
        raise src.error("scene", "SuspensionParams.suspDir", f"suspensions travelling down (against {vrt})")
    for value in vars(_frames).values():
        if isinstance(value, Frame) and np.array_equal(value.vrt, vrt) and np.array_equal(value.lng, lng):
            return value
    raise src.error("scene", "frame", f"a simcore.frame named frame with up {vrt.tolist()} and forward "
                                      f"{lng.tolist()}")


def _handles(value: Any) -> list[int]:
    if value is None:
        return []
    if isinstance(value, list | tuple | np.ndarray):
        return [int(h) for h in value]
    return [int(value)]


def _road(src: Source, frame: int) -> PlaneRoad:
    """The ground: the ``PxPlaneGeometry`` shape's world pose (actor pose x shape local pose; a
    PhysX plane's normal is its local +x) and the tire friction of its material
    (``PhysXMaterialFriction``)."""
    planes = {o.handle for o in _objects(src, "PxPlaneGeometry")}
    shape = next((s for s in _objects(src, "PxShape") if src.maybe(s, "geom", frame) in planes), None)
    if shape is None:
        raise src.error("scene", "PxShape.geom", "a shape with a PxPlaneGeometry (the ground)")
    actor = next((a for a in _objects(src, "PxRigidActor")
                  if shape.handle in _handles(src.maybe(a, "shapes", frame))), None)
    if actor is None:
        raise src.error("scene", "PxRigidActor.shapes", "the actor holding the ground plane's shape")
    ap = src.floats(actor, "globalPose", frame, "ground", 7).astype(np.float32)
    sp = src.floats(shape, "localPose", frame, "ground", 7).astype(np.float32)
    # In float32, as PhysX composes the shape's pose and rotates the plane's +x: a quaternion
    # such as (0.7071068, 0.7071068, 0, 0) gives the normal (1.2e-7, 1.0000001, 0), a tilt that
    # moves the ground by micrometres 18 m away — which the wheels of a car there feel.
    q = _qmul_f32(ap[:4], sp[:4])
    p = ap[4:] + _qrot_f32(ap[:4], sp[4:])
    normal = _qrot_f32(q, np.array([1.0, 0.0, 0.0], dtype=np.float32)).astype(np.float64)
    normal /= np.linalg.norm(normal)
    p = p.astype(np.float64)
    materials = set(_handles(src.maybe(shape, "materials", frame)))
    pairs = [(src.maybe(m, "material", frame), src.maybe(m, "friction", frame))
             for m in _objects(src, "PhysXMaterialFriction")]
    frictions = {float(fr) for mat, fr in pairs if fr is not None and mat in materials}
    if not frictions:
        frictions = {float(fr) for _, fr in pairs if fr is not None}
    if len(frictions) != 1:
        raise src.error("ground", "PhysXMaterialFriction.friction",
                        f"one tire friction for the ground's material, got {sorted(frictions) or 'none'}")
    return PlaneRoad(normal, 0.0 - float(normal @ p), friction=frictions.pop())


def _physx_scenes(src: Source) -> list[Object]:
    """The recording's PxScene objects; RecordingError when it has none (not made by PhysX)."""
    scenes = _objects(src, "PxScene")
    if not scenes:
        raise RecordingError(f"{src.name}: not a recording made by PhysX: it has no PxScene (pvdkit replay "
                             "rebuilds the vehicles of a PhysX recording; simcore's own recordings, "
                             "with or without the actor layer, have no PhysX scene)")
    return scenes


def _scene(src: Source, nb_steps: int, graphs: list[VehicleGraph]) -> RecordedScene:
    scenes = _physx_scenes(src)
    scene = scenes[0]
    gravity = src.floats(scene, "gravity", 0, "scene", 3)
    return RecordedScene(
        path=src.name,
        frame=_pick_frame(src, gravity, graphs),
        gravity=gravity,
        road=_road(src, 0),
        dt=src.number(scene, "elapsedTime", 1, "scene"),
        nb_steps=nb_steps,
        solver_type=str(src.value(scene, "solverType", 0, "scene")),
        actor_order=_actor_order(src),
    )


def _actor_order(src: Source) -> tuple[str, ...]:
    """The names of ``PxPhysics.rigidDynamics`` in list order (empty when not recorded)."""
    physics = _objects(src, "PxPhysics")
    if not physics:
        return ()
    handles = _handles(src.maybe(physics[0], "rigidDynamics", 1))
    actors = (src.rec.resolve(int(h), 1) for h in handles if h)
    return tuple(str(a.state_at(1).get("name")) for a in actors if a is not None)


# ----------------------------------------------------------------------------------------------
# Vehicles
# ----------------------------------------------------------------------------------------------


def _actor(src: Source, g: VehicleGraph, wake_reset: float) -> RecordedActor:
    a, f, v = g.actor, g.frame, g.label
    cm = src.floats(a, "cMassLocalPose", f, v, 7)
    body_flags = src.maybe(a, "rigidBodyFlags", f) or frozenset()
    flags = src.maybe(a, "flags", f) or frozenset()
    return RecordedActor(
        name=v,
        mass=src.number(a, "mass", f, v),
        inertia=src.floats(a, "massSpaceInertiaTensor", f, v, 3),
        cmass_local_pos=cm[4:],
        cmass_local_quat=cm[:4],
        linear_damping=src.number(a, "linearDamping", f, v),
        angular_damping=src.number(a, "angularDamping", f, v),
        max_linear_velocity=src.number(a, "maxLinearVelocity", f, v),
        max_angular_velocity=src.number(a, "maxAngularVelocity", f, v),
        gyroscopic="eENABLE_GYROSCOPIC_FORCES" in body_flags,
        disable_gravity="eDISABLE_GRAVITY" in flags,
        sleep_threshold=src.number(a, "sleepThreshold", f, v),
        wake_counter_reset=wake_reset,
        position_iterations=src.integer(a, "positionIterations", f, v),
        velocity_iterations=src.integer(a, "velocityIterations", f, v),
    )


def _vehicle(src: Source, g: VehicleGraph, scene: RecordedScene, wake_reset: float) -> RecordedVehicle:
    steps = np.arange(scene.nb_steps, dtype=np.int64)
    vframes, aframes = 2 * steps, 2 * steps + 1
    responses = _responses(src, g, vframes) if g.kind == "raw" else {}
    params = vehicle_params(src, g, scene.frame, responses or None)
    cmds = _commands(src, g, vframes)
    axle_order = [w for axle in params.axle_description.axles for w in axle]
    pose = src.sample_floats(g.actor, "globalPose", aframes, g.label, 7)
    return RecordedVehicle(
        name=g.label,
        handle=int(g.vehicle.handle),
        kind=g.kind,
        params=params,
        actor=_actor(src, g, wake_reset),
        sticky_damping=_sticky_damping(src, g, vframes, DEFAULT_STICKY_DAMPING),
        suspension_limit=suspension_limit(src, g),
        commands=cmds,
        responses=responses,
        states=_states(src, g, vframes, axle_order, cmds),
        actor_pos=pose[:, 4:].copy(),
        actor_quat=pose[:, :4].copy(),
        actor_linvel=src.sample_floats(g.actor, "linearVelocity", aframes, g.label, 3),
        actor_angvel=src.sample_floats(g.actor, "angularVelocity", aframes, g.label, 3),
        initial_pose=src.floats(g.actor, "globalPose", 0, g.label, 7),
    )


def vehicles_from_recording(rec: Recording | str | os.PathLike[str],
                            names: Sequence[str] | None = None) -> RecordedRun:
    """Every Vehicle2 vehicle of a PhysX recording (``.ovd`` or ``.h5``, or an open Recording),
    or only those in ``names`` (chassis actor names such as '/World/Tank', or 'Tank').

    RecordingError (one line: file, vehicle, attribute, what was expected) for a recording
    without vehicles, a missing object or attribute, params simcore refuses, or an unknown name.
    """
    if not isinstance(rec, Recording):
        try:
            rec = Recording.open(Path(rec))
        except PvdError as exc:
            raise RecordingError(str(exc)) from None
    src = Source(rec, rec.source_name)
    _physx_scenes(src)  # first: a simcore recording of any vehicle (car, motorcycle) is told so
    vehicles = _objects(src, "Vehicle")
    if not vehicles:
        raise src.error("recording", "Vehicle", "PhysX Vehicle2 vehicles (the recording has none)")
    nb_steps = _nb_steps(rec)
    if nb_steps == 0:
        raise src.error("recording", "frames", "at least one complete step (two closed frames)")
    graphs = [vehicle_graph(src, v, max(v.created, 0)) for v in vehicles]
    _unique_labels(graphs)
    recorded_order = tuple(g.label for g in graphs)
    if names is not None:
        labels = [g.label for g in graphs]
        picked = []
        for n in names:
            i = vehicle_named(n, labels)
            if i is None:
                raise RecordingError(f"{src.name}: no vehicle {n!r} (its vehicles: {', '.join(labels)})")
            picked.append(graphs[i])
        graphs = picked
    scene = _scene(src, nb_steps, graphs)
    wake_reset = src.number(_objects(src, "PxScene")[0], "wakeCounterResetValue", 0, "scene")
    return RecordedRun(scene, [_vehicle(src, g, scene, wake_reset) for g in graphs], recorded_order)


def _unique_labels(graphs: list[VehicleGraph]) -> None:
    """Make vehicle names unique ('/World/Car', '/World/Car#2') so that lookups by name work."""
    seen: dict[str, int] = {}
    for g in graphs:
        k = seen.get(g.label, 0) + 1
        seen[g.label] = k
        if k > 1:
            g.label = f"{g.label}#{k}"
