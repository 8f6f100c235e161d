"""Any fact a knowledge document holds can be grounded: the pointer comes from where the fact is (a table row by
its first cell, a numbered step by its number, a point by its lead or count, a glossary entry by its term), it is
grammatical in the request, and the ladder's reader lands on the piece holding it. Ambiguous and prose-only facts
are errors naming the story's field, with what the document offers."""

from __future__ import annotations

from pathlib import Path

import pytest

from authoring.factcheck import FactErrors, resolve
from authoring.locate import locate, offered, pieces
from authoring.sources import load_story
from certify.agents.knowledge import asked_unit, value_in_piece
from simulator import DEFAULT_WORLD, World

ROOT = Path(__file__).resolve().parents[2]
STRESS = "openbb://workspace/handbooks/stress-scenarios"
TABLE = """# Limits

| Desk | Limit | Chair |
|---|---|---|
| Alpha | alpha answers for Issuer | head one |
| Beta | beta answers for Country | head two |
"""


@pytest.fixture(scope="module")
def world() -> World:
    return World.load(DEFAULT_WORLD)


def test_a_row_is_pointed_at_by_its_first_cell_and_its_column():
    found = locate(TABLE, "beta answers for Country")
    assert found.piece is not None
    assert found.piece.where == "its row for Beta (the limit)"
    assert "Country" in asked_unit(TABLE, "Take the limit from the row for Beta in the handbook.")


def test_steps_points_and_entries_get_their_own_pointers():
    text = (
        "Intro line.\n\n1. Read the book.\n2. Sign it off at noon.\n\n"
        "- **The quiet rule** sets the status to Open.\n- Packs carry Critical matters.\n"
    )
    where = {p.text: p.position for p in pieces(text, "workflow")}
    assert where["Sign it off at noon."] == "step 2 of its workflow"
    assert where["The quiet rule sets the status to Open."] == "its point on the quiet rule"
    assert where["Packs carry Critical matters."] == "the fourth point of its workflow"
    glossary = (
        "# Terms\n\n**Cut-off** — trades booked after six settle tomorrow.\n**Sweep** — idle cash moves.\n"
    )
    assert locate(glossary, "idle cash moves").piece.position == "its entry for Sweep"


def test_two_pieces_saying_the_fact_and_prose_are_refused_with_a_reason():
    twice = TABLE + "| Gamma | alpha answers for Issuer | head three |\n"
    assert "2 pieces of it say it" in locate(twice, "alpha answers for Issuer").problem
    prose = "# Note\n\nThe desk closes on Friday. It opens on Monday. Nothing else matters here.\n"
    assert "running prose" in locate(prose, "opens on Monday").problem
    assert locate(prose, "Nothing else matters").piece.position == "its last point"
    assert "holds the fact" in locate(TABLE, "gamma answers").problem


def test_a_lead_holding_an_ordinal_word_is_followed_by_its_label(world):
    # (a lead as an earlier world worded its third rule): "its point on the downside-first valuation rule" names
    # the point by its bold lead, so the reader goes there and does not read "first" as the first point
    text = world.resources["openbb://workspace/conventions/research-house-rules"].text.replace(
        "The new-position valuation rule", "The downside-first valuation rule"
    )
    assert "downside-first" in text
    positions = [p.position for p in offered(text)]
    assert "its point on the downside-first valuation rule" in positions
    assert "the third point of its list" not in positions
    for piece in offered(text):
        assert asked_unit(text, piece.position).replace("**", "") == piece.text


def test_a_labelled_pointer_wins_over_words_of_the_request_another_row_shares():
    """The ladder asks a document the request's whole sentence, the document's title and verbs included: a row
    that shares those words ("the watch list is read …" for "Read the Credit Watch Sheet …") must not beat the
    row the pointer names by its first cell (outsider4's credit analyst: two Ground levels failed on it)."""
    sheet = (
        "| Review | Standing instruction |\n|---|---|\n"
        "| Watch-list pass | the watch list is read on MTD, and its MTD movers flagged |\n"
        "| Backtest pass | backtest misses are owned for Breakwater Credit |\n"
        "| Backtest pass extra | the longer label is another row |\n"
    )
    asked = "Read the Credit Watch Sheet workspace resource and use its row for Backtest pass for the fund."
    assert asked_unit(sheet, asked).startswith("Backtest pass | backtest misses")
    # the longest label the pointer says wins
    assert asked_unit(sheet, "Take its row for Backtest pass extra.").startswith("Backtest pass extra")


def test_every_row_of_a_handbook_grounds_a_story_not_only_the_planted_one(world, tmp_path):
    """A story grounding on the Keel row of the Stress Scenario Catalogue (not the row the world plants): the
    pointer names that row, the request says it grammatically, and the reader finds the value."""
    text = (ROOT / "stories" / "portfolio_manager" / "lantern_oil_shock.md").read_text()
    text = text.replace(
        "fact: the committee stresses Lantern on Oil +40%",
        "fact: the committee stresses Keel on Equities -15%",
    )
    text = text.replace(
        'params: {fund: Lantern Macro, scenario: "Oil +40%"}',
        'params: {fund: Keel Core Equity, scenario: "Equities -15%"}',
    )
    text = text.replace('seeded_wrong: {scenario: "Equities -15%"}', 'seeded_wrong: {scenario: "Oil +40%"}')
    policy = next(line for line in text.splitlines() if line.strip().startswith("policy:"))
    text = text.replace(
        policy,
        "  policy: {phrase: the large-cap book, carries: fund, meaning: the large-company equity fund - Keel "
        "Core Equity, note: Desk Shorthand, distractor: {phrase: the spread book, value: Breakwater Credit}}",
    )
    path = tmp_path / "keel_shock.md"
    path.write_text(text)
    story = load_story(path, "portfolio_manager")
    resolved = resolve(world, story, list(world.default_backends))
    gov = resolved.governance
    assert gov.where == "its row for Keel Core Equity (the committee scenario)"
    assert gov.value == "Equities -15%"
    param = resolved.targets[0].widget.param("scenario")
    unit = asked_unit(world.resources[STRESS].text, f"Take the scenario from {gov.position}")
    assert value_in_piece(unit, world.resources[STRESS].text, param) == "Equities -15%"


def test_an_ambiguous_fact_is_a_check_error_naming_the_field_and_what_the_source_offers(world, tmp_path):
    text = (ROOT / "stories" / "portfolio_manager" / "lantern_oil_shock.md").read_text()
    text = text.replace("fact: the committee stresses Lantern on Oil +40%", "fact: the committee stresses")
    path = tmp_path / "vague.md"
    path.write_text(text)
    with pytest.raises(FactErrors) as info:
        resolve(world, load_story(path, "portfolio_manager"), list(world.default_backends))
    messages = {e.key: e.message for e in info.value.errors}
    assert "4 pieces of it say it" in messages["facts.governance.fact"]
    assert "it offers its row for Keel Core Equity" in messages["facts.governance.fact"]
