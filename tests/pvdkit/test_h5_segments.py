"""A recording appended in several batches and not compacted (as `pvdkit record` writes it)
reads the same through pvdkit and through plain h5py, and converts back to the exact bytes."""

from __future__ import annotations

import json

import h5py
import numpy as np

from pvdkit.h5 import H5Stream, h5_to_ovd_bytes
from pvdkit.recording import Recording
from pvdkit.streams import MemoryStream
from pvdkit.synthetic import write_large_recording


def _multi_batch_recording(tmp_path):
    mem = MemoryStream()
    write_large_recording(mem, 600_000, vehicles=2, wheels_per_vehicle=4)
    data = mem.getvalue()
    path = tmp_path / "appended.h5"
    stream = H5Stream(path, batch_bytes=64 * 1024, compact=False)
    for i in range(0, len(data), 5000):
        stream.write(data[i:i + 5000])
    stream.close()
    return data, path


def test_uncompacted_file_has_several_segments_and_reads_like_the_ovd(tmp_path):
    data, path = _multi_batch_recording(tmp_path)
    assert h5_to_ovd_bytes(path) == data
    from_ovd, from_h5 = Recording.open(data), Recording.open(path)
    with h5py.File(path, "r") as f:
        seg = f["segments"][:]
        series = f["series"][:]
        order = json.loads(f["pools"].attrs["order"])
        counts = np.bincount(seg["series"], minlength=len(series))
        sid = int(np.argmax(counts))
        assert counts[sid] > 1, "the file must really hold a series in several segments"
        rows = seg[seg["series"] == sid]
        values = np.concatenate([f["pools"][order[r["pool"]]]["values"][r["start"]:r["start"] + r["count"]]
                                 for r in rows])
        frames = np.concatenate([f["pools"][order[r["pool"]]]["frames"][r["start"]:r["start"] + r["count"]]
                                 for r in rows])
        obj_index, path_index = int(series["object"][sid]), int(series["path"][sid])
        obj_name = f["objects"]["name"][obj_index].decode()
        attr_name = f["paths"]["name"][path_index].decode()
    obj = from_ovd.find_object(obj_name)
    f_ref, v_ref = from_ovd.series(obj, attr_name)
    np.testing.assert_array_equal(frames, f_ref)
    np.testing.assert_array_equal(values.reshape(np.shape(v_ref)), v_ref)
    np.testing.assert_array_equal(from_h5.series(from_h5.find_object(obj_name), attr_name).values, v_ref)


def _created_then_destroyed(n_objects: int, destroy: list[int]) -> bytes:
    """``n_objects`` objects created in frame 0; ``destroy`` (indices) destroyed in frame 2."""
    from pvdkit.types import DataType
    from pvdkit.writer import OmniPvdWriter

    mem = MemoryStream()
    w = OmniPvdWriter(mem)
    cls = w.register_class("Thing")
    value = w.register_attribute(cls, "value", DataType.FLOAT32, 1)
    for frame in range(3):
        w.start_frame(1, frame * 10)
        if frame == 0:
            for i in range(n_objects):
                w.create_object(1, cls, 0x1000 + i, f"thing{i}")
        w.set_attribute(1, 0x1000, value, float(frame))
        if frame == 2:
            for i in destroy:
                w.destroy_object(1, 0x1000 + i)
        w.stop_frame(1, frame * 10 + 5)
    return mem.getvalue()


def test_objects_destroyed_in_a_later_batch_get_their_rows_updated(tmp_path):
    """Destroys of objects written by an earlier commit update their rows (read and written
    in bulk: close together as one span, far apart row by row) — the file reads like the .ovd."""
    for n, destroy in ((300, [0, 7, 299]), (20_000, [3, 19_990])):
        data = _created_then_destroyed(n, destroy)
        path = tmp_path / f"destroyed_{n}.h5"
        stream = H5Stream(path, batch_bytes=1, compact=False)
        cut = data.index(b"thing%d" % (n - 1))  # after most creates: the destroys come a commit later
        stream.write(data[:cut])
        stream.flush()
        stream.write(data[cut:])
        stream.close()
        assert h5_to_ovd_bytes(path) == data
        ref, got = Recording.open(data), Recording.open(path)
        assert [o.destroyed for o in got.objects] == [o.destroyed for o in ref.objects]
        assert sum(o.destroyed is not None for o in got.objects) == len(destroy)
