"""The readings shortcut agents share (`certify.shortcuts.generic`'s cache of what a prompt and a listing give) are
keyed by what the agent sees, so a counterfactual copy — the same prompt against a world whose catalog says
something else under the same ids — never reuses a reading of the original: an agent plays the copy exactly as
it would with nothing remembered."""

from __future__ import annotations

import pytest

from certify.counterfactual import Copy, copies
from certify.shortcuts import PROBES, SHORTCUTS, generic, run_shortcut
from certify.task import Task, TaskSet, load_task
from simulator import DEFAULT_WORLD, World
from tests.conftest import ROOT

SHIPPED = ROOT / "tasksets" / "workspace_tasks"
AGENTS = [*SHORTCUTS, *PROBES]
# Agents that play a target copy exactly as the original: a pointer copy exchanges the entries' labels and keeps
# every name on its line, and these read a fixed line (so they pass at most one of the two: test_pointer_probes);
# the catalog readers take a fixed place of the catalog's order, and the board readers (`second_placed` …) a fixed
# place of the board, which no copy changes (so they pass at most one of the two: test_place_probes).
SAME_IN_BOTH = {
    "pointer_first",
    "pointer_last",
    "catalog_first",
    "catalog_last",
    "second_placed",
    "third_placed",
    "fourth_placed",
    "fifth_placed",
}
# Agents that never read what a target copy exchanges (a widget's name, description and rows): they take the
# widgets that accept the stated values, or read only rules and documents. A copy gives the target's contents
# to a widget that accepts the same values (the default world shares an app's filters), so they play both
# copies alike on the shipped set; for them `warm == cold` is checked, and the readers of contents show the
# test is not vacuous (test_the_readers_of_contents_play_some_copy_otherwise).
CONTENT_BLIND = {
    "enumerator",
    "note_stuffer",
    "neighbour_copier",
    "title_stuffer",
    "phrase_guesser",
    "source_skimmer",
    "tail_skimmer",
    "line_first",
    "line_second",
    "line_third",
    "line_last",
}
MOVED: dict[str, int] = {}


@pytest.fixture(scope="module")
def world() -> World:
    return World.load(DEFAULT_WORLD)


@pytest.fixture(scope="module")
def find_copies(world) -> list[tuple[Task, Copy]]:
    """Every shipped Find task with its target counterfactual (ids and places kept, contents exchanged)."""
    taskset = TaskSet.load(SHIPPED)
    out = []
    for path in taskset.task_files():
        if not path.stem.endswith("_level1"):
            continue
        task = load_task(path, taskset)
        out += [(task, cf) for cf in copies(world, task) if isinstance(cf, Copy) and cf.kind == "target"]
    assert len(out) >= 12, "the shipped Find tasks build their target copies"
    return out


def calls(world: World, task: Task, agent: str) -> list[tuple[str, object]]:
    return [(e.tool, e.args) for e in run_shortcut(agent, world, task).events]


@pytest.mark.parametrize("agent", AGENTS)
def test_an_agent_plays_a_counterfactual_copy_as_if_it_had_never_seen_the_original(world, find_copies, agent):
    moved = 0
    for task, cf in find_copies:
        generic._READINGS.clear()
        cold = calls(cf.world, cf.task, agent)
        generic._READINGS.clear()
        calls(world, task, agent)  # the original first, as the gates play them
        warm = calls(cf.world, cf.task, agent)
        assert warm == cold, f"{agent} on the copy of {task.id} reused a reading of the original"
        moved += cold != calls(world, task, agent)
    # not vacuous: in some copies the agent does something else than in the original (what it reads moved) —
    # but for the pointer probes, which by design take the same line, so the same widget, in both copies
    MOVED[agent] = moved
    assert moved or agent in SAME_IN_BOTH | CONTENT_BLIND, (
        f"{agent} plays every copy as the original: no stale reading shown"
    )


def test_the_readers_of_contents_play_some_copy_otherwise(world, find_copies):
    readers = [a for a in AGENTS if a not in SAME_IN_BOTH | CONTENT_BLIND]
    assert {"bag_of_words", "description_matcher", "signature_matcher"} <= set(readers)
    for agent in readers:
        moved = MOVED.get(agent)
        if moved is None:  # run alone: play it here
            moved = sum(
                calls(cf.world, cf.task, agent) != calls(world, task, agent) for task, cf in find_copies
            )
        assert moved, f"{agent} plays every copy as the original"
