"""The authoring graph's state and run options, as typed models.

Everything that crosses a node boundary or a checkpoint is a pydantic model: the run's options (also passed to
every node as the run's context), each authored task with its certification, the flags and their decisions, the
calibration record and its trials, the lessons and the repairs waiting to be applied. Reducers merge what
parallel branches (stories fanned out with Send, validators per level) write at once.
"""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from certify.calibrate import MIN_ATTEMPTS, CalibrationRecord
from certify.trial import Trial

from .flags import Flag


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunOptions(_Strict):
    """Everything a persona run depends on; fixed when the run starts."""

    persona: str
    taskset: str = "workspace_tasks"
    tasksets_dir: str
    sources_root: str
    skills_dir: str
    world: str
    baseline: str | None = None
    reference_agent: str = "heuristic"
    frontier_agent: str | None = None
    repeats: int = Field(3, ge=1)
    min_attempts: int = Field(
        MIN_ATTEMPTS, ge=1, description="valid attempts per agent a level needs to be measured by calibration"
    )
    author_rounds: int = Field(3, ge=1)
    review_rounds: int = Field(2, ge=0)
    fix_rounds: int = Field(2, ge=0)
    commit: bool = True
    inputs_sha256: str = ""
    inputs: dict[str, Any] = Field(default_factory=dict)
    run_id: str = ""

    @property
    def taskset_root(self) -> Path:
        return Path(self.tasksets_dir) / self.taskset


class GateOutcome(_Strict):
    ok: bool
    detail: str


class Certification(_Strict):
    certified: bool
    gates: dict[str, GateOutcome] = Field(default_factory=dict)
    notes: dict[str, Any] = Field(default_factory=dict)

    def failing(self) -> list[str]:
        return [f"gate {name}: {g.detail}" for name, g in self.gates.items() if not g.ok]


class AuthoredTask(_Strict):
    """One level's task file as the author wrote it (the bytes that will be committed), and its certificate."""

    raw: dict[str, Any]
    cert: Certification
    story: str
    level: int
    rounds: int = 1

    @property
    def task_id(self) -> str:
        return f"{self.story}_level{self.level}"


class Cursor(_Strict):
    """Where one story's author session stands: the Send payload of a draft round."""

    story: str
    level: int = 0
    round: int = 0
    feedback: list[str] = Field(default_factory=list)
    history: list[dict[str, Any]] = Field(default_factory=list)


class Lesson(_Strict):
    skill: str
    story: str | None
    level: str
    lesson: str


class Repair(_Strict):
    """A patched task on its way back through the gates, the validator, fairness and calibration."""

    task_id: str
    raw: dict[str, Any]
    repaired: str
    source: Literal["fixer", "review"]
    flag: str | None = None
    decision: dict[str, Any] | None = None
    lesson: str | None = None
    skill: str | None = None
    patch: list[dict[str, Any]] = Field(default_factory=list)


class RunResult(_Strict):
    status: Literal["committed", "certified", "rejected"]
    summary: str
    commit: str | None = None
    paths: list[str] = Field(default_factory=list)


class ProgressEvent(_Strict):
    """What the live display shows: one story's level, the role at work, the round, and how it went."""

    story: str | None = None
    level: int | None = None
    role: str
    round: int | None = None
    status: str
    message: str


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    return {**a, **b}


class PipelineState(TypedDict, total=False):
    options: RunOptions
    stories: list[str]
    done: Annotated[dict[str, str], _merge]
    tasks: Annotated[dict[str, AuthoredTask], _merge]
    validated: Annotated[dict[str, str], _merge]
    history: Annotated[dict[str, list[dict[str, Any]]], _merge]
    flags: Annotated[dict[str, Flag], _merge]
    rounds: Annotated[dict[str, int], _merge]
    revise: list[str]
    repairs: list[Repair]
    calibration: CalibrationRecord
    calibration_trials: list[Trial]
    lessons: Annotated[list[Lesson], operator.add]
    stamp: str
    result: RunResult


class ValidateInput(TypedDict):
    task_id: str
    raw: dict[str, Any]


# The models stored at the top of a checkpoint value (nested models are rebuilt by their parents' validation).
CHECKPOINT_TYPES: tuple[type[BaseModel], ...] = (
    RunOptions,
    AuthoredTask,
    Lesson,
    Repair,
    RunResult,
    Flag,
    CalibrationRecord,
    Trial,
)


def serializer() -> Any:
    """The checkpoint serializer, restricted to our own state models (no warning, nothing else revived)."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    return JsonPlusSerializer(allowed_msgpack_modules=[(t.__module__, t.__name__) for t in CHECKPOINT_TYPES])
