"""The golden recordings in ``recordings/`` are complete recordings of the current schema.

Whether they still hold what simcore computes is checked by ``tests/pvdkit/test_diff_goldens.py``
(a fresh recording diffed against each golden). When simcore's physics or schema changes on
purpose, regenerate the goldens: ``python3 recordings/regenerate.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pvdkit.recording import Recording
from simcore.pvd.schema import SCHEMA

RECORDINGS = Path(__file__).resolve().parents[2] / "recordings"
GOLDENS = {"accelerate": 300, "brake": 360, "step-steer": 300, "slalom": 480}
HINT = "simcore's behaviour changed; if on purpose, run: python3 recordings/regenerate.py"


@pytest.mark.parametrize("scenario", sorted(GOLDENS))
def test_golden_file_is_a_complete_recording(scenario):
    rec = Recording.open(RECORDINGS / f"golden_{scenario}.h5")
    assert len(rec.frames) == GOLDENS[scenario]
    names = set(rec.classes)
    for decl in SCHEMA.walk():
        assert decl.name in names, f"{decl.name} missing: {HINT}"
    times = rec.frames.time(np.arange(3))
    np.testing.assert_array_equal(times, [16666667, 33333333, 50000000])
