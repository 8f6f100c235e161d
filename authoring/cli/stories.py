"""`taskforge check` and `taskforge new`: the story writer's loop — scaffold, fill in, check, before authoring."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from authoring import render

from .common import console, err, load_world, usage_error
from .options import Json, Sources, Strict, WorldDir
from .world import close_to

new_app = typer.Typer(
    help="Scaffold a persona or a story to fill in (every field explained).", no_args_is_help=True
)


def _draft(out: Console, world: Any, report: Any) -> bool:
    """Author the twenty tasks with the rule driver in memory (nothing written) and run their gates, the
    same-level prompt variety and the heuristic staircase: what `taskforge author` would find, in seconds."""
    from authoring.judged import draft_audit
    from authoring.roles.author import AuthorContext, AuthoringError, RuleAuthor
    from authoring.taskset import STANDARD_DEFAULTS
    from authoring.variety import masks_for, rotation, same_level_similarity
    from certify.agents import make_agent
    from certify.calibrate import analyse
    from certify.gates import certify_task
    from certify.task import parse_task
    from certify.trial import run_trial

    baseline = next((b for b in sorted(world.baselines) if b.endswith("workspace-a")), "")
    backends = list(world.default_backends)
    author, tasks, prompts, rows = RuleAuthor(), [], [], []
    siblings = tuple(r.story.slug for r in report.resolved)
    for resolved in report.resolved:
        ctx = AuthorContext(
            world,
            report.source,
            resolved,
            baseline,
            backends,
            sorted(world.skills),
            siblings,
            STANDARD_DEFAULTS,
        )
        for level in range(5):
            task_id = f"{resolved.story.slug}_level{level}"
            try:
                task = parse_task(author.draft(ctx, level, [], []).task, f"{task_id}.json", STANDARD_DEFAULTS)
            except AuthoringError as exc:
                rows.append((task_id, {"author": {"ok": False, "detail": str(exc)}}))
                continue
            audit = draft_audit(world, task, f"{task.id}.json")
            rows.append((task.id, certify_task(world, task, f"{task.id}.json", judge_audit=audit).gates))
            tasks.append(task)
            prompts.append((resolved.story.slug, task.difficulty, task.prompt))
    certified = sum(all(render.gate_ok(g) for g in gates.values()) for _, gates in rows)
    render.gate_table(out, f"Draft with the rule author ({certified}/{len(rows)} certify)", rows)
    variety = same_level_similarity(prompts)
    render.say(
        out,
        "  ".join(f"{k} {v:.3f}" for k, v in variety.items()),
        prefix="same-level prompt similarity (word trigrams, lower is more varied): ",
    )
    rotated = rotation(prompts, masks_for(world, tasks, [report.source.voice]))
    render.say(out, rotated.summary(), prefix="rotation-aware variety: ")
    heuristic = make_agent("heuristic")

    async def trials():
        return [await run_trial(world, t, heuristic) for t in tasks]

    record = analyse(
        asyncio.run(trials()),
        persona=report.persona,
        taskset="check",
        agent="heuristic",
        repeats=1,
        min_attempts=1,
    )
    rates = "  ".join(
        f"{s.level} {'-' if s.pass_rate is None else f'{s.pass_rate:.0%}'}" for s in record.levels
    )
    render.say(
        out,
        f"{rates}: {record.verdict if record.holds else record.verdict.upper()}",
        prefix="heuristic staircase (one attempt per task): ",
    )
    for d in record.defects:
        render.say(out, f"{d.task_id}: {'; '.join(d.fingerprint)}", prefix="defect: ")
    for s in record.shortcuts:
        render.say(out, f"{s.task_id}: {s.detail}", prefix="shortcut: ")
    return certified == len(rows) and record.holds


def check(
    persona: Annotated[str, typer.Argument(help="Persona slug (personas/<p>.md).", show_default=False)],
    sources: Sources = Path("."),
    world: WorldDir = None,
    strict: Strict = False,
    draft: Annotated[
        bool,
        typer.Option(
            "--draft",
            help="Also author the tasks in memory with the rule author "
            "and run their gates and the heuristic staircase.",
        ),
    ] = False,
    as_json: Json = False,
) -> None:
    """Check a persona's stories against the world, without authoring.

    Every facts error (with the nearest names and the allowed options) and the warnings `taskforge author`
    would show. Exit 0 when clean, 1 on warnings with --strict or a failing --draft, 2 on errors."""
    from authoring.checks import check_persona

    w = load_world(world)
    report = check_persona(sources, persona, w)
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        for e in report.errors:
            render.error(err, str(e))
        for warning in report.warnings:
            render.warning(console, str(warning))
        for r in report.resolved:
            render.say(
                console,
                f"{r.kind}; {r.carried_key}={r.carried_value!r} carried by the policy; "
                f"{', '.join(t.widget_id for t in r.targets)}; grounded in {r.governance.source}",
                prefix=f"{r.story.slug}: ",
            )
        verdict = "errors" if report.errors else "ok"
        render.say(
            console,
            f"{persona}: {verdict}, {len(report.errors)} error(s), {len(report.warnings)} warning(s), "
            f"{len(report.resolved)} story(ies) resolved against world {w.name}",
        )
    if report.errors:
        raise typer.Exit(2)
    if draft and not as_json and not _draft(console, w, report):
        raise typer.Exit(1)
    raise typer.Exit(1 if strict and report.warnings else 0)


@new_app.command("persona")
def new_persona(
    persona: Annotated[
        str, typer.Argument(help="Persona slug (lower-case, digits, _ or -).", show_default=False)
    ],
    sources: Sources = Path("."),
) -> None:
    """Write personas/<P>.md to fill in."""
    from authoring.scaffold import persona_path, persona_text, write_new
    from authoring.sources import SourceError

    try:
        path = write_new(persona_path(sources, persona), persona_text(persona))
    except SourceError as exc:
        raise usage_error(str(exc)) from exc
    render.say(
        console,
        f"wrote {path}: replace every FILL-ME, then `taskforge new story {persona} STORY` four times "
        f"and `taskforge check {persona}`",
    )


@new_app.command("story")
def new_story(
    persona: Annotated[str, typer.Argument(help="Persona slug.", show_default=False)],
    story: Annotated[str, typer.Argument(help="Story slug (names its five task files).", show_default=False)],
    sources: Sources = Path("."),
    widget: Annotated[
        str | None,
        typer.Option(
            "--widget",
            help="Prefill the target from this widget (name or id) and list its parameters and options.",
        ),
    ] = None,
    world: WorldDir = None,
) -> None:
    """Write stories/<P>/<S>.md to fill in, every field explained."""
    from authoring.scaffold import story_path, story_text, write_new
    from authoring.sources import SourceError

    info = None
    if widget is not None:
        from authoring.worldinfo import lookup

        w = load_world(world)
        matches = [m for m in lookup(w, widget, sample=0) if m["kind"] == "widget"]
        if len(matches) != 1:
            why = (
                f"'{widget}' names {len(matches)} widgets (use its id; taskforge world show '{widget}')"
                if matches
                else f"no widget called '{widget}'{close_to(w, widget)}"
            )
            raise usage_error(f"--widget: {why}")
        info = matches[0]
    try:
        path = write_new(story_path(sources, persona, story), story_text(persona, story, info))
    except SourceError as exc:
        raise usage_error(str(exc)) from exc
    if not (sources / "personas" / f"{persona}.md").is_file():
        render.warning(err, f"no persona file for '{persona}' yet: taskforge new persona {persona}")
    render.say(console, f"wrote {path}: replace every FILL-ME, then `taskforge check {persona}`")
