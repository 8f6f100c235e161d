"""Regression fixtures for issue 21, sixth outsider round: three roles the shipped set and earlier rounds do not
have, written from the README, `world show` and `check` alone, frozen the moment plain `taskforge check` was
clean (4 check rounds each), and authored from the CLI into a scratch repository as a user would.

- tests/authoring/fixtures/outsider6_alm_actuary: an insurance ALM actuary; a handbook of its own through the
  overlay (liability-matching-sheet: three planted rows among unplanted ones, one of them a middle row) and the
  stress catalogue's second row.
- tests/authoring/fixtures/outsider6_asset_servicing_lead: a corporate actions lead; one story in the source
  benchmark's format (`{phrase, carries, meaning}` policy, governance naming a skill without a fact), one
  grounding in a workspace prompt without a fact, the settlement handover's second row, the pre-open
  timetable's third row.
- tests/authoring/fixtures/outsider6_internal_auditor: an internal auditor; a register of its own through the
  overlay, the barrier roster's third row, the middle entry of a three-entry glossary, a skill without a fact.

First `author` runs: 20/20, 20/20, 20/20 (each with three non-blocking Find notes), as plain `check` and
`check --draft` predicted. What the writer met on the way: every first-pick Find target the only widget of its
app taking its values (5 of them), verbs the agents read as no action ("lay out", "take a reading of", "true
up", "rebook"), and Ground facts refused because their document names the value first or last — the entries of
two-rule glossaries and a prompt's last step, which `world show --facts` listed as groundable without saying
so, and whose refusal told the writer to reorder a document of the world. Now `world show --facts` tags every
piece with what a `sets` fact there sets and whether check accepts it, and the refusal names the pieces that
would carry the parameter and the overlay file that would replace the document. And a refusal check made was
not what the run did: the source skimmers ranked the resources by the whole request, whose parameter words
("scenario") picked the stress catalogue over the glossary the request names, so the first run certified a Ground
level whose glossary names its value last; they now rank by the sentences that speak of a resource."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from authoring.checks import check_persona
from authoring.cli import app
from authoring.draft import draft_persona
from authoring.groundable import groundable
from authoring.overlay import world_for
from simulator import World
from tests.authoring.first_run import check_names_what_the_first_run_blocks_on

FIXTURES = Path(__file__).parent / "fixtures"
ALM = FIXTURES / "outsider6_alm_actuary"
SERVICING = FIXTURES / "outsider6_asset_servicing_lead"
AUDITOR = FIXTURES / "outsider6_internal_auditor"

PERSONAS = [(ALM, "alm_actuary"), (SERVICING, "asset_servicing_lead"), (AUDITOR, "internal_auditor")]


@pytest.mark.parametrize(("root", "persona"), PERSONAS, ids=lambda v: getattr(v, "name", v))
def test_check_clean_and_the_first_author_run_certifies_twenty(root, persona, tmp_path):
    """Frozen at check clean: nothing refused, and the authoring run itself (as `check --draft` and the first
    `author` run run it) certifies 20/20 with nothing blocking."""
    check_names_what_the_first_run_blocks_on(root, persona, None, set(), tmp_path)


def _tags(world: World, ref: str, position: str) -> dict[tuple[str, str], str]:
    piece = next(g for g in groundable(world) if g.ref == ref and g.position.startswith(position))
    return {(x.param, x.value): x.refused for x in piece.sets}


def test_world_show_facts_says_which_pieces_can_carry_a_sets_fact():
    """The pieces the writer was refused on are tagged refused, with check's reason; the ones the frozen stories
    ground in are tagged accepted — one rule (`authoring.groundable.skimmed`) for both."""
    world = World.load(world_for(SERVICING, None))
    desk = "openbb://workspace/conventions/portfolio-desk"
    assert _tags(world, desk, "its point on the blue-folder case") == {
        ("scenario", "Equities -15%"): "the document names it last"
    }
    assert _tags(world, desk, "its point on the anti-dilution") == {
        ("event_type", "Rights Issue"): "the document names it most (or first)"
    }
    retired = _tags(world, "workspace_tool_usage", "step 10")
    assert retired[("tab", "Closed Out")] == "the last tab title the document quotes"
    handover = _tags(world, "openbb://workspace/handbooks/settlement-handover", "its row for Breakwater")
    assert handover[("status", "Investigating")] == ""
    # an option inside another parameter's longer option is not said: the row sets the desk, not a department
    limits = _tags(world, "openbb://workspace/handbooks/desk-limits", "its row for Program Trading")
    assert limits == {("desk", "Program Trading"): "", ("limit_type", "Leverage"): ""}
    shown = " ".join(
        CliRunner()
        .invoke(app, ["world", "show", "--facts", "portfolio-desk", "--sources", str(SERVICING)])
        .stdout.split()
    )
    assert "[sets scenario=Equities -15%: refused, the document names it last]" in shown


def test_a_skimmed_ground_fact_names_the_pieces_that_would_carry_it_and_the_overlay_file(tmp_path):
    """The actuary's first draft grounded the committee's sell-off in the portfolio desk's glossary, whose
    second scenario entry is its last: the refusal says which pieces of the world carry a scenario fact check
    accepts and which overlay file would replace the glossary, not only how the document should be reordered."""
    import shutil

    root = tmp_path / "src"
    shutil.copytree(ALM, root)
    story = root / "stories" / "alm_actuary" / "breakwater_surrender_liquidity.md"
    text = story.read_text()
    text = text.replace("scenario: Credit Spreads +200bp}", "scenario: Equities -15%}")
    text = text.replace(
        'resource: "openbb://workspace/handbooks/stress-scenarios", fact: the committee stresses Breakwater on '
        "Credit Spreads +200bp",
        'resource: "openbb://workspace/conventions/portfolio-desk", fact: "sets the scenario to Equities -15%: '
        "the committee's stock-market sell-off stress\"",
    )
    story.write_text(text)
    world = World.load(world_for(root, None))
    report = check_persona(root, "alm_actuary", world)
    [error] = [e for e in [*report.errors, *report.ladder_errors] if e.key == "facts.governance.fact"]
    message = " ".join(error.message.split())
    assert "names last" in message
    assert "overlay/resources/portfolio-desk-rules.md replaces it" in message
    assert (
        "openbb://workspace/handbooks/stress-scenarios | its row for Breakwater Credit "
        "(scenario=Credit Spreads +200bp)" in message
    )
    # and the refusal is what the run does: the tail skimmer reads the resource the request names (ranked by
    # the sentence that speaks of it; by the whole request it read the stress catalogue, which the request's
    # "scenario" words favour, and the run certified a level check refuses)
    drafted = draft_persona(root, "alm_actuary", world, tmp_path / "tasksets", "workspace_tasks")
    blocked = {i["task_id"] for i in drafted.items if i.get("severity") == "blocker"}
    assert blocked == {"breakwater_surrender_liquidity_level3"}, [i["reason"] for i in drafted.items]


def test_a_distractor_on_the_default_is_said_when_a_coined_rule_takes_its_place():
    """The auditor's basket story sets its distractor on the desk parameter's default; Derive's second view
    cannot take the default (a view added without the parameter would show it unread), so the pipeline coins a
    rule beside it. That used to happen silently; check now says it, naming the facts field."""
    report = check_persona(AUDITOR, "internal_auditor", World.load(world_for(AUDITOR, None)))
    said = [w.message for w in report.warnings if w.file.endswith("basket_desk_halts.md")]
    assert any(
        m.startswith("facts.policy.distractor.value 'Cash Equities' is desk's default") and "coins" in m
        for m in said
    ), said
