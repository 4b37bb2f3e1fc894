"""A fleet: N vehicles of one topology stepped together, every component one kernel over the batch.

Vehicles in a fleet share a topology — wheel count, drivetrain kind, differential kind — and
may differ in every param value (mass, tire, engine, gear ratios …). Their states live in one
:class:`~simcore.fleet.states.FleetStates` (Vehicle2's states with a leading vehicle axis); the
component sequence has the same named entries as a :class:`~simcore.vehicle.Vehicle`'s, each a
batch component running one compiled kernel over (vehicle, wheel).

``fleet[i]`` is vehicle ``i`` as an ordinary :class:`~simcore.vehicle.Vehicle` whose states are
views of the fleet's rows: reading it costs nothing and writing it writes the fleet.

A scene with several topologies is several fleets (:class:`Scene` steps them together).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from pvdkit.jit import njit
from simcore.component import Component, ComponentSequence
from simcore.context import SimulationContext
from simcore.fleet.states import FleetStates, StateBatch
from simcore.frame import Frame
from simcore.limits import (
    MAX_BODY_ANGULAR_SPEED,
    MAX_BODY_SPEED,
    MAX_ENGINE_SPEED,
    MAX_WHEEL_SPEED,
    check_vehicle_states,
)
from simcore.maths import qrot
from simcore.road.geometry import PlaneRoad, RoadGeometry
from simcore.vehicle import (
    DEFAULT_NB_SUBSTEPS,
    Vehicle,
    VehicleParams,
    VehicleStates,
    default_context,
)


def topology(params: VehicleParams) -> tuple[Any, ...]:
    """What vehicles in one batch must share: wheel count, axle layout, drivetrain kind, the kinds
    of its parts (differential type …), frame and length unit. Values may differ freely, and so
    may the number of Ackermann entries and anti-roll bars (the kernels pad them)."""
    ax = params.axle_description
    kinds = tuple(type(getattr(params, name)).__name__
                  for name in ("engine", "gearbox", "autobox", "clutch", "differential"))
    return (params.nb_wheels, tuple(len(a) for a in ax.axles), params.drivetrain, kinds, params.frame,
            params.scale.scale, params.physx_actor is not None)


def _describe_topology(key: tuple[Any, ...]) -> str:
    wheels, per_axle, drive, kinds, *_, actor = key
    parts = [k for k in kinds if k != "NoneType"]
    return (f"{wheels} wheels {list(per_axle)}, {drive} drive" + (f" ({', '.join(parts)})" if parts else "")
            + (", PhysX actor" if actor else ""))


class Fleet:
    """N vehicles of one topology, stepped together.

    ``Fleet(params, road=None, context=None, nb_substeps=3, names=None)``: ``params`` is one
    :class:`~simcore.vehicle.VehicleParams` per vehicle (validated; all of one topology, see
    :func:`topology`); road and context are shared, with the same defaults as ``Vehicle``;
    ``names`` default to ``vehicle_000`` ….

    ``fleet.commands.throttle[:] = …`` (and ``brake``, ``handbrake``, ``steer``, ``gear``) take
    one value per vehicle; ``fleet.states.<state>.<field>`` are arrays with a leading vehicle
    axis under :class:`~simcore.vehicle.VehicleStates`' names; ``fleet.step(dt)`` advances all.
    """

    def __init__(
        self,
        params: Sequence[VehicleParams],
        road: RoadGeometry | None = None,
        context: SimulationContext | None = None,
        nb_substeps: int = DEFAULT_NB_SUBSTEPS,
        names: Sequence[str] | None = None,
        *,
        validated: bool = False,
    ) -> None:
        params = tuple(params)
        if not params:
            raise ValueError("Fleet: needs at least one vehicle's params")
        for i, p in enumerate(params):
            if not isinstance(p, VehicleParams):
                raise TypeError(f"Fleet: params[{i}] is a {type(p).__name__}, expected VehicleParams")
            if not validated:  # a Vehicle has just validated its own
                p.validate()
        keys = [topology(p) for p in params]
        for i, k in enumerate(keys):
            if k != keys[0]:
                raise ValueError(
                    f"Fleet: vehicle {i} has another topology ({_describe_topology(k)}) than vehicle 0 "
                    f"({_describe_topology(keys[0])}); use simcore.fleet.Scene for mixed topologies")
        self._params = params
        self.names = _check_names(names, len(params))
        first = params[0]
        self.context = context if context is not None else default_context(first.frame, first.scale)
        if self.context.frame != first.frame or self.context.scale.scale != first.scale.scale:
            raise ValueError("Fleet: the context's frame/scale differ from the params'; convert one with "
                             "transform_and_scale first")
        self.road: RoadGeometry = road if road is not None else PlaneRoad.ground(first.frame)
        self.states = FleetStates.stack([VehicleStates.for_params(p) for p in params])
        self.commands = FleetCommands(self)
        self.nb_substeps = int(nb_substeps)
        self.time = 0.0
        #: Steps since construction or the last :meth:`place_on_road` (numbers divergence errors).
        self.steps = 0
        #: Check every vehicle's states after every step, as ``Vehicle.check_divergence``.
        self.check_divergence = True
        #: Lateral distance between neighbours that :meth:`place_on_road` uses by default.
        self.spacing = 4.0
        self._members: list[Vehicle | None] = [None] * len(params)
        self.sequence = build_batch_sequence(self, self.nb_substeps)

    @classmethod
    def from_preset(cls, name: str, n: int, *, frame: Frame | None = None, scale: float | None = None,
                    **kwargs: Any) -> Fleet:
        """``n`` copies of a built-in vehicle (:mod:`simcore.presets`), other arguments as ``Fleet``."""
        from simcore.presets import load_preset

        if int(n) != n or n < 1:
            raise ValueError(f"Fleet.from_preset: n must be a whole number >= 1, got {n!r}")
        p = load_preset(name, frame, scale)
        return cls([p] * int(n), **kwargs)

    # --- what the fleet holds -------------------------------------------------------------------

    @property
    def params(self) -> tuple[VehicleParams, ...]:
        """Each vehicle's params (immutable); change one with :meth:`set_params`."""
        return self._params

    def set_params(self, i: int, params: VehicleParams) -> None:
        """Give vehicle ``i`` new params of the same topology (components repack theirs)."""
        params.validate()
        if topology(params) != topology(self._params[0]):
            raise ValueError(f"Fleet.set_params: vehicle {i}'s new params change its topology "
                             f"({_describe_topology(topology(params))})")
        new = list(self._params)
        new[i] = params
        self._params = tuple(new)
        for component in self.sequence:
            repack = getattr(component, "repack", None)
            if repack is not None:
                repack()

    @property
    def n_vehicles(self) -> int:
        """Number of vehicles."""
        return len(self._params)

    def __len__(self) -> int:
        return len(self._params)

    @property
    def nb_wheels(self) -> int:
        """Wheels per vehicle (shared by the batch)."""
        return self._params[0].nb_wheels

    @property
    def frame(self) -> Frame:
        """The frame every vehicle is simulated in."""
        return self._params[0].frame

    @property
    def drivetrain(self) -> str:
        """The drivetrain kind shared by the batch (``"direct"``, ``"engine"``)."""
        return self._params[0].drivetrain

    def __getitem__(self, i: int) -> Vehicle:
        """Vehicle ``i`` as a :class:`~simcore.vehicle.Vehicle` whose states are this fleet's row ``i``."""
        if not -len(self) <= i < len(self):
            raise IndexError(f"vehicle {i} out of range for a fleet of {len(self)}")
        i = int(i) % len(self)
        v = self._members[i]
        if v is None or v.params is not self._params[i]:
            v = self._members[i] = Vehicle(self._params[i], self.road, self.context, self.nb_substeps,
                                           states=self.member_states(i))
            v.fleet_row = (self, i)
        v.time, v.steps = self.time, self.steps
        return v

    def __iter__(self) -> Iterator[Vehicle]:
        return (self[i] for i in range(len(self)))

    def row(self, i: int) -> FleetRow:
        """Vehicle ``i`` as a batch of one whose arrays are views of this fleet's row ``i``: batch
        components built over it step that vehicle alone."""
        return FleetRow(self, int(i))

    def member_states(self, i: int) -> VehicleStates:
        """Vehicle ``i``'s :class:`~simcore.vehicle.VehicleStates`, every state a view of row ``i``."""
        return VehicleStates(**{name: batch.member(i) for name, batch in self.states.items()})

    # --- placing and stepping -------------------------------------------------------------------

    def place_on_road(self, spacing: float | None = None, lng: float = 0.0, clearance: float = 0.0,
                      speed: float | np.ndarray = 0.0) -> None:
        """Reset every state and put the vehicles side by side: vehicle ``i`` at lateral offset
        ``(i - (n - 1) / 2) * spacing`` (default :attr:`spacing`) and longitudinal ``lng``, each as
        ``Vehicle.place_on_road`` places one (``speed`` may be one value per vehicle)."""
        spacing = self.spacing if spacing is None else spacing
        speeds = np.broadcast_to(np.asarray(speed, dtype=np.float64), (len(self),))
        offsets = (np.arange(len(self)) - (len(self) - 1) / 2.0) * spacing
        for i in range(len(self)):
            self[i].place_on_road(lng=lng, lat=float(offsets[i]), clearance=clearance, speed=float(speeds[i]))
        self.time = 0.0
        self.steps = 0

    def step(self, dt: float) -> bool:
        """Advance every vehicle by ``dt``; False if a component aborted the update.

        Then, unless ``check_divergence`` is False, every vehicle's states are checked as
        ``Vehicle.step`` checks one; the error names the vehicle.
        """
        ok = update_sequence(self.sequence, self.states, self.context, dt)
        self.time += dt
        self.steps += 1
        if self.check_divergence:
            self._check_states()
        return ok

    def run(self, duration: float, dt: float, callback: Callable[[Fleet], None] | None = None) -> None:
        """Step ``round(duration / dt)`` times, calling ``callback(fleet)`` after each step."""
        for _ in range(int(round(duration / dt))):
            self.step(dt)
            if callback is not None:
                callback(self)

    def _check_states(self) -> None:
        """One compiled bounds test for the batch; the per-vehicle check names the culprit."""
        s = self.states
        scale = self._params[0].scale.scale
        rb = s.rigid_body
        engine = s.get("engine")
        i = _k_first_diverged(s.wheel_rigid_body_1d.rotation_speed, rb.linear_velocity, rb.angular_velocity,
                              rb.pos, rb.quat, engine.rotation_speed if engine is not None else _NO_ENGINE,
                              MAX_WHEEL_SPEED, (MAX_BODY_SPEED * scale) ** 2, MAX_BODY_ANGULAR_SPEED ** 2,
                              MAX_ENGINE_SPEED)
        if i < 0:
            return
        try:
            check_vehicle_states(self[i].states, scale, self.steps)
        except Exception as exc:
            exc.args = (f"{self.names[i]}: {exc.args[0]}",)
            if hasattr(exc, "what"):
                exc.what = f"{self.names[i]} {exc.what}"
            raise

    def record(self, writer: Any, **options: Any) -> Any:
        """Record every vehicle's params and states each step through an OmniPVD ``writer``
        (``.ovd``, ``.h5`` or memory): a :class:`~simcore.pvd.recorder.PvdRecorder` (``options``
        are its keyword arguments, e.g. ``timestamps="frame"``) with this fleet attached; close it
        (or use it as a context manager) when done."""
        from simcore.pvd.recorder import PvdRecorder

        recorder = PvdRecorder(writer, **options)
        recorder.attach_fleet(self)
        return recorder

    # --- read-outs --------------------------------------------------------------------------------

    @property
    def pos(self) -> np.ndarray:
        """Body positions, (n, 3) view."""
        return self.states.rigid_body.pos

    @property
    def forward_speed(self) -> np.ndarray:
        """Each body's velocity along its forward axis, (n,)."""
        from simcore.maths import quat_rotate

        rb = self.states.rigid_body
        fwd = quat_rotate(rb.quat, np.broadcast_to(self.frame.lng, rb.pos.shape))
        return np.einsum("ij,ij->i", rb.linear_velocity, fwd)

    def __repr__(self) -> str:
        return (f"Fleet({len(self)} vehicles, {_describe_topology(topology(self._params[0]))}, "
                f"t={self.time:.3f})")


