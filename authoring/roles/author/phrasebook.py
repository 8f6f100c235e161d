"""How the rule author words a request: the persona's voice and a phrasebook of clause variants.

A request is assembled from clauses (the main ask, the values, a twin to leave alone, a second view to repair,
where a value comes from, the build, the note). Each clause family has many variants in phrasebook.yaml (beside
this module); one generator seeded by (persona, story, level) draws every choice, so two requests share a clause
only by chance and the rotation-aware variety measure (authoring/variety.py) stays low. The persona is rendered in
the wording, not bolted on: its verbs, how it names periods and counterparts (a stated value said with the
persona's alias or period name next to it), what it calls a note, its deadlines. A value the level hides is never
said, not even through its alias. The variants are rendered by the roles' one jinja environment
(authoring/roles/prompts).
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from ...sources import Voice
from ..prompts import cap, render

PHRASES = Path(__file__).with_name("phrasebook.yaml")
DEFAULT_VERBS = {
    "add": ["add", "put", "bring up", "place"],
    "read": ["read", "pull", "check", "look up"],
    "repair": ["repair", "fix", "correct", "restore"],
}
DEFAULT_NOTE_WORDS = ["note"]
ALIAS_CHANCE = 0.5
LEAD_CHANCE = 0.35
DEADLINE_CHANCE = 0.5
LONG_REQUEST = 150
# One clear ask reads in fewer words than this (the rule validator flags a longer request).
MAX_PROMPT_WORDS = 170


@lru_cache(maxsize=1)
def phrasebook() -> dict[str, Any]:
    return yaml.safe_load(PHRASES.read_text(encoding="utf-8"))


def listing(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


@dataclass
class Ground:
    """Where the level's hidden value comes from, as the request points at it."""

    source: str  # "the Factsheet Production skill"
    where: str  # "the first step of the Factsheet Production skill's workflow"
    where_short: str  # "the first step of its workflow"
    topic: str  # what the piece is about, or ""
    label: str | None = None  # the parameter it sets, or None for the tab's title
    tab: str | None = None  # the tab's current name (tab facts)
    hop_row: str | None = None  # the row of the referred document ("the row for St. Brennan Endowment")


@dataclass
class Build:
    backend: str
    table: str
    app: str
    tab: str
    keyed: str | None = None  # the parameter label the built table is keyed on
    tab_like_board: bool = False


class Said(NamedTuple):
    """A parameter as a request says it: its label, its value, and how (stated; through the policy phrase at
    Derive; not at all when Ground hides it)."""

    label: str
    value: str
    mode: str = "stated"


class Group(NamedTuple):
    """Targets that come from one place, said together ("A and B from Acme's Desk App")."""

    names: list[str]
    where: str


class ValuesFor(NamedTuple):
    """The values said for one target (`who` None: for every target at once)."""

    who: str | None
    pairs: list[Said]


class Shown(NamedTuple):
    """A widget on the board and the values it shows, as the request describes it (a twin to leave alone)."""

    name: str
    values: list[tuple[str, str]]


class Repair(NamedTuple):
    """A second view the request asks to repair: what it shows wrong, and what it must show."""

    name: str
    wrong: list[tuple[str, str]]
    right: list[tuple[str, str]]


class NoteAsk(NamedTuple):
    """The note a read writes: its name and the columns it records."""

    name: str
    columns: list[str]


@dataclass
class Ask:
    """Everything a request says, already resolved; the phrasing decides only the words."""

    kind: str
    dash: str
    groups: list[Group]
    params: list[ValuesFor]
    phrase: str = ""
    stale: list[tuple[str, str]] | None = None
    note: NoteAsk | None = None
    twin: Shown | None = None
    furniture: Repair | None = None
    keep: bool = False
    ground: Ground | None = None
    build: Build | None = None
    hidden: set[str] = field(default_factory=set)
    contrast: str = ""  # at Find, what the described widget is not, said after where it comes from
    described: str = ""  # the description the contrast belongs to
    capped: bool = False  # the task allows no widget nobody asked for: the request says so


