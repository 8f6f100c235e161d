"""The simulator as an MCP server (`taskforge serve`): one MCP session is one episode of one task.

An agent running in any MCP-capable harness connects, reads the task's prompt (the MCP prompt `task`), works
through the task's allowed tools and calls `final_answer`. It sees exactly what our own harness shows: the same
tool names, descriptions and JSON Schemas (`TaskView`), the same envelopes, the same rules (`open_episode`: the
turn budget, refusals once the episode is over; invalid calls are counted and graded by the task's budget).
When the episode ends (final answer, turn budget, or the session closing) it is graded and appended as a
`Trial` to a run folder written by the same `RunWriter` as `taskforge eval`, so `load_run`/`regrade_trial` and
the reports work on served runs unchanged.

`--surface product` serves the same episode in the product's shape (certify/surface.py): the product's 18 tools,
the world's knowledge documents as MCP resources and its workspace prompts as MCP prompts; reading one is the
knowledge tool's call in the trace (`read_workspace_resource`, `get_workspace_prompt`), counted like it. Either
way the server's instructions and the prompt `task` state the episode's rules as our own harness states them
(`certify.rules`).

Sessions need the MCP handshake era. The 2026-07-28 protocol has no sessions (every request stands alone, with
a fresh connection), so requests of that era are refused with an error; clients that negotiate (the SDK's
`auto` mode) then fall back to `initialize` and get a session. Over stdio the process is the session: it serves
the handshake loop alone and ends when the client closes it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simulator import World

from .agents.base import TaskView
from .episode import FINAL_ANSWER, Episode, TraceEvent
from .evaluate import EvalRun, RunRecord, RunWriter, new_run_id
from .grader import CheckFn, grade
from .lock import now
from .rules import rules_text, task_text
from .surface import (
    KNOWLEDGE_TOOLS,
    TASK_PROMPT,
    TASK_PROMPT_DESCRIPTION,
    Mode,
    served_prompts,
    served_resources,
    served_tools,
)
from .task import Task
from .trial import Trial, end_if_out_of_turns, open_episode, record_episode

if TYPE_CHECKING:
    from mcp.server.connection import Connection
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

PROMPT_NAME = TASK_PROMPT
INSTRUCTIONS = (
    "Each session of this server is one episode of a benchmark task in a simulated financial analyst "
    "workspace. Get the prompt 'task' for what is asked, do the work with the tools (every result is an "
    "envelope: ok, message, data, error), and finish with final_answer {text}; the episode ends there."
)
_STATE_KEY = "taskforge.episode"
RESOURCE_NOT_FOUND = -32002  # the MCP specification's code for an unknown resource
HTTP_PATH = "/tasks/{task_id}/mcp"
Announce = Callable[[str], None]


class ServeError(Exception):
    """The server cannot start (the address is taken, the task is unknown)."""


@dataclass
class LiveEpisode:
    """One session's episode, from its first request until its trial is written."""

    task: Task
    episode: Episode
    agent: str
    repeat: int
    started: float = field(default_factory=time.perf_counter)
    trial: Trial | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)


