"""Fields a model needs together or one at a time: the closed replies and story facts say "give exactly one of …"
or "a patch needs …" in the same words, so a writer and a model read the same rule the same way."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel


def unset(model: BaseModel, names: Sequence[str]) -> list[str]:
    """The fields among `names` that the model leaves empty (None, "" or an empty list)."""
    return [n for n in names if not getattr(model, n)]


def needs(model: BaseModel, what: str, names: Sequence[str]) -> None:
    """Refuse `model` as `what` unless every field in `names` is given."""
    missing = unset(model, names)
    if missing:
        raise ValueError(f"{what} needs {', '.join(missing)}")


def one_of(model: BaseModel, names: Sequence[str]) -> None:
    """Refuse `model` unless exactly one field in `names` is given."""
    if sum(getattr(model, n) is not None for n in names) != 1:
        raise ValueError(f"give exactly one of {', '.join(names[:-1])} or {names[-1]}")


def together(model: BaseModel, names: Sequence[str], meaning: str) -> None:
    """Refuse `model` when some but not all fields in `names` are given; `meaning` says why they belong together."""
    given = {getattr(model, n) is None for n in names}
    if len(given) > 1:
        raise ValueError(f"give {' and '.join(names)} together: {meaning}")
