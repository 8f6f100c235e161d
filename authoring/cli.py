"""The `taskforge` command line: one sub-app per noun, heavy imports inside the commands."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(help="Author and certify benchmark tasks for agents operating a financial workspace.",
                  no_args_is_help=True, add_completion=False)
world_app = typer.Typer(help="Inspect and check worlds (backends, baselines, skills, resources).",
                        no_args_is_help=True)
app.add_typer(world_app, name="world")


def _register_commands() -> None:
    from .commands import author, calibrate, evaluate, recertify, review, serve

    author.register(app)
    evaluate.register(app)
    calibrate.register(app)
    review.register(app)
    recertify.register(app)
    serve.register(app)

console = Console()
err_console = Console(stderr=True)

WorldOption = Annotated[
    Path | None, typer.Option("--world", help="World directory (default: the built-in default world).")
]


def _load_world(path: Path | None):
    from simulator import DEFAULT_WORLD, World, WorldError

    try:
        return World.load(path or DEFAULT_WORLD)
    except WorldError as exc:
        err_console.print(f"[red]error:[/red] cannot load world {path or DEFAULT_WORLD}: {exc}")
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
        backends.append({"slug": slug, "origin": fixture.origin, "apps": len(fixture.catalog.apps),
                         "widgets": len(fixture.catalog.widgets), "widget_types": types})
    report = {"world": str(w.path), "backends": backends, "skills": sorted(w.skills),
              "initial_states": sorted(w.baselines), "resources": len(w.resources), "prompts": len(w.prompts)}
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return
    table = Table(title=f"World {w.name} ({w.path})")
    for col in ("backend", "origin", "apps", "widgets", "widget types"):
        table.add_column(col)
    for b in backends:
        table.add_row(b["slug"], b["origin"], str(b["apps"]), str(b["widgets"]), ", ".join(b["widget_types"]))
    console.print(table)
    console.print(f"skills ({len(w.skills)}): {', '.join(sorted(w.skills))}")
    console.print(f"initial states: {', '.join(sorted(w.baselines))} (and \"\" for a bare workspace)")
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
        (err_console if p.severity == "error" else console).print(str(p), markup=False, highlight=False,
                                                                  soft_wrap=True)
    failing = errors or (strict and problems)
    if failing:
        err_console.print(f"[red]{len(errors)} error(s), {len(problems) - len(errors)} warning(s)[/red] in {w.path}")
        raise typer.Exit(1)
    console.print(f"[green]ok[/green] {w.path}: {len(w.backends)} backends, "
                  f"{sum(len(b.catalog.widgets) for b in w.backends.values())} widgets, {len(w.baselines)} "
                  f"baselines, {len(w.skills)} skills; {len(problems)} warning(s)")


_register_commands()


def main() -> None:  # pragma: no cover - console entry point
    app()


@app.command("certify")
def certify_cmd(
    paths: Annotated[list[Path], typer.Argument(help="Task files or taskset folders.", show_default=False)],
    world: WorldOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Run every certification gate on tasks; exit 0 iff every task is certified."""
    from certify.gates import GATE_NAMES, certify_file, collect, summarise
    from certify.task import TaskFileError

    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        err_console.print(f"[red]error:[/red] no such file or folder: {', '.join(missing)}")
        raise typer.Exit(2)
    try:
        targets = collect(paths)
    except TaskFileError as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    declared = {ts.manifest.world for _, ts in targets if ts is not None and ts.manifest.world}
    if world is None and len(declared) == 1:
        world = Path(declared.pop())
    w = _load_world(world)
    if not targets:
        err_console.print("[red]error:[/red] no task files found")
        raise typer.Exit(2)
    results = [certify_file(w, path, taskset) for path, taskset in targets]
    summary = summarise(results)
    if as_json:
        sys.stdout.write(json.dumps({"tasks": [r.to_dict() for r in results], "summary": summary}, indent=2) + "\n")
    else:
        table = Table(title=f"Certification ({summary['certified']}/{summary['total']} certified)")
        table.add_column("task")
        for name in GATE_NAMES:
            table.add_column(name)
        table.add_column("why not")
        for r in results:
            marks = ["[green]ok[/green]" if r.gates[n].ok else "[red]FAIL[/red]" for n in GATE_NAMES]
            reasons = "; ".join(f"{n}: {r.gates[n].detail}" for n in GATE_NAMES if not r.gates[n].ok)
            table.add_row(r.id, *marks, reasons)
        console.print(table)
    raise typer.Exit(0 if summary["certified"] == summary["total"] else 1)
