"""A persona's sources checked without authoring: every story's facts against the world, every problem at once.

Errors stop authoring (a fact the world contradicts would only produce tasks that cannot certify). Warnings do
not, but an author should read them before twenty tasks are built on top: `taskforge check` prints them and
`taskforge author` prints the same ones, both from `persona_warnings`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simulator import World

from .factcheck import FactErrors, ResolvedStory, between, listed_fits, resolve
from .sources import (
    STORIES_PER_PERSONA,
    Persona,
    SourceError,
    SourceErrors,
    Story,
    check_name,
    identical_facts,
    load_persona,
    load_story,
    story_folder,
    story_paths,
)
from .voicecheck import unsaid_phrases

if TYPE_CHECKING:
    from certify import Task

# The references a draft runs without a model: plain `check` drafts with them by default (a model reference is
# drafted only when asked, `check --draft`, as it spends calls).
DRAFTABLE = ("ladder", "heuristic")


@dataclass(frozen=True)
class SourceWarning:
    file: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.message}"


@dataclass
class PersonaCheck:
    persona: str
    errors: list[SourceError] = field(default_factory=list)
    # what `author` blocks on that the facts alone do not say: the ladder calibration's and the prose gate's
    ladder_errors: list[SourceError] = field(default_factory=list)
    warnings: list[SourceWarning] = field(default_factory=list)
    resolved: list[ResolvedStory] = field(default_factory=list)
    source: Persona | None = None
    # what the draft (the first `author` run itself, in memory: `authoring.draft.check_drafted`) would block on,
    # as errors naming the story file and facts field; `drafted` says what it ran, or why it did not
    draft_errors: list[SourceError] = field(default_factory=list)
    drafted: dict[str, object] | None = None

    @property
    def ok(self) -> bool:
        return not self.errors and not self.ladder_errors and not self.draft_errors

    @property
    def all_errors(self) -> list[SourceError]:
        """Every error, in the order `check` prints them: the facts', the ladder's, the draft's."""
        return [*self.errors, *self.ladder_errors, *self.draft_errors]

    def to_dict(self) -> dict[str, object]:
        return {
            "persona": self.persona,
            "ok": self.ok,
            "errors": [{"file": e.file, "key": e.key, "message": e.message} for e in self.all_errors],
            "draft": self.drafted,
            "warnings": [{"file": w.file, "message": w.message} for w in self.warnings],
            "stories": [
                {
                    "story": r.story.slug,
                    "kind": r.kind,
                    "carries": {r.carried_key: r.carried_value},
                    "governance": r.governance.source,
                    "targets": [t.widget_id for t in r.targets],
                }
                for r in self.resolved
            ],
        }


def folder_warnings(root: Path, persona: str) -> list[SourceWarning]:
    """A story count other than four, and files in the story folder that are not read (not markdown)."""
    folder = story_folder(root, persona)
    if folder is None:
        return []
    out = []
    count = len(story_paths(root, persona))
    if count != STORIES_PER_PERSONA:
        out.append(
            SourceWarning(
                str(folder),
                f"{count} stories; a persona has {STORIES_PER_PERSONA} (4 stories x 5 levels = its 20 tasks)",
            )
        )
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        if path.is_dir():
            out.append(SourceWarning(str(path), "a folder inside the story folder is not read"))
        elif path.suffix != ".md":
            out.append(
                SourceWarning(str(path), "not a story: only .md files are read (rename it or move it out)")
            )
    return out


def persona_warnings(root: Path, persona: str, resolved: Iterable[ResolvedStory]) -> list[SourceWarning]:
    """Everything an author should read before authoring: folder problems and each story's facts warnings
    (a policy carrying the parameter's default, a find hint naming the widget, …)."""
    return folder_warnings(root, persona) + [
        SourceWarning(r.story.file, w) for r in resolved for w in r.warnings
    ]


def first_drafts(world: World, persona: Persona, resolved: list[ResolvedStory]) -> list[Task] | None:
    """Every level of every story as the rule author's first round writes it (`rule_drafts`: its own
    compilation, before any gate; about a second for twenty requests), or None when it cannot compile them."""
    from .roles.author import AuthoringError, rule_drafts

    if not resolved:
        return None
    try:
        return rule_drafts(world, PersonaCheck(persona.slug, resolved=list(resolved), source=persona))
    except AuthoringError:
        return None


