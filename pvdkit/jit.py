"""numba in pvdkit and simcore: where compiled kernels are cached, the decorator every kernel
uses, the first-run message and compiling ahead in a second process.

Why one module: numba compiles a kernel the first time it is called (seconds each; tens of
seconds for ``pvdkit record`` on a fresh install) and by default caches the machine code in
``__pycache__`` beside the sources — not writable for a system install, and gitignored noise in
a checkout. Every kernel of pvdkit and simcore is decorated with :func:`njit` instead of
``numba.njit``, so that the cache location, the check whether a kernel is compiled yet and the
message that says so live here, once.

Cache location (:func:`numba_cache_dir`), first match wins:

* a user's own ``NUMBA_CACHE_DIR`` (numba's variable) is respected as it is;
* ``$PVDKIT_CACHE_DIR/numba`` when :data:`CACHE_ENV` (``PVDKIT_CACHE_DIR``) is set;
* the user's cache directory: ``$XDG_CACHE_HOME/pvdkit/numba`` (default
  ``~/.cache/pvdkit/numba``; ``~/Library/Caches/pvdkit/numba`` on macOS,
  ``%LOCALAPPDATA%\\pvdkit\\cache\\numba`` on Windows);
* when that cannot be created or written: ``<temp dir>/pvdkit-<user>/numba``; when even that
  fails, kernels compile without a cache (every run compiles, nothing breaks).

The directory applies to pvdkit's and simcore's kernels only (it is set while *they* are
decorated); other numba code in the same process keeps numba's defaults. numba keys each entry
by the source file's folder (one subdirectory per source folder, so two installs never share
entries), a hash of the source file's contents, the numba and Python versions and the CPU: a new
pvdkit version or an edited file never loads stale code. One limit is numba's own: a kernel that
inlines a helper of *another* file is not recompiled when only that file changes
(``docs/architecture.md``).

First-run message (:func:`notice_if_cold`): a command line that is about to compile says so on
stderr, once per process, before compiling starts — ``pvdkit: compiling kernels, first run only
— about N s`` — and only when a kernel it needs is not in the cache and stderr is a terminal
(stdout, logs and pipes get nothing new). Library use prints nothing unless
:func:`enable_notices` was called (``pvdkit``'s :func:`~pvdkit.cli.main` calls it).

Compiling ahead (:func:`warm_in_background`): numba compiles one function at a time per
process, so a command that knows which kernels it will need *later* can have a second process
compile them into the cache meanwhile (``pvdkit record``: pvdkit's index kernels, needed once
the first frame is stored, then the simulator's from the end of its sequence backwards, while
this process compiles the first step's from the front).

Standard library only at import; numba is imported by :func:`njit` when a kernel module is.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    import subprocess

__all__ = [
    "CACHE_ENV", "NOTICE", "cache_dir", "cache_home", "disable_notices", "enable_notices", "is_cached",
    "njit", "notice_if_cold", "notices_enabled", "numba_cache_dir", "stop", "wait_for", "warm_in_background",
]

#: Environment variable naming pvdkit's cache directory (compiled kernels go to its ``numba``
#: subdirectory, the ``.ovd`` index cache to ``index``).
CACHE_ENV = "PVDKIT_CACHE_DIR"

_lock = threading.RLock()
_dirs: dict[tuple[str, ...], Path | None] = {}


def cache_home() -> Path:
    """pvdkit's per-user cache directory (not created here): ``$PVDKIT_CACHE_DIR``, else the
    platform's user cache directory + ``pvdkit`` (see the module docstring)."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "pvdkit" / "cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "pvdkit"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache") / "pvdkit"


def _fallback_home() -> Path:
    import tempfile

    try:
        user = str(os.getuid())  # type: ignore[attr-defined]
    except AttributeError:  # Windows
        user = os.environ.get("USERNAME", "user")
    return Path(tempfile.gettempdir()) / f"pvdkit-{user}"


