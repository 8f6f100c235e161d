"""The strict and shaped rewards of a graded episode (certify/rewards.py), on the mini task's episodes."""

from __future__ import annotations

import pytest

from certify.episode import reference_calls, replay
from certify.grader import CHECKS, CheckResult, GradeResult, grade
from certify.rewards import PROTECTED_CODES, RewardMode, outstanding_checks, score, turn_budget
from tests.certify.helpers import task as make_task

UPDATE = ("update_widget", {"widget_uuid": "w_pos", "data_args": {"fund": "Gamma", "period": "QTD"}})
NOTE = (
    "add_generative_widget",
    {"widget_type": "note", "name": "Desk Note", "data": "Gamma QTD weight 5.24%"},
)


def rewards_of(world, task, steps, answer="Done."):
    episode = replay(world, task, steps, final_answer=answer)
    result = grade(task, episode)
    return result, score(
        result, turns=episode.turns, budget=turn_budget(task), outstanding=outstanding_checks(world, task)
    )


def test_protected_codes_are_the_preservation_group_and_the_two_trace_guards():
    preservation = {
        code for code, fn in CHECKS.items() if fn.__module__ == "certify.grader.preservation_checks"
    }
    assert preservation >= {"collateral_dashboard_change", "custom_backend_replaced"}
    assert preservation | {"unlisted_widget_id", "too_many_invalid_calls"} == PROTECTED_CODES


def test_full_success_earns_point_nine_plus_the_share_of_turns_left(mini_world):
    task = make_task()
    steps = [s for s in reference_calls(task)]
    result, reward = rewards_of(mini_world, task, steps)
    turns = len(steps) + 1  # the final answer is a turn
    assert result.passed and reward.strict == 1.0 and reward.passed
    assert reward.shaped == pytest.approx(0.9 + 0.1 * (8 - turns) / 8)
    assert reward.value(RewardMode.strict) == 1.0 and reward.value(RewardMode.shaped) == reward.shaped


def test_doing_nothing_earns_zero_although_many_checks_hold(mini_world):
    task = make_task()
    result, reward = rewards_of(mini_world, task, [])
    assert not result.passed and result.share > 0.3, "an untouched workspace already satisfies several checks"
    assert reward.strict == 0.0 and reward.shaped == 0.0 and reward.progress == 0.0


def test_half_the_work_earns_half_of_the_partial_ceiling_of_the_outstanding_checks(mini_world):
    task = make_task()
    outstanding = outstanding_checks(mini_world, task)
    result, reward = rewards_of(mini_world, task, [UPDATE])
    todo = [c for c in result.checks if f"{c.code}:{c.label}" in outstanding]
    done = sum(c.passed for c in todo)
    assert 0 < done < len(todo), "the update is some of the outstanding work, not all of it"
    assert reward.strict == 0.0 and not reward.protected_failures
    assert reward.shaped == pytest.approx(0.5 * done / len(todo), abs=1e-6) and 0 < reward.shaped < 0.5


def test_a_protected_failure_zeroes_the_shaped_reward_even_when_the_rest_is_done(mini_world):
    task = make_task()
    bad = [("no_such_tool", {}), ("no_such_tool", {})]  # two failed calls; the task allows one
    result, reward = rewards_of(mini_world, task, [*bad, *reference_calls(task)])
    assert "too_many_invalid_calls" in result.failure_codes
    assert reward.protected_failures == ["too_many_invalid_calls"] and reward.shaped == 0.0


def test_a_refused_trial_is_scored_as_failed_even_with_every_check_holding():
    result = GradeResult([CheckResult("missing_widget", True, "w")])
    reward = score(result, turns=2, budget=10, outstanding=frozenset({"missing_widget:w"}), passed=False)
    assert reward.strict == 0.0 and reward.shaped == pytest.approx(0.5) and not reward.passed
