"""Validating a story's facts against the world before any authoring, and resolving them.

A fact that does not hold (a widget that is not in the named app, a value outside the declared options, a
governance source that does not exist, a policy carrying a key that is not a parameter) stops authoring for that
story with an error naming the file and the key: authoring on top of it would only produce tasks that cannot
certify. So does a fact the author would misread (a policy whose meaning is about another parameter, a carried
value already stated by the dashboard's or the note's name, a recorded column the served rows lack, two targets
of one widget that nothing tells apart): it would give tasks that certify as something the story did not mean,
or that never certify.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from certify import URI, option_mentions, policy_value, states_value, units, words
from simulator import BackendFixture, WidgetDef, Workspace, World, option_values, value_allowed

from .analyze import ResolvedAnalyze, resolve_analyze
from .locate import locate, offered
from .sources import Facts, SourceError, Story
from .suggest import did_you_mean, listing

# (spaced by any whitespace: the storyline is wrapped prose, and "exactly as\nserved" asks the same)
READ_PROSE = re.compile(
    r"read-and-note|read\s+and\s+note|record(?:s|ing)?\s+(?:the|its|their)\s+(?:facts|figures|values)|"
    r"\bnote\s+with\b|exactly\s+as\s+served",
    re.I,
)
NOTE_NEEDS_DISTRACTOR = "a policy defined in a note needs a distractor: {phrase, value} of a rival policy"
STEP = re.compile(r"^\s*(\d+)[.)]\s+(.+?)\s*$", re.M)


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

    def lines(self, target_name: str) -> list[str]:
        """The note's entries, in the order of their labels (not of which is the target)."""
        entries = sorted([(self.label, target_name), (self.rival_label, self.rival_name)])
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


class FactErrors(Exception):
    def __init__(self, errors: list[SourceError]) -> None:
        super().__init__("; ".join(str(e) for e in errors))
        self.errors = errors


def value_text(value: Any) -> str:
    """A parameter value as a prompt states it (and as a level's hidden value records it)."""
    return value if isinstance(value, str) else json.dumps(value)


def _policy_errors(
    file: str,
    facts: Facts,
    targets: list[ResolvedTarget],
    carried_key: str,
    carried_value: Any,
    carried: ResolvedTarget,
) -> list[SourceError]:
    """Policy facts the author would misread: a meaning that is about another parameter than the one carried,
    and a carried value already stated by a name the Derive prompt says (the leak gate masks those names)."""
    errors = []
    hidden = value_text(carried_value)
    meaning = facts.policy.meaning
    if not states_value(meaning, hidden, any_case=True):
        for target in [carried, *(t for t in targets if t is not carried)]:
            other = next(
                (
                    (p["paramName"], v)
                    for p in target.widget.params
                    if p.get("paramName") != carried_key
                    for v in [*option_values(p), target.params.get(cast(str, p.get("paramName")))]
                    if isinstance(v, str) and re.search(r"[A-Za-z]", v) and states_value(meaning, v)
                ),
                None,
            )
            if other is not None:
                errors.append(
                    SourceError(
                        file,
                        "facts.policy.carries",
                        f"the policy carries '{carried_key}' "
                        f"({hidden!r}) but its meaning names {other[1]!r}, a value of '{other[0]}'; "
                        f"carry '{other[0]}', or say the {carried_key} in the meaning",
                    )
                )
                break
    for key, name in (("facts.dashboard", facts.dashboard), ("facts.note", facts.note)):
        if name and states_value(name, hidden):
            errors.append(
                SourceError(
                    file,
                    key,
                    f"'{name}' states {hidden!r}, the value the policy carries, which "
                    "the Derive level must not say; rename it",
                )
            )
    return errors


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


_NOT_NAMES = frozenset({"the", "and", "spec"})


def _words(text: str) -> set[str]:
    return words(text, longer_than=2, stop=_NOT_NAMES)


def world_texts(world: World) -> list[tuple[str, str]]:
    cached = world.cache.get("authoring:texts")
    if cached is None:
        cached = world.cache["authoring:texts"] = [
            (where, text.casefold()) for where, text in world.all_text()
        ]
    return cached


_EDGE_WORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "the",
        "of",
        "to",
        "for",
        "in",
        "on",
        "at",
        "by",
        "with",
        "or",
        "is",
        "be",
        "it",
        "its",
        "you",
        "your",
        "can",
        "that",
        "this",
        "every",
        "each",
        "what",
    }
)


def _unique_phrase(world: World, own_file: str, sentence: str) -> str | None:
    """What a closing step or sentence asks for, as a phrase that occurs nowhere else in the world.

    The step's object is taken — its first clause without the leading verb and article ("List evidence gaps -
    the claims ..." gives "evidence gaps") — falling back to the whole step when that clause is not unique: a
    phrase an agent can only write after reading the source."""
    text = sentence.strip().rstrip(".")
    clause = re.split(r"\s[-–—]\s|[;:,]\s", text, maxsplit=1)[0].split()
    if len(clause) > 1:
        clause = clause[1:]
    while clause and clause[0].lower() in _EDGE_WORDS:
        clause = clause[1:]
    texts = world_texts(world)
    for phrase in (" ".join(clause), text):
        if len(phrase.split()) < 2:
            continue
        needle = phrase.casefold()
        holders = {where for where, body in texts if needle in body}
        if holders and all(h == own_file for h in holders):
            return phrase
    return None


def _origins(world: World, backends: list[str]) -> list[str]:
    return list(dict.fromkeys(f.origin for name in backends if (f := world.backend(name)) is not None))


def _widget_hint(fixture: BackendFixture, name: str, app: str | None) -> str:
    """Did-you-mean over the app's widgets first, then the whole catalog (the widget may sit in another app)."""
    names = [w.name for w in fixture.catalog.widgets.values()]
    if app is not None:
        in_app = fixture.catalog.app_widgets(app)
        hint = did_you_mean(name, [w.name for w in fixture.catalog.widgets.values() if w.widget_id in in_app])
        if hint:
            return hint
    return did_you_mean(name, names)


def _options_hint(param: dict[str, Any], value: Any) -> str:
    options = [str(v) for v in option_values(param)]
    return f"{did_you_mean(str(value), options)} (allowed: {listing(options)})"


def _shared_param_errors(
    file: str, facts: Facts, targets: list[ResolvedTarget], clean: bool
) -> list[SourceError]:
    """facts.params applies to every target without its own params; a name none of them declares is a typo."""
    sharing = [t for t, fact in zip(targets, facts.targets, strict=True) if fact.params is None]
    if not sharing:
        return []
    declared = list(dict.fromkeys(str(p.get("paramName")) for t in sharing for p in t.widget.params))
    errors = [
        SourceError(
            file,
            f"facts.params.{name}",
            f"no target has a parameter '{name}'"
            f"{did_you_mean(name, declared)} (parameters: {listing(declared)})",
        )
        for name in facts.params
        if name not in declared
    ]
    if clean and not errors:
        errors = [
            SourceError(file, "facts.params", f"none of these parameters belongs to '{t.name}'")
            for t in sharing
            if facts.params and not t.params
        ]
    return errors


def list_word(kind: str) -> str:
    """What a source's numbered steps are called in a request ("step 3 of its workflow")."""
    return "workflow" if kind == "skill" else "list"


def offers(text: str, kind: str, limit: int = 6) -> str:
    """What a document offers to ground a fact in, for an error that says where else to look."""
    found = offered(text, list_word(kind))
    if not found:
        return "it has no row, step, point or entry a request can point at"
    shown = "; ".join(f"{p.position}: '{p.text[:70]}'" for p in found[:limit])
    more = f" (and {len(found) - limit} more: taskforge world show)" if len(found) > limit else ""
    return f"it offers {shown}{more}"


def _where_in(text: str, phrase: str, kind: str, file: str, key: str, source: str) -> tuple[str, str]:
    """Where a phrase sits in a text (the pointer a request uses, and the piece holding it), generated from
    the document's structure and checked the way an agent reads it; a SourceError naming the story's field
    when no piece, or more than one, holds it."""
    located = locate(text, phrase, list_word(kind))
    if located.piece is None:
        raise SourceError(
            file, key, f"'{phrase}' cannot be pointed at in {source}: {located.problem}; {offers(text, kind)}"
        )
    return located.piece.where, located.piece.text


def _prompt_governance(world: World, file: str, name: str, fact: str | None) -> Governance:
    key = "facts.governance.prompt"
    prompt = world.prompts.get(name)
    if prompt is None:
        raise SourceError(
            file,
            key,
            f"unknown workspace prompt '{name}' (world has: {', '.join(sorted(world.prompts)) or 'none'})",
        )
    label = f"{prompt.name.replace('_', ' ')} prompt"
    if fact is not None:
        return Governance("prompt", prompt.name, label, fact, "")
    for planted in prompt.planted:
        where = planted.where or _where_in(prompt.text, planted.phrase, "prompt", file, key, prompt.name)[0]
        return Governance("prompt", prompt.name, label, planted.phrase, where)
    steps = STEP.findall(prompt.text)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", prompt.text.strip()) if len(s.split()) >= 3]
    closing = steps[-1][1] if steps else (sentences[-1] if sentences else "")
    phrase = _unique_phrase(world, prompt.file, closing) if closing else None
    if phrase is None:
        raise SourceError(
            file, key, f"prompt '{name}' has no closing phrase that occurs nowhere else in the world"
        )
    where = _where_in(prompt.text, phrase, "prompt", file, key, prompt.name)[0]
    return Governance("prompt", prompt.name, label, phrase, where)


def _split_where(where: str) -> tuple[str, str]:
    """ "the first step of its workflow (the stage a build is worked on at)" → (position, topic)."""
    match = re.match(r"(.*?)\s*\((.*)\)\s*$", where)
    return (match.group(1), match.group(2)) if match else (where, "")


def _find_resource(world: World, wanted: str):
    """A resource by URI, else the one whose URI and title share the most words with `wanted` (two at least, and
    more than any other)."""
    resource = world.resources.get(wanted)
    if resource is None:
        scored = sorted(
            ((len(_words(wanted) & _words(f"{uri} {r.title}")), uri) for uri, r in world.resources.items()),
            reverse=True,
        )
        if scored and scored[0][0] >= 2 and (len(scored) == 1 or scored[1][0] < scored[0][0]):
            resource = world.resources[scored[0][1]]
    return resource


