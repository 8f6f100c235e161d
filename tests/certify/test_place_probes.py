"""The place probes: readers of where a hidden value stands, not of what the source says.

- `line_first` … `line_last`: the option on a fixed line of a policy note or a document's list of rules. The
  counterfactual copy of a Derive value moves the rule off its line (`moved_rule`), so on every shipped Derive
  task a fixed-line reader passes at most one of the two copies, not only on average.
- `catalog_first` / `catalog_last`: the first (last) listed widget among those that take the most stated values.
  The live product's listing order is the world's, so on an add it cannot be drawn; the target copy gives the
  target's content to a widget that takes its values, at another catalog place, and a reader of places passes at
  most one of the two copies. On a repair the board is ours: a fitting widget is placed on each side of the
  target in the listing's order, so the reader fails the task itself (tests/authoring/test_find_places.py).
"""

from __future__ import annotations

import pytest

from certify.counterfactual import Copy, copies, moved_rule
from certify.grader import grade
from certify.shortcuts import PROBES, run_shortcut
from certify.shortcuts.battery import rule_lines
from certify.shortcuts.positions import rule_line
from certify.task import TaskSet, load_task
from simulator import DEFAULT_WORLD, World
from tests.conftest import ROOT

SHIPPED = ROOT / "tasksets" / "workspace_tasks"
LINES = ["line_first", "line_second", "line_third", "line_last"]
PARAM = {
    "paramName": "status",
    "value": "Open",
    "options": [{"value": v, "label": v} for v in ("Open", "Draft", "Sent", "Approved", "In Review")],
}


def _says(word: str):
    return lambda line: word in line


def test_a_rule_swapped_in_place_moves_to_the_line_that_stated_the_other_option():
    before = "\n".join(
        [
            "The standing rule sets the status to In Review.",
            "The before-review rule sets the status to Draft.",
            "The trial rule sets the status to Sent.",
            "The after-review rule sets the status to Approved.",
        ]
    )
    after = before.replace("Draft", "@").replace("Sent", "Draft").replace("@", "Sent")
    moved = moved_rule(before, after, _says("Draft"), _says("Sent"), lambda line: "sets" in line)
    lines = moved.split("\n")
    # every place states what it stated; the phrases moved: the rule now sets Sent, on the trial rule's line
    assert rule_lines(moved, PARAM) == rule_lines(before, PARAM)
    assert lines[2] == "The before-review rule sets the status to Sent."
    assert lines[1] == "The trial rule sets the status to Draft."


def test_a_rule_whose_other_option_no_line_states_leaves_its_line_but_never_for_a_graded_rivals():
    before = "\n".join(
        [
            "The standing rule sets the status to In Review.",
            "The before-review rule sets the status to Draft.",
            "The after-review rule sets the status to Approved.",
            "The trial rule sets the status to Sent.",
        ]
    )
    after = before.replace("Draft", "Open")
    moved = moved_rule(
        before,
        after,
        _says("Draft"),
        _says("Open"),
        lambda line: "sets" in line,
        kept=_says("Approved"),  # the rival rule Derive's second view takes stays on its line
    )
    lines = moved.split("\n")
    assert lines.index("The before-review rule sets the status to Open.") != 1
    assert lines[2] == "The after-review rule sets the status to Approved."
    assert sorted(lines) == sorted(after.split("\n"))


def test_a_move_that_changes_what_a_reader_takes_is_not_made():
    before = "**The before-review rule**\nsets the status to Draft.\nThe trial rule sets the status to Sent."
    after = before.replace("Draft", "Open")
    reads = lambda text: text.split("\n")[1]  # noqa: E731 - the heading's rule sits on the line below
    assert (
        moved_rule(before, after, _says("Draft"), _says("Open"), lambda line: "sets" in line, reads) == after
    )


@pytest.fixture(scope="module")
def shipped():
    world = World.load(DEFAULT_WORLD)
    taskset = TaskSet.load(SHIPPED)
    return world, [load_task(p, taskset) for p in taskset.task_files()]


