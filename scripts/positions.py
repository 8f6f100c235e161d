"""Where the target sits, and what a positional agent makes of it: per level, the share of a taskset's repair
tasks whose target is the first placed widget, and the share of tasks the `positional` probe passes; how many
tasks hold the target at each fixed place of the board — each index of the placed order, each grid row, the
most held cell — against the bar (a tenth of the level's tasks), and what the readers of the inner places
(`second_placed` … `fifth_placed`) make of it; the line of its policy note a Derive rule stands on (and what the
line readers make of it); and the share of tasks the catalog-order readers (`catalog_first`, `catalog_last`)
pass.

    .venv/bin/python scripts/positions.py [TASKSET_DIR] [--world DIR]
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from certify.grader import grade
from certify.shortcuts import run_shortcut
from certify.shortcuts.positions import first_placed_share, place_shares, rule_line_share
from certify.task import TaskSet, load_task
from simulator import DEFAULT_WORLD, World

BAR = 0.10


def _nth(k: int) -> str:
    return {1: "st", 2: "nd", 3: "rd"}.get(k if k < 20 else k % 10, "th")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("taskset", nargs="?", default="tasksets/workspace_tasks")
    parser.add_argument("--world", default=str(DEFAULT_WORLD))
    args = parser.parse_args()
    taskset = TaskSet.load(Path(args.taskset))
    world = World.load(Path(args.world))
    tasks = [load_task(p, taskset) for p in taskset.task_files()]
    probes = [
        "positional",
        "second_placed",
        "third_placed",
        "fourth_placed",
        "fifth_placed",
        "catalog_first",
        "catalog_last",
        "line_first",
        "line_second",
        "line_third",
        "line_last",
    ]
    passed: dict[str, Counter[str]] = {p: Counter() for p in probes}
    total: Counter[str] = Counter()
    for task in tasks:
        total[task.difficulty] += 1
        for probe in probes:
            passed[probe][task.difficulty] += grade(task, run_shortcut(probe, world, task)).passed
    shares = first_placed_share(tasks)
    lines = rule_line_share(tasks)
    places = place_shares(tasks)
    over = []
    for level in sorted(total):
        hits, n = shares.get(level, (0, 0))
        first = f"target first in {hits}/{n} repair tasks" if n else "no repair with two placed widgets"
        ruled = lines.get(level)
        where = (
            "; rule on line " + ", ".join(f"{i + 1}: {c}" for i, c in sorted(ruled.items())) if ruled else ""
        )
        print(
            f"{level}: {first}{where}; "
            + ", ".join(f"{p} passes {passed[p][level]}/{total[level]}" for p in probes)
        )
        held = places.get(level)
        if held and held["index"]:
            cell, most = held["cell"].most_common(1)[0]
            print(
                "  target placed "
                + ", ".join(f"{i + 1}{_nth(i + 1)}: {c}" for i, c in sorted(held["index"].items()))
                + "; in grid row "
                + ", ".join(f"{r + 1}: {c}" for r, c in sorted(held["row"].items()))
                + f"; most held cell {cell}: {most} (of {total[level]} tasks, bar {int(BAR * total[level])})"
            )
            # (the bar holds where the level hides which widget is the target: Find; the others name it)
            for kind in ("index", "row", "cell") if level == "level1" else ():
                over += [
                    f"{level} {kind} {k + 1 if isinstance(k, int) else k}: {c}/{total[level]}"
                    for k, c in held[kind].items()
                    if c > BAR * total[level]
                ]
    print("Find: fixed places above the bar: " + (", ".join(over) if over else "none"))


if __name__ == "__main__":
    main()