def param_label(param: dict[str, Any] | None, key: str) -> str:
    """How a person names a parameter or column: its declared label when it has one ("Event Type" → "event
    type"), else the key with underscores read as spaces; acronyms keep their case."""
    label = (
        str((param or {}).get("label") or (param or {}).get("headerName") or key).replace("_", " ").strip()
    )
    return " ".join(w if (w.isupper() and len(w) > 1) else w.lower() for w in label.split())


def policy_line(phrase: str, label: str, value: Any) -> str:
    """How a note defines a policy: the same sentence shape the world's glossaries use."""
    return f"{phrase[:1].upper()}{phrase[1:]} sets the {label} to {value_text(value)}."


def policy_note_text(story: Story, label: str, value: Any) -> str:
    """The text of the note that defines a story's policy next to its distractor (in phrase order, so the
    story's own rule is not always first)."""
    policy = story.facts.policy
    if policy.distractor is None:
        raise SourceError(story.file, "facts.policy.distractor", NOTE_NEEDS_DISTRACTOR)
    lines = sorted(
        [(policy.phrase, value), (policy.distractor.phrase, policy.distractor.value)],
        key=lambda p: p[0].casefold().removeprefix("the "),
    )
    return "\n".join(policy_line(p, label, v) for p, v in lines)


# How a rival rule is told apart from the story's own when the story names none (the source benchmark's format
# gives a policy as {phrase, carries, meaning} only): a qualifier on the same policy noun.
RIVAL_QUALIFIERS = ("interim", "legacy", "fallback", "provisional", "superseded", "trial")


def _rival_value(param: dict[str, Any], carried: Any, avoid: set[str], draw: str = "") -> Any | None:
    """Another declared option of the carried parameter for the rival rule: not the carried value, not the
    parameter's default when another option exists (a rival set to the default would be right for an agent that
    ignores both rules), and none of the story's other stated values. With `draw` (a story's slug) the option is
    drawn among those by a hash of it, not the first: Derive's second view takes it, and a rival always first in
    the option list would be a place a fixed guess learns."""
    options = [v for v in option_values(param) if str(v) != str(carried)]
    if not options:
        return None
    preferred = [v for v in options if str(v) != str(param.get("value")) and str(v) not in avoid] or options
    if not draw:
        return preferred[0]
    return preferred[int(hashlib.sha256(draw.encode()).hexdigest()[:8], 16) % len(preferred)]


# The names the pipeline coins for a source-format rule whose phrase names its value: qualifiers that say nothing
# of any option, as plausible for the right rule as RIVAL_QUALIFIERS are for the rival.
OWN_QUALIFIERS = ("standing", "house", "desk", "current", "agreed", "working")


def _gives_away(text: str, param: dict[str, Any], lexicon: Any, only: Any = None) -> bool:
    """Whether `text` gives away an option of `param` (`only` that one, when given): a word, a stem or a
    lexicon synonym of its value or of the label its option shows — the battery's phrase guesser would take
    that option without reading."""
    from certify import giveaways
    from simulator import param_options

    for option in param_options(param):
        if only is not None and str(option.value) != str(only):
            continue
        shown = option.label if option.label and option.label != str(option.value) else None
        if giveaways(text, value_text(option.value), shown, lexicon):
            return True
    return False


def value_free_phrase(world: World, story: Story, param: dict[str, Any], carried: Any) -> str:
    """The phrase a source-format policy ({phrase, carries, meaning}, defined by the note the pipeline plants)
    is said and defined by. The template's wording is the user's and stays when it names no option of the
    carried parameter; when it does ("the same-day fails policy" for 1D), the words that give an option away
    are left out ("the fails policy"), and when nothing telling is left the rule gets a coined, value-free name
    ("the standing policy") — the note defines that name, so the level stays derivable and the phrase guesser
    has nothing to go on."""
    from certify import load_lexicon, reads_as_policy

    lexicon = load_lexicon(world.path)
    phrase = story.facts.policy.phrase
    if not _gives_away(phrase, param, lexicon, only=carried):
        return phrase
    tokens = re.sub(r"^(?:the|a|an)\s+", "", phrase.strip(), flags=re.I).split()
    noun = tokens[-1]
    kept = [t for t in tokens[:-1] if not _gives_away(t, param, lexicon)]
    trimmed = " ".join(["the", *kept, noun])
    if kept and reads_as_policy(trimmed) and not _gives_away(trimmed, param, lexicon):
        return trimmed
    start = sum(map(ord, story.slug)) % len(OWN_QUALIFIERS)
    for i in range(len(OWN_QUALIFIERS)):
        coined = f"the {OWN_QUALIFIERS[(start + i) % len(OWN_QUALIFIERS)]} {noun}"
        if reads_as_policy(coined) and not _gives_away(coined, param, lexicon):
            return coined
    return phrase


def _rival_phrase(story: Story, hidden: str, rival: Any, phrase: str | None = None) -> str:
    """The rival rule's phrase: the story phrase's policy noun under a qualifier, sharing no word with the
    story's phrase or either value (a reader tells the two rules apart by the qualifier alone)."""
    phrase = phrase or story.facts.policy.phrase
    noun = phrase.split()[-1]
    taken = set(words(phrase)) | set(words(hidden)) | set(words(value_text(rival)))
    start = sum(map(ord, story.slug)) % len(RIVAL_QUALIFIERS)
    for i in range(len(RIVAL_QUALIFIERS)):
        qualifier = RIVAL_QUALIFIERS[(start + i) % len(RIVAL_QUALIFIERS)]
        if not set(words(qualifier)) & taken:
            return f"the {qualifier} {noun}"
    return f"the other {noun}"


def _planted_policy_note(
    world: World, story: Story, param: dict[str, Any], carried_value: Any
) -> tuple[PolicyDocument | None, list[SourceError]]:
    """A policy given only by phrase, carried parameter and meaning (no resource, no note) is defined nowhere
    an agent can read, so the Derive level would be unsolvable. Its definition is planted where an agent reads
    it: a note on the Derive board that defines the phrase with the carried value beside a rival rule setting the
    same parameter to another option — the same document a story that names `policy.note` gets."""
    hidden = value_text(carried_value)
    others = {value_text(v) for t in story.facts.targets for v in (t.params or {}).values()}
    others |= {value_text(v) for v in story.facts.params.values()}
    rival = _rival_value(param, carried_value, others, draw=story.slug)
    if rival is None:
        return None, [
            SourceError(
                story.file,
                "facts.policy",
                f"'{param.get('paramName')}' declares no option besides {hidden!r}, so no rival rule can "
                "stand beside the policy; carry a parameter with options",
            )
        ]
    name = f"{story.facts.dashboard} Rulebook"
    label = param_label(param, str(param.get("paramName") or ""))
    said = value_free_phrase(world, story, param, carried_value)
    phrase = _rival_phrase(story, hidden, rival, said)
    lines = sorted(
        [(said, carried_value), (phrase, rival)],
        key=lambda p: p[0].casefold().removeprefix("the "),
    )
    text = "\n".join(policy_line(p, label, v) for p, v in lines)
    coined = said if said != story.facts.policy.phrase else None
    return PolicyDocument("note", name, name, text, phrase, coined, rival=(phrase, rival)), []


def _line_of(text: str, start: int) -> tuple[int, int]:
    a = text.rfind("\n", 0, start) + 1
    b = text.find("\n", start)
    return a, (len(text) if b < 0 else b)


def _resolve_policy_document(
    world: World, story: Story, param: dict[str, Any], carried_value: Any
) -> tuple[PolicyDocument | None, list[SourceError]]:
    """The document that defines the story's policy: the phrase is defined there with the carried value, and
    another line of the same document sets the same parameter to a different value (the distractor)."""
    from certify import phrase_pattern

    policy = story.facts.policy
    file = story.file
    hidden = value_text(carried_value)
    if policy.note is not None:
        key = "facts.policy.note"
        errors = []
        if states_value(policy.note, hidden):
            errors.append(
                SourceError(
                    file,
                    key,
                    f"the note name '{policy.note}' states {hidden!r}, the value the "
                    "policy carries; rename it",
                )
            )
        rival = policy.distractor
        if rival is None:
            return None, [*errors, SourceError(file, "facts.policy.distractor", NOTE_NEEDS_DISTRACTOR)]
        if not value_allowed(param, rival.value):
            errors.append(
                SourceError(
                    file,
                    "facts.policy.distractor.value",
                    f"{rival.value!r} is not among the options{_options_hint(param, rival.value)}",
                )
            )
        elif str(rival.value) == str(carried_value):
            errors.append(
                SourceError(
                    file,
                    "facts.policy.distractor.value",
                    "equals the value the policy carries; a distractor sets another value",
                )
            )
        if errors:
            return None, errors
        label = param_label(param, str(param.get("paramName") or ""))
        text = policy_note_text(story, label, carried_value)
        second: tuple[str, Any] | None = (rival.phrase, rival.value)
        if str(rival.value) == str(param.get("value")):
            # the story's rival sits on the default, which a view added without that parameter shows unread:
            # Derive's second view takes a rule the pipeline coins beside it, in the same note
            second = _coined_rival(world, story, text, param, carried_value, {str(rival.value)})
            if second is not None:
                text += "\n" + policy_line(second[0], label, second[1])
        return PolicyDocument("note", policy.note, policy.note, text, rival.phrase, rival=second), []
    if policy.resource is None:
        return _planted_policy_note(world, story, param, carried_value)
    key = "facts.policy.resource"
    resource = _find_resource(world, policy.resource)
    if resource is None:
        return None, [
            SourceError(
                file,
                key,
                f"no workspace resource matches '{policy.resource}'"
                f"{did_you_mean(policy.resource, [*world.resources])}",
            )
        ]
    text = resource.text
    match = phrase_pattern(policy.phrase).search(text)
    if match is None:
        return None, [SourceError(file, key, f"'{policy.phrase}' is not defined in {resource.uri}")]
    found = policy_value(text, policy.phrase, param, [])
    if found is None or str(found.value) != str(carried_value):
        said = "no value of" if found is None else f"{found.value!r} for"
        return None, [
            SourceError(
                file,
                key,
                f"{resource.uri} gives {said} '{param.get('paramName')}' under "
                f"'{policy.phrase}', but the story carries {hidden!r}",
            )
        ]
    own = _line_of(text, match.start())
    rivals = []
    ruled: list[tuple[str, Any]] = []
    for mention in option_mentions(text, param, as_written=True):
        line = _line_of(text, mention.start)
        if line != own and str(mention.value) != str(carried_value):
            rivals.append(text[line[0] : line[1]].strip())
            ruled.append((text[line[0] : line[1]], mention.value))
    if not rivals:
        return None, [
            SourceError(
                file,
                key,
                f"{resource.uri} defines '{policy.phrase}' with no rival policy setting "
                f"'{param.get('paramName')}' to another value; the Derive level would need no "
                "reading",
            )
        ]
    return (
        PolicyDocument(
            "resource",
            resource.uri,
            resource.title or resource.uri,
            text,
            rivals[0],
            **_rival_of_document(world, story, text, param, ruled, carried_value),
        ),
        [],
    )


