"""Where pvdkit's and simcore's compiled kernels are cached, and the first-run message
(:mod:`pvdkit.jit`)."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from pvdkit import jit

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "data" / "vehicles_short.ovd"


@pytest.fixture
def env(monkeypatch, tmp_path):
    """A clean environment for the cache location: no user settings, HOME in ``tmp_path``."""
    for name in ("NUMBA_CACHE_DIR", jit.CACHE_ENV, "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return monkeypatch


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="the XDG layout of Linux and the BSDs")
def test_the_cache_is_in_the_users_cache_directory(env, tmp_path):
    assert jit.cache_home() == tmp_path / "home" / ".cache" / "pvdkit"
    assert jit.numba_cache_dir() == str(tmp_path / "home" / ".cache" / "pvdkit" / "numba")
    assert (tmp_path / "home" / ".cache" / "pvdkit" / "numba").is_dir()
    env.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert jit.cache_dir("index") == tmp_path / "xdg" / "pvdkit" / "index"
    env.setenv("XDG_CACHE_HOME", "relative/ignored")  # the XDG spec: relative paths are invalid
    assert jit.cache_home() == tmp_path / "home" / ".cache" / "pvdkit"


def test_pvdkit_cache_dir_overrides_and_numba_cache_dir_wins(env, tmp_path):
    env.setenv(jit.CACHE_ENV, str(tmp_path / "mine"))
    assert jit.numba_cache_dir() == str(tmp_path / "mine" / "numba")
    assert jit.cache_dir("index") == tmp_path / "mine" / "index"
    env.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba's"))
    assert jit.numba_cache_dir() == str(tmp_path / "numba's")  # the user's own setting, as it is


def test_an_unwritable_cache_directory_falls_back_to_a_temporary_one(env, tmp_path):
    blocker = tmp_path / "a file"
    blocker.write_text("not a directory")
    env.setenv(jit.CACHE_ENV, str(blocker / "cache"))  # cannot be created, whoever runs this
    got = jit.cache_dir("numba")
    assert got is not None and got.is_dir() and got.name == "numba"
    assert Path(tempfile.gettempdir()) in got.parents


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_temporary_fallback_that_others_can_write_is_not_used(env, tmp_path, monkeypatch):
    blocker = tmp_path / "a file"
    blocker.write_text("not a directory")
    env.setenv(jit.CACHE_ENV, str(blocker / "cache"))
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # as a directory someone else made in /tmp could be
    monkeypatch.setattr(jit, "_fallback_home", lambda: shared)
    assert jit.cache_dir("numba") is None
    assert jit.numba_cache_dir() is None
    shared.chmod(0o700)
    jit._dirs.clear()
    assert jit.cache_dir("numba") == shared / "numba"


def _module(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / "src" / f"{name}.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(textwrap.dedent(body))
    return path


def test_kernels_cache_in_pvdkits_directory_and_other_numba_code_keeps_numbas(tmp_path):
    """A kernel decorated with pvdkit.jit.njit caches under $PVDKIT_CACHE_DIR/numba; a plain
    numba.njit(cache=True) function in the same process keeps numba's default (__pycache__)."""
    _module(tmp_path, "kern", """
        import numba
        from pvdkit.jit import njit

        @njit(cache=True)
        def ours(x):
            return x + 1

        @numba.njit(cache=True)
        def theirs(x):
            return x + 2
        """)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update({jit.CACHE_ENV: str(tmp_path / "cache"), "PYTHONPATH": os.pathsep.join([str(tmp_path / "src"),
                                                                                        str(ROOT)])})
    subprocess.run([sys.executable, "-c", "import kern; assert kern.ours(1) == 2 and kern.theirs(1) == 3"],
                   env=env, check=True, cwd=tmp_path)
    ours = sorted(p.name for p in (tmp_path / "cache" / "numba").rglob("*.nbi"))
    theirs = sorted(p.name for p in (tmp_path / "src" / "__pycache__").glob("*.nbi"))
    assert [n.split("-")[0] for n in ours] == ["kern.ours"]
    assert [n.split("-")[0] for n in theirs] == ["kern.theirs"]
    # A user's NUMBA_CACHE_DIR takes both.
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "user")
    subprocess.run([sys.executable, "-c", "import kern; kern.ours(1)"], env=env, check=True, cwd=tmp_path)
    assert [p.name.split("-")[0] for p in (tmp_path / "user").rglob("*.nbi")] == ["kern.ours"]


