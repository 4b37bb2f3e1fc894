"""Engine drivetrain (Vehicle2 ``drivetrain/`` engine drive): engine, clutch, gearbox, autobox,
differentials (multi-wheel, four-wheel limited slip, tank) and their components.

Files: ``params.py`` (frozen params), ``states.py`` (states), ``helpers.py`` (LU / Gauss-Seidel
clutch solvers), ``functions.py`` (pure update functions), ``components.py`` (wiring, and the
``"engine"`` drivetrain plug-in of :class:`~simcore.vehicle.Vehicle`), ``loader.py``
(``EngineDrive.json``), ``vehicles.py`` (reference car, truck, tank). Import the submodules
directly; this package imports nothing so that ``simcore.vehicle`` can load the plug-in lazily.
"""
