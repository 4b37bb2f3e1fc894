"""The bicycle model's OmniPVD classes, declared once in simcore.pvd's style, and its recorder.

A recording holds one ``BicycleModel`` object linking:

==========================  ======  =========================================================
class                       when    attributes
==========================  ======  =========================================================
``BicycleModelParams``      params  mass, iz, lf, lr, cf, cr, speed, wheelbase
``BicycleModelAnalysis``    params  understeerGradient, characteristicSpeed, criticalSpeed
                                    (NaN where not applicable), steady gains, naturalFrequency,
                                    dampingRatio, poles (re, im, re, im)
``BicycleAxleParams{i}``    params  per axle (0 front, 1 rear): corneringStiffness, position
                                    (signed distance ahead of the centre of mass)
``BicycleBodyState``        state   sideslip, yawRate, yaw, steer, lateralAcceleration, pos (x, y,
                                    0) and quat (x, y, z, w) of the body in a Z-up ground frame
``BicycleAxleState{i}``     state   slipAngle, lateralForce, steer
==========================  ======  =========================================================

plus simcore's ``Simulation`` clock object (time, dt, step) listing the model. Values are
FLOAT64 (no PhysX counterpart to match). Params are written on the first frame and whenever
the model's params change; states every frame (see :class:`~simcore.pvd.recorder.PvdRecorder`).
"""

from __future__ import annotations

import dataclasses
import math
from functools import lru_cache
from typing import Any

import numpy as np

from simcore.bicycle.analysis import BicycleAnalysis, analyse
from simcore.bicycle.params import BicycleParams
from simcore.bicycle.simulation import BicycleModel, BicycleTrace, SteerInput, simulate
from simcore.pvd.recorder import PvdRecorder
from simcore.pvd.schema import SIMULATION, ClassDecl, Role, Schema, Scope, f64, link, link_set


@lru_cache(maxsize=64)
def _analysis(p: BicycleParams) -> BicycleAnalysis:
    return analyse(p)


def _nan(v: float | None) -> float:
    return float("nan") if v is None else float(v)


def _poles(a: BicycleAnalysis) -> np.ndarray:
    z = a.poles
    return np.array([z[0].real, z[0].imag, z[1].real, z[1].imag])


def _pos3(body: Any) -> np.ndarray:
    return np.array([body.pos[0], body.pos[1], 0.0])


def _yaw_quat(body: Any) -> np.ndarray:
    h = 0.5 * body.yaw
    return np.array([0.0, 0.0, math.sin(h), math.cos(h)])


