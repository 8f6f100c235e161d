"""The round-6 frozen outside-auditor players (players_round6.py) over every shipped task, in process: each passes
at most 10% of the tasks of each level 1-4 (level 0 states everything). Measured cells: ROUND6.md.

Two cells are above the bar on the shipped taskset and their causes lie in Find's seeding, which this branch
does not change (other branches do): they are strict xfails naming the cause, and the day a seeding change
brings one under the bar the test says so and the entry must go.

One cell is not a shortcut: hop_skimmer at Ground follows "step N of the X skill's workflow" and takes the option
step N mentions. Where the request's source IS that step (single-hop prompts), that is the reading the level asks
for; it is a shortcut only where the step links a further document whose row or passage the request names. Its
level-3 cell therefore counts the two-hop prompts only (and the test checks there are some)."""

from __future__ import annotations

import functools
import re

import pytest

from .players_round6 import PLAYERS
from .run import SHIPPED, play_all
from .test_outside_players import LEVELS, cells

BAR = 0.10

KNOWN: dict[tuple[str, str], str] = {
    ("non_default", "level1"): (
        "Find seeding: on 5 of the 6 level-1 repairs the target is the only placed widget (or the one) off its "
        "schema defaults; the look-alike and the furniture sit on the defaults"
    ),
    ("any_level_copier", "level1"): (
        "Find seeding (stand-ins): every other level of all 24 stories, level 0 and levels 2-4 alike, names "
        "Find's target, so a player that saw the published taskset reads it there"
    ),
}

TWO_HOP = re.compile(r"\b(document it points to|reference it gives)\b")


def reads_as_asked(player: str, level: str, prompt: str) -> bool:
    """Whether this player's rule IS the reading the level asks for on this prompt (then a pass is not a
    shortcut): hop_skimmer at Ground on a prompt whose source is the skill step itself."""
    return player == "hop_skimmer" and level == "level3" and not TWO_HOP.search(prompt)


@functools.cache
def results() -> dict[str, dict[str, dict[str, bool]]]:
    return play_all(SHIPPED, PLAYERS)


@functools.cache
def prompts() -> dict[str, str]:
    from certify.task import TaskSet, load_task

    taskset = TaskSet.load(SHIPPED)
    return {t.id: t.prompt for t in (load_task(p, taskset) for p in taskset.task_files())}


def test_every_task_is_played_by_a_working_executor():
    per = results()
    assert set(per) == {p.name for p in PLAYERS}
    for name, levels in per.items():
        assert {lv: len(tasks) for lv, tasks in levels.items()} == dict.fromkeys(("level0", *LEVELS), 24), (
            name
        )
        # with everything stated the executor passes most of Execute (it writes no judged analysis)
        assert sum(levels["level0"].values()) >= 15, name


def test_the_hop_cell_still_measures_two_hop_prompts():
    """The hop_skimmer exemption leaves prompts to measure: some Ground prompts send the reader on from the step."""
    level3 = list(results()["hop_skimmer"]["level3"])
    assert sum(1 for t in level3 if TWO_HOP.search(prompts()[t])) >= 3


CELLS = cells(PLAYERS, KNOWN)


@pytest.mark.parametrize(("player", "level"), CELLS)
def test_round6_player_passes_at_most_a_tenth_of_a_level(player: str, level: str):
    tasks = results()[player][level]
    won = sorted(t for t, ok in tasks.items() if ok and not reads_as_asked(player, level, prompts()[t]))
    assert len(won) <= BAR * len(tasks), f"{player} passes {len(won)}/{len(tasks)} of {level}: {won}"
