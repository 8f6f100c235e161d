"""A blocking item names the facts field to change and how (issue 21 item 6)."""

from __future__ import annotations

from authoring.storyfix import story_fix


def test_a_rung_that_fails_its_own_level_points_at_the_field_that_level_reads():
    failed = (
        "ladder-1 (find from a description) failed this Find task: it is not solvable (missing_widget: …)"
    )
    assert story_fix({"kind": "ladder", "task_id": "a_level1", "reason": failed})[0] == "facts.find_hint"
    derive = "ladder-2 (derive through documents) failed this Derive task"
    assert story_fix({"kind": "ladder", "task_id": "a_level2", "reason": derive})[0] == "facts.policy"
    ground = {"kind": "defect", "task_id": "a_level3", "reason": "fails the same way on all 5 attempts"}
    field, how = story_fix(ground)
    assert field == "facts.governance.fact" and "world show --facts" in how


def test_a_level_the_rung_below_solves_points_at_what_gives_it_away():
    solved = "ladder-1 (find from a description) solved this Derive task: it does not need the capability"
    assert story_fix({"kind": "ladder", "task_id": "a_level2", "reason": solved})[0] == "facts.policy.carries"
    lint = {
        "kind": "find_giveaway",
        "task_id": "a_level1",
        "reason": "'X' is the only widget of its app that",
    }
    assert story_fix(lint)[0] == "facts.targets[0]"


def test_a_gate_failure_carries_the_gates_feedback_and_others_are_left_alone():
    gate = {
        "kind": "gate_failure",
        "task_id": "a_level1",
        "reason": "x",
        "evidence": "gate shortcuts: enumerator",
    }
    assert "gate shortcuts: enumerator" in story_fix(gate)[1]
    assert story_fix({"kind": "variety", "task_id": "a_level0", "reason": "similar"}) is None
