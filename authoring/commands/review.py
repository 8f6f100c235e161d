"""`taskforge review`: list, show and decide what the pipeline left for a person."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from authoring import render

console = render.console()
err = render.console(stderr=True)
review_app = typer.Typer(help="Review flagged tasks: list, show, approve, reject, send to the fixer.",
                         no_args_is_help=True)

Checkpoints = Annotated[Path, typer.Option("--checkpoints", help="The SQLite checkpoint store.")]
TasksetsDir = Annotated[Path, typer.Option("--tasksets-dir", help="Where tasksets live.")]
DEFAULT_DB = Path(".taskforge") / "checkpoints.sqlite"


def _open(checkpoints: Path):
    from authoring.commands.author import DriverChoice, make_drivers
    from authoring.review import ReviewQueue
    from authoring.run import checkpointer

    drivers = make_drivers(DriverChoice.rules, None, None, render.progress_printer(err))
    return ReviewQueue(checkpoints), checkpointer(None, checkpoints), drivers


def register(app: typer.Typer) -> None:
    app.add_typer(review_app, name="review")


@review_app.command("list")
def list_items(
    taskset: Annotated[str | None, typer.Option("--taskset", help="Only this taskset.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    checkpoints: Checkpoints = DEFAULT_DB,
) -> None:
    """Every open item with its id, kind, age and a one-line reason."""
    queue, saver_cm, drivers = _open(checkpoints)
    with saver_cm as saver:
        queue.sync_threads(saver, drivers)
    items = queue.items(taskset=taskset)
    if as_json:
        sys.stdout.write(json.dumps({"items": [i.to_dict() for i in items]}, indent=2) + "\n")
        return
    if not items:
        console.print("nothing waits for review")
        return
    render.say(console, f"{len(items)} open review item(s)", style="bold")
    table = render.table()
    table.add_column("id", no_wrap=True)
    table.add_column("task / story", no_wrap=True)
    table.add_column("kind", overflow="fold")
    table.add_column("blocks", no_wrap=True)
    table.add_column("age", no_wrap=True, justify="right")
    for i in items:
        table.add_row(render.text(i.id), render.text(i.task_id or i.story or i.persona or "-"), render.text(i.kind),
                      "yes" if i.blocking else "no", i.age())
    if render.fits(console, table):
        console.print(table)
        render.bullets(console, "reasons", [(i.id, i.reason) for i in items])
    else:
        for i in items:
            render.say(console, f"{i.task_id or i.story or i.persona or '-'}  {i.kind}  "
                                f"{'blocks' if i.blocking else 'minor'}  {i.age()}", prefix=f"{i.id}  ", indent=2)
            render.say(console, i.reason, prefix="    ")


@review_app.command("show")
def show(item_id: Annotated[str, typer.Argument(help="Item id (a unique prefix is enough).")],
         checkpoints: Checkpoints = DEFAULT_DB, tasksets_dir: TasksetsDir = Path("tasksets")) -> None:
    """Everything needed to decide: the task, the flag and its evidence, gates, failing turns, the ladder."""
    from authoring.review import ReviewError

    queue, saver_cm, drivers = _open(checkpoints)
    try:
        item = queue.get(item_id)
    except ReviewError as exc:
        render.error(err, str(exc))
        raise typer.Exit(2) from exc
    with saver_cm as saver:
        state = _thread_state(saver, drivers, item.thread_id) if item.thread_id else {}
    tasks = state.get("tasks") or _tasks_on_disk(tasksets_dir, item)
    render.say(console, f"{item.kind} ({item.severity}{', blocking' if item.blocking else ''}) — "
                        f"{item.persona or ''} {item.task_id or item.story or ''}", prefix=f"{item.id} ", style="bold")
    render.say(console, item.reason, prefix="reason: ")
    if item.evidence:
        render.say(console, item.evidence, prefix="evidence: ")
    task = tasks.get(item.task_id or "")
    if task:
        _show_task(task)
        cert = (state.get("certs") or {}).get(item.task_id) or {}
        for name, gate in (cert.get("gates") or {}).items():
            render.say(console, f"{'ok' if gate['ok'] else 'FAIL'} — {gate['detail']}", prefix=f"  gate {name}: ",
                       indent=4)
        _show_transcript(state, item.task_id or "")
    if item.story and (item.kind == "fairness" or not task):
        render.say(console, "the ladder side by side", style="bold")
        for tid in sorted(t for t in tasks if t.startswith(f"{item.story}_level")):
            render.say(console, f"{tid} (max_turns {tasks[tid]['eval'].get('max_turns')})", prefix="  ")
            render.say(console, tasks[tid]["prompt"], prefix="    ")


def _thread_state(saver: Any, drivers: Any, thread_id: str) -> dict[str, Any]:
    from authoring.pipeline import build_graph

    return build_graph(drivers, saver).get_state({"configurable": {"thread_id": thread_id}}).values or {}


def _tasks_on_disk(tasksets_dir: Path, item: Any) -> dict[str, Any]:
    folder = tasksets_dir / (item.taskset or "") / (item.persona or "")
    return {p.stem: json.loads(p.read_text()) for p in folder.glob("*.json")} if folder.is_dir() else {}


def _show_task(task: dict[str, Any]) -> None:
    setup = task.get("setup", {})
    dash = (setup.get("initial_state") or {}).get("dashboard") or {}
    render.say(console, task["prompt"], prefix=f"prompt ({task['difficulty']}): ", indent=2)
    render.say(console, f"baseline {setup.get('workspace_baseline')!r}, opens "
                        f"{setup.get('default_selected_dashboard')!r} with {len(dash.get('widgets') or [])} seeded "
                        f"widget(s) and {len(dash.get('generated_widgets') or [])} note(s)", prefix="setup: ")
    ev = task.get("eval", {})
    graded = [f"{s['tool']} {json.dumps({k: s['args'].get(k) for k in (s.get('graded_args') or s['args'])})}"
              for s in ev.get("required_tools", []) if not s.get("optional")]
    render.say(console, "; ".join(graded), prefix="graded calls: ", indent=2)
    for key in ("required_widgets", "required_generated_widgets", "required_layouts", "required_widget_defs",
                "required_app_defs", "required_tool_results"):
        if ev.get(key):
            console.print(f"{key}: {len(ev[key])}")
    console.print(f"max_turns: {ev.get('max_turns')}")


def _show_transcript(state: dict[str, Any], task_id: str) -> None:
    trials = [t for t in state.get("calibration_trials") or [] if t["task_id"] == task_id]
    failing = [t for t in trials if t.get("valid") and not t.get("passed")]
    if not failing:
        return
    last = failing[-1]
    render.say(console, f"({last['agent']}, repeat {last['repeat']}): {', '.join(last['failure_codes'])}",
               prefix="last failing attempt ", style="bold")
    for event in last["events"]:
        mark = "ok " if event["ok"] else "ERR"
        message = "" if event["ok"] else f" — {(event.get('envelope') or {}).get('message', '')}"
        render.say(console, f"{event['tool']} {json.dumps(event['args'])[:160]}{message}",
                   prefix=f"  {event['index']:>2} {mark} ", indent=9)


def _decide(item_id: str, verdict: str, note: str, by: str, checkpoints: Path, tasksets_dir: Path,
            no_commit: bool) -> None:
    from authoring.review import AlreadyDecided, ReviewError, decide

    queue, saver_cm, drivers = _open(checkpoints)
    try:
        with saver_cm as saver:
            outcome = decide(queue, saver, drivers, item_id, verdict, by=by, note=note, tasksets_dir=tasksets_dir,
                             commit=not no_commit)
    except AlreadyDecided as exc:
        render.error(err, str(exc))
        raise typer.Exit(1) from exc
    except ReviewError as exc:
        render.error(err, str(exc))
        raise typer.Exit(2) from exc
    render.say(console, f"{item_id} — " + ", ".join(f"{k}: {v}" for k, v in outcome.items() if v),
               prefix=f"{verdict}: ")


By = Annotated[str, typer.Option("--by", help="Who decides (recorded in the lock).")]


@review_app.command("approve")
def approve(item_id: str, note: Annotated[str, typer.Option("--note")] = "", by: By = "reviewer",
            checkpoints: Checkpoints = DEFAULT_DB, tasksets_dir: TasksetsDir = Path("tasksets"),
            no_commit: Annotated[bool, typer.Option("--no-commit")] = False) -> None:
    """Accept the item as it is."""
    _decide(item_id, "approve", note, by, checkpoints, tasksets_dir, no_commit)


@review_app.command("reject")
def reject(item_id: str, reason: Annotated[str, typer.Option("--reason", help="Why (required).")],
           by: By = "reviewer", checkpoints: Checkpoints = DEFAULT_DB, tasksets_dir: TasksetsDir = Path("tasksets"),
           no_commit: Annotated[bool, typer.Option("--no-commit")] = False) -> None:
    """Reject the item (a rejected blocker stops its persona's commit)."""
    _decide(item_id, "reject", reason, by, checkpoints, tasksets_dir, no_commit)


@review_app.command("fix")
def fix(item_id: str, note: Annotated[str, typer.Option("--note")] = "", by: By = "reviewer",
        checkpoints: Checkpoints = DEFAULT_DB, tasksets_dir: TasksetsDir = Path("tasksets"),
        no_commit: Annotated[bool, typer.Option("--no-commit")] = False) -> None:
    """Send the item to the fixer driver with its evidence."""
    _decide(item_id, "fix", note, by, checkpoints, tasksets_dir, no_commit)
