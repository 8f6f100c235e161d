"""The judge of open answers: one versioned template, a model judge through the one model client, the
deterministic rubric judge as the embedded offline default, and the audit that certifies a judge task by task
before its verdicts count (see audit.py).

A judged task (`eval.judge_evaluation`) is graded deterministically first — no final answer, no pass — and the
judge is asked only when every deterministic check holds (grading.py). Its verdict, with the template's hash,
the judge's identity and what judging cost (kept apart from the agent's), travels with the trial.

What an author of a judged task emits (the rule author's `analyze` kind plugs in here):
- `eval.required_tools`: the reads the analysis rests on, graded (`get_skill_content` of the governing skill,
  `get_widget_data` with the served parameters), so a no-op and every dropped read fail;
- `eval.reference_answer`: the exemplar, written from the rows those reads serve (`reference_data(world, task)`
  returns exactly what the judge will be shown) and the skill: each figure as served, each compared with the
  skill's threshold, a verdict. A figure it cites that the data does not hold fails the oracle gate (the rubric
  labels it UNSUPPORTED);
- `eval.judge_evaluation`: `skill` (the slug), `key_points` — one per figure-and-comparison the skill prescribes,
  each with the `figures` it states and the `terms` of its reasoning (the comparison word, the threshold's name,
  the verdict word), and at least one point a bare list of the figures cannot address — and `required_elements`
  (the phrases the skill demands in every answer: an owner, a review date);
- then, before the judged tasks are certified, the audit of the taskset's judge (`audit.run_audit` over the
  tasks, `audit.record_audit` into the destination taskset) and `judge-audit.json` among the files it commits.
  `gates.certify_task` remembers certifications by task content, not by the audit record: audit first, or call
  `gates.forget()` after recording.
"""

from .case import JudgeCase, build_case, case_of, reference_data
from .embedded import embedded_judgment
from .grading import StaleJudgment, judge_and_grade, rejudged, staleness, with_judgment
from .registry import DEFAULT_JUDGE, Judge, build_judge, default_judge, judge_identity
from .rubric import RubricJudge
from .template import TEMPLATE_SHA256, TEMPLATE_VERSION
from .verdict import JudgeSpend, JudgeSummary, JudgeUnavailable, Judgment, OmitsAbsentJudge, PointLabel

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
    "OmitsAbsentJudge",
    "PointLabel",
    "RubricJudge",
    "StaleJudgment",
    "build_case",
    "build_judge",
    "case_of",
    "default_judge",
    "embedded_judgment",
    "judge_and_grade",
    "judge_identity",
    "reference_data",
    "rejudged",
    "staleness",
    "with_judgment",
]
