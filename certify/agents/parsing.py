"""Reading a model's reply as one action, strictly or leniently, and saying which.

Strict means the whole reply is one JSON object `{"tool": ..., "args": {...}}`. Lenient also reads a reply
with prose before the object, code fences, tags or trailing text around it: the first balanced JSON object that
has a "tool" key wins (objects nested in another, or in a malformed one, are never taken for the
whole). Models lose most strict points on format rather than on the work, so a run reports both
counts, and the parse mode decides only what is accepted.

`kind` describes the reply, not the policy: a reply that only the lenient reader understands is "lenient" in
either mode, and in strict mode it becomes an unparseable action (an invalid call) anyway. That way a strict
run still tells how many of its rejections were format alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from .base import Action

ParseMode = Literal["strict", "lenient"]
ParseKind = Literal["strict", "lenient", "failed"]
PARSE_MODES: tuple[str, ...] = ("strict", "lenient")

_DECODER = json.JSONDecoder()
_RAW_LIMIT = 2000


@dataclass(frozen=True)
class Parsed:
    action: Action
    kind: ParseKind


def _clip(text: str) -> str:
    return text if len(text) <= _RAW_LIMIT else text[:_RAW_LIMIT] + "…"


def _action_from(obj: Any) -> tuple[str, dict[str, Any]] | str:
    """The (tool, args) an object names, or why it names none."""
    if not isinstance(obj, dict):
        return "the reply is JSON but not an object"
    tool = obj.get("tool")
    if not isinstance(tool, str) or not tool.strip():
        return 'the JSON object has no "tool" string'
    args = obj.get("args", {})
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return f'"args" of {tool} must be a JSON object, got {type(args).__name__}'
    return tool.strip(), args


def _object_end(text: str, start: int) -> int | None:
    """The index after the brace that closes the object opened at `start` (strings respected), or None when
    the text ends first: the object is truncated."""
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        char = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def top_level_objects(text: str) -> Iterator[Any]:
    """Every JSON object of `text` that is not inside another object, in order. A malformed object is skipped
    whole, so an object nested in it is never taken for the whole; a truncated one ends the scan."""
    start = text.find("{")
    while start != -1:
        try:
            obj, end = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError:
            closed = _object_end(text, start)
            if closed is None:
                return
            end = closed
        else:
            yield obj
        start = text.find("{", end)


def truncated(text: str) -> bool:
    """Whether the text opens a JSON object it never closes (a reply cut off, typically at its output cap)."""
    start = text.find("{")
    return start != -1 and _object_end(text, start) is None


def parse_reply(text: str | None, mode: ParseMode) -> Parsed:
    """A JSON-mode reply as an action; anything unreadable becomes an Action with `parse_error` set."""
    if mode not in PARSE_MODES:
        raise ValueError(f"parse mode must be one of {', '.join(PARSE_MODES)}, got {mode!r}")
    raw = text or ""
    stripped = raw.strip()
    if not stripped:
        return Parsed(
            Action("", parse_error="the reply is empty; expected one JSON action", raw=raw), "failed"
        )
    strict_problem = None
    try:
        whole = json.loads(stripped)
    except json.JSONDecodeError as exc:
        strict_problem = (
            f"the reply is not a single JSON object ({exc.msg} at line {exc.lineno} column {exc.colno})"
        )
    else:
        found = _action_from(whole)
        if isinstance(found, tuple):
            return Parsed(Action(found[0], found[1], raw=_clip(raw)), "strict")
        strict_problem = found
    for obj in top_level_objects(stripped):
        if isinstance(obj, dict) and "tool" in obj:
            found = _action_from(obj)
            if isinstance(found, str):
                return Parsed(Action("", parse_error=found, raw=_clip(raw)), "failed")
            if mode == "strict":
                error = (
                    "the reply has text around its JSON action; reply with exactly one JSON object "
                    '{"tool": NAME, "args": {...}} and nothing else'
                )
                return Parsed(Action("", parse_error=error, raw=_clip(raw)), "lenient")
            return Parsed(Action(found[0], found[1], raw=_clip(raw), lenient=True), "lenient")
    if truncated(stripped):
        strict_problem = (
            f"{strict_problem}: it is truncated, the object is never closed (the reply may have hit "
            "its output cap)"
        )
    error = f'{strict_problem}; reply with exactly one JSON object {{"tool": NAME, "args": {{...}}}}'
    return Parsed(Action("", parse_error=error, raw=_clip(raw)), "failed")


def parse_arguments(tool: str, arguments: str | None, mode: ParseMode) -> Parsed:
    """A native tool call's `arguments` string as an action (an empty string means no arguments)."""
    raw = arguments or ""
    if not raw.strip():
        return Parsed(Action(tool, {}, raw=raw), "strict")
    try:
        args = json.loads(raw)
    except json.JSONDecodeError as exc:
        problem = f"the arguments of {tool} are not valid JSON ({exc.msg} at column {exc.colno})"
    else:
        if isinstance(args, dict):
            return Parsed(Action(tool, args, raw=_clip(raw)), "strict")
        problem = f"the arguments of {tool} must be a JSON object, got {type(args).__name__}"
    if truncated(raw):
        problem = (
            f"the arguments of {tool} are truncated JSON: the object is never closed (the reply may have "
            "hit its output cap)"
        )
        return Parsed(Action(tool, parse_error=problem, raw=_clip(raw)), "failed")
    first = next((obj for obj in top_level_objects(raw) if isinstance(obj, dict)), None)
    if first is not None:
        if mode == "strict":
            error = f"the arguments of {tool} have text around their JSON object; send the object alone"
            return Parsed(Action(tool, parse_error=error, raw=_clip(raw)), "lenient")
        return Parsed(Action(tool, first, raw=_clip(raw), lenient=True), "lenient")
    return Parsed(Action(tool, parse_error=problem, raw=_clip(raw)), "failed")
