"""`taskforge check` and `taskforge new`: the story writer's loop — scaffold, fill in, check, before authoring."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from authoring import render
from authoring.heap import settled_after_loading

from .common import console, err, load_world, usage_error
from .options import Json, Sources, Strict, WorldDir
from .world import close_to

new_app = typer.Typer(
    help="Scaffold a persona or a story to fill in (every field explained).", no_args_is_help=True
)


def _draft(out: Console, world: Any, report: Any, sources: Path, reference_agent: str = "ladder") -> bool:
    """The authoring run itself with the rule drivers, in memory and stopped before anything is written (see
    authoring/draft.py): the gate table, the flags, the staircase and the review items `taskforge author`
    would print, and whether its first run certifies."""
    from authoring.draft import draft_persona
    from authoring.factcheck import owned_sentences
    from authoring.run import Outcome
    from authoring.taskset import STANDARD_DEFAULTS
    from authoring.variety import masks_for, rotation, same_level_similarity
    from certify import parse_task

    from .author import _summary
    from .options import TASKSET, TASKSETS_DIR

    tasksets = sources / TASKSETS_DIR if not TASKSETS_DIR.is_absolute() else TASKSETS_DIR
    drafted = draft_persona(sources, report.persona, world, tasksets, TASKSET, reference_agent)
    expected = 5 * len(report.resolved)
    verdict = "would certify" if drafted.ok else "would NOT certify"
    summary = (
        f"{report.persona}: draft {drafted.certified}/{expected} certify, "
        f"{len(drafted.items)} blocking item(s): the first `taskforge author` run {verdict}"
    )
    _summary(Outcome("draft", summary, "draft", drafted.items, state=drafted.state))
    prompts = [(t.story, t.level, t.raw.get("prompt", "")) for t in drafted.tasks.values()]
    if prompts:
        tasks = [parse_task(t.raw, f"{tid}.json", STANDARD_DEFAULTS) for tid, t in drafted.tasks.items()]
        variety = same_level_similarity(prompts)
        render.say(
            out,
            "  ".join(f"{k} {v:.3f}" for k, v in variety.items()),
            prefix="same-level prompt similarity (word trigrams, lower is more varied): ",
        )
        owned = owned_sentences(report.resolved)
        rotated = rotation(prompts, masks_for(world, tasks, [report.source.voice], owned))
        render.say(out, rotated.summary(), prefix="rotation-aware variety: ")
    return drafted.ok and drafted.certified == expected


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
    reference_agent: Annotated[
        str,
        typer.Option(
            "--reference-agent",
            help="The calibration agent the author run will use: with `ladder` (author's default), the facts "
            "the ladder would block on are errors; --draft calibrates with it.",
        ),
    ] = "ladder",
    as_json: Json = False,
) -> None:
    """Check a persona's stories against the world, without authoring.

    Every facts error (with the nearest names and the allowed options) and the warnings `taskforge author`
    would show. Exit 0 when clean, 1 on warnings with --strict or a failing --draft, 2 on errors."""
    with settled_after_loading() as settled:
        _check(persona, sources, world, strict, draft, reference_agent, as_json, settled)


def _check(
    persona: str,
    sources: Path,
    world: Path | None,
    strict: bool,
    draft: bool,
    reference_agent: str,
    as_json: bool,
    settled: Callable[[], None],
) -> None:
    from authoring.checks import check_persona
    from authoring.overlay import OverlayError, world_for

    if draft and not as_json:
        import authoring.draft  # noqa: F401  (loaded with the rest, before the collector comes back)
    try:
        w = load_world(world_for(sources, world))
    except OverlayError as exc:
        raise usage_error(str(exc)) from exc
    settled()
    report = check_persona(sources, persona, w, ladder=reference_agent == "ladder")
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        for e in [*report.errors, *report.ladder_errors]:
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
        verdict = "errors" if not report.ok else "ok"
        count = len(report.errors) + len(report.ladder_errors)
        render.say(
            console,
            f"{persona}: {verdict}, {count} error(s), {len(report.warnings)} warning(s), "
            f"{len(report.resolved)} story(ies) resolved against world {w.name}",
        )
    if report.errors:
        raise typer.Exit(2)
    # errors the ladder would block on do not stop a draft: it shows them blocking, with the rest
    if draft and not as_json and not _draft(console, w, report, sources, reference_agent):
        raise typer.Exit(2 if report.ladder_errors else 1)
    if report.ladder_errors:
        raise typer.Exit(2)
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
