"""The judge of open answers: one versioned template, a model judge through the one model client, the
deterministic rubric judge as the embedded offline default, and the audit that certifies a judge task by task
before its verdicts count (see audit.py).

A judged task (`eval.judge_evaluation`) is graded deterministically first — no final answer, no pass — and the
judge is asked only when every deterministic check holds (grading.py). Its verdict, with the template's hash,
the judge's identity and what judging cost (kept apart from the agent's), travels with the trial.
"""

from .case import JudgeCase, build_case, case_of, reference_data
from .grading import embedded_judgment, judge_and_grade, rejudged, with_judgment
from .registry import DEFAULT_JUDGE, Judge, build_judge, default_judge, judge_identity
from .rubric import RubricJudge
from .template import TEMPLATE_SHA256, TEMPLATE_VERSION
from .verdict import JudgeSpend, JudgeSummary, JudgeUnavailable, Judgment, PointLabel

__all__ = [
    "DEFAULT_JUDGE",
    "TEMPLATE_SHA256",
    "TEMPLATE_VERSION",
    "Judge",
    "JudgeCase",
    "JudgeSpend",
    "JudgeSummary",
    "JudgeUnavailable",
    "Judgment",
    "PointLabel",
    "RubricJudge",
    "build_case",
    "build_judge",
    "case_of",
    "default_judge",
    "embedded_judgment",
    "judge_and_grade",
    "judge_identity",
    "reference_data",
    "rejudged",
    "with_judgment",
]