def _rival_of_document(
    world: World, story: Story, text: str, param: dict[str, Any], ruled: list[tuple[str, Any]], carried: Any
) -> dict[str, Any]:
    """The rival rule Derive's second view takes, for a policy a resource defines: one of the resource's own
    rules when one names no option; else a rule the pipeline coins (a qualifier on the story phrase's noun,
    set to another option, like a source-format policy's rival) and defines in a note on the Derive board."""
    policy = story.facts.policy
    found = _document_rival(world, text, param, ruled, policy.phrase)
    if found is not None:
        return {"rival": found}
    coined = _coined_rival(world, story, text, param, carried, set())
    if coined is None:
        return {}
    label = param_label(param, str(param.get("paramName") or ""))
    note = (f"{story.facts.dashboard} Rulebook", policy_line(coined[0], label, coined[1]))
    return {"rival": coined, "rival_note": note}


def _coined_rival(
    world: World, story: Story, text: str, param: dict[str, Any], carried: Any, avoid: set[str]
) -> tuple[str, Any] | None:
    """A rival rule the pipeline coins, as (phrase, value): another option than the carried one, the default,
    the story's other values and `avoid`, under a qualifier on the story phrase's noun that `text` (where the
    rules are defined) does not already use and that names no option."""
    from certify import load_lexicon, phrase_pattern

    others = {value_text(v) for t in story.facts.targets for v in (t.params or {}).values()}
    others |= {value_text(v) for v in story.facts.params.values()} | avoid
    value = _rival_value(param, carried, others, draw=story.slug)
    if value is None or str(value) in avoid:
        return None
    phrase = _rival_phrase(story, value_text(carried), value)
    if phrase_pattern(phrase).search(text) or _gives_away(phrase, param, load_lexicon(world.path)):
        return None
    return phrase, value


def _document_rival(
    world: World, text: str, param: dict[str, Any], ruled: list[tuple[str, Any]], own: str
) -> tuple[str, Any] | None:
    """The rival rule of a defining document the Derive level asks for too: a line that names a policy (its bold
    phrase, else the words before "sets") which the document defines with that line's option — read the way
    the agents read it — whose phrase gives no option of the parameter away; one not set to the parameter's
    default first (a view left on its default would be right for an agent that read nothing)."""
    from certify import load_lexicon, phrase_pattern, reads_as_policy

    lexicon = load_lexicon(world.path)
    named: list[tuple[str, Any]] = []
    for line, value in ruled:
        bold = re.search(r"\*\*([^*]+)\*\*", line)
        head = bold.group(1) if bold else re.split(r"\s+sets\b", line.strip(" -*"), maxsplit=1)[0]
        phrase = re.sub(r"^(?:the|a|an)\s+", "", head.strip(" .:"), flags=re.I)
        phrase = f"the {phrase[:1].lower()}{phrase[1:]}" if phrase else ""
        if phrase and reads_as_policy(phrase) and phrase_pattern(phrase).search(text) is not None:
            named.append((phrase, value))
    others = [own, *(p for p, _ in named)]
    found: list[tuple[str, Any]] = []
    for phrase, value in named:
        read = policy_value(text, phrase, param, others)
        if read is None or str(read.value) != str(value) or _gives_away(phrase, param, lexicon, only=value):
            continue
        if all(str(v) != str(value) for _, v in found):
            found.append((phrase, value))
    # never one set to the parameter's default: a second view added without that parameter would be right; among
    # the others one drawn by the document's text and the carried option, so no place in the list is favoured
    found = [r for r in found if str(r[1]) != str(param.get("value"))]
    if not found:
        return None
    return found[int(hashlib.sha256(f"{own}|{text}".encode()).hexdigest()[:8], 16) % len(found)]


def _source_of(world: World, kind: str, ref: str) -> tuple[str, str, str, tuple[Any, ...]] | None:
    """(file, title, text, planted) of a knowledge source."""
    if kind == "skill":
        skill = world.skills.get(ref)
        return (skill.file, skill.name, skill.content, skill.planted) if skill else None
    if kind == "resource":
        res = world.resources.get(ref)
        return (res.file, res.title or res.uri, res.text, res.planted) if res else None
    prompt = world.prompts.get(ref)
    return (prompt.file, prompt.name, prompt.text, prompt.planted) if prompt else None


def _quoted(text: str) -> str | None:
    match = re.search(r"[\"“]([^\"”]{2,40})[\"”]", text)
    return match.group(1) if match else None


def _ground_fact(
    world: World,
    story: Story,
    gov: Governance,
    targets: list[ResolvedTarget],
    seeded_wrong: dict[str, Any],
    kind: str,
) -> list[SourceError]:
    """Resolve the fact a Ground level sets from its source: the phrase is in the named source (or in the one
    document the source sends the reader to), nowhere else in the world, and the piece holding it states what
    the fact sets — the target's value of that parameter (one an agent that does not read would get wrong), or
    a quoted tab title."""
    facts = story.facts
    fact = facts.governance.fact or ""
    file = story.file
    key = "facts.governance.fact"
    named = _source_of(world, gov.kind, gov.ref)
    if named is None:
        return [
            SourceError(
                file,
                f"facts.governance.{gov.kind}",
                f"the world has no {gov.kind} '{gov.ref}'; name one it has",
            )
        ]
    holder_kind, holder_ref, (holder_file, _, text, planted) = gov.kind, gov.ref, named
    if fact.casefold() not in text.casefold():
        for piece in units(named[2]):
            for uri in URI.findall(piece):
                other = _source_of(world, "resource", uri)
                if other is not None and fact.casefold() in other[2].casefold():
                    steps = [int(n) for n, step in STEP.findall(named[2]) if uri in step]
                    position = (
                        f"step {steps[0]} of its workflow" if steps else "the passage that refers to it"
                    )
                    gov.hop = Hop(uri, other[1], position)
                    holder_kind, holder_ref, (holder_file, _, text, planted) = "resource", uri, other
        if gov.hop is None:
            marked = _marked_up(text, fact)
            if marked is not None:
                # `world show --facts` prints pieces without their markup; the phrase must be one run of the text
                return [
                    SourceError(
                        file,
                        key,
                        f"'{fact}' is in {gov.source} only across markup ('{marked}'): the agents and the "
                        "reference search the text as written, so ground a phrase that sits inside one run of "
                        "it — the part after the bold term, e.g. "
                        f"'{_unmarked_tail(text, marked)}'",
                    )
                ]
            return [
                SourceError(file, key, f"'{fact}' is neither in {gov.source} nor in a document it refers to")
            ]
        gov.holder = f"{holder_kind}:{holder_ref}"
    holders = {where for where, body in world_texts(world) if fact.casefold() in body}
    if holders != {holder_file}:
        elsewhere = sorted(holders - {holder_file})
        return [
            SourceError(
                file,
                key,
                f"'{fact}' also occurs in {', '.join(elsewhere[:3])}: a Ground fact lives in "
                "its source and nowhere else",
            )
        ]
    gov.phrase = fact
    entry = next((p for p in planted if p.phrase.casefold() == fact.casefold()), None)
    piece = next((u for u in units(text) if fact.casefold() in u.casefold()), fact)
    if entry is not None and entry.where:
        where = entry.where
    else:
        try:
            where, piece = _where_in(text, fact, holder_kind, file, key, gov.source)
        except SourceError as exc:
            return [exc]
    gov.where = where
    if gov.hop is not None:
        gov.hop.row = where.split(" (")[0]
    sets = facts.governance.sets or ""
    gov.sets = sets
    if sets == "tab":
        title = _quoted(piece)
        if title is None:
            return [
                SourceError(
                    file, "facts.governance.sets", f"the passage holding '{fact}' quotes no tab title"
                )
            ]
        if title.casefold() == (facts.tab or "").casefold():
            return [SourceError(file, "facts.governance.sets", f"the tab is already called '{title}'")]
        gov.value = title
        return []
    carrying = [t for t in targets if sets in t.params]
    if not carrying:
        graded = sorted({k for t in targets for k in t.params})
        return [
            SourceError(
                file,
                "facts.governance.sets",
                f"'{sets}' is neither 'tab' nor a graded parameter of a "
                f"target{did_you_mean(sets, graded)} (graded: {listing(graded)})",
            )
        ]
    target = carrying[0]
    param = target.widget.param(sets) or {}
    said = option_mentions(piece, param, as_written=True)
    value = target.params[sets]
    if not said or str(said[0].value) != str(value):
        found = f"states {said[0].value!r}" if said else "states no option of it"
        return [
            SourceError(
                file,
                key,
                f"the passage holding '{fact}' {found}, but the story sets {sets}={value_text(value)!r}",
            )
        ]
    if kind == "repair" and sets not in seeded_wrong:
        return [
            SourceError(
                file,
                "facts.governance.sets",
                f"the stale widget already shows {sets}="
                f"{value_text(value)!r}, so the Ground level would pass without reading; seed it wrong "
                "(facts.seeded_wrong) or ground another parameter",
            )
        ]
    if kind != "repair" and str(param.get("value")) == str(value):
        return [
            SourceError(
                file,
                "facts.governance.sets",
                f"{value_text(value)!r} is the default of '{sets}', so an "
                "agent that never reads the source gets it right; ground another parameter",
            )
        ]
    gov.value = value
    return []