def _check_names(names: Sequence[str] | None, n: int) -> tuple[str, ...]:
    if names is None:
        return tuple(f"vehicle_{i:03d}" for i in range(n))
    names = tuple(str(x) for x in names)
    if len(names) != n:
        raise ValueError(f"Fleet: {len(names)} names for {n} vehicles")
    if len(set(names)) != n:
        dup = next(x for x in names if names.count(x) > 1)
        raise ValueError(f"Fleet: the name {dup!r} is given to more than one vehicle")
    return names


# ------------------------------------------------------------------------------------------ commands


class FleetCommands:
    """Driver inputs of every vehicle, one value per vehicle, read and written through to the states.

    ``fleet.commands.throttle`` is the ``(n,)`` array itself (``[:] =`` writes it, unchecked,
    for speed); assigning the attribute (``fleet.commands.throttle = x``, a scalar or one value
    per vehicle) checks the range as ``Vehicle.commands`` does.
    """

    _RANGES = {"throttle": (0.0, 1.0), "brake": (0.0, 1.0), "handbrake": (0.0, 1.0), "steer": (-1.0, 1.0)}

    def __init__(self, fleet: Fleet) -> None:
        object.__setattr__(self, "_fleet", fleet)

    def _array(self, name: str) -> np.ndarray:
        s = self._fleet.states
        if name == "throttle":
            return s.commands.throttle
        if name == "steer":
            return s.commands.steer
        if name == "brake":
            return s.commands.brakes[:, 0]
        if name == "handbrake":
            return s.commands.brakes[:, 1]
        if name == "gear":
            for state, field in (("direct_drive_transmission", "gear"),
                                 ("engine_drive_transmission", "target_gear"),
                                 ("tank_drive_transmission", "target_gear")):
                if state in s:
                    return getattr(s, state).arrays[field]
            raise AttributeError("this fleet has no transmission command state")
        raise AttributeError(f"unknown command {name!r} (throttle, brake, handbrake, steer, gear)")

    def __getattr__(self, name: str) -> np.ndarray:
        return self._array(name)

    def __setattr__(self, name: str, value: Any) -> None:
        target = self._array(name)
        values = np.broadcast_to(np.asarray(value), target.shape)
        if name in self._RANGES:
            lo, hi = self._RANGES[name]
            bad = ~((values >= lo) & (values <= hi))
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(f"{name} command of {self._fleet.names[i]} must be in [{lo}, {hi}], "
                                 f"got {values[i]!r}")
        elif name == "gear" and np.any(values != np.round(values)):
            raise ValueError(f"gear commands must be whole numbers, got {value!r}")
        target[...] = values

    def release(self) -> None:
        """Throttle, brakes and steer back to zero for every vehicle (gears unchanged)."""
        c = self._fleet.states.commands
        c.throttle[...] = 0.0
        c.steer[...] = 0.0
        c.brakes[...] = 0.0


