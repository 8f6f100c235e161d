"""`taskforge surface diff`: what a live workspace server lists, against a pinned surface file; `taskforge
surface generate`: the surface `taskforge serve` lists, as a pin (see certify/surface.py).

`diff` connects with the official MCP client (a URL with headers, or a command launched over stdio), lists
tools, prompts and resources (it calls no tool) and classifies each difference from the pin. Exit 0 no drift
(extras and compatible changes are reported), 1 drift, 2 cannot connect or bad input. `--update` writes the
observed surface as the new pin (the pin's kinds kept for the tools it knows) and exits 0.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from authoring import render

from .common import console, err, usage_errors
from .options import Json, WorldDir, grouped

if TYPE_CHECKING:
    from certify import Endpoint

surface_app = typer.Typer(
    help="The MCP surface of a workspace server against a pinned file.", no_args_is_help=True
)


UrlOption = Annotated[str | None, typer.Option("--url", help="The server's Streamable HTTP URL.")]
HeaderOption = Annotated[
    list[str] | None, typer.Option("--header", help="An HTTP header K:V for --url (repeatable).")
]
CommandOption = Annotated[
    str | None,
    typer.Option("--command", help="A command that serves MCP over stdio (quoted; or give it after --)."),
]


@dataclass(frozen=True)
class ServerFlags:
    """How to reach the workspace server a command talks to (`surface diff`, `parity`): a URL with headers, or a
    command launched over stdio (its arguments may follow `--`). A group of options (see .options.grouped)."""

    url: UrlOption = None
    header: HeaderOption = None
    command: CommandOption = None

    def endpoint(self, ctx: typer.Context) -> Endpoint:
        """The server to connect to; `ctx.args` is what followed `--` on the command line."""
        from certify import Endpoint, parse_header

        argv = [*(shlex.split(self.command) if self.command else []), *ctx.args]
        if (self.url is None) == (not argv):
            raise ValueError("give --url URL or --command CMD (one of them)")
        if self.header and self.url is None:
            raise ValueError("--header goes with --url")
        parsed = dict(parse_header(h) for h in self.header or [])
        return Endpoint(url=self.url, headers=parsed) if self.url is not None else Endpoint(command=argv)


@surface_app.command("diff", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
@grouped
def diff_cmd(
    ctx: typer.Context,
    server: ServerFlags = ServerFlags(),
    against: Annotated[
        str, typer.Option("--against", help="The pin: product, simulator (shipped) or a surface file.")
    ] = "product",
    update: Annotated[
        bool, typer.Option("--update", help="Write the observed surface as the new pin.")
    ] = False,
    source: Annotated[
        str | None,
        typer.Option("--source", help="--update: the source the new pin records (e.g. hosted@3.5.0)."),
    ] = None,
    as_json: Json = False,
) -> None:
    """List a server's tools, prompts and resources (no tool is called) and compare them with a pin."""
    from certify import (
        ConnectError,
        SurfaceFileError,
        connect,
        diff_surfaces,
        load_surface,
        next_source,
        observe,
        pin_path,
    )

    with usage_errors(ValueError, SurfaceFileError):
        endpoint = server.endpoint(ctx)
        pinned = load_surface(against)

    async def look():
        async with connect(endpoint) as client:
            return await observe(client)

    with usage_errors(ConnectError):
        observed = asyncio.run(look())
    result = diff_surfaces(pinned, observed)
    if as_json:
        sys.stdout.write(json.dumps(result.to_dict(), indent=2) + "\n")
    else:
        render.say(
            console, f"{endpoint.label()} ({observed.source}) against {pin_path(against)} ({pinned.source})"
        )
        render.say(
            console,
            f"{len(observed.tools)} tools, {len(observed.prompts)} prompts, {len(observed.resources)} resources",
            indent=2,
        )
        for severity, title, style in (
            ("breaking", "breaking (drift)", "red"),
            ("compatible", "compatible", "yellow"),
            ("extra", "extra (reported)", ""),
        ):
            found = result.of(severity)  # type: ignore[arg-type]
            if found:
                console.print(f"{title}: {len(found)}", style=style or None, highlight=False)
                for d in found:
                    render.say(console, d.line(), prefix="  - ", indent=4)
        verdict = "drift" if result.drift else "no drift"
        render.say(
            console,
            f"{verdict}: {len(result.of('breaking'))} breaking, {len(result.of('compatible'))} compatible, {len(result.of('extra'))} extra",
        )
    if update:
        for tool in observed.tools:
            known = pinned.tool(tool.name)
            if known is not None:
                tool.kind, tool.read_operations = known.kind, list(known.read_operations)
        observed.source = source or next_source(pinned, observed)
        observed.notes = [f"Observed with `taskforge surface diff --update` from {endpoint.label()}."]
        from certify import save_surface

        written = save_surface(observed, against)
        render.say(err, f"wrote the observed surface as the new pin: {written} ({observed.source})")
        raise typer.Exit(0)
    raise typer.Exit(1 if result.drift else 0)


@surface_app.command("generate")
def generate_cmd(
    shape: Annotated[
        str,
        typer.Option("--shape", help="simulator (what serve lists) or product (serve --surface product)."),
    ] = "simulator",
    world: WorldDir = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write the pin here (default: print it).")] = None,
) -> None:
    """The surface `taskforge serve` lists for a task allowing every tool, as a pin (the shipped simulator pin
    is `--out certify/surfaces/simulator.json`)."""
    from certify import MODES, save_surface, simulator_surface
    from simulator import DEFAULT_WORLD, World, WorldError

    err = render.console(stderr=True)
    if shape not in MODES:
        render.error(err, f"--shape {shape}: one of {', '.join(MODES)}")
        raise typer.Exit(2)
    try:
        w = World.load(world or DEFAULT_WORLD) if shape == "product" else None
    except WorldError as exc:
        render.error(err, str(exc))
        raise typer.Exit(2) from None
    surface = simulator_surface(w, shape)
    if out is None:
        sys.stdout.write(surface.to_json())
        return
    render.say(err, f"wrote {save_surface(surface, out)}")
