"""The linear 2-DOF bicycle (single-track) model: params, equations, handling analysis, simulation.

Python use::

    from simcore.bicycle import BicycleParams, analyse, simulate
    p = BicycleParams(mass=1500, iz=2500, lf=1.2, lr=1.6, cf=80e3, cr=100e3, speed=20)
    a = analyse(p)                 # K, characteristic / critical speed, r/delta, poles, ...
    trace = simulate(p, steer=0.02, duration=3.0, dt=0.01)

Recording through PVD: :func:`simcore.bicycle.pvd.record_bicycle`; plots (matplotlib, the
``plots`` extra): :mod:`simcore.bicycle.plots`; conventions and derivation: ``docs/bicycle.md``.
"""

from simcore.bicycle.analysis import (
    BicycleAnalysis,
    StepMetrics,
    TransferFunction,
    analyse,
    characteristic_speed,
    critical_speed,
    sideslip_transfer_function,
    steady_state,
    steady_state_sideslip_gain,
    steady_state_yaw_rate_gain,
    step_response,
    understeer_gradient,
    yaw_rate_transfer_function,
)
from simcore.bicycle.equivalent import EquivalentBicycle, equivalent_bicycle, front_steer_angle
from simcore.bicycle.functions import (
    derivatives,
    discretize,
    lateral_acceleration,
    lateral_forces,
    slip_angles,
    state_space,
)
from simcore.bicycle.params import AXLE_NAMES, BICYCLE_AXLES, DEFAULT_BICYCLE, BicycleParams
from simcore.bicycle.simulation import BicycleModel, BicycleTrace, simulate
from simcore.bicycle.states import BicycleAxleState, BicycleBodyState, BicycleStates

__all__ = [
    "AXLE_NAMES", "BICYCLE_AXLES", "DEFAULT_BICYCLE", "BicycleAnalysis", "BicycleAxleState",
    "BicycleBodyState", "BicycleModel", "BicycleParams", "BicycleStates", "BicycleTrace", "EquivalentBicycle",
    "StepMetrics",
    "TransferFunction", "analyse", "characteristic_speed", "critical_speed", "derivatives", "discretize",
    "equivalent_bicycle", "front_steer_angle", "lateral_acceleration", "lateral_forces",
    "sideslip_transfer_function", "simulate", "slip_angles", "state_space", "steady_state",
    "steady_state_sideslip_gain", "steady_state_yaw_rate_gain", "step_response", "understeer_gradient",
    "yaw_rate_transfer_function",
]
