"""`taskforge export`: tasks and runs in the formats of other engines.

`export harbor` writes Harbor tasks (certify/harbor.py) and checks each with Harbor's own models; `--check` also
runs each exported task's scripts on this machine against a local `taskforge serve` (the oracle must earn 1, a
do-nothing agent 0). `export rollouts` writes the trials of runs as training records (certify/rollouts.py).
Usage errors exit 2 before anything is written; a check that finds a problem exits 1.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated, cast

import typer

from authoring import render

from .common import usage_error
from .options import RunsDir, TasksetFolder, TasksetFolderOrNone, WorldDir

export_app = typer.Typer(
    help="Export tasks and runs to other engines: Harbor tasks, rollouts for training.", no_args_is_help=True
)
out = render.console()
err = render.console(stderr=True)


@export_app.command("harbor")
def harbor_cmd(
    taskset: TasksetFolder,
    dest: Annotated[
        Path,
        typer.Option(
            "--out", help="Folder the Harbor tasks go to (one folder per task).", show_default=False
        ),
    ],
    task: Annotated[list[str] | None, typer.Option("--task", help="Only this task (repeatable).")] = None,
    persona: Annotated[str | None, typer.Option("--persona", help="Only this persona's tasks.")] = None,
    org: Annotated[
        str, typer.Option("--org", help="Organisation of the Harbor task names (org/task).")
    ] = "taskforge",
    world: WorldDir = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Also run every exported task's scripts here, without Docker, against a local taskforge serve: "
            "the oracle (solve.sh) must earn reward 1 and a do-nothing agent 0.",
        ),
    ] = False,
) -> None:
    """Write each task as a Harbor task (task.toml, instruction.md, environment/ with the workspace sidecar,
    tests/, solution/) and validate it with Harbor's own task models."""
    from certify import (
        HarborExportError,
        TaskFileError,
        choose_tasks,
        export_taskset,
        harbor_models,
        run_locally,
        select_tasks,
        validate,
    )

    try:
        harbor_models()
    except HarborExportError as exc:
        raise usage_error(str(exc)) from exc
    if not (taskset / "taskset.json").is_file():
        what = "no such folder" if not taskset.is_dir() else "no taskset.json in it"
        raise usage_error(f"--taskset {taskset}: {what}")
    if dest.exists() and not dest.is_dir():
        raise usage_error(f"--out {dest}: not a folder")
    try:
        tasks = choose_tasks(select_tasks(taskset, persona), task)
    except (TaskFileError, ValueError) as exc:
        raise usage_error(str(exc)) from exc
    if not tasks:
        raise usage_error(f"--taskset {taskset}: no task files found")
    try:
        exported = export_taskset(taskset, tasks, dest, org=org, world=world)
    except (HarborExportError, TaskFileError) as exc:
        raise usage_error(str(exc)) from exc
    findings = {e.task_id: validate(e.path) for e in exported}
    problems = [problem for found in findings.values() for problem in found]
    for problem in problems:
        render.say(err, problem, prefix="invalid: ", prefix_style="red")
    valid = sum(1 for found in findings.values() if not found)
    render.say(
        out,
        f"{len(exported)} Harbor task(s) in {dest}; {valid}/{len(exported)} valid by Harbor's own task models "
        "(TaskConfig, its task loader, and its lint rules except those that need docker compose)",
        prefix="ok " if not problems else "",
        prefix_style="green",
    )
    failed = bool(problems)
    if check:
        rows = []
        with tempfile.TemporaryDirectory(prefix="taskforge-harbor-") as scratch:
            for e in exported:
                try:
                    oracle = run_locally(e.path, agent="oracle", scratch=Path(scratch))
                    noop = run_locally(e.path, agent="noop", scratch=Path(scratch))
                except HarborExportError as exc:
                    render.say(err, str(exc), prefix="check failed: ", prefix_style="red")
                    failed = True
                    continue
                rows.append((e.task_id, oracle.reward, noop.reward))
                if oracle.reward != 1 or noop.reward != 0:
                    failed = True
                    codes = ", ".join(oracle.verdict.get("failure_codes") or []) or "-"
                    render.say(
                        err,
                        f"{e.task_id}: oracle earned {oracle.reward} ({codes}), do-nothing earned {noop.reward}",
                        prefix="check failed: ",
                        prefix_style="red",
                    )
        good = sum(1 for _, o, n in rows if o == 1 and n == 0)
        render.say(
            out,
            f"{good}/{len(exported)} task(s) run here without Docker: solve.sh then test.sh earned 1, "
            "a do-nothing agent 0",
            prefix="ok " if good == len(exported) else "",
            prefix_style="green",
        )
    if failed:
        raise typer.Exit(1)


