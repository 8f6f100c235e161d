"""Where a taskset puts its targets: the measure behind the positional probe. A board seeded always in the same
order puts the target first on every task, which a positional agent reads without understanding anything; drawn
per task, the share of tasks whose target is the first placed widget sits near chance."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

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


def target_place(task: Task) -> tuple[int, int, tuple[int, int]] | None:
    """Where the task's target — the placed widget its reference repairs first — sits on its board: (its index in
    the placed order, its grid row — the rank of its cell's y among the board's distinct ones —, its cell as
    (x, y)); None where `target_first` reads no position."""
    if target_first(task) is None:
        return None
    board = task.setup.initial_state.dashboard if task.setup.initial_state else None
    placed = list(board.widgets) if board else []
    repairs = [
        s for s in task.eval.reference_steps() if s.tool == "update_widget" and isinstance(s.args, dict)
    ]
    uuid = repairs[0].args.get("widget_uuid") if isinstance(repairs[0].args, dict) else None
    at = next((i for i, w in enumerate(placed) if w.widget_uuid == uuid), None)
    if at is None:
        return None
    cells = [(int(w.layout.x or 0), int(w.layout.y or 0)) if w.layout is not None else (0, 0) for w in placed]
    rows = sorted({y for _, y in cells})
    return at, rows.index(cells[at][1]), cells[at]


def place_shares(tasks: Iterable[Task]) -> dict[str, dict[str, Counter[Any]]]:
    """Per level: how many tasks hold their target at each fixed place (`target_place`) — each index of the
    placed order (`index`), each grid row (`row`) and each cell (`cell`) — and how many tasks of the level there
    are (`tasks`, under the key None): a reader of one fixed place passes up to that many of them."""
    out: dict[str, dict[str, Counter[Any]]] = {}
    for task in tasks:
        level = out.setdefault(task.difficulty, {"index": Counter(), "row": Counter(), "cell": Counter()})
        level.setdefault("tasks", Counter())[None] += 1
        where = target_place(task)
        if where is not None:
            at, row, cell = where
            level["index"][at] += 1
            level["row"][row] += 1
            level["cell"][cell] += 1
    return dict(sorted(out.items()))


def pointer_line(task: Task, line: int) -> bool | None:
    """Whether the entry the task's prompt asks for sits at `line` (0 the first, -1 the last) of the pointer note
    planted on its board (`meta.hidden`'s target sourced `note:<name>`); None when no pointer is planted or its
    note lists fewer than two entries (no line to read)."""
    from ..agents.request import note_entries

    hidden = task.meta.hidden if task.meta else []
    source = next(
        (h.source for h in hidden if h.kind == "target" and (h.source or "").startswith("note:")), None
    )
    board = task.setup.initial_state.dashboard if task.setup.initial_state else None
    if source is None or board is None:
        return None
    name = source.removeprefix("note:")
    text = next((str(n.data) for n in board.generated_widgets if n.name == name), "")
    entries = note_entries(text)
    prompt = task.prompt.casefold()
    asked = [i for i, (label, _) in enumerate(entries) if label.casefold() in prompt]
    if len(entries) < 2 or len(asked) != 1:
        return None
    return asked[0] == range(len(entries))[line]


def pointer_line_share(tasks: Iterable[Task], line: int) -> dict[str, tuple[int, int]]:
    """Per level: (tasks whose asked-for pointer entry sits at `line`, tasks with a planted pointer)."""
    hits: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for task in tasks:
        at = pointer_line(task, line)
        if at is not None:
            total[task.difficulty] += 1
            hits[task.difficulty] += at
    return {level: (hits[level], total[level]) for level in sorted(total)}


def rule_line(task: Task) -> tuple[int, int] | None:
    """(line, lines) of the policy note on the task's board where the rule its request names first stands — the
    line a reader of a fixed line would have to hit; None when no note on the board defines that rule beside
    another (a policy a world's document defines, or no policy asked)."""
    from ..agents.knowledge import phrase_pattern
    from ..agents.request import policies

    asked = policies(task.prompt)
    board = task.setup.initial_state.dashboard if task.setup.initial_state else None
    if not asked or board is None:
        return None
    pattern = phrase_pattern(asked[0].phrase)
    for note in board.generated_widgets:
        lines = [line for line in str(note.data or "").split("\n") if line.strip()]
        hits = [i for i, line in enumerate(lines) if pattern.search(line)]
        if len(lines) >= 2 and len(hits) == 1:
            return hits[0], len(lines)
    return None


def rule_line_share(tasks: Iterable[Task]) -> dict[str, Counter[int]]:
    """Per level: how many tasks' rule stands on each line of its policy note (`rule_line`)."""
    out: dict[str, Counter[int]] = {}
    for task in tasks:
        at = rule_line(task)
        if at is not None:
            out.setdefault(task.difficulty, Counter())[at[0]] += 1
    return dict(sorted(out.items()))
