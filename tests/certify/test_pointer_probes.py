"""The pointer probes (`pointer_first`, `pointer_last`: the widget on a fixed line of a board note listing the
app's widgets) over the shipped Find tasks found by a planted pointer: the entries' order is drawn from the story
and each entry's name, and the counterfactual copy exchanges the labels with every name kept on its line, so a
reader of a fixed line takes the same widget in both copies and passes at most one of them — on every task, not
only on average. The share of tasks a fixed line wins is `positions.pointer_line_share` (test_shipped)."""

from __future__ import annotations

import pytest

from certify.counterfactual import Copy, copies
from certify.grader import grade
from certify.shortcuts import PROBES, run_shortcut
from certify.task import TaskSet, load_task
from simulator import DEFAULT_WORLD, World
from tests.conftest import ROOT

SHIPPED = ROOT / "tasksets" / "workspace_tasks"


@pytest.fixture(scope="module")
def pointed():
    world = World.load(DEFAULT_WORLD)
    taskset = TaskSet.load(SHIPPED)
    out = []
    for path in taskset.task_files():
        task = load_task(path, taskset)
        hidden = task.meta.hidden if task.meta else []
        if not any(h.kind == "target" and (h.source or "").startswith("note:") for h in hidden):
            continue
        out += [(task, cf) for cf in copies(world, task) if isinstance(cf, Copy) and cf.kind == "target"]
    assert len(out) >= 5, "the shipped Find levels plant pointers"
    return world, out


@pytest.mark.parametrize("probe", ["pointer_first", "pointer_last"])
def test_a_reader_of_a_fixed_pointer_line_passes_at_most_one_of_the_two_copies(pointed, probe):
    assert probe in PROBES
    world, pairs = pointed
    read = 0
    for task, cf in pairs:
        here = grade(task, run_shortcut(probe, world, task)).passed
        there = grade(cf.task, run_shortcut(probe, cf.world, cf.task)).passed
        assert not (here and there), f"{probe} passes both copies of {task.id}"
        # what it reads is the note: the widget it works on is one the note lists
        episode = run_shortcut(probe, world, task)
        read += any(e.tool in ("create_widget", "update_widget", "get_widget_data") for e in episode.events)
    assert read == len(pairs), f"{probe} acted on {read} of {len(pairs)} pointer tasks"
