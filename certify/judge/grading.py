"""A judged task's grade: the deterministic checks first, then the judge, only when they all hold.

No final answer, no pass, and no judge consulted: a no-op fails on `missing_final_answer` alone. A judge is
asked only once every deterministic check holds, because a failed trial stays failed whatever the judge says,
and judges can be a large share of a run's cost. Its verdict becomes the `answer_judgment` check. Where no
judge is asked at all (the gates, the shortcut agents, an MCP session), the grader asks the embedded rubric,
so a judged answer is never passed unread.
"""

from __future__ import annotations

from simulator import World

from ..episode import Episode
from ..grader import CheckFn, GradeContext, GradeResult, grade, grade_context
from ..grader.answer_checks import JUDGMENT, PENDING
from ..task import Task
from .case import case_of
from .registry import Judge, default_judge
from .verdict import Judgment


def with_judgment(
    task: Task, episode: Episode, judgment: Judgment | str, registry: dict[str, CheckFn] | None = None
) -> GradeResult:
    """The grade of `episode` with `judgment` as the judge's verdict (PENDING: the judge is still to come)."""
    ctx = GradeContext(task, episode.workspace, episode.events, episode.final_answer, {JUDGMENT: judgment})
    return grade_context(ctx, registry)


async def judge_and_grade(
    world: World,
    task: Task,
    episode: Episode,
    judge: Judge | None = None,
    registry: dict[str, CheckFn] | None = None,
) -> tuple[GradeResult, Judgment | None]:
    """The grade of `episode` and the judgment it took (None when the task is not judged or the deterministic
    checks already fail). Raises JudgeUnavailable when a verdict was needed and none could be had."""
    if task.eval.judged is None:
        return grade(task, episode, registry), None
    result = with_judgment(task, episode, PENDING, registry)
    if not result.passed:
        return result, None
    judgment = await (judge or default_judge()).judge(case_of(world, task, episode))
    return with_judgment(task, episode, judgment, registry), judgment


def rejudged(
    world: World,
    task: Task,
    episode: Episode,
    stored: Judgment | None,
    registry: dict[str, CheckFn] | None = None,
) -> tuple[GradeResult, Judgment | None]:
    """A stored trial's grade now, without calling any model: its recorded verdict stands; one that was never
    judged (its deterministic checks failed then) and now passes them is judged by the rubric."""
    if task.eval.judged is None:
        return grade(task, episode, registry), None
    if stored is not None and stored.verdict is not None:
        return with_judgment(task, episode, stored, registry), stored
    result = with_judgment(task, episode, PENDING, registry)
    if not result.passed:
        return result, stored
    judgment = default_judge().judge_now(case_of(world, task, episode))
    return with_judgment(task, episode, judgment, registry), judgment
