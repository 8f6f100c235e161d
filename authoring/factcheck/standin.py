"""Execute's stand-in: the widget level 0 works on, so that no lower level of a story names what Find hides.

Find (level 1) hides which widget the story is about. If Execute (level 0) did the same work on the same widget,
its request would name it, and a player that met the story's level 0 first (or any reader of the published
taskset) would read Find's answer there: the taskset itself would be the answer key. So Execute does the
story's work — the same action, the same stated values, the same columns recorded and analysed — on another
widget of the same app: a sibling that takes every value the story states for its first target, drawn per task,
and whose name is not the target's (nor contains it). Levels 1-4 climb on the story's own target as before.

The candidates are checked here, against the world, once per story: `check` reports a story that has none
(Execute would have to name the target), and the rule author tries them in their drawn order, keeping the first
that compiles (`roles.author.rules`).
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

from certify import states_value
from simulator import World, value_allowed

from ..analyze import columns_of
from ..sources import SourceError, Story
from .model import ResolvedStory, ResolvedTarget
from .reads import _first_row

# the stand-ins kept per story, best first: the rule author compiles them in turn until one compiles and the
# Execute rung solves it (a few at most in practice; the cap bounds a world with hundreds of look-alikes)
MAX_STAND_INS = 8


def _in_app(world: World, target: ResolvedTarget, backends: list[str]) -> list[str]:
    """The widget ids of the target's app (its category when the catalog lays out no app of that name)."""
    fixture = world.fixture_of(target.origin, backends)
    if fixture is None:
        return []
    app = target.app or target.widget.definition.get("category")
    laid = set(fixture.catalog.app_widgets(str(app))) if app else set()
    return [
        wid
        for wid, w in fixture.catalog.widgets.items()
        if wid in laid or (app is not None and w.definition.get("category") == app)
    ]


def _names_overlap(a: str, b: str) -> bool:
    """Whether one name contains the other as words (a request naming one would be read as naming the other)."""
    return states_value(a, b, any_case=True) or states_value(b, a, any_case=True)


def _serves(world: World, backends: list[str], candidate: ResolvedTarget) -> tuple[bool, set[str]]:
    """Whether `candidate` serves rows for its values, and the columns it serves."""
    row = _first_row(world, backends, candidate, candidate.params)
    if row is None:
        return False, set()
    return True, set(row) | set(columns_of(candidate.widget.definition, candidate.widget.rows or []))


def stand_ins(
    world: World,
    story: Story,
    targets: list[ResolvedTarget],
    backends: list[str],
    seeded_wrong: dict[str, Any],
    record: list[str] | None,
    analyzed: tuple[str, ...],
    first: ResolvedTarget | None = None,
) -> tuple[ResolvedTarget, ...]:
    """Every widget of the connected backends that can stand in for the first target at Execute, in the order
    drawn for the story's level 0 (at most MAX_STAND_INS). A stand-in's name neither is nor contains another
    target's (nor the other way round) and names one widget only (in its app when it is of the target's app,
    else in its backend); it serves rows for its values (a read records its first row) and, for a repair,
    takes the wrong values of the parameters it declares (one at least). Best first: a widget of the same app
    that takes every value the story states for the target, then one of another app of the same backend, then
    one of another backend; then the same order for widgets that take the stated values of the parameters they
    declare (Execute states those), and last for widgets that declare none of them (a target whose values no
    other widget lists: Execute then adds or reads the stand-in on its own defaults). Within each, those serving every column the story records and analyses
    come first (Execute then records and analyses the same columns; a read's Execute on another records that
    widget's own columns, `plan`, and asks for no analysis where the figure is not served, `at_execute`), then
    by a hash of the task id. `first`: the target Find hides, when it is not the story's first (Find describes
    another target when nothing tells the first apart)."""
    if not targets:
        return ()
    first = first or targets[0]
    names = {t.name for t in targets}
    used = {(t.origin, t.widget_id) for t in targets}
    app = set(_in_app(world, first, backends))
    needed = [*(record or []), *analyzed]
    ranked: list[tuple[int, bool, str, ResolvedTarget]] = []
    key = f"{story.slug}_level0"
    fixtures = {f.origin: f for name in backends if (f := world.backend(name)) is not None}
    for origin, fixture in fixtures.items():
        catalog = fixture.catalog
        every = [w.name for w in catalog.widgets.values()]
        peers = (
            [w.name for w in catalog.widgets.values() if w.widget_id in app] if origin == first.origin else []
        )
        for wid, widget in catalog.widgets.items():
            mine = origin == first.origin and wid in app
            if (origin, wid) in used or any(_names_overlap(widget.name, n) for n in names):
                continue
            if (peers if mine else every).count(widget.name) != (
                0 if mine and widget.name not in peers else 1
            ):
                continue  # a name laid out twice would not say which widget Execute means
            takes = {
                k: v
                for k, v in first.params.items()
                if (p := widget.param(k)) is not None
                and value_allowed(p, v)
                # a value the target lists among its options is listed by the stand-in too (not left to an
                # options endpoint or free text): Execute's request states it the same way
                and (v not in first.widget.options(k) or v in widget.options(k))
            }
            declared = {k for k in first.params if widget.param(k) is not None}
            if set(takes) != declared:
                continue  # a value it declares but does not take
            wrong = {k: v for k, v in seeded_wrong.items() if k in takes}
            if not all((p := widget.param(k)) is not None and value_allowed(p, v) for k, v in wrong.items()):
                continue
            if seeded_wrong and not wrong:
                continue  # a repair's stand-in must have a value to put right
            apps = catalog.apps_of(wid)
            own_app = first.app if mine else (apps[0] if apps else widget.definition.get("category"))
            candidate = ResolvedTarget(widget.name, origin, str(own_app) if own_app else None, widget, takes)
            serves, columns = _serves(world, backends, candidate) if needed else (True, set())
            if record is not None and not serves:
                continue
            near = 0 if mine else 1 if origin == first.origin else 2
            tier = near + (0 if len(takes) == len(first.params) else 3 if takes else 6)
            full = all(c in columns for c in needed)
            ranked.append(
                (tier, not full, hashlib.sha256(f"{key}|{origin}|{wid}".encode()).hexdigest(), candidate)
            )
    return tuple(c for *_, c in sorted(ranked, key=lambda r: r[:3])[:MAX_STAND_INS])


