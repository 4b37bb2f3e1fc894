"""Tolerances of ``pvdkit diff``: defaults, per-attribute overrides by glob, the TOML config.

Why globs over ``Class.attribute``: recordings hold hundreds of attributes whose sensible
tolerance depends on what they are (a tire force is noisier than a wheel radius), and a CI
config must stay short and survive new objects. A float pair (a, b) is equal when
``|a - b| <= atol + rtol * |b|`` (B is the reference, as in ``numpy.isclose``) or when
``a == b`` (equal infinities); NaN equals NaN only with ``nan_equal``. Integers, enums,
flags, strings and references are always compared exactly.

Some floats have a geometry that plain ``|a - b|`` misreads, and pvdkit knows the Vehicle2 and
PhysX ones (:data:`GEOMETRY_RULES`, applied before the config's rules, which may undo them):

* ``period``: the value is an angle that wraps (Vehicle2 keeps a wheel's ``rotationAngle`` in
  (-2π, 2π)); the distance is taken around the circle, so 6.2831 and 0.0001 are 0.0002 apart,
  not 6.28.
* ``quaternion``: elements 0–3 are a rotation quaternion (a bare ``quat``, or a PhysX
  ``PxTransform`` pose: q then p — every 7-float attribute, as :func:`pvdkit.names.is_pose`
  reads it, whatever its name); q and −q are the same rotation, so B is compared with the sign
  nearer to A at each frame.

Config file (TOML, read with the standard library's ``tomllib``)::

    atol = 1e-9                 # defaults for every float attribute (optional)
    rtol = 1e-6
    nan_equal = false
    ignore = ["Simulation.step"]          # globs of attributes not compared at all
    schema = false              # the registered classes are not compared (default true)
    ignore_unmatched = ["Px*"]  # class globs whose objects may exist in one recording only

    [attributes]                # overrides, applied in file order, field by field
    "TireForce.*" = { rtol = 1e-3 }
    "RigidBodyState.pos" = { atol = 1e-4, rtol = 0 }
    "PhysX*.*" = { ignore = true }
    "MyWheel.spinAngle" = { period = 6.283185307179586 }
    "MyBody.orientation" = { quaternion = true }

A pattern is an :mod:`fnmatch` glob (case-sensitive) matched against ``Class.attribute``
for the object's class and each of its base classes (so a rule on a base class also covers
derived classes); ``attribute`` is the dotted attribute path (``pose.p`` for a class
attribute). Pseudo attributes: ``<lifetime>`` of every object (``"*.<lifetime>"``),
``<frame>.start`` / ``<frame>.stop`` (frame timestamps) and ``<recording>.<messages>``.

``schema = false`` and ``ignore_unmatched`` serve recordings of different producers (PhysX's
recording against simcore's replay of it): an object of a matching class (or base class) that
only one side has is counted, not listed as missing or extra; matched objects of those classes
are compared as usual.

Precedence, lowest first: built-in defaults (exact: atol = rtol = 0), the config's top-level
defaults, command-line ``--atol/--rtol/--nan-equal``, then the ``[attributes]`` rules that
match (later rules override the fields they set).
"""

from __future__ import annotations

import fnmatch
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from typing import Any

from pvdkit.terminal import shown
from pvdkit.types import PvdError

__all__ = ["GEOMETRY_RULES", "Tolerance", "ToleranceConfig", "ToleranceRule"]


@dataclass(frozen=True)
class Tolerance:
    """How one attribute is compared.

    ``atol`` (same unit as the attribute, ≥ 0) and ``rtol`` (dimensionless, ≥ 0) apply to
    floats only; ``nan_equal`` makes NaN == NaN; ``ignore`` skips the attribute entirely;
    ``period`` (> 0: an angle that wraps) and ``quaternion`` say how far apart two values are
    (the module docstring).
    """

    atol: float = 0.0
    rtol: float = 0.0
    nan_equal: bool = False
    ignore: bool = False
    period: float = 0.0
    quaternion: bool = False

    def validate(self, where: str = "tolerance") -> Tolerance:
        """Raise :class:`PvdError` for a negative or non-finite tolerance; returns self."""
        for name in ("atol", "rtol", "period"):
            v = getattr(self, name)
            if not (isinstance(v, int | float) and math.isfinite(v) and v >= 0):
                raise PvdError(f"{where}: {name} must be a finite number >= 0, got {v!r}")
        return self

    @property
    def plain(self) -> bool:
        """True when values are compared as plain numbers (no period, no quaternion)."""
        return not self.period and not self.quaternion

    def describe(self) -> str:
        """Short text for reports, e.g. ``atol=1e-06 rtol=0``."""
        s = f"atol={self.atol:g} rtol={self.rtol:g}"
        s += f" period={self.period:.6g}" if self.period else ""
        s += " quaternion" if self.quaternion else ""
        return s + (" nan_equal" if self.nan_equal else "")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form; ``period``/``quaternion`` only when set."""
        out: dict[str, Any] = {"atol": self.atol, "rtol": self.rtol, "nan_equal": self.nan_equal}
        if self.period:
            out["period"] = self.period
        if self.quaternion:
            out["quaternion"] = True
        return out


@dataclass(frozen=True)
class ToleranceRule:
    """An override: fields left None keep what earlier rules or the defaults set."""

    pattern: str
    atol: float | None = None
    rtol: float | None = None
    nan_equal: bool | None = None
    ignore: bool | None = None
    period: float | None = None
    quaternion: bool | None = None

    def fields(self) -> dict[str, Any]:
        """The fields this rule sets, by name."""
        return {k: v for k in _RULE_KEYS if (v := getattr(self, k)) is not None}

    def apply(self, tol: Tolerance) -> Tolerance:
        """``tol`` with this rule's fields set."""
        changes = self.fields()
        return replace(tol, **changes) if changes else tol


