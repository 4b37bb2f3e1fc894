"""The process memory settings of pvdkit's commands (:mod:`pvdkit.memory`)."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from pvdkit.memory import cyclic_gc_paused


def test_avoid_huge_pages_turns_numpy_madvise_off():
    """Run in a child process: the setting is process-wide and the test process keeps its own."""
    code = ("from pvdkit.memory import avoid_huge_pages\n"
            "try:\n    from numpy._core import multiarray\n"
            "except ImportError:\n    from numpy.core import multiarray\n"
            "assert avoid_huge_pages()\n"
            "print(multiarray._set_madvise_hugepage(True))\n")  # returns the setting it replaces
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_diff_command_avoids_huge_pages(monkeypatch, tmp_path):
    from pvdkit.diff import cli
    from tests.pvdkit.diff_helpers import Spec, pair

    calls = []
    monkeypatch.setattr("pvdkit.memory.avoid_huge_pages", lambda: calls.append(1) or True)
    a, b = pair(tmp_path, Spec(), Spec())
    assert cli.main([str(a), str(b), "--quiet"]) == 0
    assert calls == [1]


@pytest.mark.parametrize("enabled_before", [True, False])
def test_cyclic_gc_paused_restores_the_collector(enabled_before):
    was = gc.isenabled()
    try:
        (gc.enable if enabled_before else gc.disable)()
        with cyclic_gc_paused():
            assert not gc.isenabled()
        assert gc.isenabled() == enabled_before
        with pytest.raises(ZeroDivisionError), cyclic_gc_paused():
            1 / 0  # noqa: B018
        assert gc.isenabled() == enabled_before
    finally:
        (gc.enable if was else gc.disable)()


def test_compare_files_leaves_the_collector_on(tmp_path):
    from pvdkit.diff.engine import compare_files
    from tests.pvdkit.diff_helpers import Spec, pair

    a, b = pair(tmp_path, Spec(), Spec(perturb={(1, "lngForce", 7): 0.25}))
    assert gc.isenabled()
    assert not compare_files(str(a), str(b)).equal
    assert gc.isenabled()
