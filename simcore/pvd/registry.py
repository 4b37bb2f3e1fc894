"""Register a :class:`~simcore.pvd.schema.Schema` with an OmniPVD writer, as PhysX does.

The order of the calls is PhysX's: an enum class and its values just before the first class
whose flags attribute uses it, a class after its base class, a nested class (``first``) just
before the attribute that PhysX registers after it. With pvdkit's writer — which numbers
handles as PhysX does — the Vehicle2 part of a simcore recording therefore gets the same
relative class and attribute handles as PhysX's own recording.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from pvdkit.types import DataType
from simcore.pvd.schema import AttrDecl, ClassDecl, EnumDecl, Schema


class SchemaWriter(Protocol):
    """The registration half of :class:`pvdkit.writer.OmniPvdWriter`."""

    def register_class(self, name: str, base_class: int = 0) -> int: ...

    def register_attribute(self, class_handle: int, name: str, data_type: DataType | int,
                           nb_elements: int = 1) -> int: ...

    def register_flags_attribute(self, class_handle: int, name: str, enum_class_handle: int) -> int: ...

    def register_enum_value(self, class_handle: int, name: str, value: int) -> int: ...

    def register_unique_list_attribute(self, class_handle: int, name: str,
                                       data_type: DataType | int) -> int: ...


@dataclass
class SchemaHandles:
    """The handles a writer returned for a registered schema."""

    classes: dict[str, int] = field(default_factory=dict)
    enums: dict[str, int] = field(default_factory=dict)
    attributes: dict[tuple[str, str], int] = field(default_factory=dict)

    def cls(self, decl: ClassDecl | str) -> int:
        """Handle of a registered class (by declaration or name)."""
        return self.classes[decl if isinstance(decl, str) else decl.name]

    def attr(self, owner: ClassDecl | str, name: str) -> int:
        """Handle of attribute ``name`` declared by class ``owner`` (not inherited)."""
        return self.attributes[(owner if isinstance(owner, str) else owner.name, name)]


def register_schema(writer: SchemaWriter, schema: Schema) -> SchemaHandles:
    """Register every class of ``schema`` (enums and nested classes where PhysX puts them)."""
    handles = SchemaHandles()
    for decl in schema.classes:
        _register_class(writer, decl, handles)
    return handles


def _register_enum(writer: SchemaWriter, enum: EnumDecl, handles: SchemaHandles) -> int:
    if enum.name in handles.enums:
        return handles.enums[enum.name]
    h = writer.register_class(enum.name)
    handles.enums[enum.name] = h
    handles.classes[enum.name] = h
    for name, value in enum.values:
        writer.register_enum_value(h, name, value)
    return h


def _register_class(writer: SchemaWriter, decl: ClassDecl, handles: SchemaHandles) -> None:
    if decl.name in handles.classes:
        return
    for a in decl.attrs:
        if a.enum is not None:
            _register_enum(writer, a.enum, handles)
    base = 0
    if decl.base is not None:
        _register_class(writer, decl.base, handles)
        base = handles.classes[decl.base.name]
    h = writer.register_class(decl.name, base)
    handles.classes[decl.name] = h
    for a in decl.attrs:
        for nested in a.first:
            _register_class(writer, nested, handles)
        handles.attributes[(decl.name, a.name)] = _register_attr(writer, h, a, handles)


def _register_attr(writer: SchemaWriter, class_handle: int, a: AttrDecl, handles: SchemaHandles) -> int:
    if a.unique_list:
        return writer.register_unique_list_attribute(class_handle, a.name, a.dtype)
    if a.enum is not None:
        return writer.register_flags_attribute(class_handle, a.name, handles.enums[a.enum.name])
    return writer.register_attribute(class_handle, a.name, a.dtype, a.count)
