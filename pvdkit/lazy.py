"""Loading on first use: lazy module attributes, lazy commands, and the missing-extra message.

Why one helper: three things import late for the same reason — start-up cost — and used to do
it three ways. The package roots (:mod:`pvdkit`, :mod:`pvdkit.h5`) defer the writer, the
tokenizer and numba until a name is used (:func:`lazy_attributes`); ``pvdkit --help`` and
``pvdkit info`` must not import the simulator or Qt, so a command of another package is a
:class:`LazyCommand` that imports its module only when it runs; and a command whose optional
dependency is not installed (``pvdkit view`` without PySide6) must say in one line which extra
installs it (:func:`require_extra`, :func:`import_module`), never end in an ImportError
traceback. Only a *missing* module the command declared becomes that one line; any other
import failure (a bug) keeps its traceback.

This module imports nothing but the standard library at import time: it is loaded by the
package root and by the import-light modules that describe commands.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

__all__ = ["DISTRIBUTION", "LazyCommand", "import_module", "lazy_attributes", "missing_extra_message",
           "missing_modules", "require_extra"]

#: The distribution whose extras the messages name (``pip install 'pvdkit[viewer]'``).
DISTRIBUTION = "pvdkit"


def _error(message: str) -> Exception:
    # PvdError is imported here, not at the top: pvdkit.types imports numpy (~0.2 s), which a
    # bare ``import pvdkit`` or a command description must not pay for.
    from pvdkit.types import PvdError

    return PvdError(message)


def missing_extra_message(what: str, extra: str) -> str:
    """The one line for a missing extra: ``<what> needs the <extra> extra: pip install 'pvdkit[<extra>]'``."""
    return f"{what} needs the {extra} extra: pip install '{DISTRIBUTION}[{extra}]'"


def missing_modules(modules: Iterable[str]) -> list[str]:
    """The top-level modules of ``modules`` that cannot be found (looked up, not imported)."""
    missing = []
    for name in modules:
        top = name.split(".")[0]
        try:
            found = top in sys.modules or importlib.util.find_spec(top) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(top)
    return missing


def require_extra(extra: str, modules: Iterable[str], what: str) -> None:
    """Raise :class:`~pvdkit.types.PvdError` with :func:`missing_extra_message` when a module
    of ``extra`` is not installed. ``what`` names the user of the extra (``"the 'view' command"``)."""
    if missing_modules(modules):
        raise _error(missing_extra_message(what, extra))


def import_module(name: str, *, extra: str | None = None, modules: Iterable[str] = (),
                  what: str | None = None) -> ModuleType:
    """``importlib.import_module(name)``; if that fails because one of ``modules`` (the
    optional dependencies of ``extra``) is not installed, :class:`~pvdkit.types.PvdError` with
    :func:`missing_extra_message` instead. Any other ImportError propagates."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        tops = {m.split(".")[0] for m in modules}
        if extra is not None and exc.name is not None and exc.name.split(".")[0] in tops:
            raise _error(missing_extra_message(what or f"module {name!r}", extra)) from None
        raise


def lazy_attributes(package: str, table: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports ``table[name]`` (a module path) on
    first use of ``name`` and keeps the value in the package's namespace::

        __getattr__ = lazy_attributes(__name__, {"H5Stream": "pvdkit.h5.stream"})
    """

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


@dataclass(frozen=True)
class LazyCommand:
    """A ``pvdkit`` subcommand whose module is imported only when the subcommand is used.

    ``module`` defines ``configure(parser)`` and ``run(args) -> int``. ``extra`` / ``requires``:
    the optional extra the command needs and its top-level modules; when one is missing the
    command fails with :func:`missing_extra_message` before anything is imported. A
    :class:`LazyCommand` is what a ``pvdkit.commands`` entry point names (see
    :mod:`pvdkit.cli`); keep the module that defines it import-light.
    """

    name: str
    help: str
    module: str
    extra: str | None = None
    requires: tuple[str, ...] = ()

    def configure(self, parser: argparse.ArgumentParser) -> None:
        self._module().configure(parser)

    def run(self, args: argparse.Namespace) -> int:
        if self.extra is not None:
            require_extra(self.extra, self.requires, self._what)
        return int(self._module().run(args))

    @property
    def _what(self) -> str:
        return f"the {self.name!r} command"

    def _module(self) -> ModuleType:
        try:
            return import_module(self.module, extra=self.extra, modules=self.requires, what=self._what)
        except ModuleNotFoundError as exc:
            # The command's own module is not installed (a stale entry point, a removed
            # package): one line. A missing module *inside* it is a bug and keeps its traceback.
            if exc.name is None or not (self.module == exc.name or self.module.startswith(exc.name + ".")):
                raise
            raise _error(f"the {self.name!r} command is unavailable: {exc}") from None
