"""What a generic agent reads off a prompt without understanding it: which names occur in it, which option
values it states, what kind of work its verbs ask for, and what the note it asks for is called."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

REPAIR = re.compile(r"\b(repair|fix|correct|restore|reset|re-?cut|re-?point|switch|misconfigured|set up wrong)\b", re.I)
ADD = re.compile(r"\b(add|put|bring|place|pin|drop|open up)\b", re.I)
READ = re.compile(r"\b(read|pull|look up|check|record|recording|as served|as the view serves)\b", re.I)
NOTE = re.compile(r"\bnote\b", re.I)
ANSWER = re.compile(r"(\?|\b(tell me|report back|answer|what is|what are|which)\b)", re.I)
NOTE_NAME = re.compile(r"\btitled ((?:[A-Z0-9][\w&/'-]*\s*)+)|((?:[A-Z][\w&/'-]*\s+){1,6}(?:Note|Memo|Record|Log))\b")


@lru_cache(maxsize=64)
def _folded(text: str) -> str:
    return text.casefold()


def positions(text: str, needle: str) -> list[int]:
    """Where `needle` occurs in `text` as a whole phrase, ignoring case."""
    if not needle or needle.casefold() not in _folded(text):
        return []
    pattern = re.compile(r"(?<![\w])" + re.escape(needle) + r"(?![\w])", re.I)
    return [m.start() for m in pattern.finditer(text)]


def says(text: str, needle: str) -> bool:
    return bool(positions(text, needle))


@dataclass(frozen=True)
class Intent:
    add: bool
    repair: bool
    read: bool
    note: bool
    answer: bool


def intent(prompt: str, names: Iterable[str]) -> Intent:
    """The kinds of work the prompt's verbs ask for, read with catalog names blanked (a verb inside a widget's
    name, as in "Record Date Holdings", is not an instruction)."""
    said = prompt
    folded = _folded(prompt)
    for name in sorted({n for n in names if n and n.casefold() in folded}, key=len, reverse=True):
        said = re.sub(r"(?<![\w])" + re.escape(name) + r"(?![\w])", " ", said, flags=re.I)
    return Intent(bool(ADD.search(said)), bool(REPAIR.search(said)), bool(READ.search(said)),
                  bool(NOTE.search(said)), bool(ANSWER.search(said)))


def note_name(prompt: str) -> str:
    found = NOTE_NAME.findall(prompt)
    names = [(a or b).strip().rstrip(".,;") for a, b in found]
    return names[-1] if names else "Note"


def option_values(param: dict[str, Any]) -> list[Any]:
    return [o.get("value") if isinstance(o, dict) else o for o in param.get("options") or []]


def option_params(schema: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in schema.get("params") or [] if isinstance(p, dict) and isinstance(p.get("options"), list)
            and p.get("options") and p.get("paramName")]


def stated_values(prompt: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The option of each parameter the prompt states: an option said as a whole phrase, preferring one said
    right after the parameter's label (or after "to"), and never one said only inside a longer option."""
    lowered = prompt.lower()
    out: dict[str, Any] = {}
    for param in option_params(schema):
        spans: list[tuple[int, int, Any]] = []
        for opt in param["options"]:
            value = opt.get("value") if isinstance(opt, dict) else opt
            label = opt.get("label") if isinstance(opt, dict) else None
            for text in {str(value), str(label or value)}:
                spans += [(pos, pos + len(text), value) for pos in positions(prompt, text)]
        spans = [s for s in spans if not any(o[0] <= s[0] and s[1] <= o[1] and o[1] - o[0] > s[1] - s[0] for o in spans)]
        best: tuple[int, int, Any] | None = None
        for pos, _end, value in spans:
            before = lowered[max(0, pos - 24):pos]
            label = str(param.get("label") or "").lower()
            near = int(bool(re.search(r"\b(to|=|:)\s*$", before)) or str(param["paramName"]).lower() in before
                       or (bool(label) and label in before))
            if best is None or (near, -pos) > (best[0], -best[1]):
                best = (near, pos, value)
        if best is not None:
            out[str(param["paramName"])] = best[2]
    return out


def accepted(prompt: str, schema: dict[str, Any]) -> int:
    """How many of the widget's parameters have an option the prompt states (its signature's fit)."""
    return len(stated_values(prompt, schema))
