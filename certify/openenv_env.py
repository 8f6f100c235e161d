"""The simulator as an OpenEnv environment (`taskforge openenv`), for RL trainers that speak OpenEnv (TRL, SkyRL).

Built on openenv-core's own server: `create_app` serves `WorkspaceEnvironment` with the library's routes
(`/ws` for episodes, `/health`, `/schema`, `/metadata`, `/mcp`), one environment instance per WebSocket
session, so concurrent sessions never share a workspace. Actions are OpenEnv's own MCP action types:
`CallToolAction(tool_name, arguments)` is one tool call (or `final_answer {text}`), `ListToolsAction` lists the
episode's tools without taking a turn. OpenEnv's `MCPEnvironment` base does not fit: it lists and calls the
tools of one FastMCP server fixed at construction and computes no reward, while our tool set is the task's,
chosen at `reset`, and every call must pass through the episode's rules.

- `reset(task_id=...)` or `reset(seed=N)` (the N-th task, modulo their number; neither: one at random) starts an
  episode; the observation carries the prompt, the rules our harness states and the task's tools.
- `step(CallToolAction)` runs one call under the harness's rules (the turn budget, invalid calls counted,
  refusals once over); the observation carries the simulator's envelope as `result`.
- `state` is the episode: task, turns, the calls made, how it ended and, once over, its grade.
- Reward (`certify/rewards.py`): `strict` (default) pays the verdict, 1 or 0, on the step that ends the episode;
  `shaped` pays the Workbench card's reward there. Every other step pays 0. Choose per server
  (`--reward`) or per episode (`reset(reward="shaped")`).

Episodes go through the same `EpisodeHost` as `taskforge serve`, so each finished episode is graded by our
grader and appended as a Trial to `.taskforge/runs/<run>/trials.jsonl`, where `taskforge export rollouts`
and the reports read it. An episode that took no step (an HTTP `/reset`, which OpenEnv serves statelessly) is
not recorded.

`openenv.yaml` names `certify.openenv_env:app`, built on first access from TASKFORGE_TASKSET (default: the
shipped taskset), TASKFORGE_WORLD, TASKFORGE_REWARD, TASKFORGE_RUNS_DIR and TASKFORGE_MAX_SESSIONS.
"""

from __future__ import annotations

import asyncio
import functools
import os
import random
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.mcp_types import CallToolAction, ListToolsAction, ListToolsObservation, Tool
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field

from .agents.base import TaskView
from .episode import FINAL_ANSWER
from .grader import grade
from .mcp_server import EpisodeHost, LiveEpisode
from .rewards import Reward, RewardMode, outstanding_checks, score, turn_budget

ENV_NAME = "taskforge-workspace"
DEFAULT_MAX_SESSIONS = 64
SHIPPED = Path(__file__).resolve().parents[1] / "tasksets" / "workspace_tasks"


class WorkspaceObservation(Observation):
    """What the policy sees after `reset` (the prompt, rules and tools) and after each call (the envelope)."""

    task_id: str
    level: str
    reward_mode: RewardMode
    prompt: str | None = Field(default=None, description="the request (at reset)")
    rules: list[str] = Field(default_factory=list, description="the episode's rules (at reset)")
    available_tools: list[Tool] = Field(default_factory=list, description="the task's tools (at reset)")
    tool_name: str = Field(default="", description="the call this observation answers (empty at reset)")
    result: dict[str, Any] | None = Field(default=None, description="the simulator's envelope")
    turns: int = 0
    turns_left: int = 0
    grade: Reward | None = Field(default=None, description="both rewards, once the episode is over")


class WorkspaceState(State):
    """The episode: which task, how far, the calls made and, once over, how it ended and its grade."""

    task_id: str | None = None
    level: str | None = None
    reward_mode: RewardMode | None = None
    turn_budget: int = 0
    turns: int = 0
    invalid_calls: int = 0
    done: bool = False
    ended_by: str | None = None
    final_answer: str | None = None
    calls: list[dict[str, Any]] = Field(default_factory=list)
    grade: Reward | None = None


class EpisodeError(ValueError):
    """A request the environment cannot serve (no episode yet, an unknown task); the client gets its message."""


