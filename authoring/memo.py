"""Per-process memos of pure functions, keyed by the content of their arguments, never by who passed them.

`taskforge check --draft` compiles the same level several times with the same inputs: `check` drafts each Find
request to read it, then the authoring run drafts every level again, and a level the gates refuse is drafted once
more per round by a rule author that gives the same answer to the same facts. A memo answers the repeats. Its key
is a digest of everything the function is given, pickled, so an argument that differs in any field (a story's
fact, a default, a target's parameter) is a different key; what cannot be pickled is not memoised at all.

The world is the exception: pickling it would cost more than the work saved. A world is identified by its
directory and its fingerprint (the digest of every file it was loaded from: `simulator.World`), and the catalog
widgets it owns by their place in it; a world is immutable once loaded, and one derived from another with parts
replaced carries a fingerprint of its own (`certify.counterfactual`). A function that also reads files the world
loader does not (the lexicon beside the world) must put what it read into the key itself.
"""

from __future__ import annotations

import copy
import hashlib
import io
import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from simulator import WidgetDef, World

T = TypeVar("T")


class _ContentPickler(pickle.Pickler):
    """Pickles by value, except the world (and the widgets it owns), which it names."""

    def __init__(self, file: io.BytesIO, world: World | None) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.world = world

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, World):
            return ("world", str(obj.path), obj.fingerprint)
        if isinstance(obj, WidgetDef) and self.world is not None:
            fixture = self.world.fixture_of(obj.origin)
            if fixture is not None and fixture.catalog.widgets.get(obj.widget_id) is obj:
                return ("widget", str(self.world.path), self.world.fingerprint, obj.origin, obj.widget_id)
        return None  # by value: a widget the world does not own is pickled whole


def content_key(*parts: Any, world: World | None = None) -> str | None:
    """A digest of `parts` by content (None when some part cannot be pickled: the call is then not memoised).
    Equal content pickled in another order (a dict built in another order) gives another key: a miss, never a
    wrong hit."""
    out = io.BytesIO()
    try:
        _ContentPickler(out, world).dump(parts)
    except (pickle.PicklingError, TypeError, AttributeError, ValueError, RecursionError):
        return None
    return hashlib.sha256(out.getvalue()).hexdigest()


class Memo(Generic[T]):
    """A bounded, thread-safe memo (least recently used first out). Values are copied in and out, so a caller
    that changes what it was handed cannot change what the next caller gets."""

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self._values: OrderedDict[str, T] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        _MEMOS.append(self)

    def get(self, key: str | None, compute: Callable[[], T]) -> T:
        if key is None:
            return compute()
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                self.hits += 1
                return copy.deepcopy(self._values[key])
            self.misses += 1
        value = compute()  # outside the lock: two threads may compute the same key, with the same result
        with self._lock:
            self._values[key] = copy.deepcopy(value)
            while len(self._values) > self.size:
                self._values.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
            self.hits = self.misses = 0


_MEMOS: list[Memo[Any]] = []


def forget() -> None:
    """Empty every memo: the key covers the arguments, not the code, so a process that swaps code under a memoised
    function (a test's monkeypatch) must forget what the old code answered."""
    for memo in _MEMOS:
        memo.clear()


__all__ = ["Memo", "content_key", "forget"]