def stand_in_errors(
    story: Story, first: ResolvedTarget, found: tuple[ResolvedTarget, ...]
) -> list[SourceError]:
    """No widget can stand in for the first target at Execute: level 0 would name what Find hides."""
    if found:
        return []
    return [
        SourceError(
            story.file,
            "facts.targets[0].widget",
            f"no other widget of '{first.app or first.origin}' takes "
            f"{', '.join(f'{k}={v!r}' for k, v in first.params.items()) or 'the stated values'}"
            + (" and serves rows for them" if story.facts.record else "")
            + f": Execute would have to work on '{first.name}' itself and name what Find hides (a player that "
            "met level 0 would read Find's answer there); give a first target with a sibling in its app on the "
            "same parameters",
        )
    ]


def stand_ins_for(
    story: ResolvedStory, world: World, backends: list[str], name: str
) -> tuple[ResolvedTarget, ...]:
    """The stand-ins of the story's target called `name` (the one Find hides), in their drawn order."""
    hidden = next((t for t in story.targets if t.name == name), None)
    if hidden is None or hidden is story.targets[0]:
        return story.execute_stand_ins
    analyzed = (story.analyze.figure, story.analyze.label) if story.analyze is not None else ()
    return stand_ins(
        world, story.story, story.targets, backends, {}, story.facts.record, analyzed, first=hidden
    )


def at_execute(story: ResolvedStory, stand_in: ResolvedTarget, hidden: str | None = None) -> ResolvedStory:
    """The story as Execute works it: every target that is the first target's widget replaced by `stand_in`
    (with that target's own values of the parameters the stand-in declares), the rest as they are. The analysis is asked where the stand-in serves its
    figure and label columns (the skill's threshold is about that figure; another column has no band to compare
    with), and none is asked otherwise. `hidden`: the name of the target Find hides (the first by default)."""
    first = next((t for t in story.targets if t.name == hidden), story.targets[0])
    targets = [
        replace(stand_in, params={k: v for k, v in t.params.items() if stand_in.widget.param(k) is not None})
        if (t.origin, t.widget_id) == (first.origin, first.widget_id)
        else t
        for t in story.targets
    ]
    analyze = story.analyze
    if first is not story.targets[0]:
        # the stand-in works in place of another target: the first, whose rows the analysis reads, stays
        return replace(story, targets=targets, standing_in=first, stand_in_at=story.targets.index(first))
    if analyze is not None:
        served = set(columns_of(stand_in.widget.definition, stand_in.widget.rows or []))
        if not {analyze.figure, analyze.label} <= served:
            analyze = None
    declared = targets[0].params
    wrong = {k: v for k, v in story.seeded_wrong.items() if k in declared}
    return replace(story, targets=targets, analyze=analyze, seeded_wrong=wrong, standing_in=first)
