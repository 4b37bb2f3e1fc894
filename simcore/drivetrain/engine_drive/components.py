"""Engine-drive components (``PxVehicleDrivetrainComponents.h``): they only wire.

Each is built with the :class:`~simcore.vehicle.Vehicle` it serves and reads
``vehicle.params.<name>`` / writes ``vehicle.states.<name>`` under the names of the simcore
contract. Sequence of an engine-drive vehicle (Vehicle2's ``EngineDriveVehicle``):

1. :class:`EngineDriveCommandResponseComponent` — autobox, brakes, gear, clutch, throttle, steer;
2. a differential component (:func:`differential_state_component` picks it from
   ``params.differential``);
3. :class:`EngineDriveActuationStateComponent`;
4. road geometry query, then in the substep group: suspension, tire,
   :class:`EngineDrivetrainComponent` (gearbox + engine and wheel speeds), rigid body;
5. wheel rotation angle and local pose.

The tank's transmission commands live in ``states.tank_drive_transmission`` (a
``TankDriveTransmissionCommandState``: target gear, clutch and thrusts); other vehicles use
``states.engine_drive_transmission``. The wheel constraint groups (tank tracks, engaged limited
slip) are written by the differential component and read by the drivetrain component from
``states.wheel_constraint_group``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from simcore.braking.functions import brake_command_response_update
from simcore.commands.states import (
    AUTOMATIC_GEAR,
    EngineDriveTransmissionCommandState,
    TankDriveTransmissionCommandState,
)
from simcore.component import Component
from simcore.context import SimulationContext
from simcore.drivetrain.engine_drive.functions import (
    autobox_update,
    clutch_command_response_linear_update,
    clutch_strength,
    engine_drive_actuation_state_update,
    engine_drive_throttle_command_response_linear_update,
    engine_drivetrain_update,
    four_wheel_differential_state_update,
    gear_command_response_update,
    gearbox_update,
    multi_wheel_differential_state_update,
    tank_differential_state_update,
    tank_thrust_command_response,
)
from simcore.drivetrain.engine_drive.params import (
    FourWheelDriveDifferentialParams,
    MultiWheelDriveDifferentialParams,
    TankDriveDifferentialParams,
)
from simcore.drivetrain.engine_drive.states import (
    NO_GEAR_SWITCH_PENDING,
    AutoboxState,
    ClutchCommandResponseState,
    ClutchSlipState,
    DifferentialState,
    EngineDriveThrottleCommandResponseState,
    EngineState,
    GearboxState,
    WheelConstraintGroupState,
)
from simcore.steering.functions import ackermann_steer_update, steer_command_response_update
from simcore.vehicle import DrivetrainPlugin, register_drivetrain

if TYPE_CHECKING:
    from simcore.vehicle import Vehicle


def wheel_constraint_groups(states: Any, nb_wheels: int) -> WheelConstraintGroupState:
    """``states.wheel_constraint_group``, created on first use if the container has none yet.

    The constraint groups are rebuilt by the differential component every update, so they are
    working data rather than a state to reset or snapshot.
    """
    groups = getattr(states, "wheel_constraint_group", None)
    if groups is None:
        groups = WheelConstraintGroupState.default(nb_wheels)
        states.wheel_constraint_group = groups
    return groups


def transmission_commands(states: Any) -> Any:
    """The vehicle's engine transmission command state: the tank's if it has one."""
    tank = getattr(states, "tank_drive_transmission", None)
    return tank if tank is not None else states.engine_drive_transmission


class EngineDriveCommandResponseComponent(Component):
    """Commands -> brake torques, gear shift, clutch strength, throttle and steer angles
    (``PxVehicleEngineDriveCommandResponseComponent``).

    With ``params.autobox`` set and the target gear command at ``AUTOMATIC_GEAR``, the autobox
    picks the gear and may cut the throttle; it works on copies, the user's commands are not
    changed. Without an autobox an automatic command keeps the current target gear.

    Reads ``params.{brake_command_response, steer_command_response, ackermann, gearbox,
    clutch_command_response, engine, autobox}``, ``states.{commands, engine_drive_transmission or
    tank_drive_transmission, rigid_body, engine}``. Writes ``states.{brake_command_response,
    gearbox, clutch_command_response, throttle_command_response, steer_command_response,
    autobox}``.
    """

    def __init__(self, vehicle: Vehicle) -> None:
        self.vehicle = vehicle

    def update(self, dt: float, context: SimulationContext) -> bool:
        p, s = self.vehicle.params, self.vehicle.states
        c = s.commands
        tx = transmission_commands(s)
        throttle, target = c.throttle, tx.target_gear
        speed = s.rigid_body.longitudinal_speed(context.frame)
        if p.autobox is not None:
            res = autobox_update(p.engine, p.gearbox, p.autobox, s.engine.rotation_speed, s.gearbox, dt,
                                 target, s.autobox, throttle, out=s.autobox)
            target, throttle = res.target_gear_command, res.throttle
        elif target == AUTOMATIC_GEAR:
            target = s.gearbox.target_gear
        brake_command_response_update(c.brakes, c.nb_brakes, speed, p.brake_command_response,
                                      out=s.brake_command_response.response)
        gear_command_response_update(target, p.gearbox, s.gearbox, out=s.gearbox)
        clutch_command_response_linear_update(tx.clutch, p.clutch_command_response,
                                              out=s.clutch_command_response)
        s.throttle_command_response.command_response = (
            engine_drive_throttle_command_response_linear_update(throttle))
        steer = steer_command_response_update(c.steer, speed, p.steer_command_response)
        if p.ackermann:
            ackermann_steer_update(c.steer, p.steer_command_response, p.ackermann, steer)
        s.steer_command_response.response[:] = steer
        return True


class MultiWheelDriveDifferentialStateComponent(Component):
    """Open differential split (``PxVehicleMultiWheelDriveDifferentialStateComponent``).

    Reads ``params.{axle_description, differential}``; writes ``states.differential`` and clears
    ``states.wheel_constraint_group`` (an open differential constrains nothing).
    """

    def __init__(self, vehicle: Vehicle) -> None:
        self.vehicle = vehicle

    def update(self, dt: float, context: SimulationContext) -> bool:
        p, s = self.vehicle.params, self.vehicle.states
        multi_wheel_differential_state_update(p.axle_description, p.differential, out=s.differential)
        wheel_constraint_groups(s, p.nb_wheels).set_to_default()
        return True


class FourWheelDriveDifferentialStateComponent(Component):
    """Limited-slip split and constraint groups
    (``PxVehicleFourWheelDriveDifferentialStateComponent``).

    Reads ``params.{axle_description, differential}``, ``states.wheel_rigid_body_1d``; writes
    ``states.{differential, wheel_constraint_group}``. Unlike PhysX's snippet, which does not
    pass the groups on to the drivetrain for a four-wheel drive, our drivetrain applies them, so
    the limited slip acts.
    """

    def __init__(self, vehicle: Vehicle) -> None:
        self.vehicle = vehicle

    def update(self, dt: float, context: SimulationContext) -> bool:
        p, s = self.vehicle.params, self.vehicle.states
        four_wheel_differential_state_update(
            p.axle_description, p.differential, s.wheel_rigid_body_1d.rotation_speed, dt,
            out=s.differential, out_groups=wheel_constraint_groups(s, p.nb_wheels))
        return True


class TankDriveDifferentialStateComponent(Component):
    """Tank split and track constraints (``PxVehicleTankDriveDifferentialStateComponent``).

    The thrust commands first pass through the tank drive model of ``params.differential``
    (Stingray's standard: forwards only; special: both ways). Reads ``params.{axle_description,
    wheel, differential}``, ``states.tank_drive_transmission``; writes ``states.{differential,
    wheel_constraint_group}``.
    """

    def __init__(self, vehicle: Vehicle) -> None:
        self.vehicle = vehicle

    def update(self, dt: float, context: SimulationContext) -> bool:
        p, s = self.vehicle.params, self.vehicle.states
        t0, t1 = tank_thrust_command_response(s.tank_drive_transmission.thrusts, p.differential.drive_model)
        tank_differential_state_update(p.axle_description, p.wheel.radius, p.differential, t0, t1,
                                       out=s.differential, out_groups=wheel_constraint_groups(s, p.nb_wheels))
        return True


def differential_state_component(vehicle: Vehicle) -> Component:
    """The differential component matching ``vehicle.params.differential``'s type."""
    d = vehicle.params.differential
    if isinstance(d, TankDriveDifferentialParams):
        return TankDriveDifferentialStateComponent(vehicle)
    if isinstance(d, FourWheelDriveDifferentialParams):
        return FourWheelDriveDifferentialStateComponent(vehicle)
    if isinstance(d, MultiWheelDriveDifferentialParams):
        return MultiWheelDriveDifferentialStateComponent(vehicle)
    raise TypeError(
        f"vehicle.params.differential must be a differential params object, got {type(d).__name__}")


