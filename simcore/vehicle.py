"""Vehicle assembly: params and states containers, the default component sequence, the Python API.

A :class:`Vehicle` is params (:class:`VehicleParams`, immutable) + states
(:class:`VehicleStates`, mutable arrays) + a road + a simulation context + a
:class:`~simcore.component.ComponentSequence` whose components read ``vehicle.params`` and write
``vehicle.states``. ``vehicle.step(dt)`` runs the sequence once.

Default sequence (Vehicle2's direct-drive snippet, ``DirectDrivetrain.cpp``; the engine drive
uses the same shape with its own three drivetrain components)::

    rigid_body_begin      keep the velocities at the start of the step (previous velocities)
    command_response      commands -> brake torque, drive torque, steer angle per wheel
    actuation             which wheels have brake / drive torque
    road_geometry         plane + friction under each wheel (raycast or sweep)
    substep group x nb_substeps:
        suspension        jounce, compliance, suspension forces, anti-roll torque
        tire              tire directions, slips, grip, sticky state, tire forces
        constraints       sticky-tire and suspension-limit velocity constraint rows
        drivetrain        wheel spin integration (direct drive or engine drive)
        rigid_body        forces -> velocities -> constraints -> pose
    wheel                 rotation angle and wheel local pose

Every entry is named; ``vehicle.sequence.replace("tire", MyTire(vehicle))`` swaps one for the
user's own (see ``examples/custom_tire.py``).
"""

from __future__ import annotations

import dataclasses
import importlib
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from simcore.axle import AxleDescription
from simcore.braking.params import BrakeCommandResponseParams
from simcore.commands.states import (
    CommandResponseState,
    CommandState,
    DirectDriveGear,
    DirectDriveTransmissionCommandState,
    EngineDriveTransmissionCommandState,
    TankDriveTransmissionCommandState,
)
from simcore.component import Component, ComponentSequence
from simcore.context import SimulationContext
from simcore.drivetrain.direct_drive import (
    DirectDriveActuationStateComponent,
    DirectDriveCommandResponseComponent,
    DirectDriveThrottleCommandResponseParams,
    DirectDrivetrainComponent,
)
from simcore.frame import DEFAULT_FRAME, DEFAULT_SCALE, Frame, Scale
from simcore.limits import check_param_bounds, check_vehicle_states
from simcore.maths import quat_normalize, quat_rotate
from simcore.physx_actor.params import PhysXActorParams
from simcore.physx_actor.states import PhysXActorState
from simcore.rigid_body.components import (
    RigidBodyBeginComponent,
    RigidBodyComponent,
    VehicleConstraintComponent,
)
from simcore.rigid_body.constraints import SuspensionLimitConstraintParams, VehicleConstraintState
from simcore.rigid_body.params import RigidBodyParams
from simcore.rigid_body.states import RigidBodyState
from simcore.road.components import RoadGeometryQueryComponent
from simcore.road.geometry import PlaneRoad, RoadGeometry
from simcore.road.params import RoadGeometryQueryParams
from simcore.road.states import RoadGeometryState
from simcore.steering.params import AckermannParams, SteerCommandResponseParams
from simcore.suspension.components import SuspensionComponent
from simcore.suspension.params import (
    AntiRollBarParams,
    SuspensionComplianceParams,
    SuspensionForceParams,
    SuspensionParams,
    SuspensionStateCalculationParams,
)
from simcore.suspension.states import (
    AntiRollForce,
    SuspensionComplianceState,
    SuspensionForce,
    SuspensionState,
)
from simcore.tire.components import TireComponent
from simcore.tire.params import TireForceParams
from simcore.tire.states import (
    TireCamberState,
    TireDirectionState,
    TireForce,
    TireGripState,
    TireSlipState,
    TireSpeedState,
    TireStickyState,
)
from simcore.wheel.components import WheelComponent
from simcore.wheel.params import WheelParams
from simcore.wheel.states import WheelActuationState, WheelLocalPoseState, WheelRigidBody1dState

#: Substeps of the default sequence's substep group (Vehicle2's snippets use 3).
DEFAULT_NB_SUBSTEPS = 3

