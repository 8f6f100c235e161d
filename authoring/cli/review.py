"""`taskforge review`: list, show and decide what the pipeline left for a person."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from authoring import render

from .author import DriverChoice, RoleDrivers, make_drivers
from .common import console, err, usage_error
from .options import (
    CHECKPOINTS,
    TASKSETS_DIR,
    Checkpoints,
    CheckpointUrl,
    Json,
    ModelFlags,
    SkillsDir,
    Sources,
    TasksetOnly,
    TasksetsDir,
    WorldDir,
    grouped,
)

app = typer.Typer(
    help="Review flagged tasks: list, show, approve, reject, send to the fixer.", no_args_is_help=True
)


def _drivers(
    drivers: RoleDrivers | None = None, model: ModelFlags | None = None, skills_dir: Path | None = None
):
    """The role drivers of a decision: the rule drivers, or for `fix` the LLM fixer on the model options."""
    chosen = drivers or RoleDrivers()
    if chosen.driver == DriverChoice.rules:
        return make_drivers(DriverChoice.rules, model or ModelFlags(), render.progress_printer(err))
    return chosen.build(model or ModelFlags(), render.progress_printer(err), skills_dir)


@app.command("list")
def list_items(
    taskset: TasksetOnly = None,
    as_json: Json = False,
    show_all: Annotated[bool, typer.Option("--all", help="Decided and superseded items too.")] = False,
    tasksets_dir: TasksetsDir = TASKSETS_DIR,
) -> None:
    """Every open item with its id, kind, age and a one-line reason (read from <taskset>/reviews/)."""
    from authoring.review import ReviewError, all_items

    try:
        items = [i for i in all_items(tasksets_dir, taskset) if show_all or i.status == "open"]
    except ReviewError as exc:
        raise usage_error(str(exc)) from exc
    if as_json:
        sys.stdout.write(json.dumps({"items": [i.to_dict() for i in items]}, indent=2) + "\n")
        return
    if not items:
        console.print("nothing waits for review")
        return
    render.say(console, f"{len(items)} {'' if show_all else 'open '}review item(s)", style="bold")
    table = render.table()
    table.add_column("id", no_wrap=True)
    table.add_column("task / story", no_wrap=True)
    table.add_column("kind", overflow="fold")
    table.add_column("blocks", no_wrap=True)
    table.add_column("status" if show_all else "age", no_wrap=True, justify="right")
    for i in items:
        table.add_row(
            render.text(i.id),
            render.text(i.task_id or i.story or i.persona or "-"),
            render.text(i.kind),
            "yes" if i.blocking else "no",
            i.status if show_all else i.age(),
        )
    if render.fits(console, table):
        console.print(table)
        render.bullets(console, "reasons", [(i.id, i.reason) for i in items])
    else:
        for i in items:
            render.say(
                console,
                f"{i.task_id or i.story or i.persona or '-'}  {i.kind}  "
                f"{'blocks' if i.blocking else 'minor'}  {i.status if show_all else i.age()}",
                prefix=f"{i.id}  ",
                indent=2,
            )
            render.say(console, i.reason, prefix="    ")


@app.command("show")
def show(
    item_id: Annotated[str, typer.Argument(help="Item id (a unique prefix is enough).")],
    checkpoints: Checkpoints = CHECKPOINTS,
    checkpoint_url: CheckpointUrl = None,
    tasksets_dir: TasksetsDir = TASKSETS_DIR,
) -> None:
    """Everything needed to decide: the task, the flag and its evidence, gates, failing turns, the ladder."""
    from authoring.review import ReviewError, find_item
    from authoring.run import RunError, checkpointer

    try:
        item = find_item(tasksets_dir, item_id)
        state: dict[str, Any] = {}
        if item.source == "graph":
            with checkpointer(checkpoint_url, checkpoints) as saver:
                state = _thread_state(saver, _drivers(), item.run)
    except (ReviewError, RunError) as exc:
        raise usage_error(str(exc)) from exc
    tasks = {tid: a.raw for tid, a in state.get("tasks", {}).items()} or _tasks_on_disk(tasksets_dir, item)
    render.say(
        console,
        f"{item.kind} ({item.severity}{', blocking' if item.blocking else ''}, {item.status}) — "
        f"{item.persona} {item.task_id or item.story or ''}",
        prefix=f"{item.id} ",
        style="bold",
    )
    if item.superseded_by:
        render.say(console, f"superseded by run {item.superseded_by}")
    render.say(console, item.reason, prefix="reason: ")
    if item.evidence:
        render.say(console, item.evidence, prefix="evidence: ")
    if item.decision:
        d = item.decision
        render.say(
            console, f"{d.verdict} by {d.by} at {d.at} {d.note} {d.result}".rstrip(), prefix="decision: "
        )
    task = tasks.get(item.task_id or "")
    if task:
        _show_task(task)
        authored = state.get("tasks", {}).get(item.task_id)
        for name, gate in (authored.cert.gates if authored else {}).items():
            render.say(
                console, f"{'ok' if gate.ok else 'FAIL'} — {gate.detail}", prefix=f"  gate {name}: ", indent=4
            )
        _show_transcript(state, item.task_id or "", item.level)
    if item.story and (item.kind == "fairness" or not task):
        render.say(console, "the ladder side by side", style="bold")
        for tid in sorted(t for t in tasks if t.startswith(f"{item.story}_level")):
            render.say(console, f"{tid} (max_turns {tasks[tid]['eval'].get('max_turns')})", prefix="  ")
            render.say(console, tasks[tid]["prompt"], prefix="    ")


def _thread_state(saver: Any, drivers: Any, thread_id: str) -> dict[str, Any]:
    from authoring.graph import build_graph

    return build_graph(saver).get_state({"configurable": {"thread_id": thread_id}}).values or {}


def _tasks_on_disk(tasksets_dir: Path, item: Any) -> dict[str, Any]:
    folder = tasksets_dir / (item.taskset or "") / (item.persona or "")
    out = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            out[path.stem] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
    return out


def _show_task(task: dict[str, Any]) -> None:
    setup = task.get("setup", {})
    dash = (setup.get("initial_state") or {}).get("dashboard") or {}
    render.say(console, task["prompt"], prefix=f"prompt ({task['difficulty']}): ", indent=2)
    render.say(
        console,
        f"baseline {setup.get('workspace_baseline')!r}, opens "
        f"{setup.get('default_selected_dashboard')!r} with {len(dash.get('widgets') or [])} seeded "
        f"widget(s) and {len(dash.get('generated_widgets') or [])} note(s)",
        prefix="setup: ",
    )
    ev = task.get("eval", {})
    graded = [
        f"{s['tool']} {json.dumps({k: s['args'].get(k) for k in (s.get('graded_args') or s['args'])})}"
        for s in ev.get("required_tools", [])
        if not s.get("optional")
    ]
    render.say(console, "; ".join(graded), prefix="graded calls: ", indent=2)
    for key in (
        "required_widgets",
        "required_generated_widgets",
        "required_layouts",
        "required_widget_defs",
        "required_app_defs",
        "required_tool_results",
    ):
        if ev.get(key):
            console.print(f"{key}: {len(ev[key])}")
    console.print(f"max_turns: {ev.get('max_turns')}")


def call_args(args: dict[str, Any], limit: int = 48) -> str:
    """A failing call's arguments for a reviewer: every key with its whole value, only a long string shortened
    in the middle of its text (never a value cut off after its key: `"currency":` and nothing hid the value
    that mattered)."""

    def show(value: Any) -> str:
        if isinstance(value, str) and len(value) > limit:
            value = value[: limit // 2] + "…" + value[-(limit // 2) :]
        if isinstance(value, (list, dict)):
            text = json.dumps(value, ensure_ascii=False)
            if len(text) > 4 * limit:
                inner = value if isinstance(value, list) else list(value.items())
                return f"[{len(inner)} item(s)]" if isinstance(value, list) else f"{{{len(inner)} key(s)}}"
            return text
        return json.dumps(value, ensure_ascii=False)

    return "{" + ", ".join(f"{json.dumps(k)}: {show(v)}" for k, v in args.items()) + "}"


def _show_transcript(state: dict[str, Any], task_id: str, level: int | None = None) -> None:
    """The last failing attempt at the task by the agent the item is about: under a ladder item of level k,
    ladder-k's (the rung that must pass it), never another rung's."""
    trials = [t for t in state.get("calibration_trials", []) if t.task_id == task_id]
    if level is not None and any(t.agent.startswith("ladder-") for t in trials):
        trials = [t for t in trials if t.agent == f"ladder-{level}"]
    failing = [t for t in trials if t.valid and not t.passed]
    if not failing:
        return
    last = failing[-1]
    render.say(
        console,
        f"({last.agent}, repeat {last.repeat}): {', '.join(last.failure_codes)}",
        prefix="last failing attempt ",
        style="bold",
    )
    for event in last.events:
        mark = "ok " if event["ok"] else "ERR"
        message = "" if event["ok"] else f" — {(event.get('envelope') or {}).get('message', '')}"
        render.say(
            console,
            f"{event['tool']} {call_args(event.get('args') or {})}{message}",
            prefix=f"  {event['index']:>2} {mark} ",
            indent=9,
        )


def _decide(
    item_id: str,
    verdict: str,
    note: str,
    decision: Decision,
    sources: Path = Path("."),
    skills_dir: Path = Path("skills"),
    drivers: Any = None,
    no_repair: Any = None,
) -> None:
    from authoring.decisions import NoRepair, decide
    from authoring.failures import EndpointError
    from authoring.review import AlreadyDecided, ReviewError
    from authoring.run import RunError, checkpointer
    from certify import TaskFileError

    try:
        roles = drivers() if drivers is not None else _drivers()
        with checkpointer(decision.checkpoint_url, decision.checkpoints) as saver:
            outcome = decide(
                decision.tasksets_dir,
                saver,
                roles,
                item_id,
                verdict,
                by=decision.by,
                note=note,
                commit=not decision.no_commit,
                sources_root=sources,
                skills_dir=skills_dir,
            )
    except NoRepair as exc:
        if no_repair is not None:
            no_repair()
        raise usage_error(str(exc), 1) from exc
    except AlreadyDecided as exc:
        raise usage_error(str(exc), 1) from exc
    except (ReviewError, RunError, TaskFileError, EndpointError, ValueError) as exc:
        raise usage_error(str(exc)) from exc
    render.say(
        console,
        f"{item_id} — " + ", ".join(f"{k}: {v}" for k, v in outcome.items() if v),
        prefix=f"{verdict}: ",
    )


By = Annotated[str, typer.Option("--by", help="Who decides (recorded in the lock and the review file).")]
NoCommit = Annotated[bool, typer.Option("--no-commit", help="Record the decision without committing it.")]
Note = Annotated[str, typer.Option("--note")]


@dataclass(frozen=True)
class Decision:
    """The options every decision takes: who decides, where the paused runs and the reviews are."""

    by: By = "reviewer"
    checkpoints: Checkpoints = CHECKPOINTS
    checkpoint_url: CheckpointUrl = None
    tasksets_dir: TasksetsDir = TASKSETS_DIR
    no_commit: NoCommit = False


@app.command("approve")
@grouped
def approve(item_id: str, note: Note = "", decision: Decision = Decision()) -> None:
    """Accept the item as it is."""
    _decide(item_id, "approve", note, decision)


@app.command("reject")
@grouped
def reject(
    item_id: str,
    reason: Annotated[str, typer.Option("--reason", help="Why (required).")],
    decision: Decision = Decision(),
) -> None:
    """Reject the item (a rejected blocker ends its run uncommitted once the run's other blockers are decided)."""
    _decide(item_id, "reject", reason, decision)


@app.command("fix")
@grouped
def fix(
    item_id: str,
    note: Note = "",
    decision: Decision = Decision(),
    sources: Sources = Path("."),
    skills_dir: SkillsDir = Path("skills"),
    drivers: RoleDrivers = RoleDrivers(),
    model: ModelFlags = ModelFlags(),
    world: WorldDir = None,
) -> None:
    """Send the item to the fixer with its evidence; a repair goes back through the gates, the validator,
    ladder fairness and calibration before it is committed (exit 1 when no repair applies). When the defect is
    in the story's facts rather than the task, the edit to the story file is proposed (the field, the fix,
    and a diff where its new value follows from the world). `--driver llm` has the model fixer repair it, on
    the shared model options."""
    _decide(
        item_id,
        "fix",
        note,
        decision,
        sources,
        skills_dir,
        lambda: _drivers(drivers, model, skills_dir),
        lambda: _propose_story_edit(item_id, decision, sources, world),
    )


def _propose_story_edit(item_id: str, decision: Decision, sources: Path, world: Path | None) -> None:
    """What the story writer changes when the fixer cannot repair the task: the story's own facts caused it."""
    from authoring.overlay import OverlayError, world_for
    from authoring.review import find_item
    from authoring.storyfix import story_edits

    from .common import load_world

    item = find_item(decision.tasksets_dir, item_id)
    try:
        loaded = load_world(world_for(sources, world))
    except OverlayError as exc:
        render.warning(err, f"no story edit proposed: {exc}")
        return
    edits = story_edits(item.model_dump(), sources, loaded)
    if not edits:
        render.say(console, f"{item.id}: no story field to change was found (approve or reject it)")
        return
    for edit in edits:
        said = f" → {edit.value!r}" if edit.value is not None else ""
        render.say(console, f"{edit.key}: {edit.how}{said}", prefix=f"propose {edit.file} ", indent=2)
        if edit.diff:
            console.print(edit.diff.rstrip("\n"), markup=False, soft_wrap=True, highlight=False)
