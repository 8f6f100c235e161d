"""Checks on the final answer of answer-graded tasks."""

from __future__ import annotations

from collections.abc import Iterable

from .core import CheckResult, GradeContext, check
from .match import numbers_in, text_contains


def _answer_graded(ctx: GradeContext) -> bool:
    return bool(ctx.eval.required_values_in_answer) or ctx.eval.judge is not None


@check("missing_final_answer")
def missing_final_answer(ctx: GradeContext) -> Iterable[CheckResult]:
    if _answer_graded(ctx):
        text = ctx.final_answer or ""
        yield CheckResult(
            "missing_final_answer",
            bool(text.strip()),
            "a final answer was submitted",
            f"{len(text)} characters",
            "answer",
        )


@check("missing_answer_value")
def missing_answer_value(ctx: GradeContext) -> Iterable[CheckResult]:
    text = ctx.final_answer or ""
    nums = numbers_in(text)
    for value in ctx.eval.required_values_in_answer:
        yield CheckResult(
            "missing_answer_value",
            bool(text) and text_contains(text, value, blob_numbers=nums),
            f"answer states '{value}'",
            "present" if value.casefold() in text.casefold() else "absent",
            "answer",
        )


@check("answer_judgment")
def answer_judgment(ctx: GradeContext) -> Iterable[CheckResult]:
    """The judge's verdict, when a judge ran (`extras['judge_verdict']`); without one the check is pending
    and says so, and the task's deterministic answer checks decide."""
    if ctx.eval.judge is None:
        return
    verdict = ctx.extras.get("judge_verdict")
    if verdict is None:
        yield CheckResult("answer_judgment", True, "judge verdict", "pending: no judge configured", "answer")
    else:
        yield CheckResult(
            "answer_judgment",
            bool(verdict.get("passed")),
            "judge verdict",
            str(verdict.get("reason") or ""),
            "answer",
        )
