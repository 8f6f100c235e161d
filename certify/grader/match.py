"""Matching rules the checks share: argument subsets, phrase matching and fuzzy text-with-numbers matching.

Text a grader looks for is what a careful human reviewer would accept: case does not matter, underscores read
as spaces, and a figure written as a percentage equals the same figure written as a fraction (5.24% = 0.0524).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

STOPWORDS = frozenset({"a", "an", "and", "for", "of", "the"})
_TOKEN = re.compile(r"[a-z0-9]+")
_PLAIN_NUMBER = re.compile(r"^\s*([-+]?\d+(?:\.\d+)?)\s*(%?)\s*$")
_NUMBER_IN_TEXT = re.compile(r"(?<![\w.])(-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?)\s*(%?)")


def subset(expected: Any, actual: Any) -> bool:
    """Expected is contained in actual: objects recursively by key, lists and scalars exactly; an expected
    null also matches a missing key."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return False
        for key, value in expected.items():
            if key not in actual:
                if value is None:
                    continue
                return False
            if not subset(value, actual[key]):
                return False
        return True
    return bool(expected == actual)


def tokens(text: str) -> list[str]:
    return list(_tokens(text))


@lru_cache(maxsize=4096)
def _tokens(text: str) -> tuple[str, ...]:
    # Pure, and asked of the same answer or note once per phrase a grade looks for in it: remembered.
    return tuple(t for t in _TOKEN.findall(text.lower().replace("_", " ")) if t not in STOPWORDS)


# `str.casefold`, remembered: a grade folds the same answer or note once per phrase it looks for in it
_folded = lru_cache(maxsize=4096)(str.casefold)


def phrase_matches(expected: str, actual: str) -> bool:
    """Case-insensitive substring, or the expected meaningful words appearing in order among the actual's."""
    if expected.casefold() in _folded(actual):
        return True
    want = _tokens(expected)
    if not want:
        return False
    # each word found after the one before it: `tuple.index` from the place past the last match (an answer
    # can hold thousands of words, and a grade looks for many phrases in it)
    have = _tokens(actual)
    at = 0
    for t in want:
        try:
            at = have.index(t, at) + 1
        except ValueError:
            return False
    return True


@lru_cache(maxsize=4096)
def name_key(text: str) -> str:
    """A title as a reviewer compares two: case, spacing, underscores and punctuation do not matter (pure, and
    asked of the same titles in every grade of a task: remembered)."""
    return " ".join(_TOKEN.findall(text.casefold().replace("_", " ")))


def name_matches(expected: str, actual: str, *, exact: bool, accepted: Iterable[str] = ()) -> bool:
    """Whether a title the agent wrote is the one asked for. Exact: equal to it or to an accepted alternative up
    to case, spacing and punctuation — never containment, so a title carrying every candidate phrase fails.
    Otherwise the source benchmark's rule, `phrase_matches`."""
    if not exact:
        return phrase_matches(expected, actual)
    have = name_key(actual)
    return bool(have) and any(have == name_key(want) for want in (expected, *accepted))


@lru_cache(maxsize=4096)
def normalised(text: str) -> str:
    """Pure, and asked of the same note or answer once per expected value: remembered."""
    return " ".join(_tokens(text))


def numbers_in(text: str) -> list[float]:
    return list(_numbers_in(text))


@lru_cache(maxsize=4096)
def _numbers_in(text: str) -> tuple[float, ...]:
    out = []
    for raw, percent in _NUMBER_IN_TEXT.findall(text):
        value = float(raw.replace(",", ""))
        out.append(value / 100.0 if percent else value)
        if percent:
            out.append(value)
    return tuple(out)


@lru_cache(maxsize=4096)
def expected_number(text: str) -> float | None:
    """The number an expected value is, if it is one ("5.24%" is 0.0524); pure, and asked of the same expected
    values in every grade of a task: remembered."""
    m = _PLAIN_NUMBER.match(text)
    if not m:
        return None
    value = float(m.group(1))
    return value / 100.0 if m.group(2) else value


def text_contains(blob: str, expected: str, *, blob_numbers: list[float] | None = None) -> bool:
    """Whether `expected` appears in `blob` by substring, normalised words, or numeric equivalence."""
    if expected.casefold() in _folded(blob):
        return True
    norm = normalised(expected)
    if norm and norm in normalised(blob):
        return True
    number = expected_number(expected)
    if number is None:
        return False
    found = blob_numbers if blob_numbers is not None else numbers_in(blob)
    return any(math.isclose(number, n, rel_tol=1e-9, abs_tol=1e-9) for n in found)


def json_blob(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