class WorkspaceEnvironment(Environment[Action, Observation, WorkspaceState]):
    """One OpenEnv session: at most one live episode at a time, over the shared EpisodeHost.

    The server calls reset and step on its event loop but close from the session's worker thread, so every
    touch of the host (whose run file all sessions append to) holds the host's lock."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(
        self,
        host: EpisodeHost,
        reward: RewardMode = RewardMode.strict,
        lock: threading.Lock | None = None,
    ) -> None:
        super().__init__()
        self.host = host
        self.reward_mode = reward
        self._lock = lock or threading.Lock()
        self._episode_mode = reward
        self._live: LiveEpisode | None = None
        self._outstanding: frozenset[str] = frozenset()
        self._grade: Reward | None = None
        self._paid = False
        self._episode_id: str | None = None

    # --- the OpenEnv interface (async on the server's loop: the host's run file is written from one thread) ---

    async def reset_async(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task_id: str | None = None,
        reward: str | None = None,
        **kwargs: Any,
    ) -> WorkspaceObservation:
        return self.reset(seed=seed, episode_id=episode_id, task_id=task_id, reward=reward, **kwargs)

    async def step_async(self, action: Action, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        return self.step(action, timeout_s=timeout_s, **kwargs)

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task_id: str | None = None,
        reward: str | None = None,
        **kwargs: Any,
    ) -> WorkspaceObservation:
        if kwargs:
            raise EpisodeError(
                f"reset takes task_id, seed, episode_id and reward; not {', '.join(sorted(kwargs))}"
            )
        ids = list(self.host.tasks)
        if task_id is None:
            task_id = ids[seed % len(ids)] if seed is not None else random.choice(ids)
        elif task_id not in self.host.tasks:
            raise EpisodeError(f"unknown task '{task_id}' ({len(ids)} tasks; e.g. {', '.join(ids[:3])})")
        try:
            mode = RewardMode(reward) if reward is not None else self.reward_mode
        except ValueError:
            raise EpisodeError(f"reward must be strict or shaped, not '{reward}'") from None
        with self._lock:
            self._abandon("reset")
            self._live = self.host.open(task_id, "openenv")
        self._episode_mode = mode
        self._outstanding = outstanding_checks(self.host.world, self._live.task, self.host.registry)
        self._grade, self._paid = None, False
        self._episode_id = episode_id
        view = TaskView.of(self._live.task)
        return self._observation(
            prompt=view.prompt,
            rules=list(view.rules),
            available_tools=[
                Tool(name=t["name"], description=t["description"], input_schema=t["parameters"])
                for t in view.tools
            ],
        )

    def step(self, action: Action, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        live = self._require_live()
        if isinstance(action, ListToolsAction):
            tools = TaskView.of(live.task).tools
            return ListToolsObservation(
                tools=[
                    Tool(name=t["name"], description=t["description"], input_schema=t["parameters"])
                    for t in tools
                ],
                done=live.episode.done,
            )
        if not isinstance(action, CallToolAction):
            raise EpisodeError(f"actions are call_tool or list_tools, not {type(action).__name__}")
        with self._lock:
            envelope = self.host.act(live, action.tool_name, action.arguments)
        return self._observation(tool_name=action.tool_name, result=envelope)

    @property
    def state(self) -> WorkspaceState:
        live = self._live
        if live is None:
            return WorkspaceState(episode_id=self._episode_id)
        episode = live.episode
        return WorkspaceState(
            episode_id=self._episode_id,
            step_count=episode.turns,
            task_id=live.task.id,
            level=live.task.difficulty,
            reward_mode=self._episode_mode,
            turn_budget=episode.budget or 0,
            turns=episode.turns,
            invalid_calls=episode.invalid_calls,
            done=episode.done,
            ended_by=episode.ended_by,
            final_answer=episode.final_answer,
            calls=[
                {"index": e.index, "tool": e.tool, "args": e.args, "ok": e.ok, "code": e.code}
                for e in episode.events
            ],
            grade=self._grade,
        )

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name=ENV_NAME,
            description=(
                "Benchmark tasks in a simulated financial analyst workspace: reset(task_id|seed) starts an "
                f"episode of one of {len(self.host.tasks)} tasks, step takes one tool call (call_tool) or "
                "final_answer, reward is the grader's strict verdict or the shaped reward."
            ),
            version=_version(),
            documentation_url="https://github.com/taskforge/taskforge#running-at-scale",
        )

    def close(self) -> None:
        with self._lock:
            self._abandon("session_closed")

    # --- internals ---------------------------------------------------------------------------------------------

    def _require_live(self) -> LiveEpisode:
        if self._live is None:
            raise EpisodeError("no episode yet: call reset (with task_id or seed) first")
        return self._live

    def _abandon(self, reason: str) -> None:
        """Grade and record an unfinished episode that took at least one step; one that took none is dropped."""
        live = self._live
        if live is not None and live.trial is None and live.episode.turns:
            self.host.finish(live, reason)

    def _observation(self, **fields: Any) -> WorkspaceObservation:
        live = self._require_live()
        episode = live.episode
        budget = turn_budget(live.task)
        reward = 0.0
        if episode.done and live.trial is not None and self._grade is None:
            result = grade(live.task, episode, self.host.registry)
            self._grade = score(result, turns=episode.turns, budget=budget, outstanding=self._outstanding)
        if self._grade is not None and not self._paid:
            reward, self._paid = self._grade.value(self._episode_mode), True
        return WorkspaceObservation(
            task_id=live.task.id,
            level=live.task.difficulty,
            reward_mode=self._episode_mode,
            turns=episode.turns,
            turns_left=max((episode.budget or budget) - episode.turns, 0),
            done=episode.done,
            reward=reward,
            grade=self._grade,
            **fields,
        )


# --- the server ----------------------------------------------------------------------------------------------


def create_workspace_app(
    host: EpisodeHost, *, reward: RewardMode = RewardMode.strict, max_sessions: int = DEFAULT_MAX_SESSIONS
) -> Any:
    """openenv-core's FastAPI app over `host`; the host's run is opened at startup and closed at shutdown."""
    app = create_app(
        functools.partial(WorkspaceEnvironment, host, reward, threading.Lock()),
        CallToolAction,
        WorkspaceObservation,
        env_name=ENV_NAME,
        max_concurrent_envs=max_sessions,
    )
    app.router.on_startup.append(host.start)
    app.router.on_shutdown.append(host.close)
    return _QuietDisconnects(app)


class _QuietDisconnects:
    """openenv-core 0.3 closes a WebSocket the client already closed (after the client's own `close` message)
    and lets starlette's WebSocketDisconnect escape, which uvicorn logs as a crash of the app on every session's
    end. A disconnect at that point is the normal end of a session; anything else still propagates."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.router = app.router

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from starlette.websockets import WebSocketDisconnect

        try:
            await self.app(scope, receive, send)
        except WebSocketDisconnect:
            if scope["type"] != "websocket":
                raise


async def serve_app(
    app: Any,
    *,
    bind_host: str = "127.0.0.1",
    port: int = 8000,
    announce: Callable[[str], None] | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Serve `app` until interrupted or `stop` is set; `announce` gets the base URL once bound (port 0 picks one)."""
    import socket

    import uvicorn

    from .mcp_server import ServeError

    sock = socket.socket(socket.AF_INET6 if ":" in bind_host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((bind_host, port))
    except OSError as exc:
        sock.close()
        raise ServeError(f"cannot serve on {bind_host}:{port}: {exc.strerror or exc}") from exc
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5)
    )
    shown = f"[{bind_host}]" if ":" in bind_host else bind_host

    async def stop_when_asked() -> None:
        if stop is not None:
            await stop.wait()
            server.should_exit = True

    watcher = asyncio.create_task(stop_when_asked())
    try:
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not serving.done():
            await asyncio.sleep(0.01)
        if server.started and announce is not None:
            announce(f"http://{shown}:{sock.getsockname()[1]}")
        await serving
    finally:
        watcher.cancel()
        sock.close()


# --- the client ----------------------------------------------------------------------------------------------


class WorkspaceEnv(EnvClient[Action, Observation, WorkspaceState]):
    """OpenEnv's WebSocket client, typed for this environment (EnvClient does the protocol)."""

    def _step_payload(self, action: Action) -> dict[str, Any]:
        return action.model_dump()

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[Observation]:
        data = {
            **payload.get("observation", {}),
            "done": payload.get("done", False),
            "reward": payload.get("reward"),
        }
        observation: Observation = (
            ListToolsObservation.model_validate(data)
            if "tools" in data
            else WorkspaceObservation.model_validate(data)
        )
        return StepResult(
            observation=observation, reward=payload.get("reward"), done=payload.get("done", False)
        )

    def _parse_state(self, payload: dict[str, Any]) -> WorkspaceState:
        return WorkspaceState.model_validate(payload)

    async def call(self, tool: str, **arguments: Any) -> StepResult[Observation]:
        """One tool call as one step (`final_answer` takes `text`)."""
        return await self.step(CallToolAction(tool_name=tool, arguments=arguments))

    async def answer(self, text: str) -> StepResult[Observation]:
        return await self.call(FINAL_ANSWER, text=text)


# --- openenv.yaml's app ---------------------------------------------------------------------------------------


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("taskforge")
    except PackageNotFoundError:
        return "0"


def app_from_environment() -> Any:
    """The app `openenv.yaml` names, configured by TASKFORGE_* variables (see the module docstring)."""
    from .evaluate import DEFAULT_RUNS_DIR, select_tasks
    from .task import TaskSet

    taskset = Path(os.environ.get("TASKFORGE_TASKSET") or SHIPPED)
    world = os.environ.get("TASKFORGE_WORLD")
    loaded = TaskSet.load(taskset)
    host = EpisodeHost(
        loaded.world(Path(world) if world else None),
        select_tasks(taskset),
        runs_dir=Path(os.environ.get("TASKFORGE_RUNS_DIR") or DEFAULT_RUNS_DIR),
        taskset=loaded.manifest.taskset_id,
        transport="openenv",
        run_agent="openenv",
        notes=["served over OpenEnv: one trial per episode that took a step"],
        options={"taskset_dir": str(taskset.resolve())},
    )
    return create_workspace_app(
        host,
        reward=RewardMode(os.environ.get("TASKFORGE_REWARD") or RewardMode.strict),
        max_sessions=int(os.environ.get("TASKFORGE_MAX_SESSIONS") or DEFAULT_MAX_SESSIONS),
    )


@functools.cache
def _app() -> Any:
    return app_from_environment()


def __getattr__(name: str) -> Any:
    if name == "app":
        return _app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