def voice_warnings(
    world: World, persona: Persona, resolved: list[ResolvedStory], drafts: list[Task] | None = None
) -> list[SourceWarning]:
    """The persona's declared phrases that the requests the rule author drafts from its stories never say
    (`voicecheck.unsaid_phrases`), naming the persona file and the voice field; `check` and `author` both show
    them. `drafts` are the rule author's first drafts (`first_drafts`), compiled here when not given."""
    v = persona.voice
    if not resolved or not (v.openers or v.deadlines or v.signoffs or v.aliases or v.period_names):
        return []
    drafts = first_drafts(world, persona, resolved) if drafts is None else drafts
    if drafts is None:
        return []
    return [
        SourceWarning(persona.file, f"{key}: {message}")
        for key, message in unsaid_phrases(v, [t.prompt for t in drafts])
    ]


def listed_place(
    world: World, target: Any, backends: list[str], among: set[str] | None = None
) -> tuple[int, list[str]]:
    """Where `target` (a ResolvedTarget) sits among the widgets of its app that take every value it is graded
    on, in the catalog's listing order (`factcheck.listed_fits`, the rule `world show APP`'s mark applies too):
    (its index, their names). `among` keeps only those widget ids (the ones a repair's board places, which such
    a reader looks at first)."""
    fixture = world.fixture_of(target.origin, backends)
    if fixture is None:
        return 0, [target.name]
    fits = [
        w
        for w in listed_fits(world, target, backends)
        if among is None or w in among or w == target.widget_id
    ]
    names = [fixture.catalog.widgets[w].name for w in fits]
    return next((i for i, w in enumerate(fits) if w == target.widget_id), 0), names


def place_fixes(world: World, story: ResolvedStory, target: Any, backends: list[str]) -> list[str]:
    """The edits of a story that would list its Find target between widgets of its app that take the values
    Find states (each computed against the world, nothing guessed): another target of the story listed so put
    first; another widget of the app taking the same values listed between fits (the story's subject would
    change: the writer decides); the values to leave out of the target's (never the one Derive carries or the
    Ground fact sets, which the levels above need); for a repair, fewer values left wrong (never those two)."""
    fixture = world.fixture_of(target.origin, backends)
    if fixture is None:
        return []
    names = fixture.catalog.widgets
    out: list[str] = []
    inner = [
        t.name
        for t in story.targets
        if t is not target and between(listed_fits(world, t, backends), t.widget_id)
    ]
    if inner:
        out.append(
            f"put {' or '.join(repr(n) for n in inner)} first in facts.targets (listed between widgets that take "
            "its values) so Find describes it"
        )
    fits = listed_fits(world, target, backends)
    others = [names[w].name for w in fits if w != target.widget_id and between(fits, w)]
    if others:
        out.append(
            f"make the first target {' or '.join(repr(n) for n in others)} (the same values, listed between "
            "widgets that take them), if it serves what the story wants"
        )
    keep = {story.carried_key, story.governance.sets}
    keys = tuple(target.params)
    for k in keys:
        if k in keep or k in story.seeded_wrong:
            continue
        rest = tuple(o for o in keys if o != k)
        narrowed = listed_fits(world, target, backends, rest)
        if between(narrowed, target.widget_id):
            out.append(
                f"leave {k} out of the first target's values (then it is listed "
                f"{narrowed.index(target.widget_id) + 1} of {len(narrowed)} widgets that take them)"
            )
    wrong = tuple(k for k in keys if k in story.seeded_wrong)
    if story.kind == "repair" and len(wrong) > 1:
        for k in (w for w in wrong if w not in keep):
            rest = tuple(o for o in wrong if o != k)
            if between(listed_fits(world, target, backends, rest), target.widget_id):
                out.append(
                    f"leave {k} right in facts.seeded_wrong (Find then says only {', '.join(rest)}, which "
                    "widgets on both sides of it take)"
                )
    return out


