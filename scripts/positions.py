"""Where the target sits, and what a positional agent makes of it: per level, the share of a taskset's repair
tasks whose target is the first placed widget, and the share of tasks the `positional` probe passes; the line of
its policy note a Derive rule stands on (and what the line readers make of it); and the share of tasks the
catalog-order readers (`catalog_first`, `catalog_last`) pass.

    .venv/bin/python scripts/positions.py [TASKSET_DIR] [--world DIR]
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from certify.grader import grade
from certify.shortcuts import run_shortcut
from certify.shortcuts.positions import first_placed_share, rule_line_share
from certify.task import TaskSet, load_task
from simulator import DEFAULT_WORLD, World


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


if __name__ == "__main__":
    main()
