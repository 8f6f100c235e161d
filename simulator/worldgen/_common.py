"""Shared helpers of the world generator: spec loading, slugs, stable seeds, JSON output."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import yaml

SPEC_PATH = Path(__file__).with_name("spec.yaml")
GRID_WIDTH = 40


class SpecError(ValueError):
    """The spec (or something derived from it) breaks a rule of the world format."""


def check_keys(entry: object, allowed: set[str], required: set[str], where: str) -> None:
    """Reject a spec entry with a missing or unknown key (a typo must never be silently ignored)."""
    if not isinstance(entry, dict):
        raise SpecError(f"{where}: expected a mapping, got {type(entry).__name__}")
    unknown = set(entry) - allowed
    missing = required - set(entry)
    if unknown or missing:
        raise SpecError(f"{where}: unknown keys {sorted(unknown)}, missing keys {sorted(missing)}")


def load_spec(path: Path | None = None) -> dict[str, Any]:
    with open(path or SPEC_PATH, encoding="utf-8") as fh:
        spec = yaml.safe_load(fh)
    if not isinstance(spec, dict):
        raise SpecError(f"{path or SPEC_PATH}: the spec must be a YAML mapping")
    return spec


def snake(text: str) -> str:
    """'Risk & Exposure: VaR (95%)' -> 'risk_exposure_var_95'."""
    slug = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    if not slug:
        raise SpecError(f"cannot derive an id from {text!r}")
    return slug


def kebab(text: str) -> str:
    return snake(text).replace("_", "-")


def stable_seed(*parts: object) -> int:
    """A seed that is the same on every machine and run (never Python's salted hash())."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()
    return int(digest[:16], 16)


def dump_json(obj: Any) -> bytes:
    return (json.dumps(obj, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def pack_layout(items: list[tuple[str, int | None, int]]) -> list[dict[str, int]]:
    """Place (key, width or None, height) items row by row on the 40-column grid.

    Items without an explicit width take 20 columns when a neighbour can share the row and 40 when
    they would otherwise sit alone, so rows are filled and nothing overlaps.
    """
    placed: list[dict[str, int]] = []
    x = y = row_h = 0
    for index, (_, width, height) in enumerate(items):
        if width is None:
            next_auto = index + 1 < len(items) and items[index + 1][1] is None
            width = 20 if (x == 20 or (x == 0 and next_auto)) else GRID_WIDTH - x
        if not 1 <= width <= GRID_WIDTH:
            raise SpecError(f"layout width {width} is outside the 40-column grid")
        if x + width > GRID_WIDTH:
            y += row_h
            x = row_h = 0
        placed.append({"x": x, "y": y, "w": width, "h": height})
        x += width
        row_h = max(row_h, height)
        if x >= GRID_WIDTH:
            y += row_h
            x = row_h = 0
    return placed