class EngineDriveActuationStateComponent(Component):
    """Brake / drive flags per wheel (``PxVehicleEngineDriveActuationStateComponent``).

    Reads ``params.gearbox``, ``states.{brake_command_response, throttle_command_response,
    gearbox, differential, clutch_command_response}``; writes ``states.wheel_actuation``.
    """

    def __init__(self, vehicle: Vehicle) -> None:
        self.vehicle = vehicle

    def update(self, dt: float, context: SimulationContext) -> bool:
        p, s = self.vehicle.params, self.vehicle.states
        k = clutch_strength(s.clutch_command_response.command_response, p.gearbox, s.gearbox.current_gear)
        braked, driven = engine_drive_actuation_state_update(
            s.brake_command_response.response, s.throttle_command_response.command_response, k,
            s.differential.torque_ratios_all_wheels)
        s.wheel_actuation.is_brake_applied[:] = braked
        s.wheel_actuation.is_drive_applied[:] = driven
        return True


class EngineDrivetrainComponent(Component):
    """Gearbox timer, then engine and wheel speeds through clutch, gears and differential
    (``PxVehicleEngineDrivetrainComponent``); replaces the direct drivetrain in the substep group.

    Reads ``params.{axle_description, wheel, engine, clutch, gearbox}``,
    ``states.{brake_command_response, wheel_actuation, tire_force, throttle_command_response,
    clutch_command_response, differential, wheel_constraint_group}``. Writes
    ``states.{gearbox, wheel_rigid_body_1d.rotation_speed, engine, clutch_slip}`` and, for a
    four-wheel differential with ``predict_breach``, the constraint groups it applied into
    ``states.wheel_constraint_group``.
    """

    def __init__(self, vehicle: Vehicle) -> None:
        self.vehicle = vehicle

    def update(self, dt: float, context: SimulationContext) -> bool:
        p, s = self.vehicle.params, self.vehicle.states
        gearbox_update(p.gearbox, dt, s.gearbox, out=s.gearbox)
        d = p.differential
        lsd = d if isinstance(d, FourWheelDriveDifferentialParams) and d.predict_breach else None
        res = engine_drivetrain_update(
            p.axle_description, p.wheel.moi, p.wheel.damping_rate, p.engine, p.clutch, p.gearbox,
            s.brake_command_response.response, s.wheel_actuation.is_brake_applied,
            s.tire_force.wheel_torque,
            s.gearbox.current_gear, s.throttle_command_response.command_response, s.clutch_command_response,
            s.differential, wheel_constraint_groups(s, p.nb_wheels), dt,
            s.wheel_rigid_body_1d.rotation_speed, s.engine.rotation_speed, limited_slip=lsd)
        s.wheel_rigid_body_1d.rotation_speed[:] = res.wheel_rotation_speeds
        s.engine.rotation_speed = res.engine_rotation_speed
        s.clutch_slip.clutch_slip = res.clutch_slip
        return True



