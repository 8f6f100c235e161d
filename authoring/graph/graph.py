"""The authoring graph's wiring: which node follows which (see `skills/orchestrator.md` for the story).

    load ─Send per story→ draft ⟲ (one author round per step: certified → next level and, in parallel, a
    validator for the certified level; failing gates → another round with the gates' feedback; out of rounds → a
    blocker) → gather (the barrier: once every story is done and every certified level validated)
    → after_validation ─→ revise (validator blockers go back to the author, whose change is validated again)
                                                          └→ recertify (all levels together) → fairness
    fairness ─→ revise (ladder blockers) | calibrate → fix (defects) → repair | review
    review (a person decides blockers: interrupt) ─→ repair (a "fix" decision) | finalize → commit | END (rejected)
    repair (the one path every change takes) ─Send→ validate → … → fairness → calibrate → review

Stories are authored in parallel; the levels of one story stay in order. Each draft is its own checkpointed
step, so a killed run resumes at the round it was in. Nodes that route themselves (`Command`) name their
destinations in their return type; the others are routed by `routes`. Nothing is written to the working tree
before the commit node.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from .calls import ROLE_RETRY
from .context import RunContext
from .nodes import (
    after_validation,
    calibrate,
    commit,
    draft,
    fairness,
    finalize,
    fix,
    gather,
    load,
    recertify,
    rehearse,
    repair,
    review,
    revise,
    validate,
)
from .routes import (
    route_after_calibration,
    route_after_fairness,
    route_after_gather,
    route_after_revise,
    route_after_validation,
    route_start,
)
from .state import PipelineState


def build_graph(
    checkpointer: Any = None,
) -> CompiledStateGraph[PipelineState, RunContext, PipelineState, PipelineState]:
    """The graph, compiled with `checkpointer`; invoke it with a `RunContext` as its context."""
    graph = StateGraph(PipelineState, context_schema=RunContext)
    graph.add_node("load", load)
    # draft, validate and rehearse are reached by Send and take its payload: their input is still the state's
    # schema (LangGraph would otherwise read the payload's model as channels of the state), which langgraph's
    # types cannot express: hence the ignores
    graph.add_node("draft", draft, input_schema=PipelineState, retry_policy=ROLE_RETRY)  # type: ignore[call-overload]
    graph.add_node("gather", gather)
    graph.add_node("validate", validate, input_schema=PipelineState, retry_policy=ROLE_RETRY)  # type: ignore[arg-type]
    graph.add_node("rehearse", rehearse, input_schema=PipelineState)  # type: ignore[arg-type]
    graph.add_node("after_validation", after_validation)
    graph.add_node("revise", revise, retry_policy=ROLE_RETRY)
    graph.add_node("recertify", recertify)
    graph.add_node("fairness", fairness, retry_policy=ROLE_RETRY)
    graph.add_node("calibrate", calibrate, retry_policy=ROLE_RETRY)
    graph.add_node("fix", fix, retry_policy=ROLE_RETRY)
    graph.add_node("repair", repair)
    graph.add_node("review", review)
    graph.add_node("finalize", finalize)
    graph.add_node("commit", commit)
    graph.add_conditional_edges(START, route_start)
    graph.add_conditional_edges("gather", route_after_gather)
    graph.add_edge("validate", "gather")
    graph.add_edge("rehearse", END)
    graph.add_conditional_edges("after_validation", route_after_validation)
    graph.add_conditional_edges("revise", route_after_revise, ["validate", "after_validation", "recertify"])
    graph.add_edge("recertify", "fairness")
    graph.add_conditional_edges("fairness", route_after_fairness)
    graph.add_conditional_edges("calibrate", route_after_calibration)
    graph.add_edge("finalize", "commit")
    graph.add_edge("commit", END)
    return graph.compile(checkpointer=checkpointer)


def node_names(graph: CompiledStateGraph) -> list[str]:
    """The graph's nodes as built (skills/orchestrator.md is checked against them)."""
    return [n for n in graph.get_graph().nodes if not n.startswith("__")]
