"""Trials: one agent attempting one task, with everything needed to explain and re-grade the result.

A trial whose result does not describe the agent (its API failed after retries, it was rate limited or timed
out, the harness itself broke) is *invalid*: it is kept and counted apart, and never scored as a failure. A
model that refuses the request for its own limits (context overflow, a refused parameter) has failed: the trial
is valid, graded on what it left, and failed with that reason first among its codes.
Stored trials carry their full trace, so a grader or simulator change re-grades them by replaying the recorded
calls through the (deterministic) simulator, without calling any model.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from typing import Any

from pydantic import ConfigDict, Field

from simulator import World

from .agents.base import Action, Agent, AgentRefused, AgentUnavailable, TaskView
from .episode import DEFAULT_MAX_TURNS, FINAL_ANSWER, NO_ACTION, Episode, TraceEvent, start_episode
from .grader import CheckFn, GradeResult
from .judge import (
    TEMPLATE_SHA256,
    Judge,
    JudgeUnavailable,
    Judgment,
    OmitsAbsentJudge,
    StaleJudgment,
    default_judge,
    judge_and_grade,
    rejudged,
)
from .task import Task

UNPARSEABLE = "__unparseable__"
# How an episode ends when the model refused the request for its own limits (see AgentRefused).
# How a model ends a trial on its own limit: a failure with that reason first (DESIGN.md §6).
REFUSALS = ("context_overflow", "parameter_refused", "output_truncated")
# How an episode ends once the task can no longer pass (issue 24): asking the model again would waste requests.
LOST = ("max_turns", "invalid_call_budget")


class Trial(OmitsAbsentJudge):
    model_config = ConfigDict(extra="forbid")

    task_id: str
    level: str
    agent: str
    repeat: int = 0
    valid: bool = True
    invalid_reason: str | None = None
    error: str | None = None
    passed: bool | None = None
    share: float | None = None
    failure_codes: list[str] = Field(default_factory=list)
    fingerprint: list[str] = Field(default_factory=list)
    ended_by: str | None = None
    turns: int = 0
    tool_calls: int = 0
    invalid_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = Field(
        0, description="the part of tokens_in the server read from its prefix cache, where it reports it"
    )
    requests: int = 0
    retries: int = 0
    duration_s: float = 0.0
    cost: float = 0.0
    strict_parses: int = 0
    lenient_parses: int = 0
    failed_parses: int = 0
    final_answer: str | None = None
    events: list[dict[str, Any]] = Field(default_factory=list)
    transcript: list[dict[str, Any]] = Field(default_factory=list)
    judge: Judgment | None = Field(
        None,
        description="The judge's verdict on a judged task's answer and what it cost (apart from the agent's "
        "tokens and cost); absent when no judge was asked.",
    )

    def apply_grade(self, result: GradeResult) -> None:
        self.passed = result.passed
        self.share = round(result.share, 4)
        self.failure_codes = result.failure_codes
        self.fingerprint = list(result.fingerprint())
        if self.ended_by in REFUSALS:
            self.refused()

    def refused(self) -> None:
        """Fail a trial the model ended by refusing the request, with that reason first (what it left behind
        is still graded, so the other codes say how far it got)."""
        reason = str(self.ended_by)
        self.passed = False
        self.failure_codes = [reason, *(c for c in self.failure_codes if c != reason)]
        if not self.fingerprint or not self.fingerprint[0].startswith(f"{reason}:"):
            self.fingerprint = [f"{reason}:{self.error or 'refused'}", *self.fingerprint]


def record_unparseable(episode: Episode, raw: str | None, error: str) -> dict[str, Any]:
    """Record something the agent produced that never became a call (a reply that is not an action, or a call
    its own harness refused before our workspace saw it) as an invalid call."""
    envelope = {
        "ok": False,
        "command": UNPARSEABLE,
        "request_id": None,
        "message": error,
        "data": None,
        "error": {"code": "unparseable_action", "message": error, "retryable": True},
    }
    episode.events.append(TraceEvent(len(episode.events) + 1, UNPARSEABLE, {"raw": raw}, False, envelope))
    return envelope


def open_episode(world: World, task: Task) -> Episode:
    """An episode under the harness's rules: a task without a turn budget gets DEFAULT_MAX_TURNS."""
    episode = start_episode(world, task)
    if not episode.budget:
        episode.budget = DEFAULT_MAX_TURNS
    return episode


