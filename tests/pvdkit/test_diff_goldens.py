"""CI gate: re-record every golden scenario of ``recordings/`` and diff it with its golden.

Simulation and recording are deterministic, so a fresh recording must equal its golden up
to float32 rounding between CPUs (``recordings/tolerances.toml``); any difference fails with
``pvdkit diff``'s report (first divergence, object path, values). To stay fast, each scenario
is re-recorded for its first half second and compared over those frames (``--frames 0:N``:
the scenario's inputs depend on time only, so a prefix is the golden's prefix). After an
intended change of physics or schema, regenerate the goldens with
``python3 recordings/regenerate.py``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from pvdkit.diff import compare_files, format_text

RECORDINGS = Path(__file__).resolve().parents[2] / "recordings"
PREFIX_SECONDS = 0.5


def _goldens() -> list[tuple[str, str]]:
    """(scenario, file name) pairs declared by ``recordings/regenerate.py``."""
    script = RECORDINGS / "regenerate.py"
    if not script.exists():
        return []
    spec = importlib.util.spec_from_file_location("_pvdkit_regenerate", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return [(s, n) for s, n in getattr(mod, "GOLDENS", []) if (RECORDINGS / n).exists()]


GOLDENS = _goldens()


@pytest.mark.skipif(not GOLDENS, reason="no golden recordings in recordings/")
@pytest.mark.parametrize(("scenario", "name"), GOLDENS, ids=[s for s, _ in GOLDENS])
def test_fresh_recording_equals_golden(scenario, name, tmp_path):
    from pvdkit.record import record

    fresh = tmp_path / f"fresh_{name}"
    summary = record(None, scenario, duration=PREFIX_SECONDS, out=fresh)
    res = compare_files(fresh, RECORDINGS / name, frames=f"0:{summary.frames}",
                        config=RECORDINGS / "tolerances.toml")
    assert res.objects_matched > 0
    assert res.equal, (f"{name} no longer matches a fresh recording of scenario {scenario!r} (regenerate "
                       f"with recordings/regenerate.py if intended):\n" + format_text(res, max_report=15))