@pytest.mark.parametrize("damage", ["cut", "garbage", "empty"])
def test_a_damaged_cache_entry_is_compiled_again(tmp_path, damage):
    """A cache file cut short (a full disk, a killed compile) or overwritten made ``pvdkit info``
    end in numba's UnpicklingError traceback; it is now a cache miss, and the entry is rewritten."""
    _module(tmp_path, "kern", """
        from pvdkit.jit import njit

        @njit(cache=True)
        def ours(x):
            return x + 1
        """)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update({jit.CACHE_ENV: str(tmp_path / "cache"),
                "PYTHONPATH": os.pathsep.join([str(tmp_path / "src"), str(ROOT)])})
    run = [sys.executable, "-c", "import kern; assert kern.ours(1) == 2"]
    subprocess.run(run, env=env, check=True, cwd=tmp_path)
    (entry,) = (tmp_path / "cache" / "numba").rglob("*.nbc")
    whole = entry.read_bytes()
    entry.write_bytes({"cut": whole[: len(whole) // 3], "garbage": b"\x80\x04not a pickle" * 9,
                       "empty": b""}[damage])
    out = subprocess.run(run, env=env, cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert entry.read_bytes() != b"" and len(entry.read_bytes()) > len(whole) // 3  # written anew


@pytest.fixture
def kernel(tmp_path, monkeypatch):
    """A fresh kernel module with its cache in ``tmp_path`` (cold until called)."""
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv(jit.CACHE_ENV, str(tmp_path / "cache"))
    path = _module(tmp_path, f"kern_{os.getpid()}_{abs(hash(str(tmp_path)))}", """
        from pvdkit.jit import njit

        @njit(cache=True)
        def k(x):
            return x * 2
        """)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    yield mod.k
    jit.disable_notices()


def test_the_first_run_message_is_shown_once_when_cold_and_never_when_warm(kernel):
    assert jit.is_cached(kernel) is False
    out = io.StringIO()
    jit.enable_notices(out)
    assert jit.notices_enabled()
    assert jit.notice_if_cold([kernel], 4.4)
    assert out.getvalue() == "pvdkit: compiling kernels, first run only — about 4 s\n"
    assert not jit.notices_enabled()
    assert not jit.notice_if_cold([kernel], 4.4)  # once per process
    assert out.getvalue().count("\n") == 1

    assert kernel(21) == 42  # compiles, and caches
    assert jit.is_cached(kernel) is True
    out = io.StringIO()
    jit.enable_notices(out)
    assert not jit.notice_if_cold([kernel], 4.4)
    assert out.getvalue() == ""


def test_no_message_in_library_use_or_when_stderr_is_not_a_terminal(kernel, capsys):
    assert not jit.notices_enabled()
    assert not jit.notice_if_cold([kernel], 3)  # library use: never
    jit.enable_notices()  # a command line whose stderr is captured: not a terminal
    assert jit.notices_enabled()
    assert not jit.notice_if_cold([kernel], 3)
    assert capsys.readouterr().err == ""


def test_is_cached_is_unknown_without_a_cache():
    import numba

    plain = numba.njit(lambda x: x)
    assert jit.is_cached(plain) is None
    assert jit.is_cached(object()) is None


@pytest.mark.slow
def test_pvdkit_info_on_a_terminal_says_it_compiles_the_first_time_only(tmp_path):
    """``pvdkit info`` with empty caches, stderr on a pseudo-terminal: the message first on
    stderr, nothing of it on stdout (JSON stays JSON); the second run says nothing."""
    pty = pytest.importorskip("pty")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env[jit.CACHE_ENV] = str(tmp_path / "cache")

    def info() -> tuple[str, str]:
        master, slave = pty.openpty()
        p = subprocess.Popen([sys.executable, "-m", "pvdkit", "info", str(FIXTURE), "--json"], env=env,
                             stdout=subprocess.PIPE, stderr=slave, cwd=ROOT)
        os.close(slave)
        err = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            err += chunk
        os.close(master)
        out = p.stdout.read().decode()
        assert p.wait() == 0
        return out, err.decode()

    out, err = info()
    assert err.startswith("pvdkit: compiling kernels, first run only — about ")
    assert json.loads(out)["frames"] == 25
    out, err = info()
    assert err == "" and json.loads(out)["frames"] == 25
