"""A Find repair's target is seeded on its wrong values, off its schema defaults: a reader of values ("repair the
placed widget that stands furthest off its defaults") must not find it, whatever order it breaks a tie in. The
board puts a look-alike further off its defaults than the target, or, where no widget of the app has parameters
enough, as many as can tie it (`seeding._off_defaults_above`)."""

from __future__ import annotations

from certify.task import TaskSet, load_task
from simulator import DEFAULT_WORLD, World
from tests.conftest import ROOT

SHIPPED = ROOT / "tasksets" / "workspace_tasks"


def _off(definition, args) -> int:
    return sum(
        1
        for p in definition.params
        if p.get("paramName") in args and str(args[p["paramName"]]) != str(p.get("value"))
    )


def test_no_find_repair_target_is_the_placed_widget_furthest_off_its_defaults():
    world = World.load(DEFAULT_WORLD)
    taskset = TaskSet.load(SHIPPED)
    repairs, by_chance = 0, 0.0
    for path in taskset.task_files():
        task = load_task(path, taskset)
        board = task.setup.initial_state.dashboard if task.setup.initial_state else None
        fixed = [s.args.get("widget_uuid") for s in task.eval.reference_steps() if s.tool == "update_widget"]
        if task.level != 1 or board is None or len(board.widgets) < 2 or not fixed:
            continue
        repairs += 1
        scores = []
        for w in board.widgets:
            fixture = world.fixture_of(w.origin, task.setup.workspace_backends or None)
            assert fixture is not None
            scores.append(
                (_off(fixture.catalog.widgets[w.widget_id], w.data_args or {}), w.widget_uuid == fixed[0])
            )
        mine = next(s for s, is_target in scores if is_target)
        top = max(s for s, _ in scores)
        tied = sum(1 for s, _ in scores if s == top)
        assert not (mine == top and tied == 1), (
            f"{task.id}: the target alone stands furthest off its defaults"
        )
        by_chance += 1 / tied if mine == top else 0.0
    assert repairs >= 4, "the shipped Find levels hold repairs"
    # ties broken by chance: the target is taken on well under one task of the taskset's repairs
    assert by_chance < 1.0, by_chance