class FleetRow:
    """One vehicle of a fleet seen as a batch of one (what batch components need: ``states``,
    ``params``, ``nb_wheels``, ``len``), its arrays views of the fleet's row."""

    def __init__(self, fleet: Fleet, i: int) -> None:
        self.states = FleetStates({name: StateBatch(b.cls, {k: a[i:i + 1] for k, a in b.arrays.items()},
                                                    b.scalars) for name, b in fleet.states.items()})
        self.params = (fleet.params[i],)
        self.nb_wheels = fleet.nb_wheels

    def __len__(self) -> int:
        return 1


# ------------------------------------------------------------------------------------------ sequence


def build_batch_sequence(fleet: Any, nb_substeps: int = DEFAULT_NB_SUBSTEPS) -> ComponentSequence:
    """The default sequence of :func:`simcore.vehicle.build_default_sequence`, same names, each
    entry a batch component over the whole fleet (or, for the PhysX actor layer, the layout of
    :data:`simcore.vehicle.PHYSX_ACTOR_LAYOUT`)."""
    from simcore.fleet.components import batch_components
    from simcore.vehicle import sequence_layout

    parts = batch_components(fleet)
    before, substeps, after = sequence_layout(fleet.params[0])
    seq = ComponentSequence()
    for name in before:
        seq.add(parts[name], name)
    seq.begin_substep_group(nb_substeps)
    for name in substeps:
        seq.add(parts[name], name)
    seq.end_substep_group()
    for name in after:
        seq.add(parts[name], name)
    return seq


