"""What a training run is paid for an episode: the strict verdict, or a shaped reward after the Workbench card.

`strict` is the grader's verdict as a number: 1 when every check holds, else 0. It is what our harness, `serve`
and the Harbor export report, and the default everywhere.

`shaped` follows the Workbench OpenEnv card (`../shared/seeds`), mapped onto our checks:
- 0 when any *protected* check fails: another dashboard changed or a custom backend was replaced (the grader's
  preservation group), an invented widget id (`unlisted_widget_id`), or more failed calls than the task's
  invalid-call budget allows (`too_many_invalid_calls`, the refusals past the budget).
- full success (the strict verdict) earns 0.9 + 0.1 × turns left / turn budget, so a shorter correct episode
  earns more;
- otherwise 0.5 × progress, the share of the task's *outstanding* checks that now pass: the checks an
  untouched workspace fails. Checks the starting workspace already satisfies (a dashboard that exists, a cap on
  widgets nobody added) measure nothing the agent did, so an agent that does nothing earns exactly 0, and half
  the work earns about half of 0.5.
The reward always lies in [0, 1]. Both are computed from one GradeResult, so every consumer (the OpenEnv
environment, the rollouts export, the Harbor verifier) reports the same numbers for the same episode.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from simulator import World

from .episode import DEFAULT_MAX_TURNS, replay
from .grader import CHECKS, CheckFn, CheckResult, GradeResult, grade
from .task import Task

FULL_SUCCESS_FLOOR = 0.9
PARTIAL_CEILING = 0.5
# The preservation group is every check registered by the grader's preservation module (so a new one is
# protected without editing this list), plus the two trace guards the card's "invented id" and "refused call
# past the budget" name.
PROTECTED_CODES = frozenset(
    {code for code, fn in CHECKS.items() if fn.__module__.endswith(".preservation_checks")}
    | {"unlisted_widget_id", "too_many_invalid_calls"}
)


class RewardMode(StrEnum):
    strict = "strict"
    shaped = "shaped"


class Reward(BaseModel):
    """Both rewards of one graded episode and what they were computed from."""

    model_config = ConfigDict(extra="forbid")

    strict: float
    shaped: float
    passed: bool
    share: float
    progress: float
    protected_failures: list[str]
    turns: int
    turn_budget: int

    def value(self, mode: RewardMode) -> float:
        return self.strict if mode is RewardMode.strict else self.shaped


def check_key(check: CheckResult) -> str:
    """A check's identity across two gradings of one task (the grader's fingerprint uses the same)."""
    return f"{check.code}:{check.label}"


def outstanding_checks(
    world: World, task: Task, registry: dict[str, CheckFn] | None = None
) -> frozenset[str]:
    """The checks an untouched workspace fails: what an episode of `task` has to change."""
    untouched = grade(task, replay(world, task, []), registry)
    return frozenset(check_key(c) for c in untouched.failures)


def turn_budget(task: Task) -> int:
    """The budget the harness enforces (a task without one gets DEFAULT_MAX_TURNS)."""
    return task.eval.turn_budget or DEFAULT_MAX_TURNS


def score(
    result: GradeResult, *, turns: int, budget: int, outstanding: frozenset[str], passed: bool | None = None
) -> Reward:
    """Both rewards of an episode graded `result`, which took `turns` of its `budget`. `passed` overrides the
    verdict where the trial's is not its checks' (a model that refused the request failed with every check
    holding)."""
    passed = result.passed if passed is None else passed
    protected = sorted({c.code for c in result.failures if c.code in PROTECTED_CODES})
    todo = [c for c in result.checks if check_key(c) in outstanding]
    progress = sum(c.passed for c in todo) / len(todo) if todo else (1.0 if passed else 0.0)
    if protected:
        shaped = 0.0
    elif passed:
        left = max(budget - turns, 0)
        shaped = FULL_SUCCESS_FLOOR + (1 - FULL_SUCCESS_FLOOR) * left / budget if budget else 1.0
    else:
        shaped = PARTIAL_CEILING * progress
    return Reward(
        strict=1.0 if passed else 0.0,
        shaped=round(min(max(shaped, 0.0), 1.0), 6),
        passed=passed,
        share=round(result.share, 4),
        progress=round(progress, 4),
        protected_failures=protected,
        turns=turns,
        turn_budget=budget,
    )
