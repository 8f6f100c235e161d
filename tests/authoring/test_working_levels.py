"""Which widget each level works on (`factcheck.working`): every level but Find works on a stand-in of the
target Find hides, drawn for its own task id, and a stand-in for Derive, Ground or Compose takes the value that
level hides on the target (Derive's carried parameter, the one Ground's fact sets), or the level would hide
another value than the one graded at every level."""

from __future__ import annotations

from functools import cache

from authoring.checks import check_persona
from authoring.factcheck.working import _kept_params, execute_stories, stand_ins_for
from simulator import World
from tests.conftest import ROOT


@cache
def _world() -> World:
    from authoring.overlay import world_for

    return World.load(world_for(ROOT, None))


@cache
def _resolved(persona: str):
    return {r.story.slug: r for r in check_persona(ROOT, persona, _world()).resolved}


def test_a_stand_in_above_find_takes_the_value_the_level_hides_on_the_target():
    backends = list(_world().default_backends)
    checked = 0
    for persona in ("portfolio_manager", "fund_operations"):
        for story in _resolved(persona).values():
            first = story.targets[0]
            for level in (2, 3, 4):
                keeps = _kept_params(story, 0, level)
                for stand in stand_ins_for(story, _world(), backends, first.name, level):
                    checked += 1
                    assert stand.widget_id != first.widget_id and stand.name != first.name
                    for key in keeps:
                        if key in first.params:
                            assert stand.params.get(key) == first.params[key], (story.story.slug, level, key)
    assert checked > 20


def test_the_stand_ins_are_drawn_per_level():
    """The order is drawn by the level's task id: a tie between stand-ins breaks another way at another level,
    and Execute's drawn order is the one the story resolved with."""
    backends = list(_world().default_backends)
    orders = set()
    for persona in ("portfolio_manager", "fund_operations"):
        for story in _resolved(persona).values():
            name = story.targets[0].name
            assert stand_ins_for(story, _world(), backends, name, 0) == story.execute_stand_ins
            orders.add(
                tuple(
                    tuple(s.name for s in stand_ins_for(story, _world(), backends, name, lv)) for lv in (0, 2)
                )
            )
    assert any(a != b for a, b in orders)


def test_a_level_whose_hidden_value_no_stand_in_takes_works_on_the_target():
    """ledgerlight_stale_marks asks for a judged analysis of stale_days: Execute works on the one other widget
    serving that figure (Pricing Exceptions, which takes none of the stated values), but Derive carries the vendor
    and no widget serving the figure takes it, so Derive has nothing to stand in for the target (it works on the
    target and says why, `meta.on_target`; the fairness review reports it)."""
    story = _resolved("fund_operations")["ledgerlight_stale_marks"]
    backends = list(_world().default_backends)
    assert [s.targets[0].name for s in execute_stories(story, _world(), backends, None, 0)] == [
        "Pricing Exceptions"
    ]
    assert execute_stories(story, _world(), backends, None, 2) == []