def resolve_governance(world: World, story: Story) -> Governance:
    gov = story.facts.governance
    file = story.file
    if gov.prompt is not None:
        return _prompt_governance(world, file, gov.prompt, gov.fact)
    if gov.skill is not None:
        skill = world.skills.get(gov.skill)
        if skill is None:
            names = [*sorted(world.skills), *(s.name for s in world.skills.values())]
            raise SourceError(
                file,
                "facts.governance.skill",
                f"unknown skill '{gov.skill}'"
                f"{did_you_mean(gov.skill, names)} (world has: {', '.join(sorted(world.skills))})",
            )
        if gov.fact is not None:
            return Governance("skill", skill.slug, skill.name, gov.fact, "")
        for planted in skill.planted:
            if "last" in planted.where or "final" in planted.where:
                return Governance("skill", skill.slug, skill.name, planted.phrase, planted.where)
        steps = STEP.findall(skill.content)
        if not steps:
            raise SourceError(
                file,
                "facts.governance.skill",
                f"skill '{gov.skill}' has no numbered workflow to ground a fact in",
            )
        phrase = _unique_phrase(world, skill.file, steps[-1][1])
        if phrase is None:
            raise SourceError(
                file,
                "facts.governance.skill",
                f"the last step of skill '{gov.skill}' has no phrase that occurs nowhere else in the world",
            )
        return Governance("skill", skill.slug, skill.name, phrase, "what its workflow lists last")
    wanted = gov.resource or ""
    resource = _find_resource(world, wanted)
    if resource is None:
        raise SourceError(
            file,
            "facts.governance.resource",
            f"no workspace resource matches '{wanted}'"
            f"{did_you_mean(wanted, [*world.resources, *(r.title for r in world.resources.values())])}",
        )
    if gov.fact is not None:
        return Governance("resource", resource.uri, resource.title or resource.uri, gov.fact, "")
    key = "facts.governance.resource"
    for planted in resource.planted:
        where = (
            planted.where or _where_in(resource.text, planted.phrase, "resource", file, key, resource.uri)[0]
        )
        return Governance("resource", resource.uri, resource.title or resource.uri, planted.phrase, where)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", resource.text.strip()) if len(s.split()) >= 3]
    phrase = _unique_phrase(world, resource.file, sentences[-1]) if sentences else None
    if phrase is None:
        raise SourceError(
            file,
            "facts.governance.resource",
            f"resource '{resource.uri}' has no closing phrase that occurs nowhere else in the world",
        )
    where = _where_in(resource.text, phrase, "resource", file, key, resource.uri)[0]
    return Governance("resource", resource.uri, resource.title or resource.uri, phrase, where)


def _hinted_first(targets: list[ResolvedTarget], hint: str) -> list[ResolvedTarget]:
    """The Find level describes the first target by the story's find hint. A hint written about another target
    of the story ("the cited written summary" for the second of two) would describe the wrong one: that target
    goes first. Only where nothing else hangs on the order (no seeded_wrong, no record, which are about the
    first target)."""
    from certify import BM25, served_text

    if len(targets) < 2:
        return targets
    # by what each target serves, as the Find rung reads a hint (not by catalog words)
    scores = BM25([served_text(t.widget.schema()) for t in targets]).scores(hint)
    best = max(range(len(targets)), key=lambda i: (scores[i], -i))
    if best == 0 or scores[best] <= scores[0]:
        return targets
    return [targets[best], *(t for i, t in enumerate(targets) if i != best)]


def source_format(story: Story) -> bool:
    """A story in the source benchmark's format: its policy is given only by phrase, carried parameter and
    meaning (no document of the world defines it), so the pipeline plants the definition — and it words what
    the published template would give away (the find hint, the policy phrase) itself, since the template is
    the user's published wording and is not rewritten."""
    policy = story.facts.policy
    return policy.resource is None and policy.note is None


# How many of the target's served parts (columns, filters) a coined find hint names at most, and how many of
# the most telling ones are tried.
HINT_PARTS = 4
HINT_POOL = 8
HINT_CHOICES = 8


def content_hints(world: World, story: Story, target: ResolvedTarget, backends: list[str]) -> list[str]:
    """Find hints written from what the target serves (its columns and filters, as the Find rung reads them
    via `served_text`), each of which the Find rung ranks first among the target's app by content while the
    catalog's names and descriptions do not rank the target first: the wordings the pipeline may say at Find
    for a source-format story whose own hint is the catalog's words. Best first; empty when no set of what the
    target serves tells it apart (its siblings serve the same)."""
    from itertools import combinations

    from certify import BM25, verb_kind

    fixture = world.fixture_of(target.origin, backends)
    if fixture is None:
        return []
    # ranked among every widget of the origin, as the Find rung ranks a description said "from <origin>"
    pool = list(fixture.catalog.widgets.values())
    served = [_served_parts(d.schema()) for d in pool]
    mine = next(i for i, d in enumerate(pool) if d.widget_id == target.widget_id)
    stated = {param_label(target.widget.param(k), k).casefold() for k in target.params}
    own = set(words(f"{target.name} {target.widget.definition.get('description') or ''}"))

    def telling(part: str) -> tuple[int, int, int]:
        shared = sum(1 for i, parts in enumerate(served) if i != mine and part in parts)
        return (int(bool(set(words(part)) & own)), shared, len(part))

    parts = [
        p
        for p in served[mine]
        if p.casefold() not in stated
        and words(p)
        and not any(verb_kind(w) is not None for w in re.findall(r"[A-Za-z][\w'-]*", p))
    ]
    parts = sorted(dict.fromkeys(parts), key=telling)[:HINT_POOL]
    index = BM25([" ".join(x) for x in served])
    out: list[str] = []
    for size in range(2, HINT_PARTS + 1):
        for combo in combinations(parts, size):
            if len(out) >= HINT_CHOICES:
                return out
            hint = _hint_of(list(combo))
            scores = index.scores(hint)
            if scores[mine] <= max((x for i, x in enumerate(scores) if i != mine), default=0.0):
                continue
            trial = story.model_copy(update={"facts": story.facts.model_copy(update={"find_hint": hint})})
            if not _findability_errors(world, trial, target, backends) and not _hint_verb_errors(trial):
                out.append(hint)
    return out


# The entries a planted pointer lists its widgets under: pairs of coined labels (no catalog word, no verb the
# agents read as an instruction, no period or status, nothing they read as fencing off a twin: "the second …"
# would make the whole sentence one to leave alone), one drawn per story, the target's entry drawn in it.
POINTER_LABELS = (
    ("first look", "fresh look"),
    ("quick scan", "deep dive"),
    ("desk pick", "backup pick"),
    ("lead item", "spare item"),
)
# How many pointers a Find level may try (`find_pointers`): the first, then ones whose note's name lends the
# word matchers a rival's words.
POINTER_CHOICES = 4


def find_pointer(
    world: World, story: Story, targets: list[ResolvedTarget], backends: list[str]
) -> FindPointer | None:
    """The pointer a Find level plants first when no description tells its target apart (`find_pointers`)."""
    found = find_pointers(world, story, targets, backends)
    return found[0] if found else None


