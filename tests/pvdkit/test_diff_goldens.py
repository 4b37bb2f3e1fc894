"""CI gate: re-record every golden scenario of ``recordings/`` and diff it with its golden.

Simulation and recording are deterministic, so a fresh recording must equal its golden up
to float32 rounding between CPUs (``recordings/tolerances.toml``); any difference fails with
``pvdkit diff``'s report (first divergence, object path, values). To stay fast, each scenario
is re-recorded for its first half second and compared over those frames (``--frames 0:N``:
the scenario's inputs depend on time only, so a prefix is the golden's prefix). After an
intended change of physics or schema, regenerate the goldens with
``python3 recordings/regenerate.py``.

The goldens are listed here, not discovered: a missing golden fails its test (it does not
shrink the list), and a golden on disk that is not listed fails too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pvdkit.diff import compare_files, format_text

RECORDINGS = Path(__file__).resolve().parents[2] / "recordings"
PREFIX_SECONDS = 0.5

#: The scenarios ``recordings/regenerate.py`` records into ``recordings/golden_<scenario>.h5``.
SCENARIOS = ("accelerate", "brake", "slalom", "step-steer")


def test_the_goldens_on_disk_are_the_listed_ones():
    on_disk = sorted(p.name for p in RECORDINGS.glob("golden_*.h5"))
    assert on_disk == sorted(f"golden_{s}.h5" for s in SCENARIOS), (
        "recordings/golden_*.h5 and SCENARIOS disagree: regenerate the goldens "
        "(python3 recordings/regenerate.py) or update SCENARIOS")
    script = (RECORDINGS / "regenerate.py").read_text(encoding="utf-8")
    missing = [s for s in SCENARIOS if f'"{s}"' not in script]
    assert not missing, f"recordings/regenerate.py no longer records {missing}"


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_fresh_recording_equals_golden(scenario, tmp_path):
    from simcore.cli.record import record

    golden = RECORDINGS / f"golden_{scenario}.h5"
    assert golden.is_file(), f"{golden} is missing: run python3 recordings/regenerate.py"
    fresh = tmp_path / f"fresh_{golden.name}"
    summary = record(None, scenario, duration=PREFIX_SECONDS, out=fresh, physx=False)
    res = compare_files(fresh, golden, frames=f"0:{summary.frames}", config=RECORDINGS / "tolerances.toml")
    assert res.objects_matched > 0
    assert res.equal, (f"{golden.name} no longer matches a fresh recording of scenario {scenario!r} "
                       f"(regenerate with recordings/regenerate.py if intended):\n"
                       + format_text(res, max_report=15))
    assert not [n for n in res.notes if n.kind == "few_matched"]


def test_a_run_in_the_other_object_layout_is_named_as_such(tmp_path):
    """The goldens are pure Vehicle2; the same scenario with the PhysX actor layer (pvdkit
    record's default) records PhysX's object graph, which pairs with little of the golden's. The
    report says that is the likely cause rather than leaving hundreds of objects to explain it."""
    from simcore.cli.record import record

    fresh = tmp_path / "physx_layout.h5"
    summary = record(None, "brake", duration=PREFIX_SECONDS, out=fresh)
    res = compare_files(fresh, RECORDINGS / "golden_brake.h5", frames=f"0:{summary.frames}")
    assert not res.equal
    (note,) = [n for n in res.notes if n.kind == "few_matched"]
    assert not note.difference and "--pure-vehicle2" in note.message
    assert f"{len(res.objects_only_a)} of A's and {len(res.objects_only_b)} of B's" in note.message
    assert "the same scene, vehicles and object layout?" in " ".join(format_text(res).split())
