"""Struct-of-arrays plumbing shared by the wheel, suspension and tire params and states.

Per-wheel params and states hold one ndarray per field with a leading wheel axis. These helpers
convert user input to float64 arrays, check shapes with messages that name the class, field and
wheel, freeze params arrays (params are immutable) and give states ``copy``/``assign``/``as_dict``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Self

import numpy as np

from simcore.limits import MAX_NB_WHEELS


def wheel_array(
    cls_name: str, field: str, value: Any, tail: tuple[int, ...] = (), dtype: type = np.float64
) -> np.ndarray:
    """``value`` as a fresh array of shape (n_wheels, *tail); raise naming ``cls_name.field`` if not."""
    try:
        a = np.array(value, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{cls_name}.{field}: expected numbers of shape (n_wheels, {tail}), got {value!r}"
        ) from exc
    if a.ndim != 1 + len(tail) or a.shape[1:] != tail:
        want = "(n_wheels" + "".join(f", {t}" for t in tail) + ")"
        raise ValueError(f"{cls_name}.{field}: expected shape {want}, got {a.shape}")
    return a


def freeze(a: np.ndarray) -> np.ndarray:
    """Make ``a`` read-only in place and return it (params are immutable)."""
    a.setflags(write=False)
    return a


def check_same_wheel_count(cls_name: str, arrays: Mapping[str, np.ndarray]) -> int:
    """All arrays share one leading length ``n`` with 1 <= n <= MAX_NB_WHEELS; return ``n``."""
    counts = {name: a.shape[0] for name, a in arrays.items()}
    values = set(counts.values())
    if len(values) != 1:
        raise ValueError(f"{cls_name}: every field needs the same number of wheels, got {counts}")
    n = values.pop()
    if not 1 <= n <= MAX_NB_WHEELS:
        raise ValueError(f"{cls_name}: number of wheels must be in [1, {MAX_NB_WHEELS}], got {n}")
    return n


def first_bad_wheel(bad: np.ndarray) -> int | None:
    """Index of the first wheel flagged in ``bad`` (any True along trailing axes), or None."""
    flags = np.asarray(bad).reshape(len(bad), -1).any(axis=1)
    idx = np.flatnonzero(flags)
    return int(idx[0]) if idx.size else None


def require(cls_name: str, field: str, ok: np.ndarray, expectation: str, values: np.ndarray) -> None:
    """Raise ``ValueError`` naming the first wheel where ``ok`` is False."""
    bad = ~np.asarray(ok, dtype=bool)
    w = first_bad_wheel(bad) if bad.ndim else (0 if bad else None)
    if w is not None:
        shown = values[w] if np.ndim(values) else values
        raise ValueError(f"{cls_name}.{field}[wheel {w}] {expectation}, got {shown}")


def per_wheel_records(
    cls_name: str, wheels: Sequence[Mapping[str, Any] | Any], fields: Sequence[str]
) -> dict[str, list[Any]]:
    """Columns from a list of per-wheel dicts (or objects with attributes), one list per field."""
    if len(wheels) == 0:
        raise ValueError(f"{cls_name}.from_wheels needs at least one wheel")
    cols: dict[str, list[Any]] = {f: [] for f in fields}
    for i, w in enumerate(wheels):
        for f in fields:
            if isinstance(w, Mapping):
                if f not in w:
                    raise ValueError(f"{cls_name}.from_wheels: wheel {i} has no field {f!r}")
                cols[f].append(w[f])
            else:
                if not hasattr(w, f):
                    raise ValueError(f"{cls_name}.from_wheels: wheel {i} has no field {f!r}")
                cols[f].append(getattr(w, f))
    return cols


class WheelStateMixin:
    """Behaviour shared by all per-wheel state dataclasses (struct of arrays, leading wheel axis)."""

    def _arrays(self) -> Iterator[tuple[str, np.ndarray]]:
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            yield f.name, getattr(self, f.name)

    @property
    def nb_wheels(self) -> int:
        """Number of wheels (length of the leading axis)."""
        return next(self._arrays())[1].shape[0]

    def copy(self) -> Self:
        """Deep copy (every array copied)."""
        return type(self)(**{k: v.copy() for k, v in self._arrays()})

    def assign(self, other: Self) -> Self:
        """Copy ``other``'s values into this state's arrays in place (keeps array identities)."""
        for k, v in self._arrays():
            v[...] = getattr(other, k)
        return self

    def as_dict(self) -> dict[str, np.ndarray]:
        """Field name -> array (views, not copies); every field is a plain recordable ndarray."""
        return dict(self._arrays())
