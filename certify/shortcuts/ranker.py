"""A small Okapi BM25 ranker: which catalog entries a bag of words points at, with no understanding of which
words matter to the request."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

_TOKEN = re.compile(r"[a-z0-9]+")
_STOP = frozenset({"a", "an", "and", "or", "of", "the", "to", "for", "in", "on", "at", "by", "with", "from", "is", "are",
                   "be", "it", "its", "this", "that", "as", "so", "i", "me", "my", "you", "your", "we", "our", "please",
                   "then", "them", "they", "their", "there", "what", "which", "each", "all", "both"})


@lru_cache(maxsize=8192)
def tokens(text: str) -> tuple[str, ...]:
    """Lower-case word tokens without stop words, crudely stemmed (a plural 's' dropped)."""
    return tuple(t[:-1] if len(t) > 3 and t.endswith("s") and not t.endswith("ss") else t
                 for t in _TOKEN.findall(text.lower()) if t not in _STOP)


def bm25(query: str, documents: Sequence[str], k1: float = 1.2, b: float = 0.75) -> list[float]:
    """One score per document for the query's words."""
    docs = [Counter(tokens(d)) for d in documents]
    if not docs:
        return []
    lengths = [sum(d.values()) for d in docs]
    mean = sum(lengths) / len(lengths) or 1.0
    df = Counter(t for d in docs for t in d)
    n = len(docs)
    scores = []
    for doc, length in zip(docs, lengths, strict=True):
        score = 0.0
        for term in dict.fromkeys(tokens(query)):
            tf = doc.get(term, 0)
            if tf:
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / mean))
        scores.append(score)
    return scores
