"""Regression fixtures for issue 21, fourth outsider round: personas written from the README, the CLI help and
`world show` alone, frozen the moment `taskforge check` was clean, and authored from the CLI in a scratch
repository as a user would.

- tests/authoring/fixtures/outsider4: a credit analyst and an investor-relations lead for the default world,
  roles the shipped set does not have, with facts no shipped story uses and two handbooks of their own through
  the overlay (credit-watch-sheet, investor-commitments).
- tests/authoring/fixtures/outsider4_templates: a data platform lead in the source benchmark's template format
  (README.md + stories, policies as {phrase, carries, meaning}, governance naming a skill without a fact),
  against the compat world.

First `author` runs before the fixes: 17/20 (3 blocking), 17/20 (3) and 19/20 (1); `check --draft` printed the
same items each time, plain `check` none. Causes, all in the agents' reading (certify/agents), none in the
stories: the Ground rung resolved "its row for Backtest pass" to another row that shared the request's other
words (the document's title, "read"); a note asked for by name was taken to be "Contact Log", a widget the
request mentions after it; "the second-reader export policy" read as a clause fencing off a twin ("the second").
After them every first run certifies 20/20 and `check --draft` says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.authoring.first_run import check_names_what_the_first_run_blocks_on

FIXTURES = Path(__file__).parent / "fixtures"
DEFAULT_WORLD = FIXTURES / "outsider4"
TEMPLATES = FIXTURES / "outsider4_templates"
COMPAT_WORLD = Path(__file__).parents[2] / "compat" / "workspacebench" / "world"

PERSONAS = [
    (DEFAULT_WORLD, "credit_analyst", None),
    (DEFAULT_WORLD, "investor_relations_lead", None),
    (TEMPLATES, "data_platform_lead", COMPAT_WORLD),
    # the third round's execution trader (template format, compat world), frozen while plain check still had one
    # error its first author run did not bear out: shortfall_read's "rows ignore the cut" on its read Derive
    # ('Implementation Shortfall' serves the same rows for every period), false since the Derive level asks for a
    # second view on the rival rule's value (`factcheck.second_view`, which check asks as Level.compare does)
    (FIXTURES / "outsider_round3_templates", "execution_trader", COMPAT_WORLD),
]


# What plain `check` refuses since the tail skimmer joined the battery (players5, landed after these fixtures were
# frozen): a Ground fact its document names last is recoverable without its row by a reader of the document's
# end. Both overlay handbooks end their tables on the facts' values; the first run's gates refuse two of
# credit_analyst's Ground levels for it (the tail skimmer passes them: 18/20), and the other four certify only
# because the skimmer fumbles another part of the task (it repairs the twin it is told to leave), not because
# the value needs the row. The writers, shown these errors, would have added a later passage.
REFUSED = {
    "credit_analyst": {"breakwater_backtest_repair", "breakwater_latam_exposure", "committee_var_read"},
    "investor_relations_lead": {"brennan_call_followups", "corran_meeting_diary", "finchley_delivery_repair"},
    "data_platform_lead": set(),
    # the round-3 trader's handbooks name no Ground fact last: plain check is clean, so the run must be 20/20
    "execution_trader": set(),
}


@pytest.mark.parametrize(("root", "persona", "world_dir"), PERSONAS, ids=lambda v: getattr(v, "name", v))
def test_check_names_every_level_the_first_author_run_blocks_on(root, persona, world_dir, tmp_path):
    """Frozen at check clean: plain `check` refuses only the Ground facts their handbooks name last (REFUSED),
    and the authoring run itself (as `check --draft` and the first `author` run run it) blocks on nothing check
    did not name; with check clean it certifies 20/20 with nothing to review."""
    check_names_what_the_first_run_blocks_on(root, persona, world_dir, REFUSED[persona], tmp_path)


def test_the_overlay_handbooks_check_and_every_planted_row_is_groundable():
    from typer.testing import CliRunner

    from authoring.cli import app

    result = CliRunner().invoke(app, ["world", "check", "--sources", str(DEFAULT_WORLD)])
    assert result.exit_code == 0, result.output
    shown = " ".join(
        CliRunner()
        .invoke(app, ["world", "show", "--facts", "credit-watch-sheet", "--sources", str(DEFAULT_WORLD)])
        .stdout.split()
    )
    assert (
        "its row for Backtest pass: Backtest pass | backtest misses are owned for Breakwater Credit" in shown
    )
    assert "credit_analyst/breakwater_backtest_repair" in shown
