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
from pathlib import Path
from typing import Annotated

import typer

from authoring import render

from .common import console, err, usage_errors
from .options import Json, WorldDir

surface_app = typer.Typer(
    help="The MCP surface of a workspace server against a pinned file.", no_args_is_help=True
)


def endpoint_of(ctx: typer.Context, url: str | None, headers: list[str] | None, command: str | None):
    """The server to connect to from --url/--header or --command (and what follows `--` on the line)."""
    from certify import Endpoint, parse_header

    headers = headers or []
    argv = [*(shlex.split(command) if command else []), *ctx.args]
    if (url is None) == (not argv):
        raise ValueError("give --url URL or --command CMD (one of them)")
    if headers and url is None:
        raise ValueError("--header goes with --url")
    parsed = dict(parse_header(h) for h in headers)
    return Endpoint(url=url, headers=parsed) if url is not None else Endpoint(command=argv)


UrlOption = Annotated[str | None, typer.Option("--url", help="The server's Streamable HTTP URL.")]
HeaderOption = Annotated[
    list[str] | None, typer.Option("--header", help="An HTTP header K:V for --url (repeatable).")
]
CommandOption = Annotated[
    str | None,
    typer.Option("--command", help="A command that serves MCP over stdio (quoted; or give it after --)."),
]


@surface_app.command("diff", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def diff_cmd(
    ctx: typer.Context,
    url: UrlOption = None,
    header: HeaderOption = None,
    command: CommandOption = None,
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
        endpoint = endpoint_of(ctx, url, header, command)
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
