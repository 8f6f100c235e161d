"""The authoring graph's conditional routes: where the run goes after a node that does not route itself."""

from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Send

from certify import task_content_hash

from .context import RunContext
from .state import PipelineState, Rounds, Validation


def route_start(state: PipelineState) -> Literal["load", "repair"]:
    """A new run authors; a run seeded with a finished persona's tasks and a repair starts at the repair."""
    return "repair" if state.get("repairs") else "load"


def route_after_gather(state: PipelineState) -> Literal["after_validation", "__end__"]:
    """The barrier after the parallel work: stories climbing their levels while each certified level is
    already with its validator. The last of them to finish sends the set on; the others end their branch."""
    if len(state.get("done", {})) < len(state.get("stories", [])):
        return "__end__"
    tasks, validated = state.get("tasks", {}), state.get("validated", {})
    waiting = [
        t for t, a in tasks.items() if a.cert.certified and validated.get(t) != task_content_hash(a.raw)
    ]
    return "__end__" if waiting else "after_validation"


def route_after_validation(state: PipelineState) -> Literal["revise", "recertify"]:
    return "revise" if state.get("revise") else "recertify"


def route_after_revise(state: PipelineState) -> list[Send] | Literal["after_validation", "recertify"]:
    """A fairness revision goes to the set's re-certification; any other to the validators, one per revised
    level that certifies (none: straight on)."""
    if state.get("rounds", Rounds()).after_revise == "recertify":
        return "recertify"
    tasks = state.get("tasks", {})
    certified = [t for t in state.get("revise", []) if t in tasks and tasks[t].cert.certified]
    if not certified:
        return "after_validation"
    return [Send("validate", Validation(task_id=t, raw=tasks[t].raw)) for t in certified]


def route_after_fairness(state: PipelineState) -> Literal["revise", "calibrate"]:
    return "revise" if state.get("revise") else "calibrate"


def route_after_calibration(state: PipelineState, runtime: Runtime[RunContext]) -> Literal["fix", "review"]:
    """An inverted staircase with defects goes to the fixer while its rounds last; everything else to review."""
    record = state["calibration"]
    if (
        not record.holds
        and record.defects
        and state.get("rounds", Rounds()).fix < runtime.context.options.fix_rounds
    ):
        return "fix"
    return "review"
