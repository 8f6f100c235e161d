"""`taskforge parity`: each task's reference in the simulator and on a workspace server, compared check by check
(see certify/parity.py). Exit 0 when no task disagrees structurally (data-only differences and refused tasks
are reported), 1 on a structural disagreement or a task that could not finish, 2 on bad input or when the
server cannot be reached.
"""

from __future__ import annotations

import asyncio
import json
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated

import typer

from authoring import render

from .common import console, usage_error, usage_errors
from .options import Json, TasksetFolder, WorldDir, grouped
from .surface import ServerFlags


def _origin_map(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        simulator, sep, server = pair.partition("=")
        if not sep or not simulator.strip() or not server.strip():
            raise ValueError(f"--origin-map {pair!r} is not SIMULATOR_ORIGIN=SERVER_ORIGIN")
        out[simulator.strip()] = server.strip()
    return out


@grouped
def parity_cmd(
    ctx: typer.Context,
    server: ServerFlags = ServerFlags(),
    task: Annotated[
        list[str] | None, typer.Option("--task", help="Task id (repeatable; default every task).")
    ] = None,
    taskset: TasksetFolder = Path("tasksets/workspace_tasks"),
    world: WorldDir = None,
    origin_map: Annotated[
        list[str] | None,
        typer.Option("--origin-map", help="A=B: the simulator's backend origin A is the server's B."),
    ] = None,
    keep: Annotated[
        bool, typer.Option("--keep", help="Leave what parity built on the server (no cleanup).")
    ] = False,
    poll_rounds: Annotated[
        int,
        typer.Option("--poll-rounds", min=1, help="Reads of the server's state, at most, after a write."),
    ] = 10,
    poll_interval: Annotated[
        float, typer.Option("--poll-interval", min=0.0, help="Seconds between two reads of its state.")
    ] = 0.5,
    out: Annotated[Path, typer.Option("--out", help="Where the records go.")] = Path(".taskforge/parity"),
    as_json: Json = False,
) -> None:
    """Replay each task's reference in the simulator and on the server at URL; compare the graded verdicts."""
    from certify import (
        ConnectError,
        McpTarget,
        ParityOptions,
        TaskFileError,
        TaskSet,
        connect,
        new_run_id,
        run_parity,
        select_tasks,
        write_records,
    )
    from certify import summarise_parity as summarise
    from simulator import WorldError

    with usage_errors(ValueError, TaskFileError, WorldError):
        endpoint = server.endpoint(ctx)
        origins = _origin_map(origin_map or [])
        if not (taskset / "taskset.json").is_file():
            raise ValueError(f"--taskset {taskset}: no taskset.json there")
        w = TaskSet.load(taskset).world(world)
        tasks = select_tasks(taskset)
    if task:
        known = {t.id: t for t in tasks}
        missing = [t for t in task if t not in known]
        if missing:
            raise usage_error(f"--task {missing[0]}: no such task in {taskset}")
        tasks = [known[t] for t in dict.fromkeys(task)]
    if not tasks:
        raise usage_error(f"--taskset {taskset}: no tasks")

    @asynccontextmanager
    async def target():
        async with connect(endpoint) as client:
            yield await McpTarget.of(client, endpoint.label())

    def progress(record) -> None:
        if as_json:
            return
        mark = {"agree": "=", "data_only": "~", "structural": "✗", "refused": "-", "error": "!"}[
            record.status
        ]
        line = f"{mark} {record.task_id}: {record.status.replace('_', '-')}"
        if record.reason:
            line += f" ({record.reason})"
        render.say(console, line, indent=4)
        for d in record.disagreements():
            if d.verdict == "agree":
                continue
            where = f"{d.code} [{d.label}]" if hasattr(d, "code") else f"step {d.index} {d.tool}: {d.what}"
            render.say(
                console,
                f"{d.verdict.replace('_', '-')} {where}: simulator {_short(d.simulator)}; server {_short(d.server)}",
                prefix="    ",
                indent=6,
            )

    options = ParityOptions(
        origin_map=origins, keep=keep, poll_rounds=poll_rounds, poll_interval_s=poll_interval
    )
    run_id = new_run_id()
    with usage_errors(ConnectError):
        records = asyncio.run(run_parity(w, tasks, target, options, progress=progress))
    folder, paths = write_records(out, run_id, records)
    summary = summarise(run_id, endpoint.label(), records, paths)
    (folder / "summary.json").write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
    if as_json:
        sys.stdout.write(
            json.dumps(
                {"summary": summary.model_dump(), "tasks": [r.model_dump(mode="json") for r in records]},
                indent=2,
            )
            + "\n"
        )
    else:
        render.say(
            console,
            f"{summary.tasks} task(s) against {endpoint.label()}: {summary.agree} agree, {summary.data_only} "
            f"data-only, {summary.structural} structural, {summary.refused} refused, {summary.error} error",
        )
        render.say(console, f"records: {folder}")
    raise typer.Exit(0 if summary.ok else 1)


def _short(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 200 else text[:197] + "..."
