"""How the rule author words a request: the persona's voice and a phrasebook of clause variants.

A request is assembled from clauses (the main ask, the values, a twin to leave alone, a second view to repair,
where a value comes from, the build, the note). Each clause family has many variants in phrasebook.yaml (beside
this module); one generator seeded by (persona, story, level) draws every choice, so two requests share a clause
only by chance and the rotation-aware variety measure (authoring/variety.py) stays low. The persona is rendered in
the wording, not bolted on: its verbs, what it calls a note, how it names periods (a stated period glossed with
the persona's name for it: at every story's Execute level, which states every value, and now and then elsewhere)
and counterparts (the full name at its first mention, the persona's alias for it at a later mention, the way people
shorten a name once it is known: a value a twin or stale view shows again, the app a twin comes from), and its
openers, deadlines and sign-offs, said in a fixed rotation over the persona's stories and levels so that each
declared phrase is used (`VoiceSlots`). Every level
also says why the work is wanted, from the story (`facts.why`). A value the level hides is never said, not even
through its alias. The variants are rendered by the roles' one jinja environment
(authoring/roles/prompts).
"""

from __future__ import annotations

import hashlib
import itertools
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
PERIOD_NAME_CHANCE = 0.5
# a persona opted out of the rotation (voice.every_phrase false) says an opener, deadline or sign-off this often
PHRASE_CHANCE = 0.3
LEVELS_PER_STORY = 5
DERIVE_LEVEL = 2
# the requests of a persona the rotation spreads its phrases over (four stories of five levels)
PERSONA_REQUESTS = 4 * LEVELS_PER_STORY
# A description said later in a request ("the other X on fund Keel Core Equity") names a counterpart already
# mentioned: the marks let the request, once composed, say the persona's alias there instead of the name again.
SECOND_MENTION = re.compile(r"⟦([^⟧]*)⟧")
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
    """The values said for one target (`who` None: for every target at once). `again` marks a target the request
    names by a reference to one widget (a planted pointer's entry) that another target shares: ordinals ("the
    second widget listed for ...") would read as a second entry, so its cuts are said as one of them and the
    other."""

    who: str | None
    pairs: list[Said]
    again: bool = False


class Shown(NamedTuple):
    """A widget on the board and the values it shows, as the request describes it (a twin to leave alone), and
    the app it comes from (said again, by the persona's alias, when the persona has one for it)."""

    name: str
    values: list[tuple[str, str]]
    where: str = ""


class Repair(NamedTuple):
    """A second view the request asks to repair: what it shows wrong, and what it must show."""

    name: str
    wrong: list[tuple[str, str]]
    right: list[tuple[str, str]]


class Copy(NamedTuple):
    """Derive's second view, asked in the clause that gives the carried target its policy: a copy of it (the same
    widget on the same stated values) on the value a rival rule sets. `who` is the target's "for <name>" segment
    (None when every target shares the values); `name` is said when the clause is about several targets."""

    who: str | None
    name: str
    phrase: str


class NoteAsk(NamedTuple):
    """The note a read writes: its name and the columns it records."""

    name: str
    columns: list[str]


