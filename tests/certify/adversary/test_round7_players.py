"""The round-7 frozen outside-auditor players (players_round7.py) over every shipped task, in process: each passes
at most 10% of the tasks of each level 1-4 (level 0 states everything). Measured cells and the diagnosis of every
win: ROUND7.md.

No cell was above the bar when the players were first played: the most any player passes of a level was 2/24
(shortest_name and cross_story_copier at Find). second_best_overlap rose to 3/24 at Find on a later set (ties broken
by board order) and went back to 2/24 once the board was arranged against tie-breaking readers
(`seeding.tie_reads`); KNOWN is empty again. A cell that rises above the bar fails here; if its
cause is known and accepted, it goes into KNOWN as a strict xfail naming that cause, never by changing a player.

Measured after the freeze, two diagnostic choosers (not frozen players) were above the bar: the board's third and
fourth placed widget each passed 3/24 of Find, because every level-1 repair's target sat in the grid's middle row
(ROUND7.md, "Measured after the freeze"). The target's place is now dealt over the taskset's Find repairs: the
readers of the second, third and fourth place are held to the bar here; the fifth's reader (5/24: three adds whose
catalog lists the target fifth, and two repairs) is a strict xfail naming that cause."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from .players import Ctx
from .players_round7 import PLAYERS, Round7
from .run import SHIPPED, play_all
from .test_outside_players import LEVELS, cells

BAR = 0.10

KNOWN: dict[tuple[str, str], str] = {}


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


FIFTH_PLACE = (
    "the fifth candidate: the adds apac_file_refresh, escalated_surveillance_cases and reedbed_rights_election "
    "(the world's catalog lists each target fifth among its app's entries the request does not name, a place no "
    "seeding moves: 3/24 before any repair) and the repairs pellston_bear_case and flow_credit_liquidity_limit, "
    "dealt the fifth place so that the last row holds its third of the repairs (seeding.dealt_places; on six-widget "
    "boards the fifth is the last row's only inner place): 5/24 (ROUND7.md, 'After round 7'). Every win "
    "fails its target copy (tests/certify/test_place_probes.py)"
)


@pytest.mark.parametrize(
    "k",
    [1, 2, 3, pytest.param(4, marks=pytest.mark.xfail(strict=True, reason=FIFTH_PLACE))],
    ids=["second_placed", "third_placed", "fourth_placed", "fifth_placed"],
)
def test_a_reader_of_an_inner_place_passes_at_most_a_tenth_of_find(k: int):
    """Once above the bar (3/24 each for the third and the fourth: every Find repair's target sat in the grid's
    middle row); since the target's place is dealt over the taskset's Find repairs (`seeding.dealt_places`), no
    inner index or row holds it on more than two of the six."""
    name = f"placed_{k}"
    tasks = play_all(SHIPPED, (Round7(name, nth_placed(k)),))[name]["level1"]
    won = sorted(t for t, ok in tasks.items() if ok)
    assert len(won) <= BAR * len(tasks), f"{name} passes {len(won)}/{len(tasks)} of level1: {won}"
