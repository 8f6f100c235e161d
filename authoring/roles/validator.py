"""The validator role: fresh eyes on one certified task, with nothing but the task file and the world.

It can only raise flags; the author (and then a person) decides. The rule driver applies the mechanical part
of skills/task-validator.md as lints; the LLM driver reads the skill itself, gets the task file and a digest of
what the world serves for it, and answers with a `ValidatorReply`.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, ClassVar, Literal, Protocol

from pydantic import BeforeValidator, Field

from certify import Task, reference_calls, replay, words
from simulator import TOOL_NAMES, SetupError, Workspace, World, option_values

from ..flags import Flag
from ..lints import find_giveaways, incoherences
from .author import prompt_word_limit
from .findings import Finding, raise_flag
from .llm import Endpoint, RoleReply, VerdictReply, clip, spelled, task_json
from .prompts import render_prompt

MAX_ROWS = 8
MAX_NEIGHBOURS = 25


class ValidatorDriver(Protocol):
    name: str

    def review(self, task: Task, world: World, persona: str) -> list[Flag]: ...


def _observable_text(task: Task, world: World) -> str:
    """Everything an agent solving the task could have read: the prompt, the rows and results the reference
    receives, the skills and resources it reads, and the seeded notes."""
    episode = replay(world, task, reference_calls(task))
    parts = [task.prompt]
    for event in episode.events:
        if event.ok and event.tool in (
            "get_widget_data",
            "get_skill_content",
            "read_workspace_resource",
            "get_workspace_prompt",
            "get_workspace_snapshot",
            "read_widget",
        ):
            parts.append(json.dumps(event.envelope.get("data"), ensure_ascii=False))
    return "\n".join(parts)


class RuleValidator:
    name = "rules"

    def review(self, task: Task, world: World, persona: str) -> list[Flag]:
        flags: list[Flag] = []
        meta = task.meta
        story = meta.story if meta else None

        def flag(check: str, severity: str, reason: str, evidence: str = "", suggestion: str = "") -> None:
            finding = Finding(check, severity, reason, evidence, suggestion)
            flags.append(raise_flag("validator", persona, story, task, task.level, finding))

        try:
            ws = Workspace.start(world, task.setup)
        except SetupError as exc:
            flag("reachability", "blocker", "the setup does not start", str(exc))
            return flags
        built = {
            s.args.get("name")
            for s in task.eval.required_tools
            if s.tool == "manage_backends" and s.args.get("operation") == "add"
        }
        for req in task.eval.required_widgets:
            if ws._origin_or_none(req.origin) is None and req.origin not in built:
                flag(
                    "reachability",
                    "blocker",
                    f"graded origin '{req.origin}' is neither connected nor built",
                    json.dumps(req.model_dump()),
                )

        reference = len(task.eval.reference_steps())
        budget = task.eval.turn_budget
        if budget is not None and budget < reference:
            flag(
                "budget",
                "blocker",
                f"max_turns {budget} is below the reference's {reference} calls",
                suggestion=f"max_turns = {reference + 3}",
            )
        elif budget is not None and budget > 2 * reference + 6:
            flag("budget", "minor", f"max_turns {budget} is far above the reference's {reference} calls")

        observable = _observable_text(task, world).casefold()
        for note in task.eval.required_generated_widgets:
            for fact in note.data_contains:
                if fact.casefold() not in observable and not _numeric_seen(fact, observable):
                    flag(
                        "possibility",
                        "blocker",
                        f"a graded note fact is nowhere an agent can read it: '{fact}'",
                        f"note '{note.name_contains}'",
                    )

        words = task.prompt.split()
        named_tools = [t for t in TOOL_NAMES if re.search(rf"\b{t}\b", task.prompt)]
        if named_tools:
            flag(
                "single_ask",
                "blocker",
                f"the prompt names tools: {named_tools}",
                suggestion="describe the work",
            )
        uuids = [w.uuid for d in ws.dashboards.values() for w in d.widgets if w.uuid in task.prompt]
        if uuids:
            flag(
                "single_ask",
                "blocker",
                f"the prompt quotes widget uuids {uuids[:3]} (closed-world episodes discover them)",
            )
        ids = sorted({w for f in world.backends.values() for w in f.catalog.widgets if w in task.prompt})
        if ids:
            flag("single_ask", "minor", f"the prompt quotes catalog widget ids {ids[:3]}")
        if len(words) > prompt_word_limit(task.eval.judged is not None):
            flag("single_ask", "minor", f"the prompt runs to {len(words)} words; one clear ask reads shorter")

        if task.level == 1 and meta is not None:
            for hidden in meta.hidden:
                # a target read from a planted pointer (`source`) is found there, not by the description
                if (
                    hidden.kind == "target"
                    and hidden.source is None
                    and not _findable(task, world, hidden.value)
                ):
                    flag(
                        "findability",
                        "minor",
                        f"the description may not lead to '{hidden.value}': other widgets "
                        "of the same origin serve more of what the prompt describes",
                    )
        for reason in find_giveaways(task, world):
            flag(
                "findability",
                "blocker",
                reason,
                suggestion="describe another target of the story, or seed a "
                "neighbour of the same app that takes the same values",
            )
        for reason in incoherences(task):
            flag("coherence", "blocker", reason)
        return flags


def _numeric_seen(fact: str, text: str) -> bool:
    from certify import expected_number, numbers_in

    number = expected_number(fact)
    if number is None:
        return False
    return any(abs(number - n) <= 1e-9 for n in numbers_in(text))


def _words(text: str) -> set[str]:
    return words(text, longer_than=3, stop=frozenset())


def _findable(task: Task, world: World, name: str) -> bool:
    """Whether the catalog widget called `name` is among the best matches of the prompt in its origin, by what
    each widget serves (its columns and what it can be filtered by), as the Find rung reads a description. Not by
    the catalog's own words: a find hint must not be the catalog's description (`check` refuses one whose words
    make the target the description matcher's pick), so a measure by those words would flag every hint that
    obeys that rule."""
    from certify import BM25, served_text

    for fixture in world.backends.values():
        widgets = list(fixture.catalog.widgets.values())
        mine = next((i for i, w in enumerate(widgets) if w.name == name), None)
        if mine is None:
            continue
        scores = BM25([served_text(w.schema()) for w in widgets]).scores(task.prompt)
        better = sum(1 for s in scores if s > scores[mine])
        return better < 5
    return True


# -------------------------------------------------------------------------------------------- LLM driver
Check = Literal["reachability", "findability", "possibility", "budget", "single_ask"]


class ValidatorFinding(RoleReply):
    check: Annotated[Check, BeforeValidator(spelled("_"))]
    severity: Literal["blocker", "minor"]
    reason: str = Field(min_length=1)
    evidence: str = ""
    suggestion: str = ""


class ValidatorReply(VerdictReply):
    clean: ClassVar[str] = "approve"
    verdict: Literal["approve", "flag"]
    flags: list[ValidatorFinding] = Field(default_factory=list)


def _widget_refs(task: Task) -> list[tuple[str, str, dict[str, Any] | None]]:
    """(origin, widget_id, data_args) the task grades or reads, in first-seen order."""
    refs: list[tuple[str, str, dict[str, Any] | None]] = []
    for req in task.eval.required_widgets:
        # a widget graded by name has no id; as before, it matches no catalog entry below
        refs.append((req.origin, req.widget_id, dict(req.data_args)))  # type: ignore[arg-type]
    for step in task.eval.required_tools:
        origin, widget_id = step.args.get("origin"), step.args.get("widget_id")
        if isinstance(origin, str) and isinstance(widget_id, str):
            data_args = step.args.get("data_args")
            refs.append((origin, widget_id, dict(data_args) if isinstance(data_args, dict) else None))
    out: list[tuple[str, str, dict[str, Any] | None]] = []
    for ref in refs:
        if ref not in out:
            out.append(ref)
    return out


def world_digest(task: Task, world: World) -> dict[str, Any]:
    """What a reviewer needs from the world to check this one task, without the story behind it."""
    try:
        ws = Workspace.start(world, task.setup)
    except SetupError as exc:
        return {"setup_error": str(exc)}
    widgets: dict[tuple[str, str], dict[str, Any]] = {}
    for origin, widget_id, data_args in _widget_refs(task):
        key = (origin, widget_id)
        if key not in widgets:
            conn = next(
                (c for c in ws.connections if c.name == origin and widget_id in c.catalog.widgets), None
            )
            if conn is None:
                widgets[key] = {
                    "origin": origin,
                    "widget_id": widget_id,
                    "served": False,
                    "note": "no backend of the setup serves it (one the task builds is defined in its "
                    "manage_backends step)",
                }
                continue
            w = conn.catalog.widgets[widget_id]
            apps = conn.catalog.apps_of(widget_id)
            near = {i for a in apps for i in conn.catalog.app_widgets(a)}
            neighbours = [
                {"name": o.name, "description": str(o.definition.get("description") or "")}
                for o in conn.catalog.widgets.values()
                if o.widget_id != widget_id
                and (
                    o.widget_id in near
                    or (not apps and o.definition.get("category") == w.definition.get("category"))
                )
            ]
            widgets[key] = {
                "origin": origin,
                "widget_id": widget_id,
                "name": w.name,
                "description": str(w.definition.get("description") or ""),
                "category": w.definition.get("category"),
                "apps": apps,
                "params": [
                    {
                        "name": p.get("paramName"),
                        "default": p.get("value"),
                        "options": option_values(p),
                    }
                    for p in w.option_params
                ],
                "same_app_widgets": neighbours[:MAX_NEIGHBOURS],
                "rows": [],
            }
        entry = widgets[key]
        if entry.get("served") is False or data_args is None:
            continue
        if any(r["data_args"] == data_args for r in entry["rows"]):
            continue
        envelope = ws.call(
            "get_widget_data", {"origin": origin, "widget_id": widget_id, "data_args": data_args}
        )
        rows = envelope.data.get("data", []) if envelope.ok and isinstance(envelope.data, dict) else []
        entry["rows"].append(
            {
                "data_args": data_args,
                "ok": envelope.ok,
                "served": rows[:MAX_ROWS] if envelope.ok else envelope.message,
            }
        )
    sources = []
    for step in task.eval.required_tools:
        if step.tool == "get_skill_content" and step.args.get("slug") in world.skills:
            skill = world.skills[step.args["slug"]]
            sources.append(
                {
                    "skill": skill.slug,
                    "name": skill.name,
                    "content": clip(skill.content, 2000),
                    "listed_in_setup": skill.slug in (task.setup.workspace_skills or []),
                }
            )
        elif step.tool == "read_workspace_resource" and step.args.get("uri") in world.resources:
            resource = world.resources[step.args["uri"]]
            sources.append(
                {"resource": resource.uri, "title": resource.title, "text": clip(resource.text, 2000)}
            )
        elif step.tool == "get_workspace_prompt" and step.args.get("name") in world.prompts:
            prompt = world.prompts[step.args["name"]]
            sources.append(
                {"prompt": prompt.name, "description": prompt.description, "text": clip(prompt.text, 2000)}
            )
    return {
        "widgets": list(widgets.values()),
        "knowledge_sources": sources,
        "skills_in_setup": list(ws.skills),
        "dashboards": [d.name for d in ws.dashboards.values()],
    }


class LLMValidator:
    """Fresh eyes: the model sees the task file and a digest of the world, never the story or the author."""

    name = "llm"

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    def review(self, task: Task, world: World, persona: str) -> list[Flag]:
        user = render_prompt(
            "validator",
            task=task_json(task),
            max_rows=MAX_ROWS,
            digest=json.dumps(world_digest(task, world), indent=1, ensure_ascii=False, default=str),
        )
        reply = self.endpoint.ask(
            "validator", task.id, self.endpoint.skill("task-validator"), user, ValidatorReply
        )
        story = task.meta.story if task.meta else None
        flags = [
            raise_flag(
                "validator",
                persona,
                story,
                task,
                task.level,
                Finding(f.check, f.severity, f.reason, f.evidence, f.suggestion),
            )
            for f in reply.flags
        ]
        self.endpoint.progress(
            f"llm validator {task.id}: {reply.verdict}" + (f" ({len(flags)} flag(s))" if flags else "")
        )
        return flags
