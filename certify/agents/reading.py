"""Reading a request the way a literal-minded agent does: where a phrase occurs, which catalog names and option
values it states, what it asks to be done, and which sentences it fences off.

Shared by the offline agents that see only what any agent sees (the heuristic baseline and the capability
ladder), so that they read prompts alike and a change in how a prompt is read changes every one of them.
Everything here is a pure function of text and of data the agent was shown (catalog listings, schemas).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from simulator import param_options

REPAIR_WORDS = re.compile(r"\b(repair|fix|correct|restore|reset|re-?point|switch)\b", re.I)
ADD_WORDS = re.compile(r"\b(add|put|bring|place(?! in\b)|pin|drop|open up|get .{0,40}? up)\b", re.I)
READ_WORDS = re.compile(r"\b(read|pull|look up|check|record|recording|as served|exactly as)\b", re.I)
NOTE_NAME = re.compile(r"((?:[A-Z][\w&/'-]*\s+){1,6}(?:Note|Memo|Record|Log))\b")
ANSWER_WORDS = re.compile(r"(\?|\b(tell me|report back|answer|what is|what are|which)\b)", re.I)
STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "for",
        "to",
        "on",
        "in",
        "from",
        "with",
        "by",
        "at",
        "is",
        "are",
        "be",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "set",
        "please",
        "open",
        "dashboard",
        "view",
        "widget",
        "widgets",
        "add",
        "put",
        "get",
        "up",
        "before",
        "after",
        "both",
        "each",
        "same",
        "all",
    ]
)


def words(text: str, longer_than: int = 2, stop: frozenset[str] = STOP) -> set[str]:
    """The one word tokenizer: lowercase runs of letters and digits longer than `longer_than`, less `stop`.
    Callers differ only in those two (a search wants long words, a listing every one)."""
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in stop and len(w) > longer_than}


# Lower-casing remembered by text: an agent looks for every name of a listing in the same prompt, so the prompt
# would otherwise be lowered once per name (the hottest line of a certification's agents).
_lowered = functools.lru_cache(maxsize=4096)(str.lower)


def find(text: str, needle: str) -> list[int]:
    """Positions where `needle` occurs in `text` as a whole phrase (case-insensitive)."""
    if not needle:
        return []
    low, want = _lowered(text), _lowered(needle)
    out, start = [], 0
    while (i := low.find(want, start)) >= 0:
        before = low[i - 1] if i > 0 else " "
        end = i + len(want)
        after = low[end] if end < len(low) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            out.append(i)
        start = i + 1
    return out


def finds(text: str, needles: Iterable[str]) -> dict[str, list[int]]:
    """`find(text, n)` for each needle the text states (read the result with `.get(n, [])`: one it does not
    state is left out). A listing's names are looked for in one prompt, and most are not in it: a name can only
    be found where the text has a word equal to the name's first word (a match starts after a non-word
    character and its first word ends at one), so only the names led by one of the text's words are searched."""
    by_lead, unled = _needle_index(tuple(needles))
    out: dict[str, list[int]] = {}
    for word in dict.fromkeys(_WORD.findall(_lowered(text))):
        for n in by_lead.get(word, ()):
            if at := find(text, n):
                out[n] = at
    for n in unled:
        if at := find(text, n):
            out[n] = at
    return out


_WORD = re.compile(r"\w+")


@functools.lru_cache(maxsize=64)
def _needle_index(needles: tuple[str, ...]) -> tuple[dict[str, tuple[str, ...]], tuple[str, ...]]:
    """The distinct needles by their first word (lower-cased), and those that do not start with a word
    character (searched whatever the text): one index per listing's names, built once."""
    by_lead: dict[str, list[str]] = {}
    unled: list[str] = []
    for n in dict.fromkeys(needles):
        if not n:
            continue
        lead = _WORD.match(_lowered(n))
        if lead is None:
            unled.append(n)
        else:
            by_lead.setdefault(lead.group(), []).append(n)
    return {k: tuple(v) for k, v in by_lead.items()}, tuple(unled)


