"""The shape every shortcut agent shares: look around, pick what to act on by some rule that does not
understand the request, then do the kind of work the prompt's verbs ask for.

A shortcut is a generator of calls: it yields `(tool, args)` and is sent back the envelope the call produced,
exactly what any agent under test gets. It sees the prompt and the tool results only — never the eval block,
the task's metadata or the turn budget; when the budget runs out the episode refuses further calls and the
shortcut stops there. Each agent in the battery overrides one or two decisions (which widgets, which values,
what goes into the note, what else gets built) and keeps the rest competent, so that when it fails, it fails
for want of the one thing the level hides.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

from simulator import option_values

from ..agents.base import TaskView
from ..agents.reading import named_widgets, note_name
from .reading import WRITE_ONLY, Intent, intent, option_params, ranked, says, stated_values

Call = tuple[str, dict[str, Any]]
Play = Generator[Call, dict[str, Any], None]
MAX_CANDIDATES = 12
# What agents read off the same prompt and the same listing is the same for all of them: computed once. Keys
# hold only what an agent sees — what was served, never where it sits: a counterfactual copy serves other
# content under the same ids and catalog places, and a reading of the original must not stand for it there.
# The cache is bounded.
_READINGS: dict[tuple[Any, ...], Any] = {}
_READINGS_MAX = 4096
# A listing's content, as a small token: every reading of an agent's play is keyed by it (hashing the whole
# listing per reading would cost more than some readings do). Tokens are never reused, so clearing the table
# cannot make one listing's readings another's.
_LISTINGS: dict[tuple[str, ...], int] = {}
_LISTINGS_MAX = 1024
_TOKENS = itertools.count()
# The same token by the ids of the entry objects served (with the entries, which keeps the ids theirs).
_LISTED: dict[tuple[int, ...], tuple[list[Any], int]] = {}
# The text of a served object (a listing entry, a schema's parameters). The simulator serves the same objects
# to every episode of a world, so each one's text is worked out once; the object is held beside its text, so its
# id stays its own while the entry lives.
_SERVED: dict[int, tuple[Any, str]] = {}
_SERVED_MAX = 16384


def served_text(obj: Any) -> str:
    """`obj` (JSON as a tool served it) as canonical text: equal texts, equal content."""
    held = _SERVED.get(id(obj))
    if held is not None and held[0] is obj:
        return held[1]
    text = json.dumps(obj, sort_keys=True, default=str)
    if len(_SERVED) >= _SERVED_MAX:
        _SERVED.clear()
    _SERVED[id(obj)] = (obj, text)
    return text


# Each listed entry with its name and app folded, by the listing's token (`Generic.catalog_key`): every agent
# of a battery looks for them in its prompt.
_FOLDED: dict[int, list[tuple[dict[str, Any], tuple[str, str]]]] = {}


def _folded_names(token: int, catalog: list[dict[str, Any]]) -> list[tuple[dict[str, Any], tuple[str, str]]]:
    held = _FOLDED.get(token)
    if held is None:
        if len(_FOLDED) >= _LISTINGS_MAX:
            _FOLDED.clear()
        held = _FOLDED[token] = [
            (w, (str(w.get("name") or "\0").casefold(), str(w.get("category") or "\0").casefold()))
            for w in catalog
        ]
    return held


@dataclass
class Plan:
    """One catalog widget to act on and the parameter sets to try on it (the first is the agent's best)."""

    entry: dict[str, Any]
    choices: list[dict[str, Any]]

    @property
    def key(self) -> tuple[str, str]:
        return str(self.entry.get("origin")), str(self.entry.get("widget_id"))


@dataclass
class Generic:
    """The competent part of a shortcut agent; subclasses override `choose`, `values`, `note_text` or `extras`."""

    name: str = "generic"
    prompt: str = ""
    snapshot: dict[str, Any] = field(default_factory=dict)
    catalog: list[dict[str, Any]] = field(default_factory=list)
    schemas: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    rows: list[Any] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    refused: bool = False
    _catalog_key: int | None = None

    # -- the run ------------------------------------------------------------------------------------------
    def play(self, view: TaskView) -> Play:
        self.prompt = view.prompt
        self.tools = set(view.tool_names)
        self.snapshot = (yield from self.call("get_workspace_snapshot", {})) or {}
        named = [
            b.get("name")
            for b in self.snapshot.get("backends") or []
            if says(self.prompt, str(b.get("name")))
        ]
        for origin in dict.fromkeys(named) or [None]:
            data = yield from self.call("list_available_widgets", {"origin": origin} if origin else {})
            self.catalog += (data or {}).get("widgets") or []
        plans = yield from self.choose()
        how = self.recall(
            "intent", compute=lambda: intent(self.prompt, [str(w.get("name")) for w in self.catalog])
        )
        yield from self.act(plans, how)
        yield from self.read_sources()
        if how.note:
            yield from self.call(
                "add_generative_widget",
                {
                    "widget_type": "note",
                    "name": self.note_title(),
                    "data": self.note_text(plans),
                },
            )
        extras = yield from self.extras(plans)
        yield from self.act(extras, WRITE_ONLY)
        if how.answer and "final_answer" in self.tools:
            yield from self.call("final_answer", {"text": self.note_text(plans)})

    def call(self, tool: str, args: dict[str, Any]) -> Generator[Call, dict[str, Any], Any]:
        """Make one call; return its data (None on an error). A refused call past the budget stops the run."""
        if self.refused or (tool not in self.tools):
            return None
        envelope = yield tool, args
        error = envelope.get("error") or {}
        if error.get("code") in ("turn_budget_exhausted", "episode_completed"):
            self.refused = True
        return envelope.get("data") if envelope.get("ok") else None

    # -- decisions subclasses change -----------------------------------------------------------------------
    def choose(self) -> Generator[Call, dict[str, Any], list[Plan]]:
        """The widgets the prompt names; when it names none, the catalog's best bag-of-words match."""
        plans = yield from self.plans_for(self.named() or self.ranked(1))
        return plans

    def values(self, schema: dict[str, Any]) -> list[dict[str, Any]]:
        """Parameter sets to try: the values the prompt states (unstated parameters keep their defaults)."""
        return [self.stated(schema)]

    def extras(self, plans: list[Plan]) -> Generator[Call, dict[str, Any], list[Plan]]:
        """Widgets placed once the work is done, on top of it (none for a competent agent)."""
        return []
        yield  # pragma: no cover - makes this a generator

    def note_title(self) -> str:
        """The name its note gets: the one the prompt gives."""
        return self.asked_note() or "Note"

    def asked_note(self) -> str | None:
        """The note the prompt asks for, read as the agents read it (`reading.note_name` with the catalog's
        names, so a widget the request mentions whose name ends like a note's — "Contact Log" — is not taken
        for the note); None when it asks for none."""
        return self.recall(
            "asked note",
            compute=lambda: note_name(self.prompt, [str(w.get("name") or "") for w in self.catalog]),
        )

    def note_text(self, plans: list[Plan]) -> str:
        """What the note (or answer) says: the rows read, as served."""
        lines = []
        for rows in self.rows:
            for row in rows[:5]:
                lines.append(
                    "; ".join(f"{k}: {v}" for k, v in row.items()) if isinstance(row, dict) else str(row)
                )
        return "\n".join(lines) or "Done: " + ", ".join(str(p.entry.get("name")) for p in plans)

    # -- shared helpers ------------------------------------------------------------------------------------
    def placed(self) -> list[dict[str, Any]]:
        comp = self.snapshot.get("dashboard_composition") or {}
        return [w for w in comp.get("widgets") or [] if not w.get("generated")]

    def placed_entries(self, skip: set[tuple[Any, Any]] | None = None) -> list[dict[str, Any]]:
        """The catalog entries of the widgets placed on the board, once each in board order (keyed by origin and
        widget id; those in `skip` left out): what an agent that tries the board before the catalog reads."""
        by_key = {(w.get("origin"), w.get("widget_id")): w for w in self.catalog}
        keys = dict.fromkeys((w.get("origin"), w.get("widget_id")) for w in self.placed())
        return [by_key[k] for k in keys if k in by_key and k not in (skip or set())]

    def recall(self, *key: Any, compute: Callable[[], Any]) -> Any:
        """What this prompt and this listing give under `key`: every agent reading them gets the same, so it is
        worked out once (the key holds only what an agent sees)."""
        full = (*key, self.prompt, self.catalog_key())
        if full not in _READINGS:
            if len(_READINGS) >= _READINGS_MAX:
                _READINGS.clear()
            _READINGS[full] = compute()
        return _READINGS[full]

    def said_skills(self) -> list[int]:
        """Which of the snapshot's skills the prompt names by their display names (their indexes, in order)."""
        skills = self.snapshot.get("skills") or []
        names = tuple(str(s.get("name")) for s in skills)
        return self.recall(
            "said skills", names, compute=lambda: [i for i, n in enumerate(names) if says(self.prompt, n)]
        )

    def stated(self, schema: dict[str, Any]) -> dict[str, Any]:
        # keyed by the parameters as served (their options and labels), not by the widget's id
        return dict(
            self.recall(
                "stated",
                served_text(schema.get("params")),
                compute=lambda: stated_values(self.prompt, schema),
            )
        )

    def categories(self) -> set[str]:
        def compute() -> set[str]:
            names = {str(w.get("category")) for w in self.catalog if w.get("category")}
            return {c for c in names if says(self.prompt, c)}

        return self.recall("categories", compute=compute)

    def scope(self) -> list[dict[str, Any]]:
        """The catalog entries of the apps the prompt names (all listed entries when it names none)."""

        def compute() -> list[dict[str, Any]]:
            cats = self.categories()
            return [w for w in self.catalog if not cats or w.get("category") in cats]

        return list(self.recall("scope", compute=compute))

    def named(self) -> list[dict[str, Any]]:
        """Widgets named in the prompt, longest names first, never two claiming the same words."""
        return list(self.recall("named", compute=self._named))

    def _named(self) -> list[dict[str, Any]]:
        # Only entries whose name or app occurs in the prompt can be named (or tell the app): the rest are skipped
        # before the phrase search, which is what costs.
        folded = self.prompt.casefold()
        said = [
            w for w, keys in _folded_names(self.catalog_key(), self.catalog) if any(k in folded for k in keys)
        ]
        return named_widgets(self.prompt, said, limit=MAX_CANDIDATES)

    def ranked(self, k: int, exclude: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """The k scope entries the whole prompt, as a bag of words, scores highest (named ones excluded)."""
        skip = {
            (w.get("origin"), w.get("widget_id")) for w in (exclude if exclude is not None else self.named())
        }

        def compute() -> list[dict[str, Any]]:
            pool = self.scope()
            return [
                pool[i]
                for i in ranked(self.prompt, [f"{w.get('name')} {w.get('description')}" for w in pool])
            ]

        ranking = self.recall("ranking", compute=compute)
        # the first k not skipped (a ranking is the whole scope, and k is small)
        return list(
            itertools.islice((w for w in ranking if (w.get("origin"), w.get("widget_id")) not in skip), k)
        )

    def catalog_key(self) -> int:
        """The token of what the listing served (every entry's content, in order)."""
        if self._catalog_key is None:
            # The agents of a battery are served the very same entry objects: known by their ids, the entries
            # (held, so no id is another object's meanwhile) need not be read again.
            ids = tuple(map(id, self.catalog))
            held = _LISTED.get(ids)
            if held is not None:
                self._catalog_key = held[1]
                return held[1]
            content = tuple(map(served_text, self.catalog))
            token = _LISTINGS.get(content)
            if token is None:
                if len(_LISTINGS) >= _LISTINGS_MAX:
                    _LISTINGS.clear()
                token = _LISTINGS[content] = next(_TOKENS)
            if len(_LISTED) >= _LISTINGS_MAX:
                _LISTED.clear()
            _LISTED[ids] = (list(self.catalog), token)
            self._catalog_key = token
        return self._catalog_key

    def schema(self, entry: dict[str, Any]) -> Generator[Call, dict[str, Any], dict[str, Any] | None]:
        key = (str(entry.get("origin")), str(entry.get("widget_id")))
        if key not in self.schemas:
            data = yield from self.call("get_widget_schema", {"origin": key[0], "widget_id": key[1]})
            if data is None:
                return None
            self.schemas[key] = data.get("schema") or {}
        return self.schemas[key]

    def plans_for(self, entries: list[dict[str, Any]]) -> Generator[Call, dict[str, Any], list[Plan]]:
        plans = []
        for entry in entries:
            schema = yield from self.schema(entry)
            if schema is not None:
                plans.append(Plan(entry, self.values(schema)[:MAX_CANDIDATES]))
        return plans

    def variations(self, schema: dict[str, Any], base: dict[str, Any]) -> list[dict[str, Any]]:
        """`base`, then every option of each parameter it does not set, one parameter at a time."""
        out = [dict(base)]
        for param in option_params(schema):
            name = str(param["paramName"])
            if name in base:
                continue
            for value in option_values(param):
                if value != param.get("value"):
                    out.append({**base, name: value})
        return out

    def act(self, plans: list[Plan], how: Intent) -> Generator[Call, dict[str, Any], None]:
        """Repair a placed instance, add the widget, or read its rows — each parameter set in turn."""
        placed = self.placed()
        for plan in plans:
            origin, wid = plan.key
            instances = [w for w in placed if w.get("widget_id") == wid and w.get("origin") == origin]
            choices = plan.choices or [{}]
            if instances and (how.repair or not how.add):
                stale = max(
                    instances,
                    key=lambda w: sum(
                        1 for k, v in choices[0].items() if (w.get("data_args") or {}).get(k) != v
                    ),
                )
                yield from self.call(
                    "update_widget", {"widget_uuid": stale["widget_uuid"], "data_args": choices[0]}
                )
                rest = choices[1:]
                if how.read and not how.add and not how.repair:
                    rest = []
                for args in rest:
                    yield from self.call(
                        "create_widget", {"origin": origin, "widget_id": wid, "data_args": args}
                    )
            elif how.add or how.repair or not how.read:
                for args in choices:
                    yield from self.call(
                        "create_widget", {"origin": origin, "widget_id": wid, "data_args": args}
                    )
            if how.read:
                for args in choices:
                    data = yield from self.call(
                        "get_widget_data", {"origin": origin, "widget_id": wid, "data_args": args}
                    )
                    if data is not None:
                        self.rows.append(list(data.get("data") or []))

    def read_sources(self) -> Generator[Call, dict[str, Any], None]:
        """Read every skill the prompt names (by its display name)."""
        skills = self.snapshot.get("skills") or []
        for i in self.said_skills():
            data = yield from self.call("get_skill_content", {"slug": skills[i].get("slug")})
            if data is not None:
                self.texts.append(str(data.get("content") or ""))
