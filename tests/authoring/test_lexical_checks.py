"""`check` refuses a find hint that paraphrases the catalog, and a Derive phrase or name that gives its value
away (issue 20 items 2-3), on the shipped world and a shipped story. The hints and phrases here are an
outsider's, written before their outcome was looked at."""

from __future__ import annotations

from pathlib import Path

import pytest

from authoring.factcheck import FactErrors, resolve
from authoring.sources import load_story
from simulator import DEFAULT_WORLD, World

STORY = Path(__file__).parents[2] / "stories" / "portfolio_manager" / "lantern_oil_shock.md"
HINT = "find_hint: 'the worst position and the P&L hit, in dollars and against NAV'"


RESOURCE = "resource: 'openbb://workspace/conventions/portfolio-desk'}"
# the policy defined in a note on the board (with its rival), so that a reworded phrase is still defined
IN_NOTE = 'note: Desk Shorthand, distractor: {phrase: the blue-folder case, value: "Equities -15%"}}'


def errors(tmp_path, old: str, new: str, in_note: bool = False) -> dict[str, list[str]]:
    text = STORY.read_text()
    assert old in text and RESOURCE in text
    if in_note:
        text = text.replace(RESOURCE, IN_NOTE)
    path = tmp_path / "lantern_oil_shock.md"
    path.write_text(text.replace(old, new))
    story = load_story(path, "portfolio_manager")
    world = World.load(DEFAULT_WORLD)
    try:
        found = list(resolve(world, story, list(world.default_backends)).ladder_errors)
    except FactErrors as exc:
        found = list(exc.errors)
    out: dict[str, list[str]] = {}
    for e in found:
        assert e.file == story.file
        out.setdefault(e.key, []).append(e.message)
    return out


def test_the_shipped_story_is_clean(tmp_path):
    assert errors(tmp_path, HINT, HINT) == {}


@pytest.mark.parametrize(
    "hint",
    [
        "estimated profit or loss of the fund under each stress scenario",  # the catalog's own words
        "what the fund would lose under a stress scenario and whether a limit breaks",
    ],
)
def test_a_hint_that_paraphrases_the_catalog_is_refused(tmp_path, hint):
    found = errors(tmp_path, HINT, f"find_hint: '{hint}'")
    assert any("top lexical match" in m for m in found["facts.find_hint"]), found


def test_a_hint_that_points_at_another_widgets_columns_is_refused(tmp_path):
    found = errors(tmp_path, HINT, "find_hint: 'the predicted and realised loss on each exception day'")
    assert any("best by what it serves" in m for m in found["facts.find_hint"]), found


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ("the red-folder case", "the crude-spike case", "facts.policy.phrase"),
        ("the red-folder case", "the oil-desk case", "facts.policy.phrase"),
        ("dashboard: Lantern Risk Call", "dashboard: Lantern Energy Shock Call", "facts.dashboard"),
    ],
)
def test_a_phrase_or_name_that_gives_the_value_away_is_refused(tmp_path, old, new, key):
    assert errors(tmp_path, "the red-folder case", "the red-folder case", in_note=True) == {}
    found = errors(tmp_path, old, new, in_note=True)
    assert key in found and "gives away Oil +40%" in found[key][0], found
