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


MARKS = {"pass": "✓", "fail": "✗", "invalid": "!"}


def _render(
    report: dict[str, Any], *, title: str, reasons: dict[str, int], run_dir: Path, notes: list[str]
) -> None:
    from authoring import render
    from certify.task import LEVEL_NAMES

    console = render.console()
    render.say(console, title, style="bold")
    table = render.table()
    for col, justify in (
        ("level", "left"),
        ("", "left"),
        ("attempts", "right"),
        ("passes", "right"),
        ("pass rate", "right"),
        ("Wilson 95% CI", "right"),
    ):
        table.add_column(col, justify=justify, no_wrap=True)
    for row in report["levels"]:
        rate = "-" if row["rate"] is None else f"{row['rate']:.0%}"
        lo, hi = row["ci"]
        table.add_row(
            render.text(row["level"]),
            LEVEL_NAMES.get(row["level"], ""),
            str(row["attempts"]),
            str(row["passes"]),
            rate,
            render.text(f"[{lo:.0%}, {hi:.0%}]" if row["attempts"] else "-"),
        )
    console.print(table)
    _render_tasks(console, report)
    if report["failure_codes"]:
        render.say(console, "Failure codes (failed valid trials)", style="bold")
        codes = render.table()
        codes.add_column("code", no_wrap=True)
        codes.add_column("trials", justify="right")
        for code, count in report["failure_codes"].items():
            codes.add_row(render.text(code), str(count))
        console.print(codes)
    render.say(console, "Per trial (valid trials)", style="bold")
    dists = render.table()
    for col in ("", "min", "median", "p90", "max", "mean"):
        dists.add_column(col, justify="right" if col else "left")
    for key, label in (("turns", "turns"), ("tool_calls", "tool calls")):
        d = report[key]
        dists.add_row(label, *(_fmt(d[k]) for k in ("min", "median", "p90", "max", "mean")))
    console.print(dists)
    parse = report["parse"]
    if any(parse.values()):
        console.print(
            f"parses: strict {parse['strict']}  lenient {parse['lenient']}  failed {parse['failed']}"
        )
    console.print(
        f"tokens: in {report['tokens']['in']}  out {report['tokens']['out']}  cost ${report['cost']:.4f}"
    )
    if report.get("judge"):
        from certify.judge import JudgeSummary

        render.say(console, JudgeSummary.model_validate(report["judge"]).line())
    why = ", ".join(f"{reason} {count}" for reason, count in sorted(reasons.items()))
    render.say(
        console,
        f"invalid trials: {report['invalid']}" + (f" ({why})" if why else "") + f" of {report['trials']}",
        style="yellow" if report["invalid"] else "green",
    )
    for note in notes:
        render.say(console, note, prefix="note: ", prefix_style="yellow")
    render.say(console, str(run_dir), prefix="run folder: ")


def _render_tasks(console: Any, report: dict[str, Any]) -> None:
    """One row per task (its id in full, one mark per repeat), then pass^k and consistency across repeats."""
    from authoring import render

    rows = report.get("tasks") or []
    if not rows:
        return
    table = render.table()
    table.add_column("task", no_wrap=True)
    table.add_column("level", no_wrap=True)
    table.add_column("repeats", no_wrap=True)
    table.add_column("passed", justify="right", no_wrap=True)
    for r in rows:
        marks = render.text(" ".join(MARKS[x] for x in r["results"]))
        table.add_row(
            render.text(r["task_id"]), render.text(r["level"]), marks, f"{r['passes']}/{r['trials']}"
        )
    if render.fits(console, table):
        console.print(table)
    else:
        for r in rows:
            render.say(
                console,
                f"{r['level']}  {' '.join(MARKS[x] for x in r['results'])}  {r['passes']}/{r['trials']}",
                prefix=f"{r['task_id']}  ",
                indent=2,
            )
    render.say(
        console,
        f"{MARKS['pass']} passed, {MARKS['fail']} failed, {MARKS['invalid']} invalid (not counted); "
        "passed = passes / valid trials",
        style="dim",
    )
    pass_k = report.get("pass_k") or {}
    if pass_k:
        render.say(
            console,
            "  ".join(f"k={k} {v['value']:.2f}" for k, v in pass_k.items())
            + " (chance that k attempts at a task all pass, averaged over tasks)",
            prefix="pass^k: ",
        )
    consistency = report.get("consistency") or {}
    if consistency.get("tasks"):
        render.say(
            console,
            f"{consistency['agree']}/{consistency['tasks']} tasks gave the same verdict on every "
            f"valid repeat ({consistency['value']:.0%})",
            prefix="consistency: ",
        )


