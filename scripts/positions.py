"""Where the target sits, and what a positional agent makes of it: per level, the share of a taskset's repair
tasks whose target is the first placed widget, and the share of tasks the `positional` probe passes.

    .venv/bin/python scripts/positions.py [TASKSET_DIR] [--world DIR]
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from certify.grader import grade
from certify.shortcuts import run_shortcut
from certify.shortcuts.positions import first_placed_share
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
    passed, total = Counter(), Counter()
    for task in tasks:
        total[task.difficulty] += 1
        passed[task.difficulty] += grade(task, run_shortcut("positional", world, task)).passed
    shares = first_placed_share(tasks)
    for level in sorted(total):
        hits, n = shares.get(level, (0, 0))
        first = f"target first in {hits}/{n} repair tasks" if n else "no repair with two placed widgets"
        print(f"{level}: {first}; positional passes {passed[level]}/{total[level]}")


if __name__ == "__main__":
    main()
