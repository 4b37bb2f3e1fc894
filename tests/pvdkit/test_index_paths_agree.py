"""The fused open path (count, then fill + index in one pass) equals tokenize-then-index.

``Recording.open`` uses :func:`read_ovd_data`; :func:`ovd_data` indexes an existing
``CommandTable``. Both must give the same objects, frames, series, paths, messages,
registrations and samples — on the PhysX fixture, on the every-command file and on truncations.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from pvdkit.index import ovd_data, read_ovd_data
from pvdkit.ovd.tokenizer import tokenize
from pvdkit.streams import MemoryStream
from pvdkit.synthetic import write_every_command

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "vehicles_short.ovd"


def _every_command() -> bytes:
    stream = MemoryStream()
    write_every_command(stream)
    return stream.getvalue()


def _assert_tables_equal(a, b, what: str) -> None:
    for field in dataclasses.fields(a):
        x, y = getattr(a, field.name), getattr(b, field.name)
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y, err_msg=f"{what}.{field.name}")
        else:
            assert x == y, f"{what}.{field.name}"


def _assert_same(buf: bytes) -> None:
    fused = read_ovd_data(buf)
    classic = ovd_data(np.frombuffer(buf, np.uint8), tokenize(buf))
    assert fused.version == classic.version
    assert fused.error == classic.error
    assert fused.counts() == classic.counts()
    assert fused.registrations == classic.registrations
    assert fused.messages == classic.messages
    assert fused.paths == classic.paths
    _assert_tables_equal(fused.objects, classic.objects, "objects")
    _assert_tables_equal(fused.frames, classic.frames, "frames")
    _assert_tables_equal(fused.series, classic.series, "series")
    for sid in range(len(fused.series)):
        _assert_tables_equal(fused.load_samples(sid), classic.load_samples(sid), f"series {sid}")


def test_fixture():
    _assert_same(FIXTURE.read_bytes())


def test_every_command_file():
    _assert_same(_every_command())


@pytest.mark.parametrize("cut", [13, 57, 211, 389, -40, -9, -1])
def test_truncations(cut):
    buf = _every_command()
    _assert_same(buf[:cut] if cut > 0 else buf[:len(buf) + cut])