class EpisodeHost:
    """The tasks a server offers, the episodes in progress and the run their trials go to. Transport-free:
    the MCP handlers below only translate requests into `open`, `act` and `finish`."""

    single_path: str | None = None  # HTTP: serve the one task at this path instead of /tasks/<id>/mcp

    def __init__(
        self,
        world: World,
        tasks: list[Task],
        *,
        runs_dir: Path,
        reveal: bool = False,
        taskset: str | None = None,
        world_label: str | None = None,
        transport: str = "stdio",
        registry: dict[str, CheckFn] | None = None,
        on_trial: Callable[[Trial], None] | None = None,
        surface: Mode = "simulator",
        run_agent: str = "mcp",
        notes: list[str] | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.world = world
        self.surface: Mode = surface
        self.tasks: dict[str, Task] = {}
        for task in tasks:
            if task.id in self.tasks:
                raise ValueError(f"two tasks share the id '{task.id}'; a served taskset needs unique ids")
            self.tasks[task.id] = task
        self.reveal = reveal
        self.registry = registry
        self.on_trial = on_trial
        self._sessions: Counter[str] = Counter()
        self._writer: RunWriter | None = None
        self._record = RunRecord(
            run_id=new_run_id(),
            agent=run_agent,
            taskset=taskset,
            world=world_label,
            tasks=len(self.tasks),
            task_ids=list(self.tasks),
            repeats=1,
            planned_trials=0,
            started_at="",
            options={"transport": transport, "reveal": reveal, "surface": surface, **(options or {})},
            notes=notes or ["served over MCP: one trial per session, none planned ahead"],
        )
        self.runs_dir = Path(runs_dir)

    @property
    def run_dir(self) -> Path:
        return self.runs_dir / self._record.run_id

    def start(self) -> None:
        self._record.started_at = now()
        self._writer = RunWriter.create(self.runs_dir, self._record)

    def close(self) -> EvalRun:
        if self._writer is None:
            raise RuntimeError("the episode host was never started")
        run = self._writer.close("complete")
        self._writer = None
        return run

    def open(self, task_id: str, agent: str) -> LiveEpisode:
        task = self.tasks.get(task_id)
        if task is None:
            raise KeyError(task_id)
        repeat = self._sessions[task_id]
        self._sessions[task_id] += 1
        return LiveEpisode(task, open_episode(self.world, task), agent, repeat, tools=self.tools_of(task))

    # What a session is shown: the tools, the instructions and the prompts of its surface.
    def tools_of(self, task: Task) -> list[dict[str, Any]]:
        if self.surface == "simulator":
            return TaskView.of(task).tools
        return served_tools(task.setup.allowed_tools, "product")

    def instructions(self, task: Task) -> str:
        return f"{INSTRUCTIONS}\n\n{rules_text(TaskView.of(task).rules)}"

    def task_prompt(self, task: Task) -> str | None:
        """The prompt `task`: the request, then the episode's rules (as our harness states them)."""
        return task_text(task.prompt, TaskView.of(task).rules)

    def knowledge_allowed(self, task: Task, tool: str) -> bool:
        """In the product's shape, the knowledge a task may read (its allowed knowledge tools) is listed as
        resources and prompts."""
        allowed = task.setup.allowed_tools
        return self.surface == "product" and (not allowed or tool in allowed)

    def act(self, live: LiveEpisode, tool: str, args: Any) -> dict[str, Any]:
        """One call, with the harness's rules; the episode is graded the moment it ends. A tool this surface
        does not list (the knowledge tools, in the product's shape) is an unknown tool to the agent."""
        if self.surface == "product" and tool in KNOWLEDGE_TOOLS:
            envelope = _unlisted(live.episode, tool, args)
        else:
            envelope = live.episode.act(tool, args)
        return self._after(live, tool, envelope)

    def read(self, live: LiveEpisode, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """A resource or prompt read of the product's shape: the knowledge tool's call, in the trace."""
        return self._after(live, tool, live.episode.act(tool, args))

    def _after(self, live: LiveEpisode, tool: str, envelope: dict[str, Any]) -> dict[str, Any]:
        episode = live.episode
        end_if_out_of_turns(episode)
        if episode.done and live.trial is None:
            trial = self.finish(live, episode.ended_by or "agent_stopped")
            if tool == FINAL_ANSWER and envelope["ok"] and self.reveal:
                envelope = {
                    **envelope,
                    "data": {
                        "verdict": "pass" if trial.passed else "fail",
                        "passed": trial.passed,
                        "share": trial.share,
                        "failure_codes": trial.failure_codes,
                    },
                }
        return envelope

    def finish(self, live: LiveEpisode, reason: str) -> Trial:
        """Grade the episode and append its trial to the run (once; later calls return the same trial)."""
        if live.trial is not None:
            return live.trial
        episode = live.episode
        episode.stop(reason)
        trial = Trial(task_id=live.task.id, level=live.task.difficulty, agent=live.agent, repeat=live.repeat)
        record_episode(trial, episode)
        try:
            trial.apply_grade(grade(live.task, episode, self.registry))
        except Exception as exc:  # a grader fault must not be scored against the agent
            trial.valid, trial.invalid_reason = False, "harness_fault"
            trial.error = f"{type(exc).__name__}: {exc}"
        trial.duration_s = round(time.perf_counter() - live.started, 4)
        live.trial = trial
        if self._writer is not None:
            self._writer.add(trial)
        if self.on_trial is not None:
            self.on_trial(trial)
        return trial


# --- the MCP side ---------------------------------------------------------------------------------------------


def _connection(ctx: ServerRequestContext[Any, Any]) -> Connection:
    """The session's Connection. mcp 2.3 keeps per-session state (`state`, `exit_stack`) there but hands request
    handlers only the per-request ServerSession, which holds it privately; this is the one place that reaches in
    (pyproject pins the minor version; the tests fail loudly if it moves)."""
    from mcp.server.connection import Connection

    connection = getattr(ctx.session, "_connection", None)
    if not isinstance(connection, Connection):
        raise RuntimeError(
            "this mcp version no longer exposes the session's Connection to handlers; "
            "taskforge serve supports mcp>=2.3,<2.4"
        )
    return connection


def _agent_name(connection: Connection) -> str:
    params = connection.client_params
    name = params.client_info.name if params is not None and params.client_info is not None else ""
    return f"mcp:{name}" if name else "mcp"


def _task_id_from_path(ctx: ServerRequestContext[Any, Any]) -> str:
    request = ctx.request
    task_id = getattr(request, "path_params", {}).get("task_id") if request is not None else None
    if not task_id:
        raise _mcp_error("this server serves each task at /tasks/<id>/mcp")
    return task_id


def _mcp_error(message: str, code: int | None = None) -> Exception:
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_REQUEST

    return MCPError(code=INVALID_REQUEST if code is None else code, message=message)


def _live(
    host: EpisodeHost, ctx: ServerRequestContext[Any, Any], task_of: Callable[[Any], str]
) -> LiveEpisode:
    """The session's episode, opened on its first request; its trial is written when the session closes."""
    connection = _connection(ctx)
    task_id = task_of(ctx)
    live: LiveEpisode | None = connection.state.get(_STATE_KEY)
    if live is not None:
        if live.task.id != task_id:
            raise _mcp_error(f"this session is the episode of task '{live.task.id}', not '{task_id}'")
        return live
    try:
        live = host.open(task_id, _agent_name(connection))
    except KeyError:
        raise _mcp_error(f"unknown task '{task_id}'") from None
    connection.state[_STATE_KEY] = live

    async def session_closed() -> None:
        host.finish(live, "session_closed")

    connection.exit_stack.push_async_callback(session_closed)
    return live


class _HandshakeEraOnly:
    """Refuse requests of the session-less protocol era (see the module docstring)."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            raise _mcp_error(
                "taskforge serve keeps one episode per MCP session; connect with the initialize "
                f"handshake (protocol {ctx.protocol_version} has no sessions)"
            )
        return await call_next(ctx)


def build_server(host: EpisodeHost, task_of: Callable[[Any], str]) -> Server[Any]:
    """The MCP server over `host`; `task_of(ctx)` names the task a request's session is about."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        live = _live(host, ctx, task_of)
        return types.ListToolsResult(
            tools=[
                types.Tool(name=t["name"], description=t["description"], input_schema=t["parameters"])
                for t in live.tools
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        live = _live(host, ctx, task_of)
        envelope = host.act(live, params.name, params.arguments or {})
        text = json.dumps(envelope, ensure_ascii=False, separators=(",", ":"), default=str)
        return types.CallToolResult(
            content=[types.TextContent(text=text)], structured_content=envelope, is_error=not envelope["ok"]
        )

    def workspace_prompts(live: LiveEpisode) -> dict[str, str]:
        if not host.knowledge_allowed(live.task, "get_workspace_prompt"):
            return {}
        return {p.name: host.world.prompts[p.name].description for p in served_prompts(host.world)}

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        live = _live(host, ctx, task_of)
        listed = [types.Prompt(name=n, description=d or None) for n, d in workspace_prompts(live).items()]
        if host.task_prompt(live.task) is not None:
            listed.append(types.Prompt(name=PROMPT_NAME, description=TASK_PROMPT_DESCRIPTION))
        return types.ListPromptsResult(prompts=listed)

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        from mcp_types import INVALID_PARAMS

        live = _live(host, ctx, task_of)
        if params.name in workspace_prompts(live):
            envelope = host.read(live, "get_workspace_prompt", {"name": params.name})
            if not envelope["ok"]:
                raise _mcp_error(envelope["message"], INVALID_PARAMS)
            data = envelope["data"]
            return types.GetPromptResult(
                description=data.get("description") or None,
                messages=[
                    types.PromptMessage(role="user", content=types.TextContent(text=m["content"]))
                    for m in data["messages"]
                ],
            )
        text = host.task_prompt(live.task)
        if params.name != PROMPT_NAME or text is None:
            known = [*workspace_prompts(live), *([PROMPT_NAME] if text is not None else [])]
            names = ", ".join(f"'{n}'" for n in known) or "none"
            raise _mcp_error(f"unknown prompt '{params.name}'; this server has: {names}", INVALID_PARAMS)
        return types.GetPromptResult(
            description=f"Task {live.task.id}",
            messages=[types.PromptMessage(role="user", content=types.TextContent(text=text))],
        )

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        live = _live(host, ctx, task_of)
        if not host.knowledge_allowed(live.task, "read_workspace_resource"):
            return types.ListResourcesResult(resources=[])
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=r.uri, name=r.name or r.uri, description=r.description, mime_type=r.mime_type
                )
                for r in served_resources(host.world)
            ]
        )

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        live = _live(host, ctx, task_of)
        uri = str(params.uri)
        if not host.knowledge_allowed(live.task, "read_workspace_resource"):
            raise _mcp_error(f"unknown resource '{uri}': this episode lists none", RESOURCE_NOT_FOUND)
        envelope = host.read(live, "read_workspace_resource", {"uri": uri})
        if not envelope["ok"]:
            raise _mcp_error(envelope["message"], RESOURCE_NOT_FOUND)
        data = envelope["data"]
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=uri, mime_type=data.get("mime_type"), text=str(data.get("text", ""))
                )
            ]
        )

    async def initialized(ctx: Any, params: Any) -> None:
        _live(host, ctx, task_of)

    @asynccontextmanager
    async def lifespan(_: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        host.start()
        try:
            yield {}
        finally:
            host.close()

    product = host.surface == "product"
    server: Server[Any] = Server(
        "taskforge",
        version=_version(),
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_resources=list_resources if product else None,
        on_read_resource=read_resource if product else None,
    )
    server.add_notification_handler("notifications/initialized", types.NotificationParams, initialized)
    server.middleware.insert(0, _HandshakeEraOnly())
    server.middleware.insert(1, _EpisodeInstructions(host, task_of))
    return server


class _EpisodeInstructions:
    """The server's instructions name the episode's rules: per task, so they are set on each `initialize`."""

    def __init__(self, host: EpisodeHost, task_of: Callable[[Any], str]) -> None:
        self.host = host
        self.task_of = task_of

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict):
            task = self.host.tasks.get(self.task_of(ctx))
            if task is not None:
                result = {**result, "instructions": self.host.instructions(task)}
        return result


