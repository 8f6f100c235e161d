"""The author's contract, whichever driver writes the level: what it works from, what it hands back, and the
episode every level of a story starts from."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
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
