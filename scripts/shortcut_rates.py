"""How many tasks of a taskset each shortcut agent passes, per level — the battery's figures before a gate
rejects anything (a shipped, certified taskset should show 0 everywhere).

    .venv/bin/python scripts/shortcut_rates.py [TASKSET_DIR] [--agents NAME ...] [--world DIR] [--show]
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from certify.grader import grade
from certify.shortcuts import PROBES, SHORTCUTS, run_shortcut
from certify.task import TaskSet, load_task
from simulator import DEFAULT_WORLD, World


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("taskset", nargs="?", default="tasksets/workspace_tasks")
    parser.add_argument("--world", default=str(DEFAULT_WORLD))
    parser.add_argument("--agents", nargs="*", default=list(SHORTCUTS))
    parser.add_argument("--show", action="store_true", help="print each passed task's id")
    args = parser.parse_args()
    unknown = [a for a in args.agents if a not in SHORTCUTS and a not in PROBES]
    if unknown:
        parser.error(f"unknown agents {unknown}; known: {sorted([*SHORTCUTS, *PROBES])}")
    taskset = TaskSet.load(Path(args.taskset))
    world = World.load(Path(args.world))
    tasks = [load_task(p, taskset) for p in taskset.task_files()]
    for name in args.agents:
        passed, total = Counter(), Counter()
        for task in tasks:
            total[task.difficulty] += 1
            ok = grade(task, run_shortcut(name, world, task)).passed
            passed[task.difficulty] += ok
            if ok and args.show:
                print(f"  {name} passes {task.id}")
        print(name + ": " + ", ".join(f"{lv} {passed[lv]}/{total[lv]}" for lv in sorted(total)))


if __name__ == "__main__":
    main()
