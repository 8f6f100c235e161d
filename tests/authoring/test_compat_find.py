"""Find on the source benchmark's world, where the request's own words name the target: the pointers the pipeline
may plant, the pool Find's budget counts, and the target Find describes when the first cannot be found."""

from __future__ import annotations

import pytest

from tests.conftest import COMPAT, COMPAT_WORLD, needs_compat

TEMPLATES = COMPAT / "task_templates"


@pytest.fixture(scope="module")
def compat():
    from authoring.checks import check_persona
    from simulator import World

    world = World.load(COMPAT_WORLD)
    reports = {
        p: check_persona(TEMPLATES, p, world, ladder=False) for p in ("compliance_risk", "fund_operations")
    }
    return world, reports


def _story(reports, persona, slug):
    return next(r for r in reports[persona].resolved if r.story.slug == slug)


def test_no_pointer_label_reads_as_fencing_off_a_twin():
    """ "the second look" made the agents take the whole sentence as one to leave alone (TWIN), so the Find
    rung found nothing on a pointer drawn with it: every label the pipeline may say is read as a target."""
    from authoring.factcheck import POINTER_LABELS, FindPointer
    from certify import reads_as_twin

    assert reads_as_twin("leave the second view alone") and reads_as_twin("the second look")
    for pair in POINTER_LABELS:
        for label in pair:
            pointer = FindPointer("Desk Shortlist", label, "x", "w", "W")
            assert not any(reads_as_twin(r) for r in pointer.references()), label


@needs_compat
def test_further_pointers_lend_a_rivals_words_never_a_widgets_whole_name(compat):
    """Where the dashboard and the stated values share words with the target's name ("Alert Sweep", status Open
    for Open Alert Metrics), the further pointers name their note with words of their rival's name: never all of
    them, never any widget's whole name; the rule author plants one of them, and its Find trials (the gate's
    battery, the Find rung) pass."""
    from authoring.roles.author import first_task
    from certify import states_value

    world, reports = compat
    for persona, slug in (("compliance_risk", "alert_sweep"), ("fund_operations", "settlement_watch")):
        story = _story(reports, persona, slug)
        target = story.targets[0]
        first, *further = story.spare_pointers
        assert first.note == f"{story.facts.dashboard} Shortlist" and further
        fixture = world.fixture_of(target.origin, list(world.default_backends))
        for pointer in further:
            lent = pointer.note.removesuffix(" Shortlist")
            assert set(lent.split()) <= set(pointer.rival_name.split()) and lent != pointer.rival_name
            assert not any(
                states_value(pointer.note, d.name, any_case=True) for d in fixture.catalog.widgets.values()
            )
        task, found = first_task(world, reports[persona], story, 1, list(world.default_backends))
        notes = {
            n["name"] for n in task["setup"]["initial_state"]["dashboard"].get("generated_widgets") or []
        }
        assert found and notes & {p.note for p in further} and first.note not in task["prompt"]


@needs_compat
def test_find_budget_counts_the_schema_reads_of_the_origin_when_the_story_names_no_app(compat):
    """A target given without an app is described "from <origin>": the Find rung reads the schema of every
    widget of the origin, and the budget leaves room for each (a category that is no app narrows nothing)."""
    from authoring.roles.author import first_task

    world, reports = compat
    story = _story(reports, "fund_operations", "form_tooling")
    assert story.targets[0].app is None and story.targets[0].widget.definition.get("category")
    task, found = first_task(world, reports["fund_operations"], story, 1, list(world.default_backends))
    fixture = world.fixture_of(story.targets[0].origin, list(world.default_backends))
    read = {
        s["args"]["widget_id"] for s in task["eval"]["required_tools"] if s["tool"] == "get_widget_schema"
    }
    assert read == set(fixture.catalog.widgets) and found
    assert task["eval"]["max_turns"] > len(read)


@needs_compat
def test_find_describes_another_target_when_nothing_finds_the_first_past_the_word_matchers(compat):
    """document_room's first target, Document Search, is the only widget of its origin taking its values, and the
    request's stated label says its name's words: Find points at the other target instead and names the first."""
    from authoring.roles.author import first_task

    world, reports = compat
    story = _story(reports, "fund_operations", "document_room")
    task, found = first_task(world, reports["fund_operations"], story, 1, list(world.default_backends))
    (hidden,) = [h for h in task["meta"]["hidden"] if h["kind"] == "target"]
    assert found and hidden["value"] == story.targets[1].name and hidden["source"].startswith("note:")
    assert story.targets[0].name in task["prompt"] and story.targets[1].name not in task["prompt"]
    graded = {w["widget_id"] for w in task["eval"]["required_widgets"]}
    assert graded == {t.widget_id for t in story.targets}