def find_pointers(
    world: World, story: Story, targets: list[ResolvedTarget], backends: list[str]
) -> list[FindPointer]:
    """The pointers a Find level may plant when no description tells its target apart, best first: a note on
    the board naming the target under one coined label and a rival — another widget of the target's app that
    takes every value the request states (so the values alone do not single the target out), none of the
    story's targets — under the other. Empty when the app has no such rival.

    The first is named after the dashboard. Every Find request also says the dashboard, the app, the stated
    values, the other targets' names and the story's why; where those share words with the target's catalog
    name ("Alert Sweep", status Open and "Alert Trend" for "Open Alert Metrics"), a word matcher picks the target
    whatever the note says. The further pointers name the note with words of their rival's name instead ("Cash
    Break Shortlist"), chosen where the battery's word readers (`certify.lexical_picks`) then take another widget
    than the target from the request's words: the request pulls a matcher off the target, and the counterfactual
    copy (the entries swapped, the note's name kept) leaves such a matcher failing one of the two copies."""
    target = targets[0]
    fixture = world.fixture_of(target.origin, backends)
    if fixture is None:
        return []
    # a widget listed under no app stands among everything its origin serves (as the request names it)
    app = target.widget.definition.get("category") or target.origin
    taken = {t.widget_id for t in targets}
    names = {t.name.casefold() for t in targets}

    def takes(p: dict[str, Any] | None, k: str, v: Any) -> bool:
        if (
            p is None
            or not value_allowed(p, v)
            or param_label(p, k) != param_label(target.widget.param(k), k)
        ):
            return False
        # a value the target lists among its options is listed by the rival too, or left to an endpoint the
        # rival draws its options from (the simulator takes any value there, as the product does)
        listed = option_values(target.widget.param(k) or {})
        own = option_values(p)
        return not listed or str(v) in {str(o) for o in own} or (not own and bool(p.get("optionsEndpoint")))

    rivals = sorted(
        wid
        for wid, d in fixture.catalog.widgets.items()
        if wid not in taken
        and d.name.casefold() not in names
        # a name saying "from" would read, on the note, as where the widget comes from
        and not re.search(r"\bfrom\b", d.name, re.I)
        and (d.definition.get("category") or target.origin) == app
        # every stated value taken, under the label the request says it by (so a reader of the rival entry
        # sets it as the request says)
        and all(takes(d.param(k), k, v) for k, v in target.params.items())
    )
    if not rivals:
        return []
    from certify import BM25, lexical_picks, reads_as_twin, verb_kind, word_stem

    digest = sum(map(ord, story.slug))
    # the rival a word matcher would take first: the one whose catalog words share most with what every Find
    # request says besides the pointer (the dashboard, the app, the stated values), so that matching those words
    # picks the rival, not the target (ties drawn by the story)
    said = f"{story.facts.dashboard} {app} " + " ".join(
        f"{param_label(target.widget.param(k), k)} {value_text(v)}" for k, v in target.params.items()
    )

    def stems(text: str) -> set[str]:
        return {word_stem(w, cut=None) for w in words(text)}

    def shared(wid: str) -> int:
        d = fixture.catalog.widgets[wid]
        return len(stems(said) & stems(f"{d.name} {d.definition.get('description') or ''}"))

    best = max(shared(w) for w in rivals)
    tops = [w for w in rivals if shared(w) == best]
    rival = tops[digest % len(tops)]
    pair = POINTER_LABELS[digest % len(POINTER_LABELS)]
    label, other = pair if (digest // len(POINTER_LABELS)) % 2 == 0 else pair[::-1]
    assert not any(reads_as_twin(f"the {x}") for x in pair), pair
    first = FindPointer(
        f"{story.facts.dashboard} Shortlist", label, other, rival, fixture.catalog.widgets[rival].name
    )
    out = [first]
    # the further pointers: the note named with words of the rival's own name (never all of them: the request
    # would name the rival), where the request's words then take the word matchers elsewhere than the target;
    # those whose words pull a bag of words furthest from the target first
    pool = [
        d for d in fixture.catalog.widgets.values() if (d.definition.get("category") or target.origin) == app
    ]
    entries = [{"name": d.name, "description": d.definition.get("description") or ""} for d in pool]
    index = BM25([f"{e['name']} {e['description']}" for e in entries])
    mine = next(i for i, d in enumerate(pool) if d.widget_id == target.widget_id)
    avoid = stems(f"{target.name} {app} {story.facts.dashboard} note notes")
    # (the story's why is not said at such a Find where it shares a term with the target's name: `Wording`)
    why = purpose(story)
    from certify import terms

    said_why = "" if set(terms(why)) & set(terms(target.name)) else why
    context = " ".join([said, *(t.name for t in targets[1:]), said_why])
    lenders: list[tuple[float, FindPointer]] = []
    for wid in rivals:
        d = fixture.catalog.widgets[wid]
        own = re.findall(r"[A-Za-z][A-Za-z'-]*", d.name)
        lent = [
            w
            for w in own
            if len(w) > 2 and terms(w) and word_stem(w, cut=None) not in avoid and verb_kind(w) is None
        ]
        lent = lent[: min(2, len(own) - 1)]
        note = " ".join(w[:1].upper() + w[1:] for w in lent) + " Shortlist"
        # nor the name of any widget of the origin ("Table Widget Shortlist" names Table Widget)
        if not lent or any(
            states_value(note, x.name, any_case=True) for x in fixture.catalog.widgets.values()
        ):
            continue
        pointer = FindPointer(note, label, other, wid, d.name)
        probe = f"{context} {pointer.references()[0]}"
        if mine in lexical_picks(probe, entries).values():
            continue
        scores = index.scores(probe)
        lenders.append((max(x for i, x in enumerate(scores) if i != mine) - scores[mine], pointer))
    lenders.sort(key=lambda m: -m[0])
    out += [p for _, p in lenders[: POINTER_CHOICES - 1]]
    return out


def _served_parts(schema: dict[str, Any]) -> list[str]:
    """What a widget serves, part by part (`certify.served_parts`), each without a bracketed unit."""
    from certify import served_parts

    parts = served_parts(schema)
    # a bracketed unit ("Revenue ($M)") would cut the phrase the agents read: the words before it are the part
    return list(dict.fromkeys(re.sub(r"\s*\(.*?\)", "", p).strip() for p in parts if p.strip()))


def _hint_of(parts: list[str]) -> str:
    """A description by what is served ("the panel of segment, revenue with YoY growth"; not "view", which the
    requests say of the widget they are about): each part in lower case
    but for the words written with capitals inside them (ID, YoY)."""
    said = [" ".join(w if any(c.isupper() for c in w[1:]) else w.lower() for w in p.split()) for p in parts]
    # no "and": the request joins the widgets it names with it, and a description holding one reads as two
    listed = ", ".join(said[:-1]) + f" with {said[-1]}" if len(said) > 1 else said[0]
    return f"the panel of {listed}"


def _findability_errors(
    world: World, story: Story, target: ResolvedTarget, backends: list[str]
) -> list[SourceError]:
    """The Find level describes the first target by the story's find hint, and Find means finding it by what it
    serves: the ladder's Find rung reads the schema of each widget of the target's app and ranks them by their
    columns and filters against the hint (BM25, `certify.agents.request.find_described`). Two ways a hint
    fails that: it matches another widget's columns better (Find fails for every agent that reads schemas), or
    it paraphrases the catalog — the target is the top match of the hint's words over the app's names and
    descriptions, so a description-word matcher finds it without looking at what anything serves."""
    from certify import BM25, description_cuts, description_read, served_text, word_stem, words

    from .variety import overlap

    fixture = world.fixture_of(target.origin, backends)
    if fixture is None:
        return []
    # a widget listed under no app is found among everything its origin serves (what the request names)
    app = target.widget.definition.get("category") or target.origin
    hint = story.facts.find_hint
    pool = [
        d for d in fixture.catalog.widgets.values() if (d.definition.get("category") or target.origin) == app
    ]
    errors: list[SourceError] = []
    # what the Find prompt says besides the hint: the app, and each stated value with its parameter's label
    stated = " ".join(
        f"{param_label(target.widget.param(k), k)} {value_text(v)}" for k, v in target.params.items()
    )

    def lexical(text: str) -> set[str]:
        return {word_stem(w, cut=None) for w in words(text)}

    said = lexical(f"{hint} {app} {stated}")
    catalog = [lexical(f"{d.name} {d.definition.get('description') or ''}") for d in pool]
    scores = [overlap(said, c) for c in catalog]
    mine = next(i for i, d in enumerate(pool) if d.widget_id == target.widget_id)
    rivals = [x for i, x in enumerate(scores) if i != mine]
    if scores[mine] > max(rivals, default=0.0):
        shared = sorted(lexical(hint) & catalog[mine])
        errors.append(
            SourceError(
                story.file,
                "facts.find_hint",
                f"'{hint}' makes '{target.name}' the top lexical match among {app}'s catalog names and "
                f"descriptions (with the app and the stated values the prompt says; the hint shares "
                f"{', '.join(repr(w) for w in shared) or 'no stem itself'}): a description-word matcher finds "
                "it without looking at what it serves; describe what you want to see in your own words — its "
                f"columns and filters ({served_text(target.widget.schema())}) — not the catalog's",
            )
        )
    index = BM25([served_text(d.schema()) for d in pool])
    ranked = index.rank(hint)
    top = pool[ranked[0][0]] if ranked else None
    cuts = description_cuts(hint.rstrip("."))
    if cuts and top is not None and top.widget_id == target.widget_id:
        # the agents end a description at a parenthesis, a colon, a dash …: the rung reads what follows the last
        read = description_read(hint.rstrip("."))
        after = index.rank(read)
        if not after or pool[after[0][0]].widget_id != target.widget_id:
            errors.append(
                SourceError(
                    story.file,
                    "facts.find_hint",
                    f"'{hint}' holds {', '.join(repr(c) for c in cuts)}, where the agents end a description: "
                    f"the Find rung reads {'only ' + repr(read) if read else 'none of it'}, which does not find "
                    f"'{target.name}'; say it in one run "
                    "of words, with commas ('the amount owed in $k per market' for 'the amount owed ($k) per "
                    "market')",
                )
            )
    tied = [pool[i] for i, score in ranked[1:] if ranked and score == ranked[0][1]]
    repaired = story.facts.kind == "repair" or (story.facts.kind is None and bool(story.facts.seeded_wrong))
    if top is not None and top.widget_id == target.widget_id and tied and not repaired:
        # at a tie the rung takes whichever comes first, so finding the target would be the catalog's order (a
        # repair's board is seeded without a widget that ties with its target, `seeding._still_found`)
        errors.append(
            SourceError(
                story.file,
                "facts.find_hint",
                f"'{hint}' matches '{tied[0].name}' ({served_text(tied[0].schema())}) in {app} as well as "
                f"'{target.name}' by what they serve, so an agent finding it by content has a coin to toss; add a "
                f"word of what only the target serves: {served_text(target.widget.schema())}",
            )
        )
    if top is None or top.widget_id != target.widget_id:
        found = f"'{top.name}' ({served_text(top.schema())})" if top is not None else "no widget"
        errors.append(
            SourceError(
                story.file,
                "facts.find_hint",
                f"'{hint}' matches {found} in {app} best by what it serves, not '{target.name}' (an agent "
                "finds a described widget by its columns and filters); use words of what the target serves: "
                f"{served_text(target.widget.schema())}",
            )
        )
    return errors


def find_prompt_errors(
    world: World, resolved: ResolvedStory, prompt: str, backends: list[str]
) -> list[SourceError]:
    """The shortcuts read the whole Find prompt, not the hint alone: besides the hint it says the app, the
    backend's origin, the stated values, the dashboard (and a read's note) by name, the story's why and its
    deadline. When, over the prompt the rule author writes for the story's Find level (`prompt`), the battery's
    own word readers (bag of words, description matcher: `certify.lexical_picks`) take the target from the
    app's catalog names and descriptions, the level passes without anything being found by what it serves, and
    `author` blocks on its shortcuts gate. An analyze ask is exempt: its judged answer fails a word matcher.
    Which field lends the words is said, so the writer knows what to reword (a why saying "exposures" beside a
    description "style exposures", a dashboard "Style Review Board" for "Style Drift Monitor")."""
    from certify import lexical_picks, served_text, terms

    story, target = resolved.story, resolved.targets[0]
    fixture = world.fixture_of(target.origin, backends)
    app = target.widget.definition.get("category")
    if fixture is None or not app or resolved.analyze is not None:
        return []
    pool = [d for d in fixture.catalog.widgets.values() if d.definition.get("category") == app]
    facts = story.facts
    entries = [{"name": d.name, "description": d.definition.get("description") or ""} for d in pool]
    mine = next(i for i, d in enumerate(pool) if d.widget_id == target.widget_id)
    picked = sorted(name for name, i in lexical_picks(prompt, entries).items() if i == mine)
    if not picked:
        return []
    fields = {
        "facts.find_hint": facts.find_hint,
        "facts.dashboard": facts.dashboard,
        "facts.why": purpose(story),
        "facts.deadline": facts.deadline or "",
        "facts.note": facts.note or "",
    }
    if resolved.kind == "read":
        fields["facts.record"] = " ".join(facts.record or [])
    catalog = f"{target.name} {entries[mine]['description']}"

    def shared(text: str) -> list[str]:
        # the description matcher compares words, the bag of words stems: both count
        stems = set(terms(catalog))
        return sorted(w for w in words(text) if w in words(catalog) or set(terms(w)) & stems)

    lent = {key: shared(text) for key, text in fields.items() if text and text in prompt}
    lent = {key: found for key, found in lent.items() if found}
    rest = sorted(set(shared(prompt)) - {w for found in lent.values() for w in found})
    key = (
        max(lent, key=lambda k: (len(lent[k]), k == "facts.find_hint"))
        if lent
        else "facts.record"
        if resolved.kind == "read"
        else "facts.find_hint"
    )
    said = "; ".join(f"{k} says {', '.join(repr(w) for w in found)}" for k, found in lent.items())
    if rest:
        said += ("; " if said else "") + (
            f"the request itself says {', '.join(repr(w) for w in rest)} (the stated parameters"
            + (", the recorded columns: facts.record picks them" if resolved.kind == "read" else "")
            + ")"
        )
    own = [w for w in dict.fromkeys(served_text(target.widget.schema()).lower().split()) if not shared(w)]
    return [
        SourceError(
            story.file,
            key,
            f"the Find prompt's words make '{target.name}' the pick of the {' and the '.join(picked)} among "
            f"{app}'s catalog names and descriptions ('{target.name}': {entries[mine]['description']!r})"
            + (f": {said}" if said else "")
            + (
                "; nothing the story words lends them: the request's own words do, so pick a first target whose "
                "description shares less with what the request must say"
                if not lent
                else ""
            )
            + "; every level says the dashboard, the why and the deadline, so a word of the target's name or "
            "description in any of them lets a word matcher find it without reading what it serves — reword "
            f"{key} without those words"
            + (f" (what it serves that its catalog entry does not say: {' '.join(own)})" if own else ""),
        )
    ]


_MARKUP = re.compile(r"\*\*|__|`|\*")


def _marked_up(text: str, fact: str) -> str | None:
    """The stretch of `text` that says `fact` once its markdown emphasis is dropped, as written (None when the
    plain text does not say it either)."""
    plain, spans = [], []
    for m in re.finditer(r"\*\*|__|`|\*|.", text, re.S):
        if not _MARKUP.fullmatch(m.group(0)):
            plain.append(m.group(0))
            spans.append(m.start())
    at = "".join(plain).casefold().find(fact.casefold())
    if at < 0:
        return None
    return text[spans[at] : spans[at + len(fact) - 1] + 1]


def _unmarked_tail(text: str, marked: str) -> str:
    """What follows the last markup of `marked` to the end of its line: a phrase one run of the text holds."""
    end = text.find(marked) + len(marked)
    line_end = text.find("\n", end)
    tail = _MARKUP.split(marked)[-1] + text[end : line_end if line_end >= 0 else len(text)]
    return tail.strip().rstrip(".")


def _option_label(param: dict[str, Any] | None, value: Any) -> str | None:
    """The label the parameter's options show for `value` (None when it is the value itself)."""
    from simulator import param_options

    for option in param_options(param or {}):
        if isinstance(option, dict) and str(option.get("value")) == str(value):
            shown = str(option.get("label") or "")
            return shown if shown and shown != str(value) else None
    return None


def _giveaway_errors(
    world: World, story: Story, param: dict[str, Any] | None, value: Any, phrase: str | None = None
) -> list[SourceError]:
    """Derive hides the carried value behind a policy phrase; a phrase — or a dashboard or note name the level
    shows — that shares a word or a stem with the value or the label its option shows, or says a finance-lexicon
    synonym of it
    ("sterling" for GBP, "pulled" for Cancelled), gives the value away to an agent that never reads the policy
    (the battery's phrase guesser). The rival policy's phrase is held to the same rule for its own value, so it
    reads as plausible as the right one."""
    from certify import giveaways, load_lexicon

    lexicon = load_lexicon(world.path)
    facts, policy = story.facts, story.facts.policy
    label = _option_label(param, value)
    said: list[tuple[str, str, Any, str | None]] = [
        ("facts.policy.phrase", phrase or policy.phrase, value, label),
        ("facts.dashboard", facts.dashboard, value, label),
    ]
    if facts.note:
        said.append(("facts.note", facts.note, value, label))
    if policy.note:
        said.append(("facts.policy.note", policy.note, value, label))
    if policy.distractor is not None:
        rival = policy.distractor.value
        said.append(
            ("facts.policy.distractor.phrase", policy.distractor.phrase, rival, _option_label(param, rival))
        )
    errors = []
    for key, text, what, named in said:
        reasons = giveaways(text, what, named, lexicon)
        if reasons:
            errors.append(
                SourceError(
                    story.file,
                    key,
                    f"'{text}' gives away {value_text(what)}: it {'; '.join(reasons)} — an agent guesses the "
                    "value without reading the policy; reword it so that nothing in it names the value",
                )
            )
    return errors


def _dashboard_name_errors(story: Story, target: ResolvedTarget) -> list[SourceError]:
    """Every level names the dashboard; one whose name holds the Find target's name ("Liquidity Coverage
    Board" for "Liquidity Coverage") names the widget the Find level only describes, so an agent matching
    catalog names in the request (the shortcuts battery's enumerator, note stuffer and neighbour copier) finds
    it without reading the description, and the Find level never certifies."""
    said = re.compile(rf"(?<!\w){re.escape(target.name)}(?!\w)", re.I)
    found = [
        (key, name)
        for key, name in (("facts.dashboard", story.facts.dashboard), ("facts.tab", story.facts.tab or ""))
        if name and said.search(name)
    ]
    return [
        SourceError(
            story.file,
            key,
            f"'{name}' holds the name of the Find target '{target.name}': the Find level then names the "
            "widget it should only describe (a name matcher finds it without the description); name the "
            f"{key.rsplit('.', 1)[-1]} by what the board is for, without '{target.name}'",
        )
        for key, name in found
    ]


def _hint_verb_errors(story: Story) -> list[SourceError]:
    """The agents read a description as the words between the request's verb and "from <app>"; a find hint
    holding a word they take for a verb ("that need rolling", "to show") cuts the description there, and the
    Find rung finds nothing."""
    from certify import verb_kind

    hint = story.facts.find_hint
    errors: list[SourceError] = []
    verbs = [w for w in re.findall(r"[A-Za-z][\w'-]*", hint) if verb_kind(w) is not None]
    if not verbs:
        return errors
    return [
        *errors,
        SourceError(
            story.file,
            "facts.find_hint",
            f"'{hint}' holds {', '.join(repr(v) for v in dict.fromkeys(verbs))}, which the agents read as an "
            "instruction verb: the description is cut there and the Find rung finds nothing; say it without "
            "that word (e.g. 'due for rolling' for 'that need rolling')",
        ),
    ]


def _policy_phrase_errors(story: Story) -> list[SourceError]:
    """The Derive level says the policy phrase where the value would be ("desk per the macro desk"); the agents
    take a phrase for a policy only when it ends with a policy noun (`certify.agents.request.reads_as_policy`),
    else they see no policy to look up and the level fails for all of them under some wordings."""
    from certify import POLICY_NOUNS, reads_as_policy

    phrase = story.facts.policy.phrase
    if reads_as_policy(phrase):
        return []
    return [
        SourceError(
            story.file,
            "facts.policy.phrase",
            f"'{phrase}' does not read as a policy to the agents (it must end with one of: "
            f"{', '.join(POLICY_NOUNS[:12])}, …); say e.g. '{phrase} rule' and use that phrase in the story",
        )
    ]


def _signature_errors(
    world: World, story: Story, target: ResolvedTarget, backends: list[str]
) -> list[SourceError]:
    """The validator refuses a Find level whose target is the only widget of its app that takes the values the
    level states (authoring/lints.py find_giveaways): an agent matching parameter signatures finds it without
    reading the description. Said before authoring, with the widgets of the app that come closest."""
    from simulator import value_allowed

    fixture = world.fixture_of(target.origin, backends)
    app = target.widget.definition.get("category")
    values = dict(target.params)
    if fixture is None or not app or not values:
        return []
    siblings = [d for d in fixture.catalog.widgets.values() if d.definition.get("category") == app]

    def takes(w: WidgetDef) -> int:
        return sum(1 for k, v in values.items() if (p := w.param(k)) is not None and value_allowed(p, v))

    fits = [w for w in siblings if takes(w) == len(values)]
    if [w.widget_id for w in fits] != [target.widget_id]:
        return []
    near = sorted((w for w in siblings if w.widget_id != target.widget_id), key=lambda w: -takes(w))[:3]
    return [
        SourceError(
            story.file,
            "facts.targets[0]",
            f"'{target.name}' is the only widget of {app} that takes {values}: the validator refuses its Find "
            "level (those values alone single it out, without the description); pick a first target whose "
            f"parameters another widget of its app also takes (closest here: {', '.join(w.name for w in near)})",
        )
    ]


def _listed_errors(
    world: World, story: Story, target: ResolvedTarget, backends: list[str]
) -> list[SourceError]:
    """A Find repair whose target is the one widget of its app that lists the values to set among its declared
    options (the others that take them draw their options from an endpoint): the signature matcher, which reads
    the options a schema declares, repairs the one placed widget listing them without reading the request —
    whether a description or a planted pointer says which. Nothing the pipeline words tells it apart then."""
    repair = story.facts.kind == "repair" or (story.facts.kind is None and bool(story.facts.seeded_wrong))
    values = {k: v for k, v in target.params.items() if k in (story.facts.seeded_wrong or {})}
    fixture = world.fixture_of(target.origin, backends)
    if not repair or not values or fixture is None:
        return []
    # among what the request says the target comes from: the story's app, else its origin
    app = target.app or target.origin
    in_app = set(fixture.catalog.app_widgets(target.app)) if target.app else set()
    siblings = [
        w
        for wid, w in fixture.catalog.widgets.items()
        if not target.app or wid in in_app or w.definition.get("category") == target.app
    ]

    def lists(w: WidgetDef) -> bool:
        return all(
            (p := w.param(k)) is not None and str(v) in {str(o) for o in option_values(p)}
            for k, v in values.items()
        )

    if [w.widget_id for w in siblings if lists(w)] != [target.widget_id]:
        return []
    drawn = [w.name for w in siblings if w.widget_id != target.widget_id and all(w.param(k) for k in values)]
    return [
        SourceError(
            story.file,
            "facts.targets[0]",
            f"'{target.name}' is the only widget of {app} whose options list "
            f"{', '.join(f'{k} {value_text(v)}' for k, v in values.items())}"
            + (f" ({', '.join(drawn[:3])} take it only from an options endpoint)" if drawn else "")
            + ": an agent repairing the placed widget whose schema lists the value finds it without reading the "
            "request, so its Find level cannot certify; pick a first target whose values to set another widget "
            "of its app also lists, or set a parameter whose value its siblings list too",
        )
    ]


def purpose(story: Story) -> str:
    """Why the story's work is wanted, as every level says it: `facts.why`, else the storyline's first
    sentence."""
    if story.facts.why:
        return story.facts.why
    prose = " ".join(
        line.strip() for line in story.prose.splitlines() if line.strip() and not line.startswith("#")
    )
    match = re.match(r"(.+?[.!?])(?:\s|$)", prose)
    return match.group(1) if match else ""


def rival_said(story: Story, value: Any, carried_key: str) -> str | None:
    """The facts field that says a Derive rival rule's value where every request says it (`facts.why`, the
    deadline, the dashboard, a value another parameter is stated on: "The credit PM wants …", the fund
    "Breakwater Credit" beside the asset class Credit), or None. A second view on that value would be a hidden
    value the request states anyway: the leak gate refuses it and a reader that takes an option word from the
    request sets it unread, so Derive asks for no second view then (`Level.compare`)."""
    text = value_text(value)
    stated = {
        f"facts.params.{k}": value_text(v)
        for t in story.facts.targets
        for k, v in {**story.facts.params, **(t.params or {})}.items()
        if k != carried_key
    }
    fields = {
        "facts.why": purpose(story),
        "facts.deadline": story.facts.deadline or "",
        "facts.dashboard": story.facts.dashboard or "",
        **stated,
    }
    return next((k for k, said in fields.items() if said and states_value(said, text, any_case=True)), None)


def owned_sentences(resolved: Iterable[ResolvedStory]) -> list[str]:
    """The stories' own sentences, said at each of their levels by design — each story's purpose and its own
    deadline: the rotation-aware variety measure leaves them out of the skeletons (`variety.Masks.owned`)."""
    return [t for r in resolved for t in (purpose(r.story), r.story.facts.deadline) if t]


def _hidden_option_errors(story: Story, hidden_params: list[dict[str, Any]]) -> list[SourceError]:
    """The purpose and deadline are said at every level, so they must not say an option of a parameter a level
    hides (`hidden_params`: the policy's at Derive, the fact's at Ground and Compose) as the catalog writes it:
    the agents take such an option for the value to set ("Credit wants …" sets the asset class to Credit before
    any policy is read), and the ladder fails the level. The storyline's first sentence, said when there is no
    why, is left out by the rule author where it says one, so only a story's own why and deadline can."""
    from certify import schema_mentions

    errors = []
    for key, text in (("why", story.facts.why), ("deadline", story.facts.deadline)):
        said = schema_mentions(text or "", {"params": hidden_params})
        option = next(((name, ms[0]) for name, ms in said.items() if ms), None)
        if option is not None:
            name, mention = option
            errors.append(
                SourceError(
                    story.file,
                    f"facts.{key}",
                    f"'{text}' says '{mention.text}', an option of {name}, which a level leaves the agent to find "
                    f"(every level says the {key}): an agent takes it for the {name} to set; say it without the "
                    "option's name",
                )
            )
    return errors


def _purpose_errors(
    world: World, story: Story, carried_value: Any, governance: Governance
) -> list[SourceError]:
    """The purpose and deadline are said at every level, so they must not say what a level hides (the value
    Derive's policy stands for, the value or phrase Ground reads in its source)."""
    errors = []
    hidden = [value_text(carried_value), governance.phrase]
    if governance.sets is not None and governance.value is not None:
        hidden.append(value_text(governance.value))
    first = story.facts.targets[0].widget if story.facts.targets else ""
    if story.facts.why and first and states_value(story.facts.why, first, any_case=True):
        errors.append(
            SourceError(
                story.file,
                "facts.why",
                f"'{story.facts.why}' names '{first}', which the Find level hides (every level says why); "
                "say why without the widget's name",
            )
        )
    # an explicit why or deadline; the storyline's first sentence (said when there is no why) is left out by the
    # rule author at any level it would give away, so it is no error
    for key, text in (("why", story.facts.why), ("deadline", story.facts.deadline)):
        said = next((h for h in hidden if text and h and states_value(text, h, any_case=True)), None)
        if said is not None:
            where = f"facts.{key}" if key == "deadline" or story.facts.why else "facts.why"
            how = (
                ""
                if story.facts.why or key == "deadline"
                else " (the storyline's first sentence, said when facts.why is absent)"
            )
            errors.append(
                SourceError(
                    story.file,
                    where,
                    f"'{text}'{how} says '{said}', which a level hides (every level says it); "
                    "say why without the value",
                )
            )
            continue
        # nor a word, a stem or a finance-lexicon synonym of a hidden value ("crude" for Oil +40%): the phrase
        # guesser's judgement, applied to what every level says
        from certify import giveaways, load_lexicon

        values = [carried_value] + ([governance.value] if governance.value is not None else [])
        for value in values:
            reasons = giveaways(text or "", value_text(value), None, load_lexicon(world.path)) if text else []
            if reasons:
                errors.append(
                    SourceError(
                        story.file,
                        f"facts.{key}",
                        f"'{text}' gives away {value_text(value)}, which a level hides: it {'; '.join(reasons)} "
                        "(every level says it); say why without it",
                    )
                )
                break
    return errors


def _board_errors(
    world: World, story: Story, first: ResolvedTarget, backends: list[str]
) -> list[SourceError]:
    """`facts.board` names catalog widgets of the first target's backend (the board's other widgets)."""
    fixture = world.fixture_of(first.origin, backends)
    if fixture is None or not story.facts.board:
        return []
    names = sorted({w.name for w in fixture.catalog.widgets.values()})
    errors = []
    for i, name in enumerate(story.facts.board):
        if name not in names:
            errors.append(
                SourceError(
                    story.file,
                    f"facts.board[{i}]",
                    f"'{first.origin}' serves no widget named '{name}'{did_you_mean(name, names)}",
                )
            )
        elif name == first.name:
            errors.append(
                SourceError(
                    story.file,
                    f"facts.board[{i}]",
                    f"'{name}' is the first target itself; list the board's other widgets",
                )
            )
    return errors


def resolve(world: World, story: Story, backends: list[str]) -> ResolvedStory:
    """Check every fact of `story` against `world` (with `backends` connected) and resolve it."""
    facts = story.facts
    file = story.file
    errors: list[SourceError] = []
    targets: list[ResolvedTarget] = []
    for i, t in enumerate(facts.targets):
        key = f"facts.targets[{i}]"
        fixture = world.fixture_of(t.origin, backends)
        if fixture is None:
            origins = _origins(world, backends)
            errors.append(
                SourceError(
                    file,
                    f"{key}.origin",
                    f"no connected backend serves origin '{t.origin}'"
                    f"{did_you_mean(t.origin, origins)} (connected: {listing(origins)})",
                )
            )
            continue
        candidates = [w for w in fixture.catalog.widgets.values() if w.name == t.widget]
        if t.app is not None:
            apps = fixture.catalog.app_names
            if t.app not in apps:
                errors.append(
                    SourceError(
                        file,
                        f"{key}.app",
                        f"'{t.origin}' has no app named '{t.app}'{did_you_mean(t.app, apps)}",
                    )
                )
                continue
            in_app = fixture.catalog.app_widgets(t.app)
            candidates = [
                w for w in candidates if w.widget_id in in_app or w.definition.get("category") == t.app
            ]
        if not candidates:
            where = f" in app '{t.app}'" if t.app else ""
            errors.append(
                SourceError(
                    file,
                    f"{key}.widget",
                    f"no widget named '{t.widget}'{where} in '{t.origin}'"
                    f"{_widget_hint(fixture, t.widget, t.app)}",
                )
            )
            continue
        if len(candidates) > 1:
            errors.append(
                SourceError(
                    file,
                    f"{key}.widget",
                    f"'{t.widget}' names {len(candidates)} widgets in '{t.origin}'; add app: to say which",
                )
            )
            continue
        widget = candidates[0]
        source = t.params if t.params is not None else facts.params
        params: dict[str, Any] = {}
        for name, value in source.items():
            param = widget.param(name)
            if param is None:
                if t.params is not None:
                    names = [str(p.get("paramName")) for p in widget.params]
                    errors.append(
                        SourceError(
                            file,
                            f"{key}.params.{name}",
                            f"'{t.widget}' has no parameter '{name}'"
                            f"{did_you_mean(name, names)} (its parameters: {listing(names)})",
                        )
                    )
                continue
            if not value_allowed(param, value):
                errors.append(
                    SourceError(
                        file,
                        f"{key}.params.{name}" if t.params else f"facts.params.{name}",
                        f"{value!r} is not among the declared options of '{t.widget}'"
                        f"{_options_hint(param, value)}",
                    )
                )
                continue
            params[name] = value
        twin = next(
            (
                j
                for j, o in enumerate(targets)
                if o.widget is widget
                and (params.items() <= o.params.items() or o.params.items() <= params.items())
            ),
            None,
        )
        if twin is not None:
            errors.append(
                SourceError(
                    file,
                    f"{key}.params",
                    f"repeats facts.targets[{twin}] ('{t.widget}') with "
                    "parameters that do not tell the two apart; give each its own values",
                )
            )
        targets.append(ResolvedTarget(t.widget, t.origin, t.app, widget, params))

    resolved_all = len(targets) == len(facts.targets)
    if resolved_all and not facts.seeded_wrong and not facts.record:
        targets = _hinted_first(targets, facts.find_hint)
    if resolved_all:
        errors += _shared_param_errors(file, facts, targets, clean=not errors)
    # A fact that depends on a target or a parameter already reported is not checked: one mistake, one error.
    reported = {e.key.rsplit(".", 1)[-1] for e in errors if ".params." in e.key}
    sound = resolved_all and not reported
    carried_key, carried_value, carried_target = facts.policy.carries, None, -1
    for i, target in enumerate(targets):
        if carried_key in target.params:
            carried_value, carried_target = target.params[carried_key], i
            break
    if sound and carried_target < 0:
        graded = [name for target in targets for name in target.params]
        errors.append(
            SourceError(
                file,
                "facts.policy.carries",
                f"'{carried_key}' is not a graded parameter of any "
                f"target{did_you_mean(carried_key, graded)} (graded: {listing(graded)})",
            )
        )
    elif carried_target >= 0:
        errors += _policy_errors(file, facts, targets, carried_key, carried_value, targets[carried_target])
    if facts.record and sound:
        errors += _record_errors(world, file, backends, targets[0], facts.record)

    seeded_wrong = dict(facts.seeded_wrong or {})
    for name, value in seeded_wrong.items() if resolved_all else ():
        if name in reported or (reported and name not in targets[0].params):
            continue
        if name not in targets[0].params:
            errors.append(
                SourceError(
                    file,
                    f"facts.seeded_wrong.{name}",
                    f"'{name}' is not a graded parameter of "
                    f"'{targets[0].name}'{did_you_mean(name, targets[0].params)}",
                )
            )
        else:
            param = targets[0].widget.param(name)
            if param is not None and not value_allowed(param, value):
                errors.append(
                    SourceError(
                        file,
                        f"facts.seeded_wrong.{name}",
                        f"{value!r} is not among the options{_options_hint(param, value)}",
                    )
                )
            if targets[0].params.get(name) == value:
                errors.append(SourceError(file, f"facts.seeded_wrong.{name}", "equals the correct value"))

    try:
        governance = resolve_governance(world, story)
    except SourceError as exc:
        errors.append(exc)
        governance = None

    kind = facts.kind or ("repair" if seeded_wrong else "read" if READ_PROSE.search(story.prose) else "add")
    if kind == "repair" and not seeded_wrong:
        errors.append(SourceError(file, "facts.seeded_wrong", "a repair story needs the values left wrong"))
    policy_doc = None
    if not errors:
        policy_param = targets[carried_target].widget.param(carried_key) or {}
        policy_doc, more = _resolve_policy_document(world, story, policy_param, carried_value)
        errors += more
        if governance is not None and facts.governance.fact is not None:
            errors += _ground_fact(world, story, governance, targets, seeded_wrong, kind)
    if targets:
        errors += _board_errors(world, story, targets[0], backends)
    if governance is not None:
        errors += _purpose_errors(world, story, carried_value, governance)
    analyze = None
    if targets:
        first = targets[0].widget
        analyze, more = resolve_analyze(world, story, first.definition, first.rows or [], targets[0].params)
        errors += more
    if errors:
        raise FactErrors(errors)
    words = facts.dashboard.split()
    tab_name = facts.tab or (words[-1] if len(words) > 1 else facts.dashboard)
    warnings: list[str] = []
    carried_param = targets[carried_target].widget.param(carried_key)
    blocking = []
    if carried_param is not None and str(carried_param.get("value")) == str(carried_value):
        warnings.append(
            f"the policy carries {carried_key}={carried_value!r}, which is also the parameter's default: "
            + (
                "an agent that ignores the policy gets it right"
                if kind == "read"
                else "the Derive level grades the call that states it, as the state cannot tell"
            )
        )
    # An add's Derive level is then graded by the call that states the value (the rule author's plan), a
    # repair's by a stale widget seeded off it; a read's note says the same whatever the cut an agent read
    # when the rows do not depend on it, and the ladder's Find rung solves the level: calibration blocks.
    carried_widget = targets[carried_target].widget_id if carried_target >= 0 else ""
    placed_on_it = [
        d.name
        for b in world.baselines.values()
        for d in b.dashboards
        for w in d.widgets
        if w.widget_id == carried_widget and str((w.data_args or {}).get(carried_key)) == str(carried_value)
    ]
    if (
        carried_param is not None
        and str(carried_param.get("value")) == str(carried_value)
        and (kind == "read" or (kind == "add" and placed_on_it))
    ):
        # an add's call that states the value is copied from the same widget placed on another dashboard
        # (the shortcuts' neighbour copier) when the workspace has one on that value
        blocking.append(
            SourceError(
                file,
                "facts.policy.carries",
                f"the policy carries {carried_key}={value_text(carried_value)!r}, which is also the "
                "parameter's default: an agent that ignores the policy gets it right (the ladder's Find rung "
                "solves the Derive level"
                + (
                    f"; '{placed_on_it[0]}' already shows it, to copy"
                    if placed_on_it and kind == "add"
                    else ""
                )
                + "); carry another parameter, or a value that is not the default",
            )
        )
    unfindable = _findability_errors(world, story, targets[0], backends) + _hint_verb_errors(story)
    pointer: FindPointer | None = None
    # a source-format story's own hint may still be matched by the catalog's words in the whole request (the
    # bag of words the rule author's Find trials run): the descriptions by content follow it as alternatives
    find_hints = content_hints(world, story, targets[0], backends) if source_format(story) else []
    if find_hints and not unfindable:
        find_hints = [facts.find_hint, *find_hints]
    elif find_hints:
        warnings.append(
            f"the find hint '{facts.find_hint}' is not a description by content ("
            + "; ".join(e.message.split(":")[0] for e in unfindable)
            + f"): the pipeline describes '{targets[0].name}' by what it serves instead, as "
            f"'{find_hints[0]}'"
        )
    elif unfindable and source_format(story):
        # nothing the target serves tells it apart (its siblings serve the same): a pointer planted on the Find
        # board names it instead, when another widget of its app can stand in the rival entry
        pointer = pointers[0] if (pointers := find_pointers(world, story, targets, backends)) else None
        if pointer is None:
            blocking += unfindable
            blocking.append(
                SourceError(
                    file,
                    "facts.find_hint",
                    f"nothing '{targets[0].name}' serves tells it apart from the rest of its app, and no other "
                    f"widget of its app takes {', '.join(map(value_text, targets[0].params.values())) or 'it'} "
                    "to stand beside it in a planted pointer; give a first target that serves a column or "
                    "filter of its own, or one with a sibling on the same parameters",
                )
            )
        else:
            warnings.append(
                f"the find hint '{facts.find_hint}' is not a description by content ("
                + "; ".join(e.message.split(":")[0] for e in unfindable)
                + f") and nothing '{targets[0].name}' serves tells it apart: the pipeline plants a note "
                f"'{pointer.note}' on the Find board listing it for the {pointer.label} beside "
                f"'{pointer.rival_name}' for the {pointer.rival_label}, and the request says "
                f"'{pointer.references()[0]}'"
            )
    else:
        blocking += unfindable
    blocking += _signature_errors(world, story, targets[0], backends)
    blocking += _listed_errors(world, story, targets[0], backends)
    blocking += _policy_phrase_errors(story)
    coined = policy_doc.phrase if policy_doc is not None else None
    if policy_doc is not None and coined is not None:
        warnings.append(
            f"the policy phrase '{facts.policy.phrase}' gives the {carried_key} away, and no document of the "
            f"world defines it: the pipeline says '{coined}' instead, defined by the note it plants beside a "
            f"rival rule ('{policy_doc.distractor}')"
        )
    rival = policy_doc.rival if policy_doc is not None else None
    said_by = rival_said(story, rival[1], carried_key) if rival is not None else None
    if rival is not None and said_by is not None:
        warnings.append(
            f"{said_by} says '{value_text(rival[1])}', the value of the rival rule '{rival[0]}': the Derive level "
            "asks for no second view on it (a request saying the value would state what it hides); for Derive "
            f"to ask for one, say {said_by} without it or give facts.policy.distractor another value"
        )
    blocking += _giveaway_errors(world, story, carried_param, carried_value, coined)
    blocking += _dashboard_name_errors(story, targets[0])
    if kind == "read" and carried_target == 0:
        blocking += _read_policy_errors(world, story, backends, targets[0], carried_key, carried_value)
    sets = governance.sets if governance is not None else None
    grounded = next((t.widget.param(sets) for t in targets if sets and sets in t.params), None)
    hidden_params = [p for p in (carried_param, grounded) if p is not None]
    blocking += _hidden_option_errors(story, list({str(p["paramName"]): p for p in hidden_params}.values()))
    hint_words = _words(facts.find_hint)
    if _words(targets[0].name) and _words(targets[0].name) <= hint_words:
        warnings.append(f"the find hint '{facts.find_hint}' contains the widget's name '{targets[0].name}'")
    return ResolvedStory(
        story,
        kind,
        targets,
        carried_key,
        carried_value,
        carried_target,
        seeded_wrong,
        cast(Governance, governance),  # None only with an error, and errors were raised above
        re.sub(r"[^a-z0-9]+", "_", tab_name.lower()).strip("_") or "main",
        tab_name.title() if tab_name.islower() else tab_name,
        warnings,
        policy_doc,
        blocking,
        analyze,
        find_hints,
        pointer,
        spares[0] if (spares := find_pointers(world, story, targets, backends)) else None,
        tuple(spares),
    )
