"""`taskforge eval`: run an agent over a taskset and report pass rates per level.

Usage errors (unknown agent, missing taskset, a model with no endpoint, an option the agent cannot use) exit 2
before any episode starts. The run itself never fails on the agent's results; it exits 1 only when no trial
was valid (nothing was measured) and 130 when interrupted, keeping the finished trials on disk.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from authoring import render

from .common import console, err, preflight, taskset_problem, taskset_world, usage_error
from .options import (
    Json,
    ModelFlags,
    PersonaOnly,
    RunsDir,
    TasksetFolderOrNone,
    WorldDir,
    flag_names,
    grouped,
)


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
    from certify import LEVEL_NAMES

    render.say(console, title, style="bold")
    table = render.level_table(("attempts", "passes", "pass rate", "Wilson 95% CI"))
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
    tokens = report["tokens"]
    # cached: the prompt tokens the server says it served from its prefix cache (priced as cached input)
    cached = f" (cached {tokens['cached']})" if tokens.get("cached") else ""
    console.print(f"tokens: in {tokens['in']}{cached}  out {tokens['out']}  cost ${report['cost']:.4f}")
    if report.get("judge"):
        from certify import JudgeSummary

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


@grouped
def eval_cmd(
    taskset: TasksetFolderOrNone = None,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            help="oracle, noop, heuristic or openai:<model>; with --retry, the run's own agent.",
            show_default=False,
        ),
    ] = None,
    persona: PersonaOnly = None,
    task: Annotated[list[str] | None, typer.Option("--task", help="Only this task id (repeatable).")] = None,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit", min=1, help="At most this many tasks (after the other filters, in taskset order)."
        ),
    ] = None,
    repeats: Annotated[int, typer.Option("--repeats", min=1, help="Attempts per task.")] = 1,
    world: WorldDir = None,
    model: ModelFlags = ModelFlags(),
    trial_timeout: Annotated[
        float | None,
        typer.Option(
            "--trial-timeout", min=0.001, help="Seconds per episode; a slower one is an invalid trial."
        ),
    ] = None,
    runs_dir: RunsDir = None,
    retry: Annotated[
        str | None,
        typer.Option(
            "--retry",
            help="A run folder (or its id under --runs-dir): re-run its invalid or unfinished trials only, "
            "appending to it, with the run's own taskset, agent, world and model options unless given.",
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
    as_json: Json = False,
) -> None:
    """Run an agent over a taskset and report pass rates per level and per task.

    Pass rate per level with Wilson 95% intervals, per-task results, pass^k and consistency across repeats,
    failure codes, turns, tool calls, tokens and cost; every trial is stored under --runs-dir."""
    import asyncio

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from certify import (
        DEFAULT_RUNS_DIR,
        TaskFileError,
        TaskSet,
        choose_tasks,
        configurable,
        current,
        invalid_reasons,
        plan_retry,
        resolve_agent,
        retry_invalid,
        select_tasks,
    )
    from certify import evaluate_tasks as evaluate

    runs_dir = runs_dir or DEFAULT_RUNS_DIR
    plan = None
    if retry is not None:
        try:
            plan = plan_retry(
                retry,
                runs_dir,
                agent=agent,
                taskset=taskset,
                selection=bool(task or limit or persona or repeats != 1),
            )
        except ValueError as exc:
            raise usage_error(str(exc)) from exc
        agent, taskset, world = plan.record.agent, plan.taskset_dir, world or plan.world
    if taskset is None or agent is None:
        raise usage_error("--taskset and --agent are required (or --retry RUN)")
    try:
        agent = model.agent(agent)
        env_llm = model.agent_config() if configurable(agent) else {}
        concurrency = model.workers()
    except ValueError as exc:
        raise usage_error(str(exc)) from exc
    problem = taskset_problem(taskset)
    if problem:
        raise usage_error(problem)
    given = model.config()
    if given and not configurable(agent):
        raise usage_error(f"{flag_names(given)} only apply to openai:<model> agents, not '{agent}'")
    llm = {**(plan.llm if plan else {}), **env_llm}
    try:
        chosen = resolve_agent(agent, llm)
    except (ValueError, ImportError) as exc:
        raise usage_error(str(exc)) from exc
    try:
        tasks = choose_tasks(select_tasks(taskset, persona), task, limit)
    except (TaskFileError, ValueError) as exc:
        raise usage_error(str(exc)) from exc
    if not tasks:
        raise usage_error(f"--taskset {taskset}: no task files found")
    loaded = TaskSet.load(taskset)
    where, w = taskset_world(loaded, world)
    judged = _judge_for(judge or loaded.manifest.judge, llm.get("base_url"), tasks)
    label = loaded.manifest.taskset_id
    notes = list(getattr(chosen, "notes", []))
    options = {
        "persona": persona,
        "world": str(where),
        "taskset_dir": str(taskset.resolve()),
        "task_filter": list(task or []),
        "limit": limit,
    }
    config = getattr(chosen, "config", None)
    if config is not None and hasattr(config, "public"):
        options["llm"] = config.public()
    planned = len(tasks) * repeats
    if plan is not None:
        planned = len(plan.pending())
        if not planned:
            render.say(err, f"run {plan.record.run_id}: no invalid or unfinished trial to retry")
    if planned:
        preflight([chosen])

    with Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        console=err,
        transient=False,
    ) as bar:
        job = bar.add_task(f"{'retry' if plan else 'eval'} {chosen.name}", total=planned, status="")
        tally = {"passed": 0, "invalid": 0}

        def progress(trial, done: int, total: int) -> None:
            tally["passed"] += bool(trial.valid and trial.passed)
            tally["invalid"] += not trial.valid
            bar.update(job, completed=done, status=f"passed {tally['passed']}  invalid {tally['invalid']}")

        async def go():
            try:
                if plan is not None:
                    return await retry_invalid(
                        w,
                        plan,
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
                    world_label=str(where),
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
        if plan is not None:
            title += f" (retried {planned} trial(s) of run {plan.record.run_id})"
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


def _judge_for(name: str | None, base_url: str | None, tasks: list) -> Any:
    """The judge of the run's judged answers (None when no task is judged), its endpoint checked first."""
    import asyncio

    from certify import DEFAULT_CACHE_DIR, EndpointUnusable, build_judge

    if not any(t.eval.judged is not None for t in tasks):
        return None
    model = bool(name) and name != "rubric"
    try:
        chosen = build_judge(
            name, **({"base_url": base_url, "cache_dir": DEFAULT_CACHE_DIR} if model else {})
        )
        if model:
            asyncio.run(chosen.check())  # type: ignore[attr-defined]  # a model judge (openai:...) has check()
    except (ValueError, EndpointUnusable) as exc:
        raise usage_error(f"--judge: {exc}") from exc
    return chosen
