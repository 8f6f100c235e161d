"""Find pointers: when nothing the target serves tells it apart, a note planted on the Find board names it
under a coined label beside a rival widget, and the request refers to the target's entry. Also what every Find
request says besides its description (`find_said`) and how strongly those words pull a word matcher."""

from __future__ import annotations

import re
from typing import Any

from certify import states_value, words
from simulator import WidgetDef, World, option_values, value_allowed

from ..sources import Story
from .model import FindPointer, ResolvedStory, ResolvedTarget, value_said
from .said import param_label, purpose, value_text
from .working import twin_values

# The entries a planted pointer lists its widgets under: pairs of coined labels (no catalog word, no verb the
# agents read as an instruction, no period or status, none that said after "the" reads as a twin the request
# fences off — "the second …", "the other …"), one drawn per story, the target's entry drawn in it.
POINTER_LABELS = (
    ("first look", "closer look"),
    ("quick scan", "deep dive"),
    ("desk pick", "backup pick"),
    ("lead item", "spare item"),
)


# How many entries a planted pointer lists at most: the target's and up to this many less one rivals, as many as
# its app offers (`find_pointers`). With two, a reader of the first or the last line is right on every other
# task whatever the draw; with k, on about one in k.
POINTER_ENTRIES = 5


# The names the first pointer note may take, the first that shares no word with the app's catalog or the
# request's other words (the dashboard's name would repeat words a matcher already reads there).
POINTER_NOTES = ("Shortlist", "Pick List", "Watch List")


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

    The first takes the rival that leaves the fewest similarity measures preferring the target for the
    request's fixed words (`lexical_pull`) and a note name and labels sharing no word with the app's catalog.
    Every Find request also says the dashboard, the app, the stated values, the other targets' names and the
    story's why; where those share words with the target's catalog name ("Alert Sweep", status Open and "Alert
    Trend" for "Open Alert Metrics"), a word matcher picks the target whatever the note says. The further pointers name the note with words of their rival's name instead ("Cash
    Break Shortlist"), chosen where the battery's word readers (`certify.lexical_picks`) then take another widget
    than the target from the request's words: the request pulls a matcher off the target, and the counterfactual
    copy (the entries swapped, the note's name kept) leaves such a matcher failing one of the two copies; those
    fewest of the lexical ensemble's measures then find come first (`lexical_pull` chose the first's rival by
    the same ensemble). A target whose declared options alone single it out (`working.twin_values`) gets one
    pointer, whose rival entry names a twin instance of it."""
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
    # a target whose declared options alone single it out stands among twin instances of itself, and the rival
    # entry names one of them: no other widget can stand there (the signature matcher tells it apart)
    twins = twin_values(world, story, target, backends)
    if not rivals and not twins:
        return []
    from certify import lexical_exposure, lexical_picks, terms, verb_kind, word_stem

    digest = sum(map(ord, story.slug))
    said = find_said(story, target)
    # how strongly each rival draws a word matcher off the target (`lexical_pull`: fewer measures still
    # preferring the target is a stronger pull)
    pull = {w: lexical_pull(said, target.widget, fixture.catalog.widgets[w]) for w in rivals}
    if twins:
        rival = target.widget_id
    else:
        # the rival a word matcher would take first: the one that, beside the target, leaves the fewest word
        # and character similarity measures preferring the target for what every Find request says besides
        # the pointer (`find_said`), so that matching those words picks the rival, not the target (ties drawn
        # by the story)
        best = min(pull.values())
        closest = [w for w in rivals if pull[w] == best]
        rival = closest[digest % len(closest)]
    # the note and its labels are coined: a word of the app's catalog (or of the dashboard, the story's why)
    # in them would be one more word a matcher finds the target by, so those sharing none come first
    pool = [
        d for d in fixture.catalog.widgets.values() if (d.definition.get("category") or target.origin) == app
    ]
    catalog = " ".join(f"{d.name} {d.definition.get('description') or ''}" for d in pool)
    taken_words = {word_stem(w, cut=None) for w in words(f"{catalog} {said}")}

    def stems(text: str) -> set[str]:
        return {word_stem(w, cut=None) for w in words(text)}

    def clean(text: str) -> bool:
        return not stems(text) & taken_words

    pairs = [p for p in POINTER_LABELS if clean(" ".join(p))] or list(POINTER_LABELS)
    pair = pairs[digest % len(pairs)]
    label, other = pair if (digest // len(pairs)) % 2 == 0 else pair[::-1]
    # the further entries' labels: the other coined ones, clean first, in an order drawn by the story (only the
    # target's label is said in the request)
    rest = [p for p in POINTER_LABELS if p != pair]
    rest.sort(
        key=lambda p: (not clean(" ".join(p)), (POINTER_LABELS.index(p) + digest) % len(POINTER_LABELS))
    )
    spare_labels = [lab for p in rest for lab in p]
    note = next((n for n in POINTER_NOTES if clean(n)), POINTER_NOTES[0])
    if twins:
        wrong = story.facts.seeded_wrong or {}
        shows = " and ".join(value_text(wrong[k]) for k in twins[0])
        seeded = tuple(tuple(t.items()) for t in twins)
        # every twin instance is listed, each by what it shows (the first is the rival entry)
        more = tuple(
            (lab, target.widget_id, f"{target.name} on {' and '.join(value_said(v) for _, v in tw)}")
            for lab, tw in zip(spare_labels, seeded[1 : POINTER_ENTRIES - 1], strict=False)
        )
        # one pointer: a note named with words of the rival's name would name the target itself
        return [FindPointer(note, label, other, rival, target.name, seeded, shows, more, story.slug)]

    # where the app has too few rivals taking every stated value, the note also lists widgets of the app taking
    # some of them (a reader of a fixed line is then right on one task in as many entries, not one in two; the
    # decoys a repair's board holds are such widgets, so each stands on the board as well)
    def fit(d: WidgetDef) -> int:
        return sum(
            1 for k, v in target.params.items() if (p := d.param(k)) is not None and value_allowed(p, v)
        )

    padding = sorted(
        (
            wid
            for wid, d in fixture.catalog.widgets.items()
            if wid not in taken
            and wid not in rivals
            and d.name.casefold() not in names
            and not re.search(r"\bfrom\b", d.name, re.I)
            and (d.definition.get("category") or target.origin) == app
            and fit(d) > 0
        ),
        key=lambda w: (-fit(fixture.catalog.widgets[w]), w),
    )

    def further(first: str) -> tuple[tuple[str, str, str], ...]:
        """The entries listed beside the target and the rival `first`: the app's other rivals drawing a word
        matcher hardest off the target first, then widgets taking most of the stated values, as many as the
        note holds."""
        ranked = sorted((w for w in rivals if w != first), key=lambda w: (pull[w], w)) + padding
        return tuple(
            (lab, w, fixture.catalog.widgets[w].name)
            for lab, w in zip(spare_labels, ranked[: POINTER_ENTRIES - 2], strict=False)
        )

    out = [
        FindPointer(
            note,
            label,
            other,
            rival,
            fixture.catalog.widgets[rival].name,
            more=further(rival),
            draw=story.slug,
        )
    ]
    # the further pointers: the note named with words of the rival's own name (never all of them: the request
    # would name the rival), where the request's words then take the battery's word readers elsewhere than the
    # target; those fewest measures of the lexical ensemble then find first (one measure with the first rival's)
    entries = [{"name": d.name, "description": d.definition.get("description") or ""} for d in pool]
    mine = next(i for i, d in enumerate(pool) if d.widget_id == target.widget_id)
    avoid = stems(f"{target.name} {app} {story.facts.dashboard} note notes")
    # (the story's why is not said at such a Find where it shares a term with the target's name: `Wording`)
    why = purpose(story)
    said_why = "" if set(terms(why)) & set(terms(target.name)) else why
    stated = " ".join(
        f"{param_label(target.widget.param(k), k)} {value_text(v)}" for k, v in target.params.items()
    )
    context = " ".join([story.facts.dashboard, app, stated, *(t.name for t in targets[1:]), said_why])
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
        lent_note = " ".join(w[:1].upper() + w[1:] for w in lent) + " Shortlist"
        # nor the name of any widget of the origin ("Table Widget Shortlist" names Table Widget)
        if not lent or any(
            states_value(lent_note, x.name, any_case=True) for x in fixture.catalog.widgets.values()
        ):
            continue
        pointer = FindPointer(lent_note, label, other, wid, d.name, more=further(wid), draw=story.slug)
        probe = f"{context} {pointer.references()[0]}"
        if mine in lexical_picks(probe, entries).values():
            continue
        # ranked by the measure the first pointer's rival is chosen by: how many of the ensemble's word and
        # character similarity measures still take the target for the request's words (fewest first)
        lenders.append((len(lexical_exposure(probe, entries, mine)), pointer))
    lenders.sort(key=lambda m: m[0])
    out += [p for _, p in lenders[: POINTER_CHOICES - 1]]
    return out


def find_said(story: Story, target: ResolvedTarget) -> str:
    """What every Find request of the story says besides its description of the target (`find_said_parts`),
    as one text — the words a word matcher reads there whatever the description."""
    return " ".join(find_said_parts(story, target).values())


def find_said_parts(story: Story, target: ResolvedTarget) -> dict[str, str]:
    """What every Find request of the story says besides its description, by the field that lends it: the
    dashboard, the target's app, the why, the deadline and each stated value with its parameter's label."""
    stated = " ".join(
        f"{param_label(target.widget.param(k), k)} {value_text(v)}" for k, v in target.params.items()
    )
    return {
        "facts.dashboard": story.facts.dashboard,
        "the app": target.widget.definition.get("category") or target.origin,
        "facts.why": purpose(story),
        "facts.deadline": story.facts.deadline or "",
        "the stated values": stated,
    }


# A story whose fixed Find words (`find_said`) make its target the top pick of more than this share of the
# lexical ensemble's measures is warned about: no wording of the description, and no pointer, takes those words
# out of the request, so a player matching words finds the target there whatever the rule author says.
SAID_EXPOSURE_SHARE = 0.10


def said_exposure_warnings(world: World, resolved: ResolvedStory, backends: list[str]) -> list[str]:
    """Which of the words every Find request says besides its description and the story words (the dashboard,
    the why, the deadline: `find_said_parts`) make the first target the top pick, or tied at
    the top, of word and character similarity measures over its app's catalog names and descriptions
    (`certify.lexical_exposure`): each field that alone does so for more than SAID_EXPOSURE_SHARE of them, with
    the words it shares with the target's name and description, so the writer knows what to reword."""
    from certify import lexical_exposure
    from certify import lexical_measures as measures

    story, target = resolved.story, resolved.targets[0]
    fixture = world.fixture_of(target.origin, backends)
    if fixture is None or resolved.analyze is not None:
        return []
    app = target.widget.definition.get("category") or target.origin
    pool = [
        d for d in fixture.catalog.widgets.values() if (d.definition.get("category") or target.origin) == app
    ]
    entries = [{"name": d.name, "description": d.definition.get("description") or ""} for d in pool]
    mine = next(i for i, d in enumerate(pool) if d.widget_id == target.widget_id)
    bar = SAID_EXPOSURE_SHARE * len(measures())
    # the app and the stated values are the request's by right (its views share the app's words, a parameter's
    # label its description's): only what the story words can be reworded
    fields = {k: v for k, v in find_said_parts(story, target).items() if k.startswith("facts.")}
    own = set(words(f"{target.name} {entries[mine]['description']}"))
    out: list[str] = []
    for key, text in fields.items():
        found = lexical_exposure(text, entries, mine) if text else []
        if len(found) > bar:
            shared = sorted(own & set(words(text)))
            out.append(
                f"{key} ('{text}') alone makes '{target.name}' the top pick of {len(found)} of "
                f"{len(measures())} word and character similarity measures over {app}'s names and descriptions"
                + (f" (it shares {', '.join(repr(w) for w in shared)})" if shared else " (by parts of words)")
                + ": every Find request says it whatever the description, so a player matching words finds the "
                "target there without reading what it serves; reword it away from the target's name and "
                "description"
            )
    return out


def lexical_pull(said: str, target: WidgetDef, other: WidgetDef) -> int:
    """How many word and character similarity measures (`certify.lexical_exposure`) still prefer `target`, or
    tie it, over `other` for the words `said`: the fewer, the more a word matcher reading them is drawn to the
    other widget instead (a rival or look-alike that pulls the matchers away from the target)."""
    from certify import lexical_exposure

    entries = [
        {"name": d.name, "description": d.definition.get("description") or ""} for d in (target, other)
    ]
    return len(lexical_exposure(said, entries, 0))
