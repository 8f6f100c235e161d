"""The counterfactual gate: every hidden value must come from its source. In a copy of the world where the source
says something else, the level's reference agent reaches the other state, the original reference no longer
passes, and no shortcut agent passes both copies; a value recoverable without its source is rejected."""

from __future__ import annotations

import re

import pytest

from certify.counterfactual import Copy, NotApplicable, copies, play, swap_words
from certify.gates import GATES, Subject
from certify.grader import grade
from certify.shortcuts import run_shortcut
from certify.task import Task, TaskSet, load_task
from simulator import DEFAULT_WORLD, World
from tests.conftest import ROOT

SHIPPED = ROOT / "tasksets" / "workspace_tasks"
STORY = "brennan_calendar_year_returns"


@pytest.fixture(scope="module")
def world() -> World:
    return World.load(DEFAULT_WORLD)


@pytest.fixture(scope="module")
def shipped() -> dict[str, Task]:
    taskset = TaskSet.load(SHIPPED)
    return {p.stem: load_task(p, taskset) for p in taskset.task_files()}


def gate(world: World, task: Task):
    return GATES["counterfactual"](Subject(f"{task.id}.json", world, task))


def reworded(task: Task, old: str, new: str) -> Task:
    """The task with the first span of its prompt matching the pattern `old` said as `new`."""
    assert re.search(old, task.prompt), old
    return task.model_copy(update={"prompt": re.sub(old, new, task.prompt, count=1)})


def test_swapping_words_exchanges_them_in_one_pass():
    text = "The rolling-year rule sets 1Y; the calendar rule sets YTD. Not 1Yr, not xYTD."
    assert swap_words(text, {"1Y": "YTD", "YTD": "1Y"}) == (
        "The rolling-year rule sets YTD; the calendar rule sets 1Y. Not 1Yr, not xYTD."
    )


@pytest.mark.parametrize(
    ("level", "kind", "varied"),
    [
        # (this story's Find is said by a planted pointer: its copy swaps the note's entries)
        (1, "target", "the entries of 'Shortlist'"),
        (2, "carried", "resource:openbb://workspace/conventions/client-reporting"),
        (3, "planted", "resource:openbb://workspace/handbooks/client-reporting-calendar"),
        (4, "planted", "resource:openbb://workspace/handbooks/client-reporting-calendar"),
    ],
)
def test_a_task_whose_source_is_load_bearing_certifies_at_every_level(world, shipped, level, kind, varied):
    task = shipped[f"{STORY}_level{level}"]
    result = gate(world, task)
    assert result.ok, result.detail
    assert f"{kind} '" in result.detail and varied in result.detail
    made = copies(world, task)
    # Derive hides two values (the view the policy sets and the second view on the rival rule's value): one copy
    # each; every other level hides one
    assert len(made) == (2 if level == 2 else 1)
    for cf in made:
        assert isinstance(cf, Copy) and cf.other != cf.value
        # What the gate claims, checked here from the outside: the rung passes the copy, and the rung's episode
        # in the copy fails the original task (the two right answers differ).
        episode = play(cf.world, cf.task, f"ladder-{level}")
        assert grade(cf.task, episode).passed
        assert not grade(task, episode).passed


def test_the_carried_value_changes_in_the_document_and_in_what_is_graded(world, shipped):
    task = shipped[f"{STORY}_level2"]
    policy, rival = copies(world, task)
    assert isinstance(policy, Copy) and isinstance(rival, Copy)
    assert (policy.value, policy.other) == ("1Y", "1D") and (rival.value, rival.other) == ("YTD", "1D")
    uri = "openbb://workspace/conventions/client-reporting"
    before = world.resources[uri].text
    for cf in (policy, rival):
        after = cf.world.resources[uri].text
        # the values exchanged and the rule moved off its line (`moved_rule`): the same lines, in another order
        back = swap_words(after, {cf.value: "1D", "1D": cf.value})
        assert before != after and back != before and sorted(back.split("\n")) == sorted(before.split("\n"))
        lines, now = before.split("\n"), after.split("\n")
        was = [i for i, line in enumerate(lines) if f" to {cf.value}" in line]
        moved = [
            i
            for i, line in enumerate(now)
            if line.replace(" to 1D", f" to {cf.value}") in lines and " to 1D" in line
        ]
        assert moved and moved != was, f"the rule setting {cf.value} stays on line {was}"
        assert cf.world.fingerprint != world.fingerprint
    # each copy moves the view its rule decides and keeps the other one
    periods = [[r.data_args for r in cf.task.eval.required_widgets] for cf in (policy, rival)]
    client = {"client": "St. Brennan Endowment"}
    assert periods == [
        [{**client, "period": "1D"}, {**client, "period": "YTD"}],
        [{**client, "period": "1Y"}, {**client, "period": "1D"}],
    ]
    assert world.resources[uri].text == before  # the world itself is never edited


def test_a_find_copy_moves_the_target_content_away_from_its_id_and_place(world, shipped):
    task = shipped["breakwater_pricing_triage_level1"]  # a repair of a placed widget beside a look-alike
    [cf] = copies(world, task)
    assert isinstance(cf, Copy)
    original = [(w.widget_uuid, w.widget_id) for w in task.setup.initial_state.dashboard.widgets]
    moved = [(w.widget_uuid, w.widget_id) for w in cf.task.setup.initial_state.dashboard.widgets]
    assert [u for u, _ in moved] == [u for u, _ in original]  # the uuids keep their places
    repaired = {s.args["widget_uuid"] for s in task.eval.reference_steps() if s.tool == "update_widget"}
    repaired_cf = {s.args["widget_uuid"] for s in cf.task.eval.reference_steps() if s.tool == "update_widget"}
    assert repaired and repaired_cf and repaired != repaired_cf  # the instance to repair is the other one
    assert gate(world, task).ok


