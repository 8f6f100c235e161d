"""Whether a Find level's target can be found by what it serves: the story's hint checked against the Find
rung, hints coined from the target's served parts for a source-format story, and the validator's refusals (a
whole Find prompt or a parameter signature that names the target without the description)."""

from __future__ import annotations

import re
from typing import Any

from certify import words
from simulator import WidgetDef, World

from ..sources import SourceError, Story
from .model import ResolvedStory, ResolvedTarget
from .said import param_label, purpose, value_text


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

    from ..variety import overlap

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
        # the words the request says anyway (the app, each stated value with its label) that the entry repeats
        besides = sorted((lexical(f"{app} {stated}") & catalog[mine]) - set(shared))
        told = (
            f"; the app and the stated values share {', '.join(repr(w) for w in besides)}" if besides else ""
        )
        if shared:
            fix = (
                "describe what you want to see in your own words — its columns and filters "
                f"({served_text(target.widget.schema())}) — not the catalog's"
            )
        else:
            # no wording of the hint takes away what the rest of the request says: the writer would otherwise
            # reword a hint that is not the cause, round after round
            fix = (
                "the hint is not the cause, so no rewording of it helps: pick a first target whose catalog entry "
                "does not repeat its app's name or its parameters, or other values"
            )
        errors.append(
            SourceError(
                story.file,
                "facts.find_hint",
                f"'{hint}' makes '{target.name}' the top lexical match among {app}'s catalog names and "
                f"descriptions (with the app and the stated values the prompt says; the hint shares "
                f"{', '.join(repr(w) for w in shared) or 'no stem itself'}{told}): a description-word matcher "
                f"finds it without looking at what it serves; {fix}",
            )
        )
    lexical_error = len(errors)
    index = BM25([served_text(d.schema()) for d in pool])
    ranked = index.rank(hint)
    # what the target serves beyond its catalog entry's words: a hint must find it by these alone, or the
    # description matcher finds it too — when they do not single it out, the two errors below take turns
    own = [
        w
        for w in sorted(set(words(served_text(target.widget.schema()))))
        if word_stem(w, cut=None) not in catalog[mine]
    ]
    by_own = index.rank(" ".join(own)) if own else []
    alone = (
        bool(by_own)
        and pool[by_own[0][0]].widget_id == target.widget_id
        and (len(by_own) < 2 or by_own[1][1] < by_own[0][1])
    )
    bind = (
        ""
        if alone
        else f"; what '{target.name}' serves beyond its catalog entry's words ({' '.join(own) or 'nothing'}) does "
        f"not single it out by content{' (it finds ' + repr(pool[by_own[0][0]].name) + ' as well or first)' if by_own else ''}, "
        "so a hint that finds it must say words of its catalog entry too, and this error and the other take "
        "turns whatever the wording: pick another first target"
    )
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
                f"{served_text(target.widget.schema())}{bind}",
            )
        )
    if lexical_error and bind:
        first = errors[0]
        errors[0] = SourceError(first.file, first.key, first.message + bind)
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
