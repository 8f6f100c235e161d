"""The author's contract, whichever driver writes the level: what it works from, what it hands back, and the
episode every level of a story starts from."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from simulator import World

from ...factcheck import ResolvedStory
from ...sources import Persona


class AuthoringError(Exception):
    """The author cannot produce the level (a fact the level needs is missing)."""


@dataclass
class AuthorContext:
    """What an author session works from; everything in it is plain data or the (immutable) world."""

    world: World
    persona: Persona
    story: ResolvedStory
    baseline: str
    backends: list[str]
    skills: list[str]
    siblings: tuple[str, ...] = ()
    defaults: dict[str, Any] | None = None
    # the sibling stories that name their own deadline (facts.deadline): the persona's deadlines are spread over
    # the others' requests, so that each is still said
    deadline_stories: tuple[str, ...] = ()
    # the names of the widgets the persona's stories' Find levels hide (their first targets): a level of
    # another story works on one of them only where nothing else will do, since a reader of the published set
    # would read that Find's answer in its request
    finds: tuple[str, ...] = ()
    # the Find repairs of every persona of the sources, in the order drawn from their task ids, each with how many
    # widgets its board places (`find_order`): where a Find repair's target sits is dealt over them all, so that
    # no fixed place holds the target on more than its share of a taskset's Find repairs (`seeding._dealt`)
    find_order: tuple[tuple[str, int], ...] = ()


def find_order(root: Path | str, taskset: Path | str | None = None) -> tuple[tuple[str, int], ...]:
    """The Find levels of the repair stories of every persona under the sources `root`, as (task id
    `<persona>|<story>_level1`, as `seeding._drawn` keys it; widgets its board places), in the order a hash of each
    id draws. The places a taskset's Find repair targets take are dealt over these (`seeding.dealt_places`): a
    share across a taskset is what a reader of a fixed place wins, and drawn per task alone (a hash each) six
    repairs over the four inner places of six-widget boards put three on one place, or three in the middle row,
    on most tasksets. How many widgets a board places is read from the `taskset` already written (the dealing
    only orders a board, so it does not change them), `FIND_BOARD` where a task is not written yet. A story that
    does not load is left out (`check` reports it). Read again only when a file changes."""
    from ...sources import story_paths

    base = Path(root)
    personas = sorted(p.stem for p in (base / "personas").glob("*.md")) or sorted(
        p.parent.name for p in base.glob("*/README.md")
    )
    files = tuple((persona, str(path)) for persona in personas for path in story_paths(base, persona))
    written = Path(taskset) if taskset is not None else None
    stamp = []
    for persona, path in files:
        paths = [path]
        if written is not None:
            paths.append(str(written / persona / f"{Path(path).stem}_level1.json"))
        for one in paths:
            with contextlib.suppress(OSError):
                st = os.stat(one)
                stamp.append((one, st.st_mtime_ns, st.st_size))
    return _find_order(files, str(written) if written is not None else "", tuple(stamp))


FIND_BOARD = 6  # widgets on a Find repair's board: the target, the decoy and look-alikes up to this many


@functools.lru_cache(maxsize=16)
def _find_order(
    files: tuple[tuple[str, str], ...], taskset: str, stamp: tuple[Any, ...]
) -> tuple[tuple[str, int], ...]:
    from ...sources import load_story

    out = []
    for persona, path in files:
        try:
            story = load_story(Path(path), persona)
        except Exception:  # a story that does not load is check's to report
            continue
        facts = story.facts
        if not (facts.kind == "repair" or (facts.kind is None and bool(facts.seeded_wrong))):
            continue
        placed = FIND_BOARD
        if taskset:
            with contextlib.suppress(OSError, ValueError, KeyError, TypeError, AttributeError):
                task = json.loads((Path(taskset) / persona / f"{story.slug}_level1.json").read_text())
                placed = len(task["setup"]["initial_state"]["dashboard"]["widgets"])
        out.append((f"{persona}|{story.slug}_level1", placed))
    return tuple(sorted(out, key=lambda e: hashlib.sha256(e[0].encode()).digest()))


def persona_root(persona: Persona) -> Path:
    """The sources root a persona was loaded from (`personas/<slug>.md` or `<slug>/README.md` under it)."""
    return Path(persona.file).parent.parent


def persona_finds(resolved: Iterable[ResolvedStory]) -> tuple[str, ...]:
    """The names of the first targets of a persona's stories (what their Find levels hide): `AuthorContext.finds`."""
    return tuple(dict.fromkeys(r.targets[0].name for r in resolved if r.targets))


def own_deadlines(resolved: Iterable[ResolvedStory]) -> tuple[str, ...]:
    """The stories (slugs) of a persona's that name their own deadline: `AuthorContext.deadline_stories`."""
    return tuple(r.story.slug for r in resolved if r.story.facts.deadline)


@dataclass
class Draft:
    task: dict[str, Any]
    notes: list[str] = field(default_factory=list)


class AuthorDriver(Protocol):
    name: str

    def draft(
        self, ctx: AuthorContext, level: int, feedback: list[str], history: list[dict[str, Any]]
    ) -> Draft:
        """Write the task of `level`; `feedback` holds gate results and review flags from earlier rounds, and
        `history` the session so far (the driver appends to it; it must stay JSON-serialisable)."""
        ...


def story_setup(
    ctx: AuthorContext,
    widgets: Iterable[dict[str, Any]] = (),
    notes: Iterable[dict[str, Any]] = (),
    *,
    allowed_tools: Iterable[str] | None = None,
) -> dict[str, Any]:
    """The episode a level of the story starts from: the story's dashboard, with the widgets and notes the level
    seeds on it, and the tools an agent may call when the level states them (the LLM author's inspection
    episodes start from the bare dashboard)."""
    s = ctx.story
    dashboard: dict[str, Any] = {
        "name": s.facts.dashboard,
        "activate": False,
        "tabs": [{"id": s.tab_id, "name": s.tab_name}],
        "widgets": list(widgets),
    }
    seeded_notes = list(notes)
    if seeded_notes:
        dashboard["generated_widgets"] = seeded_notes
    setup: dict[str, Any] = {
        "workspace_baseline": ctx.baseline,
        "workspace_backends": list(ctx.backends),
        "workspace_skills": list(ctx.skills),
        "default_selected_dashboard": s.facts.dashboard,
    }
    if allowed_tools is not None:
        setup["allowed_tools"] = list(allowed_tools)
    setup["initial_state"] = {"dashboard": dashboard}
    return setup