def _writable(path: Path, private: bool = False) -> bool:
    """``path`` exists (created if need be) and this user can write it; with ``private``, it is
    also this user's own and nobody else may write it (a directory in the shared temp directory
    that someone else created could hand this user compiled code)."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        if private and hasattr(os, "getuid"):
            for p in (path.parent, path):
                st = os.stat(p)
                if st.st_uid != os.getuid() or st.st_mode & 0o022:
                    return False
    except OSError:
        return False
    return os.access(path, os.W_OK | os.X_OK)


def cache_dir(name: str) -> Path | None:
    """The subdirectory ``name`` of :func:`cache_home`, created; the per-user temp fallback when
    that cannot be written; None when neither can (the caller then caches nothing)."""
    key = (name, os.environ.get(CACHE_ENV, ""), os.environ.get("XDG_CACHE_HOME", ""),
           os.environ.get("HOME", ""), os.environ.get("LOCALAPPDATA", ""))
    with _lock:
        if key in _dirs:
            return _dirs[key]
        found = None
        if _writable(cache_home() / name):
            found = cache_home() / name
        elif _writable(_fallback_home() / name, private=True):
            found = _fallback_home() / name
        _dirs[key] = found
        return found


def numba_cache_dir() -> str | None:
    """Where pvdkit's and simcore's kernels are cached: ``NUMBA_CACHE_DIR`` if the user set it,
    else :func:`cache_dir` ``("numba")``; None: nowhere writable."""
    user = os.environ.get("NUMBA_CACHE_DIR")
    if user:
        return user
    found = cache_dir("numba")
    return str(found) if found is not None else None


@contextlib.contextmanager
def _numba_cache_dir(path: str) -> Any:
    """numba's ``config.CACHE_DIR`` set to ``path`` while kernels are decorated (numba picks a
    kernel's cache location when it is decorated), unless the user configured one."""
    from numba.core import config

    if config.CACHE_DIR:  # the user's NUMBA_CACHE_DIR (or their own setting): theirs
        yield
        return
    with _lock:
        config.CACHE_DIR = path
        try:
            yield
        finally:
            config.CACHE_DIR = ""


def njit(func: Callable | None = None, **options: Any) -> Any:
    """``numba.njit`` with pvdkit's cache location (:func:`numba_cache_dir`) for ``cache=True``
    kernels; use as ``@njit`` or ``@njit(cache=True, ...)``. Without a writable directory the
    kernel compiles uncached instead of failing."""
    if func is None:
        return lambda f: njit(f, **options)
    import numba

    if not options.get("cache"):
        return numba.njit(**options)(func)
    where = numba_cache_dir()
    if where is None:
        return numba.njit(**{**options, "cache": False})(func)
    with _numba_cache_dir(where):
        kernel = numba.njit(**options)(func)
    _tolerate_damaged_entries(kernel)
    return kernel


def _tolerate_damaged_entries(kernel: Any) -> None:
    """Read a cache entry that cannot be loaded (a file cut short by a full disk or a killed
    compile, a bit flipped) as no entry: the kernel compiles and its entry is written anew.
    numba raises the unpickling error instead (a traceback from ``pvdkit info``). Uses numba's
    cache object (``_cache``), as :func:`is_cached` does; a numba without it is left as it is."""
    cache = getattr(kernel, "_cache", None)
    load = getattr(cache, "load_overload", None)
    if load is None:
        return

    def load_or_recompile(sig: Any, target_context: Any) -> Any:
        try:
            return load(sig, target_context)
        except Exception:  # noqa: BLE001 - any damage of a cache file: compile instead
            return None

    cache.load_overload = load_or_recompile


# --------------------------------------------------------------------------------------------
# First-run message
# --------------------------------------------------------------------------------------------

#: The first-run message (followed by `` — about N s``).
NOTICE = "pvdkit: compiling kernels, first run only"
#: Command-line mode: the stream :func:`notice_if_cold` prints on; None in library use.
_notice_stream: TextIO | None = None
#: Print only if that stream is a terminal (the default stderr of a command line).
_tty_only = True
_noticed = False