def end_if_out_of_turns(episode: Episode) -> None:
    """The harness's turn rule: once the budget's worth of turns is taken, the episode is over."""
    if not episode.done and episode.budget and len(episode.events) >= episode.budget:
        episode.stop("max_turns")


def end_if_lost(episode: Episode, task: Task) -> None:
    """Once the task cannot pass any more the episode is over: more invalid calls than the task allows fail it
    whatever follows (the model was told "one more fails the task"), and so does an exhausted turn budget."""
    allowed = task.eval.trace_checks.max_invalid_tool_calls
    if not episode.done and allowed is not None and episode.invalid_calls > allowed:
        episode.stop("invalid_call_budget")
    end_if_out_of_turns(episode)


def record_episode(trial: Trial, episode: Episode) -> None:
    """Copy what the agent did in `episode` onto `trial` (its grade is applied separately)."""
    trial.ended_by = episode.ended_by
    trial.turns = episode.turns
    trial.tool_calls = sum(1 for e in episode.events if e.tool not in (FINAL_ANSWER, UNPARSEABLE, NO_ACTION))
    trial.invalid_calls = episode.invalid_calls
    trial.final_answer = episode.final_answer
    trial.events = [e.to_dict() for e in episode.events]


def take(episode: Episode, action: Action | None) -> dict[str, Any] | None:
    """One step of an episode under the harness's rules, whoever drives it (a trial here, the counterfactual's
    synchronous loop): no action stops the episode (None: nothing to observe); a reply that is not an action is
    recorded as an invalid call; a reply that calls no tool is an idle turn; anything else is the call itself.
    What comes back is the observation the agent's next turn reads."""
    if action is None:
        episode.stop("agent_stopped")
        return None
    if action.parse_error is not None:
        return record_unparseable(episode, action.raw, action.parse_error)
    if action.tool == NO_ACTION:
        return episode.idle(action.raw)
    return episode.act(action.tool, action.args)


async def drive(
    episode: Episode, agent: Agent, task: Task, holder: dict[str, Any], *, until_unparseable: bool = False
) -> None:
    """Let `agent` play `episode` turn by turn until it is over (`holder["session"]` keeps the session, for its
    usage once the episode ends). `until_unparseable`: end at the first reply that is not an action instead of
    recording it (the counterfactual copies what a scripted rung did; a rung that cannot say its action did
    nothing more)."""
    session = holder["session"] = agent.session(TaskView.of(task), task if agent.privileged else None)
    observation: dict[str, Any] | None = None
    try:
        while True:
            end_if_lost(episode, task)
            if episode.done:
                break
            action = await session.next_action(observation)
            if until_unparseable and action is not None and action.parse_error is not None:
                break
            observation = take(episode, action)
    finally:
        episode.stop("agent_stopped")


