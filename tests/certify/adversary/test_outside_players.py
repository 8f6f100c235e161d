"""The frozen outside-auditor players (players.py) over every shipped task, in process: each passes at most 10%
of the tasks of each level 1-4 (level 0 states everything). One play of all fourteen over the 120 tasks takes about
fifteen seconds, so the whole taskset is played, never a sample.

The cells still above the bar are listed in KNOWN, each with its cause, as strict xfails: the day a change
brings one under the bar the test says so and the entry must go."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from .players import PLAYERS, Player
from .run import SHIPPED, play_all

BAR = 0.10
LEVELS = ("level1", "level2", "level3", "level4")

KNOWN: dict[tuple[str, str], str] = {}


@functools.cache
def results() -> dict[str, dict[str, dict[str, bool]]]:
    return play_all(SHIPPED)


def test_every_task_is_played():
    per = results()
    assert set(per) == {p.name for p in PLAYERS}
    for name, levels in per.items():
        assert {lv: len(tasks) for lv, tasks in levels.items()} == dict.fromkeys(("level0", *LEVELS), 24), (
            name
        )
        # the executor is real: with everything stated it passes a fair share of Execute
        assert sum(levels["level0"].values()) >= 10, name


def cells(players: tuple[Player, ...], known: dict[tuple[str, str], str]) -> list[Any]:
    """One test case per player and level 1-4; a known cell is a strict xfail naming its cause."""
    return [
        pytest.param(
            p.name,
            lv,
            marks=[pytest.mark.xfail(strict=True, reason=known[(p.name, lv)])]
            if (p.name, lv) in known
            else [],
            id=f"{p.name}-{lv}",
        )
        for p in players
        for lv in LEVELS
    ]


CELLS = cells(PLAYERS, KNOWN)


@pytest.mark.parametrize(("player", "level"), CELLS)
def test_player_passes_at_most_a_tenth_of_a_level(player: str, level: str):
    tasks = results()[player][level]
    won = sorted(t for t, ok in tasks.items() if ok)
    assert len(won) <= BAR * len(tasks), f"{player} passes {len(won)}/{len(tasks)} of {level}: {won}"
