"""Component sequence semantics (``PxVehicleComponentSequence``): order, nested substeps, abort, limits."""

from __future__ import annotations

import pytest

from simcore.component import Component, ComponentSequence, SequenceLimitError
from simcore.context import SimulationContext
from simcore.limits import MAX_NB_COMPONENTS, MAX_NB_SUBGROUPS

CTX = SimulationContext()


class Recorder(Component):
    """Appends (name, dt) to a shared log; returns ``result``."""

    def __init__(self, log: list[tuple[str, float]], name: str, result: bool = True) -> None:
        self.log = log
        self.name = name
        self.result = result

    def update(self, dt: float, context: SimulationContext) -> bool:
        self.log.append((self.name, dt))
        return self.result


def test_flat_sequence_runs_in_order_with_full_dt() -> None:
    log: list[tuple[str, float]] = []
    seq = ComponentSequence()
    for name in "abc":
        seq.add(Recorder(log, name))
    assert seq.update(0.5, CTX) is True
    assert log == [("a", 0.5), ("b", 0.5), ("c", 0.5)]


def test_nested_groups_divide_dt_by_product_and_repeat() -> None:
    log: list[tuple[str, float]] = []
    seq = ComponentSequence()
    seq.add(Recorder(log, "a"))
    seq.begin_substep_group(2)
    seq.add(Recorder(log, "b"))
    seq.begin_substep_group(3)
    seq.add(Recorder(log, "c"))
    seq.end_substep_group()
    seq.add(Recorder(log, "d"))
    seq.end_substep_group()
    seq.add(Recorder(log, "e"))
    assert seq.update(1.2, CTX)
    names = [n for n, _ in log]
    assert names == ["a", "b", "c", "c", "c", "d", "b", "c", "c", "c", "d", "e"]
    dts = {n: {round(d, 12) for m, d in log if m == n} for n in "abcde"}
    assert dts == {"a": {1.2}, "b": {0.6}, "c": {0.2}, "d": {0.6}, "e": {1.2}}
    # the total time simulated by every component is dt
    for n in "abcde":
        assert sum(d for m, d in log if m == n) == pytest.approx(1.2)
    assert [e.dt_divisor for e in seq.entries()] == [1, 2, 6, 2, 1]
    assert [e.depth for e in seq.entries()] == [0, 1, 2, 1, 0]


def test_sibling_groups_and_set_substeps() -> None:
    log: list[tuple[str, float]] = []
    seq = ComponentSequence()
    g1 = seq.begin_substep_group(2)
    seq.add(Recorder(log, "x"))
    seq.end_substep_group()
    g2 = seq.begin_substep_group(4)
    seq.add(Recorder(log, "y"))
    seq.end_substep_group()
    seq.set_substeps(g1, 3)
    assert seq.get_substeps(g2) == 4
    seq.update(1.0, CTX)
    assert [n for n, _ in log] == ["x"] * 3 + ["y"] * 4
    assert log[0][1] == pytest.approx(1 / 3) and log[-1][1] == pytest.approx(0.25)


def test_false_aborts_everything_after_including_outer_groups() -> None:
    log: list[tuple[str, float]] = []
    seq = ComponentSequence()
    seq.add(Recorder(log, "a"))
    seq.begin_substep_group(3)
    seq.add(Recorder(log, "b"))
    seq.begin_substep_group(2)
    seq.add(Recorder(log, "stop", result=False))
    seq.add(Recorder(log, "never1"))
    seq.end_substep_group()
    seq.add(Recorder(log, "never2"))
    seq.end_substep_group()
    seq.add(Recorder(log, "never3"))
    assert seq.update(1.0, CTX) is False
    assert [n for n, _ in log] == ["a", "b", "stop"]


def test_component_limit() -> None:
    seq = ComponentSequence()
    log: list[tuple[str, float]] = []
    for i in range(MAX_NB_COMPONENTS):
        seq.add(Recorder(log, str(i)))
    with pytest.raises(SequenceLimitError, match="64 components"):
        seq.add(Recorder(log, "one too many"))


def test_group_limit_counts_the_root_group() -> None:
    seq = ComponentSequence()
    for _ in range(MAX_NB_SUBGROUPS - 1):
        seq.begin_substep_group(1)
    with pytest.raises(SequenceLimitError, match="16 groups"):
        seq.begin_substep_group(1)
    for _ in range(MAX_NB_SUBGROUPS - 1):
        seq.end_substep_group()
    assert seq.nb_groups == MAX_NB_SUBGROUPS


def test_bad_use_is_reported() -> None:
    seq = ComponentSequence()
    with pytest.raises(ValueError, match="no substep group is open"):
        seq.end_substep_group()
    with pytest.raises(ValueError, match="nb_substeps"):
        seq.begin_substep_group(0)
    seq.begin_substep_group(2)
    with pytest.raises(ValueError, match="still open"):
        seq.update(0.1, CTX)
    seq.end_substep_group()
    with pytest.raises(ValueError, match="positive"):
        seq.update(0.0, CTX)
    with pytest.raises(TypeError, match="Component"):
        seq.add(object())  # type: ignore[arg-type]


def test_replace_keeps_position_and_group() -> None:
    log: list[tuple[str, float]] = []
    seq = ComponentSequence()
    seq.add(Recorder(log, "a"), "first")
    seq.begin_substep_group(2)
    old = Recorder(log, "b")
    seq.add(old, "inner")
    seq.end_substep_group()
    new = Recorder(log, "B")
    assert seq.replace("inner", new) is old
    assert seq.get("inner") is new
    assert seq.get(Recorder) is seq.get(0)
    seq.update(1.0, CTX)
    assert log == [("a", 1.0), ("B", 0.5), ("B", 0.5)]
    with pytest.raises(KeyError, match="nope"):
        seq.replace("nope", new)
    assert "substep group x2" in seq.describe()


def test_update_split_runs_the_group_per_pass_and_the_rest_once() -> None:
    """What a batch with mixed substep counts uses: the group runs once per requested count (with
    dt / n), the components around it (a recorder among them) once."""
    log: list[tuple[str, float]] = []
    seq = ComponentSequence()
    seq.add(Recorder(log, "before"))
    group = seq.begin_substep_group(3)
    seq.add(Recorder(log, "inner"))
    seq.end_substep_group()
    seq.add(Recorder(log, "after"))
    assert seq.update_split(0.6, CTX, group, lambda run: run(1) and run(2)) is True
    assert log == [("before", 0.6), ("inner", 0.6), ("inner", 0.3), ("inner", 0.3), ("after", 0.6)]
    assert seq.get_substeps(group) == 3  # the group's own count is left as it was
    log.clear()
    assert seq.update_split(0.6, CTX, group, lambda run: False) is False
    assert log == [("before", 0.6)]
