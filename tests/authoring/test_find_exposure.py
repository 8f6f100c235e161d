"""The rule author words Find so that as few similarity measures as it can find the target from names and
descriptions (`certify.lexical_exposure`): of the wordings of the story's own description that leave the shortcut
agents failing and the Find rung passing it keeps the least exposed, and plants a pointer instead when that is
found by fewer."""

from __future__ import annotations

import pytest

from authoring.checks import check_persona
from authoring.roles.author.context import own_deadlines
from authoring.roles.author.level import Level
from authoring.roles.author.rules import (
    FIND_DRAWS,
    _compiled,
    _find_rung_passes,
    draft_context,
    find_exposure,
)
from authoring.roles.author.seeding import seed_board
from certify import parse_task, run_battery
from simulator import DEFAULT_WORLD, World
from tests.conftest import ROOT

# a read whose dashboard shares its target's name words, and a repair on a six-widget board
STORIES = [("fund_operations", "lantern_fails_handover"), ("trading_desk", "flow_credit_liquidity_limit")]


@pytest.mark.parametrize(("persona", "slug"), STORIES)
def test_the_kept_find_wording_is_the_least_exposed_of_those_that_pass(persona, slug):
    from authoring.roles.author.context import story_setup
    from authoring.roles.author.plan import plan
    from authoring.roles.author.wording import Wording
    from simulator import TOOL_NAMES

    world = World.load(DEFAULT_WORLD)
    backends = list(world.default_backends)
    report = check_persona(ROOT, persona, world, backends)
    resolved = next(r for r in report.resolved if r.story.slug == slug)
    siblings = tuple(r.story.slug for r in report.resolved)
    ctx = draft_context(world, report.source, resolved, siblings, backends, own_deadlines(report.resolved))
    kept, exposed = _compiled(ctx, 1)
    level = Level(ctx, 1)
    assert exposed is not None and exposed == len(find_exposure(level, kept))

    # every wording of the story's own description the author could have kept instead, on the board seeded
    # without a pointer (a kept pointer plants its note and its rival)
    board = seed_board(level)
    setup = story_setup(
        ctx,
        [w.wire(ctx.story.tab_id) for w in board.widgets],
        [n.wire(ctx.story.tab_id) for n in board.notes],
        allowed_tools=TOOL_NAMES,
    )
    planned = plan(level, board, setup)
    task = {**kept, "prompt": "", "setup": setup, "eval": planned.eval}
    own = ctx.story.find_hints or [ctx.story.find_hint]
    passing = []
    for hint in own:
        for draw in range(FIND_DRAWS):
            task["prompt"] = Wording(level, board, planned, hint).phrase(task, "", draw)
            parsed = parse_task(task, f"{task['id']}.json", ctx.defaults)
            if not any(r.passed for r in run_battery(world, parsed)) and _find_rung_passes(ctx, parsed):
                passing.append(len(find_exposure(level, task)))
    assert passing, "no wording of the story's own description passes: the pointer is the only way"
    assert exposed <= min(passing)
    if "Shortlist" in kept["prompt"]:
        # the pointer is planted only when it is found by fewer measures than every own wording
        assert exposed < min(passing)