def _at_most_one_copy(shipped, probe: str, level: int, kind: str) -> None:
    """Where the probe passes a task of `level`, it fails the task's `kind` counterfactual copy: what it reads
    (a place, a line) does not decide the hidden value."""
    assert probe in PROBES
    world, tasks = shipped
    for task in tasks:
        if task.level != level or not grade(task, run_shortcut(probe, world, task)).passed:
            continue
        for cf in copies(world, task):
            if isinstance(cf, Copy) and cf.kind == kind:
                there = grade(cf.task, run_shortcut(probe, cf.world, cf.task)).passed
                assert not there, f"{probe} passes both copies of {task.id} ({cf.value} → {cf.other})"


@pytest.mark.parametrize("probe", LINES)
def test_a_reader_of_a_fixed_rule_line_passes_at_most_one_of_the_two_copies(shipped, probe):
    _at_most_one_copy(shipped, probe, 2, "carried")


def test_the_copy_of_a_noted_rule_puts_it_on_another_line(shipped):
    world, tasks = shipped
    moved = 0
    for task in tasks:
        at = rule_line(task)
        if task.level != 2 or at is None:
            continue
        first = next(
            (cf for cf in copies(world, task) if isinstance(cf, Copy) and cf.kind == "carried"), None
        )
        assert first is not None, task.id
        there = rule_line(first.task)
        assert there is not None and there[0] != at[0], f"{task.id}: the rule stays on line {at[0] + 1}"
        moved += 1
    assert moved >= 3, "the shipped Derive levels seed policy notes"


@pytest.mark.parametrize("probe", ["catalog_first", "catalog_last"])
def test_a_reader_of_catalog_places_passes_at_most_one_of_the_two_copies(shipped, probe):
    _at_most_one_copy(shipped, probe, 1, "target")


@pytest.mark.parametrize("probe", ["catalog_first", "catalog_last"])
def test_a_reader_of_catalog_places_passes_at_most_a_tenth_of_the_shipped_find_tasks(shipped, probe):
    # Per task the copies establish the level (above); across the taskset the share is the world's: where an
    # app lists only the target and one other widget that take the stated values, the target is one end of
    # them, and a reader of that end passes. The default world's filters are shared widely enough that this
    # holds for at most a tenth of the shipped Find tasks (the bar independent players are held to).
    world, tasks = shipped
    find = [t for t in tasks if t.level == 1]
    won = sorted(t.id for t in find if grade(t, run_shortcut(probe, world, t)).passed)
    assert find and len(won) <= 0.10 * len(find), f"{probe} passes {len(won)}/{len(find)} of Find: {won}"


PLACED = ["positional", "second_placed", "third_placed", "fourth_placed", "fifth_placed"]


@pytest.mark.parametrize("probe", PLACED)
def test_a_reader_of_a_board_place_passes_at_most_one_of_the_two_copies(shipped, probe):
    """A reader of a fixed place of the board (or, for an add, of the app's catalog) wins a task now and then
    by where the target stands; the target copy gives the target's content to another widget, so it never
    wins both."""
    _at_most_one_copy(shipped, probe, 1, "target")


def test_no_fixed_board_place_holds_more_than_a_tenth_of_the_find_targets(shipped):
    """Every index of the placed order, every grid row and every cell holds a Find repair's target on at most a
    tenth of the level's tasks (`seeding.dealt_places`), and never the first or the last placed."""
    from certify.shortcuts.positions import place_shares, target_place

    _, tasks = shipped
    held = place_shares(tasks)["level1"]
    total = held["tasks"][None]
    assert sum(held["index"].values()) >= 6, "the shipped Find repairs read a position"
    for kind in ("index", "row", "cell"):
        for place, count in held[kind].items():
            assert count <= 0.10 * total, f"{kind} {place}: {count}/{total}"
    for task in tasks:
        where = target_place(task)
        placed = len(task.setup.initial_state.dashboard.widgets) if where else 0
        if task.level == 1 and where is not None and placed >= 3:
            assert 0 < where[0] < placed - 1, task.id
