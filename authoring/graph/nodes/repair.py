"""The fixer's nodes: `fix` (a proposal for each calibration defect) and `repair` (the one path every change
takes: a fixer's repair, a reviewer's `fix`, a fix of a finished run's item)."""

from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Command, Send

from ...flags import Flag
from ..context import RunContext
from ..repairs import Unrepaired, propose, unsettled
from ..state import AuthoredTask, Lesson, PipelineState, Repair, Rounds, Validation


def fix(state: PipelineState, runtime: Runtime[RunContext]) -> Command[Literal["repair", "review"]]:
    """The fixer on each defect; a repair takes the one repair path, an escalation becomes a blocker."""
    run = runtime.context
    record = state["calibration"]
    trials = state.get("calibration_trials", [])
    repairs: list[Repair] = []
    flags: dict[str, Flag] = {}
    for defect in record.defects:
        authored = state["tasks"][defect.task_id]
        proposal = propose(run.drivers.fixer, authored.raw, defect, trials, run.world, source="fixer")
        if isinstance(proposal, Unrepaired):
            reason = proposal.reason or "unrepaired defect"
            f = unsettled(run.options, authored, "staircase", reason, "; ".join(defect.fingerprint))
            flags[f.id] = f
            status, message = "escalated", f"fixer escalated {defect.task_id}"
        else:
            repairs.append(proposal)
            status, message = "repaired", f"fixer proposes a repair of {defect.task_id}: {proposal.repaired}"
        run.emit("fixer", status, message, story=authored.story, level=authored.level)
    rounds = state.get("rounds", Rounds())
    update: PipelineState = {
        "flags": flags,
        "rounds": rounds.model_copy(update={"fix": rounds.fix + 1}),
        "repairs": repairs,
    }
    return Command(update=update, goto="repair" if repairs else "review")


def repair(state: PipelineState, runtime: Runtime[RunContext]) -> Command[Literal["validate", "review"]]:
    """The one repair path: a patched task is certified, then goes back through the validator, the ladder
    fairness review and calibration; the lesson is recorded; a repair that does not certify is a blocker."""
    run = runtime.context
    tasks: dict[str, AuthoredTask] = {}
    flags: dict[str, Flag] = {}
    lessons: list[Lesson] = []
    for r in state.get("repairs", []):
        authored = state["tasks"][r.task_id]
        cert = run.certify(r.raw)
        if not cert.certified:
            reason = f"the repair ({r.repaired}) does not certify"
            f = unsettled(run.options, authored, "repair", reason, "; ".join(cert.failing()))
            flags[f.id] = f
            continue
        tasks[r.task_id] = authored.model_copy(update={"raw": r.raw, "cert": cert})
        if r.lesson and r.skill:
            lessons.append(
                Lesson(skill=r.skill, story=authored.story, level=authored.raw["difficulty"], lesson=r.lesson)
            )
        if r.flag and r.flag in state.get("flags", {}):
            decision = {**(r.decision or {}), "result": r.repaired}
            flags[r.flag] = state["flags"][r.flag].model_copy(
                update={"status": "fixed", "decision": decision}
            )
        run.emit(
            "fixer",
            "repaired",
            f"repaired {r.task_id}: {r.repaired}",
            story=authored.story,
            level=authored.level,
        )
    rounds = state.get("rounds", Rounds())
    update: PipelineState = {
        "tasks": tasks,
        "flags": flags,
        "lessons": lessons,
        "repairs": [],
        "rounds": rounds.model_copy(update={"after_revise": "validate"}),
    }
    if not tasks:
        return Command(update=update, goto="review")
    return Command(
        update=update, goto=[Send("validate", Validation(task_id=t, raw=a.raw)) for t, a in tasks.items()]
    )
