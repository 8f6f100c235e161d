"""The rule author: a story's facts compiled into a level, deterministically (the embedded default, no network).

A level is written in four steps, each its own module: the board it starts from (seeding), the reference planned
against the simulator (plan, which also writes the eval block), the request (wording), and — at Find — the choice
of the contrast and draw that leave no shortcut agent passing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, TypeVar

from certify import (
    LEVEL_NAMES,
    LEVELS,
    HiddenValue,
    Task,
    TaskMeta,
    lexical_exposure,
    lexical_listed_first,
    lexical_naming,
    lexical_served_words,
    lexical_top_share,
    load_lexicon,
    parse_task,
    resolve_agent,
    run_battery,
    run_trial,
)
from simulator import TOOL_NAMES

from ...factcheck import execute_stories, find_pointers, source_format
from ...memo import Memo, content_key
from ..fairness import says_hidden
from .context import (
    AuthorContext,
    AuthoringError,
    Draft,
    find_order,
    own_deadlines,
    persona_finds,
    persona_root,
    story_setup,
)
from .evalblock import record
from .level import Level
from .plan import plan
from .seeding import seed_board
from .wording import Wording

T = TypeVar("T")
FIND_DRAWS = 6
FIND_HINTS = 9
FIND_RUNG = "ladder-1"
EXECUTE_RUNG = "ladder-0"
NOTE_DRAWS = 4


class RuleAuthor:
    """Deterministic compilation of facts into levels (the embedded default)."""

    name = "rules"

    def draft(
        self, ctx: AuthorContext, level: int, feedback: list[str], history: list[dict[str, Any]]
    ) -> Draft:
        history.append({"level": level, "feedback": list(feedback)})
        return Draft(compile_level(ctx, level))


# Compiled levels by content: the rule author is a pure function of its context (the world, the persona, the
# resolved story, the baseline, backends, skills, siblings, defaults and deadlines) and the level, and of the
# lexicon the wording reads beside the world — which the world's fingerprint does not cover, so it is keyed too.
_COMPILED: Memo[tuple[dict[str, Any], int | None]] = Memo(512)


def compile_level(ctx: AuthorContext, number: int) -> dict[str, Any]:
    """The task file of level `number` of the context's story. At Derive, of the orders a seeded policy note's
    rules can take (its drawn order, then rotations), the first that leaves no shortcut agent passing is kept:
    an agent that reads the note but not which rule the request names (the source skimmer) is right when the
    asked-for rules happen to come first, and the gates would refuse that draw."""
    if number != 2:
        return _compiled(ctx, number)[0]
    task: dict[str, Any] = {}
    for note_draw in range(NOTE_DRAWS):
        task = _compiled(ctx, number, note_draw=note_draw)[0]
        parsed = parse_task(task, f"{task['id']}.json", ctx.defaults)
        if not any(r.passed for r in run_battery(ctx.world, parsed)):
            break
    return task


def _compiled(
    ctx: AuthorContext, number: int, others: bool = True, note_draw: int = 0
) -> tuple[dict[str, Any], int | None]:
    """The task file of level `number` and, at Find, how many similarity measures find its target in the kept
    wording (None: no wording left the shortcut agents failing and the Find rung passing; 0 elsewhere).
    `others`: whether another target of the story may be described instead (not again inside such a try);
    `note_draw`: the order of a seeded policy note's rules (`Level`). Compiled once per content per process:
    `check` drafts each Find level to read its request, `check --draft` then drafts every level again in the
    authoring run, and each round the gates send a level back drafts it once more with the same facts (the rule
    author's answer does not depend on the feedback) — at Find, each draft runs the shortcut battery and the Find
    rung over every wording per pointer tried, most of a draft's CPU."""
    key = content_key(ctx, number, others, note_draw, load_lexicon(ctx.world.path), world=ctx.world)
    return _COMPILED.get(key, lambda: _compile(ctx, number, others, note_draw))


def _compile(
    ctx: AuthorContext, number: int, others: bool, note_draw: int
) -> tuple[dict[str, Any], int | None]:
    if number == 0:
        # Execute works on what `factcheck.execute_stories` chooses for it — a stand-in of the target Find hides,
        # else another instance of the target's widget where Find stands it between twins — the first that
        # compiles and that Execute's rung solves: naming the target there would state what Find hides. Without
        # one it works on the target itself, and the fairness review reports it.
        for story in _others_first(
            ctx, execute_stories(ctx.story, ctx.world, ctx.backends, _find_hidden(ctx))
        ):
            try:
                compiled = _compile_level(replace(ctx, story=story), 0, others, note_draw)
            except AuthoringError:
                continue
            if _rung_passes(
                ctx, parse_task(compiled[0], f"{compiled[0]['id']}.json", ctx.defaults), EXECUTE_RUNG
            ):
                return compiled
    if number >= 2:
        # Derive, Ground and Compose name the widget they work on too, so they work on a stand-in (or another
        # instance) of the target Find hides as Execute does, drawn for their own task id: a player that read the
        # published taskset's higher levels would read Find's answer there otherwise
        moved, why = _off_target(ctx, number, others, note_draw)
        if moved is not None:
            return moved
        compiled = _compile_level(ctx, number, others, note_draw)
        if why:
            compiled[0]["meta"]["on_target"] = why
        return compiled
    return _compile_level(ctx, number, others, note_draw)


def _off_target(
    ctx: AuthorContext, number: int, others: bool, note_draw: int
) -> tuple[tuple[dict[str, Any], int | None] | None, str]:
    """Level `number` (Derive, Ground or Compose) worked on what `factcheck.execute_stories` chooses for it, the
    first that compiles, hides what the level on the target hides (Derive's carried values, Ground's fact: the
    graded values stay constant, the widget differs; of those passing, the first no longer than the level on the
    target, else the first), does not say what Find hides (`fairness.says_hidden`: its
    name, or for an instance what it shows), is solved by its rung and not by the rung below, and leaves no
    shortcut agent passing (the gates would refuse it otherwise). (None, "") where the level on the target says
    nothing Find hides; (None, why) where no choice does: the level then works on the target itself and says
    why (`meta.on_target`, which the fairness review reports)."""
    found = _find_target(ctx)
    if found is None:
        return None, ""
    try:
        own = _compile_level(ctx, number, others, note_draw)[0]
    except AuthoringError:
        return None, ""
    if not says_hidden(parse_task(own, f"{own['id']}.json", ctx.defaults), found):
        return None, ""  # nothing to stand in for
    tried = 0
    longer: tuple[dict[str, Any], int | None] | None = None
    for story in _others_first(ctx, execute_stories(ctx.story, ctx.world, ctx.backends, found.value, number)):
        tried += 1
        try:
            compiled = _compile_level(replace(ctx, story=story), number, others, note_draw)
        except AuthoringError:
            continue
        task = compiled[0]
        if task["meta"].get("hidden") != own["meta"].get("hidden"):
            continue
        if _spells_more(task["prompt"], own):
            continue  # a stand-in whose name spells a value the level hides (Commentary Drafts, Draft)
        parsed = parse_task(task, f"{task['id']}.json", ctx.defaults)
        if (
            not says_hidden(parsed, found)
            and _rung_passes(ctx, parsed, f"ladder-{number}")
            and not _rung_passes(ctx, parsed, f"ladder-{number - 1}")
            and not any(r.passed for r in run_battery(ctx.world, parsed))
        ):
            worked = story.targets[story.stand_in_at]
            if longer is None and worked.app != ctx.story.targets[story.stand_in_at].app:
                return compiled, ""  # the first that passes is of another app: none of the target's app does
            if (
                len(task["prompt"]) <= len(own["prompt"])
                and worked.app == ctx.story.targets[story.stand_in_at].app
            ):
                return compiled, ""
            # a longer request than the level's on the target (a longer name) is kept only when no later
            # choice is as short: the requests stay as long as the source's at each level
            longer = longer or compiled
    if longer is not None:
        return longer, ""
    return None, (
        f"no other widget takes the values this level hides on '{found.value}' (and serves what it records or "
        "analyses)"
        if not tried
        else f"none of the {tried} widget(s) that could stand in for '{found.value}' keeps what this level hides "
        "with its rung solving it, the rung below failing and no shortcut agent passing"
    )


def _others_first(ctx: AuthorContext, stories: list[Any]) -> list[Any]:
    """`stories` (what a level may work on, best first) with those working on a widget another story of the
    persona hides at Find tried last: the published set shows every request, and a level naming that widget
    would hand its Find's answer to a reader of the set (the same order otherwise)."""
    own = ctx.story.targets[0].name if ctx.story.targets else ""
    hidden = set(ctx.finds) - {own}

    def elsewhere(story: Any) -> bool:
        return story.standing_in is not None and story.targets[story.stand_in_at].name in hidden

    return sorted(stories, key=elsewhere)


def _spells_more(prompt: str, own: dict[str, Any]) -> bool:
    """Whether `prompt` contains, in any case and inside any word, a value the level `own` (the level on the
    target) hides that its own prompt does not: a stand-in's name that spells it ("Commentary Drafts" where
    Derive hides Draft) hands a word or stem matcher the value."""
    said = own["prompt"].casefold()
    values = [
        str(h["value"]).casefold() for h in own["meta"].get("hidden") or [] if h.get("kind") != "target"
    ]
    return any(v and v in prompt.casefold() and v not in said for v in values)


def _find_target(ctx: AuthorContext) -> HiddenValue | None:
    """The target the story's Find level hides, as its meta.hidden declares it (None when that level does not
    compile or hides no target)."""
    try:
        task = _compiled(ctx, 1)[0]
    except AuthoringError:
        return None
    hidden = [h for h in task["meta"].get("hidden") or [] if h.get("kind") == "target"]
    return HiddenValue.model_validate(hidden[0]) if hidden else None


def _find_hidden(ctx: AuthorContext) -> str | None:
    """The name of the target the story's Find level hides (None when that level does not compile)."""
    try:
        task = _compiled(ctx, 1)[0]
    except AuthoringError:
        return None
    hidden = [h for h in task["meta"].get("hidden") or [] if h.get("kind") == "target"]
    return str(hidden[0]["value"]) if hidden else None


def _stands_in(ctx: AuthorContext) -> dict[str, Any]:
    """meta.stands_in of an Execute worked on a stand-in (the fairness review reads the graded core through it)."""
    was = ctx.story.standing_in
    if was is None:
        return {}
    now = ctx.story.targets[ctx.story.stand_in_at]
    return {
        "stands_in": {
            "origin": now.origin,
            "widget_id": now.widget_id,
            "name": now.name,
            "for_widget_id": was.widget_id,
            "for_name": was.name,
        }
    }


def _compile_level(
    ctx: AuthorContext, number: int, others: bool, note_draw: int
) -> tuple[dict[str, Any], int | None]:
    level = Level(ctx, number, note_draw)
    board = seed_board(level)
    tab_id = ctx.story.tab_id
    setup = story_setup(
        ctx,
        [w.wire(tab_id) for w in board.widgets],
        [n.wire(tab_id) for n in board.notes],
        allowed_tools=TOOL_NAMES,
    )
    planned = plan(level, board, setup)
    difficulty = LEVELS[number]
    task: dict[str, Any] = {
        "id": f"{level.slug}_level{number}",
        "difficulty": difficulty,
        "prompt": "",
        "setup": setup,
        "eval": planned.eval,
        "meta": record(
            TaskMeta,
            "meta",
            persona=ctx.persona.slug,
            story=level.slug,
            level=number,
            level_name=LEVEL_NAMES[difficulty],
            hidden=level.hidden(),
            authored_by="rules",
            **_stands_in(ctx),
        ),
    }
    # At Find, of a few wordings (the words around the description move a word matcher; a source-format story
    # whose hint is the catalog's words has several descriptions by content to say), the one fewest word and
    # character similarity measures find (`certify.lexical_exposure`: a player nobody here wrote picks the
    # target from names and descriptions by one of them) among those that leave no shortcut agent passing and
    # the Find rung passing is kept (the gates would refuse the others). No exclusion is said: one quoting a
    # sibling's catalog description hands a description matcher the words to drop.
    pointer = ctx.story.find_pointer
    hints = (
        pointer.references() if pointer is not None else (ctx.story.find_hints or [ctx.story.find_hint])
    )[:FIND_HINTS]
    if number != 1:
        task["prompt"] = Wording(level, board, planned, None).phrase(task, "", 0)
        return task, 0
    # The whole prompt is what a word matcher reads, the analysis ask included. At Find the analysis is asked
    # without naming the row label and the figure (`analysis.PLAIN_CLAUSES`: the target's served columns are
    # often its catalog entry's words, "each ticker's stale days" beside Stale Price Monitor), the named ask
    # only where no plain wording passes; and a wording whose whole prompt makes the target the clear top match
    # of a plain word-overlap chooser (`certify.lexical_top_share` 1: alone at the top) only where no other does.
    # Below that, the fewest similarity measures finding the target decide, then the chooser's share (a tie of
    # k counted 1/k).
    plains = (True, False) if ctx.story.analyze is not None else (False,)
    worded = []
    combos = ((h, d, p) for p in plains for h in hints for d in range(FIND_DRAWS))
    for order, (hint, draw, plain) in enumerate(combos):
        task["prompt"] = Wording(level, board, planned, hint, plain).phrase(task, "", draw)
        share = find_top_share(level, task)
        # the target alone at the top, first listed of the tied (what a stable sort or a first `max` takes),
        # or named by a part of its name only it has: a plain chooser wins the wording whatever the ties
        lead = share >= 1 or find_listed_first(level, task) or bool(find_named(level, task))
        worded.append((find_exposure(level, task), order, task["prompt"], (lead, not plain, share)))
    kept: tuple[int, dict[str, Any]] | None = None
    for exposed, _, prompt, _ in sorted(worded, key=lambda w: (*w[3][:2], len(w[0]), w[3][2], w[1])):
        task["prompt"] = prompt
        parsed = parse_task(task, f"{task['id']}.json", ctx.defaults)
        # a shorter contrast must still let the Find rung tell the target apart (the ladder gate would refuse
        # a draw it fails), and leave no shortcut agent passing
        if _unshortcut_and_found(ctx, parsed):
            kept = (len(exposed), dict(task))
            break
    # no wording of the description leaves the word matchers failing and the Find rung passing, or every one
    # leaves some similarity measure finding the target: the target is found by a pointer planted on the board
    # instead (the story's own description is not said), when a wording of it passes and is found by fewer; the
    # further pointers are tried in turn (`factcheck.find_pointers`)
    fallback = None
    # (the further pointers, and another target described, only where the pipeline words the story's Find
    # itself: a story in the source's format; a writer's own hint that fails is `check`'s to name)
    pipeline_worded = source_format(ctx.story.story)
    spares = ctx.story.spare_pointers if pipeline_worded else ctx.story.spare_pointers[:1]
    if kept is None or kept[0] > 0:
        for spare in spares or ((ctx.story.spare_pointer,) if ctx.story.spare_pointer else ()):
            if spare == pointer:
                continue
            story = replace(
                ctx.story, find_pointer=spare, find_hints=[], spare_pointers=(), spare_pointer=None
            )
            pointed, found = _compiled(replace(ctx, story=story), number, others=False)
            if found is not None and (kept is None or found < kept[0]):
                return pointed, found
            fallback = fallback or (pointed if pointer is None else None)
    if kept is None and others:
        for other in _described_otherwise(ctx):
            # nothing said of the first target gets past the word matchers (the request's own words name it):
            # Find describes another target of the story instead, by a pointer, and names the first
            tried, found = _compiled(replace(ctx, story=other), number, others=False)
            if found is not None:
                return tried, found
    if kept is None:
        if pipeline_worded and fallback is not None:
            # the pipeline worded this Find itself: the gates see its first pointer's level
            return fallback, None
        # nothing passes, the pointer neither: the story's own description is said (its least exposed wording),
        # so that what blocks is what the story wrote, and `review fix` proposes the edit to its facts
        task["prompt"] = min(worded, key=lambda w: (*w[3][:2], len(w[0]), w[3][2], w[1]))[2]
        return task, None
    return kept[1], kept[0]


def _described_otherwise(ctx: AuthorContext) -> list[Any]:
    """The story with each other target first, found by a planted pointer (`factcheck.find_pointers`), for a
    Find level whose first target no wording finds past the word matchers: an add of several targets with no
    record (nothing else hangs on which goes first), each other catalog widget once."""

    s = ctx.story
    if not source_format(s.story) or s.kind != "add" or s.seeded_wrong or s.story.facts.record:
        return []
    out = []
    firsts = {(s.targets[0].origin, s.targets[0].widget_id)}
    for i, t in enumerate(s.targets[1:], start=1):
        if (t.origin, t.widget_id) in firsts:
            continue
        firsts.add((t.origin, t.widget_id))
        targets = [t, *(o for j, o in enumerate(s.targets) if j != i)]
        pointers = find_pointers(ctx.world, s.story, targets, ctx.backends)
        if not pointers:
            continue
        carried = next((j for j, o in enumerate(targets) if s.carried_key in o.params), s.carried_target)
        out.append(
            replace(
                s,
                targets=targets,
                carried_target=carried,
                find_pointer=pointers[0],
                find_hints=[],
                spare_pointer=None,
                spare_pointers=tuple(pointers[1:]),
            )
        )
    return out


def find_exposure(level: Level, task: dict[str, Any]) -> list[str]:
    """The similarity measures under which a Find task's target is a top pick for its prompt
    (`certify.lexical_exposure`): among the catalog entries of its app (where an add or a read looks), and among
    the widgets placed on its board (where a repair looks), each named by its pool."""
    return [
        f"{name} {m}" for name, found in _find_pools(level, task, lexical_exposure, seen=False) for m in found
    ]


def _find_pools(
    level: Level,
    task: dict[str, Any],
    measure: Callable[[str, list[dict[str, Any]], int], T],
    seen: bool = True,
) -> list[tuple[str, T]]:
    """`measure(prompt, entries, target)` over each pool a Find task's target is looked for in: the catalog
    entries of its app (where an add or a read looks) and the widgets placed on its board (where a repair
    looks), each named; `seen`: over everything the agent reads (`find_seen`), else over the prompt only."""
    t0 = level.first
    fixture = level.fixture(t0.origin)
    if fixture is None:
        return []
    widgets = fixture.catalog.widgets
    app = t0.widget.definition.get("category") or t0.origin
    pools = {"app": [w for w, d in widgets.items() if (d.definition.get("category") or t0.origin) == app]}
    seeded = ((task["setup"].get("initial_state") or {}).get("dashboard") or {}).get("widgets") or []
    placed = [
        w["widget_id"] for w in seeded if w.get("origin") == t0.origin and w.get("widget_id") in widgets
    ]
    if t0.widget_id in placed:
        pools["board"] = list(dict.fromkeys(placed))
    out = []
    for name, pool in pools.items():
        entries = [
            {
                "name": widgets[w].name,
                "description": widgets[w].definition.get("description") or "",
                "columns": lexical_served_words(widgets[w].definition),
            }
            for w in pool
        ]
        out.append(
            (
                name,
                measure(
                    find_seen(task, t0.name) if seen else task["prompt"], entries, pool.index(t0.widget_id)
                ),
            )
        )
    return out


def find_seen(task: dict[str, Any], name: str) -> str:
    """The words a Find agent reads besides what the tools serve of widgets: the prompt, the board's name and
    its tabs' titles, and the notes placed on it (their names and text) — all but a pointer note, whose entry
    names the target by design (the level hides it there)."""
    board = (task["setup"].get("initial_state") or {}).get("dashboard") or {}
    notes = [
        f"{n.get('name') or ''} {n.get('data') or ''}"
        for n in board.get("generated_widgets") or []
        if name.casefold() not in str(n.get("data") or "").casefold()
    ]
    tabs = [str(t.get("name") or "") for t in board.get("tabs") or []]
    return " ".join([task["prompt"], str(board.get("name") or ""), *tabs, *notes]).strip()


def find_listed_first(level: Level, task: dict[str, Any]) -> bool:
    """Whether a plain top word-overlap chooser breaking ties by listing order takes the target
    (`certify.lexical_listed_first`) in one of its pools."""
    return any(first for _, first in _find_pools(level, task, lexical_listed_first))


def find_named(level: Level, task: dict[str, Any]) -> list[str]:
    """The parts of the target's name what a Find agent reads says (`certify.lexical_naming`), over its
    pools."""
    return sorted({w for _, said in _find_pools(level, task, lexical_naming) for w in said})


def find_top_share(level: Level, task: dict[str, Any]) -> float:
    """The share of a plain top word-overlap chooser over a Find task's whole prompt (`certify.
    lexical_top_share`): the most of its pools (the app's catalog entries, the board's placed widgets) the target
    is looked for in."""
    return max((share for _, share in _find_pools(level, task, lexical_top_share)), default=0.0)


# The Find wordings' verdicts by content: the shortcut battery and the Find rung read the parsed task, the world
# and the lexicon beside it, nothing else. `check` tries the wordings under the standard defaults and the run
# under its taskset's; where those parse a draft alike (the draft states what the taskset adds), the run's
# search is answered from check's.
_VERDICTS: Memo[bool] = Memo(4096)


def _unshortcut_and_found(ctx: AuthorContext, task: Task) -> bool:
    """Whether no shortcut agent passes `task` and the ladder's Find rung does."""
    key = content_key(task, load_lexicon(ctx.world.path), world=ctx.world)
    return _VERDICTS.get(
        key,
        lambda: not any(r.passed for r in run_battery(ctx.world, task)) and _find_rung_passes(ctx, task),
    )


def _find_rung_passes(ctx: AuthorContext, task: Task) -> bool:
    """Whether the ladder's Find rung (ladder-1, deterministic, no network) solves `task`."""
    return _rung_passes(ctx, task, FIND_RUNG)


def _rung_passes(ctx: AuthorContext, task: Task, rung: str) -> bool:
    """Whether the ladder's `rung` (deterministic, no network) solves `task`. Its episode is a coroutine: run on
    a thread of its own when this one already runs an event loop."""
    coroutine = run_trial(ctx.world, task, resolve_agent(rung))
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return bool(asyncio.run(coroutine).passed)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return bool(pool.submit(asyncio.run, coroutine).result().passed)


def draft_context(
    world: Any,
    source: Any,
    resolved: Any,
    siblings: tuple[str, ...],
    backends: list[str],
    deadlines: tuple[str, ...] = (),
    finds: tuple[str, ...] = (),
) -> AuthorContext:
    """The rule author's context for one resolved story as a first run sets it up before any gate: the standard
    defaults and the world's first `*workspace-a` baseline ('' — a bare workspace — when it has none, as a run's
    default is: `authoring.taskset.default_baseline`); `deadlines` the persona's stories that name their own
    (`own_deadlines`), so the persona's deadlines rotate around them as a run's do."""
    from ...taskset import STANDARD_DEFAULTS

    baseline = next((b for b in sorted(world.baselines) if b.endswith("workspace-a")), "")
    return AuthorContext(
        world,
        source,
        resolved,
        baseline,
        backends,
        sorted(world.skills),
        siblings,
        STANDARD_DEFAULTS,
        deadlines,
        finds,
        find_order(persona_root(source), persona_root(source) / "tasksets" / "workspace_tasks")
        if hasattr(source, "file")
        else (),
    )


def rule_drafts(world: Any, checked: Any) -> list[Task]:
    """Every level of every story a `check` resolved (`authoring.checks.PersonaCheck`), as the rule author
    compiles it before any gate (`draft_context`): what the phrasebook itself writes, for measuring the requests
    (the prose faults script and its tests) and for `check`'s reading of the Find prompts."""
    from ...taskset import STANDARD_DEFAULTS

    siblings = tuple(r.story.slug for r in checked.resolved)
    author = RuleAuthor()
    tasks: list[Task] = []
    for resolved in checked.resolved:
        ctx = draft_context(
            world,
            checked.source,
            resolved,
            siblings,
            list(world.default_backends),
            own_deadlines(checked.resolved),
            persona_finds(checked.resolved),
        )
        for level in range(5):
            raw = author.draft(ctx, level, [], []).task
            tasks.append(parse_task(raw, f"{raw['id']}.json", STANDARD_DEFAULTS))
    return tasks


def first_prompt(world: Any, checked: Any, resolved: Any, level: int, backends: list[str]) -> str:
    """The request the rule author's first round writes for one level of a resolved story."""
    return str(first_task(world, checked, resolved, level, backends)[0]["prompt"])


def first_task(
    world: Any, checked: Any, resolved: Any, level: int, backends: list[str]
) -> tuple[dict[str, Any], int | None]:
    """The task file the rule author's first round writes for one level of a resolved story and, at Find, how
    many similarity measures find its target in the kept wording (None: no wording left every shortcut agent
    failing and the Find rung passing)."""
    siblings = tuple(r.story.slug for r in checked.resolved)
    ctx = draft_context(
        world,
        checked.source,
        resolved,
        siblings,
        backends,
        own_deadlines(checked.resolved),
        persona_finds(checked.resolved),
    )
    # (Derive keeps the first order of its note's rules that no shortcut agent passes: `compile_level`)
    return (compile_level(ctx, level), 0) if level == 2 else _compiled(ctx, level)