def _board_ids(task: Task) -> set[str]:
    """The catalog ids of the widgets a task's seeded dashboard places (none for a level that builds on an
    empty board)."""
    dash = task.setup.initial_state.dashboard
    return {w.widget_id for w in dash.widgets} if dash is not None else set()


def place_warnings(
    world: World, resolved: list[ResolvedStory], drafts: list[Task] | None, backends: list[str]
) -> list[SourceWarning]:
    """A Find level whose target a reader of the catalog's order finds: the first or the last listed widget of
    those that take the stated values (the `catalog_first` / `catalog_last` probes pass the first draft). A repair's
    board places a fitting widget on each side of the target where its backend lists one (`seeding._open_sides`);
    an add looks in the catalog, whose order is the world's. The counterfactual gate still certifies the level
    (the copy gives the target's content to a widget at another place, so the reader fails one copy), but a
    player reading places passes the shipped task: the warning names the place and the fix — another target of
    the story described first, one listed between widgets that take its values."""
    from certify import grade, run_shortcut

    out: list[SourceWarning] = []
    for task, story, hidden in _find_drafts(resolved, drafts):
        ends = [
            p for p in ("catalog_first", "catalog_last") if grade(task, run_shortcut(p, world, task)).passed
        ]
        if not ends:
            continue
        target = next((t for t in story.targets if t.name == hidden), story.targets[0])
        at, names = listed_place(world, target, backends)
        where = "in the catalog's order"
        placed = _board_ids(task)
        if placed and not any(at == (0 if e == "catalog_first" else len(names) - 1) for e in ends):
            # a repair's board is read before the catalog: the end the reader found is among the widgets the
            # board places, not the catalog's (saying the catalog's list there names a middle place "first")
            at, names = listed_place(world, target, backends, placed)
            where = "on its Find board, in the catalog's order; which look-alikes a board places is drawn per task"
        fix = "; or ".join(place_fixes(world, story, target, backends)) or (
            "pick a first target listed between widgets of its app that take its values"
        )
        out.append(
            SourceWarning(
                story.story.file,
                f"facts.targets[0]: Find's '{target.name}' is the {' and the '.join(e.split('_')[1] for e in ends)} "
                f"listed of the widgets that take its values ({', '.join(names)}, {where}): a "
                f"reader of places passes the level without reading what it serves (position {at + 1} of "
                f"{len(names)}; the counterfactual gate still certifies it) — {fix}",
            )
        )
    return out


def _find_drafts(
    resolved: list[ResolvedStory], drafts: list[Task] | None
) -> Iterable[tuple[Task, ResolvedStory, str | None]]:
    """The first drafts' Find levels with their story and hidden target (None where the task names none): the
    Find warnings each read a level against the story that wrote it."""
    by_story = {r.story.slug: r for r in resolved}
    for task in drafts or []:
        story = by_story.get((task.meta.story if task.meta else None) or "")
        if story is None or task.level != 1:
            continue
        hidden = next((h.value for h in (task.meta.hidden if task.meta else []) if h.kind == "target"), None)
        yield task, story, hidden


# A Find level whose target a plain top word-overlap chooser over the whole prompt wins at least this share of
# (1 alone at the top, 1/k tied with k-1 others: `certify.lexical_top_share`) is warned about.
TOP_SHARE_WARNING = 0.5


