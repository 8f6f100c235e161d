"""`taskforge eval`: run an agent over a taskset and report pass rates per level.

Usage errors (unknown agent, missing taskset, a model with no endpoint, an option the agent cannot use) exit 2
before any episode starts. The run itself never fails on the agent's results; it exits 1 only when no trial
was valid (nothing was measured) and 130 when interrupted, keeping the finished trials on disk.
"""

from __future__ import annotations

import json
import sys
from enum import Enum, StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer


class Mode(StrEnum):
    json = "json"
    tools = "tools"


class ParseMode(StrEnum):
    strict = "strict"
    lenient = "lenient"


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _render(report: dict[str, Any], *, title: str, reasons: dict[str, int], run_dir: Path,
            notes: list[str]) -> None:
    from rich.console import Console
    from rich.table import Table

    from certify.task import LEVEL_NAMES

    console = Console()
    table = Table(title=title)
    for col, justify in (("level", "left"), ("", "left"), ("attempts", "right"), ("passes", "right"),
                         ("pass rate", "right"), ("Wilson 95% CI", "right")):
        table.add_column(col, justify=justify)
    for row in report["levels"]:
        rate = "-" if row["rate"] is None else f"{row['rate']:.0%}"
        lo, hi = row["ci"]
        table.add_row(row["level"], LEVEL_NAMES.get(row["level"], ""), str(row["attempts"]), str(row["passes"]),
                      rate, f"[{lo:.0%}, {hi:.0%}]" if row["attempts"] else "-")
    console.print(table)
    if report["failure_codes"]:
        codes = Table(title="Failure codes (failed valid trials)")
        codes.add_column("code")
        codes.add_column("trials", justify="right")
        for code, count in report["failure_codes"].items():
            codes.add_row(code, str(count))
        console.print(codes)
    dists = Table(title="Per trial (valid trials)")
    for col in ("", "min", "median", "p90", "max", "mean"):
        dists.add_column(col, justify="right" if col else "left")
    for key, label in (("turns", "turns"), ("tool_calls", "tool calls")):
        d = report[key]
        dists.add_row(label, *(_fmt(d[k]) for k in ("min", "median", "p90", "max", "mean")))
    console.print(dists)
    parse = report["parse"]
    if any(parse.values()):
        console.print(f"parses: strict {parse['strict']}  lenient {parse['lenient']}  failed {parse['failed']}")
    console.print(f"tokens: in {report['tokens']['in']}  out {report['tokens']['out']}  cost ${report['cost']:.4f}")
    why = ", ".join(f"{reason} {count}" for reason, count in sorted(reasons.items()))
    style = "yellow" if report["invalid"] else "green"
    console.print(f"[{style}]invalid trials: {report['invalid']}[/{style}]" + (f" ({why})" if why else "")
                  + f" of {report['trials']}")
    for note in notes:
        console.print(f"[yellow]note:[/yellow] {note}", markup=True)
    console.print(f"run folder: {run_dir}")


