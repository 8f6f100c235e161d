"""The widgets a story's levels work on: one place that chooses them per level, so that no lower level of a
story names what a higher one hides and a story whose target has no stand-in still certifies.

Find (level 1) hides which widget the story is about. If Execute (level 0) did the same work on the same widget,
its request would name it, and a player that met the story's level 0 first (or any reader of the published
taskset) would read Find's answer there: the taskset itself would be the answer key. The same holds above
Find: Derive, Ground and Compose name the widget they work on too, and a reader of the published taskset has
read them. So every level but Find works on what this module chooses for it, each drawn for its own task id
(`execute_stories(..., level)`); Derive, Ground and Compose keep their own hidden value on it (a stand-in takes
the target's value of the parameter Derive carries or Ground's fact sets, `_kept_params`), and the rule author
keeps a choice only where the level hides what it hides on the target and its rung, and no shortcut agent,
still behaves (`roles.author.rules._off_target`). Below, Execute stands for any of them. So Execute does the
story's work — the same action, the same stated values, the same columns recorded and analysed — on a
*stand-in*: another widget of the same app (else of the backend) that takes every value the story states for
its first target, drawn per task, and whose name is not the target's (nor contains it). Levels 1-4 climb on
the story's own target. A story asking for a judged analysis asks it at every level: its Execute works on a
stand-in serving the analysed figure (the analysis is then over the stand-in's rows), and where no widget but
the target serves it, on the target itself — the analysis is kept, and level 0 names what Find hides (the
fairness review reports it as minor, `roles.fairness`).

A Find repair whose target is the one widget listing the values to set among its declared options cannot be
told apart from other widgets by any description (the signature matcher repairs the one placed widget listing
them): its Find board stands it between *twin instances* of itself on other options, and a planted pointer
names each instance by what it shows (`twin_values`). There Find hides an instance, not a widget — the widget's
name is on the pointer's own entries — and such a target has no stand-in either (no other widget lists its
values the same way). So Execute works on the target's widget as *another instance*: seeded wrong on the
values of one of Find's twins instead of the target instance's, so that what Execute's request says (the
widget's name, the values to set) and what its board shows (the instance it repairs) both point Find's player
at a twin (`execute_stories`). The fairness review establishes the result for every level
(`roles.fairness.stated_below`): a hidden target is named below only where a lower level names its widget
and, for an instance, works on or states what that instance shows.

What is chosen is checked here, against the world, once per story: `check` reports a story that has neither a
stand-in nor twins (Execute would have to name the target, `working_errors`), and a Find repair whose options
alone single out its target with too few options left for twins (`_listed_errors`); the rule author compiles
Execute's choices in their order, keeping the first that compiles and that the Execute rung solves
(`roles.author.rules`).
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

from certify import states_value
from simulator import WidgetDef, World, option_values, value_allowed

from ..analyze import ResolvedAnalyze, columns_of
from ..sources import SourceError, Story
from .model import ResolvedStory, ResolvedTarget
from .reads import _first_row
from .said import value_text

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
    level: int = 0,
    keeps: tuple[str, ...] = (),
) -> tuple[ResolvedTarget, ...]:
    """Every widget of the connected backends that can stand in for the first target at Execute, in the order
    drawn for the story's level 0 (at most MAX_STAND_INS). A stand-in's name neither is nor contains another
    target's (nor the other way round) and names one widget only (in its app when it is of the target's app,
    else in its backend); it serves rows for its values (a read records its first row) and, for a repair,
    takes the wrong values of the parameters it declares (one at least). Best first: a widget of the same app
    that takes every value the story states for the target, then one of another app of the same backend, then
    one of another backend; then the same order for widgets that take the stated values of the parameters they
    declare (Execute states those), and last for widgets that declare none of them (a target whose values no
    other widget lists: Execute then adds or reads the stand-in on its own defaults). A story asking for an
    analysis ranks those of the target's backend serving its figure before all of these (Execute asks the analysis over the stand-in's
    rows, `analysis_on`). Within each, those serving every column the story records and analyses
    come first (Execute then records and analyses the same columns; a read's Execute on another records that
    widget's own columns, `plan`, and asks for no analysis where the figure is not served, `at_execute`), then
    by a hash of the task id. `first`: the target Find hides, when it is not the story's first (Find describes
    another target when nothing tells the first apart); `level`: the level the order is drawn for (each level
    of a story that works on a stand-in draws its own, by its task id); `keeps`: the parameters the level's own
    hidden value sits on (Derive's carried one, the one Ground's fact sets) — a stand-in takes the first
    target's value of each, or the level would hide another value on it."""
    if not targets:
        return ()
    first = first or targets[0]
    names = {t.name for t in targets}
    used = {(t.origin, t.widget_id) for t in targets}
    app = set(_in_app(world, first, backends))
    needed = [*(record or []), *analyzed]
    ranked: list[tuple[bool, int, bool, str, ResolvedTarget]] = []
    key = f"{story.slug}_level{level}"
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
            if any(k in first.params and k not in takes for k in keeps):
                continue  # the level's hidden value would not sit on it
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
            # a story that asks for an analysis keeps it at Execute only on a stand-in of the target's backend
            # serving its figure (the skill's threshold is about that figure as that backend serves it; a column
            # of the same name elsewhere is not known to mean the same): those come first, whatever their tier
            drops = bool(analyzed) and (analyzed[0] not in columns or origin != first.origin)
            digest = hashlib.sha256(f"{key}|{origin}|{wid}".encode()).hexdigest()
            ranked.append((drops, tier, not full, digest, candidate))
    return tuple(c for *_, c in sorted(ranked, key=lambda r: r[:4])[:MAX_STAND_INS])


