"""The authoring graph's state, the payloads its `Send`s carry, and what its nodes hand each other, as typed models.

Everything that crosses a node boundary or a checkpoint is a pydantic model: each authored task with its
certification, the flags and their decisions, the calibration record and its trials, the lessons and the
repairs waiting to be applied, the rounds spent and where a revision goes next. Reducers merge what parallel
branches (stories fanned out with Send, validators per level) write at once. The run's options are in the state
too (a resumed run goes on with the options it started with); `context.py` holds what is not checkpointed.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, TypedDict

from langgraph.channels import LastValue
from pydantic import BaseModel, ConfigDict, Field

from certify import CalibrationRecord, Trial, task_content_hash

from ..flags import Flag
from ..options import RunOptions
from ..taskset import task_id


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


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
        return task_id(self.story, self.level)


# ---------------------------------------------------------------- the payloads of Send
class Cursor(_Strict):
    """Where one story's author session stands: the payload of a `draft` round."""

    story: str
    level: int = 0
    round: int = 0
    feedback: list[str] = Field(default_factory=list)
    history: list[dict[str, Any]] = Field(default_factory=list)


class Validation(_Strict):
    """A certified level on its way to a fresh validator: the payload of `validate`."""

    task_id: str
    raw: dict[str, Any]


class Rehearsal(_Strict):
    """A level that just certified, for the reference to rehearse: the payload of `rehearse`."""

    raw: dict[str, Any]


# ---------------------------------------------------------------- what nodes hand each other
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


class Rounds(_Strict):
    """The rounds spent so far (the validators and the fairness reviewers each get `review_rounds` of sending
    levels back, the fixer `fix_rounds`), and where the author's next revision goes: back to the validators (a
    validator's blocker, or after a repair) or to the set's re-certification and the ladder review again (a
    fairness blocker)."""

    validator: int = 0
    fairness: int = 0
    fix: int = 0
    after_revise: Literal["validate", "recertify"] = "validate"

    @classmethod
    def upgrade(cls, stored: Any) -> Any:
        """What a checkpoint holds, as Rounds: checkpoints written before the graph was a package kept the
        counters in a dict and the route as `revise_from` (1: the validators, 2: the re-certification)."""
        if not isinstance(stored, dict):
            return stored
        return cls(
            validator=stored.get("validator", 0),
            fairness=stored.get("fairness", 0),
            fix=stored.get("fix", 0),
            after_revise="recertify" if stored.get("revise_from") == 2 else "validate",
        )


class RoundsChannel(LastValue[Rounds]):
    """The `rounds` channel: the last Rounds written (one writer per step), read from a checkpoint through
    `Rounds.upgrade`, so a run checkpointed by an earlier version resumes on its own route and counts."""

    __slots__ = ()

    def from_checkpoint(self, checkpoint: Any) -> RoundsChannel:
        return super().from_checkpoint(Rounds.upgrade(checkpoint))


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
    done: Annotated[dict[str, Literal["authored", "failed"]], _merge]
    tasks: Annotated[dict[str, AuthoredTask], _merge]
    validated: Annotated[dict[str, str], _merge]  # task id → the content hash its validator saw
    history: Annotated[dict[str, list[dict[str, Any]]], _merge]
    flags: Annotated[dict[str, Flag], _merge]
    rounds: Annotated[Rounds, RoundsChannel]
    revise: list[str]
    repairs: list[Repair]
    calibration: CalibrationRecord
    calibration_trials: list[Trial]
    lessons: Annotated[list[Lesson], operator.add]
    stamp: str
    result: RunResult


def repairing(
    options: RunOptions, tasks: dict[str, AuthoredTask], flags: dict[str, Flag], repair: Repair
) -> PipelineState:
    """The state a finished run's fix starts from: the persona's committed tasks, its run's flags, and the
    repair, which `route_start` sends down the repair path (validator, fairness, calibration, review)."""
    return {
        "options": options,
        "stories": sorted({t.story for t in tasks.values()}),
        "tasks": tasks,
        "flags": flags,
        "repairs": [repair],
        "rounds": Rounds(),
        "done": {t.story: "authored" for t in tasks.values()},
        "validated": {tid: task_content_hash(t.raw) for tid, t in tasks.items()},
    }
