"""The request of a level: what it must say is fixed by the board and the plan; the words come from the
phrasebook, drawn per persona, story and level.

A draw whose wording happens to say a hidden value ("the open dashboard" when the hidden status is Open) gives way
to another draw, and so does one longer than a single clear ask reads. At Find, the description is followed by a
contrast — the catalog description of a sibling a word matcher would take for the target — so that matching the
request's words alone picks wrong.
"""

from __future__ import annotations

import re
from typing import Any

from certify import giveaways, leaked_values, load_lexicon, parse_task, prose_faults, states_value, terms
from simulator import WidgetDef

from ...factcheck import ResolvedTarget, purpose
from ...factcheck import param_label as label
from ...factcheck import value_text as said_as_text
from .analysis import clause as analysis_clause
from .analysis import prompt_word_limit
from .level import Level, states_name
from .phrasebook import (
    LEVELS_PER_STORY,
    Ask,
    Build,
    Copy,
    Ground,
    Group,
    NoteAsk,
    Phrasing,
    Repair,
    Said,
    Shown,
    ValuesFor,
    VoiceSlots,
)
from .plan import Planned
from .seeding import Board

MAX_PHRASINGS = 8


def where_phrase(where: str) -> str:
    """Turn a planted phrase's location ("the last step of its workflow (how the pack opens)") into what a
    person would ask to record ("what the last step of its workflow says about how the pack opens")."""
    match = re.match(r"(.*?)\s*\((.*)\)\s*$", where)
    if match:
        return f"what {match.group(1)} says about {match.group(2)}"
    return where if where.startswith("what ") else f"what {where} says"


def _nth(name: str, index: int) -> str:
    """One of several instances of a named target, by position ("the second holdings book")."""
    ordinal = ("first", "second", "third", "fourth")[index]
    bare = re.sub(r"^(?:the|an?)\s+", "", name, flags=re.I)
    return f"the {ordinal} {bare}"


def _labelled(widget: WidgetDef, values: dict[str, Any]) -> list[tuple[str, str]]:
    return [(label(widget.param(k), k), said_as_text(v)) for k, v in values.items()]


