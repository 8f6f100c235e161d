"""At Find nothing the agent reads names the target (issue 20: Find by what a widget serves, not by words): not the
request, the board's name, its tabs or its notes (a pointer aside, whose entry names the target by design), and
not the skill the analysis ask cites — the agent reads it for the threshold, so its threshold step says what the
figure is, not which widget holds it ("Compare active weights in Sector Tilt vs Benchmark …" named the target of
keel_europe_tilt). A plain word-overlap chooser breaking ties by listing order counts as a win too
(`certify.lexical_listed_first`)."""

from __future__ import annotations

import json

import pytest

from authoring.roles.author.rules import find_seen
from certify import (
    lexical_find_pool,
    lexical_first_named,
    lexical_listed_first,
    lexical_naming,
    lexical_top_share,
)
from certify.task import load_task
from simulator import DEFAULT_WORLD, World
from tests.conftest import ROOT

TILT = {
    "name": "Sector Tilt vs Benchmark",
    "description": "Our weight in each sector next to the benchmark's, with the active weight.",
    "columns": "sector Sector fund weight Fund Weight benchmark weight Benchmark Weight active weight Active Weight",
}
OTHERS = [
    {
        "name": "Country Exposure",
        "description": "Exposure by country for a fund.",
        "columns": "country weight",
    },
    {"name": "Risk Tiles", "description": "One line of risk figures per fund.", "columns": "fund var"},
]


def test_naming_takes_the_whole_name_and_the_words_only_the_target_names_beyond_what_it_serves():
    entries = [*OTHERS, TILT]
    assert lexical_naming("Compare active weights in Sector Tilt vs Benchmark", entries, 2)[0] == TILT["name"]
    # a tab titled by a word only the target's name has
    assert lexical_naming("Keel IC Desk Tilt", entries, 2) == ["tilt"]
    # what it serves is what Find means: "sector", "benchmark", "active weight" are fair to say
    assert lexical_naming("each sector's active weight against the benchmark", entries, 2) == []


def test_first_named_is_the_first_candidate_a_text_names_in_full():
    entries = [*OTHERS, TILT]
    assert lexical_first_named("Read Risk Tiles, then Sector Tilt vs Benchmark.", entries) == 1
    assert lexical_first_named("Read Sector Tilt vs Benchmark, then Risk Tiles.", entries) == 2
    assert lexical_first_named("Read the book.", entries) is None


def test_a_tie_listed_first_is_a_win_for_a_stable_chooser_though_its_share_is_a_half():
    first = [{"name": "Fund Risk", "description": ""}, {"name": "Fund Flows", "description": ""}]
    assert lexical_top_share("the fund", first, 0) == 0.5
    assert lexical_listed_first("the fund", first, 0)
    assert not lexical_listed_first("the fund", first, 1)


def _find_tasks():
    yield from sorted((ROOT / "tasksets" / "workspace_tasks").glob("*/*_level1.json"))


@pytest.fixture(scope="module")
def world():
    return World.load(DEFAULT_WORLD)


@pytest.mark.parametrize("path", list(_find_tasks()), ids=lambda p: p.stem)
def test_nothing_a_shipped_find_agent_reads_names_its_target(world, path):
    task = load_task(path)
    hidden = next(h.value for h in task.meta.hidden if h.kind == "target")
    found = lexical_find_pool(world, task, hidden)
    assert found is not None
    entries, mine = found
    seen = find_seen(json.loads(path.read_text()), hidden)
    assert lexical_naming(seen, entries, mine) == [], seen
    judged = task.eval.judge_evaluation
    if judged is None or not judged.skill:
        return
    skill = world.skills[judged.skill]
    text = f"{skill.name}\n{skill.description}\n{skill.content}"
    # the skill the analysis ask cites names the target neither in full (the step it is read for, or any) nor
    # first of the candidates an outside player ranks
    assert hidden not in lexical_naming(text, entries, mine), skill.slug
    assert lexical_first_named(text, entries) != mine, skill.slug
