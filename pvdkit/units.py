"""Units of the PhysX Vehicle2 schema: one table, (class, attribute) → unit text.

Why a table: an OmniPVD stream carries names, types and counts but no units, so ``pvdkit
series`` printed bare numbers and a reader had to know that ``correctedRotationSpeed`` is in
rad/s and ``lngForce`` in N. The units here are those of Vehicle2's own documentation (the
``<b>Unit:</b>`` lines and field comments of ``physx/include/vehicle2/**/PxVehicle*Params.h`` /
``*States.h``), of PhysX's actor and scene classes the vehicle recordings hold, and of simcore's
own classes (``simcore/pvd/schema.py``). PhysX is unit-agnostic: the table states them in SI base
units (metre, kilogram, second, radian), which is what PhysX's vehicle samples and simcore use
(``PxVehicleScale`` 1 = one metre). ``1`` marks a dimensionless value (ratios, normalised
commands, unit vectors and quaternions, slips, friction). Attributes that hold no quantity
(enums, booleans, object handles, wheel ids, counts, iteration numbers) and attributes whose
elements mix units (a plane ``(normal, d)``, a pose ``(q, p)``, a lookup table of
``(jounce ratio, angle)`` points) have no entry: :func:`unit_of` gives None for them.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["DIMENSIONLESS", "UNITS", "unit_label", "unit_of"]

#: The unit of a dimensionless quantity.
DIMENSIONLESS = "1"

# Response params: ``maxResponse`` is what a command of 1 gives at a wheel multiplier of 1 — a
# steer angle for steering, a torque for brakes and a direct drive's throttle.
_MULTIPLIERS = ("wheelMultipliers0To3", "wheelMultipliers4To7", "wheelMultipliers8To11",
                "wheelMultipliers12To15", "wheelMultipliers16To19")
_RESPONSE_STATES = ("wheelStates0To3", "wheelStatess4To7", "wheelStates8To11", "wheelStates12To15",
                    "wheelStates16To19")
_DIRECT_RESPONSE_STATES = ("responseState0To3", "responseState4To7", "responseState8To11",
                           "responseState12To15", "responseState16To19")
_CHUNKS = ("0To3", "4To7", "8To11", "12To15", "16To19")
_DIFF_RATIOS = tuple(f"{p}{c}" for p in ("torqueRatios", "aveWheelSpeedRatios") for c in _CHUNKS)


def _same(unit: str, names: Iterable[str]) -> dict[str, str]:
    return {n: unit for n in names}


_BY_CLASS: dict[str, dict[str, str]] = {
    # Rigid body (PxVehicleRigidBodyParams / PxVehicleRigidBodyState, world frame)
    "RigidBodyParams": {"mass": "kg", "moi": "kg·m²"},
    "RigidBodyState": {
        "pos": "m", "quat": "1", "linvel": "m/s", "angvel": "rad/s", "prevLinvel": "m/s",
        "prevAngvel": "rad/s", "extForce": "N", "extTorque": "N·m",
    },
    # Commands and their responses (PxVehicleCommandState, PxVehicle*CommandResponseParams)
    "SteerResponseParams": {"maxResponse": "rad", **_same("1", _MULTIPLIERS)},
    "BrakeResponseParams": {"maxResponse": "N·m", **_same("1", _MULTIPLIERS)},
    "SteerResponseState": _same("rad", _RESPONSE_STATES),
    "BrakeResponseState": _same("N·m", _RESPONSE_STATES),
    "AckermannParams": {"wheelBase": "m", "trackWidth": "m", "strength": "1"},
    "DirectDriveCommandState": {"brakes": "1", "throttle": "1", "steer": "1"},
    "EngineDriveCommandState": {"brakes": "1", "throttle": "1", "steer": "1"},
    "EngineDriveTransmissionCommandState": {"clutch": "1"},
    "TankDriveTransmissionCommandState": {"thrusts": "1"},
    "PhysXSteerState": {"previousSteerCommand": "1"},
    # Wheel (PxVehicleWheelParams, PxVehicleWheelRigidBody1dState, PxVehicleWheelLocalPose)
    "WheelParams": {"radius": "m", "halfWidth": "m", "mass": "kg", "moi": "kg·m²", "dampingRate": "N·m·s"},
    "WheelRigidBodyState": {
        "rotationSpeed": "rad/s", "correctedRotationSpeed": "rad/s", "rotationAngle": "rad",
    },
    "WheelLocalPoseState": {"posInRbodyFrame": "m", "quatInRbodyFrame": "1"},
    # Road (PxVehicleRoadGeometryState: plane = normal and distance, mixed, left out)
    "RoadGeometryState": {"friction": "1", "hitVelocity": "m/s"},
    # Suspension (PxVehicleSuspension*Params / States / Force, PxVehicleAntiRoll*)
    "SuspensionParams": {
        "suspAttachmentPos": "m", "suspAttachmentQuat": "1", "suspDir": "1", "suspTravelDist": "m",
        "wheelAttachmentPos": "m", "wheelAttachmentQuat": "1",
    },
    "SuspensionForceParams": {"stiffness": "N/m", "damping": "N·s/m", "sprungMass": "kg"},
    "SuspensionState": {"jounce": "m", "jounceSpeed": "m/s", "separation": "m"},
    "SuspensionComplianceState": {
        "toe": "rad", "camber": "rad", "tireForceAppPoint": "m", "suspForceAppPoint": "m",
    },
    "SuspensionForce": {"force": "N", "torque": "N·m", "normalForce": "N"},
    "AntiRollParams": {"stiffness": "N/m"},
    "AntiRollForce": {"torque": "N·m"},
    # Tire (PxVehicleTireForceParams and the tire states). Stiffnesses are force per unit slip
    # (Vehicle2 documents latStiffY and longStiff as force), camberStiff force per radian.
    "TireParams": {
        "latStiffX": "1", "latStiffY": "N", "longStiff": "N", "camberStiff": "N/rad",
        "frictionVsSlip": "1", "restLoad": "N", "loadFilter": "1",
    },
    "TireDirectionState": {"lngDir": "1", "latDir": "1"},
    "TireSpeedState": {"lngSpeed": "m/s", "latSpeed": "m/s"},
    # Longitudinal slip is a speed ratio; lateral slip the angle atan(latSpeed / lngSpeed).
    "TireSlipState": {"lngSlip": "1", "latSlip": "rad"},
    "TireStickyState": {"lngStickyTimer": "s", "latStickyTimer": "s"},
    "TireGripState": {"load": "N", "friction": "1"},
    "TireCamberState": {"camberAngle": "rad"},
    "TireForce": {
        "lngForce": "N", "lngTorque": "N·m", "latForce": "N", "latTorque": "N·m",
        "aligningMoment": "N·m", "wheelTorque": "N·m",
    },
    # Direct drivetrain: the throttle's response is a drive torque.
    "DirectDriveThrottleResponseParams": {"maxResponse": "N·m", **_same("1", _MULTIPLIERS)},
    "DirectDriveThrottleResponseState": _same("N·m", _DIRECT_RESPONSE_STATES),
    # Engine drivetrain (PxVehicleDrivetrainParams.h / PxVehicleDrivetrainStates.h)
    "ClutchResponseParams": {"MaxResponse": "N·m·s"},
    "EngineParams": {
        "torqueCurve": "1", "peakTorque": "N·m", "moi": "kg·m²", "idleOmega": "rad/s", "maxOmega": "rad/s",
        "dampingRateFullThrottleAH": "N·m·s", "dampingRateZeroThrottleClutchDisengaged": "N·m·s",
        "dampingRateZeroThrottleClutchEngaged": "N·m·s",
    },
    "GearboxParams": {"ratios": "1", "finalRatio": "1", "switchTime": "s"},
    "AutoboxParams": {"upRatios": "1", "downRatios": "1", "latency": "s"},
    "MultiWheelDiffParams": _same("1", _DIFF_RATIOS),
    "FourWheelDiffParams": _same("1", ("frontBias", "frontTarget", "rearBias", "rearTarget", "centerBias",
                                       "centerTarget")),
    "ClutchResponseState": {"normalisedResponse": "1", "response": "N·m·s"},
    "ThrottleResponseState": {"response": "1"},
    "EngineState": {"rotationSpeed": "rad/s"},
    "GearboxState": {"switchTime": "s"},
    "AutoboxState": {"timeSinceLastShift": "s"},
    "DifferentialState": _same("1", _DIFF_RATIOS),
    "ClutchSlipState": {"clutchSlip": "rad/s"},
    # PhysX integration (PxVehiclePhysXConstraintState: velocity Jacobians — linear parts are unit
    # directions, angular parts lever arm × direction; damping is acceleration-based, 1/s).
    "PhysXSuspLimitConstraintParams": {"restitution": "1"},
    "PhysXConstraintState": {
        "tireLongitudinalLinear": "1", "tireLongitudinalAngular": "m", "tireLongitudinalDamping": "1/s",
        "tireLateralLinear": "1", "tireLateralAngular": "m", "tireLateralDamping": "1/s",
        "suspLinear": "1", "suspAngular": "m", "suspRestitution": "1", "suspGeometricError": "m",
    },
    "PhysXRoadGeomState": {"hitPosition": "m"},
    "PhysXMaterialFriction": {"friction": "1"},
    # PhysX's scene and actor classes (the chassis actor of a vehicle)
    "PxScene": {"elapsedTime": "s", "gravity": "m/s²", "bounceThresholdVelocity": "m/s"},
    "PxRigidBody": {
        "mass": "kg", "massSpaceInertiaTensor": "kg·m²", "linearDamping": "1/s", "angularDamping": "1/s",
        "linearVelocity": "m/s", "angularVelocity": "rad/s", "maxLinearVelocity": "m/s",
        "maxAngularVelocity": "rad/s", "maxDepenetrationVelocity": "m/s", "force": "N", "torque": "N·m",
    },
    # sleepThreshold is a mass-normalised kinetic energy; wakeCounter a time.
    "PxRigidDynamic": {"sleepThreshold": "m²/s²", "wakeCounter": "s"},
    # simcore's own classes (simcore/pvd/schema.py)
    "Simulation": {"time": "s", "dt": "s"},
    "SimulationContext": {
        "gravity": "m/s²", "minLatSlipDenominator": "m/s", "minActiveLongSlipDenominator": "m/s",
        "minPassiveLongSlipDenominator": "m/s", "lngStickyThresholdSpeed": "m/s",
        "lngStickyThresholdTime": "s",
        "lngStickyDamping": "1/s", "latStickyThresholdSpeed": "m/s", "latStickyThresholdTime": "s",
        "latStickyDamping": "1/s", "thresholdForwardSpeedForWheelAngleIntegration": "m/s",
    },
    "PlaneRoad": {"normal": "1", "d": "m", "friction": "1"},
    "HeightfieldRoad": {
        "rowSpacing": "m", "columnSpacing": "m", "origin": "m", "friction": "1", "heights": "m",
    },
    # simcore's linear bicycle model (simcore/bicycle/pvd.py); the analysis' poles mix real and
    # imaginary parts of 1/s (no entry would be wrong: they are all 1/s).
    "BicycleModelParams": {"mass": "kg", "iz": "kg·m²", "lf": "m", "lr": "m", "cf": "N/rad", "cr": "N/rad",
                           "speed": "m/s", "wheelbase": "m"},
    "BicycleModelAnalysis": {"understeerGradient": "rad·s²/m", "characteristicSpeed": "m/s",
                             "criticalSpeed": "m/s", "yawRateGain": "1/s", "sideslipGain": "1",
                             "naturalFrequency": "rad/s", "dampingRatio": "1", "poles": "1/s"},
    "BicycleAxleParams": {"corneringStiffness": "N/rad", "position": "m"},
    "BicycleBodyState": {"sideslip": "rad", "yawRate": "rad/s", "yaw": "rad", "steer": "rad",
                         "lateralAcceleration": "m/s²", "pos": "m", "quat": "1"},
    "BicycleAxleState": {"slipAngle": "rad", "lateralForce": "N", "steer": "rad"},
    # simcore's motorcycle (simcore/motorcycle/pvd.py; SAE J670 frame). MotorcyclePose's arrays
    # mix translations and rotations per row: no entry.
    "MotorcycleParams": {"mass": "kg", "pitchInertia": "kg·m²", "wheelbase": "m", "cgToFrontAxle": "m",
                         "cgHeight": "m", "rake": "rad", "friction": "1", "rollingResistance": "1",
                         "dragArea": "m²", "maxDriveTorque": "N·m"},
    "MotorcycleWheelParams": {"radius": "m", "suspensionLength": "m", "suspensionTravel": "m",
                              "freeLength": "m", "springStiffness": "N/m", "damping": "N·s/m",
                              "maxBrakeTorque": "N·m"},
    "MotorcycleBodyState": {"pos": "m", "quat": "1", "pitch": "rad", "velocity": "m/s", "pitchRate": "rad/s",
                            "acceleration": "m/s²"},
    "MotorcycleWheelState": {"suspensionLength": "m", "compression": "m", "compressionSpeed": "m/s",
                             "suspensionForce": "N", "normalForce": "N", "longitudinalForce": "N",
                             "brakeTorque": "N·m", "driveTorque": "N·m", "rotationSpeed": "rad/s",
                             "rotationAngle": "rad"},
    "MotorcycleCommandState": {"frontBrake": "1", "rearBrake": "1", "throttle": "1"},
}

#: (class name, attribute name) → unit text, for every Vehicle2, PhysX-actor and simcore
#: attribute that holds a quantity (see the module docstring for what is left out and why).
UNITS: dict[tuple[str, str], str] = {
    (cls, attr): unit for cls, attrs in _BY_CLASS.items() for attr, unit in attrs.items()
}


def unit_of(cls: object, attribute: str) -> str | None:
    """The unit of ``attribute`` (a dotted path's last name counts) of a class — a class name, or
    a :class:`pvdkit.recording.Class`, whose base classes are searched too (``TankDiffParams``
    inherits ``MultiWheelDiffParams``' ratios); None when the table has none."""
    leaf = attribute.rsplit(".", 1)[-1]
    if isinstance(cls, str):
        return UNITS.get((cls, leaf))
    for c in getattr(cls, "mro", ()):
        unit = UNITS.get((c.name, leaf))
        if unit is not None:
            return unit
    return None


def unit_label(name: str, unit: str | None) -> str:
    """``"correctedRotationSpeed [rad/s]"`` — a column header with its unit (the bare name
    without one)."""
    return f"{name} [{unit}]" if unit else name
