"""The sweep file: read, check every key before anything runs, and expand into runs.

Why all checks here, on the client: a sweep of a thousand runs that fails on run 1 because of a
typo in a param path has wasted a cluster; so every key, every param path and every value is
checked against the vehicle's own params (:mod:`simcore.param_paths`) when the file is read, and
a mistake is one :class:`SweepError` line naming the file and key. What only the simulation can
tell (a mass outside :data:`simcore.limits.PARAM_BOUNDS`) is the run's own error: that run ends
with status ``error`` and the others finish.

A run is one param set × one scenario. Param sets are the full factorial of ``[grid]``, times
``samples`` draws of ``[random]`` when both are given (a Monte Carlo at every grid point). The
draws of one random key come from their own stream, seeded by ``seed`` and the key's name, so
adding or reordering keys does not change the others' values.
"""

from __future__ import annotations

import itertools
import math
import os
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pvdkit.terminal import shown
from pvdkit.types import PvdError
from simcore.limits import is_finite_number

__all__ = ["DISTRIBUTIONS", "RunSpec", "SweepError", "SweepSpec", "load_sweep", "parse_sweep"]

#: Top-level keys of a sweep file.
TOP_KEYS = (
    "vehicle",
    "scenario",
    "duration",
    "dt",
    "substeps",
    "physx",
    "timeout",
    "grid",
    "random",
    "metrics",
    "baseline",
)
#: Distributions of ``[random]`` and what their two numbers (or list) mean.
DISTRIBUTIONS = {
    "uniform": "[low, high]: uniform between the two values",
    "normal": "[mean, std]: normal",
    "scale_uniform": "[low, high]: the vehicle's own value × a factor uniform in [low, high]",
    "scale_normal": "[mean, std]: the vehicle's own value × a normal factor",
    "choice": "[v1, v2, ...]: one of the values, each equally likely",
}
#: Metrics computed when ``[metrics]`` is absent.
DEFAULT_METRICS = ("final_speed", "max_lateral_accel", "max_jounce")
#: Largest number of runs one sweep file may expand to (a typo such as linspace n = 1e6 is
#: caught before the client builds a million task descriptions).
MAX_RUNS = 1_000_000


class SweepError(PvdError, ValueError):
    """A sweep file that cannot be run: one line naming the file and key (exit status 2)."""


@dataclass(frozen=True)
class MetricSpec:
    """One metric column: the metric (built-in name or ``module:function``), its options, and the
    column it fills in the summary."""

    metric: str
    options: tuple[tuple[str, Any], ...] = ()
    column: str = ""

    def to_toml(self) -> Any:
        if not self.options and self.column == self.metric:
            return self.metric
        return {"metric": self.metric, **dict(self.options), "column": self.column}