def _unlisted(episode: Episode, tool: str, args: Any) -> dict[str, Any]:
    """A call of a tool the session's surface does not list: refused and counted like an unknown tool (the
    simulator has it, the surface the agent was shown does not)."""
    if episode.done or (episode.budget and len(episode.events) >= episode.budget):
        return episode.act(tool, args)  # the harness's own refusal (episode over, budget spent)
    message = f"Unknown tool '{tool}'."
    envelope = {
        "ok": False,
        "command": tool,
        "request_id": None,
        "message": message,
        "data": None,
        "error": {"code": "unknown_tool", "message": message, "retryable": False},
    }
    episode.events.append(TraceEvent(len(episode.events) + 1, tool, args, False, envelope))
    return envelope


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("taskforge")
    except PackageNotFoundError:
        return ""


async def serve_stdio(host: EpisodeHost, task_id: str) -> None:
    """One session over this process's stdin/stdout (the client launched us); returns when it closes."""
    from mcp.server.runner import serve_loop
    from mcp.server.stdio import stdio_server

    if task_id not in host.tasks:
        raise ServeError(f"unknown task '{task_id}'")
    server = build_server(host, lambda ctx: task_id)
    async with stdio_server() as (read, write), server.lifespan(server) as state:
        await serve_loop(server, read, write, lifespan_state=state)


