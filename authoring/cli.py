"""The `taskforge` command line: one sub-app per noun, heavy imports inside the commands."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from . import render

app = typer.Typer(
    help="Author and certify benchmark tasks for agents operating a financial workspace.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
world_app = typer.Typer(
    help="Inspect and check worlds (backends, baselines, skills, resources).", no_args_is_help=True
)
app.add_typer(world_app, name="world")


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"taskforge {version('taskforge')}")
        except PackageNotFoundError:
            typer.echo("taskforge (not installed: run make install)")
        raise typer.Exit()


def _register_commands() -> None:
    from .commands import author, calibrate, evaluate, recertify, report, review, serve, sources, world

    world.register(world_app)
    sources.register(app)
    report.register(app)
    author.register(app)
    evaluate.register(app)
    calibrate.register(app)
    review.register(app)
    recertify.register(app)
    serve.register(app)
    from .commands import export, openenv  # issue 25: Harbor, rollouts and OpenEnv

    export.register(app)
    openenv.register(app)


console = render.console()
err_console = render.console(stderr=True)

WorldOption = Annotated[
    Path | None, typer.Option("--world", help="World directory (default: the built-in default world).")
]


def _load_world(path: Path | None):
    from simulator import DEFAULT_WORLD, World, WorldError

    try:
        return World.load(path or DEFAULT_WORLD)
    except WorldError as exc:
        render.error(err_console, f"cannot load world {path or DEFAULT_WORLD}: {exc}")
        raise typer.Exit(2) from exc


@world_app.command("list")
def world_list(
    world: WorldOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Backends (origin, apps, widgets, widget types), skills, initial states."""
    w = _load_world(world)
    backends = []
    for slug, fixture in w.backends.items():
        types = sorted({d.type for d in fixture.catalog.widgets.values()})
        backends.append(
            {
                "slug": slug,
                "origin": fixture.origin,
                "apps": len(fixture.catalog.apps),
                "widgets": len(fixture.catalog.widgets),
                "widget_types": types,
            }
        )
    report = {
        "world": str(w.path),
        "backends": backends,
        "skills": sorted(w.skills),
        "initial_states": sorted(w.baselines),
        "resources": len(w.resources),
        "prompts": len(w.prompts),
    }
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return
    render.say(console, f"World {w.name} ({w.path})", style="bold")
    table = render.table()
    table.add_column("backend", no_wrap=True)
    table.add_column("origin")
    table.add_column("apps", justify="right", no_wrap=True)
    table.add_column("widgets", justify="right", no_wrap=True)
    for b in backends:
        table.add_row(render.text(b["slug"]), render.text(b["origin"]), str(b["apps"]), str(b["widgets"]))
    console.print(table)
    for b in backends:
        render.say(console, ", ".join(b["widget_types"]), prefix=f"widget types of {b['slug']}: ", indent=2)
    render.say(console, ", ".join(sorted(w.skills)), prefix=f"skills ({len(w.skills)}): ", indent=2)
    render.say(
        console, f'{", ".join(sorted(w.baselines))} (and "" for a bare workspace)', prefix="initial states: "
    )
    console.print(f"resources: {len(w.resources)}  prompts: {len(w.prompts)}")


@world_app.command("check")
def world_check(
    world: WorldOption = None,
    strict: Annotated[bool, typer.Option("--strict", help="Fail on warnings too.")] = False,
) -> None:
    """Integrity: layout references, defaults within options, seeded widgets, grid, unique planted values."""
    from simulator.worldcheck import check_world

    w = _load_world(world)
    problems = check_world(w)
    errors = [p for p in problems if p.severity == "error"]
    for p in problems:
        render.say(err_console if p.severity == "error" else console, str(p), indent=2)
    failing = errors or (strict and problems)
    if failing:
        render.say(
            err_console,
            f"{len(errors)} error(s), {len(problems) - len(errors)} warning(s) in {w.path}",
            style="red",
        )
        raise typer.Exit(1)
    render.say(
        console,
        f"{w.path}: {len(w.backends)} backends, "
        f"{sum(len(b.catalog.widgets) for b in w.backends.values())} widgets, {len(w.baselines)} "
        f"baselines, {len(w.skills)} skills; {len(problems)} warning(s)",
        prefix="ok ",
        prefix_style="green",
    )


@app.callback()
def _root(
    debug: Annotated[
        bool, typer.Option("--debug", help="Show the traceback of an unexpected error.")
    ] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Author and certify benchmark tasks for agents operating a financial workspace."""


_register_commands()


def one_line(exc: BaseException) -> str:
    """An unexpected error as one line a person can act on."""
    import sqlite3

    if isinstance(exc, PermissionError):
        return f"permission denied: {exc.filename or exc}"
    if isinstance(exc, OSError) and exc.filename:
        return f"{exc.strerror or exc}: {exc.filename}"
    if isinstance(exc, sqlite3.DatabaseError):
        return f"the checkpoint store is unreadable ({exc}); move .taskforge/checkpoints.sqlite away to start afresh"
    if isinstance(exc, RecursionError):
        return "the input is nested too deeply to read"
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def main(argv: list[str] | None = None) -> None:
    """The console entry point: any error ends as one line and exit status 2; `--debug` shows the traceback."""
    args = sys.argv[1:] if argv is None else argv
    try:
        app(args=args, prog_name="taskforge")
    except KeyboardInterrupt:
        err_console.print("interrupted", markup=False)
        sys.exit(130)
    except Exception as exc:
        if "--debug" in args:
            raise
        err_console.print(
            f"error: {one_line(exc)} (taskforge --debug … shows the traceback)", markup=False, soft_wrap=True
        )
        sys.exit(2)


@app.command("certify")
def certify_cmd(
    paths: Annotated[list[Path], typer.Argument(help="Task files or taskset folders.", show_default=False)],
    world: WorldOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Run every certification gate on tasks; exit 0 iff every task is certified."""
    from certify.gates import certify_file, collect, summarise
    from certify.task import TaskFileError

    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        render.error(err_console, f"no such file or folder: {', '.join(missing)}")
        raise typer.Exit(2)
    try:
        targets = collect(paths)
    except TaskFileError as exc:
        render.error(err_console, str(exc))
        raise typer.Exit(2) from exc
    declared = {ts.manifest.world for _, ts in targets if ts is not None and ts.manifest.world}
    if world is None and len(declared) == 1:
        world = Path(declared.pop())
    w = _load_world(world)
    if not targets:
        render.error(err_console, "no task files found")
        raise typer.Exit(2)
    results = [certify_file(w, path, taskset) for path, taskset in targets]
    summary = summarise(results)
    if as_json:
        sys.stdout.write(
            json.dumps({"tasks": [r.to_dict() for r in results], "summary": summary}, indent=2) + "\n"
        )
    else:
        render.gate_table(
            console,
            f"Certification ({summary['certified']}/{summary['total']} certified)",
            [(r.id, r.gates) for r in results],
        )
    raise typer.Exit(0 if summary["certified"] == summary["total"] else 1)
