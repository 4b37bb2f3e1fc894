"""The viewer's model layer: plain Python and numpy, no Qt (a test enforces it).

Recording session, time base and timeline, selection with navigation history, vehicle grouping,
property rows, curve extraction and step-curve downsampling, comparison of two recordings and
top-down geometry. Widgets in :mod:`viewer.widgets` subscribe to the :class:`~viewer.model.signals.Signal`
objects defined here and draw.
"""

from viewer.model.compare import Comparison
from viewer.model.downsample import step_points, zoh_values
from viewer.model.properties import PropertyModel, PropertyRow
from viewer.model.selection import NavigationHistory, Selection
from viewer.model.series import (
    Curve,
    CurveCache,
    CurveData,
    CurveKey,
    Plot,
    PlotError,
    PlotsModel,
    extract_curve,
    resolve_targets,
)
from viewer.model.session import RecordingSession, TreeNode, object_tree
from viewer.model.signals import Signal
from viewer.model.timeline import TimeBase, Timeline, detect_timebase, parse_jump
from viewer.model.topdown import TopDownModel
from viewer.model.vehicles import Vehicle, Wheel, find_vehicles
from viewer.model.workspace import RecentFiles, Workspace

__all__ = [
    "Comparison", "Curve", "CurveCache", "CurveData", "CurveKey", "NavigationHistory", "Plot", "PlotError",
    "PlotsModel", "PropertyModel", "PropertyRow", "RecentFiles", "RecordingSession", "Selection", "Signal",
    "TimeBase", "Timeline", "TopDownModel", "TreeNode", "Vehicle", "Wheel", "Workspace", "detect_timebase",
    "extract_curve", "find_vehicles", "object_tree", "parse_jump", "resolve_targets",
    "step_points", "zoh_values",
]