def working_errors(
    story: Story, first: ResolvedTarget, found: tuple[ResolvedTarget, ...], twins: list[dict[str, Any]]
) -> list[SourceError]:
    """Execute has nothing to work on but the target Find hides: no widget stands in for it and Find does not
    stand it between twin instances of itself (`twin_values`), so level 0 would name what Find hides."""
    if found or twins:
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
    story: ResolvedStory, world: World, backends: list[str], name: str, level: int = 0
) -> tuple[ResolvedTarget, ...]:
    """The stand-ins of the story's target called `name` (the one Find hides), in the order drawn for `level`."""
    hidden = next((t for t in story.targets if t.name == name), None)
    if (hidden is None or hidden is story.targets[0]) and level == 0:
        return story.execute_stand_ins
    analyzed = (story.analyze.figure, story.analyze.label) if story.analyze is not None else ()
    if hidden is None or hidden is story.targets[0]:
        return stand_ins(
            world,
            story.story,
            story.targets,
            backends,
            story.seeded_wrong,
            story.facts.record,
            analyzed,
            level=level,
            keeps=_kept_params(story, 0, level),
        )
    at = story.targets.index(hidden)
    return stand_ins(
        world,
        story.story,
        story.targets,
        backends,
        {},
        story.facts.record,
        analyzed,
        first=hidden,
        level=level,
        keeps=_kept_params(story, at, level),
    )


def _kept_params(story: ResolvedStory, at: int, level: int) -> tuple[str, ...]:
    """The parameters level `level`'s own hidden value sits on when the stand-in works in place of target `at`:
    Derive's carried parameter (on its carried target), the one Ground's fact sets (Ground and Compose)."""
    if level == 2 and story.carried_target == at:
        return (story.carried_key,)
    sets = story.governance.sets if story.governance is not None else None
    if level >= 3 and sets not in (None, "tab"):
        return (str(sets),)
    return ()


