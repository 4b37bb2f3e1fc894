"""How a pvdkit command's process uses memory: set by the command that owns the process, never
on import (a program that imports pvdkit keeps its own settings)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


def avoid_huge_pages() -> bool:
    """Ask numpy not to request transparent huge pages for its large arrays; True if it could.

    numpy advises the kernel to back every array of 4 MB or more with huge pages
    (``madvise(MADV_HUGEPAGE)``). Where the kernel's defrag setting is ``madvise`` (Debian's
    default), each such allocation may stall while the kernel compacts memory to find 2 MB
    pages. A fleet diff allocates and frees gigabytes of temporaries: on the 2-core
    development machine that stall was 0.5–0.9 s of system time in a 3.3 s
    ``pvdkit diff``, and 0.35–0.45 s without huge pages (``bench/bench_diff.py --fleet``).
    numpy reads the same choice from ``NUMPY_MADVISE_HUGEPAGE=0`` at import; this sets it in a
    process that has already imported numpy."""
    try:
        from numpy._core import multiarray  # numpy 2
    except ImportError:  # numpy 1.26
        from numpy.core import multiarray  # type: ignore[no-redef]
    set_hugepage = getattr(multiarray, "_set_madvise_hugepage", None)
    if set_hugepage is None:
        return False
    set_hugepage(False)
    return True


@contextlib.contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused for the block (as it was before, after).

    Reading and comparing a fleet recording creates hundreds of thousands of long-lived
    objects (objects, series, per-attribute results) and no reference cycles worth collecting
    on the way; each full collection walks all of them again. In a 3 s fleet ``pvdkit diff``
    that was 0.3 s. Cycles made meanwhile are collected once the block ends."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
