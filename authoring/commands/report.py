"""`taskforge report`: a static HTML site about a taskset, to read in a browser from disk."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from authoring import render


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report_cmd(
        taskset: Annotated[str, typer.Option("--taskset", help="Taskset folder name.")] = "workspace_tasks",
        tasksets_dir: Annotated[Path, typer.Option("--tasksets-dir", help="Where tasksets live.")] = Path(
            "tasksets"
        ),
        out: Annotated[
            Path | None, typer.Option("--out", help="Site folder (default .taskforge/report/<taskset>).")
        ] = None,
        world: Annotated[
            Path | None, typer.Option("--world", help="World (default: the taskset's, else built-in).")
        ] = None,
        runs_dir: Annotated[Path, typer.Option("--runs-dir", help="Evaluation runs to include.")] = Path(
            ".taskforge/runs"
        ),
        max_runs: Annotated[
            int, typer.Option("--max-runs", min=0, help="The newest runs of this taskset to include.")
        ] = 5,
    ) -> None:
        """Write a static HTML report: ladders, gates, calibration, review items, transcripts."""
        from authoring.report import build_report
        from certify.task import TaskFileError, TaskSet
        from simulator import WorldError

        out_console, err = render.console(), render.console(stderr=True)
        root = tasksets_dir / taskset
        if not (root / "taskset.json").is_file():
            render.error(err, f"--taskset {taskset}: no taskset.json in {root}")
            raise typer.Exit(2)
        site = out or Path(".taskforge") / "report" / taskset
        try:
            w = TaskSet.load(root).world(world)
            index = build_report(root, site, world=w, runs_dir=runs_dir, max_runs=max_runs)
        except (TaskFileError, WorldError) as exc:
            render.error(err, str(exc))
            raise typer.Exit(2) from exc
        pages = len(list(site.glob("*.html")))
        render.say(
            out_console, f"{pages} page(s) in {site}; open {index.resolve().as_uri()}", prefix="report: "
        )