@dataclass(frozen=True)
class VoiceSlots:
    """The persona's set phrases one request says: an opener, a deadline, a sign-off (each may be empty)."""

    opener: str = ""
    deadline: str = ""
    signoff: str = ""

    @classmethod
    def rotation(
        cls,
        voice: Voice,
        position: int,
        own_deadline: str | None = None,
        deadline_slot: tuple[int, int] | None = None,
        requests: int = PERSONA_REQUESTS,
    ) -> VoiceSlots:
        """The phrases of the request at `position` among the persona's requests (story index × 5 + level,
        `requests` of them, twenty for four stories). The openers and sign-offs, as one list, are spread evenly
        over those positions, each said once (a persona's phrase that recurs in every request reads as a tic, and the
        request stays short); so are the deadlines, on positions of their own. A story's own deadline is said at
        each of its levels instead, so the persona's deadlines are spread over the requests of the other stories
        (`deadline_slot`: this request's place among those, and how many there are; default: every request)."""

        def spread(phrases: list[str], offset: int, at: int = position, total: int = requests) -> str:
            if not phrases or total <= 0:
                return ""
            gap = max(1, total // len(phrases))
            shifted = (at - offset) % total
            index = shifted // gap
            return phrases[index % len(phrases)] if shifted % gap == 0 and index < len(phrases) else ""

        phrases = [*(("o", p) for p in voice.openers), *(("s", p) for p in voice.signoffs if p.strip())]
        # openers and sign-offs alternate along the list, so that the two kinds interleave over the stories
        mixed = [
            p
            for pair in itertools.zip_longest(phrases[: len(voice.openers)], phrases[len(voice.openers) :])
            for p in pair
            if p
        ]
        chosen = spread([p for _, p in mixed], 0)
        kind = next((k for k, p in mixed if p == chosen), "")
        opener, signoff = (chosen, "") if kind == "o" else ("", chosen)
        at, total = deadline_slot or (position, requests)
        deadline = own_deadline or spread(voice.deadlines, 1, at, total)
        if not own_deadline and voice.deadlines:
            # a deadline whose slot is a Derive request (which names two rules) is said at the same story's
            # Execute request instead, where that one says none: still each said once, Derive as short as the
            # source's requests
            level = at % LEVELS_PER_STORY
            if level == DERIVE_LEVEL and at >= DERIVE_LEVEL:
                deadline = deadline if spread(voice.deadlines, 1, at - DERIVE_LEVEL, total) else ""
            elif level == 0 and not deadline and at + DERIVE_LEVEL < total:
                deadline = spread(voice.deadlines, 1, at + DERIVE_LEVEL, total)
        return cls(opener, deadline, signoff)

    @classmethod
    def drawn(cls, voice: Voice, rng: random.Random, own_deadline: str | None = None) -> VoiceSlots:
        """A persona that opted out of the rotation: now and then one of its phrases, by chance."""

        def maybe(options: list[str]) -> str:
            return rng.choice(options) if options and rng.random() < PHRASE_CHANCE else ""

        return cls(maybe(voice.openers), own_deadline or maybe(voice.deadlines), maybe(voice.signoffs))


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
    ground: Ground | None = None
    build: Build | None = None
    hidden: set[str] = field(default_factory=set)
    contrast: str = ""  # at Find, what the described widget is not, said after where it comes from
    described: str = ""  # the description the contrast belongs to
    why: str = ""  # why the work is wanted (the story's purpose), said as a sentence of its own
    copy: Copy | None = None  # Derive's second view, asked beside the carried target's values
    slots: VoiceSlots = field(default_factory=VoiceSlots)
    closing: list[str] = field(default_factory=list)  # asks said last, before the deadline and sign-off


class Phrasing:
    """One request's choices: a generator seeded by its (persona, story, level) draws every variant."""

    def __init__(self, voice: Voice, *keys: Any, gloss: bool = False) -> None:
        self.voice = voice
        # every stated period is glossed with the persona's name for it (at Execute, which states every value,
        # so that each declared period name a story's values reach is said); elsewhere now and then
        self.gloss = gloss
        self.glossed: set[str] = set()
        digest = hashlib.sha256("|".join(str(k) for k in keys).encode()).digest()
        self.rng = random.Random(int.from_bytes(digest[:8], "big"))
        # clauses added after the rest was drawn draw from their own generator, so adding one moves no other
        self.aside = random.Random(int.from_bytes(digest[8:16], "big"))
        # and Derive's copy clause from one of its own: asking for it moves no draw of the rest of the request
        self.copying = random.Random(int.from_bytes(digest[16:24], "big"))

    def pick(self, family: str, rng: random.Random | None = None, **variables: Any) -> str:
        options: Any = phrasebook()
        for part in family.split("."):
            options = options[part]
        return render((rng or self.rng).choice(options), **variables)

    def verb(self, kind: str, rng: random.Random | None = None) -> str:
        verbs = getattr(self.voice, f"{kind}_verbs") or DEFAULT_VERBS[kind]
        return (rng or self.rng).choice(verbs)

    def said(self, value: str, hidden: set[str]) -> str:
        """A stated value (one the agent sets), in full; a period glossed with the persona's name for it at its
        first mention in the request (always when `gloss`, else by chance; never a value the level hides).
        Counterparts go by their alias only where a request describes what is already on the board
        (`described`)."""
        if value in hidden or value not in self.voice.period_names or value in self.glossed:
            return value
        if not self.gloss and self.rng.random() >= PERIOD_NAME_CHANCE:
            return value
        self.glossed.add(value)
        return f"{value} ({self.voice.period_names[value]})"

    def described(self, value: str) -> str:
        """A value in a description of what the board already shows (a twin, a stale view): marked, so that once
        the request is composed it says the persona's alias there if the name was mentioned before."""
        return f"⟦{value}⟧" if value in self.voice.aliases else value

    def second_mentions(self, text: str) -> str:
        """Resolve the marks left by `described`, in reading order: the first mention of a name stays whole,
        every later described one becomes the persona's alias."""
        out, at = [], 0
        for m in SECOND_MENTION.finditer(text):
            before = text[at : m.start()]
            out.append(before)
            value = m.group(1)
            seen = "".join(out)
            mentioned = re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", seen) is not None
            out.append(self.voice.aliases[value] if mentioned else value)
            at = m.end()
        out.append(text[at:])
        return "".join(out)

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
            if not where:
                # a name the catalog holds once, said without where it comes from (Derive)
                parts.append(" and ".join(named))
            elif ask.described:
                # Find: a description is read up to the "from <origin>" that says where it comes from
                parts.append(f"{' and '.join(named)} from {where}{contrast}")
            else:
                parts.append(self.pick("provenance", names=" and ".join(named), where=where))
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
            several = sum(len(names) for names, _ in ask.groups) > 1
            return self.values(ask, ask.params[0][1], repair) + self.copy(ask, named=several)
        parts = []
        cuts, nth = sum(1 for v in ask.params if v.again), 0
        for who, pairs, again in ask.params:
            clause = self.values(ask, pairs, repair).strip(" ,—:;")
            if clause and ask.copy is not None and ask.copy.who == who:
                clause += self.copy(ask, named=False)
            if again:
                # the one widget the reference names, placed once per cut: "for one of them …; for the other …"
                who = ("one of them", "the other" if cuts == 2 else "another", "the last")[
                    min(nth, 1) + (nth == cuts - 1 and nth > 1)
                ]
                nth += 1
            if clause:
                parts.append(f"for {who} {clause}")
        return (" — " + "; ".join(parts)) if parts else ""

    def copy(self, ask: Ask, named: bool) -> str:
        """Derive's second view as a clause of the values it copies ("…, plus a copy beside it per the interim
        rule"): the stated values and the widget are not said again (one ask for both views, as short as the
        source's requests), the widget's name only where the clause is about several."""
        if ask.copy is None or ask.kind == "read":
            return ""
        what = f"a copy of {ask.copy.name}" if named else "a copy"
        rng = self.copying
        if ask.kind == "add":
            return self.pick("copy", rng, copy=what, phrase=ask.copy.phrase)
        # beside a repair, the copy is asked with the persona's verb for adding: it is one more view
        return self.pick("copy_added", rng, copy=what, phrase=ask.copy.phrase, verb=self.verb("add", rng))

    def copy_sentence(self, ask: Ask) -> str:
        """Beside a read, the copy is a sentence of its own that names the widget: said inside the read's clause,
        the "it" the read and the note go on to (": read it, then …") would be the copy, whose rows differ."""
        if ask.copy is None or ask.kind != "read":
            return ""
        rng = self.copying
        return self.pick(
            "copy_read", rng, name=ask.copy.name, phrase=ask.copy.phrase, verb=self.verb("add", rng)
        )

    def compose(self, ask: Ask) -> str:
        """The request: its sentences in an order drawn for it."""
        multi = sum(len(names) for names, _ in ask.groups) > 1
        targets = self.targets(ask)
        repair = ask.kind == "repair"
        if repair and ask.stale:
            targets = self.pick(
                "stale",
                targets=f"the {targets}",
                wrong=listing([f"{k} {self.described(v)}" for k, v in ask.stale]),
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
            name, args, where = ask.twin
            if where in self.voice.aliases:
                # the twin comes from the app the request named for the target: the persona calls it by its
                # alias there ("the other Case Files from the watchtower")
                name = f"{name} from {self.described(where)}"
            lead = self.pick(
                "twin_lead", name=name, args=listing([f"{k} {self.described(v)}" for k, v in args])
            )
            fence = self.pick("twin_fence", reason=self.pick("twin_reason"), keep=self.pick("twin_keep"))
            extras.append(self.pick("twin", lead=lead, fence=fence))
        if ask.furniture is not None:
            name, wrong, right = ask.furniture
            state = self.pick(
                "furniture_state", name=name, wrong=listing([f"{k} {self.described(v)}" for k, v in wrong])
            )
            repair_verb = self.verb("repair")
            action = particle_after_pronoun(
                self.pick(
                    "furniture_action", verb=repair_verb, right=listing([f"{k} {v}" for k, v in right])
                ),
                repair_verb,
                "it",
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
        # the purpose comes first or right after the main ask (the standing rules — the cap on widgets nobody
        # asked for, the layouts that stay — are the harness's, stated once in its rules, not in every request)
        if ask.why:
            sentences.insert(0 if self.aside.random() < 0.5 else 1, ask.why)
        slots = ask.slots
        closing = [self.copy_sentence(ask), *ask.closing]
        text = " ".join(
            s for s in (slots.opener, *sentences, *closing, as_sentence(slots.deadline), slots.signoff) if s
        )
        built = [ask.build.backend, ask.build.table, ask.build.app, ask.build.tab] if ask.build else []
        return tidy(named_once(self.second_mentions(text), ask.dash, *built))

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
        # a variant that already says the particle ("… it back to …") keeps one ("point it back to", not
        # "point it back back to")
        text = text.replace(f"{pronoun} {particle} {particle} ", f"{pronoun} {particle} ")
    return text


def as_sentence(text: str) -> str:
    """A phrase the persona declares (a deadline), as a sentence of its own: capitalised, ending in a stop."""
    text = cap(text.strip())
    return text if not text or text[-1:] in ".!?" else text + "."


# the nouns a name ending in one of them is not followed by again ("Margin Call Board", not "… Board dashboard")
SAME_NOUN = {"board": ("board", "dashboard"), "dashboard": ("board", "dashboard")}


def named_once(text: str, *names: str) -> str:
    """A name that ends in the noun the request puts after it — a dashboard "Margin Call Board", a built table
    "KPI Lineage Table", a backend "Lineage Backend" — is not followed by that noun again ("a KPI Lineage Table
    table" is a doubled word the prose gate refuses); the agents read such a name as naming its own kind."""
    for name in names:
        last = name.split()[-1:]
        if not last:
            continue
        nouns = SAME_NOUN.get(last[0].casefold(), (last[0].casefold(),))
        text = re.sub(rf"({re.escape(name)}) (?:{'|'.join(nouns)})\b", r"\1", text)
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
        (",:", ":"),
        (" :", ":"),
        (", —", " —"),
        (",:", ":"),
    ):
        while bad in text:
            text = text.replace(bad, good)
    return text
