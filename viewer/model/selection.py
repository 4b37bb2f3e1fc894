"""The selected object and the back / forward history of selections.

Following a reference in the property view is navigation, like following a link in a browser: it
pushes the new object on the history, and back / forward walk it. The history is a plain list
with a cursor, bounded so that a long session cannot grow it without limit.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from pvdkit.recording import Object
from viewer.model.signals import Signal

T = TypeVar("T")


class NavigationHistory(Generic[T]):
    """Browser-style history: :meth:`push` drops any forward entries, :meth:`back` and
    :meth:`forward` move the cursor and return the entry there (None at either end).

    Pushing the entry that is already current is ignored (re-selecting is not navigation).
    At most ``limit`` entries are kept; the oldest are dropped first.
    """

    def __init__(self, limit: int = 200) -> None:
        if limit < 1:
            raise ValueError(f"history limit must be at least 1, got {limit}")
        self._items: list[T] = []
        self._pos = -1
        self.limit = limit

    def __len__(self) -> int:
        return len(self._items)

    @property
    def current(self) -> T | None:
        return self._items[self._pos] if self._pos >= 0 else None

    @property
    def can_back(self) -> bool:
        return self._pos > 0

    @property
    def can_forward(self) -> bool:
        return 0 <= self._pos < len(self._items) - 1

    def push(self, item: T) -> None:
        if self._pos >= 0 and self._items[self._pos] == item:
            return
        del self._items[self._pos + 1:]
        self._items.append(item)
        if len(self._items) > self.limit:
            del self._items[: len(self._items) - self.limit]
        self._pos = len(self._items) - 1

    def back(self) -> T | None:
        if not self.can_back:
            return None
        self._pos -= 1
        return self._items[self._pos]

    def forward(self) -> T | None:
        if not self.can_forward:
            return None
        self._pos += 1
        return self._items[self._pos]

    def clear(self) -> None:
        self._items.clear()
        self._pos = -1

    def entries(self) -> list[T]:
        """Every entry, oldest first (for tests and a history menu)."""
        return list(self._items)


class Selection:
    """The object shown in the property view, with navigation history.

    Signals:

    ====================  ============================  ======================================
    signal                arguments                     emitted when
    ====================  ============================  ======================================
    ``changed``           ``obj: Object | None``        the selected object changed
    ``history_changed``   ``can_back, can_forward``     back / forward availability changed
    ====================  ============================  ======================================
    """

    def __init__(self, history_limit: int = 200) -> None:
        self.changed = Signal("changed")
        self.history_changed = Signal("history_changed")
        self.history: NavigationHistory[Object] = NavigationHistory(history_limit)
        self._current: Object | None = None

    @property
    def current(self) -> Object | None:
        return self._current

    def select(self, obj: Object | None) -> None:
        """Select ``obj`` (None clears) and record it in the history."""
        if obj is not None:
            self.history.push(obj)
            self._emit_history()
        self._set(obj)

    def back(self) -> Object | None:
        """Go to the previous selection; returns it (None when there is none)."""
        obj = self.history.back()
        if obj is not None:
            self._set(obj)
            self._emit_history()
        return obj

    def forward(self) -> Object | None:
        """Go to the next selection after :meth:`back`; returns it (None when there is none)."""
        obj = self.history.forward()
        if obj is not None:
            self._set(obj)
            self._emit_history()
        return obj

    def clear(self) -> None:
        """Forget the selection and the history (a new recording was opened)."""
        self.history.clear()
        self._emit_history()
        self._set(None)

    def _set(self, obj: Object | None) -> None:
        if obj is not self._current:
            self._current = obj
            self.changed.emit(obj)

    def _emit_history(self) -> None:
        self.history_changed.emit(self.history.can_back, self.history.can_forward)