@dataclass(frozen=True)
class Listing:
    """What the agents look up in a catalog listing again and again, worked out once per listing: the texts
    they search a prompt for, and the entries by origin and by app."""

    entries: tuple[dict[str, Any], ...]
    # (category, name) of each entry, in order, as `named_widgets` searches them
    apps_and_names: tuple[str, ...]
    # name, category and origin of each entry, in order, as a request marks the names it says
    said_names: tuple[str, ...]
    origins: list[str]
    apps: list[str]
    # entry positions by origin and by category (as served, unhashable ones left out: `of` then scans)
    by_origin: dict[Any, list[int]]
    by_app: dict[Any, list[int]]
    scan: bool
    # entry positions by name as `named_widgets` reads it, and the app names entries hold
    by_name: dict[str, list[int]]
    app_names: frozenset[str]

    def of(self, sources: Iterable[str]) -> list[dict[str, Any]]:
        """The entries whose origin or app is one of `sources`, in listing order."""
        wanted = set(sources)
        if self.scan:
            return [w for w in self.entries if w.get("origin") in wanted or w.get("category") in wanted]
        hits = {i for s in wanted for i in (*self.by_origin.get(s, ()), *self.by_app.get(s, ()))}
        return [self.entries[i] for i in sorted(hits)]


# Listings by the ids of the entry objects served (held, so the ids stay theirs): the simulator serves the same
# entries to every episode of a world, and every agent's reading of a prompt goes over the whole listing.
_LISTINGS: dict[tuple[int, ...], Listing] = {}
_LISTINGS_SIZE = 256


# The same by the catalog list itself (held, and its length checked): an agent reads one listing it was served
# many times over while it plays, and the ids of its hundreds of entries cost more to hash than what is read.
_BY_LIST: dict[int, tuple[list[dict[str, Any]], int, Listing]] = {}


def listing(catalog: list[dict[str, Any]]) -> Listing:
    """The `Listing` of `catalog` (entries are never changed once served)."""
    mine = _BY_LIST.get(id(catalog))
    if mine is not None and mine[0] is catalog and mine[1] == len(catalog):
        return mine[2]
    held = _by_entries(catalog)
    if len(_BY_LIST) >= _LISTINGS_SIZE:
        _BY_LIST.clear()
    _BY_LIST[id(catalog)] = (catalog, len(catalog), held)
    return held


def _by_entries(catalog: list[dict[str, Any]]) -> Listing:
    ids = tuple(map(id, catalog))
    held = _LISTINGS.get(ids)
    if held is not None:
        return held
    by_origin: dict[Any, list[int]] = {}
    by_app: dict[Any, list[int]] = {}
    scan = False
    by_name: dict[str, list[int]] = {}
    for i, w in enumerate(catalog):
        by_name.setdefault(str(w.get("name") or ""), []).append(i)
        try:
            by_origin.setdefault(w.get("origin"), []).append(i)
            by_app.setdefault(w.get("category"), []).append(i)
        except TypeError:
            scan = True
    held = Listing(
        tuple(catalog),
        tuple(str(w.get(k) or "") for w in catalog for k in ("category", "name")),
        tuple(str(w.get(k) or "") for w in catalog for k in ("name", "category", "origin")),
        sorted({str(w.get("origin")) for w in catalog if w.get("origin")}),
        sorted({str(w.get("category")) for w in catalog if w.get("category")}),
        by_origin,
        by_app,
        scan,
        by_name,
        frozenset(str(w.get("category")) for w in catalog if w.get("category")),
    )
    if len(_LISTINGS) >= _LISTINGS_SIZE:
        _LISTINGS.clear()
    _LISTINGS[ids] = held
    return held


def named_widgets(prompt: str, catalog: list[dict[str, Any]], limit: int = 3) -> list[dict[str, Any]]:
    """Catalog entries whose name the prompt states, in prompt order: the longest name wins an overlap, an entry
    of an app (category) the prompt names wins over a namesake elsewhere, and each name counts once."""
    listed = listing(catalog)
    said = finds(prompt, listed.apps_and_names)
    apps = {c for c in said if c in listed.app_names}
    hits: list[tuple[int, int, dict[str, Any]]] = []
    # the entries whose name the prompt says, in listing order (only those are visited)
    for i in sorted(i for n in said for i in listed.by_name.get(n, ())):
        w = catalog[i]
        positions = said[str(w.get("name") or "")]
        in_app = 0 if not apps or w.get("category") in apps else 1
        hits.append((in_app, positions[0], w))
    chosen: list[dict[str, Any]] = []
    taken: list[tuple[int, int]] = []
    for _in_app, pos, w in sorted(hits, key=lambda h: (h[0], -len(str(h[2].get("name"))), h[1])):
        span = (pos, pos + len(str(w.get("name"))))
        if any(a <= span[0] < b or a < span[1] <= b for a, b in taken):
            continue
        if any(c["name"] == w["name"] for c in chosen):
            continue
        taken.append(span)
        chosen.append(w)
    order = {id(w): find(prompt, str(w.get("name")))[:1] or [10**6] for w in chosen}
    return sorted(chosen, key=lambda w: order[id(w)])[:limit]


