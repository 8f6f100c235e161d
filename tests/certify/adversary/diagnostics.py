"""Diagnostic choosers measured after a round's freeze (not frozen players: a change here is a measurement, not a
new audit). Played through round 7's executor; `run --diag` prints what each passes per level and, apart, the
episodes whose only failing checks are the answer's (the judged analysis, an answer distractor): what the same
guess passes with an agent that writes the analysis from the rows it read (ROUND7.md, "Near wins").

- top_overlap_diag: the candidate whose catalog name + description shares the most words with the request,
  asides and stay-as-it-is sentences out, ties by board/catalog order (ROUND7.md's diagnostic)
- whole_overlap_diag: the same over the whole request as said (asides and fences kept)
"""

from __future__ import annotations

from typing import Any

from .players import Ctx, Player, words
from .players_round7 import Round7, _fresh, _rank, entry_words, request_words


def by_top_overlap(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    req = request_words(ctx)
    pool = _fresh(ctx, c)
    return _rank(pool, lambda w: len(entry_words(ctx, w) & req)) + [w for w in c if w not in pool]


def by_whole_overlap(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    req = set(words(ctx.prompt))
    pool = _fresh(ctx, c)
    return _rank(pool, lambda w: len(entry_words(ctx, w) & req)) + [w for w in c if w not in pool]


PLAYERS: tuple[Player, ...] = (
    Round7("top_overlap_diag", by_top_overlap),
    Round7("whole_overlap_diag", by_whole_overlap),
)