class Wording:
    """The request of one level, in as many draws as it takes."""

    def __init__(
        self, level: Level, board: Board, planned: Planned, hint: str | None = None, plain: bool = False
    ) -> None:
        self.level = level
        self.board = board
        self.planned = planned
        # the description Find says (one of the story's resolved find hints; None: the first)
        self.hint = hint or level.story.find_hint
        # the analysis asked without naming the row label and the figure (`analysis.PLAIN_CLAUSES`)
        self.plain = plain

    def phrase(self, task: dict[str, Any], contrast: str = "", draw: int = 0) -> str:
        """The prompt of `task`: the first draw that says no hidden value and fits one clear ask (the shortest
        that says none when none fits)."""
        ctx = self.level.ctx
        fits: list[str] = []
        for attempt in range(MAX_PHRASINGS):
            prompt = self.prompt(contrast, draw, attempt)
            if not leaked_values(
                ctx.world, parse_task({**task, "prompt": prompt}, f"{task['id']}.json", ctx.defaults)
            ):
                if len(prompt.split()) <= prompt_word_limit(self.level.story.analyze is not None):
                    return prompt
                fits.append(prompt)
        return min(fits, key=lambda p: len(p.split())) if fits else self.prompt(contrast, draw, MAX_PHRASINGS)

    def prompt(self, contrast: str, draw: int, attempt: int) -> str:
        level, s = self.level, self.level.story
        t0 = level.first
        describe = level.number == 1
        names = level.target_names(describe, self.hint)
        groups: list[Group] = []
        for t, name in zip(s.targets, names, strict=True):
            where = f"{t.origin}'s {t.app}" if t.app else t.origin
            if level.number == 2 and self._unique(name):
                # Derive asks for two views and names two rules: it leaves out where a widget comes from when
                # its name alone says which catalog widget it is (Execute states everything, Find reads a
                # description up to its origin, Ground and Compose say the app again by the persona's alias)
                where = ""
            if groups and groups[-1].where == where:
                groups[-1].names.append(name)
            else:
                groups.append(Group([name], where))
        shared = level.shared_params()
        # whom a segment of values is for: the name, or its place among instances of the same name
        who = [
            name if names.count(name) == 1 else _nth(name, names[:i].count(name))
            for i, name in enumerate(names)
        ]
        if shared is not None:
            params = [ValuesFor(None, self._pairs(t0, shared))]
        else:
            # a pointer's entry names one widget: its cuts are not "the first/second <entry>"
            pointed = describe and s.find_pointer is not None and self.hint in s.find_pointer.references()
            params = [
                ValuesFor(
                    name if pointed and name == self.hint else who[i],
                    self._pairs(t, level.said(t)),
                    again=pointed and name == self.hint and names.count(name) > 1,
                )
                for i, (t, name) in enumerate(zip(s.targets, names, strict=True))
                if t.params
            ]
        stale = None
        if s.kind == "repair" and level.lived:
            # (a level worked on another instance of the target's widget shows a Find twin's values instead)
            stale = _labelled(t0.widget, {**t0.params, **s.seeded_wrong, **(s.execute_instance or {})})
        note = None
        if s.kind == "read":
            columns = {
                c.get("field"): c
                for c in (t0.widget.definition.get("schema_data") or {})
                .get("table", {})
                .get("columnsDefs", [])
                if isinstance(c, dict)
            }
            fields = [label(columns.get(f.key), f.key) for f in self.planned.fields]
            if describe and self.hint != s.facts.find_hint:
                # Find describes the target by what it serves in the pipeline's words: naming the columns
                # to record too would hand a description matcher the catalog's words again ("consensus",
                # "surprise"); the whole first row holds them
                fields = ["fields"]
            note = NoteAsk(self.planned.note_name, fields)
        board = self.board
        twin = None
        if level.lived and board.twin is not None:
            twin = Shown(t0.name, _labelled(t0.widget, board.twin.data_args), t0.app or t0.origin)
        furniture = None
        if board.furniture is not None and board.furniture.fix is not None:
            seed, fix = board.furniture.seed, board.furniture.fix
            definition = level.widget_def(seed.origin, seed.widget_id)
            param_of = {str(p.get("paramName")): p for p in definition.option_params}
            furniture = Repair(
                board.furniture.name,
                [(label(param_of.get(k), k), said_as_text(v)) for k, v in fix.wrong.items()],
                [(label(param_of.get(k), k), said_as_text(v)) for k, v in fix.right.items()],
            )
        ask = Ask(
            kind=s.kind,
            dash=level.dash,
            groups=groups,
            params=params,
            phrase=s.policy_phrase,
            stale=stale,
            note=note,
            twin=twin,
            furniture=furniture,
            ground=self._ground(),
            build=self._build(),
            hidden=level.hidden_values(),
            contrast=contrast if describe else "",
            described=self.hint if describe else "",
            why=self._purpose(),
            copy=self._copy(None if shared is not None else who[s.carried_target], names),
        )
        # a rephrasing (after a draw that happened to say a hidden value) draws again from another seed
        redraw = [attempt, draw] if attempt or draw else []
        voice = level.ctx.persona.voice
        phrasing = Phrasing(
            voice,
            level.ctx.persona.slug,
            level.slug,
            level.number,
            *redraw,
            gloss=voice.every_phrase and level.number == 0,
        )
        own = s.facts.deadline
        ask.slots = (
            VoiceSlots.rotation(voice, self.position, own, self.deadline_slot, self.requests)
            if voice.every_phrase
            else VoiceSlots.drawn(voice, phrasing.aside, own)
        )
        # the asks that close the work (a note of what the source plants, the judged analysis) come before the
        # persona's deadline and sign-off, which end the request
        if level.lived and s.governance.sets is None:
            ask.closing.append(self._legacy_ground(phrasing))
        if s.analyze is not None:
            ask.closing.append(analysis_clause(level, attempt + draw, self.plain))
        return " ".join(phrasing.compose(ask).split())

    def _purpose(self) -> str:
        """Why the work is wanted. The storyline's first sentence (said when the story gives no `why`) may name
        the widget Find describes instead: at Find it is then left out (a `why` that names it is a check
        error)."""
        level = self.level
        s = level.story
        why = purpose(s.story)
        if s.execute_instance is not None:
            # Execute works another instance of the target's widget (`factcheck.working`): the story's why tells
            # the target instance's state ("left on Tesla"), which that board does not show, and would point a
            # player that met it at the instance Find hides
            return ""
        if not why or s.facts.why:
            return why
        if level.number == 1 and states_value(why, level.first.name, any_case=True):
            return ""
        # nor, where Find says a description by content in place of the story's own hint, one that says that
        # hint (the catalog's words the level no longer says)
        own = s.facts.find_hint
        if level.number == 1 and self.hint != own and states_value(why, own, any_case=True):
            return ""
        # and there, nor one that shares a word or a stem with the target's catalog name ("Microsoft
        # fundamentals" for Company Fundamentals): a bag of words ranks the target first on it
        # (as the bag of words reads it too: a stemmed term in common, "still open" for Open Alert Metrics)
        lexicon = load_lexicon(level.ctx.world.path)
        if (
            level.number == 1
            and self.hint != own
            and (
                giveaways(why, level.first.name, None, lexicon)
                or set(terms(why)) & set(terms(level.first.name))
            )
        ):
            return ""
        # nor is it said where it reads as a request of its own: a sentence that names a widget of the catalog
        # ("Company Fundamentals for the financial picture"), or a note the level does not ask for, is taken
        # for more work by an agent that does what it is told (one more widget, a note nobody grades)
        if self._asks_more(why):
            return ""
        # the storyline was written to explain the story, not to keep its secrets: at a level that hides a
        # value, a first sentence that says any option of the hidden parameter (in any case, inside a compound
        # such as "low-severity" too) gives the choice away, so it is left out there
        keys = {s.carried_key} if level.number == 2 else {level.grounded_key} if level.lived else set()
        options = {
            said_as_text(v)
            for t in s.targets
            for k in keys
            if k and k in t.params
            for v in t.widget.options(k)
        }
        if any(re.search(rf"\b{re.escape(o)}\b", why, re.I) for o in options if o.strip()):
            return ""
        # nor one that says a word, a stem or a finance-lexicon synonym of one ("quarter-to-date" for QTD)
        lexicon = load_lexicon(level.ctx.world.path)
        if any(giveaways(why, o, None, lexicon) for o in options if o.strip()):
            return ""
        # nor one the prose gate would refuse where it is said, first (a storyline's sentence is not written as a
        # request: "the fund that counterparty calls margin" refers back to nothing there)
        labels = {
            str(p.get("label") or p.get("paramName") or "").casefold()
            for t in s.targets
            for p in t.widget.option_params
        }
        if prose_faults(why, nouns=[x for x in labels if len(x) > 2], known=["board"]):
            return ""
        return why

    def _asks_more(self, sentence: str) -> bool:
        """Whether a storyline sentence names a catalog widget of the setup's backends (in any case: the agents
        list the whole catalog), or a note where the level writes none."""
        level = self.level
        if re.search(r"\bnotes?\b", sentence, re.I) and not self.planned.note_name:
            return True
        world = level.ctx.world
        names = {
            d.name
            for slug in level.ctx.backends
            if (fixture := world.backends.get(slug)) is not None
            for d in fixture.catalog.widgets.values()
            if len(d.name) > 3
        }
        return any(states_name(sentence, name) for name in names)

    @property
    def position(self) -> int:
        """Where this request stands among the persona's: its story's place among the persona's stories (in
        their sorted order) times five, plus the level. The voice's rotation turns on it."""
        level = self.level
        stories = sorted(level.ctx.siblings) or [level.slug]
        index = stories.index(level.slug) if level.slug in stories else len(stories)
        return index * LEVELS_PER_STORY + level.number

    @property
    def requests(self) -> int:
        """How many requests the persona's stories make (five a story): the voice's rotation spreads over them."""
        return max(1, len(self.level.ctx.siblings)) * LEVELS_PER_STORY

    @property
    def deadline_slot(self) -> tuple[int, int]:
        """This request's place among the requests of the persona's stories that do not name their own deadline,
        and how many those are: the persona's deadlines are spread over them (a story's own deadline takes its
        levels)."""
        level = self.level
        own = set(level.ctx.deadline_stories)
        stories = [x for x in sorted(level.ctx.siblings) or [level.slug] if x not in own]
        index = stories.index(level.slug) if level.slug in stories else len(stories)
        return index * LEVELS_PER_STORY + level.number, max(1, len(stories)) * LEVELS_PER_STORY

    def _pairs(self, t: ResolvedTarget, params: dict[str, Any]) -> list[Said]:
        """The values as said: the carried value at Derive through the policy phrase, the grounded value at
        Ground and Compose not at all."""
        level = self.level
        out = []
        for key, value in params.items():
            mode = "stated"
            if level.number == 2 and key == level.story.carried_key:
                mode = "policy"
            elif level.lived and key == level.grounded_key:
                mode = "ground"
            out.append(Said(label(t.widget.param(key), key), said_as_text(value), mode))
        return out

    def _ground(self) -> Ground | None:
        level = self.level
        gov = level.story.governance
        if not level.lived or gov.sets is None:
            return None
        source = gov.mention
        position = gov.position
        where = (
            position.replace(" of its ", f" of {source}'s ", 1)
            if " of its " in position
            else f"the {position[4:]} in {source}"
            if position.startswith("its ")
            else f"{position} of {source}"
        )
        hop_row = None
        if gov.hop is not None:
            held = level.ctx.world.resources.get(gov.hop.uri)
            entry = next((pl for pl in (held.planted if held else ()) if pl.phrase == gov.phrase), None)
            hop_position = entry.where.split(" (")[0] if entry and entry.where else gov.hop.row
            hop_row = f"the {hop_position[4:]}" if hop_position.startswith("its ") else None
        said_label = None
        if level.grounded_key is not None:
            t = level.target_setting(level.grounded_key)
            said_label = label(t.widget.param(level.grounded_key), level.grounded_key)
        # a pointer that already names its place ("step 4 of its workflow", "the row for Lantern Macro") needs
        # no gloss of what the place is about; a hop keeps it (the referred document is read by its topic)
        precise = gov.hop is None and re.search(r"\d|\brow for\b", position) is not None
        return Ground(
            source=source,
            where=where,
            where_short=position,
            topic="" if precise else gov.topic,
            label=said_label,
            tab=level.story.tab_name if said_label is None else None,
            hop_row=hop_row,
        )

    def _build(self) -> Build | None:
        built = self.planned.built
        if built is None:
            return None
        keyed = None
        if built.keyed is not None:
            t = self.level.target_setting(built.keyed)
            keyed = label(t.widget.param(built.keyed), built.keyed)
        return Build(
            backend=built.backend,
            table=built.table,
            app=built.app,
            tab=built.tab,
            keyed=keyed,
            tab_like_board=built.tab_like,
        )

    def _copy(self, who: str | None, names: list[str]) -> Copy | None:
        """Derive's second view (`Level.compare`): a copy of the carried target on the value the rival rule sets,
        asked in the clause that gives the target its values (`who`: its segment; None when the values are said
        once for every target), so that only the rule is said again."""
        compare = self.level.compare
        if compare is None:
            return None
        return Copy(who, names[self.level.story.carried_target], compare[0])

    def _unique(self, name: str) -> bool:
        """Whether exactly one widget of the setup's backends (the catalog the agents list) goes by `name`."""
        world = self.level.ctx.world
        return [
            d.name
            for slug in self.level.ctx.backends
            if (fixture := world.backends.get(slug)) is not None
            for d in fixture.catalog.widgets.values()
        ].count(name) == 1

    def _legacy_ground(self, phrasing: Phrasing) -> str:
        """A story whose governance names no fact: the level reads the source and writes what it plants into a
        note (the only Ground a foreign world without planted facts allows)."""
        gov = self.level.story.governance
        family = "ground_note_read" if self.level.kind == "read" else "ground_note"
        return phrasing.pick(
            family, source=gov.mention, what=where_phrase(gov.where), note=self.planned.note_name
        )
