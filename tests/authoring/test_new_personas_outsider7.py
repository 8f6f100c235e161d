"""Regression fixtures for issue 21, seventh outsider round: three roles the shipped set and earlier rounds do not
have, written from the README, `world show` (with --facts, per app and widget) and `check` alone, frozen the
moment plain `taskforge check` was clean, and authored from the CLI into a scratch git repository as a user would.

- tests/authoring/fixtures/outsider7_pb_margin_analyst: a prime-brokerage margin analyst (4 check rounds); a
  handbook of its own through the overlay (prime-financing-schedule: two planted rows in the middle of five, one
  setting a period, one a counterparty), the desk limits handbook's Program Trading row, and a workspace prompt
  without a fact.
- tests/authoring/fixtures/outsider7_fof_dd_officer: a fund-of-funds operational due diligence officer (2 check
  rounds); a register of its own through the overlay (manager-review-register: a fund row and a severity row),
  the client reporting glossary's desk look-back entry (period YTD), a skill without a fact.
- tests/authoring/fixtures/outsider7_structured_credit_analyst: a securitisation analyst (6 check rounds); one
  story in the source benchmark's format (`{phrase, carries, meaning}` policy, governance naming a skill without
  a fact), a skill of its own through the overlay (abs-tranche-surveillance, two planted middle steps, one
  setting a scenario, one an asset class), a workspace prompt without a fact.

First `author` runs: 20/20, 20/20, 20/20, nothing blocking, as plain `check` and `check --draft` predicted.

What the writer met: the margin analyst's third round was a draft error on a read story's Find (the signature
matcher passes), with no fix the writer could act on ("the gates failed on what the author made of these
facts"). Cause, in the pipeline: the read target (Fails by Counterparty) shares its values with one look-alike
(Settlement Instruction Changes) that serves text only — a change, who asked, whether it was verified — and the
note's `must_not_contain` took a look-alike's figures alone, so a reader that notes every widget that fits wrote
both widgets' rows and passed on all three rounds. A look-alike serving no figure is now told apart by its text,
and a gate failure whose evidence names a passing shortcut says the facts field that shortcut exploits and how to
take it away (`authoring.storyfix.SHORTCUT_FIX`) instead of "the gates failed on what the author made of these facts".
And a repair's place warning said "the first listed … in the catalog's order" of a target at position 2 of 3:
the reader of places looks at the board first; the warning now lists the widgets the board places.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from authoring.checks import listed_place
from authoring.draft import draft_persona
from authoring.overlay import world_for
from certify import Task, grade, run_shortcut
from simulator import World
from tests.authoring.first_run import check_names_what_the_first_run_blocks_on

FIXTURES = Path(__file__).parent / "fixtures"
MARGIN = FIXTURES / "outsider7_pb_margin_analyst"
DUE_DILIGENCE = FIXTURES / "outsider7_fof_dd_officer"
STRUCTURED = FIXTURES / "outsider7_structured_credit_analyst"

PERSONAS = [
    (MARGIN, "pb_margin_analyst"),
    (DUE_DILIGENCE, "fof_dd_officer"),
    (STRUCTURED, "structured_credit_analyst"),
]


@pytest.mark.parametrize(("root", "persona"), PERSONAS, ids=lambda v: getattr(v, "name", v))
def test_check_clean_and_the_first_author_run_certifies_twenty(root, persona, tmp_path):
    """Frozen at check clean: nothing refused, and the authoring run itself (as `check --draft` and the first
    `author` run run it) certifies 20/20 with nothing blocking."""
    check_names_what_the_first_run_blocks_on(root, persona, None, set(), tmp_path)


def test_a_read_look_alike_that_serves_only_text_is_told_apart_by_its_text(tmp_path):
    """The margin analyst's recall story reads Fails by Counterparty, whose only look-alike in its app serves
    text rows: the Find note must not contain that text, so the signature matcher — which reads both widgets
    that take the stated values and notes both — fails the level instead of passing it on every round."""
    world = World.load(world_for(MARGIN, None))
    drafted = draft_persona(MARGIN, "pb_margin_analyst", world, tmp_path / "tasksets", "workspace_tasks")
    raw = drafted.tasks["calder_recall_fails_level1"].raw
    task = raw if isinstance(raw, Task) else Task.model_validate(raw)
    [note] = [
        w for w in task.eval.model_dump()["required_generated_widgets"] if w.get("widget_type") == "note"
    ]
    episode = run_shortcut("signature_matcher", world, task)
    [read] = [
        e
        for e in episode.events
        if e.tool == "get_widget_data"
        and e.args["widget_id"] == "settlements_breaks_hub_cash_settlement_instruction_changes"
    ]
    first = read.envelope["data"]["data"][0]
    assert not any(
        isinstance(v, int | float) for k, v in first.items() if k not in ("counterparty", "period")
    )
    texts = {str(v) for k, v in first.items() if k not in ("counterparty", "period") and len(str(v)) >= 3}
    assert texts & set(note["must_not_contain"]), (texts, note["must_not_contain"])
    assert not grade(task, episode).passed


def test_the_place_of_a_repair_target_is_counted_among_the_widgets_its_board_places():
    """`listed_place` with the board's widget ids counts the target's place among those (the reader of places
    looks at a repair's board first): Liquidity Under Stress is second of Risk Radar's three widgets taking a
    fund and a scenario in the catalog, and first of the two a board holding Scenario Losses places."""
    world = World.load(world_for(STRUCTURED, None))
    backends = list(world.default_backends)
    fixture = world.fixture_of("Tidewell Enterprise", backends)
    assert fixture is not None
    ids = {
        d.name: d.widget_id
        for d in fixture.catalog.widgets.values()
        if d.definition.get("category") == "Risk Radar"
    }
    widget = fixture.catalog.widgets[ids["Liquidity Under Stress"]]
    target = SimpleNamespace(
        origin="Tidewell Enterprise",
        widget=widget,
        widget_id=widget.widget_id,
        name=widget.name,
        params={"fund": "Breakwater Credit", "scenario": "Liquidity Freeze"},
    )
    assert listed_place(world, target, backends) == (
        1,
        ["Historical Replay", "Liquidity Under Stress", "Scenario Losses"],
    )
    assert listed_place(world, target, backends, {ids["Scenario Losses"]}) == (
        0,
        ["Liquidity Under Stress", "Scenario Losses"],
    )
