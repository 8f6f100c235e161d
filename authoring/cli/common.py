"""What every command shares besides its options: the two consoles, the usage error, and loading a world.

A usage error is one line on stderr and exit 2, before any work; a world that does not load is one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from authoring import render

if TYPE_CHECKING:
    from collections.abc import Iterable

    from certify import Agent, TaskSet
    from simulator import World

console = render.console()
err = render.console(stderr=True)


def usage_error(message: str, code: int = 2) -> typer.Exit:
    """Print `message` as an error and return the exit to raise (`raise usage_error(...) from exc`)."""
    render.error(err, message)
    return typer.Exit(code)


@contextmanager
def usage_errors(*kinds: type[Exception]) -> Iterator[None]:
    """Turn an error of one of `kinds` raised inside the block into a usage error (its message, exit 2): what a
    command reads from its options before any work fails this way, never with a traceback."""
    try:
        yield
    except kinds as exc:
        raise usage_error(str(exc)) from None


def preflight(agents: Iterable[Agent]) -> None:
    """Check the endpoint of every model agent among `agents` before any episode: one that is unreachable,
    refuses the key or does not know the model is a usage error."""
    from certify import EndpointUnusable, check_agents

    try:
        check_agents(list(agents))
    except EndpointUnusable as exc:
        raise usage_error(str(exc)) from exc


def taskset_problem(taskset: Path) -> str | None:
    """Why `taskset` is not a taskset folder (a message naming --taskset), or None when it is one."""
    if (taskset / "taskset.json").is_file():
        return None
    return f"--taskset {taskset}: {'no such folder' if not taskset.is_dir() else 'no taskset.json in it'}"


def load_world(path: Path | None) -> World:
    """The world at `path` (the built-in default world when None); one that does not load is a usage error."""
    from simulator import DEFAULT_WORLD, World, WorldError

    try:
        return World.load(path or DEFAULT_WORLD)
    except WorldError as exc:
        raise usage_error(f"cannot load world {path or DEFAULT_WORLD}: {exc}") from exc


def world_of(taskset: TaskSet, override: Path | None) -> Path:
    """Where the world a taskset's tasks run in is: --world, else the one its manifest names, else the built-in
    default (the rule `TaskSet.world` loads by)."""
    from simulator import DEFAULT_WORLD

    return Path(override or taskset.manifest.world or DEFAULT_WORLD)


def taskset_world(taskset: TaskSet, override: Path | None) -> tuple[Path, World]:
    """The world a taskset's tasks run in: where it is, to record with a run, and the world itself."""
    path = world_of(taskset, override)
    return path, load_world(path)
