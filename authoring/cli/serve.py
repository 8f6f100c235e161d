"""`taskforge serve`: a taskset's tasks as an MCP server, one episode per session (see certify/mcp_server.py).

stdio serves one task to the client that launched the process (its stdout is the protocol: everything this
command says goes to stderr); http serves every task of the taskset (or only --task) at /tasks/<id>/mcp until
interrupted. `--surface product` serves them in the product's shape; `--workspace` serves a bare workspace with
no task (what `taskforge parity` runs against when the product is out of reach), at /mcp over http. Usage
errors exit 2 before anything is served.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from .common import err, taskset_problem, taskset_world, usage_error
from .options import Host, Port, RunsDir, TasksetFolderOrNone, WorldDir


def say(message: str) -> None:
    """One line on stderr (in stdio mode stdout is the protocol), never wrapped."""
    err.print(message, highlight=False, soft_wrap=True)


# the choices of --transport (a one-line enum, as in .options) and --surface (a class: mypy reads its values as
# the literals certify's hosts take)
Transport = StrEnum("Transport", ["stdio", "http"])


class SurfaceShape(StrEnum):
    simulator = "simulator"
    product = "product"


# serve's own options (the ones it shares with other commands are in .options)
ServedTask = Annotated[
    str | None,
    typer.Option(
        "--task", help="Task id; required for stdio. With http, serve only this task (default: all)."
    ),
]
TransportOption = Annotated[
    Transport,
    typer.Option("--transport", help="stdio (the client launches this command) or http (Streamable HTTP)."),
]
Reveal = Annotated[
    bool,
    typer.Option(
        "--reveal", help="final_answer's result states the verdict (pass/fail, share, failing codes)."
    ),
]
Surface = Annotated[
    SurfaceShape,
    typer.Option(
        "--surface",
        help="simulator: our 20 tools; product: the product's 18 tools, knowledge as MCP resources and prompts.",
    ),
]
BareWorkspace = Annotated[
    bool,
    typer.Option(
        "--workspace", help="Serve a bare workspace per session (no task, nothing graded) instead of tasks."
    ),
]
Backends = Annotated[
    list[str] | None,
    typer.Option(
        "--backend", help="--workspace: a world backend to connect (repeatable; default the world's)."
    ),
]


def serve(
    taskset: TasksetFolderOrNone = None,
    task: ServedTask = None,
    world: WorldDir = None,
    transport: TransportOption = Transport.stdio,
    host: Host = "127.0.0.1",
    port: Port = 8000,
    reveal: Reveal = False,
    runs_dir: RunsDir = None,
    surface: Surface = SurfaceShape.simulator,
    workspace: BareWorkspace = False,
    backends: Backends = None,
) -> None:
    """Serve tasks over MCP: the task's tools with our schemas, its prompt as the MCP prompt 'task'; each session
    is one episode, graded when it ends and stored as a trial like `taskforge eval`'s."""
    from certify import DEFAULT_RUNS_DIR, TaskFileError, TaskSet, select_tasks

    def usage_error(message: str) -> typer.Exit:
        say(f"[red]error:[/red] {message}")
        return typer.Exit(2)

    try:
        from certify import mcp_server
    except ImportError as exc:
        raise usage_error(
            f"taskforge serve needs the MCP SDK ({exc.name} is missing): pip install -e '.[mcp]'"
        ) from exc
    if workspace:
        _serve_workspace(taskset, world, transport, host, port, surface.value, backends or [])
        return
    if taskset is None:
        raise usage_error("--taskset is required (or --workspace for a bare workspace)")
    problem = taskset_problem(taskset)
    if problem:
        raise usage_error(problem)
    try:
        loaded = TaskSet.load(taskset)
        tasks = select_tasks(taskset)
    except TaskFileError as exc:
        raise usage_error(str(exc)) from exc
    where, w = taskset_world(loaded, world)
    if task is not None:
        chosen = [t for t in tasks if t.id == task]
        if not chosen:
            known = ", ".join(t.id for t in tasks[:5]) + (", …" if len(tasks) > 5 else "")
            raise usage_error(f"--task {task}: no such task in {taskset} (tasks: {known or 'none'})")
        tasks = chosen
    elif transport is Transport.stdio:
        raise usage_error("--task is required with --transport stdio (one process serves one task)")
    if not tasks:
        raise usage_error(f"--taskset {taskset}: no task files found")

    def on_trial(trial) -> None:
        verdict = "invalid" if not trial.valid else ("pass" if trial.passed else "fail")
        say(
            f"trial {trial.task_id} ({trial.agent}): {verdict}, {trial.turns} turn(s), {trial.invalid_calls} invalid, ended by {trial.ended_by}"
        )

    try:
        episodes = mcp_server.EpisodeHost(
            w,
            tasks,
            runs_dir=runs_dir or DEFAULT_RUNS_DIR,
            reveal=reveal,
            taskset=loaded.manifest.taskset_id,
            world_label=str(where),
            transport=transport.value,
            on_trial=on_trial,
            surface=surface.value,
        )
    except ValueError as exc:
        raise usage_error(str(exc)) from exc

    def announce(base: str) -> None:
        shown = tasks if len(tasks) <= 3 else tasks[:2]
        for t in shown:
            say(f"serving {t.id} at {base}{mcp_server.HTTP_PATH.format(task_id=t.id)}")
        if len(shown) < len(tasks):
            say(f"… and {len(tasks) - len(shown)} more (index: {base}/tasks)")
        say(f"trials go to {episodes.run_dir}; Ctrl-C stops")

    _serve_until_interrupted(episodes, tasks[0].id, transport, host, port, announce, usage_error)
    say(f"run folder: {episodes.run_dir}")