#: ``engine`` rows of a fleet without an engine (nothing to test).
_NO_ENGINE = np.zeros(0)


@njit(cache=True, nogil=True)
def _k_first_diverged(wheel_speed, lin, ang, pos, quat, engine_speed, max_wheel, max_lin_sq, max_ang_sq,
                      max_engine):  # pragma: no cover - compiled
    """The first vehicle whose states are out of bounds or not finite (a NaN fails every test),
    or -1. Why compiled: numpy's row-wise tests of narrow arrays cost 0.15 us per vehicle-step,
    a few percent of a whole step of a large fleet."""
    for v in range(lin.shape[0]):
        ok = True
        for w in range(wheel_speed.shape[1]):
            ok = ok and abs(wheel_speed[v, w]) <= max_wheel
        ok = ok and lin[v, 0] * lin[v, 0] + lin[v, 1] * lin[v, 1] + lin[v, 2] * lin[v, 2] <= max_lin_sq
        ok = ok and ang[v, 0] * ang[v, 0] + ang[v, 1] * ang[v, 1] + ang[v, 2] * ang[v, 2] <= max_ang_sq
        for c in range(3):
            ok = ok and np.isfinite(pos[v, c])
        for c in range(4):
            ok = ok and np.isfinite(quat[v, c])
        if engine_speed.shape[0]:
            ok = ok and abs(engine_speed[v]) <= max_engine
        if not ok:
            return v
    return -1


