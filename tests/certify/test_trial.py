"""Trials through the one agent interface: oracle, noop, heuristic, and the validity rules."""

from __future__ import annotations

import asyncio

import pytest

from certify.agents import Action, AgentUnavailable, TaskView, Usage, resolve_agent
from certify.trial import UNPARSEABLE, Trial, regrade_trial, run_trial
from tests.certify.helpers import task


def run(world, t, agent, **kw):
    return asyncio.run(run_trial(world, t, agent, **kw))


class Scripted:
    """An agent playing a fixed script, or raising/hanging on cue."""

    name = "scripted"
    privileged = False

    def __init__(self, actions, fail=None, hang=False):
        self.actions, self.fail, self.hang = actions, fail, hang
        self.seen: list[TaskView] = []

    def session(self, view, task=None):
        self.seen.append(view)
        agent = self

        class S:
            def __init__(self):
                self.usage = Usage(tokens_in=10, tokens_out=5)
                self.queue = list(agent.actions)

            async def next_action(self, observation):
                if agent.hang:
                    await asyncio.sleep(10)
                if agent.fail and not self.queue:
                    raise agent.fail
                return self.queue.pop(0) if self.queue else None

            def transcript(self):
                return [{"role": "assistant", "content": "x"}]

        return S()


def test_oracle_passes_noop_fails(mini_world):
    t = task()
    oracle = run(mini_world, t, resolve_agent("oracle"))
    assert oracle.valid and oracle.passed and oracle.turns == 3
    noop = run(mini_world, t, resolve_agent("noop"))
    assert noop.valid and noop.passed is False and noop.ended_by == "agent_stopped"
    assert "missing_widget" in noop.failure_codes


def test_agents_under_test_never_see_the_eval_block(mini_world):
    agent = Scripted([])
    run(mini_world, task(), agent)
    view = agent.seen[0]
    assert set(vars(view)) == {"task_id", "prompt", "tools", "rules"}
    assert view.rules == (
        f"You have at most {task().eval.turn_budget} turns: every tool call is one, and so is a reply that calls no "
        "tool. The episode ends when they run out.",
        *view.rules[1:],
    )
    stated = " ".join(view.rules)
    assert "Gamma" not in stated and "required" not in stated and "Desk Note" not in stated
    assert "final_answer" in view.tool_names and "update_widget" in view.tool_names
    assert "read_workspace_resource" not in view.tool_names  # not in the task's allowed_tools


def test_turn_budget_ends_the_episode(mini_world):
    t = task(**{"eval.max_turns": 2})
    agent = Scripted([Action("get_workspace_snapshot", {})] * 5)
    trial = run(mini_world, t, agent)
    assert trial.turns == 2 and trial.ended_by == "max_turns" and trial.valid


def test_final_answer_ends_the_episode(mini_world):
    agent = Scripted([Action("final_answer", {"text": "done"}), Action("get_workspace_snapshot", {})])
    trial = run(mini_world, task(), agent)
    assert trial.turns == 1 and trial.ended_by == "final_answer" and trial.final_answer == "done"


def test_unparseable_actions_count_against_the_invalid_budget(mini_world):
    garbage = Action("", {}, parse_error="reply is not a JSON action", raw="hello?")
    oracle_steps = [Action(s.tool, s.args) for s in task().eval.required_tools]
    trial = run(mini_world, task(), Scripted([garbage, garbage, *oracle_steps]))
    assert trial.invalid_calls == 2 and trial.events[0]["tool"] == UNPARSEABLE
    assert trial.passed is False and "too_many_invalid_calls" in trial.failure_codes


@pytest.mark.parametrize(
    ("fail", "reason"),
    [
        (AgentUnavailable("rate_limited", "429 after 4 tries"), "rate_limited"),
        (RuntimeError("boom"), "harness_fault"),
    ],
)
def test_trials_that_do_not_describe_the_agent_are_invalid(mini_world, fail, reason):
    trial = run(mini_world, task(), Scripted([Action("get_workspace_snapshot", {})], fail=fail))
    assert trial.valid is False and trial.invalid_reason == reason and trial.passed is None
    assert trial.turns == 1 and trial.tokens_in == 10


def test_timeout_is_invalid(mini_world):
    trial = run(mini_world, task(), Scripted([], hang=True), timeout_s=0.05)
    assert trial.valid is False and trial.invalid_reason == "timeout"


def test_heuristic_solves_an_execute_task_honestly(mini_world):
    trial = run(mini_world, task(), resolve_agent("heuristic"))
    tools = [e["tool"] for e in trial.events]
    assert tools[:2] == ["get_workspace_snapshot", "list_available_widgets"]
    assert "update_widget" in tools
    update = next(e for e in trial.events if e["tool"] == "update_widget")
    assert update["args"] == {"widget_uuid": "w_pos", "data_args": {"fund": "Gamma", "period": "QTD"}}


def test_heuristic_cannot_find_an_unnamed_widget(mini_world):
    t = task(prompt="On the open Task Board, point the holdings book at Gamma for the quarter, QTD.")
    trial = run(mini_world, t, resolve_agent("heuristic"))
    assert trial.passed is False


def test_stored_trials_regrade_without_an_agent(mini_world):
    t = task()
    trial = run(mini_world, t, resolve_agent("oracle"))
    stored = Trial.model_validate_json(trial.model_dump_json())
    again = regrade_trial(mini_world, t, stored)
    assert again.passed is True and again.fingerprint == trial.fingerprint
    stricter = task(
        **{
            "eval.required_generated_widgets": [
                {"widget_type": "note", "name_contains": "Desk Note", "data_contains": ["0.9999"]}
            ]
        }
    )
    assert regrade_trial(mini_world, stricter, stored).passed is False


def test_unknown_agent_name():
    with pytest.raises(ValueError, match="unknown agent"):
        resolve_agent("wizard")
