"""The import contracts of ``docs/architecture.md`` hold (``[tool.importlinter]`` in pyproject.toml).

Why a test as well as the CI step: a change that makes ``pvdkit`` import the simulator or Qt,
or a lower layer import a higher one (``pvdkit.h5`` → ``pvdkit.recording``), fails here, where
it is written, instead of in a base install that no longer works without Qt.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# import-linter's own command (the ``lint-imports`` console script), run by this interpreter so
# that it checks the code these tests import.
_LINT_IMPORTS = (
    "import sys\nfrom importlinter.cli import lint_imports_command\nsys.exit(lint_imports_command())"
)


def test_import_contracts_are_kept():
    run = subprocess.run(
        [sys.executable, "-c", _LINT_IMPORTS, "--no-cache", "--no-logo"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    report = run.stdout + run.stderr
    assert run.returncode == 0, report
    assert "0 broken" in report, report
    for contract in ("pvdkit is a library", "simcore (the simulator", "viewer.model", "pvdkit's layers"):
        assert contract in report, f"contract {contract!r} was not checked:\n{report}"
