"""The rubric judge: the deterministic, offline judge embedded as the default. No model is consulted.

It labels the same points the model judge labels, from the same case, by rules a person can re-perform:
- a key point is ADDRESSED when the answer states each of its `figures` (to its own precision: 97.97% or 98%
  for 0.9797, not 1) and uses each of its `terms` (a list inside the list is a choice), else OMITTED;
- a required element of the skill is ADDRESSED when the answer uses the phrase, else OMITTED;
- a figure the answer states that appears in none of the data (the reference's rows, the agent's rows), the
  ask, the skill or the exemplar is UNSUPPORTED: the answer contradicts or invents its evidence;
- an answer that speaks to its grader (imitates the reply protocol, tells the judge to ignore its instructions)
  makes no point by doing so and is UNSUPPORTED as a whole.
The verdict is PASS only when everything is ADDRESSED. A task whose key points carry neither figures nor terms
gives this judge nothing to check: the audit's fact stub then passes, and the audit reports the rubric
miscalibrated for that task (it needs a model judge, or key points with terms).
"""

from __future__ import annotations

import functools
import json
import math
import re
from typing import Any

from ..grader.match import phrase_matches
from .case import JudgeCase
from .template import TEMPLATE_SHA256
from .verdict import Judgment, PointLabel, Verdict

RUBRIC_VERSION = "1"
NAME = "rubric"
LABEL = "rubric (the embedded deterministic default; no model)"

_NUMBER = re.compile(r"(?<![\w.])(-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?)(\s*%)?")
# Small bare integers are counts, list numbers and days, not figures drawn from data.
SMALL_INTEGER = 31
# A figure is stated when the answer's last digit is at most this share of it (98% states 0.9797; 1 does not).
PRECISION = 0.05
_GRADER_TALK = (
    re.compile(r"\bverdict\s*:\s*(?:pass|fail)\b", re.I),
    re.compile(r"\bkey point\s*\d+\s*:\s*(?:addressed|omitted|unsupported)\b", re.I),
    re.compile(
        r"\b(?:ignore|disregard|forget)\b.{0,40}\b(?:instructions?|rules?|rubric|key points?|prompt)\b",
        re.I | re.S,
    ),
    re.compile(
        r"\b(?:judge|grader|evaluator|grading model)s?\b.{0,80}\b(?:must|should|will|shall)\b", re.I | re.S
    ),
    re.compile(r"<{3,}|>{3,}|\bUNTRUSTED (?:ANSWER|TRACE)\b"),
)


class Figure:
    """A number as written: its value (a percentage as its fraction) and the step of its last digit."""

    __slots__ = ("percent", "step", "value")

    def __init__(self, raw: str, percent: bool) -> None:
        digits = raw.replace(",", "")
        decimals = len(digits.partition(".")[2])
        self.percent = percent
        self.value = float(digits) / (100.0 if percent else 1.0)
        self.step = 10.0**-decimals / (100.0 if percent else 1.0)

    @property
    def significant(self) -> bool:
        return self.percent or self.step < 1 or abs(self.value) > SMALL_INTEGER

    def states(self, value: float) -> bool:
        """Whether this number, as written, states `value` (a percentage read either way)."""
        for target in (value, value * 100.0) if not self.percent else (value,):
            if math.isclose(self.value, target, rel_tol=1e-9, abs_tol=1e-12):
                return True
            if target == 0:
                if abs(self.value) <= self.step / 2:
                    return True
                continue
            if (
                self.step <= PRECISION * abs(target) + 1e-12
                and abs(self.value - target) <= self.step / 2 + 1e-12
            ):
                return True
        return False


def written(text: str) -> list[tuple[str, Figure]]:
    """Each number of `text` as it is written there (with its % sign) and as a figure."""
    return list(_written(text))


@functools.lru_cache(maxsize=8192)
def _written(text: str) -> tuple[tuple[str, Figure], ...]:
    # Remembered by text: a judged task's ask, skill, reference answer and the rows its reference reads are
    # read again for every answer graded on it (every replay, variant and shortcut of a certification).
    return tuple((raw + ("%" if pct else ""), Figure(raw, bool(pct))) for raw, pct in _NUMBER.findall(text))


def figures_in(text: str) -> list[Figure]:
    return [f for _, f in _written(text)]


@functools.lru_cache(maxsize=8192)
def _text_values(text: str) -> tuple[float, ...]:
    return tuple(f.value for _, f in _written(text))


def _values(text: str) -> list[float]:
    return list(_text_values(text))


def _expected(figure: str) -> float | None:
    found = figures_in(figure)
    return found[0].value if len(found) == 1 else None


def _data_values(case: JudgeCase) -> list[float]:
    texts = [case.ask, case.skill_text or "", case.reference_answer]
    texts += [k.point for k in case.key_points] + [f for k in case.key_points for f in k.figures]
    out: list[float] = []
    for block in [*case.available, *case.agent_data]:
        texts.append(block.source)
        if block.text is not None:
            texts.append(block.text)
        for row in block.rows:
            for value in row.values():
                out.extend(_row_values(value))
    for text in texts:
        out.extend(_text_values(text))
    return out