@dataclass(frozen=True)
class RunSpec:
    """Everything one run needs, as plain data (what the scheduler ships to a worker).

    ``params``: param path → value (a number, or one number per wheel as a list).
    ``out``: the recording path (None: metrics only). ``baseline``: a recording to diff against.
    """

    run_id: str
    index: int
    scenario: str
    params: tuple[tuple[str, Any], ...]
    vehicle: str
    duration: float | None
    dt: float
    substeps: int | None
    physx: bool | None
    timeout: float | None
    metrics: tuple[MetricSpec, ...]
    out: str | None = None
    baseline: str | None = None
    baseline_tolerances: Mapping[str, Any] | None = None
    reuse: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The plain-dict form :func:`simcore.sweep.run_one` takes."""
        return {
            "run_id": self.run_id,
            "index": self.index,
            "scenario": self.scenario,
            "params": dict(self.params),
            "vehicle": self.vehicle,
            "duration": self.duration,
            "dt": self.dt,
            "substeps": self.substeps,
            "physx": self.physx,
            "timeout": self.timeout,
            "metrics": [(m.metric, dict(m.options), m.column) for m in self.metrics],
            "out": self.out,
            "baseline": self.baseline,
            "baseline_tolerances": dict(self.baseline_tolerances) if self.baseline_tolerances else None,
            "reuse": self.reuse,
        }


@dataclass(frozen=True)
class SweepSpec:
    """A checked sweep file. ``grid``: path → values (linspace expanded); ``random``: path →
    (distribution, args); ``base``: the vehicle's params (None for a vehicle that has none to
    address, e.g. the motorcycle)."""

    source: str
    vehicle: str
    scenarios: tuple[str, ...]
    duration: float | None
    dt: float
    substeps: int | None
    physx: bool | None
    timeout: float | None
    grid: dict[str, list[Any]]
    random: dict[str, tuple[str, list[Any]]]
    samples: int
    seed: int | None
    metrics: tuple[MetricSpec, ...]
    baseline_tolerances: dict[str, Any] = field(default_factory=dict)
    base: Any = None

    @property
    def swept(self) -> list[str]:
        """Every swept param path, grid first, in file order."""
        return list(self.grid) + [p for p in self.random if p not in self.grid]

    @property
    def metric_columns(self) -> list[str]:
        return [m.column for m in self.metrics]

    def param_sets(self) -> list[dict[str, Any]]:
        """The param sets, in run order: grid points (last axis fastest) × random samples."""
        axes = list(self.grid.items())
        points = [
            dict(zip([p for p, _ in axes], combo, strict=True))
            for combo in itertools.product(*[values for _, values in axes])
        ]
        if not self.random:
            return points
        draws = {path: self._draw(path, dist, args) for path, (dist, args) in self.random.items()}
        return [{**point, **{p: draws[p][k] for p in draws}} for point in points for k in range(self.samples)]

    def _draw(self, path: str, dist: str, args: list[Any]) -> list[Any]:
        seq = np.random.SeedSequence(self.seed, spawn_key=(zlib.crc32(path.encode()),))
        rng = np.random.default_rng(seq)
        n = self.samples
        if dist == "choice":
            return [args[int(i)] for i in rng.integers(0, len(args), n)]
        a, b = float(args[0]), float(args[1])
        draw = rng.uniform(a, b, n) if dist.endswith("uniform") else rng.normal(a, b, n)
        if not dist.startswith("scale_"):
            return [float(x) for x in draw]
        from simcore.param_paths import param_value

        own = param_value(self.base, path)
        if isinstance(own, np.ndarray):
            return [(np.asarray(own, np.float64) * x).tolist() for x in draw]
        return [float(own) * float(x) for x in draw]

    def runs(self, out_dir: str | os.PathLike | None = None, *, baseline: str | None = None) -> list[RunSpec]:
        """Every run: param set × scenario, with ids ``NNNN-scenario`` (the param set's number)."""
        sets = self.param_sets()
        width = max(4, len(str(max(len(sets) - 1, 0))))
        out: list[RunSpec] = []
        for k, params in enumerate(sets):
            for scenario in self.scenarios:
                run_id = f"{k:0{width}d}-{scenario}"
                path = None if out_dir is None else os.fspath(Path(out_dir) / "runs" / f"{run_id}.h5")
                out.append(
                    RunSpec(
                        run_id,
                        k,
                        scenario,
                        tuple(params.items()),
                        self.vehicle,
                        self.duration,
                        self.dt,
                        self.substeps,
                        self.physx,
                        self.timeout,
                        self.metrics,
                        path,
                        baseline,
                        self.baseline_tolerances or None,
                    )
                )
        return out

    def count(self) -> int:
        """How many runs the file expands to (without expanding it)."""
        n = math.prod(len(v) for v in self.grid.values()) if self.grid else 1
        return n * (self.samples if self.random else 1) * len(self.scenarios)

    def resolved(self) -> dict[str, Any]:
        """The sweep as it will run (defaults filled in, linspace expanded): ``DIR/sweep.toml``."""
        doc: dict[str, Any] = {"vehicle": self.vehicle}
        doc["scenario"] = list(self.scenarios) if len(self.scenarios) > 1 else self.scenarios[0]
        for key in ("duration", "dt", "substeps", "physx", "timeout"):
            value = getattr(self, key)
            if value is not None:
                doc[key] = value
        if self.grid:
            doc["grid"] = {p: list(v) for p, v in self.grid.items()}
        if self.random:
            doc["random"] = {
                "samples": self.samples,
                "seed": self.seed,
                **{p: {d: list(a)} for p, (d, a) in self.random.items()},
            }
        doc["metrics"] = {"use": [m.to_toml() for m in self.metrics]}
        if self.baseline_tolerances:
            doc["baseline"] = dict(self.baseline_tolerances)
        doc["runs"] = self.count()
        return doc


# --------------------------------------------------------------------------------------------
# Reading and checking
# --------------------------------------------------------------------------------------------


def load_sweep(path: str | os.PathLike) -> SweepSpec:
    """Read and check a sweep file (see ``docs/sweep.md``)."""
    from pvdkit.outputs import read_toml

    name = os.fspath(path)
    try:  # one line for a FIFO or device, no UTF-8, bad TOML, deep nesting, huge integers
        data = read_toml(name, "a sweep file (UTF-8 TOML)")
    except PvdError as exc:
        raise SweepError(str(exc)) from None
    return parse_sweep(data, name, base_dir=Path(name).parent)


def parse_sweep(
    data: Mapping[str, Any], source: str = "sweep", base_dir: str | os.PathLike | None = None
) -> SweepSpec:
    """Check parsed TOML and build the :class:`SweepSpec`; :class:`SweepError` on the first bad
    key. ``base_dir``: where a relative vehicle file is looked up (the sweep file's folder)."""

    def fail(key: str, what: str) -> SweepError:
        return SweepError(f"{source}: {key}: {what}")

    unknown = [k for k in data if k not in TOP_KEYS]
    if unknown:
        raise fail(unknown[0], f"unknown key (expected one of: {', '.join(TOP_KEYS)})")
    vehicle = data.get("vehicle")
    if not isinstance(vehicle, str) or not vehicle:
        raise fail("vehicle", f"expected a preset name or a vehicle file, got {shown(vehicle)}")
    vehicle = _vehicle_path(vehicle, base_dir)
    scenarios = _scenarios(data.get("scenario", "accelerate"), vehicle, fail)
    duration = _positive(data, "duration", fail)
    dt = _positive(data, "dt", fail)
    from simcore.cli.record import DEFAULT_DT
    from simcore.limits import MAX_DT, MAX_STEPS, MAX_SUBSTEPS, MIN_DT

    dt = DEFAULT_DT if dt is None else dt
    if not MIN_DT <= dt <= MAX_DT:
        raise fail("dt", f"expected a time step in [{MIN_DT:g}, {MAX_DT:g}] s, got {dt!r}")
    if duration is not None and duration / dt > MAX_STEPS:
        raise fail("duration", f"{duration:g} s is more than {MAX_STEPS:,} steps of dt {dt:g} s")
    substeps = data.get("substeps")
    if substeps is not None and (
        isinstance(substeps, bool) or not isinstance(substeps, int) or not 1 <= substeps <= MAX_SUBSTEPS
    ):
        raise fail("substeps", f"expected a whole number in 1..{MAX_SUBSTEPS}, got {shown(substeps)}")
    physx = data.get("physx")
    if physx is not None and not isinstance(physx, bool):
        raise fail("physx", f"expected true or false, got {shown(physx)}")
    timeout = _positive(data, "timeout", fail)

    base = _base_params(vehicle, fail)
    grid = _grid(data.get("grid", {}), base, fail)
    random, samples, seed = _random(data.get("random"), base, fail)
    both = [p for p in random if p in grid]
    if both:
        raise fail(f"random.{both[0]}", "is also a [grid] axis; a param is either swept or drawn")
    metrics = _metrics(data.get("metrics"), fail)
    tolerances = _baseline(data.get("baseline", {}), source, fail)
    spec = SweepSpec(
        source,
        vehicle,
        scenarios,
        duration,
        dt,
        substeps,
        physx,
        timeout,
        grid,
        random,
        samples,
        seed,
        metrics,
        tolerances,
        base,
    )
    if spec.count() > MAX_RUNS:
        raise fail("grid", f"the sweep expands to {_count(spec.count())} runs; at most {MAX_RUNS:,} are run")
    _check_values(spec, fail)
    return spec


def _vehicle_path(vehicle: str, base_dir: str | os.PathLike | None) -> str:
    """A vehicle file named relative to the sweep file, as an absolute path (workers run elsewhere)."""
    from simcore.cli.record import vehicle_names

    if vehicle in vehicle_names() or base_dir is None:
        return vehicle
    candidate = Path(base_dir) / vehicle
    return os.fspath(candidate.resolve()) if candidate.exists() else os.fspath(Path(vehicle).resolve())


def _scenarios(value: Any, vehicle: str, fail: Any) -> tuple[str, ...]:
    from simcore.cli.record import _is_motorcycle
    from simcore.motorcycle import MOTORCYCLE_SCENARIOS
    from simcore.scenarios import SCENARIOS

    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise fail("scenario", f"expected a scenario name or a list of them, got {shown(value)}")
    known = MOTORCYCLE_SCENARIOS if _is_motorcycle(vehicle) else SCENARIOS
    for n in names:
        if n not in known:
            raise fail("scenario", f"unknown scenario {n!r} (available: {', '.join(known)})")
    if len(set(names)) != len(names):
        raise fail("scenario", f"a scenario is listed twice: {names!r}")
    return tuple(names)


def _positive(data: Mapping[str, Any], key: str, fail: Any) -> float | None:
    v = data.get(key)
    if v is None:
        return None
    if not (_number(v) and v > 0):
        raise fail(key, f"expected a positive number of seconds, got {shown(v)}")
    return float(v)


def _base_params(vehicle: str, fail: Any) -> Any:
    from simcore.cli.record import RecordError, _is_motorcycle, load_vehicle_params
    from simcore.vehicle import VehicleParams

    if _is_motorcycle(vehicle):
        return None
    try:
        params, _ = load_vehicle_params(vehicle)
    except RecordError as exc:
        raise fail("vehicle", str(exc)) from None
    return params if isinstance(params, VehicleParams) else None


def _number(value: Any) -> bool:
    """A real number a float can hold (:func:`simcore.limits.is_finite_number`)."""
    return is_finite_number(value)


def _count(n: int) -> str:
    """A run count for a message: ``1,200,000``, or ``at least 10^300`` when it is absurd."""
    return f"{n:,}" if n < 10**18 else f"at least 10^{int(math.log10(n))}"


def _param_value_ok(value: Any) -> bool:
    """A number, or a non-empty list of numbers (one per wheel)."""
    if isinstance(value, list):
        return bool(value) and all(_number(x) for x in value)
    return _number(value)


def _check_path(path: str, base: Any, where: str, fail: Any) -> None:
    from simcore.param_paths import ParamPathError, param_value

    if base is None:
        raise fail(
            where,
            "this vehicle has no Vehicle2 params to sweep (a motorcycle or Stingray model); "
            "sweep scenarios only",
        )
    try:
        param_value(base, path)
    except ParamPathError as exc:
        raise fail(where, str(exc)) from None


def _grid(table: Any, base: Any, fail: Any) -> dict[str, list[Any]]:
    if not isinstance(table, Mapping):
        raise fail("grid", 'expected a table of "param.path" = [values] or { linspace = [a, b, n] }')
    grid: dict[str, list[Any]] = {}
    points = 1  # grid points so far: a linspace's n is checked before its values are made
    for path, spec in table.items():
        where = f"grid.{path}"
        _check_path(path, base, where, fail)
        if isinstance(spec, Mapping):
            if set(spec) != {"linspace"}:
                raise fail(where, f"expected {{ linspace = [start, stop, n] }}, got {shown(spec)}")
            ls = spec["linspace"]
            if (
                not isinstance(ls, list)
                or len(ls) != 3
                or not _number(ls[0])
                or not _number(ls[1])
                or isinstance(ls[2], bool)
                or not isinstance(ls[2], int)
                or ls[2] < 1
            ):
                raise fail(where, f"linspace needs [start, stop, n] with a whole n >= 1, got {shown(ls)}")
            n = ls[2]
            if points * n > MAX_RUNS:
                n_text = shown(n) if n >= 10**20 else f"{n:,}"
                what = "is" if points == 1 else f"makes the grid {_count(points * n)} points,"
                raise fail(
                    where, f"linspace n = {n_text} {what} more than the {MAX_RUNS:,} runs a sweep may have"
                )
            values: list[Any] = [float(x) for x in np.linspace(ls[0], ls[1], n)]
        elif isinstance(spec, list) and spec:
            values = spec
        else:
            raise fail(
                where,
                f"expected a non-empty list of values or {{ linspace = [a, b, n] }}, got {shown(spec)}",
            )
        for v in values:
            if not _param_value_ok(v):
                raise fail(where, f"expected numbers (or one list of numbers per wheel), got {shown(v)}")
        grid[path] = values
        points *= len(values)
    return grid


def _random(table: Any, base: Any, fail: Any) -> tuple[dict[str, tuple[str, list[Any]]], int, int | None]:
    if table is None:
        return {}, 0, None
    if not isinstance(table, Mapping):
        raise fail(
            "random", 'expected a table with samples, seed and "param.path" = { distribution = [...] }'
        )
    samples = table.get("samples")
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise fail("random.samples", f"expected a whole number of samples >= 1, got {shown(samples)}")
    seed = table.get("seed")
    if seed is None:
        raise fail("random.seed", "missing: a random sweep needs a seed (a whole number), so that it can be "
                                  "run again and give the same runs")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**128:  # numpy's seeds
        raise fail(
            "random.seed",
            f"expected a whole number in 0 … 2**128 - 1 (the sweep must be reproducible), got {shown(seed)}",
        )
    out: dict[str, tuple[str, list[Any]]] = {}
    for path, spec in table.items():
        if path in ("samples", "seed"):
            continue
        where = f"random.{path}"
        _check_path(path, base, where, fail)
        if not isinstance(spec, Mapping) or len(spec) != 1 or next(iter(spec)) not in DISTRIBUTIONS:
            raise fail(
                where,
                f"expected {{ <distribution> = [...] }} with one of: {', '.join(DISTRIBUTIONS)}; "
                f"got {shown(spec)}",
            )
        dist, args = next(iter(spec.items()))
        if dist == "choice":
            if not isinstance(args, list) or not args or not all(_param_value_ok(a) for a in args):
                raise fail(where, f"choice needs a non-empty list of values, got {shown(args)}")
        else:
            if not isinstance(args, list) or len(args) != 2 or not all(_number(a) for a in args):
                raise fail(
                    where, f"{dist} needs two numbers {DISTRIBUTIONS[dist].split(':')[0]}, got {shown(args)}"
                )
            if dist.endswith("uniform") and args[1] < args[0]:
                raise fail(where, f"{dist}: low must not exceed high, got {args!r}")
            if dist.endswith("normal") and args[1] < 0:
                raise fail(where, f"{dist}: std must be >= 0, got {args!r}")
        out[path] = (dist, list(args))
    if not out:
        raise fail("random", 'no param to draw (add "param.path" = { uniform = [low, high] } …)')
    return out, samples, seed


def _metrics(table: Any, fail: Any) -> tuple[MetricSpec, ...]:
    from simcore.sweep.metrics import MetricError, check_options, resolve_metric

    if table is None:
        return tuple(MetricSpec(m, (), m) for m in DEFAULT_METRICS)
    if not isinstance(table, Mapping) or set(table) - {"use"}:
        raise fail("metrics", 'expected a table with one key, use = ["metric", …]')
    use = table.get("use")
    if not isinstance(use, list) or not use:
        raise fail("metrics.use", f"expected a non-empty list of metric names, got {shown(use)}")
    out: list[MetricSpec] = []
    for k, item in enumerate(use):
        where = f"metrics.use[{k}]"
        if isinstance(item, str):
            name, options, column = item, {}, item
        elif isinstance(item, Mapping) and isinstance(item.get("metric"), str):
            options = {o: v for o, v in item.items() if o not in ("metric", "column")}
            name = item["metric"]
            column = item.get("column", name)
            if not isinstance(column, str) or not column:
                raise fail(where, f"column must be a non-empty name, got {shown(column)}")
        else:
            raise fail(
                where, f'expected a metric name or {{ metric = "name", <option> = … }}, got {shown(item)}'
            )
        try:
            check_options(name, resolve_metric(name), options)
        except MetricError as exc:
            raise fail(where, str(exc)) from None
        if column in [m.column for m in out]:
            raise fail(where, f'column {column!r} is computed twice; give one a column = "…" of its own')
        out.append(MetricSpec(name, tuple(options.items()), column))
    return tuple(out)


def _baseline(table: Any, source: str, fail: Any) -> dict[str, Any]:
    """``[baseline]``: pvdkit diff's tolerance keys (atol, rtol, nan_equal, ignore, attributes)."""
    if not isinstance(table, Mapping):
        raise fail(
            "baseline", "expected a table of pvdkit diff tolerances (atol, rtol, ignore, [attributes])"
        )
    from pvdkit.diff.tolerance import ToleranceConfig

    ToleranceConfig.from_mapping(table, f"{source}: baseline")  # its own one-line errors
    return dict(table)


def _check_values(spec: SweepSpec, fail: Any) -> None:
    """Every value each swept path will take can be set on the vehicle (type and shape)."""
    from simcore.param_paths import ParamPathError, with_param

    if spec.base is None:
        return
    candidates: dict[str, list[Any]] = {p: list(v) for p, v in spec.grid.items()}
    for path, (dist, args) in spec.random.items():
        where = f"random.{path}"
        if dist == "choice":
            candidates.setdefault(path, []).extend(args)
        else:
            try:  # one draw's shape is every draw's shape
                candidates.setdefault(path, []).append(spec._draw(path, dist, args)[0])
            except (TypeError, ValueError) as exc:
                raise fail(where, f"{dist} cannot scale this field: {exc}") from None
    for path, values in candidates.items():
        section = "grid" if path in spec.grid else "random"
        for v in values:
            try:
                changed = with_param(spec.base, path, v)
                # The value's bounds too (a mass of -1 ran, and failed in its worker): each value
                # with the vehicle's others, as `pvdkit record --set` checks it.
                validate = getattr(changed, "validate", None)
                if validate is not None:
                    validate()
            except ParamPathError as exc:
                raise fail(f"{section}.{path}", str(exc)) from None
            except ValueError as exc:
                raise fail(f"{section}.{path}", f"{v!r}: {exc}") from None
