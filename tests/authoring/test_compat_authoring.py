"""External input: the source benchmark's authoring templates, authored with rule drivers against its world."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from authoring.graph import Drivers, RunContext, build_graph, serializer
from authoring.options import RunOptions
from authoring.roles.author import RuleAuthor
from authoring.roles.fairness import RuleFairness
from authoring.roles.fixer import RuleFixer
from authoring.roles.validator import RuleValidator
from tests.conftest import COMPAT, COMPAT_WORLD, needs_compat

TEMPLATES = COMPAT / "task_templates"
PERSONAS = (
    sorted(p.name for p in TEMPLATES.iterdir() if (p / "README.md").is_file()) if TEMPLATES.is_dir() else []
)


# Levels our author cannot close against a shortcut in that world (findings about the corpus's templates and
# world, not hidden): five Derive levels carry a value equal to the parameter's default (factcheck warns), so an
# agent that ignores the policy passes; the reconstructed Stark catalog serves the same placeholder rows whatever
# the cut (what a read derives leaves no trace in its note) and describes every widget as "<name> in <app>
# (reconstructed)" (no sibling's words can draw a word matcher away from a find hint that shares the name's);
# Live Grid is the only Getting Started widget whose symbol has options, so the stated symbol alone singles it
# out. They stay open for review with the gate's reason. (form_tooling_level3, whose Ground level asks for the
# resource's planted phrase in a note, closes since a note's text is graded as written: the stuffer's copy of the
# whole resource states its other facts after line breaks, which JSON-escaping used to hide.)
UNCLOSABLE = {
    "client_advisor": {"client_review_level2", "holdings_watch_level1", "meeting_prep_level2"},
    "compliance_risk": {"alert_sweep_level2", "case_handoff_level2"},
    "fund_operations": {"settlement_watch_level1"},
    "portfolio_manager": {"allocation_read_level2", "price_watch_level2"},
}


@needs_compat
@pytest.mark.parametrize("persona", PERSONAS)
def test_compat_persona_authors_twenty_certified_tasks(persona, tmp_path):
    graph = build_graph(InMemorySaver(serde=serializer()))
    drivers = Drivers(RuleAuthor(), RuleValidator(), RuleFairness(), RuleFixer())
    options = RunOptions(
        persona=persona,
        tasksets_dir=str(tmp_path / "tasksets"),
        sources_root=str(TEMPLATES),
        skills_dir=str(tmp_path / "skills"),
        world=str(COMPAT_WORLD),
        baseline="stark-workspace-a",
        repeats=1,
        commit=False,
    )
    config = {"configurable": {"thread_id": persona}, "recursion_limit": 500}
    graph.invoke({"options": options}, config, context=RunContext(options, drivers))
    state = graph.get_state(config).values
    assert len(state["tasks"]) == 20
    uncertified = {t for t, a in state["tasks"].items() if not a.cert.certified}
    assert uncertified == UNCLOSABLE.get(persona, set())
    for task_id in uncertified:
        gates = state["tasks"][task_id].cert.gates
        assert {g for g, r in gates.items() if not r.ok} == {"shortcuts"}
        assert any(
            f.task_id == task_id and f.kind == "gate_failure" and f.severity == "blocker"
            for f in state["flags"].values()
        )
    if not uncertified:
        assert state["result"].status == "certified"
        assert state["calibration"].holds is True
