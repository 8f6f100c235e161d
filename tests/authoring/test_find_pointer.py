"""Find by pointer: a Find level whose target serves nothing its siblings do not (the compat world's reconstructed
widgets: the same filters, no columns) is found through a note planted on its board that lists the target under
one coined entry beside a rival entry naming another widget of its app; the request points at the entry only."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.conftest import COMPAT, COMPAT_WORLD, needs_compat

TEMPLATES = COMPAT / "task_templates"
PERSONA, STORY, TARGET = "portfolio_manager", "morning_briefing", "Trade Ideas"


@pytest.fixture(scope="module")
def drafted(tmp_path_factory):
    from authoring.draft import draft_persona
    from simulator import World

    world = World.load(COMPAT_WORLD)
    out = draft_persona(
        TEMPLATES, PERSONA, world, tmp_path_factory.mktemp("t") / "tasksets", "workspace_tasks"
    )
    return world, out


def _task(drafted, level: int, counterfactual: bool = False):
    from authoring.taskset import STANDARD_DEFAULTS
    from certify import parse_task

    raw = json.loads(json.dumps(drafted[1].tasks[f"{STORY}_level{level}"].raw))
    if counterfactual:
        raw["eval"]["counterfactual"] = "required"
    return parse_task(raw, f"{raw['id']}.json", STANDARD_DEFAULTS)


def _passes(world, task, agent: str) -> bool:
    from certify import resolve_agent, run_trial

    return bool(asyncio.run(run_trial(world, task, resolve_agent(agent))).passed)


@needs_compat
def test_a_pointer_found_find_level_certifies_and_only_the_find_rung_follows_it(drafted):
    world, out = drafted
    authored = out.tasks[f"{STORY}_level1"]
    assert authored.cert.certified
    task = _task(drafted, 1)
    (hidden,) = task.meta.hidden
    assert hidden.kind == "target" and hidden.value == TARGET and hidden.source == f"note:{STORY_NOTE}"
    (note,) = authored.raw["setup"]["initial_state"]["dashboard"]["generated_widgets"]
    assert note["name"] == STORY_NOTE
    from authoring.factcheck.pointer import POINTER_ENTRIES

    entries = note["data"].splitlines()
    # the target beside as many rivals of its app as the note holds (a reader of a fixed line is right on
    # about one task in as many)
    assert 3 <= len(entries) <= POINTER_ENTRIES and sum(e.endswith(f": {TARGET}") for e in entries) == 1
    # the request points at the target's entry: it names neither the widget nor the rival
    rival = next(e.split(": ", 1)[1] for e in entries if not e.endswith(f": {TARGET}"))
    label = next(e.split(": ", 1)[0] for e in entries if e.endswith(f": {TARGET}"))
    assert TARGET not in task.prompt and rival not in task.prompt
    assert f"for the {label.lower()}" in task.prompt and STORY_NOTE in task.prompt
    # ladder-0 does not read notes for a widget, ladder-1 follows the pointer; ladder-1 still fails Derive
    assert not _passes(world, task, "ladder-0")
    assert _passes(world, task, "ladder-1")
    assert not _passes(world, _task(drafted, 2), "ladder-1")


@needs_compat
def test_the_battery_word_matchers_do_not_pick_the_pointer_found_target(drafted):
    from certify import lexical_picks, run_battery

    world, _ = drafted
    task = _task(drafted, 1)
    catalog = world.fixture_of("Bench Stark Enterprise", None).catalog
    app = "Portfolio Command Center"
    pool = [d for d in catalog.widgets.values() if d.definition.get("category") == app]
    entries = [{"name": d.name, "description": d.definition.get("description") or ""} for d in pool]
    mine = next(i for i, d in enumerate(pool) if d.name == TARGET)
    assert mine not in lexical_picks(task.prompt, entries).values()
    assert not [r.name for r in run_battery(world, task) if r.passed]


@needs_compat
def test_the_counterfactual_copy_swaps_the_pointer_and_moves_the_reference(drafted):
    from certify.counterfactual import Copy, copies, play
    from certify.episode import replay
    from certify.gates import GATES, Subject
    from certify.grader.core import grade

    world, _ = drafted
    task = _task(drafted, 1, counterfactual=True)
    (cf,) = copies(world, task)
    assert isinstance(cf, Copy) and cf.kind == "target" and cf.value == TARGET and cf.other != TARGET
    (note,) = cf.task.model_dump(mode="json")["setup"]["initial_state"]["dashboard"]["generated_widgets"]
    (original,) = task.model_dump(mode="json")["setup"]["initial_state"]["dashboard"]["generated_widgets"]
    # the same entries, the target's and the rival's labels exchanged while every name stays on its line (a
    # reader of a fixed line takes the same widget in both copies); the world is the original's
    assert note["data"] != original["data"] and sorted(note["data"].split()) == sorted(
        original["data"].split()
    )
    names = [line.split(": ", 1)[1] for line in note["data"].splitlines()]
    assert names == [line.split(": ", 1)[1] for line in original["data"].splitlines()]
    labels = [line.split(": ", 1)[0] for line in note["data"].splitlines()]
    was = [line.split(": ", 1)[0] for line in original["data"].splitlines()]
    assert sum(a != b for a, b in zip(labels, was, strict=True)) == 2 and sorted(labels) == sorted(was)
    assert cf.world.backends == world.backends
    # the reader of the pointer reaches the other state; the original reference fails the copy
    assert grade(cf.task, play(cf.world, cf.task, "ladder-1")).passed
    steps = [(s.tool, s.args) for s in task.eval.reference_steps()]
    assert not grade(cf.task, replay(cf.world, cf.task, steps, None)).passed
    result = GATES["counterfactual"](Subject(f"{task.id}.json", world, task))
    assert result.ok, result.detail


@needs_compat
def test_check_says_where_a_pointer_is_planted_and_refuses_a_target_no_pointer_can_name():
    from authoring.checks import check_persona
    from simulator import World

    report = check_persona(TEMPLATES, PERSONA, World.load(COMPAT_WORLD))
    warned = " ".join(w.message for w in report.warnings)
    assert f"plants a note '{STORY_NOTE}' on the Find board" in warned
    resolved = {r.story.slug: r for r in report.resolved}
    assert resolved[STORY].find_pointer is not None and not resolved[STORY].ladder_errors
    # Live Grid: the other widgets of its origin under a Symbol filter draw their options from an endpoint, which
    # takes any symbol (as the product's does): one stands beside it as the rival, and check refuses nothing
    price = resolved["price_watch"]
    (rival,) = {p.rival for p in price.spare_pointers}
    fixture = World.load(COMPAT_WORLD).fixture_of(price.targets[0].origin)
    assert fixture.catalog.widgets[rival].param("symbol").get("optionsEndpoint")
    assert not [e for e in [*report.errors, *report.ladder_errors] if "price_watch" in e.file]


@needs_compat
def test_no_pointer_is_planted_where_no_other_widget_takes_the_stated_values():
    """A widget whose stated values no sibling takes (Daloopa's Document Search, the only one with a document type)
    has no rival to stand beside it, so no pointer can name it (check then refuses its Find level with the fix,
    unless Find describes another target of the story)."""
    from authoring.checks import check_persona
    from authoring.factcheck import find_pointers
    from simulator import World

    world = World.load(COMPAT_WORLD)
    report = check_persona(TEMPLATES, "fund_operations", world, ladder=False)
    story = next(r for r in report.resolved if r.story.slug == "document_room")
    assert story.targets[0].name == "Document Search"
    assert find_pointers(world, story.story, story.targets, list(world.default_backends)) == []


# coined: the dashboard's name ("PM Morning Briefing") would repeat, on the note and in the request, words a
# word matcher already reads there
STORY_NOTE = "Shortlist"


@needs_compat
def test_the_pointer_note_and_its_labels_say_no_word_of_the_app_catalog_or_the_dashboard():
    from authoring.checks import check_persona
    from authoring.factcheck import find_said
    from certify import word_stem, words
    from simulator import World

    world = World.load(COMPAT_WORLD)
    report = check_persona(TEMPLATES, PERSONA, world)
    resolved = {r.story.slug: r for r in report.resolved}[STORY]
    pointer, target = resolved.find_pointer, resolved.targets[0]
    assert pointer is not None
    app = target.widget.definition.get("category")
    catalog = world.fixture_of(target.origin, None).catalog.widgets.values()
    taken = " ".join(
        f"{d.name} {d.definition.get('description') or ''}"
        for d in catalog
        if d.definition.get("category") == app
    )

    def stems(text: str) -> set[str]:
        return {word_stem(w, cut=None) for w in words(text)}

    coined = f"{pointer.note} {pointer.label} {pointer.rival_label}"
    assert not stems(coined) & stems(f"{taken} {find_said(resolved.story, target)}")


def test_no_pointer_label_reads_as_a_twin_fenced_off_or_as_an_instruction():
    # "the widget listed for the second look" read as "the second …", a twin the request fences off: the Find
    # rung then found no description at all
    from authoring.factcheck import POINTER_LABELS, POINTER_NOTES
    from certify.agents.request import read_request, verb_kind

    for label in [label for pair in POINTER_LABELS for label in pair]:
        assert not [w for w in label.split() if verb_kind(w) is not None], label
        for note in POINTER_NOTES:
            prompt = f"Read the widget listed for the {label} on the {note} from Acme's Desk."
            assert not read_request(prompt).in_twin(prompt.index(" from ")), (label, note)


@needs_compat
def test_a_target_its_options_alone_single_out_stands_among_twins_else_check_refuses_it(monkeypatch):
    """holdings_watch repairs Live Grid, the one widget of its app whose declared options list AAPL (its Symbol
    siblings draw theirs from an endpoint): the pointer's rival is a twin instance of the target on another
    option, each entry naming its instance by what it shows, and `check` has nothing to refuse. With too few
    other options for the twins (here: more twins asked than Symbol offers), `check` refuses the story naming
    facts.targets[0] and why."""
    from authoring.factcheck import find_pointers, resolve, working
    from authoring.sources import load_story
    from simulator import World

    world = World.load(COMPAT_WORLD)
    story = load_story(TEMPLATES / "client_advisor" / "holdings_watch.md", "client_advisor")
    resolved = resolve(world, story, list(world.default_backends))
    target = resolved.targets[0]
    twins = working.twin_values(world, story, target, list(world.default_backends))
    assert len(twins) == working.FIND_TWINS
    assert all(t["symbol"] not in ("AAPL", "TSLA") for t in twins) and len({t["symbol"] for t in twins}) == 2
    (pointer,) = find_pointers(world, story, resolved.targets, list(world.default_backends))
    assert pointer.rival == target.widget_id and pointer.entry(target.name) == "Live Grid on TSLA"
    assert pointer.rival_entry() == f"Live Grid on {twins[0]['symbol']}"
    assert not working._listed_errors(world, story, target, list(world.default_backends))

    monkeypatch.setattr(working, "FIND_TWINS", 4)  # Symbol offers 3 options besides AAPL and TSLA
    assert not working.twin_values(world, story, target, list(world.default_backends))
    (error,) = working._listed_errors(world, story, target, list(world.default_backends))
    assert (
        error.key == "facts.targets[0]" and "fewer than 4 other options for twin instances" in error.message
    )
