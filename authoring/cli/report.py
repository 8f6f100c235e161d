"""`taskforge report`: a static HTML site about a taskset, to read in a browser from disk; with --prompts, the
reviewer's view in the terminal instead: each task's prompt next to what its eval grades, in words."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from authoring import render

from .common import console, taskset_world, usage_error
from .options import TASKSET, TASKSETS_DIR, RunsDir, TasksetName, TasksetsDir, WorldDir


def report(
    taskset: TasksetName = TASKSET,
    tasksets_dir: TasksetsDir = TASKSETS_DIR,
    out: Annotated[
        Path | None, typer.Option("--out", help="Site folder (default .taskforge/report/<taskset>).")
    ] = None,
    world: WorldDir = None,
    runs_dir: RunsDir = None,
    max_runs: Annotated[
        int, typer.Option("--max-runs", min=0, help="The newest runs of this taskset to include.")
    ] = 5,
    prompts: Annotated[
        bool,
        typer.Option(
            "--prompts",
            help="Print each task's prompt and what its eval grades, in words (no site is written).",
        ),
    ] = False,
    task_ids: Annotated[
        list[str] | None, typer.Option("--task", help="With --prompts: only this task (repeatable).")
    ] = None,
) -> None:
    """Write a static HTML report: ladders, gates, calibration, review items, transcripts (each prompt with what
    its eval grades); --prompts prints that reviewer's view instead."""
    from authoring.report import build_report
    from certify import DEFAULT_RUNS_DIR, TaskFileError, TaskSet

    root = tasksets_dir / taskset
    if not (root / "taskset.json").is_file():
        raise usage_error(f"--taskset {taskset}: no taskset.json in {root}")
    if prompts:
        return _prompts(root, world, task_ids or [])
    site = out or Path(".taskforge") / "report" / taskset
    try:
        _, w = taskset_world(TaskSet.load(root), world)
        index = build_report(root, site, world=w, runs_dir=runs_dir or DEFAULT_RUNS_DIR, max_runs=max_runs)
    except TaskFileError as exc:
        raise usage_error(str(exc)) from exc
    pages = len(list(site.glob("*.html")))
    render.say(console, f"{pages} page(s) in {site}; open {index.resolve().as_uri()}", prefix="report: ")


def _prompts(root: Path, world_dir: Path | None, wanted: list[str]) -> None:
    """The reviewer's view: a task's request and, under it, what the grader checks (certify/graded.py)."""
    from certify import TaskFileError, TaskSet, graded_words, select_tasks

    try:
        _, w = taskset_world(TaskSet.load(root), world_dir)
        tasks = select_tasks(root)
    except TaskFileError as exc:
        raise usage_error(str(exc)) from exc
    unknown = sorted(set(wanted) - {t.id for t in tasks})
    if unknown:
        raise usage_error(f"--task: no task {', '.join(unknown)} in {root}")
    for task in tasks:
        if wanted and task.id not in wanted:
            continue
        render.say(console, task.id, style="bold")
        render.say(console, task.prompt, prefix="prompt: ", indent=2)
        render.say(console, graded_words(task, w).removeprefix("graded: "), prefix="graded: ", indent=2)
        console.print()