def overlap_warnings(
    world: World, resolved: list[ResolvedStory], drafts: list[Task] | None
) -> list[SourceWarning]:
    """A Find level whose first draft hands a plain chooser its target by words: what the agent reads — the
    WHOLE prompt (the description, the analysis ask, the why, the board's and the note's names, the stated
    values' labels), the board's tabs and its notes but a pointer — makes the target the top word-overlap match
    among the entries an outside player ranks (`certify.lexical_top_share`), alone or the first listed of the
    tied (`certify.lexical_listed_first`: a stable sort takes it), or says a part of the target's name only it
    has (`certify.lexical_naming`); or the skill its analysis ask cites names the target in the step that sets
    the threshold, or names it first of the candidates (`skill_naming`). The rule author already prefers the
    wordings it wins least; what is left is said with the story fields that lend the words, for the writer to
    reword."""
    from certify import lexical_find_pool as find_pool
    from certify import lexical_listed_first, lexical_naming, lexical_top_share
    from certify import lexical_overlap_words as words

    out: list[SourceWarning] = []
    for task, story, hidden in _find_drafts(resolved, drafts):
        found = find_pool(world, task, hidden) if hidden else None
        if found is None or hidden is None:
            continue
        entries, mine = found
        seen = _find_seen(task, hidden)
        facts = story.story.facts
        fields = {
            "facts.dashboard": facts.dashboard,
            "facts.why": facts.why or "",
            "facts.deadline": facts.deadline or "",
            "facts.note": facts.note or "",
            "facts.tab": facts.tab or "",
            "facts.analyze.threshold.name": story.analyze.name if story.analyze else "",
        }
        # a field said inside another (the tab "Tilt" in the board "Keel Tilt Desk") lends nothing of its own
        texts = [t for t in fields.values() if t]

        def lends(
            part: set[str], fields: dict[str, str] = fields, texts: list[str] = texts, seen: str = seen
        ) -> dict[str, list[str]]:
            return {
                key: sorted(words(text) & part)
                for key, text in fields.items()
                if text and text in seen and not any(text != o and text in o for o in texts)
            }

        named = lexical_naming(seen, entries, mine)
        if named:
            lent = {k: ws for k, ws in lends(set(named) | words(" ".join(named))).items() if ws}
            out.append(
                SourceWarning(
                    story.story.file,
                    f"level 1: what the Find agent reads names its target '{hidden}' by "
                    f"{', '.join(repr(w) for w in named)} (a part of its name no other candidate's has): "
                    + (
                        "; ".join(f"{k} says {', '.join(repr(w) for w in ws)}" for k, ws in lent.items())
                        or "the request says it"
                    )
                    + " — reword so the target is told by what it serves, not by its name",
                )
            )
        out += skill_naming(world, story, hidden, entries, mine)
        share = lexical_top_share(seen, entries, mine)
        first = lexical_listed_first(seen, entries, mine)
        if share < TOP_SHARE_WARNING and not first:
            continue
        entry = words(f"{entries[mine]['name']} {entries[mine]['description']}")
        lent = lends(entry)
        said = "; ".join(f"{k} says {', '.join(repr(w) for w in ws)}" for k, ws in lent.items() if ws)
        rest = sorted((words(seen) & entry) - {w for ws in lent.values() for w in ws})
        how = "alone" if share == 1 else f"a {round(1 / share)}-way tie" + (", listed first" if first else "")
        out.append(
            SourceWarning(
                story.story.file,
                f"level 1: the whole Find prompt makes '{hidden}' the top word-overlap match "
                f"({how}) among the widgets an outside "
                f"player ranks: {said or 'no story field lends the words'}"
                + (f"; the rest of the request says {', '.join(repr(w) for w in rest)}" if rest else "")
                + " — reword the fields that lend the target's catalog words",
            )
        )
    return out


def _find_seen(task: Task, name: str) -> str:
    """What a Find agent reads besides the widgets' own entries (`rules.find_seen`, on a parsed task)."""
    from .roles.author.rules import find_seen

    return find_seen(task.model_dump(mode="json", exclude_none=True), name)