# --------------------------------------------------------------------------------------------
# Params
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class VehicleParams:
    """Every parameter of one vehicle, each a Vehicle2-named params object (None for absent parts).

    All values are expressed in ``frame`` and ``scale`` (the description's own frame and length
    unit); :meth:`transform_and_scale` converts the whole set. Per-wheel params hold all wheels.
    ``brake_command_response`` is (brake pedal, handbrake). A direct-drive vehicle sets
    ``direct_drive_throttle_response``; an engine-drive vehicle sets ``engine`` ... ``differential``
    (helper D's types) instead.
    """

    axle_description: AxleDescription
    rigid_body: RigidBodyParams
    suspension_state_calculation: SuspensionStateCalculationParams
    suspension: SuspensionParams
    suspension_compliance: SuspensionComplianceParams
    suspension_force: SuspensionForceParams
    tire_force: TireForceParams
    wheel: WheelParams
    brake_command_response: tuple[BrakeCommandResponseParams, ...]
    steer_command_response: SteerCommandResponseParams
    ackermann: tuple[AckermannParams, ...] = ()
    anti_roll_bars: tuple[AntiRollBarParams, ...] = ()
    direct_drive_throttle_response: DirectDriveThrottleCommandResponseParams | None = None
    road_geometry_query: RoadGeometryQueryParams = field(default_factory=RoadGeometryQueryParams)
    suspension_limit_constraint: SuspensionLimitConstraintParams = field(
        default_factory=SuspensionLimitConstraintParams)
    frame: Frame = DEFAULT_FRAME
    scale: Scale = DEFAULT_SCALE
    engine: Any = None
    gearbox: Any = None
    autobox: Any = None
    clutch_command_response: Any = None
    clutch: Any = None
    differential: Any = None
    #: The chassis as a PhysX rigid actor (:mod:`simcore.physx_actor`); None: a pure Vehicle2 body.
    physx_actor: PhysXActorParams | None = None

    def __post_init__(self) -> None:
        for name in ("brake_command_response", "ackermann", "anti_roll_bars"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    @property
    def nb_wheels(self) -> int:
        """Number of wheels."""
        return self.axle_description.nb_wheels

    @property
    def drivetrain(self) -> str:
        """``"engine"`` when an engine is present, else ``"direct"``."""
        return "engine" if self.engine is not None else "direct"

    def replace(self, **changes: Any) -> VehicleParams:
        """A copy with some fields replaced (params are immutable)."""
        return replace(self, **changes)

    def validate(self) -> None:
        """Validate every part and the wheel counts, then the physical bounds of
        :data:`simcore.limits.PARAM_BOUNDS` (a :class:`~simcore.limits.ParamBoundsError`);
        ``ValueError`` names the part, field and wheel.

        Params are immutable, so a set that passed is remembered and not checked again (a fleet
        of 1,000 copies validates once)."""
        if self in _VALIDATED:
            return
        n = self.nb_wheels
        ax = self.axle_description
        ax.validate()
        self.rigid_body.validate()
        self.suspension_state_calculation.validate()
        for name in ("suspension", "suspension_compliance", "suspension_force", "tire_force", "wheel"):
            part = getattr(self, name)
            if part.nb_wheels != n:
                raise ValueError(f"VehicleParams.{name} has {part.nb_wheels} wheels; the axle description "
                                 f"has {n}")
            part.validate()
        if len(self.brake_command_response) != 2:
            raise ValueError("VehicleParams.brake_command_response needs 2 entries (brake, handbrake), got "
                             f"{len(self.brake_command_response)}")
        for i, b in enumerate(self.brake_command_response):
            _check_multipliers(f"brake_command_response[{i}]", b, n)
            b.validate(ax)
        _check_multipliers("steer_command_response", self.steer_command_response, n)
        self.steer_command_response.validate(ax)
        for a in self.ackermann:
            a.validate(ax)
        for bar in self.anti_roll_bars:
            bar.validate(ax)
        self.road_geometry_query.validate()
        self.suspension_limit_constraint.validate()
        if self.physx_actor is not None:
            self.physx_actor.validate()
        plugin = drivetrain_plugin(self.drivetrain)
        if plugin.validate is not None:
            plugin.validate(self)
        # Last: Vehicle2's own checks name the more basic problem (a negative mass) first.
        check_param_bounds(self)
        _VALIDATED.add(self)

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> VehicleParams:
        """Every part converted from ``src`` to ``trg`` frame and scale; ``frame``/``scale`` become
        the target's."""
        changes: dict[str, Any] = {"frame": trg_frame, "scale": trg_scale}
        for f in fields(self):
            if f.name in ("axle_description", "frame", "scale"):
                continue
            value = getattr(self, f.name)
            if value is None:
                continue
            if isinstance(value, tuple):
                changes[f.name] = tuple(v.transform_and_scale(src_frame, trg_frame, src_scale, trg_scale)
                                        for v in value)
            else:
                changes[f.name] = value.transform_and_scale(src_frame, trg_frame, src_scale, trg_scale)
        return replace(self, **changes)

    def to(self, frame: Frame, scale: Scale | float | None = None) -> VehicleParams:
        """These params expressed in ``frame`` (and ``scale``, default unchanged)."""
        trg_scale = self.scale if scale is None else (scale if isinstance(scale, Scale) else Scale(scale))
        return self.transform_and_scale(self.frame, frame, self.scale, trg_scale)


#: Params sets that passed :meth:`VehicleParams.validate` (immutable, so they stay valid).
_VALIDATED: weakref.WeakSet[VehicleParams] = weakref.WeakSet()


def _check_multipliers(name: str, params: Any, n: int) -> None:
    m = params.wheel_response_multipliers.shape[0]
    if m != n:
        raise ValueError(f"VehicleParams.{name}.wheel_response_multipliers has {m} entries; the vehicle has "
                         f"{n} wheels")


# --------------------------------------------------------------------------------------------
# States
# --------------------------------------------------------------------------------------------


@dataclass(eq=False)
class VehicleStates:
    """Every state of one vehicle (None for parts the vehicle lacks). Arrays are updated in place.

    Build with :meth:`for_params`; all per-wheel states have a leading wheel axis.
    """

    rigid_body: RigidBodyState
    road_geometry: RoadGeometryState
    commands: CommandState
    brake_command_response: CommandResponseState
    steer_command_response: CommandResponseState
    wheel_actuation: WheelActuationState
    suspension: SuspensionState
    suspension_compliance: SuspensionComplianceState
    suspension_force: SuspensionForce
    anti_roll_force: AntiRollForce
    tire_direction: TireDirectionState
    tire_speed: TireSpeedState
    tire_slip: TireSlipState
    tire_grip: TireGripState
    tire_camber: TireCamberState
    tire_sticky: TireStickyState
    tire_force: TireForce
    wheel_rigid_body_1d: WheelRigidBody1dState
    wheel_local_pose: WheelLocalPoseState
    constraints: VehicleConstraintState
    direct_drive_transmission: DirectDriveTransmissionCommandState | None = None
    direct_drive_throttle_response: CommandResponseState | None = None
    engine_drive_transmission: EngineDriveTransmissionCommandState | None = None
    tank_drive_transmission: TankDriveTransmissionCommandState | None = None
    clutch_command_response: Any = None
    throttle_command_response: Any = None
    engine: Any = None
    gearbox: Any = None
    autobox: Any = None
    differential: Any = None
    clutch_slip: Any = None
    #: Working data of the engine drive's differential (rebuilt every update; not recorded).
    wheel_constraint_group: Any = None
    #: The chassis actor (present when ``VehicleParams.physx_actor`` is set).
    physx_actor: PhysXActorState | None = None

    @classmethod
    def for_params(cls, params: VehicleParams) -> VehicleStates:
        """States at Vehicle2's defaults for a vehicle with these params."""
        n = params.nb_wheels
        states = cls(
            rigid_body=RigidBodyState(),
            road_geometry=RoadGeometryState.default(n),
            commands=CommandState(),
            brake_command_response=CommandResponseState.default(n),
            steer_command_response=CommandResponseState.default(n),
            wheel_actuation=WheelActuationState.default(n),
            suspension=SuspensionState.default(n),
            suspension_compliance=SuspensionComplianceState.default(n),
            suspension_force=SuspensionForce.default(n),
            anti_roll_force=AntiRollForce.default(n),
            tire_direction=TireDirectionState.default(n),
            tire_speed=TireSpeedState.default(n),
            tire_slip=TireSlipState.default(n),
            tire_grip=TireGripState.default(n),
            tire_camber=TireCamberState.default(n),
            tire_sticky=TireStickyState.default(n),
            tire_force=TireForce.default(n),
            wheel_rigid_body_1d=WheelRigidBody1dState.default(n),
            wheel_local_pose=WheelLocalPoseState.default(n),
            constraints=VehicleConstraintState.default(n),
        )
        if params.physx_actor is not None:
            states.physx_actor = PhysXActorState()
        plugin = drivetrain_plugin(params.drivetrain)
        for name, value in plugin.make_states(params).items():
            if name not in _STATE_NAMES:
                raise ValueError(f"drivetrain {plugin.name!r} made an unknown state {name!r}")
            setattr(states, name, value)
        return states

    def items(self) -> Iterator[tuple[str, Any]]:
        """(name, state) for every present state."""
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                yield f.name, value

    def set_to_default(self) -> None:
        """Reset every state in place to Vehicle2's defaults (commands released, body at identity)."""
        for _, value in self.items():
            value.set_to_default()

    def copy(self) -> VehicleStates:
        """Deep copy of every state (for snapshots and comparisons)."""
        return replace(self, **{name: _copy_state(value) for name, value in self.items()})


_STATE_NAMES = frozenset(f.name for f in fields(VehicleStates))


def _copy_state(value: Any) -> Any:
    if hasattr(value, "copy"):
        return value.copy()
    if dataclasses.is_dataclass(value):
        return replace(value, **{f.name: np.array(getattr(value, f.name), copy=True)
                                 if isinstance(getattr(value, f.name), np.ndarray) else getattr(value, f.name)
                                 for f in fields(value)})
    return value


# --------------------------------------------------------------------------------------------
# Drivetrain plug-ins
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DrivetrainPlugin:
    """How a drivetrain kind extends a vehicle.

    ``make_states(params) -> {state name: state}`` adds its states (names from
    :class:`VehicleStates`); ``make_components(vehicle) -> (command_response, actuation,
    drivetrain)`` gives the three components the default sequence places as in Vehicle2's snippets;
    ``validate(params)`` (optional) checks the drivetrain's params, raising ``ValueError``;
    ``make_batch_components(fleet)`` (optional) gives the same three as batch components over a
    :class:`~simcore.fleet.Fleet` (without it a fleet runs ``make_components`` member by member).
    """

    name: str
    make_states: Callable[[VehicleParams], dict[str, Any]]
    make_components: Callable[[Vehicle], tuple[Component, Component, Component]]
    validate: Callable[[VehicleParams], None] | None = None
    make_batch_components: Callable[[Any], tuple[Component, Component, Component]] | None = None


_DRIVETRAINS: dict[str, DrivetrainPlugin] = {}
#: Modules imported on first use of a drivetrain kind that is not registered yet (they register it).
_DRIVETRAIN_MODULES = {"engine": "simcore.drivetrain.engine_drive.components"}


def register_drivetrain(plugin: DrivetrainPlugin) -> None:
    """Make a drivetrain kind available to :class:`VehicleStates` and the default sequence."""
    _DRIVETRAINS[plugin.name] = plugin


def drivetrain_plugin(name: str) -> DrivetrainPlugin:
    """The registered plug-in for ``name`` (importing its module on first use)."""
    if name not in _DRIVETRAINS and name in _DRIVETRAIN_MODULES:
        try:
            importlib.import_module(_DRIVETRAIN_MODULES[name])
        except ImportError as exc:
            module = _DRIVETRAIN_MODULES[name]
            raise ValueError(f"drivetrain {name!r}: cannot import {module} ({exc})") from exc
    try:
        return _DRIVETRAINS[name]
    except KeyError:
        raise ValueError(f"no drivetrain {name!r} registered (have {sorted(_DRIVETRAINS)})") from None


def _validate_direct(params: VehicleParams) -> None:
    t = params.direct_drive_throttle_response
    if t is None:
        raise ValueError("VehicleParams: a direct-drive vehicle needs direct_drive_throttle_response "
                         "(or engine params for an engine drive)")
    _check_multipliers("direct_drive_throttle_response", t, params.nb_wheels)
    t.validate(params.axle_description)


register_drivetrain(DrivetrainPlugin(
    name="direct",
    validate=_validate_direct,
    make_states=lambda p: {
        "direct_drive_transmission": DirectDriveTransmissionCommandState(),
        "direct_drive_throttle_response": CommandResponseState.default(p.nb_wheels),
    },
    make_components=lambda v: (DirectDriveCommandResponseComponent(v), DirectDriveActuationStateComponent(v),
                               DirectDrivetrainComponent(v)),
    make_batch_components=lambda fleet: _direct_batch_components(fleet),
))


def _direct_batch_components(fleet: Any) -> tuple[Component, Component, Component]:
    from simcore.drivetrain.direct_batch import (
        DirectDriveActuationBatchComponent,
        DirectDriveCommandResponseBatchComponent,
        DirectDrivetrainBatchComponent,
    )

    return (DirectDriveCommandResponseBatchComponent(fleet), DirectDriveActuationBatchComponent(fleet),
            DirectDrivetrainBatchComponent(fleet))


# --------------------------------------------------------------------------------------------
# Sequence
# --------------------------------------------------------------------------------------------


#: Entry names of the default sequence: before the substep group, inside it, after it.
DEFAULT_LAYOUT = (("rigid_body_begin", "command_response", "actuation", "road_geometry"),
                  ("suspension", "tire", "constraints", "drivetrain", "rigid_body"),
                  ("wheel",))
#: The same with the PhysX actor layer (``VehicleParams.physx_actor``), in the order of PhysX's own
#: vehicles: the body is read from the actor, the rows are built once after the update and the
#: scene solves them (``physx_actor_end``) instead of the rigid body in every substep.
PHYSX_ACTOR_LAYOUT = (("physx_actor_begin", "command_response", "actuation", "road_geometry"),
                      ("suspension", "tire", "drivetrain", "rigid_body"),
                      ("wheel", "constraints", "physx_actor_end"))


def sequence_layout(params: VehicleParams) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """:data:`PHYSX_ACTOR_LAYOUT` for a vehicle with a PhysX actor, else :data:`DEFAULT_LAYOUT`."""
    return PHYSX_ACTOR_LAYOUT if params.physx_actor is not None else DEFAULT_LAYOUT


def build_default_sequence(vehicle: Vehicle, nb_substeps: int = DEFAULT_NB_SUBSTEPS) -> ComponentSequence:
    """The Vehicle2 snippet sequence for ``vehicle`` (see the module docstring), named entries."""
    plugin = drivetrain_plugin(vehicle.params.drivetrain)
    command_response, actuation, drivetrain = plugin.make_components(vehicle)
    actor = vehicle.params.physx_actor is not None
    parts: dict[str, Component] = {
        "command_response": command_response, "actuation": actuation, "drivetrain": drivetrain,
        "road_geometry": RoadGeometryQueryComponent(vehicle), "suspension": SuspensionComponent(vehicle),
        "tire": TireComponent(vehicle), "constraints": VehicleConstraintComponent(vehicle),
        "rigid_body": RigidBodyComponent(vehicle, solve_constraints=not actor),
        "wheel": WheelComponent(vehicle),
    }
    if actor:
        # The actor layer's components are the batch ones over this vehicle's row of its fleet.
        from simcore.physx_actor.components import PhysXActorBeginBatchComponent, PhysXActorEndBatchComponent

        row = getattr(vehicle, "fleet_row", None)
        if row is None and vehicle.fleet is not None:
            row = (vehicle.fleet, 0)
        if row is None:
            raise ValueError("Vehicle: the PhysX actor layer runs on a fleet's rows; build the vehicle as "
                             "Vehicle(params) or take it from a Fleet")
        one = row[0].row(row[1])
        begin = PhysXActorBeginBatchComponent(one)
        parts |= {"physx_actor_begin": begin, "physx_actor_end": PhysXActorEndBatchComponent(one, begin)}
    else:
        parts["rigid_body_begin"] = RigidBodyBeginComponent(vehicle)
    before, substeps, after = sequence_layout(vehicle.params)
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


# --------------------------------------------------------------------------------------------
# Commands facade
# --------------------------------------------------------------------------------------------

_GEAR_NAMES = {
    "reverse": DirectDriveGear.REVERSE, "r": DirectDriveGear.REVERSE,
    "neutral": DirectDriveGear.NEUTRAL, "n": DirectDriveGear.NEUTRAL,
    "forward": DirectDriveGear.FORWARD, "drive": DirectDriveGear.FORWARD, "d": DirectDriveGear.FORWARD,
}


class VehicleCommands:
    """Driver inputs of a vehicle: ``throttle`` [0, 1], ``brake`` [0, 1], ``handbrake`` [0, 1],
    ``steer`` [-1, 1] and ``gear``, read and written through to ``vehicle.states``.

    ``gear``: for a direct drive a :class:`~simcore.commands.states.DirectDriveGear` (or ``"forward"``,
    ``"neutral"``, ``"reverse"``); for an engine drive the target gear index.
    """

    def __init__(self, vehicle: Vehicle) -> None:
        self._vehicle = vehicle

    @property
    def _state(self) -> CommandState:
        return self._vehicle.states.commands

    @property
    def throttle(self) -> float:
        return float(self._state.throttle)

    @throttle.setter
    def throttle(self, value: float) -> None:
        self._state.throttle = _in_range("throttle", value, 0.0, 1.0)

    @property
    def brake(self) -> float:
        return self._state.brake

    @brake.setter
    def brake(self, value: float) -> None:
        self._state.brake = _in_range("brake", value, 0.0, 1.0)

    @property
    def handbrake(self) -> float:
        return self._state.handbrake

    @handbrake.setter
    def handbrake(self, value: float) -> None:
        self._state.handbrake = _in_range("handbrake", value, 0.0, 1.0)

    @property
    def steer(self) -> float:
        return float(self._state.steer)

    @steer.setter
    def steer(self, value: float) -> None:
        self._state.steer = _in_range("steer", value, -1.0, 1.0)

    @property
    def gear(self) -> int:
        s = self._vehicle.states
        if s.direct_drive_transmission is not None:
            return int(s.direct_drive_transmission.gear)
        t = s.engine_drive_transmission or s.tank_drive_transmission
        if t is None:
            raise AttributeError("this vehicle has no transmission command state")
        return int(t.target_gear)

    @gear.setter
    def gear(self, value: int | str) -> None:
        s = self._vehicle.states
        if s.direct_drive_transmission is not None:
            if isinstance(value, str):
                key = value.strip().lower()
                if key not in _GEAR_NAMES:
                    raise ValueError(f"gear: expected 'forward', 'neutral' or 'reverse', got {value!r}")
                value = _GEAR_NAMES[key]
            g = int(value)
            if g not in (0, 1, 2):
                raise ValueError(
                    f"gear: a direct drive has REVERSE (0), NEUTRAL (1), FORWARD (2); got {value!r}"
                )
            s.direct_drive_transmission.gear = g
            return
        t = s.engine_drive_transmission or s.tank_drive_transmission
        if t is None:
            raise AttributeError("this vehicle has no transmission command state")
        t.target_gear = int(value)

    def set(self, **values: float | int | str) -> None:
        """Set several commands at once, e.g. ``set(throttle=1.0, steer=0.2)``."""
        for name, value in values.items():
            if name not in ("throttle", "brake", "handbrake", "steer", "gear"):
                raise AttributeError(f"unknown command {name!r} (throttle, brake, handbrake, steer, gear)")
            setattr(self, name, value)

    def release(self) -> None:
        """Throttle, brakes and steer back to zero (gear unchanged)."""
        self._state.throttle = 0.0
        self._state.steer = 0.0
        self._state.brakes[:] = 0.0

    def __repr__(self) -> str:
        return (f"VehicleCommands(throttle={self.throttle}, brake={self.brake}, handbrake={self.handbrake}, "
                f"steer={self.steer})")


def _in_range(name: str, value: float, lo: float, hi: float) -> float:
    v = float(value)
    if not lo <= v <= hi:
        raise ValueError(f"{name} command must be in [{lo}, {hi}], got {value!r}")
    return v


# --------------------------------------------------------------------------------------------
# Vehicle
# --------------------------------------------------------------------------------------------


def _adopt(states: VehicleStates, params: VehicleParams) -> VehicleStates:
    """``states`` if they fit ``params`` (same state set and wheel count), else ValueError."""
    want = VehicleStates.for_params(params)
    have = {name for name, _ in states.items()}
    need = {name for name, _ in want.items()}
    if have != need:
        raise ValueError(f"Vehicle: the given states have {sorted(have ^ need)} where the params need "
                         f"{sorted(need)}")
    n = states.wheel_rigid_body_1d.rotation_speed.shape[0]
    if n != params.nb_wheels:
        raise ValueError(f"Vehicle: the given states have {n} wheels, the params {params.nb_wheels}")
    return states


def default_context(
    frame: Frame = DEFAULT_FRAME, scale: Scale = DEFAULT_SCALE, g: float = 9.81
) -> SimulationContext:
    """Vehicle2's default context in ``frame`` and ``scale``: gravity ``g`` (metres / s^2) along
    ``-frame.vrt``, default slip and sticky params and wheel-angle threshold, all scaled."""
    metres = SimulationContext(gravity=-g * frame.vrt, frame=frame, scale=DEFAULT_SCALE)
    return metres.transform_and_scale(frame, frame, DEFAULT_SCALE, scale)


class Vehicle:
    """One simulated vehicle.

    ``Vehicle(params, road=None, context=None, nb_substeps=3, sequence=None, states=None)``:
    ``states`` adopts existing states instead of fresh defaults (a fleet member's row views,
    :class:`simcore.fleet.Fleet`); the road defaults to flat ground
    through the origin (friction 1) and the context to gravity 9.81 m/s^2 along ``-frame.vrt``;
    both must be in the params' frame and scale. The body starts at ``pose`` (default: identity,
    i.e. the centre of mass at the origin — call :meth:`place` to put it above the road).

    Attributes: ``params`` (replaceable with another :class:`VehicleParams` of the same vehicle),
    ``states``, ``road``, ``context``, ``sequence`` (editable / replaceable), ``commands``.
    """

    def __init__(
        self,
        params: VehicleParams,
        road: RoadGeometry | None = None,
        context: SimulationContext | None = None,
        nb_substeps: int = DEFAULT_NB_SUBSTEPS,
        sequence: ComponentSequence | None = None,
        states: VehicleStates | None = None,
    ) -> None:
        params.validate()
        self._params = params
        self.context = context if context is not None else default_context(params.frame, params.scale)
        self._check_context(self.context)
        self.road: RoadGeometry = road if road is not None else PlaneRoad.ground(params.frame)
        if states is None:
            # A vehicle of its own is a fleet of one: the same compiled kernels step it as step a
            # fleet of thousands, and its states are views of that batch's row.
            from simcore.fleet.fleet import Fleet

            self._fleet: Any = Fleet([params], self.road, self.context, nb_substeps, validated=True)
            self._states = self._fleet.member_states(0)
            default_sequence = self._fleet.sequence
        else:
            # A fleet member (or states the caller owns): the per-vehicle components run it.
            self._fleet = None
            self._states = _adopt(states, params)
            default_sequence = None
        self.commands = VehicleCommands(self)
        self._nb_substeps = nb_substeps
        # A fleet member builds its per-vehicle sequence only if it is stepped on its own.
        self._sequence: ComponentSequence | None = sequence if sequence is not None else default_sequence
        self.time = 0.0
        #: Steps since construction or the last :meth:`place_on_road` (numbers divergence errors).
        self.steps = 0
        #: Check the states after every step (:func:`simcore.limits.check_vehicle_states`).
        self.check_divergence = True

    @property
    def sequence(self) -> ComponentSequence:
        """The component sequence :meth:`step` runs (editable, replaceable): the fleet-of-one's
        batch components, or for a fleet member the per-vehicle components."""
        if self._sequence is None:
            self._sequence = build_default_sequence(self, self._nb_substeps)
        return self._sequence

    @sequence.setter
    def sequence(self, value: ComponentSequence) -> None:
        self._sequence = value

    def reference_sequence(self) -> ComponentSequence:
        """The default sequence built from the per-vehicle components over this vehicle's states:
        the plain-numpy reference the compiled kernels are tested against (slow; built once).

        ``vehicle.reference_sequence().get("tire").update(dt, vehicle.context)`` runs the
        reference tire on the vehicle's current states, in place."""
        if getattr(self, "_reference", None) is None:
            self._reference = build_default_sequence(self, self.sequence.get_substeps(1)
                                                     if self.sequence.nb_groups > 1 else DEFAULT_NB_SUBSTEPS)
        return self._reference

    def _check_context(self, context: SimulationContext) -> None:
        p = self._params
        if context.frame != p.frame or context.scale.scale != p.scale.scale:
            raise ValueError(
                f"Vehicle: the context's frame/scale ({context.frame}, {context.scale.scale}) differ from "
                f"the params' ({p.frame}, {p.scale.scale}); convert one with transform_and_scale first"
            )

    @property
    def params(self) -> VehicleParams:
        """The vehicle's params. Assign a new (validated, same wheel count) set to change them."""
        return self._params

    @params.setter
    def params(self, value: VehicleParams) -> None:
        value.validate()
        if value.nb_wheels != self._params.nb_wheels or value.drivetrain != self._params.drivetrain:
            raise ValueError("Vehicle.params: the new params must keep the wheel count and drivetrain kind")
        if self._fleet is not None:
            self._fleet.set_params(0, value)
        self._params = value

    @property
    def fleet(self) -> Any:
        """The batch this vehicle runs in: a :class:`~simcore.fleet.Fleet` of one, whose
        ``sequence`` is this vehicle's (None for a fleet member or adopted states)."""
        return self._fleet

    @property
    def states(self) -> VehicleStates:
        """Every state of the vehicle (arrays updated in place by the components).

        Assigning a whole :class:`VehicleStates` (e.g. a snapshot from ``states.copy()``) copies
        its values in, so the components keep working on the same memory."""
        return self._states

    @states.setter
    def states(self, value: VehicleStates) -> None:
        if self._fleet is None:
            self._states = _adopt(value, self._params)
            return
        _adopt(value, self._params)
        for name, state in value.items():
            target = getattr(self._states, name)
            for f in fields(state):
                setattr(target, f.name, getattr(state, f.name))

    @property
    def nb_wheels(self) -> int:
        """Number of wheels."""
        return self._params.nb_wheels

    @property
    def frame(self) -> Frame:
        """The frame the vehicle is simulated in."""
        return self._params.frame

    def place(self, pos: np.ndarray | list[float], quat: np.ndarray | list[float] | None = None,
              linear_velocity: np.ndarray | list[float] | None = None,
              angular_velocity: np.ndarray | list[float] | None = None) -> None:
        """Set the body pose (and optionally velocities); previous velocities follow."""
        rb = self.states.rigid_body
        rb.pos[:] = np.asarray(pos, dtype=np.float64)
        if quat is not None:
            rb.quat[:] = quat_normalize(np.asarray(quat, dtype=np.float64))
        if linear_velocity is not None:
            rb.linear_velocity[:] = np.asarray(linear_velocity, dtype=np.float64)
        if angular_velocity is not None:
            rb.angular_velocity[:] = np.asarray(angular_velocity, dtype=np.float64)
        rb.previous_linear_velocity[:] = rb.linear_velocity
        rb.previous_angular_velocity[:] = rb.angular_velocity
        actor = self.states.physx_actor
        if actor is not None:  # the actor is what the next step reads the body from
            from simcore.physx_actor.components import actor_pose_from_body

            actor.pos[:], actor.quat[:] = actor_pose_from_body(self._params, rb.pos, rb.quat)
            actor.linear_velocity[:] = rb.linear_velocity
            actor.angular_velocity[:] = rb.angular_velocity
            actor.is_sleeping = False
            actor.wake_counter = self._params.physx_actor.wake_counter_reset

    def place_on_road(self, lng: float = 0.0, lat: float = 0.0, clearance: float = 0.0,
                      speed: float = 0.0) -> None:
        """Reset all states and put the body level at (lng, lat) above the road, the wheels that reach
        least far at max droop ``clearance`` above the ground (negative: that far into the suspension
        travel, e.g. near the static sag), moving forward at ``speed`` with wheels rolling at
        ``speed / radius``.

        Lengths and speeds are in the vehicle's scale; the ground height is found by a vertical
        raycast of the road under (lng, lat).
        """
        p = self._params
        f = p.frame
        down = p.suspension.suspension_travel_dir @ (-f.vrt)
        reach = (p.suspension.suspension_attachment_pos @ (-f.vrt)
                 + p.suspension.suspension_travel_dist * down + p.wheel.radius)
        start = f.compute_translation(lng, lat, 0.0) + f.vrt * (100.0 * p.scale.scale)
        hits = self.road.raycast(start[None, :], (-f.vrt)[None, :], np.array([1000.0 * p.scale.scale]))
        ground = float(hits.position[0] @ f.vrt) if hits.hit[0] else 0.0
        height = ground + float(np.min(reach)) + clearance
        self.states.set_to_default()
        self.place(f.compute_translation(lng, lat, height), linear_velocity=f.lng * speed)
        self.states.wheel_rigid_body_1d.rotation_speed[:] = speed / p.wheel.radius
        self.time = 0.0
        self.steps = 0

    def step(self, dt: float) -> bool:
        """Advance by ``dt`` (time): run the component sequence once. False if a component aborted.

        Then, unless ``check_divergence`` is False, the states are checked against
        :mod:`simcore.limits`' divergence bounds: a blown-up simulation raises
        :class:`~simcore.limits.SimulationDiverged` naming the step, object and attribute (an
        attached recorder has written this step already).
        """
        from simcore.fleet.fleet import update_sequence

        sequence = self.sequence
        if self._fleet is not None and sequence is self._fleet.sequence:
            ok = update_sequence(sequence, self._fleet.states, self.context, dt)
        else:
            rule = self.context.substep_rule
            if rule is not None and sequence.nb_groups > 1:
                sequence.set_substeps(1, int(rule.substeps(np.array([self.forward_speed]))[0]))
            ok = sequence.update(dt, self.context)
        self.time += dt
        self.steps += 1
        if self.check_divergence:
            check_vehicle_states(self.states, self._params.scale.scale, self.steps)
        return ok

    def run(self, duration: float, dt: float, callback: Callable[[Vehicle], None] | None = None) -> None:
        """Step ``round(duration / dt)`` times, calling ``callback(vehicle)`` after each step."""
        for _ in range(int(round(duration / dt))):
            self.step(dt)
            if callback is not None:
                callback(self)

    # convenient read-outs --------------------------------------------------------------------

    @property
    def pos(self) -> np.ndarray:
        """Body (centre of mass) position, (3,) view."""
        return self.states.rigid_body.pos

    @property
    def quat(self) -> np.ndarray:
        """Body orientation [x, y, z, w], (4,) view."""
        return self.states.rigid_body.quat

    @property
    def forward_speed(self) -> float:
        """Body velocity along its forward axis (``length / time``)."""
        return self.states.rigid_body.longitudinal_speed(self.frame)

    @property
    def yaw_rate(self) -> float:
        """Angular velocity about the body's vertical axis (rad / time)."""
        rb = self.states.rigid_body
        return float(rb.angular_velocity @ quat_rotate(rb.quat, self.frame.vrt))

    def __repr__(self) -> str:
        return (f"Vehicle({self.nb_wheels} wheels, {self._params.drivetrain} drive, t={self.time:.3f}, "
                f"pos={np.round(self.pos, 4).tolist()})")