def blank_names(prompt: str, names: Iterable[str]) -> str:
    """The prompt with the given names blanked, so a verb inside a widget's name ("Record Date Holdings") is
    not read as an instruction."""
    # only the names the prompt holds at all (a listing's hundreds are one alternation, slow to compile and to
    # run): a name it does not contain cannot match, so the result is the same
    folded = prompt.casefold()
    ordered = sorted({n for n in names if n and n.casefold() in folded}, key=lambda n: (-len(n), n))
    if not ordered:
        return prompt
    return _names_pattern(tuple(ordered)).sub(" ", prompt)


@functools.lru_cache(maxsize=1024)
def _names_pattern(ordered: tuple[str, ...]) -> re.Pattern[str]:
    # Compiled once per set of names a prompt holds: `re`'s own cache is too small for a certification's patterns.
    return re.compile(r"(?<![\w])(?:" + "|".join(re.escape(n) for n in ordered) + r")(?![\w])", re.I)


@dataclass(frozen=True)
class Mention:
    """One place where a text states an option of a parameter."""

    start: int
    end: int
    value: Any
    text: str


def option_mentions(text: str, param: dict[str, Any], as_written: bool = False) -> list[Mention]:
    """Every statement of one of `param`'s options (by value or by label) in `text`, in order. An option said
    inside a longer option ("Filled" in "Partially Filled") is not said; with `as_written`, neither is one whose
    case differs from how the catalog writes it ("Open" is a status, "the open dashboard" is not)."""
    spans: list[Mention] = []
    for opt in param_options(param):
        value, label = opt.value, opt.label
        for said in {str(value), label or str(value)}:
            spans += [
                Mention(pos, pos + len(said), value, said)
                for pos in find(text, said)
                if not as_written or said == said.lower() or text[pos : pos + len(said)] == said
            ]
    kept = [
        m
        for m in spans
        if not any(
            o.start <= m.start and m.end <= o.end and (o.end - o.start) > (m.end - m.start) for o in spans
        )
    ]
    return sorted(set(kept), key=lambda m: (m.start, -m.end))


def _unprefixed(name: str) -> str:
    """A name a sentence opens on, without its preposition ("In PM Handoff Log Note" → "PM Handoff Log Note")."""
    return re.sub(r"^(?:In|Into|To|On|Onto|At|Under|For)\s+", "", name.strip())


def note_name(prompt: str, widgets: Iterable[str] = ()) -> str | None:
    """The name of the note a prompt asks for ("… in a Basket Cost Review Note", "a Filing Room Governance
    note"), or None when it asks for none. `widgets`: the catalog's widget names, which a name ending like a
    note's ("Contact Log") may be instead: such a mention is a widget, not the note."""
    if not re.search(r"\bnote\b", prompt, re.I):
        return None
    # a dashboard whose name ends like a note's ("the PM Handoff Log dashboard", "PM Handoff Log (already
    # open)") is not the note
    catalog = {w.casefold() for w in widgets}
    found = [
        m
        for m in NOTE_NAME.finditer(prompt)
        if _unprefixed(m.group(1)).casefold() not in catalog
        and not re.match(r"\s+(?:dashboard|board)\b|\s*\((?:already\s+)?open\)", prompt[m.end() :], re.I)
    ]
    # a name the request introduces as the note's ("a briefing note called Promise IR Note") is the note, even
    # when a widget whose name ends like a note's ("Contact Log") is mentioned after it
    introduced = [m for m in found if re.search(r"\b(?:called|named|titled)\s+$", prompt[: m.start()], re.I)]
    names = [m.group(1) for m in (introduced or found)]
    if names:
        # a sentence may open on the name ("In PM Handoff Log Note, also record …"): the preposition is not in it
        return _unprefixed(names[-1])
    lowered = re.findall(r"((?:[A-Z][\w&/'-]*\s+){1,6})note\b", prompt)
    return lowered[-1].strip() if lowered else "Note"
