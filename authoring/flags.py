"""Flags: what a reviewer, a gate or calibration raised about a task or a story, and what became of it.

A blocker that is still open when its rounds run out stops the persona's commit and waits for a person (an
interrupt of the authoring graph); minor flags are recorded for review without blocking.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

from certify import now

Role = Literal["gate", "validator", "fairness", "calibration", "fixer", "recertify"]


class Finding(BaseModel):
    """What a flag and the review item made from it say alike about a finding: where it is, how bad, why, and
    what to do. Declared once, so the two directions (flag → item when a run is reviewed, item → flag when a
    decided item goes back to its run) cannot drift.

    A subclass names the order its files are written in (`WRITTEN`, every field once): the order the flags and
    review files have always had, which the shared base alone would change (pydantic puts a base's fields
    first)."""

    model_config = ConfigDict(extra="forbid")
    WRITTEN: ClassVar[tuple[str, ...]] = ()

    kind: str
    persona: str
    story: str | None = None
    task_id: str | None = None
    level: int | None = None
    severity: Literal["blocker", "minor"]
    reason: str
    evidence: str = ""
    suggestion: str = ""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if sorted(cls.WRITTEN) != sorted(cls.model_fields):
            raise TypeError(
                f"{cls.__name__}.WRITTEN must list each of its fields once: {list(cls.model_fields)}"
            )

    @model_serializer(mode="wrap")
    def _in_written_order(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        return {name: data[name] for name in self.WRITTEN if name in data}


FINDING_FIELDS = tuple(Finding.model_fields)
"""The finding's fields, to build a flag from a review item and back."""


class Flag(Finding):
    WRITTEN = (
        "id",
        "role",
        "kind",
        "persona",
        "story",
        "task_id",
        "level",
        "check",
        "severity",
        "reason",
        "evidence",
        "suggestion",
        "status",
        "created_at",
        "decision",
    )

    id: str
    role: Role
    check: str
    status: Literal["open", "resolved", "approved", "rejected", "fixed"] = "open"
    created_at: str = ""
    decision: dict[str, Any] | None = None

    @property
    def blocking(self) -> bool:
        return self.severity == "blocker" and self.status == "open"


def finding_of(record: Any) -> dict[str, Any]:
    """The finding's fields of a flag or a review item, to build the other from."""
    return {name: getattr(record, name) for name in FINDING_FIELDS}


def make_flag(
    *,
    role: Role,
    kind: str,
    persona: str,
    check: str,
    severity: str,
    reason: str,
    story: str | None = None,
    task_id: str | None = None,
    level: int | None = None,
    evidence: str = "",
    suggestion: str = "",
) -> Flag:
    """A flag whose id is stable for the same finding, so a re-raised finding is not duplicated."""
    key = "|".join([role, kind, persona, story or "", task_id or "", check, reason])
    return Flag(
        id="f" + hashlib.sha256(key.encode()).hexdigest()[:9],
        role=role,
        kind=kind,
        persona=persona,
        story=story,
        task_id=task_id,
        level=level,
        check=check,
        severity=severity,
        reason=reason,
        evidence=evidence,
        suggestion=suggestion,
        created_at=now(),
    )


def open_blockers(flags: Iterable[Flag], role: str) -> list[Flag]:
    """A reviewer's open blockers, those the author can answer: a role's own failure waits for a person."""
    return [f for f in flags if f.role == role and f.kind != "role_failure" and f.blocking]