def _serve_workspace(
    taskset: Path | None,
    world: Path | None,
    transport: Transport,
    host: str,
    port: int,
    surface: str,
    backends: list[str],
) -> None:
    from certify import WORKSPACE_ID, TaskFileError, TaskSet, WorkspaceHost, bare_setup
    from simulator import DEFAULT_WORLD, SetupError, World, WorldError

    try:
        w = TaskSet.load(taskset).world(world) if taskset is not None else World.load(world or DEFAULT_WORLD)
    except (TaskFileError, WorldError) as exc:
        raise usage_error(str(exc)) from exc
    unknown = [b for b in backends if w.backend(b) is None]
    if unknown:
        raise usage_error(
            f"--backend {unknown[0]}: no such backend in {w.path} (backends: {', '.join(w.backends)})"
        )
    try:
        served = WorkspaceHost(w, bare_setup(w, backends), surface=surface, transport=transport.value)  # type: ignore[arg-type]
    except SetupError as exc:
        raise usage_error(f"--backend: {exc}") from exc

    def announce(base: str) -> None:
        say(f"serving a bare workspace ({surface} surface) at {base}{served.single_path}; Ctrl-C stops")

    _serve_until_interrupted(served, WORKSPACE_ID, transport, host, port, announce, usage_error)


def _serve_until_interrupted(
    served: Any,
    stdio_id: str,
    transport: Transport,
    host: str,
    port: int,
    announce: Callable[[str], None],
    fail: Callable[[str], typer.Exit],
) -> None:
    """Serve `served` (the tasks' episode host or a bare workspace) until Ctrl-C: over stdio the one session of
    `stdio_id`, over http every path it has. A server that cannot start is a usage error, said by `fail`."""
    from certify import mcp_server

    try:
        if transport is Transport.stdio:
            asyncio.run(mcp_server.serve_stdio(served, stdio_id))
        else:
            asyncio.run(mcp_server.serve_http(served, bind_host=host, port=port, announce=announce))
    except KeyboardInterrupt:
        pass
    except mcp_server.ServeError as exc:
        raise fail(str(exc)) from exc