@export_app.command("rollouts")
def rollouts_cmd(
    runs: Annotated[
        list[str],
        typer.Argument(
            help="Run folders, run ids (under --runs-dir), trials.jsonl files or calibration record folders.",
            show_default=False,
        ),
    ],
    dest: Annotated[Path, typer.Option("--out", help="The JSONL file to write.", show_default=False)],
    fmt: Annotated[
        str, typer.Option("--format", help="openai (chat messages with tool calls) or sharegpt.")
    ] = "openai",
    which: Annotated[
        str, typer.Option("--filter", help="pass, fail or all (by the recorded verdict).")
    ] = "all",
    taskset: TasksetFolderOrNone = None,
    world: WorldDir = None,
    runs_dir: RunsDir = None,
) -> None:
    """One JSON line per valid trial: task, level, persona, model, the messages (OpenAI chat format with tool
    calls and results, or ShareGPT), the strict and shaped rewards, failure codes and tokens."""
    from certify import (
        DEFAULT_RUNS_DIR,
        RolloutFilter,
        RolloutFormat,
        RolloutSourceError,
        TaskFileError,
        TaskSet,
        load_run,
        resolve_source,
        select_tasks,
        serialise,
    )
    from certify import run_rollouts as rollouts
    from simulator import SetupError, World, WorldError

    if fmt not in {f.value for f in RolloutFormat}:
        raise usage_error(f"--format {fmt}: openai or sharegpt")
    if which not in {f.value for f in RolloutFilter}:
        raise usage_error(f"--filter {which}: pass, fail or all")
    chosen_format, chosen_filter = RolloutFormat(fmt), RolloutFilter(which)
    if dest.exists() and dest.is_dir():
        raise usage_error(f"--out {dest}: is a folder; name the .jsonl file to write")
    if taskset is not None and not (taskset / "taskset.json").is_file():
        raise usage_error(f"--taskset {taskset}: no taskset.json there")
    try:
        sources = [
            resolve_source(arg, runs_dir=runs_dir or DEFAULT_RUNS_DIR, taskset=taskset) for arg in runs
        ]
    except RolloutSourceError as exc:
        raise usage_error(str(exc)) from exc
    lines: list[str] = []
    seen = skipped = 0
    worlds: dict[Path | None, World] = {}
    for source in sources:
        root = cast(Path, source.taskset_dir).resolve()  # resolve_source fails a run without a taskset
        chosen_world = world or source.world
        try:
            tasks = {t.id: t for t in select_tasks(root)}
            if chosen_world not in worlds:
                worlds[chosen_world] = TaskSet.load(root).world(chosen_world)
            trials = load_run(source.trials_file)
        except (TaskFileError, WorldError, ValueError) as exc:
            raise usage_error(str(exc)) from exc
        unknown = sorted({t.task_id for t in trials} - set(tasks))
        if unknown:
            raise usage_error(
                f"{source.trials_file}: trials of tasks not in {root}: {', '.join(unknown[:3])}"
            )
        seen += len(trials)
        skipped += sum(1 for t in trials if not t.valid)
        try:
            made = rollouts(worlds[chosen_world], tasks, trials, source, chosen_filter)
            lines += [serialise(r, chosen_format) for r in made]
        except SetupError as exc:
            raise usage_error(
                f"{source.trials_file}: its tasks do not start in this world ({exc}); pass --world DIR"
            ) from exc
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".tmp")
    tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    tmp.replace(dest)
    render.say(
        out,
        f"{len(lines)} rollout(s) ({chosen_format.value}, filter {chosen_filter.value}) from {seen} trial(s) of "
        f"{len(sources)} run(s) to {dest}; {skipped} invalid trial(s) left out",
        prefix="ok ",
        prefix_style="green",
    )
