"""The background loader: the worker thread only queues, the GUI thread emits."""

from __future__ import annotations

import threading

import pytest

from viewer.widgets import loader as loader_module
from viewer.widgets.loader import RecordingLoader


@pytest.fixture
def fake_open(monkeypatch):
    """RecordingSession.open replaced by a function the test writes (no file is read)."""
    def install(fn):
        monkeypatch.setattr(loader_module.RecordingSession, "open", staticmethod(fn))
    return install


def _run(loader: RecordingLoader) -> dict[str, list]:
    seen: dict[str, list] = {"progress": [], "loaded": [], "failed": [], "threads": []}
    main = threading.main_thread()
    loader.progress.connect(lambda f, t: (seen["progress"].append((f, t)),
                                          seen["threads"].append(threading.current_thread() is main)))
    loader.loaded.connect(lambda s: seen["loaded"].append(s))
    loader.failed.connect(lambda m: seen["failed"].append(m))
    loader.start()
    assert loader.wait(30_000)
    loader.deliver()
    return seen


def test_progress_and_result_arrive_in_order_on_the_gui_thread(qapp, fake_open):
    """Every step the worker reported is emitted, in order, by the GUI thread — the worker
    thread emits no Qt signal (one emitted there deadlocked against a garbage-collected
    Qt object's deletion on the GUI thread) — and the result comes last."""
    worker_threads = []
    session = object()

    def opening(path, up_axis="auto", progress=None, snapshot=False):
        worker_threads.append(threading.current_thread())
        for k in range(1000):
            progress(k / 1000, f"step {k}")
        progress(None, "indexing")
        return session

    fake_open(opening)
    loader = RecordingLoader("some.ovd")
    seen = _run(loader)
    assert worker_threads[0] is not threading.main_thread()
    assert seen["progress"][:2] == [(0.0, "step 0"), (0.001, "step 1")]
    assert seen["progress"][-1] == (-1.0, "indexing") and len(seen["progress"]) == 1001
    assert all(seen["threads"])
    assert seen["loaded"] == [session] and seen["failed"] == []
    assert not loader.running
    loader.deliver()  # nothing more once it ended
    assert seen["loaded"] == [session]


def test_a_recording_error_is_its_message_and_a_bug_keeps_its_traceback(qapp, fake_open):
    from pvdkit.types import PvdError

    def refusing(path, up_axis="auto", progress=None, snapshot=False):
        raise PvdError(f"{path}: not an OmniPVD stream")

    fake_open(refusing)
    seen = _run(RecordingLoader("bad.ovd"))
    assert seen["failed"] == ["bad.ovd: not an OmniPVD stream"] and seen["loaded"] == []

    def buggy(path, up_axis="auto", progress=None, snapshot=False):
        return {}["missing"]

    fake_open(buggy)
    (message,) = _run(RecordingLoader("x.ovd"))["failed"]
    assert message.startswith("x.ovd: unexpected KeyError: 'missing'")
    assert "Traceback" in message and "in buggy" in message
