"""The records a resolved story is made of (its targets, its governance source, the document defining its
policy, a Find pointer) and the error that stops authoring a story. Every other module of the package builds
or reads these, so they live below all of them."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from simulator import WidgetDef

from ..analyze import ResolvedAnalyze
from ..sources import Facts, SourceError, Story


@dataclass
class ResolvedTarget:
    name: str
    origin: str
    app: str | None
    widget: WidgetDef
    params: dict[str, Any]

    @property
    def widget_id(self) -> str:
        return self.widget.widget_id


# How an agent reads each kind of knowledge source: the tool, and the argument that names the source.
SOURCE_READS = {
    "skill": ("get_skill_content", "slug"),
    "resource": ("read_workspace_resource", "uri"),
    "prompt": ("get_workspace_prompt", "name"),
}


@dataclass
class Hop:
    """A document the named source sends the reader to ("see openbb://…"), where the fact actually is."""

    uri: str
    title: str
    position: str  # where in the named source the reference sits ("step 2 of its workflow")
    row: str = ""  # where in the referred document the fact sits ("its row for Lantern Macro")


@dataclass
class Governance:
    kind: str  # a key of SOURCE_READS
    ref: str  # slug, uri or prompt name
    name: str
    phrase: str
    where: str
    sets: str | None = None  # a parameter of a target, or "tab"; None: the fact only goes into a note
    value: Any = None  # what the fact sets: the parameter's value, or the tab's title
    holder: str | None = None  # "<kind>:<ref>" of the document the phrase is in, when it is not the named one
    hop: Hop | None = None

    @property
    def source(self) -> str:
        """Where the planted phrase is (what the grounding gate checks it against)."""
        return self.holder or f"{self.kind}:{self.ref}"

    @property
    def position(self) -> str:
        """Where in the named source the request points ("the first step of its workflow")."""
        if self.hop is not None:
            return self.hop.position
        return _split_where(self.where)[0]

    @property
    def topic(self) -> str:
        """What the pointed-at piece is about ("the window the trustees read returns over"), or ""."""
        return _split_where(self.where)[1]

    @property
    def mention(self) -> str:
        """How a request names the source ("the Close Checklist skill", "the workspace tool usage prompt")."""
        if self.kind == "skill":
            return f"the {self.name} skill"
        if self.kind == "resource":
            return f"the {self.name} workspace resource"
        return f"the {self.name}"

    def read_call(self) -> tuple[str, dict[str, str]]:
        """The tool call that reads the source."""
        tool, key = SOURCE_READS[self.kind]
        return tool, {key: self.ref}


@dataclass
class PolicyDocument:
    """Where the Derive level's policy phrase is defined: a workspace resource, or a note seeded on the dashboard
    (whose text the author writes: the story's policy and its distractor)."""

    kind: str  # "resource" or "note"
    ref: str  # uri or note name
    title: str
    text: str
    distractor: str  # the rival policy's phrase
    # the phrase the Derive level says and the document defines, when the pipeline coined it because the
    # story's own gives the value away (None: the story's phrase)
    phrase: str | None = None
    # a rival rule of the same document the Derive level also asks for, as (phrase, value): a second view of the
    # target on the value that rule sets, so that the level hides two values of the parameter (an ordered pair
    # of distinct options) instead of one a fixed guess wins about once in k tasks (None: no usable rival)
    rival: tuple[str, Any] | None = None
    # (name, text) of a note the Derive board holds when the rival rule is the pipeline's: the document's own
    # rivals all give their value away ("the month-end window rule" for MTD), so a coined one is defined there
    rival_note: tuple[str, str] | None = None


@dataclass(frozen=True)
class FindPointer:
    """Where a Find level points at its target when nothing the target serves tells it apart from its siblings
    (no description by content exists that the Find rung ranks first while the word matchers do not): a note
    planted on the Find board, `note`, lists the target by name under `label` beside a rival entry, `rival_label`,
    naming another widget of the same app (`rival`, one that takes every stated value), and the request refers
    to the target's entry only. The entries are coined, so the request says no word of the catalog's."""

    note: str
    label: str
    rival_label: str
    rival: str  # the rival's widget id (of the target's origin)
    rival_name: str
    # A target its declared options alone single out (`working.twin_values`) stands among twin instances
    # of itself: the rival is then the target's own widget, and each entry names its instance by what it shows
    # ("Live Grid on TSLA"). `twins`: the values each twin is seeded on, (key, value) pairs, the rival's first;
    # `shows`: what the target's instance shows as seeded, said.
    twins: tuple[tuple[tuple[str, Any], ...], ...] = ()
    shows: str = ""
    # The further entries, (label, widget id, what the entry says): more rivals of the target's app (or, beside
    # a twin target, the further twin instances), so that with k entries a reader of one fixed line — the
    # first, the last — finds the target on about one task in k, and a reader of the listed names' words has
    # more than one rival drawing it off the target.
    more: tuple[tuple[str, str, str], ...] = ()
    # What the entries' order is drawn from (the story's slug): each entry's place is a hash of it and of what
    # the entry says, not of its label, so the counterfactual copy (the labels exchanged) leaves every name on
    # its line and a reader of a fixed line takes the same widget in both copies.
    draw: str = ""

    @property
    def rival_shows(self) -> str:
        """What the rival's instance shows, said (empty unless the rival is a twin instance)."""
        return " and ".join(value_said(v) for _, v in self.twins[0]) if self.twins else ""

    def entry(self, target_name: str) -> str:
        """What the target's entry says: its name, and what its instance shows when twins stand beside it."""
        return f"{target_name} on {self.shows}" if self.twins else target_name

    def rival_entry(self) -> str:
        return f"{self.rival_name} on {self.rival_shows}" if self.twins else self.rival_name

    def entries(self, target_name: str) -> list[tuple[str, str]]:
        """(label, what it says) of every entry: the target's, the rival's, then the further ones."""
        return [
            (self.label, self.entry(target_name)),
            (self.rival_label, self.rival_entry()),
            *((label, said) for label, _, said in self.more),
        ]

    def lines(self, target_name: str) -> list[str]:
        """The note's entries in an order drawn from the story and each entry's name (`draw`): neither the
        labels' order nor which entry is the target's decides where a name sits."""
        entries = sorted(
            self.entries(target_name),
            key=lambda e: hashlib.sha256(f"{self.draw}|{e[1].casefold()}".encode()).digest(),
        )
        return [f"{label[:1].upper()}{label[1:]}: {name}" for label, name in entries]

    def text(self, target_name: str) -> str:
        return "\n".join(self.lines(target_name))

    def references(self) -> list[str]:
        """How a request refers to the target's entry (each a noun phrase standing for the widget)."""
        return [
            f"the widget the {self.note} lists for the {self.label}",
            f"the widget listed for the {self.label} on the {self.note}",
        ]


@dataclass
class ResolvedStory:
    story: Story
    kind: str
    targets: list[ResolvedTarget]
    carried_key: str
    carried_value: Any
    carried_target: int
    seeded_wrong: dict[str, Any]
    governance: Governance
    tab_id: str
    tab_name: str
    warnings: list[str] = field(default_factory=list)
    policy_doc: PolicyDocument | None = None
    # what the facts make `author` block on (a Derive the ladder's Find rung solves, a Find hint that ranks
    # another widget first, a Find target the validator refuses as findable by its signature): `taskforge
    # check` reports these as errors; authoring itself goes on (its own gates and reviewers find them)
    ladder_errors: list[SourceError] = field(default_factory=list)
    analyze: ResolvedAnalyze | None = None
    # a source-format story whose find hint is the catalog's words is described at Find by what its target
    # serves instead: the wordings the pipeline may say, best first (empty: the story's own hint)
    find_hints: list[str] = field(default_factory=list)
    # a story whose target no description tells apart is found by a pointer planted on the Find board instead
    find_pointer: FindPointer | None = None
    # the pointer the rule author falls back on when every wording of the story's description leaves a word
    # matcher passing or the Find rung failing (None: no rival can stand in one)
    spare_pointer: FindPointer | None = None
    # every pointer the rule author may try in turn, best first (`find_pointers`; the first is `spare_pointer`)
    spare_pointers: tuple[FindPointer, ...] = ()
    # the widgets Execute may work on instead of the first target, in their drawn order (`working`): level 0
    # names one of them, so that no lower level names what Find hides
    execute_stand_ins: tuple[ResolvedTarget, ...] = ()
    # set on the story as Execute works it (`working.at_execute`): the first target a stand-in works in place of
    # (None: the story's own targets)
    standing_in: ResolvedTarget | None = None
    # the index among `targets` of the stand-in that works in its place
    stand_in_at: int = 0
    # set on the story as Execute works another instance of the target's own widget (`working.twin_instance`):
    # the values its stale instance is seeded on instead of `seeded_wrong` (a Find twin's, not the target's)
    execute_instance: dict[str, Any] | None = None

    @property
    def find_hint(self) -> str:
        """The description the Find level says first: the pointer's reference, a coined one (`find_hints`), else
        the story's."""
        if self.find_pointer is not None:
            return self.find_pointer.references()[0]
        return self.find_hints[0] if self.find_hints else self.story.facts.find_hint

    @property
    def facts(self) -> Facts:
        return self.story.facts

    @property
    def policy_phrase(self) -> str:
        """The phrase the Derive level says for the carried value: the story's, or the value-free name the
        pipeline coined for a source-format rule whose own phrase gives the value away."""
        coined = self.policy_doc.phrase if self.policy_doc is not None else None
        return coined or self.story.facts.policy.phrase


def value_said(value: Any) -> str:
    """A value as a note or a request says it (`said.value_text`, which builds on this module)."""
    return value if isinstance(value, str) else json.dumps(value)


class FactErrors(Exception):
    """A story's facts errors, and what the ladder calibration would block on besides (`blocking`: worked out
    where the facts it depends on are sound, so that one run of `check` says every independent mistake)."""

    def __init__(self, errors: list[SourceError], blocking: list[SourceError] | None = None) -> None:
        super().__init__("; ".join(str(e) for e in errors))
        self.errors = errors
        self.blocking = list(blocking or [])


def _split_where(where: str) -> tuple[str, str]:
    """ "the first step of its workflow (the stage a build is worked on at)" → (position, topic)."""
    match = re.match(r"(.*?)\s*\((.*)\)\s*$", where)
    return (match.group(1), match.group(2)) if match else (where, "")
