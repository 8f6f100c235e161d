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


# What the first `taskforge author` run (ladder reference, as `check --draft` runs it in memory) certifies of
# each template, and the levels it blocks on. Before issue 21 item 4: 11, 13, 11 and 10 of 20; with it alone,
# 17, 17, 18 and 20. Issue 20's items 2, 3 and 5 then turned more of the templates' own wording into findings
# (measured after the merge, 2026-12-02): their find hints are the catalog's description words (the description
# matcher and the bag of words find the target without reading what it serves: alert_sweep_level1,
# document_room_level1, settlement_watch_level1, proposal_pack_level1 ...), their policy phrases name the value
# ("same-day" for 1D: the phrase guesser, at breach_repair_level2, var_monitor_level2, nav_close_repair_level2,
# settlement_watch_level2, morning_briefing_level2), and a story with a blocked level blocks its later levels'
# staircase (the items without a failed gate of their own). Left open: rewording the templates is the user's to
# do (`check` names each field), and the corpus's world has too few widgets per app for hints by content.
DRAFTED = {
    "client_advisor": (
        12,
        {
            "client_review_level0",
            "client_review_level1",
            "client_review_level3",
            "client_review_level4",
            "holdings_watch_level1",
            "meeting_prep_level1",
            "meeting_prep_level2",
            "proposal_pack_level1",
        },
    ),
    "compliance_risk": (
        8,
        {
            "alert_sweep_level1",
            "alert_sweep_level2",
            "alert_sweep_level4",
            "breach_repair_level1",
            "breach_repair_level2",
            "case_handoff_level1",
            "case_handoff_level2",
            "var_monitor_level0",
            "var_monitor_level1",
            "var_monitor_level2",
            "var_monitor_level3",
            "var_monitor_level4",
        },
    ),
    "fund_operations": (
        8,
        {
            "document_room_level1",
            "form_tooling_level0",
            "form_tooling_level1",
            "form_tooling_level2",
            "form_tooling_level4",
            "nav_close_repair_level1",
            "nav_close_repair_level2",
            "settlement_watch_level0",
            "settlement_watch_level1",
            "settlement_watch_level2",
            "settlement_watch_level3",
            "settlement_watch_level4",
        },
    ),
    "portfolio_manager": (
        13,
        {
            "allocation_read_level0",
            "allocation_read_level1",
            "allocation_read_level2",
            "morning_briefing_level1",
            "morning_briefing_level2",
            "pm_handoff_level1",
            "price_watch_level1",
        },
    ),
}


@needs_compat
@pytest.mark.parametrize("persona", PERSONAS)
def test_the_first_author_run_of_each_source_template_certifies_what_it_did_when_measured(persona, tmp_path):
    """The source's format authors: the policies defined nowhere get a planted note, so every Derive level the
    world allows certifies; what still blocks is listed above with its cause."""
    from authoring.draft import draft_persona
    from simulator import World

    drafted = draft_persona(
        TEMPLATES, persona, World.load(COMPAT_WORLD), tmp_path / "tasksets", "workspace_tasks"
    )
    certified, blocked = DRAFTED[persona]
    assert len(drafted.tasks) == 20
    assert drafted.certified == certified
    assert {i.get("task_id") for i in drafted.items if i.get("task_id")} == blocked
    assert drafted.ok is (certified == 20)
    if persona == "portfolio_manager":
        derive = drafted.tasks["morning_briefing_level2"].raw
        (note,) = derive["setup"]["initial_state"]["dashboard"]["generated_widgets"]
        assert note["name"].endswith("Rulebook") and "sets the" in note["data"]
        assert len(note["data"].splitlines()) == 2  # the story's rule and a rival


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
    # what fails a gate is among what the first run blocks on, and each is a blocker with the gate's reason
    assert uncertified <= DRAFTED[persona][1]
    for task_id in uncertified:
        gates = state["tasks"][task_id].cert.gates
        assert {g for g, r in gates.items() if not r.ok} <= {"shortcuts", "counterfactual", "equivalence"}
        assert any(
            f.task_id == task_id and f.kind == "gate_failure" and f.severity == "blocker"
            for f in state["flags"].values()
        )
    if not uncertified:
        assert state["result"].status == "certified"
        assert state["calibration"].holds is True
