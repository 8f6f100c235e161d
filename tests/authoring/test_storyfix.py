"""A blocking item names the facts field to change and how (issue 21 item 6)."""

from __future__ import annotations

from types import SimpleNamespace

from authoring.storyfix import fix_line, inversion_evidence, story_fix


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


def test_a_gate_failure_naming_a_passing_shortcut_says_the_field_and_the_fix():
    """Outsider round 7: "the gates failed on what the author made of these facts" left the writer nothing to
    change; a shortcut the evidence names maps to the facts field it exploits and how to take it away."""
    evidence = (
        "gate shortcuts: shortcut(s) pass without understanding the request: signature_matcher (19 calls)"
    )
    field, how = story_fix(
        {"kind": "gate_failure", "task_id": "a_level1", "reason": "x", "evidence": evidence}
    )
    assert field == "facts.targets[0]"
    assert "reads only schemas" in how and "signature_matcher (19 calls)" in how
    skim = "gate shortcuts: shortcut(s) pass without understanding the request: tail_skimmer (8 calls)"
    assert (
        story_fix({"kind": "gate_failure", "task_id": "a_level3", "evidence": skim})[0]
        == "facts.governance.fact"
    )


def staircase(*inversions: tuple[str, float, str, float]) -> dict:
    """The staircase item the review node raises (its evidence written by the node's own helper)."""
    evidence = inversion_evidence(
        [SimpleNamespace(lower=a, fail_lower=x, upper=b, fail_upper=y) for a, x, b, y in inversions]
    )
    return {
        "kind": "staircase",
        "persona": "desk_head",
        "story": None,
        "task_id": None,
        "level": None,
        "reason": "the staircase is inverted after the fixer's rounds",
        "evidence": evidence,
    }


def test_the_staircase_fix_names_the_persona_the_inverted_levels_and_the_stories_of_the_items_there():
    item = staircase(("level1", 0.6, "level2", 0.4))
    failed = "ladder-1 (find from a description) failed this Find task: it is not solvable"
    items = [
        {"kind": "ladder", "task_id": "alpha_book_level1", "reason": failed, "persona": "desk_head"},
        {"kind": "defect", "task_id": "beta_desk_level1", "reason": "fails alike", "persona": "desk_head"},
        {
            "kind": "ladder",
            "task_id": "gamma_fx_level3",
            "reason": "failed this Ground task",
            "persona": "desk_head",
        },
        item,
    ]
    where, how = fix_line(item, items)
    assert where == "desk_head's stories at Find"
    assert "Find tasks fail 60% of the time, Derive tasks only 40%" in how
    assert "(alpha_book.md, beta_desk.md)" in how, how  # the Find items' stories, not the Ground one
    assert ".md" not in where and not how.startswith(".md")


def test_without_an_item_at_the_inverted_level_the_staircase_fix_says_where_to_look():
    item = staircase(("level0", 1.0, "level1", 0.0), ("level2", 0.5, "level3", 0.25))
    where, how = fix_line(item, [item])
    assert where == "desk_head's stories at Execute and Derive"
    assert "no item of this run names a task at Execute and Derive" in how
    assert "taskforge calibrate --taskset DIR --persona desk_head" in how


def test_a_story_item_keeps_its_file_and_a_persona_wide_level_item_names_the_level():
    failed = "ladder-1 (find from a description) failed this Find task: it is not solvable"
    assert (
        fix_line({"kind": "ladder", "task_id": "alpha_book_level1", "reason": failed}, [])[0]
        == "alpha_book.md"
    )
    dead = {"kind": "dead_rung", "persona": "desk_head", "level": 1, "reason": "level1 was never passed by x"}
    where, how = fix_line(dead, [dead])
    assert where == "desk_head's stories at Find" and how.startswith("facts.find_hint: ")
    assert fix_line({"kind": "variety", "task_id": "a_level0", "reason": "similar"}, []) is None


def test_the_out_of_rounds_cause_names_the_gate_its_finding_in_words_and_the_field():
    from authoring.storyfix import gate_cause

    said = gate_cause(
        1,
        {
            "oracle": "reference fails: missing_widget: at least 1 x Positions (0 matching on 'Desk'); other",
            "shortcuts": "shortcut(s) pass without understanding the request: enumerator",
        },
    )
    assert said.startswith(
        "the reference solution fails the task's own checks (gate oracle, facts.targets[0]: "
    )
    assert (
        "a widget the task requires is missing: at least 1 x Positions" in said
        and "missing_widget" not in said
    )
    assert "other" not in said, "the first finding only"
    assert said.endswith("; also gate shortcuts, facts.targets[0]")
    assert gate_cause(3, {"shortcuts": "x"}).startswith(
        "an agent that does not understand the request passes"
    )
    assert "facts.governance.sets" in gate_cause(3, {"shortcuts": "x"})
    gate = {"kind": "gate_failure", "level": 2, "reason": "r", "evidence": "gate counterfactual: same answer"}
    assert story_fix(gate)[0] == "facts.policy"
