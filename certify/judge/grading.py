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
from .rubric import RubricJudge
from .template import TEMPLATE_SHA256, TEMPLATE_VERSION
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


class StaleJudgment(Exception):
    """A stored verdict that no longer stands (the judge template, the judge's input or the rubric changed) and
    that only its model judge could give again: the trial is re-judged with that judge, never re-run."""


def staleness(world: World, task: Task, episode: Episode, stored: Judgment) -> str | None:
    """Why a stored verdict no longer stands, or None when it does: a verdict is a function of the judge, its
    template and its input, and stands while all three do."""
    if stored.template_sha256 != TEMPLATE_SHA256:
        return (
            f"judged under template {stored.template_sha256[:12]}, not the current v{TEMPLATE_VERSION} "
            f"({TEMPLATE_SHA256[:12]})"
        )
    if (
        stored.deterministic
        and stored.judge != default_judge().identity
        and stored.judge.startswith("rubric@")
    ):
        return f"judged by {stored.judge}, not the current {default_judge().identity}"
    if stored.case_sha256 and stored.case_sha256 != case_of(world, task, episode).sha256():
        return "what the judge is shown (the task, its reference or the trace as replayed) changed"
    return None


def rejudged(
    world: World,
    task: Task,
    episode: Episode,
    stored: Judgment | None,
    registry: dict[str, CheckFn] | None = None,
    judge: Judge | None = None,
) -> tuple[GradeResult, Judgment | None]:
    """A stored trial's grade now, without running the agent again: its recorded verdict stands while its judge,
    template and input do; a stale one is judged again, from the stored answer and the replayed trace, by the
    rubric when the rubric gave it, else by `judge` (the model that gave it; StaleJudgment without one). One that
    was never judged (its deterministic checks failed then) and now passes them is judged by `judge` or the
    rubric."""
    if task.eval.judged is None:
        return grade(task, episode, registry), None
    stale = None
    if stored is not None and stored.verdict is not None:
        stale = staleness(world, task, episode, stored)
        if stale is None:
            return with_judgment(task, episode, stored, registry), stored
    result = with_judgment(task, episode, PENDING, registry)
    if not result.passed:
        return result, stored
    again: Judge | None = judge
    if (
        stale is not None
        and stored is not None
        and stored.deterministic
        and stored.judge.startswith("rubric@")
    ):
        again = default_judge()
    elif stale is not None and judge is None:
        raise StaleJudgment(
            f"the verdict of {stored.judge if stored else 'the judge'} no longer stands ({stale}); re-judge it "
            "with that judge"
        )
    judgment = _judge_now(again or default_judge(), case_of(world, task, episode))
    return with_judgment(task, episode, judgment, registry), judgment


def _judge_now(judge: Judge, case) -> Judgment:
    """A verdict from synchronous code: the rubric directly, a model judge on an event loop of its own."""
    if isinstance(judge, RubricJudge):
        return judge.judge_now(case)
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, judge.judge(case)).result()
