"""The compiled readers and writers of the command layout, named without loading numba.

Why a module of names: the compiled code (:mod:`pvdkit.ovd._kernels`: ``command_end`` /
``command_fields`` / ``store_row``, the tokenizer's ``scan`` and ``fill_parallel``, the rebuild's
``emit_commands``) needs numba, whose import and cache load cost about a third of a second. The
modules that merely *name* kernels — the tokenizer, the stream parser, the query model — import
this one instead; the compiled module is loaded on first use of a kernel
(``kernels.scan(...)``, ``from pvdkit.ovd.kernels import command_end``). So opening an ``.h5``
recording, or an ``.ovd`` whose index is cached (:mod:`pvdkit.index.cache`), never loads numba.

The scan's status codes are plain constants here (no numba needed to read a result).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pvdkit.ovd._kernels import (
        command_end,
        command_fields,
        emit_commands,
        fill_parallel,
        is_attribute_command,
        read_u8,
        read_u16,
        read_u32,
        read_u64,
        scan,
        store_row,
    )

__all__ = [
    "BAD_DATA_TYPE", "EMPTY_PATH", "OK", "TRUNCATED", "UNKNOWN_COMMAND", "command_end", "command_fields",
    "emit_commands", "fill_parallel", "is_attribute_command", "read_u8", "read_u16", "read_u32",
    "read_u64", "scan", "store_row",
]

# Status codes of :func:`command_end` and the scan.
OK = 0
TRUNCATED = 1
UNKNOWN_COMMAND = 2
BAD_DATA_TYPE = 3
EMPTY_PATH = 4

#: The kernels of :mod:`pvdkit.ovd._kernels` handed out by name.
COMPILED = frozenset({
    "command_end", "command_fields", "emit_commands", "fill_parallel", "is_attribute_command", "read_u8",
    "read_u16", "read_u32", "read_u64", "scan", "store_row",
})


def __getattr__(name: str) -> Any:
    if name not in COMPILED:
        raise AttributeError(f"module 'pvdkit.ovd.kernels' has no attribute {name!r}")
    from pvdkit.ovd import _kernels

    value = getattr(_kernels, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *COMPILED])
