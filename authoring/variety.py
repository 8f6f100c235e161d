"""How alike prompts are: the mean word-trigram Jaccard similarity between same-level prompts of different
stories. Published agent-authored tasks of the source benchmark score 0.035; the rule author aims at ≤ 0.10."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

TARGET = 0.10


def trigrams(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9']+", text.lower())
    return {tuple(words[i:i + 3]) for i in range(len(words) - 2)}


def jaccard(a: str, b: str) -> float:
    ta, tb = trigrams(a), trigrams(b)
    union = ta | tb
    return len(ta & tb) / len(union) if union else 0.0


def same_level_similarity(prompts: Iterable[tuple[str, str, str]]) -> dict[str, float]:
    """Mean pairwise similarity per level, over (story, level, prompt) triples; pairs of one story are skipped.
    The key "all" holds the mean over every pair."""
    by_level: dict[str, list[tuple[str, str]]] = {}
    for story, level, prompt in prompts:
        by_level.setdefault(level, []).append((story, prompt))
    out: dict[str, float] = {}
    every: list[float] = []
    for level, items in sorted(by_level.items()):
        scores = [jaccard(a, b) for (sa, a), (sb, b) in itertools.combinations(items, 2) if sa != sb]
        if scores:
            out[level] = sum(scores) / len(scores)
            every += scores
    out["all"] = sum(every) / len(every) if every else 0.0
    return out
