"""What a reviewer found, as a flag: one helper for the validator's and the ladder reviewer's rule and LLM
drivers, so a finding becomes the same flag (and the same stable id) whichever driver found it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

from certify import Task

from ..flags import Flag, make_flag


@dataclass(frozen=True)
class Finding:
    check: str
    severity: str
    reason: str
    evidence: str = ""
    suggestion: str = ""


def raise_flag(
    role: Literal["validator", "fairness"],
    persona: str,
    story: str | None,
    task: Task | None,
    level: int | None,
    finding: Finding,
) -> Flag:
    """The flag `role` raises about `task` (or, with no task, about the story's ladder)."""
    return make_flag(
        role=role,
        kind=role,
        persona=persona,
        story=story,
        task_id=task.id if task else None,
        level=level,
        **asdict(finding),
    )
