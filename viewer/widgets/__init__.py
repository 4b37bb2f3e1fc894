"""Qt widgets of the viewer: each subscribes to the model layer (:mod:`viewer.model`) and draws.

Importing this package imports PySide6 and pyqtgraph; the model layer never does.
"""

from __future__ import annotations

import sys


def _guard_binding_refcounts() -> bool:
    """Work around a reference-counting bug of PySide6 / shiboken6 6.12 on CPython < 3.12.

    Those bindings drop one reference to ``None`` on every wrapped call that returns nothing
    (``setText``, ``setData`` …) and one to ``True`` on every signal emit — harmless on CPython
    3.12+, where these objects are immortal, fatal before: after some tens of thousands of calls
    the interpreter aborts with "deallocating None" (at the latest when it exits). We make them
    effectively immortal as 3.12 does, by adding a huge reference count, and only for the broken
    combination. ``tests/viewer/test_widgets.py::test_bindings_survive_many_calls`` checks it.
    Returns True when the guard was applied.
    """
    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return False
    import shiboken6

    if not shiboken6.__version__.startswith("6.12."):
        return False
    import ctypes

    for obj in (None, True, False):
        ctypes.c_ssize_t.from_address(id(obj)).value += 1 << 48
    return True


BINDING_GUARD = _guard_binding_refcounts()