def skill_naming(
    world: World, story: ResolvedStory, hidden: str, entries: list[dict[str, Any]], mine: int
) -> list[SourceWarning]:
    """The skill a Find level's analysis ask cites, where it hands a reader the target: the agent reads it for
    the threshold, and the step that sets the threshold (the one saying its figure) names the target
    (`certify.lexical_naming`: its name, or a part only its name has — "List the orders in Shortfall by Order
    whose cost falls outside a 12 bps …"), or the skill names the target first of the candidates
    (`certify.lexical_first_named`). The Find fact is which widget; the skill is a source the request sends the
    agent to, so it must say what the figure is, not where it sits."""
    from certify import lexical_first_named, lexical_naming

    a = story.analyze
    skill = world.skills.get(a.skill) if a is not None else None
    if a is None or skill is None:
        return []
    text = f"{skill.name}\n{skill.description or ''}\n{skill.content or ''}"
    step = next((line for line in text.splitlines() if a.said.casefold() in line.casefold()), "")
    named = lexical_naming(step, entries, mine)
    first = lexical_first_named(text, entries)
    if not named and first != mine:
        return []
    why = (
        f"its step that sets the {a.name} names the target by {', '.join(repr(w) for w in named)} ({step.strip()!r})"
        if named
        else f"it names '{hidden}' first of the widgets an outside player ranks"
    )
    return [
        SourceWarning(
            story.story.file,
            f"facts.analyze.skill: level 1 asks the analysis in line with skill '{a.skill}', and {why}: a "
            "reader of the skill takes Find's target from it without the level's source — reword the skill's "
            "step (the world's skills) to say what the figure is, not which widget holds it, or cite another "
            "skill",
        )
    ]


def check_persona(
    root: Path, persona: str, world: World, backends: list[str] | None = None, ladder: bool = True
) -> PersonaCheck:
    """Every error of every story (one per mistake: a later fact is not blamed for an earlier one) and the
    warnings, without authoring anything. With `ladder` (author's default reference), the facts the ladder
    calibration would block on are errors too."""
    backends = list(world.default_backends) if backends is None else backends
    report = PersonaCheck(persona)
    try:
        check_name(persona, str(root), "persona")
    except SourceError as exc:
        report.errors.append(exc)
        return report
    try:
        report.source = load_persona(root, persona)
    except SourceErrors as exc:
        report.errors += exc.errors
    except SourceError as exc:
        report.errors.append(exc)
    paths = story_paths(root, persona)
    if not paths and report.source is not None:
        folder = story_folder(root, persona) or root / "stories" / persona
        report.errors.append(SourceError(str(folder), "(folder)", f"no stories for persona '{persona}'"))
    stories: list[Story] = []
    for path in paths:
        try:
            stories.append(load_story(path, persona))
        except SourceErrors as exc:
            report.errors += exc.errors
        except SourceError as exc:
            report.errors.append(exc)
    report.errors += identical_facts(stories)
    for story in stories:
        try:
            resolved = resolve(world, story, backends)
        except FactErrors as exc:
            report.errors += exc.errors
            if ladder:
                report.ladder_errors += exc.blocking
        else:
            report.resolved.append(resolved)
            if ladder:
                report.ladder_errors += resolved.ladder_errors
    if ladder and report.source is not None:
        report.ladder_errors += _note_word_errors(report)
        report.ladder_errors += _find_prompt_errors(world, report, backends)
    report.warnings = persona_warnings(root, persona, report.resolved)
    if report.source is not None and not report.errors:
        drafts = first_drafts(world, report.source, report.resolved)
        report.warnings += voice_warnings(world, report.source, report.resolved, drafts)
        report.warnings += place_warnings(world, report.resolved, drafts, backends or [])
        report.warnings += overlap_warnings(world, report.resolved, drafts)
        # a gate of `author` blocks on them, so, like the ladder's, they do not stop a draft
        report.ladder_errors += prose_errors(world, report.resolved, drafts or [])
    return report


def prose_errors(world: World, resolved: list[ResolvedStory], drafts: list[Task]) -> list[SourceError]:
    """What `author`'s prose gate would refuse, read off the rule author's first drafts. The rule author is a
    pure function of the facts (a later round writes the same request: it takes no feedback), so a fault in a
    first draft fails the level on every round and blocks the run; it comes from a story's own words — a name
    that repeats the noun the request puts after it, a phrase that reads as a fragment — so the error names the
    story file and the facts field whose words the faulty passage holds."""
    from certify import prompt_faults

    by_story = {r.story.slug: r for r in resolved}
    errors: list[SourceError] = []
    said: set[tuple[str, str]] = set()
    for task in drafts:
        story = by_story.get((task.meta.story if task.meta else None) or "")
        if story is None:
            continue
        for fault in prompt_faults(world, task):
            key = _field_in(story, fault.where)
            if (story.story.file, key) in said:
                continue
            said.add((story.story.file, key))
            errors.append(
                SourceError(
                    story.story.file,
                    key,
                    f"{task.difficulty}'s request, as the rule author words it, fails the prose gate on "
                    f"every round ({fault}): reword {key} so the request does not read that way",
                )
            )
    return errors


