"""Scripted role-players for the conformance suite: what a model behind the model server answers to each role.

The competent player submits good levels through `submit_level` (the rule author's levels for the run's own
sources, so they certify), approves as validator and fairness reviewer, and answers the fixer with a valid JSON
Patch. Adversarial players are built from it by replacing one role's answers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from authoring.factcheck import resolve
from authoring.options import RunOptions
from authoring.roles.author import AuthorContext, RuleAuthor, own_deadlines
from authoring.sources import load_sources
from authoring.taskset import resolve_baseline, taskset_defaults
from simulator import World

ROLES = {
    "# Task author": "author",
    "# Task validator": "validator",
    "# Task level fairness": "fairness",
    "# Task fixer": "fixer",
}
TASK_ID = re.compile(r"Task id `([A-Za-z0-9_]+)`")
DEFECT_ID = re.compile(r'"task_id": "([A-Za-z0-9_]+)"')


def role_of(body: dict[str, Any]) -> str:
    system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
    for heading, role in ROLES.items():
        if system.startswith(heading):
            return role
    raise AssertionError(f"a request from no known role: {system[:80]!r}")


def asked_task_id(body: dict[str, Any]) -> str:
    """The level the author is writing now: the task id named by the latest level prompt."""
    for message in reversed(body["messages"]):
        if message["role"] == "user" and isinstance(message.get("content"), str):
            found = TASK_ID.findall(message["content"])
            if found:
                return found[-1]
    raise AssertionError("an author request that names no task id")


def contexts(options: RunOptions) -> dict[str, AuthorContext]:
    """The stories' authoring contexts, as the pipeline builds them for this run."""
    world = World.load(options.world)
    persona, stories = load_sources(Path(options.sources_root), options.persona)
    backends = list(world.default_backends)
    resolved = [resolve(world, story, backends) for story in stories]
    siblings = tuple(r.story.slug for r in resolved)
    defaults = taskset_defaults(options)
    return {
        r.story.slug: AuthorContext(
            world,
            persona,
            r,
            resolve_baseline(options, world),
            backends,
            sorted(world.skills),
            siblings,
            defaults,
            own_deadlines(resolved),
        )
        for r in resolved
    }


def rule_levels(options: RunOptions) -> dict[str, dict[str, Any]]:
    """Every level of the run's stories as the rule author writes it (what a competent model would submit)."""
    return {
        f"{slug}_level{level}": RuleAuthor().draft(ctx, level, [], []).task
        for slug, ctx in contexts(options).items()
        for level in range(5)
    }


Answer = Callable[[dict[str, Any]], Any]


class RolePlayer:
    """A model-server script: routes each request to its role's answer; `calls` counts requests per role."""

    def __init__(self, levels: dict[str, dict[str, Any]], **answers: Answer) -> None:
        self.levels = levels
        self.answers: dict[str, Answer] = {
            "author": self.submit,
            "validator": self.approve,
            "fairness": self.passes,
            "fixer": self.patch,
            **answers,
        }
        self.calls: dict[str, int] = {}
        self.log: list[tuple[str, str]] = []

    def __call__(self, body: dict[str, Any], index: int) -> Any:
        role = role_of(body)
        self.calls[role] = self.calls.get(role, 0) + 1
        subject = asked_task_id(body) if role == "author" else self.subject(role, body)
        self.log.append((role, subject))
        return self.answers[role](body)

    @staticmethod
    def subject(role: str, body: dict[str, Any]) -> str:
        user = body["messages"][1]["content"]
        if role == "fairness":
            found = re.search(r"## Story (\S+):", user)
        elif role == "fixer":
            found = DEFECT_ID.search(user)
        else:
            found = re.search(r'"id": "([A-Za-z0-9_]+)"', user)
        return found.group(1) if found else "?"

    def submit(self, body: dict[str, Any]) -> Any:
        return [("submit_level", {"task": self.levels[asked_task_id(body)]})]

    @staticmethod
    def approve(body: dict[str, Any]) -> Any:
        return json.dumps({"verdict": "approve", "flags": []})

    @staticmethod
    def passes(body: dict[str, Any]) -> Any:
        return json.dumps({"verdict": "pass", "flags": []})

    @staticmethod
    def patch(body: dict[str, Any]) -> Any:
        task = json.loads(body["messages"][1]["content"].split("```json\n", 1)[1].split("\n```", 1)[0])
        steps = len(task["eval"]["required_tools"])
        return json.dumps(
            {
                "action": "patch",
                "patch": [{"op": "replace", "path": "/eval/max_turns", "value": steps + 3}],
                "repaired": f"max_turns -> {steps + 3}",
                "skill": "task-author",
                "lesson": "a budget below the reference ran out of turns → max_turns = reference + 3",
            }
        )