def _row_values(value: Any) -> list[float]:
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    return list(_text_values(value if isinstance(value, str) else json.dumps(value, default=str)))


def _term_used(answer: str, term: str | list[str]) -> bool:
    choices = [term] if isinstance(term, str) else term
    return any(phrase_matches(c, answer) for c in choices)


def _term_text(term: str | list[str]) -> str:
    return repr(term) if isinstance(term, str) else " or ".join(repr(t) for t in term)


@functools.lru_cache(maxsize=4096)
def grader_talk(answer: str) -> str | None:
    """The passage of an answer that addresses its grader rather than the ask, if any (remembered: every grade
    of a judged task reads its answer, and the same answer is graded many times over in a certification)."""
    for pattern in _GRADER_TALK:
        m = pattern.search(answer)
        if m is not None:
            return " ".join(m.group(0).split())[:80]
    return None


class RubricJudge:
    """Deterministic: the same case always gets the same verdict, so the audit never asks it twice."""

    name = NAME
    label = LABEL
    deterministic = True
    version = RUBRIC_VERSION

    @property
    def identity(self) -> str:
        return f"{NAME}@{RUBRIC_VERSION}"

    async def judge(self, case: JudgeCase, vote: int = 0) -> Judgment:
        return self.judge_now(case)

    def judge_now(self, case: JudgeCase) -> Judgment:
        verdict, labels, summary = self.assess(case)
        return Judgment(
            judge=self.identity,
            deterministic=True,
            template_sha256=TEMPLATE_SHA256,
            case_sha256=case.sha256(),
            verdict=verdict,
            labels=labels,
            votes=[verdict],
            summary=summary,
        )

    def assess(self, case: JudgeCase) -> tuple[Verdict, list[PointLabel], str]:
        """The verdict, the points' labels and the summary of `judge_now`, without the case's digest: the grader
        asks the verdict of every answer it grades and reports the summary; only a recorded judgment names its
        case."""
        answer = case.answer or ""
        labels: list[PointLabel] = []
        stated = figures_in(answer)
        talk = grader_talk(answer)
        if talk is not None:
            labels.append(
                PointLabel(
                    point="The answer is an analysis, not a message to its grader.",
                    label="UNSUPPORTED",
                    reason=f"the answer addresses the grader ({talk!r}); it is graded as no answer",
                )
            )
            answer, stated = "", []
        key_points = case.key_points or []
        for point in key_points:
            missing = [f for f in point.figures if not self._stated(stated, answer, f)]
            absent = [t for t in point.terms if not _term_used(answer, t)]
            if missing or absent:
                why = "; ".join(
                    [f"does not state {f}" for f in missing]
                    + [f"does not say {_term_text(t)}" for t in absent]
                )
                labels.append(PointLabel(point=point.point, label="OMITTED", reason=why))
            else:
                labels.append(
                    PointLabel(point=point.point, label="ADDRESSED", reason="figures and terms present")
                )
        points = case.points()
        for text, element in zip(points[len(key_points) :], case.required_elements, strict=False):
            found = bool(answer) and phrase_matches(element, answer)
            labels.append(
                PointLabel(
                    point=text,
                    label="ADDRESSED" if found else "OMITTED",
                    reason="present" if found else f"does not say {element!r}",
                )
            )
        if not key_points and not case.required_elements:
            cited = [f for f in figures_in(case.reference_answer) if f.significant]
            unstated = [f for f in cited if not any(s.states(f.value) for s in stated)]
            labels.append(
                PointLabel(
                    point=points[0],
                    label="OMITTED" if unstated or not answer.strip() else "ADDRESSED",
                    reason=f"{len(cited) - len(unstated)} of the reference's {len(cited)} figure(s) stated",
                )
            )
        support = _data_values(case)
        # a figure equal to a supporting value states it (`Figure.states`' first test): looked up before the scan
        exact = set(support)
        unsupported = [
            f
            for f in stated
            if f.significant and f.value not in exact and not any(f.states(v) for v in support)
        ]
        if unsupported:
            shown = ", ".join(_shown(f) for f in unsupported[:5])
            labels.append(
                PointLabel(
                    point="Every figure the answer states comes from the data, the ask, the skill or the reference.",
                    label="UNSUPPORTED",
                    reason=f"{shown} appear(s) in none of them",
                )
            )
        verdict: Verdict = "PASS" if all(p.label == "ADDRESSED" for p in labels) else "FAIL"
        addressed = sum(p.label == "ADDRESSED" for p in labels)
        summary = f"{LABEL}: {addressed} of {len(labels)} addressed" + (
            ""
            if verdict == "PASS"
            else "; " + "; ".join(f"{p.label}: {p.reason}" for p in labels if p.label != "ADDRESSED")
        )
        return verdict, labels, summary[:600]

    @staticmethod
    def _stated(stated: list[Figure], answer: str, figure: str) -> bool:
        """A figure is stated to the answer's own precision; one that is not a single number (a date, a
        ticker) is stated when the answer uses it."""
        value = _expected(figure)
        if value is None:
            return bool(answer) and phrase_matches(figure, answer)
        return any(s.states(value) for s in stated)


def _shown(f: Figure) -> str:
    return f"{f.value * 100:g}%" if f.percent else f"{f.value:g}"
