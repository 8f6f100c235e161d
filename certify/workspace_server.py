"""A bare workspace over MCP, as the product serves one (`taskforge serve --workspace`): what `parity` runs
against when the product is out of reach.

Each MCP session gets its own workspace (the world's backends connected, every skill available, nothing seeded)
and no task: no prompt `task`, no turn budget, no grading, no run folder. Calls go straight to the workspace, so
everything `parity` does (seeding through public calls, replaying a reference, polling the state) is exactly
what it would do against the product. Over HTTP it serves at /mcp, the product's path. `factory` builds each
session's workspace: the tests pass deliberately divergent workspaces through it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from simulator import Setup, Workspace, World

from .episode import FINAL_ANSWER, Episode
from .evaluate import EvalRun
from .mcp_server import EpisodeHost, LiveEpisode, _unlisted
from .surface import Mode, served_tools
from .task import Task
from .trial import Trial

WORKSPACE_ID = "workspace"
HTTP_PATH = "/mcp"
WorkspaceFactory = Callable[[World, Setup], Workspace]
INSTRUCTIONS = (
    "This server is a financial analyst workspace (a simulation of the OpenBB Workspace): every session is its "
    "own workspace with the world's backends connected. Every tool result is an envelope: ok, message, data, "
    "error. Nothing is graded here."
)


def bare_setup(world: World, backends: list[str] | None = None, baseline: str | None = None) -> Setup:
    """A workspace with `backends` (default: the world's defaults) and every skill, nothing else."""
    return Setup(
        workspace_baseline=baseline,
        workspace_backends=list(backends) if backends else list(world.default_backends),
        workspace_skills=sorted(world.skills),
    )


class WorkspaceHost(EpisodeHost):
    """One bare workspace per session; the episode machinery of `EpisodeHost` without a task's rules."""

    single_path = HTTP_PATH

    def __init__(
        self,
        world: World,
        setup: Setup,
        *,
        surface: Mode = "product",
        factory: WorkspaceFactory = Workspace.start,
        transport: str = "http",
    ) -> None:
        task = Task.model_validate(
            {
                "id": WORKSPACE_ID,
                "difficulty": "level0",
                "prompt": "A bare workspace: no task is served.",
                "setup": setup.model_dump(exclude_none=True),
                "eval": {},
            }
        )
        super().__init__(world, [task], runs_dir=Path("."), transport=transport, surface=surface)
        self.factory = factory
        Workspace.start(world, setup)  # a setup the world cannot build fails here, before anything is served

    def start(self) -> None:
        """Nothing to record: a bare workspace is not an episode of a task."""

    def close(self) -> EvalRun | None:  # type: ignore[override]
        return None

    def open(self, task_id: str, agent: str) -> LiveEpisode:
        task = self.tasks[task_id]
        workspace = self.factory(self.world, task.setup)
        return LiveEpisode(task, Episode(task.id, workspace, None), agent, 0, tools=self.tools_of(task))

    def tools_of(self, task: Task) -> list[dict[str, Any]]:
        return [t for t in served_tools(None, self.surface) if t["name"] != "final_answer"]

    def instructions(self, task: Task) -> str:
        return INSTRUCTIONS

    def act(self, live: LiveEpisode, tool: str, args: Any) -> dict[str, Any]:
        """No harness here: `final_answer` (and, in the product's shape, the knowledge tools) are unknown."""
        if tool == FINAL_ANSWER:
            return _unlisted(live.episode, tool, args)
        return super().act(live, tool, args)

    def task_prompt(self, task: Task) -> str | None:
        return None

    def finish(self, live: LiveEpisode, reason: str) -> Trial:
        """The session ended: nothing is graded or stored."""
        live.episode.stop(reason)
        if live.trial is None:
            live.trial = Trial(
                task_id=live.task.id, level=live.task.difficulty, agent=live.agent, valid=False
            )
            live.trial.invalid_reason = "not_graded"
        return live.trial


__all__ = ["HTTP_PATH", "INSTRUCTIONS", "WORKSPACE_ID", "WorkspaceHost", "bare_setup"]