def test_the_positional_probe_passes_a_task_but_not_both_copies(world, shipped):
    """The probe reads where the target sits; on a task where that happens to be right it passes, and the copy,
    which moves the target elsewhere, fails it: the gate holds every shortcut to one of the two."""
    # a Find add whose target is its app's first catalog entry (a repair's target never sits first or last)
    task = shipped["orrin_money_movements_level1"]
    assert grade(task, run_shortcut("positional", world, task)).passed
    [cf] = copies(world, task)
    assert isinstance(cf, Copy)
    assert not grade(cf.task, run_shortcut("positional", cf.world, cf.task)).passed


# Derive's policy pair and its copy's rule, whatever the phrasebook drew for them ("period following the trustee
# look-back convention", "the period the … convention calls for"; "…, plus a copy per the desk look-back convention")
POLICY_PAIR = (
    r"(?:whatever |the )?period (?:\w+ ){0,3}?the [\w\s-]*?convention(?: calls for| requires| sets it)?"
)
RIVAL = r"(?:per|following|according to|in line with|under) the [\w\s-]*?convention"


def test_a_derive_value_stated_in_the_prompt_is_rejected(world, shipped):
    # both of Derive's values said outright: the rung needs no document, and in each copy it keeps the original
    task = reworded(shipped[f"{STORY}_level2"], POLICY_PAIR, "period 1Y")
    task = reworded(task, RIVAL, "with period YTD")
    result = gate(world, task)
    assert not result.ok
    assert "recoverable without the source" in result.detail
    assert "carried '1Y'" in result.detail and "carried 'YTD'" in result.detail


def test_one_of_derives_values_stated_is_rejected_by_the_leak_gate(world, shipped):
    """With one of the two values said, the other still needs the document (no shortcut passes both copies),
    but the task no longer tests reading for the one said: the leak gate refuses it."""
    task = reworded(shipped[f"{STORY}_level2"], POLICY_PAIR, "period 1Y")
    result = GATES["leak"](Subject(f"{task.id}.json", world, task))
    assert not result.ok and "1Y" in result.detail


def test_a_ground_value_stated_in_the_prompt_is_rejected(world, shipped):
    # said in a sentence of its own after the rest, whatever the phrasebook drew for the pointer
    task = reworded(shipped[f"{STORY}_level3"], r"\Z", " The period is 1Y.")
    result = gate(world, task)
    assert not result.ok and "recoverable without the source" in result.detail


def test_a_find_whose_grading_does_not_depend_on_the_target_is_rejected(world, shipped):
    """A Find that grades nothing the target decides (its widget optional, no note of its rows, no cap): the original
    reference still passes the copy where another widget fits, so the description is not load-bearing."""
    task = shipped[f"{STORY}_level1"]
    data = task.model_dump(mode="json", exclude_none=True)
    data["eval"]["required_generated_widgets"] = []
    data["eval"].pop("judge_evaluation", None)
    data["eval"].pop("max_unrequested_widgets", None)
    data["eval"]["required_tools"] = [
        s for s in data["eval"]["required_tools"] if s["tool"] != "add_generative_widget"
    ]
    for required in data["eval"]["required_widgets"]:
        required["min_count"] = 0
    crafted = Task.model_validate(data)
    result = gate(world, crafted)
    assert not result.ok and "not load-bearing" in result.detail, result.detail


def test_a_source_that_does_not_state_the_value_is_not_load_bearing(world, shipped):
    """The policy document no longer states the value (it names neither option): the copy cannot say
    anything else, so the gate fails and says why."""
    task = shipped[f"{STORY}_level2"]
    uri = "openbb://workspace/conventions/client-reporting"
    silent = world.resources[uri].text.replace("1Y", "").replace("trailing", "")
    import dataclasses

    muted = dataclasses.replace(
        world, resources={**world.resources, uri: dataclasses.replace(world.resources[uri], text=silent)}
    )
    policy, _rival = copies(muted, task)  # the rival rule still states its value
    result = gate(muted, task)
    assert not result.ok and "carried '1Y'" in result.detail, result.detail
    assert isinstance(policy, NotApplicable) and "states '1Y'" in policy.why


def test_level_0_and_tasks_without_hidden_values_say_why(world, shipped):
    level0 = gate(world, shipped[f"{STORY}_level0"])
    assert level0.ok and level0.detail.startswith("not applicable: level 0")
    bare = shipped[f"{STORY}_level1"].model_copy(update={"meta": None})
    result = gate(world, bare)
    assert result.ok and "names no hidden value" in result.detail


def test_a_taskset_that_does_not_ask_for_it_is_told_so(world, shipped):
    task = shipped[f"{STORY}_level2"]
    assert task.eval.counterfactual == "required"  # the shipped taskset's defaults ask for it
    off = task.model_copy(update={"eval": task.eval.model_copy(update={"counterfactual": "off"})})
    result = gate(world, off)
    assert result.ok and "does not ask for it" in result.detail
