"""What a judge says about one answer, and what saying it cost.

Kept free of the grader and the model client so that the grader's `answer_judgment` check, the trial record and
the audit can all hold a `Judgment` without importing the judges themselves.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

Label = Literal["ADDRESSED", "OMITTED", "UNSUPPORTED"]
Verdict = Literal["PASS", "FAIL"]


class OmitsAbsentJudge(BaseModel):
    """A record with an optional `judge` field (a trial, a calibration) that is written without the key when no
    judge was asked, so records of unjudged tasks stay byte for byte as before judges existed (and the grader's
    fingerprints of them do not move). It declares no field, so the subclass's field order is its own."""

    @model_serializer(mode="wrap")
    def _without_absent_judge(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        if getattr(self, "judge", None) is None:
            data.pop("judge", None)
        return data


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PointLabel(_Strict):
    """One key point (or required element, or a finding of its own such as an unsupported figure) as labelled."""

    point: str
    label: Label
    reason: str = ""


class JudgeSpend(_Strict):
    """Model calls a judge made and what they cost; kept apart from the agent's. Replies read from the response
    cache cost nothing and are counted as `cached`; transport failures retried are `transport_retries`, never
    votes."""

    calls: int = 0
    cached: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    malformed: int = 0
    transport_retries: int = 0

    def add(self, other: JudgeSpend) -> None:
        self.calls += other.calls
        self.cached += other.cached
        self.tokens_in += other.tokens_in
        self.tokens_out += other.tokens_out
        self.cost = round(self.cost + other.cost, 6)
        self.malformed += other.malformed
        self.transport_retries += other.transport_retries


class Judgment(_Strict):
    """A judge's verdict on one answer. `votes` are the verdicts it was asked for (one, or three when a majority
    settled it); `template_sha256` is the judge template the verdict was given under, `case_sha256` the judge's
    input without the answer (what the task and the agent's trace gave it)."""

    judge: str
    deterministic: bool
    template_sha256: str
    case_sha256: str = ""
    verdict: Verdict | None = None
    labels: list[PointLabel] = Field(default_factory=list)
    votes: list[Verdict] = Field(default_factory=list)
    summary: str = ""
    spend: JudgeSpend = Field(default_factory=JudgeSpend)
    error: str | None = None


class JudgeUnavailable(Exception):
    """No verdict could be had: the endpoint stayed down after the retries, the budget is spent, the request was
    refused, or the replies never followed the protocol. It says nothing about the answer, so it is never a vote:
    the trial is invalid, the audit case unsettled. `spend` is what the attempt cost."""

    def __init__(self, reason: str, message: str, spend: JudgeSpend | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.spend = spend or JudgeSpend()


class JudgeSummary(_Strict):
    """What judging a run's answers took, reported apart from the agent's tokens and cost."""

    judges: list[str]
    judged: int
    verdicts: dict[str, int]
    unavailable: int
    spend: JudgeSpend

    @classmethod
    def of(cls, judgments: list[Judgment]) -> JudgeSummary | None:
        """The summary of `judgments` (None when there are none: nothing was judged)."""
        if not judgments:
            return None
        spend = JudgeSpend()
        for judgment in judgments:
            spend.add(judgment.spend)
        return cls(
            judges=sorted({j.judge for j in judgments}),
            judged=sum(1 for j in judgments if j.verdict is not None),
            verdicts={v: sum(1 for j in judgments if j.verdict == v) for v in ("PASS", "FAIL")},
            unavailable=sum(1 for j in judgments if j.verdict is None),
            spend=spend,
        )

    def line(self) -> str:
        """One line for a terminal or a markdown record."""
        s = self.spend
        return (
            f"judge {', '.join(self.judges)}: {self.judged} answer(s) judged "
            f"(PASS {self.verdicts.get('PASS', 0)}, FAIL {self.verdicts.get('FAIL', 0)}"
            + (f", {self.unavailable} without a verdict" if self.unavailable else "")
            + f"); {s.calls} call(s)"
            + (f" + {s.cached} cached" if s.cached else "")
            + f", tokens in {s.tokens_in} out {s.tokens_out}, cost ${s.cost:.4f} (apart from the agent's)"
        )
