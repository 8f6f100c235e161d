"""Every repair's one way in: a defect (from calibration, or from a flag a person sends to the fixer), the
fixer's proposal as a `Repair`, and the `repair` node, which applies it (gates, validator, fairness,
calibration). The fix node, a reviewer's `fix` of a paused run and a fix of a finished run's item all go
through `propose`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from certify import Defect, Trial
from simulator import World

from ..failures import RoleFailure
from ..flags import Flag, make_flag
from ..options import RunOptions
from ..roles.fixer import FixerDriver
from .calls import attempt
from .state import AuthoredTask, Repair


@dataclass(frozen=True)
class Unrepaired:
    """No repair: the fixer escalated (`reason`, when it gave one) or gave no usable reply."""

    reason: str | None


def defect_of(flag: Flag, raw: dict[str, Any]) -> Defect:
    """A flag as the fixer reads a defect: its reason and evidence are the fingerprint."""
    return Defect(
        task_id=flag.task_id or "",
        level=raw["difficulty"],
        fingerprint=[flag.reason, flag.evidence],
        attempts=0,
        repeats=[],
    )


def propose(
    fixer: FixerDriver,
    raw: dict[str, Any],
    defect: Defect,
    trials: list[Trial],
    world: World,
    *,
    source: Literal["fixer", "review"],
    flag: str | None = None,
    decision: dict[str, Any] | None = None,
) -> Repair | Unrepaired:
    """The fixer's repair of one defect, on its way to the repair node (with the flag and decision it settles)."""
    result = attempt(fixer.repair, raw, defect, trials, world)
    if isinstance(result, RoleFailure):
        return Unrepaired(f"the fixer gave no usable reply: {result.reason}")
    if result.task is None:
        return Unrepaired(result.escalate)
    return Repair(
        task_id=defect.task_id,
        raw=result.task,
        repaired=result.repaired or "repaired",
        source=source,
        flag=flag,
        decision=decision,
        lesson=result.lesson,
        skill=result.skill,
        patch=list(getattr(result, "patch", None) or []),
    )


def propose_for(
    fixer: FixerDriver, flag: Flag, raw: dict[str, Any], world: World, decision: dict[str, Any]
) -> Repair | Unrepaired:
    """A person's `fix` of a flagged task: the flag is the defect, and the repair settles it."""
    return propose(
        fixer, raw, defect_of(flag, raw), [], world, source="review", flag=flag.id, decision=decision
    )


def unsettled(options: RunOptions, authored: AuthoredTask, check: str, reason: str, evidence: str) -> Flag:
    """A blocker on a task the fixer could not settle (an escalation, a repair that does not certify)."""
    return make_flag(
        role="fixer",
        kind="defect",
        persona=options.persona,
        story=authored.story,
        task_id=authored.task_id,
        level=authored.level,
        check=check,
        severity="blocker",
        reason=reason,
        evidence=evidence,
    )
