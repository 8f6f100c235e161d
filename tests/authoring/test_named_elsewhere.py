"""A level of one story naming what another story's Find hides (round-7 players: cross_story_copier read
breakwater's Find answer, Pricing Exceptions, in ledgerlight's Execute request). The published set shows every
request, so the rule author works a level on such a widget only where nothing else stands in, and the fairness
review reports the ones that remain."""

from __future__ import annotations

from types import SimpleNamespace

from authoring.roles.author.rules import _others_first
from authoring.roles.fairness import named_elsewhere
from certify.task import TaskSet, load_task
from tests.conftest import ROOT


def _story(name: str | None):
    target = SimpleNamespace(name=name or "Own")
    return SimpleNamespace(standing_in=object() if name else None, targets=[target], stand_in_at=0)


def test_a_stand_in_another_story_hides_at_find_is_tried_last_and_the_order_kept_otherwise():
    ctx = SimpleNamespace(
        story=SimpleNamespace(targets=[SimpleNamespace(name="Own")]), finds=("Own", "Theirs")
    )
    stories = [_story("Theirs"), _story("A"), _story(None), _story("B")]
    ordered = _others_first(ctx, stories)
    assert [s.targets[0].name for s in ordered] == ["A", "Own", "B", "Theirs"]
    # the story's own Find target is not "another story's"
    assert _others_first(ctx, [_story("Own"), _story("A")])[0].targets[0].name == "Own"


def test_the_fairness_review_names_the_level_that_names_another_storys_find_answer():
    taskset = TaskSet.load(ROOT / "tasksets" / "workspace_tasks")
    tasks = [load_task(p, taskset) for p in taskset.task_files()]
    by_persona: dict[str, list] = {}
    for t in tasks:
        by_persona.setdefault(t.meta.persona, []).append(t)
    found = {}
    for persona_tasks in by_persona.values():
        for story in {t.meta.story for t in persona_tasks}:
            levels = {t.level: t for t in persona_tasks if t.meta.story == story}
            for lv, reason in named_elsewhere(story, levels, persona_tasks).items():
                found[f"{story}_level{lv}"] = reason
    # the one shipped case: no other widget serves ledgerlight's analysed figure at Execute
    assert set(found) == {"ledgerlight_stale_marks_level0"}, found
    assert "breakwater_pricing_triage_level1" in found["ledgerlight_stale_marks_level0"]
    assert "Pricing Exceptions" in found["ledgerlight_stale_marks_level0"]