class _KnownTasksOnly:
    """404 for /tasks/<id>/mcp with an id the taskset does not have, before any MCP session is made for it."""

    def __init__(self, app: Any, task_ids: set[str]) -> None:
        self.app = app
        self.task_ids = task_ids

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            parts = scope["path"].strip("/").split("/")
            if (
                len(parts) == 3
                and parts[0] == "tasks"
                and parts[2] == "mcp"
                and parts[1] not in self.task_ids
            ):
                from starlette.responses import JSONResponse

                response = JSONResponse(
                    {"error": f"unknown task '{parts[1]}'", "tasks": "/tasks"}, status_code=404
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def http_app(host: EpisodeHost, *, bind_host: str = "127.0.0.1") -> Any:
    """The ASGI app: every task at /tasks/<id>/mcp (Streamable HTTP, one episode per session) and a JSON index
    of them at /tasks."""
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    if host.single_path is not None:  # one workspace at one path, as the product serves it
        (only,) = host.tasks
        return build_server(host, lambda ctx: only).streamable_http_app(
            streamable_http_path=host.single_path, host=bind_host
        )
    server = build_server(host, _task_id_from_path)

    async def index(request: Any) -> Any:
        base = str(request.base_url).rstrip("/")
        return JSONResponse(
            [
                {"id": t.id, "level": t.difficulty, "url": base + HTTP_PATH.format(task_id=t.id)}
                for t in host.tasks.values()
            ]
        )

    app = server.streamable_http_app(
        streamable_http_path=HTTP_PATH, host=bind_host, custom_starlette_routes=[Route("/tasks", index)]
    )
    return _KnownTasksOnly(app, set(host.tasks))


async def serve_http(
    host: EpisodeHost,
    *,
    bind_host: str = "127.0.0.1",
    port: int = 8000,
    announce: Announce | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Serve until interrupted (or until `stop` is set); `announce` gets the base URL once the socket is bound
    (port 0 picks a free one). Sessions still open at shutdown are graded as closed."""
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET6 if ":" in bind_host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((bind_host, port))
    except OSError as exc:
        sock.close()
        raise ServeError(f"cannot serve on {bind_host}:{port}: {exc.strerror or exc}") from exc
    bound = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(
            http_app(host, bind_host=bind_host),
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=5,
        )
    )

    async def stop_when_asked() -> None:
        if stop is not None:
            await stop.wait()
            server.should_exit = True

    shown = f"[{bind_host}]" if ":" in bind_host else bind_host
    watcher = asyncio.create_task(stop_when_asked())
    try:
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not serving.done():
            await asyncio.sleep(0.01)
        if server.started and announce is not None:
            announce(f"http://{shown}:{bound}")
        await serving
    finally:
        watcher.cancel()
        sock.close()
