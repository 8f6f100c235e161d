"""The validator role: fresh eyes on one certified task, with nothing but the task file and the world.

It can only raise flags; the author (and then a person) decides. The rule driver applies the mechanical part
of skills/task-validator.md as lints; the LLM driver (authoring/llm_roles.py) reads the skill itself.
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol

from certify.episode import reference_calls, replay
from certify.task import Task
from simulator import TOOL_NAMES, SetupError, Workspace, World

from ..flags import Flag, make_flag

MAX_PROMPT_WORDS = 170


class ValidatorDriver(Protocol):
    name: str

    def review(self, task: Task, world: World, persona: str) -> list[Flag]: ...


def _observable_text(task: Task, world: World) -> str:
    """Everything an agent solving the task could have read: the prompt, the rows and results the reference
    receives, the skills and resources it reads, and the seeded notes."""
    episode = replay(world, task, reference_calls(task))
    parts = [task.prompt]
    for event in episode.events:
        if event.ok and event.tool in ("get_widget_data", "get_skill_content", "read_workspace_resource",
                                       "get_workspace_prompt", "get_workspace_snapshot", "read_widget"):
            parts.append(json.dumps(event.envelope.get("data"), ensure_ascii=False))
    return "\n".join(parts)


class RuleValidator:
    name = "rules"

    def review(self, task: Task, world: World, persona: str) -> list[Flag]:
        flags: list[Flag] = []
        meta = task.meta
        story = meta.story if meta else None

        def flag(check: str, severity: str, reason: str, evidence: str = "", suggestion: str = "") -> None:
            flags.append(make_flag(role="validator", kind="validator", persona=persona, story=story, task_id=task.id,
                                   level=task.level, check=check, severity=severity, reason=reason,
                                   evidence=evidence, suggestion=suggestion))

        try:
            ws = Workspace.start(world, task.setup)
        except SetupError as exc:
            flag("reachability", "blocker", "the setup does not start", str(exc))
            return flags
        built = {s.args.get("name") for s in task.eval.required_tools
                 if s.tool == "manage_backends" and s.args.get("operation") == "add"}
        for req in task.eval.required_widgets:
            if ws._origin_or_none(req.origin) is None and req.origin not in built:
                flag("reachability", "blocker", f"graded origin '{req.origin}' is neither connected nor built",
                     json.dumps(req.model_dump()))

        reference = len(task.eval.reference_steps())
        budget = task.eval.turn_budget
        if budget is not None and budget < reference:
            flag("budget", "blocker", f"max_turns {budget} is below the reference's {reference} calls",
                 suggestion=f"max_turns = {reference + 3}")
        elif budget is not None and budget > 2 * reference + 6:
            flag("budget", "minor", f"max_turns {budget} is far above the reference's {reference} calls")

        observable = _observable_text(task, world).casefold()
        for req in task.eval.required_generated_widgets:
            for fact in req.data_contains:
                if fact.casefold() not in observable and not _numeric_seen(fact, observable):
                    flag("possibility", "blocker", f"a graded note fact is nowhere an agent can read it: '{fact}'",
                         f"note '{req.name_contains}'")

        words = task.prompt.split()
        named_tools = [t for t in TOOL_NAMES if re.search(rf"\b{t}\b", task.prompt)]
        if named_tools:
            flag("single_ask", "blocker", f"the prompt names tools: {named_tools}", suggestion="describe the work")
        uuids = [w.uuid for d in ws.dashboards.values() for w in d.widgets if w.uuid in task.prompt]
        if uuids:
            flag("single_ask", "blocker", f"the prompt quotes widget uuids {uuids[:3]} (closed-world episodes "
                 "discover them)")
        ids = sorted({w for f in world.backends.values() for w in f.catalog.widgets if w in task.prompt})
        if ids:
            flag("single_ask", "minor", f"the prompt quotes catalog widget ids {ids[:3]}")
        if len(words) > MAX_PROMPT_WORDS:
            flag("single_ask", "minor", f"the prompt runs to {len(words)} words; one clear ask reads shorter")

        if task.level == 1 and meta is not None:
            for hidden in meta.hidden:
                if hidden.kind == "target" and not _findable(task, world, hidden.value):
                    flag("findability", "minor", f"the description may not lead to '{hidden.value}': other widgets "
                         "of the same origin share more of the prompt's words")
        return flags


def _numeric_seen(fact: str, text: str) -> bool:
    from certify.grader.match import expected_number, numbers_in

    number = expected_number(fact)
    if number is None:
        return False
    return any(abs(number - n) <= 1e-9 for n in numbers_in(text))


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 3}


def _findable(task: Task, world: World, name: str) -> bool:
    """Whether the catalog widget called `name` is among the best matches of the prompt's words in its origin."""
    prompt = _words(task.prompt)
    for fixture in world.backends.values():
        widgets = list(fixture.catalog.widgets.values())
        target = next((w for w in widgets if w.name == name), None)
        if target is None:
            continue
        scores = sorted((len(prompt & _words(f"{w.name} {w.definition.get('description', '')}")), w.widget_id)
                        for w in widgets)
        mine = len(prompt & _words(f"{target.name} {target.definition.get('description', '')}"))
        better = sum(1 for s, _ in scores if s > mine)
        return better < 5
    return True


def review_all(driver: ValidatorDriver, tasks: list[Task], world: World, persona: str) -> list[Flag]:
    out: list[Flag] = []
    for task in tasks:
        out += driver.review(task, world, persona)
    return out


def as_dicts(flags: list[Flag]) -> dict[str, dict[str, Any]]:
    return {f.id: f.model_dump() for f in flags}
