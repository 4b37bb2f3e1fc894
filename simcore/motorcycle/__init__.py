"""A two-wheeled, in-plane (longitudinal) motorcycle for the Simulation 3D Motorcycle block's
inputs: pitch, front and rear suspension, load transfer and braking, for the block's three types
(sports bike, motor bike, scooter), with its 4x3 Translation / Rotation arrays in SAE J670 axes
and its light-control vector.

::

    from simcore.motorcycle import Motorcycle, run_scenario
    bike, trace = run_scenario("scooter", "brake-test", dt=0.01)
    trace.translation[-1]      # (4, 3): body, handlebar, front wheel, rear wheel

See ``docs/motorcycle.md``.
"""

from simcore.motorcycle.functions import (
    SuspensionGeometry,
    braking_pitch_estimate,
    contact_forces,
    light_controls,
    pose_arrays,
    suspension_geometry,
)
from simcore.motorcycle.params import FRONT, REAR, MotorcycleParams
from simcore.motorcycle.presets import (
    DEFAULT_PRESET,
    MOTOR_BIKE,
    PRESETS,
    SCOOTER,
    SPORTS_BIKE,
    MotorcycleDesign,
    design_params,
    motorcycle_preset,
)
from simcore.motorcycle.simulation import (
    MOTORCYCLE_SCENARIOS,
    Motorcycle,
    MotorcycleComponent,
    MotorcycleScenario,
    MotorcycleTrace,
    get_motorcycle_scenario,
    run_scenario,
)
from simcore.motorcycle.states import (
    MotorcycleBodyState,
    MotorcycleCommands,
    MotorcyclePose,
    MotorcycleStates,
    MotorcycleWheelState,
)

__all__ = [
    "DEFAULT_PRESET", "FRONT", "MOTORCYCLE_SCENARIOS", "MOTOR_BIKE", "PRESETS", "REAR", "SCOOTER",
    "SPORTS_BIKE", "Motorcycle", "MotorcycleBodyState", "MotorcycleCommands", "MotorcycleComponent",
    "MotorcycleDesign", "MotorcycleParams", "MotorcyclePose", "MotorcycleScenario", "MotorcycleStates",
    "MotorcycleTrace", "MotorcycleWheelState", "SuspensionGeometry", "braking_pitch_estimate",
    "contact_forces",
    "design_params", "get_motorcycle_scenario", "light_controls", "motorcycle_preset", "pose_arrays",
    "run_scenario", "suspension_geometry",
]