@njit(cache=True, nogil=True)
def _k_substep_counts(quat, lin, lx, ly, lz, threshold, low, high, counts):  # pragma: no cover - compiled
    """:meth:`~simcore.physx_actor.SubstepRule.substeps` for every vehicle (forward speed = the
    velocity along the body's forward axis); True when every vehicle wants the same count (one
    call: for a vehicle alone the rule must not cost more than the step it sizes)."""
    for v in range(quat.shape[0]):
        fx, fy, fz = qrot(quat[v, 0], quat[v, 1], quat[v, 2], quat[v, 3], lx, ly, lz)
        speed = lin[v, 0] * fx + lin[v, 1] * fy + lin[v, 2] * fz
        counts[v] = low if abs(speed) < threshold else high
    for v in range(1, quat.shape[0]):
        if counts[v] != counts[0]:
            return False
    return True


def update_sequence(sequence: ComponentSequence, states: FleetStates, context: SimulationContext,
                    dt: float) -> bool:
    """``sequence.update(dt, context)`` over a batch, with the context's substep rule when it has
    one: each vehicle takes the substep count its forward speed asks for (the rigid body state's, at
    the start of the step). When the batch's vehicles want different counts the substep group runs
    once per count, every other vehicle's rows put back afterwards, so each vehicle steps exactly
    as it would alone; the components outside the group (the recorder among them) run once."""
    rule = context.substep_rule
    if rule is None or sequence.nb_groups < 2:
        return sequence.update(dt, context)
    rb = states.rigid_body
    counts = np.empty(len(rb.pos), dtype=np.int64)
    lng = context.frame.lng
    uniform = _k_substep_counts(rb.quat, rb.linear_velocity, float(lng[0]), float(lng[1]), float(lng[2]),
                                rule.threshold_forward_speed, rule.low_forward_speed_substeps,
                                rule.high_forward_speed_substeps, counts)
    if uniform:
        sequence.set_substeps(1, int(counts[0]))
        return sequence.update(dt, context)
    wanted = np.unique(counts)

    def passes(run: Callable[[int], bool]) -> bool:
        ok = True
        for n in wanted:
            others = np.flatnonzero(counts != n)
            saved = states.save_rows(others)
            ok = run(int(n)) and ok
            states.restore_rows(others, saved)
        return ok

    return sequence.update_split(dt, context, 1, passes)


