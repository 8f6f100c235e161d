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

new_app = typer.Typer(
    help="Scaffold a persona or a story to fill in (every field explained).", no_args_is_help=True
)

Sources = Annotated[Path, typer.Option("--sources", help="Folder holding personas/ and stories/.")]
WorldOpt = Annotated[Path | None, typer.Option("--world", help="World directory (default: built-in).")]


def _draft(out: Console, world: Any, report: Any) -> bool:
    """Author the twenty tasks with the rule driver in memory (nothing written) and run their gates, the
    same-level prompt variety and the heuristic staircase: what `taskforge author` would find, in seconds."""
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
            rows.append((task.id, certify_task(world, task, f"{task.id}.json").gates))
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


def check_cmd(
    persona: Annotated[str, typer.Argument(help="Persona slug (personas/<p>.md).", show_default=False)],
    sources: Sources = Path("."),
    world: WorldOpt = None,
    strict: Annotated[bool, typer.Option("--strict", help="Fail on warnings too.")] = False,
    draft: Annotated[
        bool,
        typer.Option(
            "--draft",
            help="Also author the tasks in memory with the rule author "
            "and run their gates and the heuristic staircase.",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Check a persona's stories against the world, without authoring.

    Every facts error (with the nearest names and the allowed options) and the warnings `taskforge author`
    would show. Exit 0 when clean, 1 on warnings with --strict or a failing --draft, 2 on errors."""
    from authoring.checks import check_persona
    from authoring.cli import _load_world

    out, err = render.console(), render.console(stderr=True)
    w = _load_world(world)
    report = check_persona(sources, persona, w)
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        for e in report.errors:
            render.error(err, str(e))
        for warning in report.warnings:
            render.warning(out, str(warning))
        for r in report.resolved:
            render.say(
                out,
                f"{r.kind}; {r.carried_key}={r.carried_value!r} carried by the policy; "
                f"{', '.join(t.widget_id for t in r.targets)}; grounded in {r.governance.source}",
                prefix=f"{r.story.slug}: ",
            )
        verdict = "errors" if report.errors else "ok"
        render.say(
            out,
            f"{persona}: {verdict}, {len(report.errors)} error(s), {len(report.warnings)} warning(s), "
            f"{len(report.resolved)} story(ies) resolved against world {w.name}",
        )
    if report.errors:
        raise typer.Exit(2)
    if draft and not as_json and not _draft(out, w, report):
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

    out, err = render.console(), render.console(stderr=True)
    try:
        path = write_new(persona_path(sources, persona), persona_text(persona))
    except SourceError as exc:
        render.error(err, str(exc))
        raise typer.Exit(2) from exc
    render.say(
        out,
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
    world: WorldOpt = None,
) -> None:
    """Write stories/<P>/<S>.md to fill in, every field explained."""
    from authoring.scaffold import story_path, story_text, write_new
    from authoring.sources import SourceError

    out, err = render.console(), render.console(stderr=True)
    info = None
    if widget is not None:
        from authoring.cli import _load_world
        from authoring.worldinfo import lookup, suggestions

        w = _load_world(world)
        matches = [m for m in lookup(w, widget, sample=0) if m["kind"] == "widget"]
        if len(matches) != 1:
            close = suggestions(w, widget)
            why = (
                f"'{widget}' names {len(matches)} widgets (use its id; taskforge world show '{widget}')"
                if matches
                else f"no widget called '{widget}'"
                + (f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else "")
            )
            render.error(err, f"--widget: {why}")
            raise typer.Exit(2)
        info = matches[0]
    try:
        path = write_new(story_path(sources, persona, story), story_text(persona, story, info))
    except SourceError as exc:
        render.error(err, str(exc))
        raise typer.Exit(2) from exc
    if not (sources / "personas" / f"{persona}.md").is_file():
        render.warning(err, f"no persona file for '{persona}' yet: taskforge new persona {persona}")
    render.say(out, f"wrote {path}: replace every FILL-ME, then `taskforge check {persona}`")


def register(app: typer.Typer) -> None:
    app.command("check")(check_cmd)
    app.add_typer(new_app, name="new")