def eval_cmd(
    taskset: Annotated[
        Path | None,
        typer.Option(
            "--taskset",
            help="Taskset folder (holds taskset.json); with --retry, the run's own taskset by default.",
            show_default=False,
        ),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            help="oracle, noop, heuristic or openai:<model>; with --retry, the run's own agent.",
            show_default=False,
        ),
    ] = None,
    persona: Annotated[str | None, typer.Option("--persona", help="Only this persona's tasks.")] = None,
    task: Annotated[list[str] | None, typer.Option("--task", help="Only this task id (repeatable).")] = None,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit", min=1, help="At most this many tasks (after the other filters, in taskset order)."
        ),
    ] = None,
    repeats: Annotated[int, typer.Option("--repeats", min=1, help="Attempts per task.")] = 1,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Episodes at once.")] = 4,
    world: Annotated[
        Path | None,
        typer.Option(
            "--world",
            help="World directory (default: the built-in default world; tasks certified against another "
            "world need it).",
        ),
    ] = None,
    mode: Annotated[
        Mode | None,
        typer.Option(
            "--mode",
            help="openai: json (one JSON action per reply; the default) or tools (native tool calls).",
        ),
    ] = None,
    parse: Annotated[
        ParseMode | None,
        typer.Option(
            "--parse",
            help="openai: strict (a reply must be exactly the JSON action) or lenient (prose or code "
            "fences around it are tolerated; the default).",
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            help="openai: an OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (default: "
            "$OPENAI_BASE_URL, else api.openai.com).",
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            min=0.001,
            help="openai: seconds per model request before it is retried (default 60).",
        ),
    ] = None,
    trial_timeout: Annotated[
        float | None,
        typer.Option(
            "--trial-timeout", min=0.001, help="Seconds per episode; a slower one is an invalid trial."
        ),
    ] = None,
    runs_dir: Annotated[
        Path | None, typer.Option("--runs-dir", help="Where run folders go (default .taskforge/runs).")
    ] = None,
    retry: Annotated[
        str | None,
        typer.Option(
            "--retry",
            help="A run folder (or its id under --runs-dir): re-run its invalid or unfinished trials only, "
            "appending to it.",
        ),
    ] = None,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            help="Judge of judged answers: rubric (the embedded deterministic default) or openai:<model>; "
            "default: the taskset's `judge`, else rubric. Its calls and cost are reported apart.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print only the report object on stdout.")] = False,
) -> None:
    """Run an agent over a taskset and report pass rates per level and per task.

    Pass rate per level with Wilson 95% intervals, per-task results, pass^k and consistency across repeats,
    failure codes, turns, tool calls, tokens and cost; every trial is stored under --runs-dir."""
    import asyncio

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from authoring import render
    from authoring.cli import _load_world
    from certify.evaluate import (
        DEFAULT_RUNS_DIR,
        build_agent,
        choose_tasks,
        current,
        evaluate,
        invalid_reasons,
        load_record,
        retry_invalid,
        select_tasks,
    )
    from certify.task import TaskFileError, TaskSet
    from simulator import DEFAULT_WORLD

    err = render.console(stderr=True)

    def usage_error(message: str) -> typer.Exit:
        render.error(err, message)
        return typer.Exit(2)

    runs_dir = runs_dir or DEFAULT_RUNS_DIR
    record = None
    if retry is not None:
        run_dir = Path(retry) if Path(retry).is_dir() else runs_dir / retry
        try:
            record = load_record(run_dir)
        except (OSError, ValueError) as exc:
            raise usage_error(f"--retry {retry}: not a run folder (no readable run.json)") from exc
        if task or limit or persona or repeats != 1:
            raise usage_error(
                "--retry re-runs a run's own trials: --task, --limit, --persona and --repeats do not apply"
            )
        agent = agent or record.agent
        if agent != record.agent:
            raise usage_error(f"--retry {retry}: the run measured '{record.agent}', not '{agent}'")
        stored = record.options.get("taskset_dir")
        taskset = taskset or (Path(stored) if stored else None)
        if taskset is None:
            raise usage_error(f"--retry {retry}: the run does not record its taskset folder; pass --taskset")
    if taskset is None or agent is None:
        raise usage_error("--taskset and --agent are required (or --retry RUN)")
    if not (taskset / "taskset.json").is_file():
        what = "no such folder" if not taskset.is_dir() else "no taskset.json in it"
        raise usage_error(f"--taskset {taskset}: {what}")
    llm: dict[str, Any] = {}
    if record is not None and isinstance(record.options.get("llm"), dict):
        llm = {k: v for k, v in record.options["llm"].items() if k != "model"}
    for key, value in (
        ("mode", mode),
        ("parse", parse),
        ("base_url", base_url),
        ("request_timeout_s", timeout),
    ):
        if value is not None:
            llm[key] = value.value if isinstance(value, Enum) else value
    if llm and not agent.startswith("openai:"):
        flags = {
            "mode": "--mode",
            "parse": "--parse",
            "base_url": "--base-url",
            "request_timeout_s": "--timeout",
        }
        raise usage_error(
            f"{', '.join(flags.get(k, k) for k in llm)} only apply to openai:<model> agents, not '{agent}'"
        )
    try:
        chosen = build_agent(agent, llm)
    except (ValueError, ImportError) as exc:
        raise usage_error(str(exc)) from exc
    try:
        tasks = choose_tasks(select_tasks(taskset, persona), task, limit)
    except TaskFileError as exc:
        raise usage_error(str(exc)) from exc
    except ValueError as exc:
        raise usage_error(str(exc)) from exc
    if not tasks:
        raise usage_error(f"--taskset {taskset}: no task files found")
    loaded = TaskSet.load(taskset)
    judged = _judge_for(judge or loaded.manifest.judge, base_url, tasks, usage_error)
    world = world or (Path(record.world) if record is not None and record.world else None)
    w = _load_world(world or (Path(loaded.manifest.world) if loaded.manifest.world else None))
    label = loaded.manifest.taskset_id
    notes = list(getattr(chosen, "notes", []))
    options = {
        "persona": persona,
        "world": str(world or DEFAULT_WORLD),
        "taskset_dir": str(taskset.resolve()),
        "task_filter": list(task or []),
        "limit": limit,
    }
    config = getattr(chosen, "config", None)
    if config is not None and hasattr(config, "public"):
        options["llm"] = config.public()
    planned = len(tasks) * repeats
    if record is not None:
        from certify.evaluate import load_run, to_retry

        planned = len(to_retry(record, load_run(run_dir)))
        if not planned:
            render.say(err, f"run {record.run_id}: no invalid or unfinished trial to retry")
    if planned:
        from certify.agents.llm import check_agents
        from certify.model_client import EndpointUnusable

        try:
            check_agents([chosen])
        except EndpointUnusable as exc:
            raise usage_error(str(exc)) from exc

    with Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        console=err,
        transient=False,
    ) as bar:
        job = bar.add_task(f"{'retry' if record else 'eval'} {chosen.name}", total=planned, status="")
        tally = {"passed": 0, "invalid": 0}

        def progress(trial, done: int, total: int) -> None:
            tally["passed"] += bool(trial.valid and trial.passed)
            tally["invalid"] += not trial.valid
            bar.update(job, completed=done, status=f"passed {tally['passed']}  invalid {tally['invalid']}")

        async def go():
            try:
                if record is not None:
                    return await retry_invalid(
                        w,
                        run_dir,
                        {t.id: t for t in tasks},
                        chosen,
                        concurrency=concurrency,
                        timeout_s=trial_timeout,
                        progress=progress,
                        judge=judged,
                    )
                return await evaluate(
                    w,
                    tasks,
                    chosen,
                    repeats=repeats,
                    concurrency=concurrency,
                    timeout_s=trial_timeout,
                    runs_dir=runs_dir,
                    taskset=label,
                    world_label=str(world or DEFAULT_WORLD),
                    options=options,
                    notes=notes,
                    progress=progress,
                    judge=judged,
                )
            finally:
                for closing in (chosen, judged):
                    close = getattr(closing, "aclose", None)
                    if close is not None:
                        await close()

        try:
            run = asyncio.run(go())
        except KeyboardInterrupt:
            bar.stop()
            render.say(
                err, f"finished trials are kept in {runs_dir}", prefix="interrupted: ", prefix_style="yellow"
            )
            raise typer.Exit(130) from None
        except ValueError as exc:
            raise usage_error(str(exc)) from exc

    counted = current(run.trials)
    if as_json:
        sys.stdout.write(json.dumps(run.report, indent=2) + "\n")
    else:
        title = (
            f"{chosen.name} on {label}"
            + (f" / {persona}" if persona else "")
            + f": {run.record.tasks} task(s) x {run.record.repeats}"
        )
        if record is not None:
            title += f" (retried {planned} trial(s) of run {record.run_id})"
        _render(run.report, title=title, reasons=invalid_reasons(counted), run_dir=run.run_dir, notes=notes)
    if run.report["trials"] and run.report["invalid"] == run.report["trials"]:
        why = ", ".join(f"{reason} {count}" for reason, count in sorted(invalid_reasons(counted).items()))
        render.say(
            err,
            f"no valid trial ({why}): nothing about the agent was measured; the trials and their errors "
            f"are in {run.run_dir}",
            style="red",
        )
        raise typer.Exit(1)


def _judge_for(name: str | None, base_url: str | None, tasks: list, usage_error) -> Any:
    """The judge of the run's judged answers (None when no task is judged), its endpoint checked first."""
    import asyncio

    from certify.judge import build_judge
    from certify.judge.model import DEFAULT_CACHE_DIR
    from certify.model_client import EndpointUnusable

    if not any(t.eval.judged is not None for t in tasks):
        return None
    model = bool(name) and name != "rubric"
    try:
        chosen = build_judge(
            name, **({"base_url": base_url, "cache_dir": DEFAULT_CACHE_DIR} if model else {})
        )
        if model:
            asyncio.run(chosen.check())
    except (ValueError, EndpointUnusable) as exc:
        raise usage_error(f"--judge: {exc}") from exc
    return chosen


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_cmd)
