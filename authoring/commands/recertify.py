"""`taskforge recertify`: after a grader, simulator or world change, re-check exactly what went stale."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from authoring import render


def register(app: typer.Typer) -> None:
    @app.command("recertify")
    def recertify_cmd(
        taskset: Annotated[str, typer.Option("--taskset", help="Taskset folder name.")] = "workspace_tasks",
        tasksets_dir: Annotated[Path, typer.Option("--tasksets-dir", help="Where tasksets live.")] = Path("tasksets"),
        world: Annotated[Path | None, typer.Option("--world", help="World (default: the taskset's, else built-in).")]
        = None,
        commit: Annotated[bool, typer.Option("--commit", help="Write the updated lock and commit it, alone.")] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
        checkpoints: Annotated[Path, typer.Option("--checkpoints", help="Review queue store.")] = Path(
            ".taskforge/checkpoints.sqlite"),
    ) -> None:
        """Re-run the gates of stale certificates and re-grade stored calibration transcripts."""
        from authoring.gitops import GitError, commit_paths, find_repo
        from authoring.review import ReviewQueue
        from certify.recertify import recertify
        from certify.task import TaskFileError, TaskSet
        from simulator import WorldError

        console, err = render.console(), render.console(stderr=True)
        root = tasksets_dir / taskset
        try:
            report = recertify(root, TaskSet.load(root).world(world))
        except (TaskFileError, WorldError) as exc:
            render.error(err, str(exc))
            raise typer.Exit(2) from exc
        queue = ReviewQueue(checkpoints)
        for outcome in report.broken:
            queue.add(item_id=f"r{outcome.task_id}", source="recertify", kind="recertify_broken", severity="blocker",
                      reason=f"{outcome.task_id} no longer certifies ({', '.join(outcome.reasons)} changed)",
                      taskset=taskset, persona=outcome.persona,
                      task_id=outcome.task_id, evidence=outcome.detail)
        sha = None
        if commit and report.stale:
            path = report.lock.write(root)
            try:
                sha = commit_paths(find_repo(root), [path], f"taskforge: recertify {taskset} "
                                   f"({report.stale} stale, {len(report.broken)} broken)")
            except GitError as exc:
                render.error(err, str(exc))
                raise typer.Exit(2) from exc
        data = report.to_dict() | {"commit": sha}
        if as_json:
            sys.stdout.write(json.dumps(data, indent=2) + "\n")
        elif not report.stale:
            render.say(console, f"nothing stale: all {report.total} certificates of {taskset} match the current "
                                "grader, simulator, world and defaults")
        else:
            _render(console, report)
            if sha:
                console.print(f"committed the updated lock {sha[:10]}")
            elif commit:
                console.print("the lock is unchanged; nothing to commit")
        raise typer.Exit(1 if report.broken else 0)


def _render(console, report) -> None:
    """Ids in full, short columns; what changed and why listed under the table."""
    render.say(console, f"{report.stale}/{report.total} stale certificate(s) re-checked", style="bold")
    table = render.table()
    table.add_column("task", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    table.add_column("stale because")
    table.add_column("changed gates")
    for t in report.tasks:
        style = "red" if t.verdict == "broken" else ""
        table.add_row(render.text(t.task_id), render.text(t.verdict, style), render.text(", ".join(t.reasons)),
                      render.text(", ".join(t.changed_gates) or "-"))
    console.print(table)
    render.bullets(console, "details", [(t.task_id, t.detail) for t in report.tasks if t.detail])
    for c in report.calibration:
        moved = f"{len(c.moved)} verdict(s) moved" if c.moved else "no verdict moved"
        staircase = "holds" if c.holds_now else "INVERTED" if c.holds_now is False else "-"
        render.say(console, f"{c.trials} stored trial(s) re-graded, {moved}; staircase {staircase} {c.note}".rstrip(),
                   prefix=f"calibration {c.persona}: ")
    if report.broken:
        render.say(console, f"{len(report.broken)} task(s) now fail: opened review items (taskforge review list)",
                   style="red")
