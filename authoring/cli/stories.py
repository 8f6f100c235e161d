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


def _draft_tables(out: Console, world: Any, report: Any, drafted: Any) -> None:
    """What `check --draft` prints of the draft besides its errors (authoring/draft.py): the gate table, the
    flags, the staircase and the review items `taskforge author` would print, and the prompts' variety."""
    from authoring.factcheck import owned_sentences
    from authoring.run import Outcome
    from authoring.taskset import STANDARD_DEFAULTS
    from authoring.variety import masks_for, rotation, same_level_similarity
    from certify import parse_task

    from .author import _summary

    _summary(Outcome("draft", "", "draft", drafted.items, state=drafted.state))
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


def _draft_verdict(report: Any, drafted: Any) -> str:
    """One line on what the draft ran and what its first `author` run would do."""
    info = report.drafted or {}
    expected = 5 * len(info.get("stories") or [])
    good = drafted.ok and drafted.certified == expected
    left = info.get("stories_left_out") or []
    counted = f"{report.persona}: draft {drafted.certified}/{expected} certify, {len(drafted.items)} blocking item(s)"
    folded = len(drafted.items) - len(report.draft_errors)
    if folded > 0:
        # an item whose story and field a facts error already names is not printed again: say so, or the count
        # reads as items nobody printed
        counted += f" ({folded} of them the consequence of the facts errors above, not printed again)"
    if left:
        return (
            f"{counted}: drafted without {', '.join(left)} (a facts error stops it), the other stories' levels "
            f"{'would' if good else 'would NOT'} certify; the persona's staircase is checked once every story drafts"
        )
    return f"{counted}: the first `taskforge author` run {'would certify' if good else 'would NOT certify'}"


def check(
    persona: Annotated[str, typer.Argument(help="Persona slug (personas/<p>.md).", show_default=False)],
    sources: Sources = Path("."),
    world: WorldDir = None,
    strict: Strict = False,
    static: Annotated[
        bool,
        typer.Option(
            "--static",
            help="Check the facts only, without the draft (about half the time): what the agents "
            "make of the requests, the gates and the ladder calibration are then not checked.",
        ),
    ] = False,
    draft: Annotated[
        bool,
        typer.Option(
            "--draft",
            help="Also print what the draft ran: its gate table, flags, staircase, review items and prompt "
            "variety (and draft with a model --reference-agent, which plain check does not).",
        ),
    ] = False,
    reference_agent: Annotated[
        str,
        typer.Option(
            "--reference-agent",
            help="The calibration agent the author run will use: with `ladder` (author's default), the facts "
            "the ladder would block on are errors; the draft calibrates with it.",
        ),
    ] = "ladder",
    as_json: Json = False,
) -> None:
    """Check a persona's stories against the world, without authoring.

    Every facts error (nearest names, allowed options), then the draft:
    the first `author` run itself with the rule drivers, in memory (author
    rounds, gates, validators, fairness, ladder calibration), of every story
    without a facts error. Each item it would block on is an error naming the
    story file, the facts field and the fix. Clean means the first `author`
    run certifies. Exit 0 when clean, 1 on warnings with --strict, 2 on
    errors (the facts' or the draft's)."""
    with settled_after_loading() as settled:
        _check(persona, sources, world, strict, static, draft, reference_agent, as_json, settled)


def _check(
    persona: str,
    sources: Path,
    world: Path | None,
    strict: bool,
    static: bool,
    draft: bool,
    reference_agent: str,
    as_json: bool,
    settled: Callable[[], None],
) -> None:
    from authoring.checks import DRAFTABLE, check_persona
    from authoring.overlay import OverlayError, world_for

    from .options import TASKSET, TASKSETS_DIR

    if static and draft:
        raise usage_error("--static checks without the draft that --draft prints: give one of them")
    drafting = not static and (draft or reference_agent in DRAFTABLE)
    if drafting:
        import authoring.draft  # noqa: F401  (loaded with the rest, before the collector comes back)
    try:
        w = load_world(world_for(sources, world))
    except OverlayError as exc:
        raise usage_error(str(exc)) from exc
    settled()
    report = check_persona(sources, persona, w, ladder=reference_agent == "ladder")
    outcome = None
    if drafting:
        from authoring.draft import check_drafted

        tasksets = sources / TASKSETS_DIR if not TASKSETS_DIR.is_absolute() else TASKSETS_DIR
        outcome = check_drafted(sources, report, w, tasksets, TASKSET, reference_agent)
    elif not static:
        report.drafted = {
            "ran": False,
            "why": f"a model reference ({reference_agent}) drafts with --draft only",
        }
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        if outcome is not None and draft:
            _draft_tables(console, w, report, outcome)
        for e in report.all_errors:
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
        if outcome is not None:
            render.say(console, _draft_verdict(report, outcome))
        elif report.drafted is not None:
            render.say(console, f"{persona}: not drafted: {report.drafted['why']}")
        verdict = "errors" if not report.ok else "ok"
        count = len(report.all_errors)
        render.say(
            console,
            f"{persona}: {verdict}, {count} error(s), {len(report.warnings)} warning(s), "
            f"{len(report.resolved)} story(ies) resolved against world {w.name}"
            + (" (facts only: --static)" if static else ""),
        )
    if not report.ok:
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
