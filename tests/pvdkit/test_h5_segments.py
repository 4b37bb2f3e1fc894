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
