"""Lexical retrieval for agents that must pick a widget or a document from what they were shown.

Okapi BM25 over a light stem of each word: a catalog entry's name and description, a document's title and
text. It is the whole "understanding" an offline agent is allowed, so a level that an honest finder should solve
has to be solvable by the words of its request, and one it should not solve must not be. Kept apart so every
generic agent (the capability ladder, the shortcut agents of the certification gates) ranks the same way.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Sequence

_STOP_TEXT = """
a about above after again against all also am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her here
hers him his how i if in into is it its itself just me more most my no nor not now of off on once only or other
our ours out over own please same she should so some such than that the their theirs them then there these they
this those through to too under until up very was we were what when where which while who whom why will with
would you your yours
"""
STOPWORDS = frozenset(_STOP_TEXT.split())

_WORD = re.compile(r"[a-z0-9]+")


@functools.lru_cache(maxsize=32768)
def stem(word: str) -> str:
    """A deliberately small suffix stripper: plurals and the commonest verb endings, so that "flags" meets
    "flag" and "limits" meets "limit" without pulling unrelated words together."""
    if len(word) <= 3 or word.isdigit():
        return word
    for suffix, repl in (
        ("ations", ""),
        ("ation", ""),
        ("ies", "y"),
        ("sses", "ss"),
        ("ings", ""),
        ("ing", ""),
        ("ed", ""),
        ("es", "e"),
        ("s", ""),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            return word[: len(word) - len(suffix)] + repl
    return word


def terms(text: str) -> list[str]:
    """The stemmed content words of a text, in order (stop words dropped)."""
    return list(_terms(text))


@functools.lru_cache(maxsize=8192)
def _terms(text: str) -> tuple[str, ...]:
    # Remembered by text: every agent of a certification indexes the same catalog descriptions and prompts.
    return tuple(stem(w) for w in _WORD.findall(text.lower().replace("'s", "")) if w not in STOPWORDS)


class BM25:
    """Okapi BM25 over a fixed list of documents."""

    def __init__(self, documents: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self._docs = [Counter(terms(d)) for d in documents]
        self._lengths = [sum(c.values()) for c in self._docs]
        self._avg = (sum(self._lengths) / len(self._lengths)) if self._lengths else 0.0
        frequency: Counter[str] = Counter()
        for doc in self._docs:
            frequency.update(doc.keys())
        n = len(self._docs)
        self._idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in frequency.items()}

    def scores(self, query: str) -> list[float]:
        wanted = dict.fromkeys(
            terms(query)
        )  # in query order: summing over a set made ties hash-seed dependent
        out = []
        for doc, length in zip(self._docs, self._lengths, strict=True):
            norm = self.k1 * (1 - self.b + self.b * (length / self._avg if self._avg else 0.0))
            out.append(
                sum(self._idf[t] * doc[t] * (self.k1 + 1) / (doc[t] + norm) for t in wanted if t in doc)
            )
        return out

    def rank(self, query: str) -> list[tuple[int, float]]:
        """Indexes of the documents that share a word with the query, best first (ties by position)."""
        scored = [(i, s) for i, s in enumerate(self.scores(query)) if s > 0]
        return sorted(scored, key=lambda p: (-p[1], p[0]))
