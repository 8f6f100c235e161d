"""`taskforge calibrate`: the staircase gate of one persona's tasks with a reference agent, or with a family of
reference agents (`ladder`: ladder-0 … ladder-4, reported as an agent × level matrix)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from authoring import render

from .common import console, err, preflight, taskset_world, usage_error
from .options import (
    FrontierAgent,
    Json,
    MinAttempts,
    ModelFlags,
    PersonaOnly,
    RunsDir,
    TasksetFolder,
    WorldDir,
    flag_names,
    grouped,
)


@grouped
def calibrate(
    taskset: TasksetFolder,
    persona: PersonaOnly = None,
    agent: Annotated[
        str,
        typer.Option(
            "--agent", help="Reference agent, or `ladder` for the capability ladder ladder-0 … ladder-4."
        ),
    ] = "heuristic",
    repeats: Annotated[
        int, typer.Option("--repeats", min=1, help="Runs per task (deterministic agents run once).")
    ] = 3,
    min_attempts: MinAttempts = None,
    frontier_agent: FrontierAgent = None,
    world: WorldDir = None,
    model: ModelFlags = ModelFlags(),
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Record folder (default .taskforge/calibrate/<taskset>/<p>;"
            " the taskset's own calibration/ records belong to `author`)",
        ),
    ] = None,
    regrade_run: Annotated[
        Path | None, typer.Option("--regrade", help="Re-grade a stored run instead.")
    ] = None,
    runs_dir: RunsDir = None,
    as_json: Json = False,
) -> None:
    """Run the reference over a persona's tasks; exit 0 iff the staircase holds (1 when it is inverted or a
    level has too few valid attempts to be measured)."""
    from certify import (
        DEFAULT_RUNS_DIR,
        MIN_ATTEMPTS,
        TaskFileError,
        TaskSet,
        all_deterministic,
        analyse,
        configurable,
        load_run,
        load_trials,
        probe_dead_rungs,
        regrade,
        repeats_for,
        resolve_agent,
        resolve_agents,
        select_tasks,
        write_record,
    )
    from certify import evaluate_tasks as evaluate
    from certify import load_calibration as load_record

    floor = MIN_ATTEMPTS if min_attempts is None else min_attempts
    try:
        _, w = taskset_world(TaskSet.load(taskset), world)
        tasks = select_tasks(taskset, persona)
    except TaskFileError as exc:
        raise usage_error(str(exc)) from exc
    label = persona or "all"
    folder = out or Path(".taskforge") / "calibrate" / taskset.resolve().name / label
    moved: list[dict] = []
    if regrade_run is not None:
        source = regrade_run
        try:
            trials = (
                load_run(source)
                if (source / "trials.jsonl").is_file() and (source / "run.json").is_file()
                else load_trials(source)
            )
            stored = load_record(source) if (source / "calibration.json").is_file() else None
        except (FileNotFoundError, ValueError) as exc:
            raise usage_error(str(exc)) from exc
        trials, moved = regrade(w, {t.id: t for t in tasks}, trials)
        name = stored.agent if stored else (trials[0].agent if trials else agent)
        record = analyse(
            trials,
            persona=label,
            taskset=taskset.resolve().name,
            agent=name,
            repeats=max((t.repeat for t in trials), default=0) + 1,
            min_attempts=floor,
        )
    else:
        try:
            agent = model.agent(agent) or agent
            frontier_agent = model.agent(frontier_agent) if frontier_agent else None
            given = model.config()
            if given and not any(configurable(n) for n in (agent, frontier_agent) if n):
                raise ValueError(f"{flag_names(given)} only apply to openai:<model> agents, not '{agent}'")
            llm = model.agent_config()
            reference = resolve_agents(agent, llm if configurable(agent) else None)
            frontier = (
                resolve_agent(frontier_agent, llm if configurable(frontier_agent) else None)
                if frontier_agent
                else None
            )
            concurrency = model.workers()
        except ValueError as exc:
            raise usage_error(str(exc)) from exc
        preflight([*reference, *([frontier] if frontier else [])])
        runs = repeats_for(reference, repeats)
        trials = []
        for member in reference:
            run = asyncio.run(
                evaluate(
                    w,
                    tasks,
                    member,
                    repeats=runs,
                    concurrency=concurrency,
                    runs_dir=runs_dir or DEFAULT_RUNS_DIR,
                    taskset=str(taskset),
                    options={"persona": persona},
                )
            )
            trials += run.trials
            err.print(f"transcripts ({member.name}): {run.run_dir}")
        record = analyse(
            trials,
            persona=label,
            taskset=taskset.resolve().name,
            agent=agent,
            repeats=runs,
            deterministic=all_deterministic(reference),
            min_attempts=floor,
        )
        if frontier is not None and record.probes:
            asyncio.run(probe_dead_rungs(w, record, tasks, trials, frontier))
    paths = write_record(folder, record, trials)
    if as_json:
        sys.stdout.write(json.dumps({**record.model_dump(), "moved": moved}, indent=2) + "\n")
    else:
        render_record(console, record)
        if regrade_run is not None:
            render.say(
                console,
                f"re-graded {len(trials)} stored trial(s): "
                + (f"{len(moved)} verdict(s) moved: {moved}" if moved else "no verdict moved"),
            )
        render.say(console, ", ".join(str(p) for p in paths), prefix="wrote ")
    raise typer.Exit(0 if record.verdict == "holds" else 1)


def render_record(out, record) -> None:
    """The staircase at 80 columns: one row per level (n, passes, rate, Wilson 95%, per repeat, dead rung), then
    inversions, defects, noise, probes and shortcuts as lists."""

    from certify import LEVEL_NAMES

    if record.ladder is not None:
        # the ladder holds its staircase by construction (ladder-k has k capabilities): its result is the
        # agent × level matrix and the criterion's verdicts, not pooled pass rates with intervals
        render.say(
            out,
            f"Calibration of {record.persona} ({record.taskset}): {record.trials} trials "
            f"({record.invalid} invalid, excluded); {render.headline(record)}",
            style="bold",
        )
    else:
        render.say(
            out,
            f"Calibration of {record.persona} ({record.taskset}): {record.agent}, {record.repeats} "
            f"repeat(s), {record.trials} trials ({record.invalid} invalid, excluded); staircase "
            f"{record.verdict.upper() if record.verdict != 'holds' else 'holds'}",
            style="bold",
        )
        # n (the tasks) is what the Wilson interval counts; attempts are the valid trials behind the rate
        table = render.level_table(
            ("n tasks", "attempts", "pass", "rate", "Wilson 95%"), notes=("per repeat",)
        )
        dead = {p.level: p.status for p in record.probes}
        for s in record.levels:
            rate = "-" if s.pass_rate is None else f"{s.pass_rate:.0%}"
            reps = " ".join("-" if r is None else f"{r:.0%}" for r in s.per_repeat)
            name = LEVEL_NAMES.get(s.level, "") + (" (dead)" if s.level in dead else "")
            table.add_row(
                render.text(s.level),
                render.text(name, "red" if s.level in dead else ""),
                str(s.tasks),
                str(s.attempts),
                str(s.passes),
                rate,
                # an interval is about sampling: a deterministic agent ran each task once, nothing was sampled
                f"{s.ci[0]:.2f}-{s.ci[1]:.2f}" if s.attempts and not record.deterministic else "-",
                render.text(reps),
            )
        if record.levels:
            out.print(table)
        else:
            render.say(out, "no task to calibrate")
    if record.judge is not None:
        render.say(out, record.judge.line())
    render.bullets(
        out,
        "inversions",
        [
            (
                f"{i.lower} > {i.upper}",
                f"{i.lower} fails {i.fail_lower:.0%}, more than {i.upper} ({i.fail_upper:.0%})",
            )
            for i in record.inversions
        ],
    )
    render.bullets(
        out,
        "defects (same fingerprint on every attempt)",
        [(d.task_id, "; ".join(d.fingerprint)) for d in record.defects],
    )
    render.bullets(out, "noise", [(n.task_id, n.detail) for n in record.noise])
    render.bullets(
        out,
        "dead rungs (never passed)",
        [(p.level, p.status + (f": {p.agent} on {p.task_id}" if p.agent else "")) for p in record.probes],
    )
    render.bullets(out, "shortcuts", [(s.task_id, s.detail) for s in record.shortcuts])
    if record.verdict == "insufficient":
        render.say(
            out,
            f"fewer than {record.min_attempts} valid attempts per agent at "
            f"{', '.join(record.insufficient) or 'every level'}",
            prefix="insufficient: ",
        )
    if record.ladder is not None:
        from certify import render_matrix

        matrix = render_matrix(record.ladder)
        if matrix:
            render.say(out, "capability ladder", style="bold")
            out.print("\n".join(matrix), markup=False, soft_wrap=True)
        render.bullets(out, "ladder findings", [(f.task_id, f.detail) for f in record.ladder.findings])
