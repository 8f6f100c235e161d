"""`taskforge report`: a static HTML site about a taskset, to read in a browser from disk."""

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
) -> None:
    """Write a static HTML report: ladders, gates, calibration, review items, transcripts."""
    from authoring.report import build_report
    from certify import DEFAULT_RUNS_DIR, TaskFileError, TaskSet

    root = tasksets_dir / taskset
    if not (root / "taskset.json").is_file():
        raise usage_error(f"--taskset {taskset}: no taskset.json in {root}")
    site = out or Path(".taskforge") / "report" / taskset
    try:
        _, w = taskset_world(TaskSet.load(root), world)
        index = build_report(root, site, world=w, runs_dir=runs_dir or DEFAULT_RUNS_DIR, max_runs=max_runs)
    except TaskFileError as exc:
        raise usage_error(str(exc)) from exc
    pages = len(list(site.glob("*.html")))
    render.say(console, f"{pages} page(s) in {site}; open {index.resolve().as_uri()}", prefix="report: ")