BICYCLE_MODEL_PARAMS = ClassDecl(
    "BicycleModelParams",
    tuple(f64(n, a) for n, a in (("mass", "mass"), ("iz", "iz"), ("lf", "lf"), ("lr", "lr"), ("cf", "cf"),
                                 ("cr", "cr"), ("speed", "speed"), ("wheelbase", "wheelbase"))),
    Role.PARAMS, Scope.VEHICLE, lambda v: v.params, "BicycleModelParams", origin="simcore",
    doc="The seven parameters of the linear bicycle model (SI) and the wheelbase.",
)
BICYCLE_MODEL_ANALYSIS = ClassDecl(
    "BicycleModelAnalysis",
    (
        f64("understeerGradient", "understeer_gradient"),
        f64("characteristicSpeed", lambda a: _nan(a.characteristic_speed)),
        f64("criticalSpeed", lambda a: _nan(a.critical_speed)),
        f64("yawRateGain", "yaw_rate_gain"),
        f64("sideslipGain", "sideslip_gain"),
        f64("naturalFrequency", lambda a: _nan(a.natural_frequency)),
        f64("dampingRatio", lambda a: _nan(a.damping_ratio)),
        f64("poles", _poles, 4),
    ),
    Role.PARAMS, Scope.VEHICLE, lambda v: _analysis(v.params), "BicycleModelAnalysis", origin="simcore",
    doc="Closed-form handling figures of the current params; NaN where a figure does not apply.",
)
BICYCLE_AXLE_PARAMS = ClassDecl(
    "BicycleAxleParams",
    (
        f64("corneringStiffness", lambda p: np.array([p.cf, p.cr])),
        f64("position", lambda p: np.array([p.lf, -p.lr])),
    ),
    Role.PARAMS, Scope.WHEEL, lambda v: v.params, "BicycleAxleParams{i}", origin="simcore",
    doc="Per axle (0 front, 1 rear): cornering stiffness (N/rad) and signed distance ahead of the "
        "centre of mass (m).",
)
BICYCLE_BODY_STATE = ClassDecl(
    "BicycleBodyState",
    (
        f64("sideslip", "sideslip"),
        f64("yawRate", "yaw_rate"),
        f64("yaw", "yaw"),
        f64("steer", "steer"),
        f64("lateralAcceleration", "lateral_acceleration"),
        f64("pos", _pos3, 3),
        f64("quat", _yaw_quat, 4),
    ),
    Role.STATE, Scope.VEHICLE, lambda v: v.states.body, "BicycleBodyState", origin="simcore",
    doc="Body motion: β, r, ψ (rad, rad/s), δ (rad), a_y (m/s^2) and the ground pose (Z up).",
)
BICYCLE_AXLE_STATE = ClassDecl(
    "BicycleAxleState",
    (f64("slipAngle", "slip_angle"), f64("lateralForce", "lateral_force"), f64("steer", "steer")),
    Role.STATE, Scope.WHEEL, lambda v: v.states.axles, "BicycleAxleState{i}", origin="simcore",
    doc="Per axle (0 front, 1 rear): slip angle (rad), lateral force (N), steer angle (rad).",
)
BICYCLE_MODEL = ClassDecl(
    "BicycleModel",
    (
        link("params", "BicycleModelParams"),
        link("analysis", "BicycleModelAnalysis"),
        link_set("axleParamsSet", "BicycleAxleParams"),
        link("bodyState", "BicycleBodyState"),
        link_set("axleStateSet", "BicycleAxleState"),
    ),
    Role.GRAPH, Scope.VEHICLE, lambda v: v, "BicycleModel", origin="simcore",
    doc="The root object of a bicycle-model recording.",
)
#: simcore's clock class, listing bicycle models instead of Vehicle2 vehicles.
BICYCLE_SIMULATION = dataclasses.replace(SIMULATION, attrs=tuple(
    link_set("vehicles", "BicycleModel") if a.name == "vehicles" else a for a in SIMULATION.attrs))

#: The schema of a bicycle-model recording.
BICYCLE_SCHEMA = Schema((BICYCLE_MODEL_PARAMS, BICYCLE_MODEL_ANALYSIS, BICYCLE_AXLE_PARAMS,
                         BICYCLE_BODY_STATE, BICYCLE_AXLE_STATE, BICYCLE_MODEL, BICYCLE_SIMULATION))


def bicycle_recorder(writer: Any, *, context: int = 1, timestamps: str = "ns") -> PvdRecorder:
    """A :class:`~simcore.pvd.recorder.PvdRecorder` with :data:`BICYCLE_SCHEMA`; attach models to it."""
    return PvdRecorder(writer, context=context, timestamps=timestamps, schema=BICYCLE_SCHEMA)


def record_bicycle(writer: Any, params: BicycleParams, steer: SteerInput, duration: float, dt: float,
                   *, timestamps: str = "ns") -> tuple[BicycleTrace, PvdRecorder]:
    """Simulate ``params`` under ``steer`` (see :func:`~simcore.bicycle.simulation.simulate`) and
    record every step through ``writer`` (closed at the end). Returns the trace and the recorder
    (frames, objects)."""
    model = BicycleModel(params)
    with bicycle_recorder(writer, timestamps=timestamps) as recorder:
        recorder.attach(model)
        trace = simulate(params, steer, duration, dt, model=model)
    return trace, recorder
