"""Servers the surface and parity tests connect to: our own hosts in process or over HTTP, a server that lists a
given surface (for served variants of a pin), and deliberately divergent workspaces."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from mcp import Client

from certify.mcp_server import EpisodeHost, build_server, serve_http
from certify.parity import McpTarget
from certify.surface import Surface
from certify.workspace_server import WORKSPACE_ID
from simulator import Workspace


@asynccontextmanager
async def inproc(host: EpisodeHost, task_id: str = WORKSPACE_ID):
    """An SDK client on `host`'s MCP server, in process (the SDK's in-memory transport, the handshake and the
    server's lifespan included: the host is started and closed with the session)."""
    server = build_server(host, lambda ctx: task_id)
    async with Client(server, mode="legacy") as client:
        yield client


@asynccontextmanager
async def running(host: EpisodeHost):
    """serve_http on a free port, stopped on exit; yields the base URL."""
    stop, urls = asyncio.Event(), []
    server = asyncio.create_task(serve_http(host, port=0, announce=urls.append, stop=stop))
    while not urls:
        if server.done():
            server.result()
        await asyncio.sleep(0.01)
    try:
        yield urls[0]
    finally:
        stop.set()
        await asyncio.wait_for(server, 20)


@contextmanager
def in_thread(host: EpisodeHost) -> Iterator[str]:
    """serve_http on a free port in a thread of its own (for commands that run their own event loop, as the CLI
    does); yields the base URL once the socket is bound."""
    ready, box = threading.Event(), {}

    def main() -> None:
        async def go() -> None:
            box["stop"], box["loop"] = asyncio.Event(), asyncio.get_running_loop()

            def bound(url: str) -> None:
                box["url"] = url
                ready.set()

            await serve_http(host, port=0, announce=bound, stop=box["stop"])

        try:
            asyncio.run(go())
        except BaseException as exc:  # surfaced to the test below
            box["error"] = exc
        finally:
            ready.set()

    thread = threading.Thread(target=main, daemon=True)
    thread.start()
    assert ready.wait(120), "the server did not start"
    if "error" in box:
        raise box["error"]
    try:
        yield box["url"]
    finally:
        box["loop"].call_soon_threadsafe(box["stop"].set)
        thread.join(30)


def target_of(host: EpisodeHost):
    """A `connect()` for run_parity: each task on its own in-process session of `host`."""

    @asynccontextmanager
    async def connect():
        async with inproc(host) as client:
            yield await McpTarget.of(client, "our serve (in process)")

    return connect


def surface_server(surface: Surface) -> Any:
    """A server that lists exactly `surface` (its tools, prompts and resources) and answers nothing else: a
    served variant of a pin."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[types.Tool(name=t.name, input_schema=t.input_schema) for t in surface.tools]
        )

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=p.name,
                    arguments=[types.PromptArgument(name=a.name, required=a.required) for a in p.arguments],
                )
                for p in surface.prompts
            ]
        )

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=r.uri, name=r.name or r.uri, description=r.description, mime_type=r.mime_type
                )
                for r in surface.resources
            ]
        )

    version = surface.server.version if surface.server else ""
    return Server(
        surface.server.name if surface.server else "variant",
        version=version,
        on_list_tools=list_tools,
        on_list_prompts=list_prompts,
        on_list_resources=list_resources,
    )


# --- deliberately divergent workspaces --------------------------------------------------------------------------
# The tool methods are registered on Workspace itself, so a divergence is made around `call`.


def _placed(ws: Workspace, envelope: Any) -> Any:
    uuid = envelope.data["widget"]["widget_uuid"]
    for dash in ws.dashboards.values():
        for widget in dash.widgets:
            if widget.uuid == uuid:
                return dash, widget
    raise AssertionError(uuid)


class KeepsUndeclared(Workspace):
    """create_widget keeps parameters the widget does not declare."""

    def call(self, tool_name: str, args: Any = None) -> Any:
        envelope = super().call(tool_name, args)
        if tool_name == "create_widget" and envelope.ok and isinstance(args, dict):
            _, widget = _placed(self, envelope)
            widget.data_args.update(args.get("data_args") or {})
            envelope.data = {"widget": widget.to_dict()}
        return envelope


class NoCompaction(Workspace):
    """update_widget_layout leaves a widget exactly where it was asked to go (no floating up)."""

    def call(self, tool_name: str, args: Any = None) -> Any:
        envelope = super().call(tool_name, args)
        if tool_name == "update_widget_layout" and envelope.ok and isinstance(args, dict):
            _, widget = _placed(self, envelope)
            widget.x, widget.y = float(args["x"]), float(args["y"])
            envelope.data = {"widget": widget.to_dict()}
        return envelope


class UpdatesWithoutId(Workspace):
    """manage_dashboard update without a dashboard_id renames the open dashboard instead of refusing."""

    def call(self, tool_name: str, args: Any = None) -> Any:
        if (
            tool_name == "manage_dashboard"
            and isinstance(args, dict)
            and args.get("operation") == "update"
            and not args.get("dashboard_id")
            and args.get("name")
        ):
            args = {**args, "dashboard_id": self.current}
        return super().call(tool_name, args)


class LateWrites(Workspace):
    """A write is acknowledged at once and lands only after the next snapshot has been read (as the product's
    browser bridge delivers it): reads right after a write are stale."""

    def __init__(self, world: Any) -> None:
        super().__init__(world)
        self.pending: list[tuple[str, Any]] = []
        self.snapshots_since: int = 0

    def call(self, tool_name: str, args: Any = None) -> Any:
        from simulator import Envelope, reads_only

        if tool_name == "get_workspace_snapshot":
            stale = super().call(tool_name, args)
            for queued in self.pending:
                super().call(*queued)
            self.pending = []
            return stale
        if not reads_only(tool_name, args):
            self.pending.append((tool_name, json.loads(json.dumps(args))))
            return Envelope.success(tool_name, {"accepted": True}, None, "accepted; applied shortly")
        return super().call(tool_name, args)
