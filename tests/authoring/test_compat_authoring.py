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
# world, not hidden): the reconstructed Stark catalog serves the same placeholder rows whatever the cut, so a read
# whose Derive hides the cut leaves no trace of it in its note (meeting_prep_level2, case_handoff_level2);
# alert_sweep_level2 carries the status default, and four shortcuts still pass with the call that states it
# required (not diagnosed further); Live Grid is the only Getting Started widget whose symbol has options, so the
# stated symbol alone singles it out (holdings_watch_level1); the reconstructed catalog describes each widget by
# its name ("Failed Trades in Fund Operations Control Tower (reconstructed)"), so the hint "the fails queue"
# matches the name's stem and a bag of words finds what the Find rung finds (settlement_watch_level1). They stay
# open for review with the gate's reason. Closed since: a policy given only by {phrase, carries, meaning} gets
# its definition planted on the Derive board beside a rival rule; an add's Derive whose policy carries the
# parameter's default is graded by the call that states it.
UNCLOSABLE = {
    "client_advisor": {"holdings_watch_level1", "meeting_prep_level2"},
    "compliance_risk": {"alert_sweep_level2", "case_handoff_level2"},
    "fund_operations": {"settlement_watch_level1"},
    "portfolio_manager": set(),
}

# What the first `taskforge author` run (ladder reference, as `check --draft` runs it in memory) certifies of
# each template, and the levels it blocks on, by cause: the three above, plus Find levels whose hint the
# reconstructed catalog cannot tell from a sibling (its descriptions are "<name> in <app> (reconstructed)":
# meeting_prep_level1, alert_sweep_level1) and document_room_level1, which the validator refuses (Document Search
# is the only Daloopa widget taking its values). Before issue 21 item 4: 11, 13, 11 and 10 of 20.
DRAFTED = {
    "client_advisor": (17, {"holdings_watch_level1", "meeting_prep_level1", "meeting_prep_level2"}),
    "compliance_risk": (17, {"alert_sweep_level1", "alert_sweep_level2", "case_handoff_level2"}),
    "fund_operations": (18, {"document_room_level1", "settlement_watch_level1"}),
    "portfolio_manager": (20, set()),
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