# ----------------------------------------------------------------------------------------------
# Vehicle plug-in: states, validation and the components the default sequence places
# ----------------------------------------------------------------------------------------------


class ComponentChain(Component):
    """Runs named components in order as one sequence entry; stops at the first that returns False.

    The vehicle's default sequence has one slot between command response and road query; the
    engine drive needs two there (differential, then actuation), so it fills the slot with a
    chain. ``chain.get("differential")`` / ``chain.replace("differential", mine)`` reach inside.
    """

    def __init__(self, entries: list[tuple[str, Component]]) -> None:
        self.entries = list(entries)

    def get(self, name: str) -> Component:
        """The component named ``name``."""
        for n, c in self.entries:
            if n == name:
                return c
        raise KeyError(f"no component {name!r} in chain; names: {[n for n, _ in self.entries]}")

    def replace(self, name: str, component: Component) -> Component:
        """Swap the component named ``name`` for ``component``; return the old one."""
        for i, (n, c) in enumerate(self.entries):
            if n == name:
                self.entries[i] = (n, component)
                return c
        raise KeyError(f"no component {name!r} in chain; names: {[n for n, _ in self.entries]}")

    def update(self, dt: float, context: SimulationContext) -> bool:
        return all(c.update(dt, context) for _, c in self.entries)