def eval_cmd(
    taskset: Annotated[Path, typer.Option("--taskset", help="Taskset folder (holds taskset.json).",
                                          show_default=False)],
    agent: Annotated[str, typer.Option("--agent", help="oracle, noop, heuristic or openai:<model>.",
                                       show_default=False)],
    persona: Annotated[str | None, typer.Option("--persona", help="Only this persona's tasks.")] = None,
    repeats: Annotated[int, typer.Option("--repeats", min=1, help="Attempts per task.")] = 1,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Episodes at once.")] = 4,
    world: Annotated[Path | None, typer.Option(
        "--world", help="World directory (default: the built-in default world; tasks certified against another "
                        "world need it).")] = None,
    mode: Annotated[Mode | None, typer.Option(
        "--mode", help="openai: json (one JSON action per reply; the default) or tools (native tool calls).")
    ] = None,
    parse: Annotated[ParseMode | None, typer.Option(
        "--parse", help="openai: strict (a reply must be exactly the JSON action) or lenient (prose or code "
                        "fences around it are tolerated; the default).")] = None,
    base_url: Annotated[str | None, typer.Option(
        "--base-url", help="openai: an OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (default: "
                           "$OPENAI_BASE_URL, else api.openai.com).")] = None,
    timeout: Annotated[float | None, typer.Option(
        "--timeout", min=0.001, help="openai: seconds per model request before it is retried (default 60).")
    ] = None,
    trial_timeout: Annotated[float | None, typer.Option(
        "--trial-timeout", min=0.001, help="Seconds per episode; a slower one is an invalid trial.")] = None,
    runs_dir: Annotated[Path | None, typer.Option(
        "--runs-dir", help="Where run folders go (default .taskforge/runs).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print only the report object on stdout.")] = False,
) -> None:
    """Run an agent over a taskset: pass rate per level with Wilson 95% intervals, failure codes, turns, tool
    calls, tokens and cost; every trial is stored under --runs-dir."""
    import asyncio

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from authoring.cli import _load_world
    from certify.evaluate import DEFAULT_RUNS_DIR, build_agent, evaluate, invalid_reasons, select_tasks
    from certify.task import TaskFileError, TaskSet
    from simulator import DEFAULT_WORLD

    err = Console(stderr=True)

    def usage_error(message: str) -> typer.Exit:
        err.print(f"[red]error:[/red] {message}", highlight=False)
        return typer.Exit(2)

    if not (taskset / "taskset.json").is_file():
        what = "no such folder" if not taskset.is_dir() else "no taskset.json in it"
        raise usage_error(f"--taskset {taskset}: {what}")
    llm: dict[str, Any] = {}
    for key, value in (("mode", mode), ("parse", parse), ("base_url", base_url), ("request_timeout_s", timeout)):
        if value is not None:
            llm[key] = value.value if isinstance(value, Enum) else value
    if llm and not agent.startswith("openai:"):
        flags = {"mode": "--mode", "parse": "--parse", "base_url": "--base-url", "request_timeout_s": "--timeout"}
        raise usage_error(f"{', '.join(flags[k] for k in llm)} only apply to openai:<model> agents, not '{agent}'")
    try:
        chosen = build_agent(agent, llm)
    except (ValueError, ImportError) as exc:
        raise usage_error(str(exc)) from exc
    try:
        tasks = select_tasks(taskset, persona)
    except TaskFileError as exc:
        raise usage_error(str(exc)) from exc
    if not tasks:
        raise usage_error(f"--taskset {taskset}: no task files found")
    loaded = TaskSet.load(taskset)
    w = _load_world(world or (Path(loaded.manifest.world) if loaded.manifest.world else None))
    label = loaded.manifest.taskset_id
    runs_dir = runs_dir or DEFAULT_RUNS_DIR
    notes = list(getattr(chosen, "notes", []))
    options = {"persona": persona, "world": str(world or DEFAULT_WORLD)}
    config = getattr(chosen, "config", None)
    if config is not None and hasattr(config, "public"):
        options["llm"] = config.public()

    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[status]}"), TimeElapsedColumn(), console=err, transient=False) as bar:
        job = bar.add_task(f"eval {chosen.name}", total=len(tasks) * repeats, status="")
        tally = {"passed": 0, "invalid": 0}

        def progress(trial, done: int, total: int) -> None:
            tally["passed"] += bool(trial.valid and trial.passed)
            tally["invalid"] += not trial.valid
            bar.update(job, completed=done, status=f"passed {tally['passed']}  invalid {tally['invalid']}")

        async def go():
            try:
                return await evaluate(w, tasks, chosen, repeats=repeats, concurrency=concurrency,
                                      timeout_s=trial_timeout, runs_dir=runs_dir, taskset=label,
                                      world_label=str(world or DEFAULT_WORLD), options=options, notes=notes,
                                      progress=progress)
            finally:
                close = getattr(chosen, "aclose", None)
                if close is not None:
                    await close()

        try:
            run = asyncio.run(go())
        except KeyboardInterrupt:
            bar.stop()
            err.print(f"[yellow]interrupted[/yellow]: finished trials are kept in {runs_dir}")
            raise typer.Exit(130) from None

    if as_json:
        sys.stdout.write(json.dumps(run.report, indent=2) + "\n")
    else:
        title = f"{chosen.name} on {label}" + (f" / {persona}" if persona else "") + \
                f": {len(tasks)} task(s) x {repeats}"
        _render(run.report, title=title, reasons=invalid_reasons(run.trials), run_dir=run.run_dir, notes=notes)
    if run.report["trials"] and run.report["invalid"] == run.report["trials"]:
        why = ", ".join(f"{reason} {count}" for reason, count in sorted(invalid_reasons(run.trials).items()))
        err.print(f"[red]no valid trial[/red] ({why}): nothing about the agent was measured; the trials and "
                  f"their errors are in {run.run_dir}", highlight=False)
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_cmd)
