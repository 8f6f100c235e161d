"""The grader's own judge: the embedded rubric's verdict on a graded answer when no other judge was asked.

Kept apart from `grading` (which grades through the grader) so that the grader can ask it without importing
itself back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .case import build_case
from .registry import default_judge
from .verdict import Judgment, Verdict

if TYPE_CHECKING:
    from ..grader.core import GradeContext


def embedded_judgment(ctx: GradeContext) -> Judgment:
    """The rubric's verdict on the answer in `ctx`."""
    case = build_case(ctx.workspace.world, ctx.task, ctx.events, ctx.final_answer)
    return default_judge().judge_now(case)


def embedded_verdict(ctx: GradeContext) -> tuple[str, Verdict, str]:
    """(the judge's identity, its verdict, its summary) on the answer in `ctx`: what the grader reports of
    `embedded_judgment`, without digesting the case for a record nobody keeps."""
    judge = default_judge()
    case = build_case(ctx.workspace.world, ctx.task, ctx.events, ctx.final_answer)
    verdict, _, summary = judge.assess(case)
    return judge.identity, verdict, summary
