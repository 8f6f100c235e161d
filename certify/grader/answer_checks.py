"""Checks on the final answer of answer-graded tasks.

A judged task (`eval.judge_evaluation`) gets a deterministic gate before any judge: without a submitted final
answer it fails, so doing nothing fails with no judge consulted. The judge's verdict is then one more check,
read from the grade context (`extras["judgment"]`, a `certify.judge.Judgment`). PENDING there means the judge is
still to come (the harness grades the deterministic checks first, to ask a judge only when they hold); with no
judgment at all the grader asks the embedded rubric judge (deterministic, offline), so no path — a gate, a
shortcut agent, an MCP session, a re-grade — passes a judged answer unread.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .core import CheckResult, GradeContext, check
from .match import numbers_in, text_contains

if TYPE_CHECKING:
    from ..judge.verdict import Judgment

JUDGMENT = "judgment"
PENDING = "pending"


def _answer_graded(ctx: GradeContext) -> bool:
    return bool(ctx.eval.required_values_in_answer) or ctx.eval.judged is not None


@check("missing_final_answer", when=("required_values_in_answer", "judged"))
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


@check("missing_answer_value", when=("required_values_in_answer",))
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


@check("answer_judgment", when=("judged",))
def answer_judgment(ctx: GradeContext) -> Iterable[CheckResult]:
    """The judge's verdict on a judged task's answer; pending (and passing) when no judge ran."""
    if ctx.eval.judged is None:
        return
    judgment: Judgment | str | None = ctx.extras.get(JUDGMENT)
    if judgment == PENDING:
        yield CheckResult("answer_judgment", True, "judge verdict", "pending: the judge comes last", "answer")
        return
    if judgment is None and not (ctx.final_answer or "").strip():
        yield CheckResult(
            "answer_judgment",
            True,
            "judge verdict",
            "not judged: no final answer (the gate above fails it)",
            "answer",
        )
        return
    verdict: str | None
    if judgment is None:
        from ..judge.embedded import embedded_verdict

        judge, verdict, summary = embedded_verdict(ctx)
    else:
        assert not isinstance(judgment, str)
        judge, verdict, summary = judgment.judge, judgment.verdict, judgment.summary
    yield CheckResult(
        "answer_judgment", verdict == "PASS", "judge verdict", f"{judge}: {verdict} — {summary}", "answer"
    )
