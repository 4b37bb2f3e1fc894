"""Real PhysX streams its vehicle scene live to ``pvdkit listen`` (issue 15's acceptance).

PhysX (``ovphysx``, CPU only) runs the development tool ``tools/physx/record.py`` and streams
over TCP; a small proxy inside the test sits between PhysX and the listener and keeps a copy of
every byte PhysX sent. The recording must open with PhysX's four vehicles and one frame per half
step, and its ``.ovd`` conversion must be that captured stream minus the 8-byte preamble, byte
for byte. ``ovphysx`` is third-party (the ``physx`` extra, which ``.ci/run`` installs): the test
skips only when it is not installed; anything else missing fails. ``PVDKIT_PHYSX_RECORD`` names
another ``record.py``.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pvdkit.h5 import h5_to_ovd_bytes
from pvdkit.live import PREAMBLE
from pvdkit.names import find_vehicles
from pvdkit.recording import Recording
from tests.pvdkit.test_listen import ListenProcess

ROOT = Path(__file__).resolve().parents[2]
RECORD_PY = Path(os.environ.get("PVDKIT_PHYSX_RECORD", ROOT / "tools" / "physx" / "record.py"))
STEPS = 60


class TeeProxy:
    """Accepts one connection, forwards it to ``target`` and keeps what went through."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.captured = bytearray()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.server.settimeout(300)
            src, _ = self.server.accept()
            with src, socket.create_connection(("127.0.0.1", self.target)) as dst:
                while data := src.recv(1 << 16):
                    self.captured += data
                    dst.sendall(data)
        except BaseException as exc:  # reported by the test
            self.error = exc
        finally:
            self.server.close()


@pytest.mark.slow
def test_real_physx_streams_live_into_a_byte_identical_recording(tmp_path):
    if importlib.util.find_spec("ovphysx") is None:
        pytest.skip("real PhysX unavailable: ovphysx is not installed (pip install -e '.[physx]')")
    assert RECORD_PY.is_file(), f"PhysX's recording tool {RECORD_PY} not found"
    out = tmp_path / "physx.h5"
    listener = ListenProcess(out)
    try:
        proxy = TeeProxy(listener.port)
        physx = subprocess.run(
            [sys.executable, str(RECORD_PY), "drive", f"tcp://127.0.0.1:{proxy.port}", str(STEPS),
             "--auto-gear"],
            cwd=RECORD_PY.parent, capture_output=True, text=True, timeout=240,
        )
        assert physx.returncode == 0, physx.stdout + physx.stderr
        proxy.thread.join(timeout=60)
        assert proxy.error is None, proxy.error
        assert listener.wait() == 0, listener.stderr
    finally:
        listener.kill()
    captured = bytes(proxy.captured)
    assert captured[:8] == PREAMBLE and len(captured) > 1_000_000
    assert h5_to_ovd_bytes(out) == captured[8:]
    with Recording.open(out) as rec:
        assert rec.incomplete is None and rec.error is None
        assert len(rec.frames) == 2 * STEPS + 1  # two frames per step, and the closing frame's destroys
        assert sorted(v.name for v in find_vehicles(rec)) == ["/World/Basic", "/World/Raw", "/World/Standard",
                                                               "/World/Tank"]
    assert f"{2 * STEPS + 1} frames" in listener.stderr