class Phrasing:
    """One request's choices: a generator seeded by its (persona, story, level) draws every variant."""

    def __init__(self, voice: Voice, *keys: Any) -> None:
        self.voice = voice
        digest = hashlib.sha256("|".join(str(k) for k in keys).encode()).digest()
        self.rng = random.Random(int.from_bytes(digest[:8], "big"))
        # clauses added after the rest was drawn draw from their own generator, so adding one moves no other
        self.aside = random.Random(int.from_bytes(digest[8:16], "big"))

    def pick(self, family: str, **variables: Any) -> str:
        options: Any = phrasebook()
        for part in family.split("."):
            options = options[part]
        return render(self.rng.choice(options), **variables)

    def verb(self, kind: str) -> str:
        verbs = getattr(self.voice, f"{kind}_verbs") or DEFAULT_VERBS[kind]
        return self.rng.choice(verbs)

    def said(self, value: str, hidden: set[str]) -> str:
        """A stated value, sometimes with how the persona calls it (never a value the level hides)."""
        if value in hidden or self.rng.random() >= ALIAS_CHANCE:
            return value
        if value in self.voice.aliases and not _restates(self.voice.aliases[value], value):
            return self.pick("aliased", value=value, alias=self.voice.aliases[value])
        if value in self.voice.period_names:
            return f"{value} ({self.voice.period_names[value]})"
        return value

    # -- clauses --------------------------------------------------------------------------------------------
    def targets(self, ask: Ask) -> str:
        parts = []
        for names, where in ask.groups:
            seen = list(dict.fromkeys(names))
            named = [
                n
                if names.count(n) == 1
                else f"{n} {'twice' if names.count(n) == 2 else f'{names.count(n)} times'}"
                for n in seen
            ]
            contrast = f" ({ask.contrast})" if ask.contrast and ask.described in names else ""
            parts.append(f"{' and '.join(named)} from {where}{contrast}")
        return ", along with ".join(parts)

    def values(self, ask: Ask, pairs: list[Said], repair: bool) -> str:
        """A parameter clause; the policy pair is said through the phrase, a grounded pair not at all."""
        said = []
        for label, value, mode in pairs:
            if mode == "ground":
                continue
            if mode == "policy":
                said.append(("", self.pick("params.policy", k=label, phrase=ask.phrase)))
            else:
                said.append((label, self.said(value, ask.hidden)))
        if not said:
            return ""
        if any(not k for k, _ in said):
            # a policy pair reads as its own phrase: list the pairs plainly around it
            words = [v if not k else f"{k} {v}" for k, v in said]
            lead = " by setting " if repair else self.rng.choice([" with ", ", cut to ", " for ", " on "])
            return lead + listing(words)
        if repair:
            return self.pick("params.repair", pairs=said)
        return self.pick("params.stated", pairs=[self.pick("pair", k=k, v=v) for k, v in said])

    def params(self, ask: Ask, repair: bool) -> str:
        if len(ask.params) == 1 and ask.params[0][0] is None:
            return self.values(ask, ask.params[0][1], repair)
        parts = []
        for who, pairs in ask.params:
            clause = self.values(ask, pairs, repair).strip(" ,—:")
            if clause:
                parts.append(f"for {who} {clause}")
        return (" — " + "; ".join(parts)) if parts else ""

    def compose(self, ask: Ask) -> str:
        """The request: its sentences in an order drawn for it."""
        multi = sum(len(names) for names, _ in ask.groups) > 1
        targets = self.targets(ask)
        repair = ask.kind == "repair"
        if repair and ask.stale:
            targets = self.pick(
                "stale", targets=f"the {targets}", wrong=listing([f"{k} {v}" for k, v in ask.stale])
            )
        dash_ref = self.pick("dash_ref", dash=ask.dash)
        dash_subject = self.pick("dash_subject", dash=ask.dash)
        note = ""
        if ask.note is not None:
            name, fields = ask.note
            note_word = self.rng.choice(self.voice.note_words or DEFAULT_NOTE_WORDS)
            note = self.pick("note", name=name, fields=listing(fields), note_word=note_word)
        verb = self.verb(ask.kind)
        it = "them" if multi else "it"
        main = self.pick(
            ask.kind,
            verb=verb,
            targets=targets,
            dash_ref=dash_ref,
            dash_subject=dash_subject,
            params=self.params(ask, repair),
            note=note,
            it=it,
        )
        main = particle_after_pronoun(main, verb, it)
        sentences = [main]
        extras = []
        if ask.twin is not None:
            name, args = ask.twin
            lead = self.pick("twin_lead", name=name, args=listing([f"{k} {v}" for k, v in args]))
            extras.append(self.pick("twin", lead=lead, fence=self.pick("twin_fence")))
        if ask.furniture is not None:
            name, wrong, right = ask.furniture
            state = self.pick("furniture_state", name=name, wrong=listing([f"{k} {v}" for k, v in wrong]))
            repair_verb = self.verb("repair")
            action = self.pick(
                "furniture_action", verb=repair_verb, right=listing([f"{k} {v}" for k, v in right])
            )
            action = particle_after_pronoun(action, repair_verb, "it")
            sentence = self.pick(
                "furniture",
                opening=self.pick("furniture_opening"),
                state=state,
                joint=self.pick("furniture_joint"),
                action=action,
            )
            extras.append(cap(sentence))
        if ask.keep:
            extras.append(
                self.pick(
                    "keep",
                    subject=self.pick("keep_subject", dash=ask.dash),
                    predicate=self.pick("keep_predicate"),
                )
            )
        self.rng.shuffle(extras)
        sentences += extras
        ground = self.ground(ask.ground) if ask.ground is not None else ""
        if ask.build is not None and ask.build.tab_like_board and ask.ground is not None:
            # the app's tab takes the title the board's tab is given: the retitle is asked first, the build refers
            # back to it (said the other way round, the build would point at a title not yet asked for)
            sentences[:0] = [ground, self.build(ask.build, ask.dash, after=True)]
        else:
            sentences.append(ground)
            if ask.build is not None:
                sentences.insert(0, self.build(ask.build, ask.dash))
        lead = self.lead(ask)
        text = " ".join(s for s in sentences if s)
        words = len(text.split())
        # a long request (a build on a lived-in board) keeps to the ask: the persona shows in its words
        if lead and words < LONG_REQUEST:
            text = f"{lead} {text}"
        if ask.capped:
            # the grader allows no widget nobody asked for: a careful agent must be told, not left to guess
            book = phrasebook()
            parts = {k: self.aside.choice(book[f"capped_{k}"]) for k in ("nothing", "predicate", "where")}
            parts["where"] = render(parts["where"], dash=ask.dash)
            text += " " + render(self.aside.choice(book["capped"]), **parts)
        if self.voice.deadlines and self.rng.random() < DEADLINE_CHANCE and words < LONG_REQUEST:
            text += " " + as_sentence(self.rng.choice(self.voice.deadlines))
        return tidy(named_once(text, ask.dash))

    def ground(self, g: Ground) -> str:
        hop = self.pick("ground_hop", row=g.hop_row) if g.hop_row else ""
        about = self.pick("ground_about", topic=g.topic) if g.topic else ""
        if g.label is None:
            return self.pick("ground_tab", tab=g.tab, where=g.where + hop, about=about)
        return self.pick(
            "ground",
            label=g.label,
            where=g.where + hop,
            where_short=g.where_short,
            hop=hop,
            source=g.source,
            about=about,
        )

    def build(self, b: Build, dash: str, after: bool = False) -> str:
        tab_phrase = self.pick("build_tab_like") if b.tab_like_board else self.pick("build_tab", tab=b.tab)
        keyed = self.pick("build_keyed", label=b.keyed) if b.keyed else ""
        place = self.pick("build_place", label=b.keyed) if b.keyed else ""
        return self.pick(
            "build",
            opening=self.pick("build_opening_after" if after else "build_opening"),
            backend_part=self.pick("build_backend", backend=b.backend, table=b.table, keyed=keyed),
            publish_part=self.pick("build_publish", app=b.app, table=b.table),
            tab_phrase=tab_phrase,
            instantiate_part=self.pick("build_instantiate"),
            place_part=self.pick("build_put", table=b.table, dash=dash),
            place=place,
        )

    def lead(self, ask: Ask) -> str:
        """An opening in the persona's words: the alias of a value the request states, sometimes."""
        stated = [v for _, pairs in ask.params for _, v, mode in pairs if mode == "stated"]
        aliases = [a for v in stated if (a := self.voice.aliases.get(v)) and v not in ask.hidden]
        if not aliases or self.rng.random() >= LEAD_CHANCE:
            return ""
        return self.pick("lead", alias=self.rng.choice(aliases))


