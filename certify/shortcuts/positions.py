"""Where a taskset puts its targets: the measure behind the positional probe. A board seeded always in the same
order puts the target first on every task, which a positional agent reads without understanding anything; drawn
per task, the share of tasks whose target is the first placed widget sits near chance."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ..task import Task


def target_first(task: Task) -> bool | None:
    """Whether the task's target — the placed widget its reference repairs first — is the first widget placed on
    its board; None when the task repairs nothing or places fewer than two widgets (no position to read)."""
    board = task.setup.initial_state.dashboard if task.setup.initial_state else None
    placed = list(board.widgets) if board else []
    repairs = [
        s for s in task.eval.reference_steps() if s.tool == "update_widget" and isinstance(s.args, dict)
    ]
    if len(placed) < 2 or not repairs:
        return None
    return placed[0].widget_uuid == repairs[0].args.get("widget_uuid")


def first_placed_share(tasks: Iterable[Task]) -> dict[str, tuple[int, int]]:
    """Per level: (tasks whose target is the first placed widget, tasks where a position can be read)."""
    hits: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for task in tasks:
        first = target_first(task)
        if first is not None:
            total[task.difficulty] += 1
            hits[task.difficulty] += first
    return {level: (hits[level], total[level]) for level in sorted(total)}
