"""`taskforge recertify`: after a grader, simulator or world change, re-check exactly what went stale."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from authoring import render

from .common import console, taskset_world, usage_error
from .options import TASKSET, TASKSETS_DIR, BaseUrl, Json, TasksetName, TasksetsDir, WorldDir

# recertify's own options (the shared ones are in .options)
CommitLock = Annotated[bool, typer.Option("--commit", help="Write the updated lock and commit it, alone.")]
Rejudge = Annotated[
    str | None,
    typer.Option(
        "--judge",
        help="openai:<model>: re-judge calibration trials whose verdict that model gave under an older judge "
        "template (the rubric's are re-judged offline without it). Trials are re-judged, never re-run.",
    ),
]


def recertify(
    taskset: TasksetName = TASKSET,
    tasksets_dir: TasksetsDir = TASKSETS_DIR,
    world: WorldDir = None,
    commit: CommitLock = False,
    judge: Rejudge = None,
    base_url: BaseUrl = None,
    as_json: Json = False,
) -> None:
    """Re-run the gates of stale certificates and re-grade stored calibration transcripts."""
    from authoring.gitops import GitError, PendingEdits, commit_paths, dirty_paths, find_repo, top
    from authoring.journal import foreign, settle, write_files
    from authoring.review import file_lock, list_command, read_file, reviews_path
    from certify import JUDGE_AUDIT_FILE, LOCK_FILE, TaskFileError, TaskSet, recertify_taskset, render_audit

    root = tasksets_dir / taskset
    repo = None
    try:
        if commit:
            repo = find_repo(root)
            pending = foreign(repo, [root / LOCK_FILE, root / JUDGE_AUDIT_FILE, root / "reviews"])
            if pending:
                raise PendingEdits(pending, "recertify --commit writes the lock and review files")
        _, w = taskset_world(TaskSet.load(root), world)
        chosen = _model_judge(judge, base_url)
        report = recertify_taskset(root, w, judge=chosen)
    except (TaskFileError, GitError) as exc:
        raise usage_error(str(exc)) from exc
    sha = None
    written: list[Path] = []
    if commit and repo is not None and (report.stale or report.broken):  # commit: repo was found above
        # review items first, the lock last: a kill in between leaves the lock stale, so the rerun finds the
        # same broken tasks again (and their items already there, not twice)
        for persona, items in _broken_items(report, taskset).items():
            path = reviews_path(root, persona)
            with file_lock(path):
                file = read_file(root, persona)
                known = {(i.id, i.run) for i in file.items}
                file.items += [i for i in items if (i.id, i.run) not in known]
                write_files(repo, {path: file.render()})
            written.append(path)
        if report.judge_audit is not None:
            with file_lock(root / JUDGE_AUDIT_FILE):
                audit_file, audit_data = render_audit(root, report.judge_audit)
                write_files(repo, {audit_file: audit_data})
                written.append(audit_file)
        with file_lock(root / LOCK_FILE):
            write_files(repo, {root / LOCK_FILE: report.lock.render()})
            written.append(root / LOCK_FILE)
        sha = commit_paths(
            repo,
            written,
            f"taskforge: recertify {taskset} ({report.stale} stale, {len(report.broken)} broken)",
        )
        settle(repo, written)
    elif commit and repo is not None:
        # nothing stale on disk, but an earlier recertify --commit was killed after writing: commit its files
        left = [
            top(repo) / p
            for p in dirty_paths(repo, [root / LOCK_FILE, root / JUDGE_AUDIT_FILE, root / "reviews"])
        ]
        # only a recertify's own leftovers: with task or calibration files pending too, an author run was
        # interrupted, and its rerun (not recertify) is what commits the lock with them
        others = len(dirty_paths(repo, [root])) > len(left)
        if left and not others:
            sha = commit_paths(
                repo, left, f"taskforge: recertify {taskset} (an interrupted recertify, completed)"
            )
            settle(repo, left)
            written = left
    data = report.to_dict() | {"commit": sha}
    if as_json:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    elif not report.stale:
        render.say(
            console,
            f"nothing stale: all {report.total} certificates of {taskset} match the current "
            "grader, simulator, world and defaults",
        )
        if sha:
            render.say(
                console,
                f"committed {', '.join(str(p) for p in written)} left by an interrupted recertify, {sha[:10]}",
            )
    else:
        _render(console, report, commit, list_command(tasksets_dir, taskset))
        if sha:
            render.say(console, f"wrote {', '.join(str(p) for p in written)}; committed {sha[:10]}")
        elif commit:
            console.print("the lock is unchanged; nothing to commit")
        else:
            render.say(
                console,
                f"dry run: nothing written; --commit writes {root / 'certificates.json'} (and "
                "review items for broken tasks) and commits them",
            )
    raise typer.Exit(1 if report.broken else 0)


def _model_judge(name: str | None, base_url: str | None):
    """The model judge `--judge` names, its endpoint checked before any work (None: the rubric re-judges what
    it gave, and a model's stale verdicts leave their trials invalid)."""
    import asyncio

    from certify import DEFAULT_CACHE_DIR, DEFAULT_JUDGE, EndpointUnusable, build_judge

    if name is None or name.strip() == DEFAULT_JUDGE:
        return None
    try:
        chosen = build_judge(name, base_url=base_url, cache_dir=DEFAULT_CACHE_DIR)
        asyncio.run(chosen.check())  # type: ignore[attr-defined]  # only a model judge reaches here; it has check()
    except (ValueError, EndpointUnusable) as exc:
        raise usage_error(f"--judge: {exc}") from exc
    return chosen


def _render(console, report, commit: bool, hint: str) -> None:
    """Ids in full, short columns; what changed and why listed under the table."""
    render.say(console, f"{report.stale}/{report.total} stale certificate(s) re-checked", style="bold")
    table = render.table()
    table.add_column("task", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    table.add_column("stale because")
    table.add_column("changed gates")
    for t in report.tasks:
        style = "red" if t.verdict == "broken" else ""
        table.add_row(
            render.text(t.task_id),
            render.text(t.verdict, style),
            render.text(", ".join(t.reasons)),
            render.text(", ".join(t.changed_gates) or "-"),
        )
    console.print(table)
    render.bullets(
        console, "what changed", [(t.task_id, "; ".join(t.changes)) for t in report.tasks if t.changes]
    )
    render.bullets(console, "details", [(t.task_id, t.detail) for t in report.tasks if t.detail])
    for c in report.calibration:
        moved = f"{len(c.moved)} verdict(s) moved" if c.moved else "no verdict moved"
        staircase = "holds" if c.holds_now else "INVERTED" if c.holds_now is False else "-"
        render.say(
            console,
            f"{c.trials} stored trial(s) re-graded, {moved}"
            + (f", {c.rejudged} judged answer(s) re-judged (not re-run)" if c.rejudged else "")
            + f"; staircase {staircase} {c.note}".rstrip(),
            prefix=f"calibration {c.persona}: ",
        )
    if report.broken:
        render.say(
            console,
            f"{len(report.broken)} task(s) now fail: "
            + (
                f"opened review items ({hint})"
                if commit
                else "run with --commit to record them as review items"
            ),
            style="red",
        )


def _broken_items(report, taskset: str) -> dict[str, list]:
    """Review items for the tasks a re-certification broke, by persona."""
    from authoring.review import ReviewItem
    from certify import now, sha256_text

    out: dict[str, list] = {}
    stamp = now()
    for outcome in report.broken:
        reason = f"{outcome.task_id} no longer certifies ({', '.join(outcome.reasons)} changed)"
        item = ReviewItem(
            id="r" + sha256_text(f"{outcome.task_id}|{outcome.detail}")[:9],
            run="recertify",
            source="recertify",
            taskset=taskset,
            persona=outcome.persona or "-",
            task_id=outcome.task_id,
            kind="recertify_broken",
            check="recertify",
            severity="blocker",
            reason=reason,
            evidence=outcome.detail,
            created_at=stamp,
        )
        out.setdefault(item.persona, []).append(item)
    return out