def enable_notices(stream: TextIO | None = None) -> None:
    """Command-line mode (``pvdkit``'s :func:`~pvdkit.cli.main`): commands prepare what they
    will compile (:func:`notices_enabled`) and :func:`notice_if_cold` prints the message — on
    ``stream`` if given, else on stderr when it is a terminal (a log or a pipe gets nothing new)."""
    global _notice_stream, _tty_only, _noticed
    _notice_stream = stream if stream is not None else sys.stderr
    _tty_only = stream is None
    _noticed = False


def notices_enabled() -> bool:
    """True in command-line mode (:func:`enable_notices`) until the first-run message was given."""
    return _notice_stream is not None and not _noticed


def found_cold() -> bool:
    """True when this command found a kernel not compiled yet (:func:`notice_if_cold`), whether
    or not the message was shown: its timings include compiling (``pvdkit record`` says so)."""
    return _noticed


def disable_notices() -> None:
    """Back to library behaviour: :func:`notice_if_cold` prints nothing."""
    global _notice_stream
    _notice_stream = None


def is_cached(kernel: Any) -> bool | None:
    """True when numba's cache holds compiled code of ``kernel`` (a numba dispatcher) for its
    current source, False when it holds none (the first call compiles), None when unknown
    (caching off, or a numba whose cache internals differ)."""
    try:
        return bool(kernel._cache._cache_file._load_index())
    except Exception:  # NullCache (no cache), an unreadable index, other numba internals
        return None


def notice_if_cold(kernels: Iterable[Any], seconds: float) -> bool:
    """Print ``pvdkit: compiling kernels, first run only — about N s`` (N = ``seconds``, what
    the caller is about to compile takes on a 2-core x86-64) in command-line mode
    (:func:`enable_notices`), once per process, when one of ``kernels`` is not cached yet.
    Returns True if it printed."""
    global _noticed
    stream = _notice_stream
    if stream is None or _noticed:
        return False
    if not any(is_cached(k) is False for k in kernels):
        return False
    _noticed = True
    try:
        if _tty_only and not stream.isatty():
            return False
        stream.write(f"{NOTICE} — about {max(1, round(seconds))} s\n")
        stream.flush()
    except (OSError, ValueError, AttributeError):
        return False
    return True


# --------------------------------------------------------------------------------------------
# Compiling ahead in a second process
# --------------------------------------------------------------------------------------------


def warm_in_background(target: str, *args: str) -> subprocess.Popen | None:
    """Run ``target`` (``"module:function"``, called with the strings ``args``) in a new Python
    process with this process's interpreter, import path and environment, to compile kernels
    into the cache while this process does other work; its output is discarded. Returns the
    process (None if it could not start). :func:`wait_for` it before using those kernels if they may not be
    ready (they then load from the cache instead of compiling a second time), :func:`stop` it
    at the end."""
    import subprocess

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    where = numba_cache_dir()
    if where is not None:
        env["NUMBA_CACHE_DIR"] = where  # this process's directory, whichever fallback it is
    try:
        return subprocess.Popen([sys.executable, "-m", "pvdkit.jit", "warm", target, *args], env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    except OSError:
        return None


def wait_for(process: subprocess.Popen | None, timeout: float = 120.0) -> bool:
    """Wait (at most ``timeout`` s) for a :func:`warm_in_background` process; True if it ended.
    A failed or slow one only means that this process compiles what it needs itself."""
    if process is None:
        return True
    import subprocess

    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        return False
    return True


def stop(process: subprocess.Popen | None, timeout: float = 30.0) -> None:
    """End a :func:`warm_in_background` process: wait up to ``timeout`` s for it to finish
    what it compiles (a cache entry is written whole or not at all), then terminate it."""
    if process is not None and not wait_for(process, timeout):
        process.terminate()
        wait_for(process, 5.0)


def _main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] != "warm" or ":" not in argv[1]:
        print("usage: python -m pvdkit.jit warm MODULE:FUNCTION [ARGUMENT ...]", file=sys.stderr)
        return 2
    import importlib

    module, function = argv[1].split(":", 1)
    getattr(importlib.import_module(module), function)(*argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
