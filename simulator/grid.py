"""Grid physics of a dashboard tab: 40 columns, widgets that float up, nobody displaced.

A widget being moved rises to the highest free position in its columns (a widget parked far down an empty
column ends at the top) and, when its requested spot is taken, goes below whoever holds it: whoever holds a
spot first keeps it. Nothing else on the grid ever moves because of someone else's move, so seeded layouts
keep their exact positions, gaps included. New widgets land at x=0 below the tab's lowest widget.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

GRID_COLUMNS = 40


@dataclass(slots=True)
class Rect:
    x: float
    y: float
    w: float
    h: float

    @property
    def bottom(self) -> float:
        return self.y + self.h


def overlaps(a: Rect, b: Rect) -> bool:
    """Positive-area intersection; shared edges do not count."""
    return a.x < b.x + b.w and a.x + a.w > b.x and a.y < b.y + b.h and a.y + a.h > b.y


def _columns_overlap(a: Rect, b: Rect) -> bool:
    return a.x < b.x + b.w and a.x + a.w > b.x


def next_free_y(others: Iterable[Rect], floor: float = 0.0) -> float:
    """Where a new widget lands: below the lowest widget of the tab (never above `floor`)."""
    return max([floor, *(o.bottom for o in others)])


def clamp_to_grid(rect: Rect, floor: float = 0.0, columns: int = GRID_COLUMNS) -> Rect:
    """The grid's bounds correction: a widget wider than the grid is narrowed, one hanging off the right edge
    is shifted left, and nothing sits above the floor or left of column 0."""
    w = min(rect.w, float(columns))
    x = rect.x
    if x + w > columns:
        x = columns - w
    return Rect(max(x, 0.0), max(rect.y, floor), w, rect.h)


def settle(rect: Rect, others: list[Rect], floor: float = 0.0) -> Rect:
    """Final position of a widget placed or moved to `rect` among `others` (which never move)."""
    bottom = max([floor, *(o.bottom for o in others)])
    y = max(min(rect.y, bottom), floor)
    probe = Rect(rect.x, y, rect.w, rect.h)
    if not any(overlaps(probe, o) for o in others):
        ceilings = [o.bottom for o in others if _columns_overlap(probe, o) and o.bottom <= y]
        y = max([floor, *ceilings])
        probe.y = y
    while True:
        blocker = next((o for o in others if overlaps(probe, o)), None)
        if blocker is None:
            return probe
        probe.y = blocker.bottom