def first_gear(gearbox: Any) -> int:
    """Index of the first forward gear, or neutral if the gearbox has no forward gear."""
    return gearbox.neutral_gear + 1 if gearbox.neutral_gear + 1 < gearbox.nb_ratios else gearbox.neutral_gear


def make_engine_drive_states(params: Any) -> dict[str, Any]:
    """The engine-drive states of a vehicle with these params, ready to drive off.

    As PhysX's engine-drive snippets do right after initialisation, the gearbox starts in first
    gear and the target gear command is ``AUTOMATIC_GEAR`` when an autobox is present (first gear
    otherwise). A tank gets a ``tank_drive_transmission`` (thrusts) instead of an
    ``engine_drive_transmission``.
    """
    n = params.nb_wheels
    gear = first_gear(params.gearbox)
    tank = isinstance(params.differential, TankDriveDifferentialParams)
    tx = TankDriveTransmissionCommandState() if tank else EngineDriveTransmissionCommandState()
    tx.target_gear = AUTOMATIC_GEAR if params.autobox is not None else gear
    states: dict[str, Any] = {
        "tank_drive_transmission" if tank else "engine_drive_transmission": tx,
        "clutch_command_response": ClutchCommandResponseState(),
        "throttle_command_response": EngineDriveThrottleCommandResponseState(),
        "engine": EngineState(),
        "gearbox": GearboxState(gear, gear),
        "autobox": AutoboxState(),
        "differential": DifferentialState.default(n),
        "clutch_slip": ClutchSlipState(),
        "wheel_constraint_group": WheelConstraintGroupState.default(n),
    }
    return states


def engage_first_gear(vehicle: Vehicle) -> None:
    """Put an engine-drive vehicle back in first gear with the automatic (or first) gear selected.

    ``Vehicle.place_on_road`` resets every state to Vehicle2's defaults, which for an engine
    drive means gear 0 (reverse); call this afterwards to drive off forwards.
    """
    p, s = vehicle.params, vehicle.states
    gear = first_gear(p.gearbox)
    s.gearbox.current_gear = s.gearbox.target_gear = gear
    s.gearbox.gear_switch_time = NO_GEAR_SWITCH_PENDING
    s.autobox.set_to_default()
    transmission_commands(s).target_gear = AUTOMATIC_GEAR if p.autobox is not None else gear


def validate_engine_drive_params(params: Any) -> None:
    """Check the engine-drive part of a vehicle's params; ``ValueError`` names the part and field."""
    for name in ("engine", "gearbox", "clutch_command_response", "clutch", "differential"):
        if getattr(params, name) is None:
            raise ValueError(f"VehicleParams.{name} is required for an engine-drive vehicle")
    params.engine.validate()
    params.gearbox.validate()
    if params.autobox is not None:
        params.autobox.validate(params.gearbox)
    params.clutch_command_response.validate()
    params.clutch.validate()
    d = params.differential
    if not isinstance(d, MultiWheelDriveDifferentialParams):
        raise ValueError(
            f"VehicleParams.differential must be a differential params object, got {type(d).__name__}")
    d.validate()
    if d.nb_wheels != params.nb_wheels:
        raise ValueError(
            f"VehicleParams.differential has {d.nb_wheels} wheels; the vehicle has {params.nb_wheels}")


def make_engine_drive_components(vehicle: Vehicle) -> tuple[Component, Component, Component]:
    """(command response, differential + actuation chain, drivetrain) for the default sequence."""
    chain = ComponentChain([("differential", differential_state_component(vehicle)),
                            ("actuation", EngineDriveActuationStateComponent(vehicle))])
    return EngineDriveCommandResponseComponent(vehicle), chain, EngineDrivetrainComponent(vehicle)


register_drivetrain(DrivetrainPlugin(
    name="engine",
    make_states=make_engine_drive_states,
    make_components=make_engine_drive_components,
    validate=validate_engine_drive_params,
    make_batch_components=lambda fleet: _engine_batch_components(fleet),
))


def _engine_batch_components(fleet: Any) -> tuple[Component, Component, Component]:
    from simcore.drivetrain.engine_drive.batch import engine_batch_components

    return engine_batch_components(fleet)
