"""The checking nodes: `validate` (a fresh validator per certified level), `rehearse` (the reference's trials
ahead of calibration), `gather` (the barrier after the parallel work), `after_validation` (blockers back to
the author or on) and `recertify` (every level gated again, together)."""

from __future__ import annotations

import asyncio

from langgraph.runtime import Runtime

from certify import rehearse as rehearse_task
from certify import task_content_hash

from ...failures import RoleFailure
from ...flags import make_flag, open_blockers
from ...storyfix import gate_cause
from ...taskset import split_task_id
from ..calls import attempt, failure_flag
from ..context import RunContext
from ..state import PipelineState, Rehearsal, Rounds, Validation


def validate(payload: Validation, runtime: Runtime[RunContext]) -> PipelineState:
    """One validator on one certified level, seeing only the task file and the world."""
    run = runtime.context
    task = run.parse(payload.raw)
    flags = attempt(run.drivers.validator.review, task, run.world, run.options.persona)
    if isinstance(flags, RoleFailure):
        flags = [failure_flag(run.options, flags, split_task_id(payload.task_id)[0], payload.task_id)]
    return {"flags": {f.id: f for f in flags}, "validated": {payload.task_id: task_content_hash(payload.raw)}}


def rehearse(payload: Rehearsal, runtime: Runtime[RunContext]) -> PipelineState:
    """The reference's trials on a level that just certified, when they cannot change before calibration
    (deterministic agents): it runs while the models are busy with the next level, and `calibrate` finds
    them done. One rehearsal at a time: they fill idle time and should not crowd the round's own work (the
    next drafts' requests) off the interpreter. Nothing enters the state; a resumed run simply calibrates
    what it does not find."""
    run = runtime.context
    with run.env.rehearsing:
        if run.rehearsable():
            asyncio.run(rehearse_task(run.world, run.parse(payload.raw), run.reference(), run.env.trials))
    return {}


def gather(state: PipelineState) -> PipelineState:
    """The barrier: `route_after_gather` decides whether this branch is the last to arrive."""
    return {}


def after_validation(state: PipelineState, runtime: Runtime[RunContext]) -> PipelineState:
    """The validators' blockers go to `revise` while their rounds last; otherwise the set moves on."""
    run = runtime.context
    blockers = open_blockers(state.get("flags", {}).values(), "validator")
    rounds = state.get("rounds", Rounds())
    targets = sorted({f.task_id for f in blockers if f.task_id})
    if blockers:
        run.emit("validator", "flagged", f"validators: {len(blockers)} blocker flag(s) on {targets}")
    if targets and rounds.validator < run.options.review_rounds:
        spent = rounds.model_copy(update={"validator": rounds.validator + 1, "after_revise": "validate"})
        return {"revise": targets, "rounds": spent}
    run.emit("validator", "done", "validators: done")
    return {"revise": []}


def recertify(state: PipelineState, runtime: Runtime[RunContext]) -> PipelineState:
    """Every level again, together: a change at one level can break another."""
    run = runtime.context
    tasks, flags = {}, {}
    for tid, authored in state.get("tasks", {}).items():
        cert = run.certify(authored.raw)
        tasks[tid] = authored.model_copy(update={"cert": cert})
        if not cert.certified:
            f = make_flag(
                role="gate",
                kind="gate_failure",
                persona=run.options.persona,
                story=authored.story,
                task_id=tid,
                level=authored.level,
                check="recertify",
                severity="blocker",
                reason="fails its gates when the set is re-certified together: "
                + gate_cause(authored.level, {n: g.detail for n, g in cert.gates.items() if not g.ok}),
                evidence="; ".join(cert.failing()),
            )
            flags[f.id] = f
    ok = sum(1 for t in tasks.values() if t.cert.certified)
    run.emit("gates", "recertified", f"re-certified the set together: {ok}/{len(tasks)}")
    return {"tasks": tasks, "flags": flags}
