"""Resolving a story: every fact checked against the world (with the connected backends) and gathered into a
`ResolvedStory`, or the errors, all at once, naming the file and the field."""

from __future__ import annotations

import re
from typing import Any, cast

from simulator import World, option_values, value_allowed

from ..analyze import resolve_analyze
from ..sources import SourceError, Story
from ..suggest import did_you_mean, listing
from .findability import (
    _findability_errors,
    _hint_verb_errors,
    _hinted_first,
    _signature_errors,
    content_hints,
    source_format,
)
from .giveaway import (
    _dashboard_name_errors,
    _giveaway_errors,
    _hidden_option_errors,
    _policy_phrase_errors,
    _purpose_errors,
)
from .governance import _words, resolve_governance
from .ground import _ground_fact, _skimmed_errors
from .model import FactErrors, FindPointer, Governance, ResolvedStory, ResolvedTarget
from .pointer import find_pointers
from .policy import _policy_errors, _resolve_policy_document
from .reads import _read_policy_errors, _record_errors
from .said import rival_said, second_view, value_text
from .targets import _board_errors, _options_hint, _origins, _shared_param_errors, _widget_hint
from .working import _listed_errors, stand_ins, twin_values, working_errors

# (spaced by any whitespace: the storyline is wrapped prose, and "exactly as\nserved" asks the same)
READ_PROSE = re.compile(
    r"read-and-note|read\s+and\s+note|record(?:s|ing)?\s+(?:the|its|their)\s+(?:facts|figures|values)|"
    r"\bnote\s+with\b|exactly\s+as\s+served",
    re.I,
)


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
    # Each later fact is checked when what it depends on is sound, whatever else is wrong: a writer sees every
    # independent mistake in one run, and still one error per mistake (a fact is not blamed for an earlier one).
    # The policy's document needs the targets and the carried value; the Ground fact, the targets, the
    # governance source and the values left wrong.
    policy_doc = None
    said_keys = [e.key for e in errors]
    if sound and carried_target >= 0 and not any(k.startswith("facts.policy") for k in said_keys):
        policy_param = targets[carried_target].widget.param(carried_key) or {}
        policy_doc, more = _resolve_policy_document(world, story, policy_param, carried_value)
        errors += more
    if (
        sound
        and governance is not None
        and facts.governance.fact is not None
        and not any(k.startswith(("facts.seeded_wrong", "facts.governance")) for k in said_keys)
    ):
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
    if errors and not (sound and carried_target >= 0):
        raise FactErrors(errors)
    # with the targets and the carried value sound, what the ladder calibration would block on is worked out
    # even when another fact is wrong, and said beside its errors (`FactErrors.blocking`)
    words = facts.dashboard.split()
    tab_name = facts.tab or (words[-1] if len(words) > 1 else facts.dashboard)
    warnings: list[str] = []
    carried_param = targets[carried_target].widget.param(carried_key)
    story_rival = facts.policy.distractor if facts.policy is not None else None
    if (
        policy_doc is not None
        and story_rival is not None
        and carried_param is not None
        and str(story_rival.value) == str(carried_param.get("value"))
        and policy_doc.rival is not None
        and str(policy_doc.rival[1]) != str(story_rival.value)
    ):
        # said, not silently done: the level the writer reads is not quite the level they wrote
        warnings.append(
            f"facts.policy.distractor.value {story_rival.value!r} is {carried_key}'s default, which a view added "
            f"without that parameter shows unread: Derive's second view takes a rule the pipeline coins beside "
            f"yours in the note ('{policy_doc.rival[0]}' on {policy_doc.rival[1]!r}); give the distractor "
            "another option to have the level ask for your own"
        )
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
    # Derive's second view on a rival rule's value leaves the level something to read either way
    # (`second_view`): the carried value on the default is then no giveaway, nor rows that ignore it — where
    # the pipeline plants the policy's definition and its rival itself (a source-format story: the four compat
    # templates certify so). A writer's own policy document is read as they wrote it, and a second view on it
    # does not make every such Derive certify (new_personas' keel_liquidity_stress): the errors stay theirs.
    viewed = (
        second_view(story, policy_doc, targets[carried_target], carried_key, carried_value)
        if carried_target >= 0 and source_format(story)
        else None
    )
    if (
        carried_param is not None
        and viewed is None
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
    if (
        carried_param is not None
        and viewed is None
        and 0 < len(option_values(carried_param)) <= 2
        and (policy_doc is None or policy_doc.kind != "note")
    ):
        # two options and no second view: of a document defining the two rules a reader of its first rule or
        # of its last (the battery's source and tail skimmers) takes the carried value whichever order the
        # rules stand in. A note the pipeline writes (`ruled_note`) is not refused: it defines further rules
        # on the two options, as many of each, and never puts the story's rule first or last.
        blocking.append(
            SourceError(
                file,
                "facts.policy.carries",
                f"the policy carries {carried_key}, which declares only "
                f"{' and '.join(repr(value_text(v)) for v in option_values(carried_param))}: an agent that "
                "guesses, or reads only the first or the last rule of the policy's document, gets the Derive "
                "level right without reading the rule asked for; carry a parameter with three or more options",
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
                f"'{pointer.rival_entry()}' for the {pointer.rival_label}"
                + (
                    f" and {len(pointer.more)} more ({', '.join(repr(said) for _, _, said in pointer.more)})"
                    if pointer.more
                    else ""
                )
                + ", and the request says "
                f"'{pointer.references()[0]}'"
                + (
                    f" (its declared options alone single '{targets[0].name}' out, so the board holds "
                    f"{len(pointer.twins)} twin instances of it, and the note names its instance as "
                    f"'{pointer.entry(targets[0].name)}')"
                    if pointer.twins
                    else ""
                )
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
    if governance is not None and facts.governance.fact is not None:
        blocking += _skimmed_errors(world, story.file, governance, targets)
    blocking += _dashboard_name_errors(story, targets[0])
    if kind == "read" and carried_target == 0 and viewed is None:
        blocking += _read_policy_errors(world, story, backends, targets[0], carried_key, carried_value)
    sets = governance.sets if governance is not None else None
    grounded = next((t.widget.param(sets) for t in targets if sets and sets in t.params), None)
    hidden_params = [p for p in (carried_param, grounded) if p is not None]
    blocking += _hidden_option_errors(story, list({str(p["paramName"]): p for p in hidden_params}.values()))
    analyzed = (analyze.figure, analyze.label) if analyze is not None else ()
    standing = stand_ins(world, story, targets, backends, seeded_wrong, facts.record, analyzed)
    blocking += working_errors(story, targets[0], standing, twin_values(world, story, targets[0], backends))
    if errors:
        said = {e.key for e in errors}
        raise FactErrors(errors, [e for e in blocking if e.key not in said])
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
        standing,
    )