class Scene:
    """Vehicles of several topologies (cars, trucks, tanks): one :class:`Fleet` per topology, all
    stepped by one :meth:`step`. ``scene[i]`` is vehicle ``i`` in the order given; ``scene.fleets``
    the batches. Road and context are shared, so every vehicle must use one frame and scale."""

    def __init__(self, params: Sequence[VehicleParams], road: RoadGeometry | None = None,
                 context: SimulationContext | None = None, nb_substeps: int = DEFAULT_NB_SUBSTEPS,
                 names: Sequence[str] | None = None) -> None:
        params = tuple(params)
        if not params:
            raise ValueError("Scene: needs at least one vehicle's params")
        self.names = _check_names(names, len(params))
        frames = {(p.frame, p.scale.scale) for p in params}
        if len(frames) > 1:
            raise ValueError("Scene: every vehicle must be described in one frame and scale "
                             "(convert with VehicleParams.to)")
        groups: dict[tuple[Any, ...], list[int]] = {}
        for i, p in enumerate(params):
            groups.setdefault(topology(p), []).append(i)
        first = params[0]
        self.context = context if context is not None else default_context(first.frame, first.scale)
        self.road: RoadGeometry = road if road is not None else PlaneRoad.ground(first.frame)
        self.fleets: list[Fleet] = []
        self._where: list[tuple[int, int]] = [(0, 0)] * len(params)
        for members in groups.values():
            for row, i in enumerate(members):
                self._where[i] = (len(self.fleets), row)
            self.fleets.append(Fleet([params[i] for i in members], self.road, self.context, nb_substeps,
                                     names=[self.names[i] for i in members]))
        self.time = 0.0

    def __len__(self) -> int:
        return len(self._where)

    @property
    def n_vehicles(self) -> int:
        """Number of vehicles over every fleet."""
        return len(self._where)

    def __getitem__(self, i: int) -> Vehicle:
        f, row = self._where[i]
        return self.fleets[f][row]

    def __iter__(self) -> Iterator[Vehicle]:
        return (self[i] for i in range(len(self)))

    def place_on_road(self, spacing: float = 4.0, lng: float = 0.0, clearance: float = 0.0,
                      speed: float = 0.0) -> None:
        """Every vehicle side by side in the order given, as :meth:`Fleet.place_on_road`."""
        offsets = (np.arange(len(self)) - (len(self) - 1) / 2.0) * spacing
        for i in range(len(self)):
            self[i].place_on_road(lng=lng, lat=float(offsets[i]), clearance=clearance, speed=speed)
        for f in self.fleets:
            f.time, f.steps = 0.0, 0
        self.time = 0.0

    def step(self, dt: float) -> bool:
        """Advance every fleet by ``dt``; False if any component aborted its fleet's update."""
        ok = [f.step(dt) for f in self.fleets]
        self.time += dt
        return all(ok)


class MemberSteps(Component):
    """Runs one per-vehicle component on every fleet member in turn (each a ``Vehicle`` view).

    For parts with no batch kernel (a user's drivetrain plug-in): correct, not fast.
    """

    def __init__(self, fleet: Fleet, make: Callable[[Vehicle], Component]) -> None:
        self._fleet = fleet
        self._make = make
        self.repack()

    def repack(self) -> None:
        """Rebuild the per-vehicle components over the members' current params."""
        self._components = [self._make(self._fleet[i]) for i in range(len(self._fleet))]

    def update(self, dt: float, context: SimulationContext) -> bool:
        return all([c.update(dt, context) for c in self._components])


__all__ = ["Fleet", "FleetCommands", "MemberSteps", "Scene", "build_batch_sequence", "topology"]
