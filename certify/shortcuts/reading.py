"""What a shortcut agent reads off a prompt without understanding it: the kind of work its verbs ask for and the
option values it states anywhere (with no regard to which widget they were said for). Names, notes and word
ranking come from the readers every generic agent shares (certify/agents/reading.py, retrieval.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..agents.reading import blank_names, find, option_mentions
from ..agents.retrieval import BM25

REPAIR = re.compile(
    r"\b(repair|fix|correct|restore|reset|re-?cut|re-?point|switch|misconfigured|set up wrong)\b", re.I
)
ADD = re.compile(r"\b(add|put|bring|place|pin|drop|open up)\b", re.I)
READ = re.compile(r"\b(read|pull|look up|check|record|recording|as served|as the view serves)\b", re.I)
NOTE = re.compile(r"\bnote\b", re.I)
ANSWER = re.compile(r"(\?|\b(tell me|report back|answer|what is|what are|which)\b)", re.I)


@dataclass(frozen=True)
class Intent:
    add: bool
    repair: bool
    read: bool
    note: bool
    answer: bool


WRITE_ONLY = Intent(add=True, repair=False, read=False, note=False, answer=False)


def intent(prompt: str, names: Iterable[str]) -> Intent:
    """The kinds of work the whole prompt's verbs ask for, read with catalog names blanked (a verb inside a
    widget's name, as in "Record Date Holdings", is not an instruction)."""
    folded = prompt.casefold()
    said = blank_names(prompt, [n for n in names if n and n.casefold() in folded])
    return Intent(
        bool(ADD.search(said)),
        bool(REPAIR.search(said)),
        bool(READ.search(said)),
        bool(NOTE.search(said)),
        bool(ANSWER.search(said)),
    )


@lru_cache(maxsize=16384)
def says(text: str, needle: str) -> bool:
    # pure, and every agent of a battery asks it of the same prompt for the same backends, apps and skills
    return bool(find(text, needle))


def option_params(schema: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        p
        for p in schema.get("params") or []
        if isinstance(p, dict)
        and isinstance(p.get("options"), list)
        and p.get("options")
        and p.get("paramName")
    ]


def stated_values(prompt: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The option of each parameter the prompt states anywhere, preferring one said right after the parameter's
    label or name (or after "to", "=", ":"), then the first said."""
    lowered = prompt.lower()
    out: dict[str, Any] = {}
    for param in option_params(schema):
        cues = [c for c in (str(param.get("label") or "").lower(), str(param["paramName"]).lower()) if c]
        best: tuple[int, int, Any] | None = None
        for m in option_mentions(prompt, param):
            before = lowered[max(0, m.start - 24) : m.start]
            near = int(bool(re.search(r"\b(to|=|:)\s*$", before)) or any(c in before for c in cues))
            if best is None or (near, -m.start) > (best[0], -best[1]):
                best = (near, m.start, m.value)
        if best is not None:
            out[str(param["paramName"])] = best[2]
    return out


def ranked(query: str, documents: list[str]) -> list[int]:
    """Indexes of the documents sharing a word with the query, best BM25 score first (ties by position)."""
    return [i for i, _ in _index(tuple(documents)).rank(query)] if documents else []


@lru_cache(maxsize=256)
def _index(documents: tuple[str, ...]) -> BM25:
    """The same catalog listing is ranked by every agent of a battery: indexed once."""
    return BM25(documents)
