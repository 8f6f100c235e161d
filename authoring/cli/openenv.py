"""`taskforge openenv`: a taskset as an OpenEnv environment server for RL trainers (see certify/openenv_env.py).

Serves until interrupted; every episode that took a step is graded and stored as a trial like `taskforge eval`'s.
Usage errors exit 2 before anything is served.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from authoring import render

from .common import usage_error
from .options import Host, PersonaOnly, Port, RunsDir, TasksetFolder, WorldDir

err = render.console(stderr=True)

# openenv's own options (the shared ones are in .options)
ServedTasks = Annotated[list[str] | None, typer.Option("--task", help="Serve only this task (repeatable).")]
Reward = Annotated[
    str,
    typer.Option("--reward", help="strict (the verdict, 1 or 0) or shaped (the Workbench card's reward)."),
]
MaxSessions = Annotated[
    int, typer.Option("--max-sessions", min=1, help="Concurrent WebSocket sessions (one episode each).")
]


def openenv_cmd(
    taskset: TasksetFolder,
    task: ServedTasks = None,
    persona: PersonaOnly = None,
    world: WorldDir = None,
    reward: Reward = "strict",
    host: Host = "127.0.0.1",
    port: Port = 8000,
    max_sessions: MaxSessions = 64,
    runs_dir: RunsDir = None,
) -> None:
    """Serve tasks as an OpenEnv environment: reset(task_id|seed) starts an episode, step takes one tool call
    (call_tool) or final_answer, the reward is the strict verdict or the shaped reward."""
    from certify import DEFAULT_RUNS_DIR, TaskFileError, TaskSet, choose_tasks, select_tasks
    from simulator import WorldError

    try:
        from certify import EpisodeHost, RewardMode, ServeError, openenv_env
    except ImportError as exc:
        raise usage_error(
            f"taskforge openenv needs openenv-core ({exc.name} is missing): pip install -e '.[openenv]'"
        ) from exc
    if reward not in {m.value for m in RewardMode}:
        raise usage_error(f"--reward {reward}: strict or shaped")
    if not (taskset / "taskset.json").is_file():
        what = "no such folder" if not taskset.is_dir() else "no taskset.json in it"
        raise usage_error(f"--taskset {taskset}: {what}")
    try:
        loaded = TaskSet.load(taskset)
        tasks = choose_tasks(select_tasks(taskset, persona), task)
        w = loaded.world(world)
    except (TaskFileError, WorldError, ValueError) as exc:
        raise usage_error(str(exc)) from exc
    if not tasks:
        raise usage_error(f"--taskset {taskset}: no task files found")
    try:
        episodes = EpisodeHost(
            w,
            tasks,
            runs_dir=runs_dir or DEFAULT_RUNS_DIR,
            taskset=loaded.manifest.taskset_id,
            world_label=str(world or loaded.manifest.world or "default"),
            transport="openenv",
            run_agent="openenv",
            notes=["served over OpenEnv: one trial per episode that took a step"],
            options={"taskset_dir": str(taskset.resolve()), "reward": reward},
            on_trial=lambda t: render.say(
                err,
                f"episode {t.task_id}: {'pass' if t.passed else 'fail'}, {t.turns} turn(s), ended by {t.ended_by}",
            ),
        )
    except ValueError as exc:
        raise usage_error(str(exc)) from exc
    app = openenv_env.create_workspace_app(episodes, reward=RewardMode(reward), max_sessions=max_sessions)

    def announce(base: str) -> None:
        render.say(
            err,
            f"OpenEnv environment '{openenv_env.ENV_NAME}' at {base} ({len(tasks)} task(s), reward {reward})",
        )
        render.say(
            err,
            f"episodes: WebSocket {base.replace('http', 'ws', 1)}/ws; trials go to {episodes.run_dir}; Ctrl-C stops",
        )

    try:
        asyncio.run(openenv_env.serve_app(app, bind_host=host, port=port, announce=announce))
    except KeyboardInterrupt:
        pass
    except ServeError as exc:
        raise usage_error(str(exc)) from exc
    render.say(err, f"run folder: {episodes.run_dir}")
