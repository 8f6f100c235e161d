"""Slugs as the workspace derives them (tab ids from names, app template ids)."""

from __future__ import annotations

import re

_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def slugify(text: str, fallback: str = "tab") -> str:
    """Lower-case, every run of other characters becomes '-', trimmed; `fallback` when nothing is left."""
    slug = _NON_ALNUM.sub("-", str(text).lower()).strip("-")
    return slug or fallback