def analysis_on(analyze: ResolvedAnalyze, stand_in: ResolvedTarget, origin: str) -> ResolvedAnalyze | None:
    """The story's analysis as Execute asks it over what its stand-in reads: the same figure and threshold (the
    skill's threshold is about the figure), its rows told apart by the stand-in's own label column where it does
    not serve the story's (Country Exposure's markets for Sector Tilt vs Benchmark's sectors: the first column
    neither the figure nor a parameter the stand-in is read on, a text one where its rows say). None where the
    stand-in does not serve the figure, or is of another backend than the target's (`origin`: a column of the
    same name there is not known to mean what the skill's threshold is about): no band to compare it with."""
    served = columns_of(stand_in.widget.definition, stand_in.widget.rows or [])
    if analyze.figure not in served or stand_in.origin != origin:
        return None
    if analyze.label in served:
        return analyze
    first = next((r for r in stand_in.widget.rows or [] if isinstance(r, dict)), {})
    label = next(
        (
            c
            for c in served
            if c != analyze.figure
            and c not in stand_in.params
            and stand_in.widget.param(c) is None
            and (not first or isinstance(first.get(c), str))
        ),
        None,
    )
    return replace(analyze, label=label) if label is not None else None


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
        analyze = analysis_on(analyze, stand_in, first.origin)
    declared = targets[0].params
    wrong = {k: v for k, v in story.seeded_wrong.items() if k in declared}
    return replace(story, targets=targets, analyze=analyze, seeded_wrong=wrong, standing_in=first)


# A Find repair whose target is the one widget of its board's pool listing the values to set is told apart from
# this many twin instances of itself instead, each on other options of those parameters: with two, the target
# sits between them (`seeding._drawn`), so neither "the first instance" nor "the last" repairs it.
FIND_TWINS = 2


def _listed_alone(
    world: World, story: Story, target: ResolvedTarget, backends: list[str]
) -> list[str] | None:
    """Whether a Find repair's target is the one widget that lists the values to set among its declared
    options, among what the request says it comes from (the story's app, else its origin) and what a Find
    repair's board seeds beside it (look-alikes of the target's own catalog category). The names of the others
    that take those parameters only from an options endpoint when it is (the signature matcher reads the
    options a schema declares, so it repairs the one placed widget listing them without reading the request);
    None when it is not."""
    repair = story.facts.kind == "repair" or (story.facts.kind is None and bool(story.facts.seeded_wrong))
    values = {k: v for k, v in target.params.items() if k in (story.facts.seeded_wrong or {})}
    fixture = world.fixture_of(target.origin, backends)
    if not repair or not values or fixture is None:
        return None
    in_app = set(fixture.catalog.app_widgets(target.app)) if target.app else set()
    category = target.widget.definition.get("category")
    siblings = [
        w
        for wid, w in fixture.catalog.widgets.items()
        if not target.app
        or wid in in_app
        or w.definition.get("category") in {target.app, *([category] if category else [])}
    ]

    def lists(w: WidgetDef) -> bool:
        return all(
            (p := w.param(k)) is not None and str(v) in {str(o) for o in option_values(p)}
            for k, v in values.items()
        )

    if [w.widget_id for w in siblings if lists(w)] != [target.widget_id]:
        return None
    return [w.name for w in siblings if w.widget_id != target.widget_id and all(w.param(k) for k in values)]


def twin_values(
    world: World, story: Story, target: ResolvedTarget, backends: list[str]
) -> list[dict[str, Any]]:
    """The values the target's twin instances show on its Find board when its declared options alone single it
    out (`_listed_alone`): FIND_TWINS instances of the target itself, each on options of the parameters the
    repair sets that are neither the graded values nor the seeded wrong ones. Another instance of the same
    widget takes exactly what the target takes, so no schema tells them apart; the planted pointer names the
    target's instance by what it shows, and that is what an agent must read. Empty when the mechanism does
    not apply, or the parameters offer too few other options."""
    if _listed_alone(world, story, target, backends) is None:
        return []
    wrong = story.facts.seeded_wrong or {}
    others = {
        k: [o for o in target.widget.options(k) if str(o) not in {str(v), str(wrong.get(k))}]
        for k, v in target.params.items()
        if k in wrong
    }
    if any(len(o) < FIND_TWINS for o in others.values()):
        return []
    return [{k: o[i] for k, o in others.items()} for i in range(FIND_TWINS)]


