"""What a calibration records: the levels' statistics, inversions, defects, noise, probes, shortcuts, the
ladder matrix and the verdict, as strict models (the calibration.json beside a persona's tasks)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    model_validator,
)

from ..judge import JudgeSummary, OmitsAbsentJudge

RECORD_JSON, RECORD_MD, PLOT_PNG, TRIALS_JSONL = (
    "calibration.json",
    "calibration.md",
    "staircase.png",
    "trials.jsonl",
)
# A rung measured on fewer valid attempts (per agent) than this says nothing: it is "insufficient".
MIN_ATTEMPTS = 3


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


Verdict = Literal["holds", "inverted", "insufficient"]


class LevelStat(_Strict):
    """One rung. `attempts` are valid trials (a deterministic agent's repeats collapsed to one), `tasks` the
    unique tasks among them; the Wilson interval counts tasks, each credited with the share of its attempts
    that passed. A rung with fewer than the minimum attempts per agent is "insufficient": not measured."""

    level: str
    attempts: int
    tasks: int = 0
    passes: int
    pass_rate: float | None
    fail_rate: float | None
    ci: list[float]
    per_repeat: list[float | None] = Field(default_factory=list)
    status: Literal["measured", "insufficient"] = "measured"


class Inversion(_Strict):
    lower: str
    upper: str
    fail_lower: float
    fail_upper: float


class Defect(_Strict):
    task_id: str
    level: str
    fingerprint: list[str]
    attempts: int
    repeats: list[int]


class Noise(_Strict):
    level: str
    task_id: str
    detail: str


class Probe(_Strict):
    """A rung above Execute that the reference never passed: a frontier episode settles it (an honest floor
    when it passes, flagged when it fails); without one it stays "unprobed", a visible review item."""

    level: str
    status: Literal["honest_floor", "flagged", "unprobed"]
    task_id: str | None = None
    agent: str | None = None
    passed: bool | None = None
    failure_codes: list[str] = Field(default_factory=list)


class Shortcut(_Strict):
    task_id: str
    level: str
    detail: str


class LadderCell(_Strict):
    agent: str
    level: str
    tasks: int
    passes: int


class LadderFinding(_Strict):
    """A task that breaks the ladder criterion, with the episode that shows it: solved by the rung below its
    level (solvable without the level's capability), or not solved by its own rung (not solvable with it)."""

    task_id: str
    level: str
    agent: str
    kind: Literal["solved_below", "unsolved_at"]
    detail: str
    failure_codes: list[str] = Field(default_factory=list)
    events: list[dict[str, Any]] = Field(default_factory=list)


class LadderReport(_Strict):
    """The capability ladder's matrix (agent × level) and the fairness findings of its criterion: level k is
    passed by ladder-k and failed by ladder-(k-1)."""

    agents: list[str]
    levels: list[str]
    cells: list[LadderCell]
    findings: list[LadderFinding] = Field(default_factory=list)
    fair: dict[str, bool] = Field(default_factory=dict)

    def cell(self, agent: str, level: str) -> LadderCell | None:
        return next((c for c in self.cells if c.agent == agent and c.level == level), None)


class CalibrationRecord(_Strict, OmitsAbsentJudge):
    persona: str
    taskset: str
    agent: str
    repeats: int
    created_at: str
    trials: int
    invalid: int
    levels: list[LevelStat]
    holds: bool
    verdict: Verdict = "holds"
    deterministic: bool = False
    min_attempts: int = 1
    inversions: list[Inversion] = Field(default_factory=list)
    defects: list[Defect] = Field(default_factory=list)
    noise: list[Noise] = Field(default_factory=list)
    probes: list[Probe] = Field(default_factory=list)
    shortcuts: list[Shortcut] = Field(default_factory=list)
    ladder: LadderReport | None = None
    judge: JudgeSummary | None = Field(
        None,
        description="What judging the trials' answers took, apart from the agent's cost; absent when no task "
        "of the calibration is judged.",
    )

    @model_validator(mode="before")
    @classmethod
    def _verdict_of_older_records(cls, data: Any) -> Any:
        """Records written before verdicts existed said only whether the staircase held."""
        if isinstance(data, dict) and "verdict" not in data and "holds" in data:
            return {**data, "verdict": "holds" if data["holds"] else "inverted"}
        return data

    @property
    def insufficient(self) -> list[str]:
        return [s.level for s in self.levels if s.status == "insufficient"]

    def summary(self) -> dict[str, Any]:
        out = {
            "agent": self.agent,
            "repeats": self.repeats,
            "holds": self.holds,
            "verdict": self.verdict,
            "pass_rates": {s.level: s.pass_rate for s in self.levels},
            "insufficient": self.insufficient,
            "defects": len(self.defects),
            "noise": len(self.noise),
            "probes": {p.level: p.status for p in self.probes},
            "shortcuts": len(self.shortcuts),
        }
        if self.judge is not None:
            out["judge"] = self.judge.model_dump()
        if self.ladder is not None:
            out["ladder"] = {
                "fair": self.ladder.fair,
                "findings": len(self.ladder.findings),
                "matrix": {
                    a: {
                        c.level: round(c.passes / c.tasks, 4) if c.tasks else None
                        for c in self.ladder.cells
                        if c.agent == a
                    }
                    for a in self.ladder.agents
                },
            }
        return out
