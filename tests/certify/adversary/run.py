"""Play the frozen outside-auditor players over a taskset in process (the EpisodeHost `serve` and OpenEnv use).

`python -m tests.certify.adversary.run [TASKSET] [--round4|--round5|--round6|--round7|--diag]` prints each player's
passes per level (the first rounds' players, or with --round4 … --round7 those of players_round4.py … 7; with
--diag the diagnostic choosers of diagnostics.py, with the tasks each fails only on the answer)."""

from __future__ import annotations

import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from certify.evaluate import select_tasks
from certify.grader import grade as graded
from certify.mcp_server import EpisodeHost
from certify.openenv_env import WorkspaceEnvironment
from certify.task import TaskSet

from .players import PLAYERS, Player

SHIPPED = Path(__file__).resolve().parents[3] / "tasksets" / "workspace_tasks"


def lower_prompts(tasks: dict[str, Any], task_id: str) -> list[str]:
    """The same story's lower-level prompts, nearest level first (what a player that met them remembers)."""
    m = re.fullmatch(r"(.*)_level(\d)", task_id)
    if not m:
        return []
    stem, k = m.group(1), int(m.group(2))
    return [tasks[f"{stem}_level{j}"].prompt for j in range(k - 1, -1, -1) if f"{stem}_level{j}" in tasks]


def play_all(
    taskset: Path = SHIPPED,
    players: tuple[Player, ...] = PLAYERS,
    near: dict[str, dict[str, list[str]]] | None = None,
) -> dict[str, dict[str, dict[str, bool]]]:
    """{player: {level: {task_id: passed}}} over every task of the taskset; `near` collects, per player and
    level, the failed tasks whose only failing checks are the answer's (the judged analysis, a distractor)."""
    loaded = TaskSet.load(taskset)
    with tempfile.TemporaryDirectory() as runs:
        host = EpisodeHost(
            loaded.world(None),
            select_tasks(taskset),
            runs_dir=Path(runs),
            transport="openenv",
            run_agent="audit",
        )
        env = WorkspaceEnvironment(host)
        out: dict[str, dict[str, dict[str, bool]]] = defaultdict(lambda: defaultdict(dict))
        for player in players:
            remember = getattr(player, "remember", None)
            if remember is not None:  # a player that has seen the published taskset's prompts
                remember([t.prompt for t in host.tasks.values()])
            remember_tasks = getattr(player, "remember_tasks", None)
            if remember_tasks is not None:  # ... and knows which task (story, level) each prompt belongs to
                remember_tasks({task_id: t.prompt for task_id, t in host.tasks.items()})
            for task_id, task in host.tasks.items():
                obs = env.reset(task_id=task_id)
                player.play(env, obs, lower_prompts(host.tasks, task_id))
                grade = env.state.grade
                out[player.name][task.difficulty][task_id] = bool(grade and grade.passed)
                live = env._live
                if near is not None and grade and not grade.passed and live is not None:
                    failures = graded(live.task, live.episode, host.registry).failures
                    if failures and all(c.group == "answer" for c in failures):
                        near.setdefault(player.name, {}).setdefault(task.difficulty, []).append(task_id)
        env.close()
    return out


def main(argv: list[str]) -> int:
    args = [a for a in argv if a not in ("--round4", "--round5", "--round6", "--round7", "--diag")]
    near: dict[str, dict[str, list[str]]] = {}
    taskset = Path(args[0]) if args else SHIPPED
    if "--round4" in argv:
        from .players_round4 import PLAYERS as ROUND4

        results = play_all(taskset, ROUND4)
    elif "--round5" in argv:
        from .players_round5 import PLAYERS as ROUND5

        results = play_all(taskset, ROUND5)
    elif "--round6" in argv:
        from .players_round6 import PLAYERS as ROUND6

        results = play_all(taskset, ROUND6)
    elif "--diag" in argv:
        from .diagnostics import PLAYERS as DIAG

        results = play_all(taskset, DIAG, near)
    elif "--round7" in argv:
        from .players_round7 import PLAYERS as ROUND7

        results = play_all(taskset, ROUND7)
    else:
        results = play_all(taskset)
    levels = sorted({lv for per in results.values() for lv in per})
    print("player".ljust(20) + "".join(lv.rjust(10) for lv in levels))
    for name, per in results.items():
        cells = [f"{sum(per[lv].values())}/{len(per[lv])}" for lv in levels]
        print(name.ljust(20) + "".join(c.rjust(10) for c in cells))
        for lv in levels:
            if lv != "level0":
                won = [t for t, ok in per[lv].items() if ok]
                if won:
                    print("   ", lv, ", ".join(won))
                if near.get(name, {}).get(lv):
                    print("    + only the answer failed:", lv, ", ".join(near[name][lv]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
