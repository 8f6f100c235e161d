"""A person's turn: the run waits (an interrupt) while any blocker is open, and goes on with their decisions."""

from __future__ import annotations

from typing import Any, Literal

from langgraph.graph import END
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from certify import now

from ...flags import Flag, make_flag
from ...review import list_command
from ...storyfix import inversion_evidence
from ..context import RunContext
from ..repairs import Unrepaired, propose_for
from ..state import PipelineState, Repair, RunResult


def review(
    state: PipelineState, runtime: Runtime[RunContext]
) -> Command[Literal["review", "repair", "finalize", "__end__"]]:
    """Wait for a person while any blocker is open; a rejected blocker ends the run uncommitted once every
    blocker of the run is decided (the others stay decidable); a "fix" decision takes the repair path."""
    run = runtime.context
    options = run.options
    record = state["calibration"]
    flags = dict(state.get("flags", {}))
    if record.verdict == "inverted":
        f = make_flag(
            role="calibration",
            kind="staircase",
            persona=options.persona,
            check="staircase",
            severity="blocker",
            reason="the staircase is inverted after the fixer's rounds",
            evidence=inversion_evidence(record.inversions),
        )
        if f.id not in flags:
            flags[f.id] = f
    blocking = [f for f in flags.values() if f.blocking]
    if not blocking:
        rejected = [f.id for f in flags.values() if f.status == "rejected"]
        if rejected:
            result = RunResult(
                status="rejected",
                summary=f"{options.persona}: rejected in review ({', '.join(rejected)}); nothing committed",
            )
            # langgraph types END as str; it is the "__end__" this node declares
            return Command(update={"flags": flags, "result": result}, goto=END)  # type: ignore[arg-type]
        return Command(update={"flags": flags}, goto="finalize")
    hint = list_command(options.tasksets_dir, options.taskset)
    run.emit("review", "waiting", f"{len(blocking)} item(s) need a person: {hint}")
    decisions = interrupt({"persona": options.persona, "items": [f.model_dump() for f in blocking]})
    changed, repairs = decide(run, state, flags, decisions or {})
    flags.update(changed)
    if repairs:
        return Command(update={"flags": flags, "repairs": repairs}, goto="repair")
    return Command(update={"flags": flags}, goto="review")


def decide(
    run: RunContext, state: PipelineState, flags: dict[str, Flag], decisions: dict[str, Any]
) -> tuple[dict[str, Flag], list[Repair]]:
    """The decided flags (approved or rejected) and the repairs a "fix" decision found."""
    changed: dict[str, Flag] = {}
    repairs: list[Repair] = []
    for fid, decision in decisions.items():
        if fid not in flags:
            continue
        verdict = decision.get("verdict")
        stamped = {**decision, "at": decision.get("at") or now()}
        if verdict in ("approve", "reject"):
            changed[fid] = flags[fid].model_copy(
                update={"status": "approved" if verdict == "approve" else "rejected", "decision": stamped}
            )
        elif verdict == "fix":
            authored = state.get("tasks", {}).get(flags[fid].task_id or "")
            if authored is None:
                continue
            proposal = propose_for(run.drivers.fixer, flags[fid], authored.raw, run.world, stamped)
            if not isinstance(proposal, Unrepaired):
                repairs.append(proposal)
    return changed, repairs
