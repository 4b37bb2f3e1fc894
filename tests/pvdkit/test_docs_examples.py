"""The Python examples of the docs run, and say what pvdkit says.

Why: an example that no longer runs is worse than none. Every ```python block of
docs/python-api.md runs here, in order, in one namespace, from the repository root (the page
promises that); the plain-h5py recipes of docs/recording-format.md run too and are checked
against the query model, since they exist to read the format without it.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from pvdkit.analysis import Recording, table
from pvdkit.names import vehicles

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def blocks(text: str) -> list[str]:
    """The ```python blocks of a Markdown text, in order."""
    return BLOCK.findall(text)


def section(text: str, heading: str) -> str:
    """The text of a ``## heading`` section, up to the next ``## `` heading."""
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else None]


def run_blocks(code: list[str], name: str) -> dict:
    namespace: dict = {"__name__": f"docs_{name}"}
    for i, block in enumerate(code):
        exec(compile(block, f"{name}[block {i}]", "exec"), namespace)
    return namespace


def test_block_extraction_finds_fenced_python_only():
    text = "a\n```python\nx = 1\n```\n```bash\nls\n```\n```python\ny = 2\n```\n"
    assert blocks(text) == ["x = 1\n", "y = 2\n"]


def test_python_api_examples_run(monkeypatch):
    pytest.importorskip("pandas", reason="the page's examples use the analysis extra (pandas)")
    text = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    code = blocks(text)
    assert len(code) >= 8, "docs/python-api.md lost its examples"
    monkeypatch.chdir(ROOT)
    ns = run_blocks(code, "python-api.md")
    assert isinstance(ns["rec"], Recording)


@pytest.fixture(scope="module")
def h5py_recipes():
    text = (ROOT / "docs" / "recording-format.md").read_text(encoding="utf-8")
    code = blocks(section(text, "Reading with plain h5py"))
    assert len(code) == 2, "the plain-h5py section should hold the look-up and the tidy-table recipe"
    return code


def test_h5py_lookup_by_class_and_attribute(h5py_recipes, monkeypatch, capsys):
    """The look-up finds EngineState.rotationSpeed (not WheelRigidBodyState's rotationSpeed,
    which the old name-only recipe took) for both engine-drive vehicles."""
    monkeypatch.chdir(ROOT)
    ns = run_blocks(h5py_recipes[:1], "recording-format.md")
    rec = Recording.open(ROOT / "tests" / "data" / "dev_drive.h5")
    engines = rec.objects_of_class("EngineState")
    assert sorted(ns["engines"]) == [o.index for o in engines]
    for o in engines:
        frames, values = ns["engines"][o.index]
        ref = rec.series(o, "rotationSpeed")
        np.testing.assert_array_equal(frames, ref.frames)
        np.testing.assert_array_equal(values, ref.values)
    assert capsys.readouterr().out.count("EngineState") == 2


def test_h5py_tidy_wheel_table_equals_pvdkit(h5py_recipes, monkeypatch):
    monkeypatch.chdir(ROOT)
    ns = run_blocks(h5py_recipes, "recording-format.md")
    mine = ns["table"]
    rec = Recording.open(ROOT / "tests" / "data" / "dev_drive.h5")
    ref = table(rec, "WheelRigidBodyState.correctedRotationSpeed")
    index = {v.name: v.index for v in vehicles(rec)}
    ref_vehicle = np.array([index[n] for n in ref["vehicle"]])
    assert len(mine["frame"]) == len(ref["frame"]) == 4 * 4 * 481
    a = np.lexsort((np.arange(len(mine["frame"])), mine["wheel"], mine["vehicle"], mine["frame"]))
    b = np.lexsort((np.arange(len(ref["frame"])), ref["wheel"], ref_vehicle, ref["frame"]))
    np.testing.assert_array_equal(mine["frame"][a], ref["frame"][b])
    np.testing.assert_array_equal(mine["vehicle"][a], ref_vehicle[b])
    np.testing.assert_array_equal(mine["wheel"][a], ref["wheel"][b])
    np.testing.assert_array_equal(mine["correctedRotationSpeed"][a], ref["correctedRotationSpeed"][b])
    np.testing.assert_allclose(mine["time"][a], ref["time"][b], rtol=0, atol=1e-12)


#: Pages whose every ```python block is a complete example (the others show fragments of a
#: larger program: a live PhysX peer, the schema's declarations).
COMPLETE_EXAMPLES = ("simcore.md", "stingray.md", "motorcycle.md", "sweep.md")


@pytest.mark.parametrize("page", COMPLETE_EXAMPLES)
def test_complete_examples_run_from_any_folder(page, tmp_path, monkeypatch):
    code = blocks((ROOT / "docs" / page).read_text(encoding="utf-8"))
    assert code, f"docs/{page} lost its examples"
    monkeypatch.chdir(tmp_path)  # what they write lands here, and no path may lean on the checkout
    run_blocks(code, page)


def test_the_schema_pages_recording_example_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_blocks(blocks((ROOT / "docs" / "pvd-schema.md").read_text(encoding="utf-8"))[:1], "pvd-schema.md")
    assert Recording.open(tmp_path / "run.ovd").objects_of_class("Vehicle")