async def run_trial(
    world: World,
    task: Task,
    agent: Agent,
    repeat: int = 0,
    *,
    timeout_s: float | None = None,
    registry: dict[str, CheckFn] | None = None,
    judge: Judge | None = None,
) -> Trial:
    """Run one episode of `agent` on `task` and grade it; a judged task's answer goes to `judge` (default: the
    rubric) once its deterministic checks hold. Never raises for agent, judge or harness failures: a judge that
    gives no verdict makes the trial invalid (it says nothing about the agent)."""
    trial = Trial(task_id=task.id, level=task.difficulty, agent=agent.name, repeat=repeat)
    start = time.perf_counter()
    episode: Episode | None = None
    session = None
    try:
        episode = open_episode(world, task)
        holder: dict[str, Any] = {}
        try:
            await asyncio.wait_for(drive(episode, agent, task, holder), timeout=timeout_s)
        except AgentRefused as exc:
            if exc.reply is not None:
                # the model answered, with nothing usable: a turn like any reply that is not an action
                record_unparseable(episode, exc.reply, str(exc))
            episode.ended_by = trial.ended_by = exc.reason
            trial.error = str(exc)
        finally:
            session = holder.get("session")
        result, trial.judge = await judge_and_grade(world, task, episode, judge, registry)
        trial.apply_grade(result)
    except JudgeUnavailable as exc:
        trial.valid, trial.invalid_reason, trial.error = False, f"judge_{exc.reason}", str(exc)
        trial.judge = _unjudged(judge, exc)
    except TimeoutError:
        trial.valid, trial.invalid_reason = False, "timeout"
        trial.error = f"the episode did not finish within {timeout_s} s"
    except AgentUnavailable as exc:
        trial.valid, trial.invalid_reason, trial.error = False, exc.reason, str(exc)
    except Exception as exc:  # a harness fault must not be scored against the agent
        trial.valid, trial.invalid_reason = False, "harness_fault"
        trial.error = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    finally:
        trial.duration_s = round(time.perf_counter() - start, 4)
        if episode is not None:
            record_episode(trial, episode)
        if session is not None:
            usage = session.usage
            trial.tokens_in, trial.tokens_out, trial.cost = (
                usage.tokens_in,
                usage.tokens_out,
                round(usage.cost, 6),
            )
            trial.tokens_cached = usage.tokens_cached
            trial.requests, trial.retries = usage.requests, usage.retries
            trial.strict_parses, trial.lenient_parses = usage.strict_parses, usage.lenient_parses
            trial.failed_parses = usage.failed_parses
            trial.transcript = session.transcript()
    return trial


def _unjudged(judge: Judge | None, exc: JudgeUnavailable) -> Judgment:
    """What a judge that gave no verdict leaves on the trial: who it was, the error and what it cost."""
    who = judge or default_judge()
    return Judgment(
        judge=who.identity,
        deterministic=who.deterministic,
        template_sha256=TEMPLATE_SHA256,
        spend=exc.spend,
        error=str(exc),
    )


def replay_trial(world: World, task: Task, trial: Trial) -> Episode:
    """Rebuild a stored trial's episode by replaying its recorded calls (no model involved)."""
    episode = start_episode(world, task)
    for event in trial.events:
        if episode.done:
            break
        if event["tool"] == UNPARSEABLE:
            record_unparseable(episode, (event.get("args") or {}).get("raw"), event["envelope"]["message"])
        elif event["tool"] == NO_ACTION:
            episode.idle((event.get("args") or {}).get("text"))
        else:
            episode.act(event["tool"], event["args"])
    episode.stop(trial.ended_by or "replay_end")
    return episode


def regrade_trial(
    world: World,
    task: Task,
    trial: Trial,
    registry: dict[str, CheckFn] | None = None,
    judge: Judge | None = None,
) -> Trial:
    """The same trial graded by the current grader and simulator, never run again. A judged answer keeps its
    recorded verdict while the judge, its template and its input stand; a stale verdict is judged again from the
    stored answer (by the rubric that gave it, or by `judge`, the model that did; without it the trial is
    invalid, `judge_stale`, until re-judged), and one that was never judged is judged if it now needs a verdict."""
    if not trial.valid:
        return trial.model_copy()
    episode = replay_trial(world, task, trial)
    out = trial.model_copy(deep=True)
    try:
        result, out.judge = rejudged(world, task, episode, trial.judge, registry, judge)
    except StaleJudgment as exc:
        out.valid, out.invalid_reason, out.error = False, "judge_stale", str(exc)
        return out
    except JudgeUnavailable as exc:
        out.valid, out.invalid_reason, out.error = False, f"judge_{exc.reason}", str(exc)
        return out
    out.apply_grade(result)
    return out