#: A rule's fields, in the order reports list them.
_RULE_KEYS = ("atol", "rtol", "nan_equal", "ignore", "period", "quaternion")
#: One turn (rad): the period of a wheel's rotation angle.
TWO_PI = 2.0 * math.pi
#: What some Vehicle2 attributes are, whatever a config says about how strict to be (applied
#: before the config's rules, which may undo them with ``period = 0`` or ``quaternion = false``).
#: A wheel's rotation angle wraps; ``quat*`` attributes hold rotation quaternions, and a run
#: whose wheel angle wrapped a step earlier than the other's has the same wheel pose with q and
#: −q. (A pose — a PxTransform — is told by its type: ``for_attribute(pose=True)``.)
GEOMETRY_RULES = (
    ToleranceRule("*.rotationAngle", period=TWO_PI),
    ToleranceRule("*.quat", quaternion=True),
    ToleranceRule("*.quatInRbodyFrame", quaternion=True),
    ToleranceRule("*.*AttachmentQuat", quaternion=True),
)
#: Most rules (``ignore`` globs and ``[attributes]`` entries) a config may hold.
MAX_RULES = 1000
_TOP_KEYS = {"atol", "rtol", "nan_equal", "ignore", "attributes", "schema", "ignore_unmatched"}


@dataclass(frozen=True)
class ToleranceConfig:
    """Default tolerance, ignore globs and per-attribute rules (see the module docstring).

    Build with :meth:`load` (a TOML file), :meth:`from_mapping` (already parsed TOML) or
    directly; :meth:`with_defaults` applies command-line values.
    """

    default: Tolerance = Tolerance()
    rules: tuple[ToleranceRule, ...] = ()
    source: str | None = None
    #: Compare the registered schema (classes, attributes, enums).
    schema: bool = True
    #: Class globs whose objects may exist in one recording only (counted, not listed).
    ignore_unmatched: tuple[str, ...] = ()
    _cache: dict[tuple[tuple[str, ...], str, bool], Tolerance] = field(
        default_factory=dict, compare=False, repr=False, hash=False)

    def __post_init__(self) -> None:
        self.default.validate(f"{self.source or 'tolerances'}: defaults")

    @classmethod
    def load(cls, path: str | os.PathLike) -> ToleranceConfig:
        """Read a TOML tolerance file; :class:`PvdError` naming the file and key on bad input."""
        from pvdkit.outputs import read_toml

        p = os.fspath(path)
        data = read_toml(p, "a TOML tolerance config")
        return cls.from_mapping(data, p)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "tolerances") -> ToleranceConfig:
        """Build from parsed TOML (the layout of the module docstring)."""
        unknown = sorted(set(data) - _TOP_KEYS)
        if unknown:
            raise PvdError(f"{source}: unknown key {shown(unknown[0])} (expected one of: "
                           f"{', '.join(sorted(_TOP_KEYS))}; per-attribute rules go under [attributes])")
        default = Tolerance(
            atol=_number(data, "atol", 0.0, source), rtol=_number(data, "rtol", 0.0, source),
            nan_equal=_flag(data, "nan_equal", False, source),
        ).validate(source)
        rules: list[ToleranceRule] = []
        ignore = data.get("ignore", [])
        if not isinstance(ignore, list) or not all(isinstance(g, str) for g in ignore):
            raise PvdError(f"{source}: ignore must be a list of glob strings, got {shown(ignore)}")
        rules += [ToleranceRule(g, ignore=True) for g in ignore]
        unmatched = data.get("ignore_unmatched", [])
        if not isinstance(unmatched, list) or not all(isinstance(g, str) for g in unmatched):
            raise PvdError(f"{source}: ignore_unmatched must be a list of class glob strings, "
                           f"got {shown(unmatched)}")
        schema = _flag(data, "schema", True, source)
        attrs = data.get("attributes", {})
        if not isinstance(attrs, Mapping):
            raise PvdError(f"{source}: [attributes] must be a table of \"glob\" = {{ rtol = … }}")
        for pattern, spec in attrs.items():
            where = f"{source}: attributes.{shown(pattern)}"
            if not isinstance(spec, Mapping):
                raise PvdError(f"{where}: expected an inline table such as {{ rtol = 1e-3 }}, "
                               f"got {shown(spec)}")
            bad = sorted(set(spec) - set(_RULE_KEYS))
            if bad:
                raise PvdError(f"{where}: unknown key {shown(bad[0])} "
                               f"(expected: {', '.join(sorted(_RULE_KEYS))})")
            rule = ToleranceRule(
                pattern,
                atol=_number(spec, "atol", None, where), rtol=_number(spec, "rtol", None, where),
                nan_equal=_flag(spec, "nan_equal", None, where), ignore=_flag(spec, "ignore", None, where),
                period=_number(spec, "period", None, where),
                quaternion=_flag(spec, "quaternion", None, where),
            )
            rule.apply(Tolerance()).validate(where)
            rules.append(rule)
        if len(rules) > MAX_RULES:  # each rule is matched against every attribute: 20,000 took 15 s
            raise PvdError(f"{source}: {len(rules):,} rules and ignore globs; a config holds at most "
                           f"{MAX_RULES:,}")
        return cls(default, tuple(rules), source, schema, tuple(unmatched))

    def with_defaults(self, *, atol: float | None = None, rtol: float | None = None,
                      nan_equal: bool | None = None) -> ToleranceConfig:
        """A copy whose defaults take the given values (the command line's ``--atol`` …)."""
        d = ToleranceRule("*", atol=atol, rtol=rtol, nan_equal=nan_equal).apply(self.default)
        return ToleranceConfig(d.validate("command line"), self.rules, self.source, self.schema,
                               self.ignore_unmatched)

    def unmatched_ignored(self, classes: Sequence[str]) -> bool:
        """True when an object of ``classes`` (its class, then base classes) may exist on one
        side only (:attr:`ignore_unmatched`)."""
        return any(fnmatchcase(c, g) for g in self.ignore_unmatched for c in classes)

    def for_attribute(self, classes: Sequence[str] | str, attribute: str, *, pose: bool = False) -> Tolerance:
        """The tolerance of ``attribute`` of an object whose class (then base classes) is
        ``classes``: the defaults with every matching rule applied in order. ``pose``: the
        attribute is a PxTransform (7 floats, q then p), compared as a quaternion first."""
        names = (classes,) if isinstance(classes, str) else tuple(classes)
        key = (names, attribute, pose)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        tol = replace(self.default, quaternion=True) if pose else self.default
        targets = [f"{c}.{attribute}" for c in names]
        for rule in GEOMETRY_RULES + self.rules:
            if any(fnmatchcase(t, rule.pattern) for t in targets):
                tol = rule.apply(tol)
        self._cache[key] = tol
        return tol

    def unmatched_patterns(self, attributes: Sequence[str]) -> list[str]:
        """The rule patterns (``ignore`` and ``[attributes]``, in file order, once each) that
        match none of ``attributes`` (``Class.attribute`` names)."""
        out: list[str] = []
        for pattern in dict.fromkeys(r.pattern for r in self.rules):
            match = re.compile(fnmatch.translate(pattern)).match
            if not any(match(a) for a in attributes):
                out.append(pattern)
        return out

    def unmatched_class_globs(self, classes: Sequence[str]) -> list[str]:
        """The ``ignore_unmatched`` globs that match none of ``classes``."""
        globs = dict.fromkeys(self.ignore_unmatched)
        return [g for g in globs if not any(fnmatchcase(c, g) for c in classes)]

    def describe(self) -> str:
        """One line: defaults and rule count, for report headers."""
        extra = f", {len(self.rules)} rule{'s' if len(self.rules) != 1 else ''}" if self.rules else ""
        src = f" from {self.source}" if self.source else ""
        schema = "" if self.schema else "; schema not compared"
        return f"{self.default.describe()}{extra}{src}{schema}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for the JSON report)."""
        return {
            "atol": self.default.atol, "rtol": self.default.rtol, "nan_equal": self.default.nan_equal,
            "source": self.source, "schema": self.schema, "ignore_unmatched": list(self.ignore_unmatched),
            "rules": [{"pattern": r.pattern, **r.fields()} for r in self.rules],
        }


def _number(d: Mapping[str, Any], key: str, default: float | None, where: str) -> float | None:
    if key not in d:
        return default
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise PvdError(f"{where}: {key} must be a number, got {shown(v)}")
    try:
        return float(v)
    except OverflowError:  # TOML integers are unbounded
        raise PvdError(f"{where}: {key} must be a finite number, got {shown(v)}") from None


def _flag(d: Mapping[str, Any], key: str, default: bool | None, where: str) -> bool | None:
    if key not in d:
        return default
    v = d[key]
    if not isinstance(v, bool):
        raise PvdError(f"{where}: {key} must be true or false, got {shown(v)}")
    return v

