"""A Find repair's target place is dealt over the taskset's Find repairs (`seeding.dealt_places`): never an end of
the board, and every index and row of the placed order holds about its share of them — which a draw per task
cannot promise (six repairs on four inner places put three on one of them on most tasksets)."""

from __future__ import annotations

import random
from collections import Counter

from authoring.roles.author.context import find_order
from authoring.roles.author.seeding import dealt_places, inner_places
from tests.conftest import ROOT


def test_the_shipped_repairs_are_dealt_two_at_most_per_place_and_row():
    turns = find_order(ROOT, ROOT / "tasksets" / "workspace_tasks")
    assert len(turns) >= 6
    dealt = dealt_places(turns)
    assert set(dealt) == {t for t, _ in turns}
    for task, placed in turns:
        assert dealt[task] in inner_places(placed)
    assert max(Counter(dealt.values()).values()) <= 2
    assert max(Counter(i // 2 for i in dealt.values()).values()) <= 2


def test_dealing_keeps_rows_and_places_near_their_share_on_any_taskset():
    for seed in range(300):
        rng = random.Random(seed)
        turns = tuple((f"p|s{i}_level1", rng.choice([4, 5, 6, 6, 6, 7, 8])) for i in range(rng.randint(3, 9)))
        dealt = dealt_places(turns)
        assert all(dealt[t] in inner_places(n) for t, n in turns)
        rows = Counter(i // 2 for i in dealt.values())
        # about a third per row: one more where small boards leave fewer rows to deal over
        assert max(rows.values()) <= -(-len(turns) // 3) + 1, (turns, dealt)
        assert dealt == dealt_places(turns)  # the same turns always deal the same


def test_a_board_is_dealt_the_same_place_whoever_deals_it():
    turns = (("a|x_level1", 6), ("b|y_level1", 6), ("c|z_level1", 4))
    assert dealt_places(turns) == dealt_places(turns)
    assert dealt_places(()) == {}
    assert dealt_places((("a|x_level1", 2),)) == {}  # no inner place on a board of two