def _field_in(resolved: ResolvedStory, excerpt: str) -> str:
    """The facts field whose words the excerpt of a faulty passage holds most of ("facts" when none does)."""
    words = set(re.findall(r"[\w'-]+", excerpt.casefold()))

    def leaves(value: Any, key: str) -> Iterable[tuple[str, str]]:
        if isinstance(value, dict):
            for k, v in value.items():
                yield from leaves(v, f"{key}.{k}")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                yield from leaves(v, f"{key}[{i}]")
        elif isinstance(value, str):
            yield key, value

    best, score = "facts", 0
    for key, value in leaves(resolved.story.facts.model_dump(exclude_none=True), "facts"):
        shared = len(words & set(re.findall(r"[\w'-]+", value.casefold())))
        if shared > score:
            best, score = key, shared
    return best


def _find_prompt_errors(world: World, report: PersonaCheck, backends: list[str]) -> list[SourceError]:
    """What the shortcuts gate of `author` would block a Find level on, read off the request the rule author's
    first round writes for it (the hint alone is not what the battery reads: `factcheck.find_prompt_errors`)."""
    from .factcheck import find_prompt_errors, source_format
    from .roles.author import first_task

    errors: list[SourceError] = []
    said = {(e.file, e.key) for e in [*report.errors, *report.ladder_errors]}
    for resolved in report.resolved:
        task, found = first_task(world, report, resolved, 1, backends)
        hidden = [
            h.get("value") for h in (task.get("meta") or {}).get("hidden") or [] if h.get("kind") == "target"
        ]
        if found is not None and (
            (hidden and hidden[0] != resolved.targets[0].name) or source_format(resolved.story)
        ):
            # the rule author describes another target of the story at Find (`rules._described_otherwise`), or
            # words a source-format story's Find itself, and its kept wording gets past the shortcut battery the
            # gate runs and the Find rung: what was predicted against the template's hint or first target does
            # not block (a writer's own hint stays theirs to fix: it is what their Find says)
            report.ladder_errors[:] = [
                e
                for e in report.ladder_errors
                if e.file != resolved.story.file or e.key not in ("facts.targets[0]", "facts.find_hint")
            ]
            continue
        prompt = str(task["prompt"])
        # every error at once, but one per field: a hint already refused is not refused twice
        errors += [
            e for e in find_prompt_errors(world, resolved, prompt, backends) if (e.file, e.key) not in said
        ]
    return errors


def _note_word_errors(report: PersonaCheck) -> list[SourceError]:
    """Every role that reads a request (the ladder, the heuristic, the oracle's reading, the shortcuts) takes it
    to ask for a note only when it says the word "note" (`certify.agents.reading.note_name`). A read story's
    request names its note and calls it by one of the persona's note words ("in Reclaim Chase Memo, a memo on
    the board"): when neither says "note", no agent writes the note, and every level of the story fails the
    ladder — `author` blocks on all five."""
    import re

    if report.source is None:
        return []
    said = report.source.voice.note_words or ["note"]
    bare = [w for w in said if not re.search(r"\bnote\b", w, re.I)]
    errors: list[SourceError] = []
    for resolved in report.resolved:
        if resolved.kind != "read":
            continue
        facts = resolved.facts
        name = facts.note or f"{facts.dashboard} Note"
        if re.search(r"\bnote\b", name, re.I) or not bare:
            continue
        renamed = re.sub(r"\s+(?:Memo|Record|Log)$", "", name) + " Note"
        errors.append(
            SourceError(
                resolved.story.file,
                "facts.note",
                f"'{name}' does not say 'note', and neither does the persona's note word "
                f"{', '.join(repr(w) for w in bare)} (voice.note_words) the request may call it by: the agents "
                "take a request to ask for a note only when it says 'note', so none would write it; name it "
                f"'{renamed}', or give every note word "
                "the word note ('risk note')",
            )
        )
    return errors