def _listed_errors(
    world: World, story: Story, target: ResolvedTarget, backends: list[str]
) -> list[SourceError]:
    """A Find repair whose target is the one widget of its app that lists the values to set among its declared
    options (the others that take them draw their options from an endpoint): the signature matcher, which reads
    the options a schema declares, repairs the one placed widget listing them without reading the request —
    whether a description or a planted pointer says which. Unless its parameters offer the options for twin
    instances of the target itself (`twin_values`): the pointer then names the target's instance by what it
    shows, nothing else tells it apart from them."""
    drawn = _listed_alone(world, story, target, backends)
    if drawn is None or twin_values(world, story, target, backends):
        return []
    app = target.app or target.origin
    values = {k: v for k, v in target.params.items() if k in (story.facts.seeded_wrong or {})}
    return [
        SourceError(
            story.file,
            "facts.targets[0]",
            f"'{target.name}' is the only widget of {app} whose options list "
            f"{', '.join(f'{k} {value_text(v)}' for k, v in values.items())}"
            + (f" ({', '.join(drawn[:3])} take it only from an options endpoint)" if drawn else "")
            + ": an agent repairing the placed widget whose schema lists the value finds it without reading the "
            f"request, and its parameters offer fewer than {FIND_TWINS} other options for twin instances of it "
            "to stand beside it, so its Find level cannot certify; pick a first target whose values to set "
            "another widget of its app also lists, or set a parameter with more options",
        )
    ]


def twin_instance(story: ResolvedStory, level: int = 0) -> dict[str, Any] | None:
    """The values Execute seats the target's widget on when it works on another instance of it (a Find that
    stands the target between twins, `twin_values`): one of Find's twins' — drawn by the story, so that neither
    the pointer's rival nor the unnamed twin is always the one — where the stale target is seeded on its wrong
    values (drawn per level: each level that works another instance draws its own). None when Find has no
    twins."""
    pointer = story.find_pointer
    if pointer is None or not pointer.twins:
        return None
    digest = hashlib.sha256(f"{story.story.slug}_level{level}|twin".encode()).digest()
    return dict(pointer.twins[digest[0] % len(pointer.twins)])


def execute_stories(
    story: ResolvedStory, world: World, backends: list[str], hidden: str | None, level: int = 0
) -> list[ResolvedStory]:
    """The story as Execute (or another level than Find, `level`: Derive, Ground and Compose work on a stand-in
    too, so that no level of the story names what Find hides) may work it, best first: where Find stands the target it hides (`hidden`, the
    first target by default) between twin instances of itself, on another instance of the target's widget
    (`twin_instance`: Find's pointer names the widget anyway, and a stand-in repaired from the target's own
    wrong values would show Find's player which instance to repair); then on each stand-in of that target in
    its drawn order. The rule author keeps the first that compiles and that Execute's rung solves, and the
    story itself where none does (the fairness review then reports what Execute names)."""
    name = hidden or story.targets[0].name
    instance = twin_instance(story, level)
    out = [replace(story, execute_instance=instance)] if instance and name == story.targets[0].name else []
    worked = [at_execute(story, s, hidden) for s in stand_ins_for(story, world, backends, name, level)]
    # a story asking for a judged analysis asks it at every level: a stand-in that drops it is not worked on,
    # and where none keeps it Execute works on the target itself (`analysis_on`; the fairness review reports
    # that level 0 then names what Find hides, `roles.fairness`)
    kept = [s for s in worked if story.analyze is None or s.analyze is not None]
    return out + [w for w in kept if len(_cuts(w)) == len(_cuts(story))]


def _cuts(story: ResolvedStory) -> set[tuple[str, str, str]]:
    """The distinct widgets-with-values a story's targets are. Two targets of one widget (two cuts of it) on a
    stand-in that declares none of the parameters telling them apart would be one widget placed twice on the
    same values: Execute's request would ask for the same thing twice and its reference would fail its own
    'at most one' checks, so such a stand-in is not one Execute can work on."""
    return {(t.origin, t.widget_id, repr(sorted(t.params.items()))) for t in story.targets}
