"""Nearest names for error messages: a misspelt widget, app, skill or parameter gets "did you mean …".

Matching ignores case and punctuation, so 'optimizer constraints' finds 'Optimiser Constraints'; a name that
contains, or is contained in, a candidate counts as close too (people abbreviate).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

LIST_LIMIT = 12


def _key(name: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", name.casefold()))


def nearest(name: str, candidates: Iterable[str], limit: int = 3) -> list[str]:
    """Up to `limit` candidates closest to `name`, best first."""
    by_key: dict[str, str] = {}
    for c in candidates:
        by_key.setdefault(_key(str(c)), str(c))
    wanted = _key(name)
    if not wanted or not by_key:
        return []
    scored = []
    for key, original in by_key.items():
        ratio = difflib.SequenceMatcher(None, wanted, key).ratio()
        if len(wanted) >= 4 and (wanted in key or key in wanted):
            ratio = max(ratio, 0.75)
        if ratio >= 0.6:
            scored.append((-ratio, original))
    return [original for _, original in sorted(scored)[:limit]]


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """ " (did you mean 'X'?)" or " (did you mean 'X' or 'Y'?)", empty when nothing is close."""
    close = nearest(name, candidates)
    if not close:
        return ""
    quoted = [f"'{c}'" for c in close]
    return f" (did you mean {' or '.join(quoted) if len(quoted) <= 2 else ', '.join(quoted[:-1]) + ' or ' + quoted[-1]}?)"


def listing(values: Iterable[object], limit: int = LIST_LIMIT) -> str:
    """Values as a short, quoted, comma-separated list ("… and N more" past `limit`)."""
    values = [str(v) for v in values]
    shown = ", ".join(f"'{v}'" for v in values[:limit])
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")