def particle_after_pronoun(text: str, verb: str, pronoun: str) -> str:
    """A phrasal verb takes a pronoun before its particle: "bring it up", not "bring up it"; and a particle the
    clause says again after the pronoun is said once ("point back" + "it back to" is "point it back to")."""
    words = verb.split()
    if len(words) == 2:
        head, particle = words
        for said, moved in (
            (verb, f"{head} {pronoun} {particle}"),
            (cap(verb), f"{cap(head)} {pronoun} {particle}"),
        ):
            text = text.replace(f"{said} {pronoun} {particle}", moved).replace(f"{said} {pronoun}", moved)
    return text


def _restates(alias: str, value: str) -> bool:
    """An alias made of the value's own words ("Lantern" for Lantern Macro) says nothing beside the value."""
    said = set(re.findall(r"\w+", value.casefold()))
    return set(re.findall(r"\w+", alias.casefold())) <= said


def as_sentence(text: str) -> str:
    """A phrase the persona declares (a deadline), as a sentence of its own: capitalised, ending in a stop."""
    text = cap(text.strip())
    return text if text[-1:] in ".!?" else text + "."


def named_once(text: str, dash: str) -> str:
    """A dashboard whose name ends in its noun ("Margin Call Board") is not called a board again after it."""
    if dash.split()[-1:] and dash.split()[-1].casefold() in ("board", "dashboard"):
        text = re.sub(rf"({re.escape(dash)}) (?:board|dashboard)\b", r"\1", text)
    return text


def tidy(text: str) -> str:
    """Spacing and punctuation a composed request can end up with: doubled stops, a space before a comma."""
    text = " ".join(text.split())
    for bad, good in (
        (" ,", ","),
        (" .", "."),
        ("..", "."),
        (",.", "."),
        (";.", "."),
        (",,", ","),
        (" ;", ";"),
        (", ;", ";"),
        (",;", ";"),
        (":.", "."),
        (" :", ":"),
        (", —", " —"),
        (",:", ":"),
    ):
        while bad in text:
            text = text.replace(bad, good)
    return text
