"""Flags: what a reviewer, a gate or calibration raised about a task or a story, and what became of it.

A blocker that is still open when its rounds run out stops the persona's commit and waits for a person (an
interrupt of the authoring graph); minor flags are recorded for review without blocking.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from certify import now

Role = Literal["gate", "validator", "fairness", "calibration", "fixer", "recertify"]


class Flag(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    role: Role
    kind: str
    persona: str
    story: str | None = None
    task_id: str | None = None
    level: int | None = None
    check: str
    severity: Literal["blocker", "minor"]
    reason: str
    evidence: str = ""
    suggestion: str = ""
    status: Literal["open", "resolved", "approved", "rejected", "fixed"] = "open"
    created_at: str = ""
    decision: dict[str, Any] | None = None

    @property
    def blocking(self) -> bool:
        return self.severity == "blocker" and self.status == "open"


FINDING_FIELDS = (
    "kind",
    "persona",
    "story",
    "task_id",
    "level",
    "severity",
    "reason",
    "evidence",
    "suggestion",
)
"""What a flag and the review item made from it say alike about the finding; one list, so the two directions
(flag → item when a run is reviewed, item → flag when a decided item goes back to its run) cannot drift."""


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
