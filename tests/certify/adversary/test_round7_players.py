"""The round-7 frozen outside-auditor players (players_round7.py) over every shipped task, in process: each passes
at most 10% of the tasks of each level 1-4 (level 0 states everything). Measured cells and the diagnosis of every
win: ROUND7.md.

No cell was above the bar when the players were first played (KNOWN is empty): the most any player passes of a
level is 2/24 (shortest_name and cross_story_copier at Find). A cell that rises above the bar fails here; if its
cause is known and accepted, it goes into KNOWN as a strict xfail naming that cause, never by changing a player.

Measured after the freeze, two diagnostic choosers (not frozen players) are above the bar and kept in sight as
strict xfails: the board's third and fourth placed widget each pass 3/24 of Find, because every level-1 repair's
target sits in the grid's middle row (ROUND7.md, "Measured after the freeze")."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from .players import Ctx
from .players_round7 import PLAYERS, Round7
from .run import SHIPPED, play_all
from .test_outside_players import LEVELS, cells

BAR = 0.10

KNOWN: dict[tuple[str, str], str] = {}  # no cell is above the bar (ROUND7.md, "Measured")


@functools.cache
def results() -> dict[str, dict[str, dict[str, bool]]]:
    return play_all(SHIPPED, PLAYERS)


def test_every_task_is_played_by_a_working_executor():
    per = results()
    assert set(per) == {p.name for p in PLAYERS}
    for name, levels in per.items():
        assert {lv: len(tasks) for lv, tasks in levels.items()} == dict.fromkeys(("level0", *LEVELS), 24), (
            name
        )
        # with everything stated the executor passes most of Execute (it writes no judged analysis)
        assert sum(levels["level0"].values()) >= 15, name


CELLS = cells(PLAYERS, KNOWN)


@pytest.mark.parametrize(("player", "level"), CELLS)
def test_round7_player_passes_at_most_a_tenth_of_a_level(player: str, level: str):
    tasks = results()[player][level]
    won = sorted(t for t, ok in tasks.items() if ok)
    assert len(won) <= BAR * len(tasks), f"{player} passes {len(won)}/{len(tasks)} of {level}: {won}"


def nth_placed(k: int) -> Any:
    """A chooser taking the k-th candidate (0-based) in the order the snapshot / catalog gives them."""

    def choose(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return list(c[k : k + 1]) + list(c[:k]) + list(c[k + 1 :])

    return choose


MIDDLE_ROW = (
    "Find seeding: on all six level-1 repairs the target is the 3rd or 4th placed widget, the grid's middle row "
    "(y=14): index 2 on reedbed_breach_register, lantern_oil_shock, flow_credit_liquidity_limit; index 3 on "
    "lantern_factsheet_stage, breakwater_pricing_triage, pellston_bear_case. The target is kept off the first two "
    "and last two places (the first/last/second-placed players), which leaves two slots: each passes 3/24"
)


@pytest.mark.xfail(strict=True, reason=MIDDLE_ROW)
@pytest.mark.parametrize("k", [2, 3], ids=["third_placed", "fourth_placed"])
def test_a_reader_of_a_middle_place_passes_at_most_a_tenth_of_find(k: int):
    name = f"placed_{k}"
    tasks = play_all(SHIPPED, (Round7(name, nth_placed(k)),))[name]["level1"]
    won = sorted(t for t, ok in tasks.items() if ok)
    assert len(won) <= BAR * len(tasks), f"{name} passes {len(won)}/{len(tasks)} of level1: {won}"
