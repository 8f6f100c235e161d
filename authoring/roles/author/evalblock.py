"""The eval block of an authored level, written record by record against certify's task models.

Every record is checked against its model in `certify.task` as it is written, so a misspelt key or a value of the
wrong type is an error where the author wrote it, not a schema-gate failure three steps later. The record is kept
as written — its keys in the order given, its values as given — because that is the task file: a model's own dump
orders keys by declaration and writes the grid's integer positions as floats, which would rewrite every committed
task file for nothing.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from certify import Eval


class AuthorBug(ValueError):
    """The rule author wrote a record its own schema refuses (a bug in the author, never in a story)."""


def _refused(where: str, exc: ValidationError) -> AuthorBug:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "(root)"
    return AuthorBug(f"the rule author wrote an invalid {where}: {loc}: {err['msg']}")


def record(model: type[BaseModel], where: str, **fields: Any) -> dict[str, Any]:
    """`fields` as a record of `model` (checked, kept as given); `where` names it in the error."""
    try:
        model.model_validate(fields)
    except ValidationError as exc:
        raise _refused(where, exc) from exc
    return fields


@lru_cache(maxsize=64)
def _field(key: str) -> TypeAdapter[Any]:
    info = Eval.model_fields.get(key)
    if info is None or info.annotation is None:
        raise AuthorBug(f"the rule author wrote eval.{key}, which is not a key of a task's eval block")
    return TypeAdapter(info.annotation)


class EvalBlock:
    """One level's eval block as the plan writes it: keys in the order they were first written."""

    def __init__(self) -> None:
        self._block: dict[str, Any] = {}

    def add(self, key: str, **fields: Any) -> dict[str, Any]:
        """Append one record to the list `key` (eval.required_widgets, …) and return it."""
        try:
            _field(key).validate_python([fields])
        except ValidationError as exc:
            raise _refused(f"eval.{key} entry", exc) from exc
        self._block.setdefault(key, []).append(fields)
        return fields

    def set(self, key: str, value: Any) -> None:
        """Set `key` to `value` whole (a list of plain values, a number, a rules object)."""
        try:
            _field(key).validate_python(value)
        except ValidationError as exc:
            raise _refused(f"eval.{key}", exc) from exc
        self._block[key] = value

    def count(self, key: str) -> int:
        return len(self._block.get(key, ()))

    def wire(self) -> dict[str, Any]:
        """The block as the task file holds it."""
        return dict(self._block)
