"""The checks of a read story (read-and-note): the recorded columns must be the first served row's, and must
tell the carried parameter's options apart."""

from __future__ import annotations

from typing import Any

from simulator import Workspace, World

from ..sources import SourceError, Story
from ..suggest import listing
from .model import ResolvedTarget
from .said import value_text


def _first_row(
    world: World, backends: list[str], target: ResolvedTarget, args: dict[str, Any]
) -> dict | None:
    """The first row `target` serves for `args` (None when it serves none)."""
    ws = Workspace.start(world, {"workspace_backends": backends})
    envelope = ws.call(
        "get_widget_data", {"origin": target.origin, "widget_id": target.widget_id, "data_args": dict(args)}
    )
    rows = envelope.data.get("data") if envelope.ok and isinstance(envelope.data, dict) else None
    return rows[0] if isinstance(rows, list) and rows and isinstance(rows[0], dict) else None


def _read_policy_errors(
    world: World,
    story: Story,
    backends: list[str],
    target: ResolvedTarget,
    carried_key: str,
    carried_value: Any,
) -> list[SourceError]:
    """A read story's Derive level is graded by the note: the first served row's recorded columns. When another
    option of the carried parameter serves the same values in those columns (rows that ignore the parameter,
    such as a reconstructed catalog's placeholders), an agent that reads any cut writes the right note — the
    shortcuts' enumerator passes and the level cannot certify."""
    first = _first_row(world, backends, target, target.params)
    if first is None:
        return []
    record = story.facts.record or [k for k in first if k not in target.params][:5]
    if not record or any(k not in first for k in record):
        return []
    same = []
    for option in target.widget.options(carried_key):
        if str(option) == str(carried_value):
            continue
        other = _first_row(world, backends, target, {**target.params, carried_key: option})
        if other is not None and all(str(other.get(k)) == str(first[k]) for k in record):
            same.append(option)
    if not same:
        return []
    return [
        SourceError(
            story.file,
            "facts.policy.carries",
            f"'{target.name}' serves the same {', '.join(record)} for {carried_key} "
            f"{value_text(carried_value)!r} as for {listing([value_text(o) for o in same])}: the read note, which "
            "grades the Derive level, is right whatever cut an agent reads (the shortcuts' enumerator passes); "
            f"carry a parameter whose options change the recorded row"
            + ("" if story.facts.record else ", or name columns that differ in facts.record")
            + ", or make the story an add",
        )
    ]


def _record_errors(
    world: World, file: str, backends: list[str], target: ResolvedTarget, record: list[str]
) -> list[SourceError]:
    """The note of a read story records columns of the first row the target serves: each must be one."""
    first = _first_row(world, backends, target, target.params)
    if first is None:
        return [
            SourceError(
                file,
                "facts.record",
                f"'{target.name}' serves no rows for {target.params}: there is nothing to record",
            )
        ]
    missing = [c for c in record if c not in first]
    if missing:
        return [
            SourceError(
                file,
                "facts.record",
                f"the rows '{target.name}' serves for {target.params} have no "
                f"column {missing[0]!r} (columns: {', '.join(first)})",
            )
        ]
    return []
