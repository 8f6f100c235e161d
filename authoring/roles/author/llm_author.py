"""The LLM author: one model session per story, levels in order, handed in through `submit_level`.

The model inspects the catalog, rows, skills and resources in fresh episodes of the story's setup and hands each
level in with `submit_level` (whose parameter is the task file's JSON Schema), which runs the same parse and gates
the pipeline runs, so the model sees every gate's verdict and can fix the task before the pipeline does. The
conversation is appended to `history` as plain message dicts, so the next level and every feedback round continue
the same session, across a checkpoint and a resume. Its prompts are template files (authoring/roles/prompts).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any

import yaml

from certify import (
    LEVEL_NAMES,
    LEVELS,
    Completion,
    Task,
    TaskFileError,
    certify_task,
    parse_arguments,
    parse_task,
    words,
)
from simulator import Prompt, Resource, SetupError, Skill, Workspace

from ...failures import RoleFailure
from ...judged import draft_audit
from ..llm import EVIDENCE, Endpoint, clip, standard_defaults
from ..prompts import prompt_data, render_prompt
from .context import AuthorContext, Draft, story_setup

MAX_RESULT_CHARS = 12000
MAX_MATCHES = 25
SUBMIT = "submit_level"


def _fn(
    name: str,
    description: str,
    properties: dict[str, Any],
    required: list[str],
    defs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    parameters = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    if defs:
        parameters["$defs"] = defs
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def _task_parameter() -> tuple[dict[str, Any], dict[str, Any]]:
    """The task file's JSON Schema, from the Task model itself (its definitions hoisted to the tool's root)."""
    schema = Task.model_json_schema()
    defs = schema.pop("$defs", {})
    schema["description"] = (
        "the complete task file {id, difficulty, prompt, setup, eval, meta}; the taskset's "
        "task_defaults are merged into it"
    )
    return schema, defs


_STR = {"type": "string"}
_TASK, _TASK_DEFS = _task_parameter()
TOOLS = [
    _fn(
        "search_catalog",
        "Find catalog widgets of the backends the story's tasks connect, by words of their name, "
        "description, category, app or id (an empty query lists them all). Returns origin, widget_id, name, "
        "description, app and category.",
        {"query": _STR, "origin": {**_STR, "description": "origin display name"}},
        ["query"],
    ),
    _fn(
        "get_widget_schema",
        "The full definition of one catalog widget: params with types, defaults and options, grid size.",
        {"origin": _STR, "widget_id": _STR},
        ["origin", "widget_id"],
    ),
    _fn(
        "get_widget_rows",
        "The rows get_widget_data serves for data_args in a fresh episode of the story's setup "
        "(unset params take their defaults). Take every graded note value from here.",
        {"origin": _STR, "widget_id": _STR, "data_args": {"type": "object"}},
        ["origin", "widget_id", "data_args"],
    ),
    _fn("read_skill", "The full text of a workspace skill by slug.", {"slug": _STR}, ["slug"]),
    _fn("read_resource", "A workspace documentation resource by URI.", {"uri": _STR}, ["uri"]),
    _fn("read_prompt", "A workspace prompt by name.", {"name": _STR}, ["name"]),
    _fn(
        SUBMIT,
        "Hand in the complete task object of the level. It is parsed with the taskset defaults "
        "merged and certified by the gates (schema, grounding, oracle, noop, load_bearing, leak, determinism); "
        "the result says whether it certified and what each gate found. Fix and resubmit until it certifies.",
        {"task": _TASK},
        ["task"],
        _TASK_DEFS,
    ),
]
AUTHOR_TOOLS = [t["function"]["name"] for t in TOOLS]


def _is_message(entry: Any) -> bool:
    return isinstance(entry, dict) and entry.get("role") in ("user", "assistant", "tool")


def _written(history: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """The latest submission of each level so far in this session."""
    out: dict[int, dict[str, Any]] = {}
    for entry in history:
        draft = entry.get("draft") if isinstance(entry, dict) else None
        if isinstance(draft, dict) and isinstance(draft.get("task"), dict):
            out[int(draft["level"])] = draft
    return out


_GATING = threading.Lock()
"""Gates are CPU-bound under one interpreter lock: run together they finish no sooner, and they starve the
thread that reads the other stories' model replies (each reply then waited tens of ms for its turn)."""


def _words(text: str) -> set[str]:
    return words(text, longer_than=0, stop=frozenset())


class _Tools:
    """What the model's tool calls run against: the world, in fresh episodes of the story's setup."""

    def __init__(self, ctx: AuthorContext, level: int) -> None:
        self.ctx = ctx
        self.level = level
        self.task_id = f"{ctx.story.story.slug}_level{level}"
        self.setup = story_setup(ctx)
        self.submissions = 0
        self.last: dict[str, Any] | None = None
        self.certified: dict[str, Any] | None = None

    def episode(self) -> Workspace:
        return Workspace.start(self.ctx.world, self.setup)

    def run(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        handler = getattr(self, f"tool_{name}", None) if name in AUTHOR_TOOLS else None
        if handler is None:
            return {"error": f"unknown tool '{name}'; the tools are {', '.join(AUTHOR_TOOLS)}"}
        try:
            return handler(**args)
        except TypeError as exc:
            return {"error": f"{name}: bad arguments ({exc})"}
        except SetupError as exc:
            return {"error": f"the story's setup does not start: {exc}"}

    def _envelope(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        envelope = self.episode().call(tool, args)
        return {"data": envelope.data} if envelope.ok else {"error": envelope.message}

    def tool_search_catalog(self, query: str = "", origin: str | None = None) -> dict[str, Any]:
        wanted = _words(query)
        matches: list[tuple[int, str, dict[str, Any]]] = []
        for conn in self.episode().connections:
            if origin and conn.name != origin:
                continue
            for w in conn.catalog.widgets.values():
                in_apps = conn.catalog.apps_of(w.widget_id)
                entry: dict[str, Any] = {
                    "origin": conn.name,
                    "widget_id": w.widget_id,
                    "name": w.name,
                    "description": str(w.definition.get("description") or ""),
                    "app": in_apps,
                    "category": w.definition.get("category"),
                }
                score = len(
                    wanted
                    & _words(
                        " ".join(
                            [
                                w.name,
                                entry["description"],
                                str(entry["category"] or ""),
                                w.widget_id,
                                *in_apps,
                            ]
                        )
                    )
                )
                if score or not wanted:
                    matches.append((score, w.name, entry))
        matches.sort(key=lambda m: (-m[0], m[1]))
        if not matches:
            origins = sorted({c.name for c in self.episode().connections})
            return {"matches": [], "note": f"nothing matches; connected origins: {origins}"}
        return {"matches": [m[2] for m in matches[:MAX_MATCHES]], "total": len(matches)}

    def tool_get_widget_schema(self, origin: str, widget_id: str) -> dict[str, Any]:
        return self._envelope("get_widget_schema", {"origin": origin, "widget_id": widget_id})

    def tool_get_widget_rows(self, origin: str, widget_id: str, data_args: dict[str, Any]) -> dict[str, Any]:
        return self._envelope(
            "get_widget_data", {"origin": origin, "widget_id": widget_id, "data_args": data_args}
        )

    def tool_read_skill(self, slug: str) -> dict[str, Any]:
        return _knowledge("skill", self.ctx.world.skills, slug)

    def tool_read_resource(self, uri: str) -> dict[str, Any]:
        return _knowledge("resource", self.ctx.world.resources, uri)

    def tool_read_prompt(self, name: str) -> dict[str, Any]:
        return _knowledge("prompt", self.ctx.world.prompts, name)

    def tool_submit_level(self, task: Any) -> dict[str, Any]:
        if isinstance(task, str):
            try:
                task = json.loads(task)
            except json.JSONDecodeError as exc:
                return {"certified": False, "error": f"task is not a JSON object ({exc.msg})"}
        if not isinstance(task, dict):
            return {
                "certified": False,
                "error": "task must be a JSON object {id, difficulty, prompt, setup, eval, meta}",
            }
        self.submissions += 1
        self.last = task
        if task.get("id") != self.task_id or task.get("difficulty") != LEVELS[self.level]:
            return {
                "certified": False,
                "error": f"this level's task has id '{self.task_id}' and difficulty "
                f"'{LEVELS[self.level]}' (got {task.get('id')!r}, "
                f"{task.get('difficulty')!r})",
            }
        try:
            parsed = parse_task(task, f"{self.task_id}.json", self.ctx.defaults or standard_defaults())
        except TaskFileError as exc:
            return {"certified": False, "error": f"the task does not validate: {exc.field}: {exc.message}"}
        try:
            # gated as the pipeline gates it (graph/context.py), a judged draft against the rubric's audit: the
            # draft is in no taskset yet, and without the audit the judge gate refuses every judged level
            where = f"{parsed.id}.json"
            with _GATING:
                cert = certify_task(
                    self.ctx.world, parsed, where, judge_audit=draft_audit(self.ctx.world, parsed, where)
                )
        except (
            Exception
        ) as exc:  # a draft the gates cannot even run on is feedback for the model, not a crash
            return {"certified": False, "error": f"the gates could not run on this task: {exc}"}
        if cert.certified:
            self.certified = task
        return {"certified": cert.certified, "gates": {k: v.to_dict() for k, v in cert.gates.items()}}


def _knowledge(kind: str, sources: Mapping[str, Skill | Resource | Prompt], key: str) -> dict[str, Any]:
    """A knowledge source as a reader sees it, or an error listing the ones the world has."""
    source = sources.get(key)
    if source is None:
        return {"error": f"unknown {kind} '{key}'; the world has {sorted(sources)}"}
    return source.public()


def _resolved(ctx: AuthorContext) -> dict[str, Any]:
    s = ctx.story
    gov = s.governance
    return {
        "kind": s.kind,
        "targets": [
            {"name": t.name, "origin": t.origin, "app": t.app, "widget_id": t.widget_id, "params": t.params}
            for t in s.targets
        ],
        "carried": {"key": s.carried_key, "value": s.carried_value, "target": s.carried_target},
        "seeded_wrong": s.seeded_wrong,
        "governance": {
            "kind": gov.kind,
            "ref": gov.ref,
            "name": gov.name,
            "phrase": gov.phrase,
            "where": gov.where,
            "source": gov.source,
        },
        "tab": {"id": s.tab_id, "name": s.tab_name},
        "warnings": list(s.warnings),
    }


def _yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)


def _said(completion: Completion) -> str:
    """What a reply said, as evidence: its text and the tool calls it made."""
    calls = [f"{c.function.name}({clip(c.function.arguments or '', 300)})" for c in completion.tool_calls]
    return clip(
        " ".join(part for part in (completion.text.strip(), *calls) if part) or "(an empty reply)", EVIDENCE
    )


class LLMAuthor:
    """One model session per story, levels in order, handed in through `submit_level`.

    A reply without a tool call is told to submit, and the next request forces `submit_level` (tool_choice); the
    last request of a draft forces it too. A draft that hands in nothing (after `max_nudges` such replies, or
    when its rounds run out) is a role failure with the last reply as evidence; one that hands in a task that
    does not certify returns it, and the pipeline's gate feedback takes over.
    """

    name = "llm"

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    def draft(
        self, ctx: AuthorContext, level: int, feedback: list[str], history: list[dict[str, Any]]
    ) -> Draft:
        cfg = self.endpoint.config
        tools = _Tools(ctx, level)
        story, persona = ctx.story.story, ctx.persona
        earlier = [m for m in history if _is_message(m)]
        written = _written(history)
        new: list[dict[str, Any]] = []
        parts = []
        if not earlier:
            parts.append(
                render_prompt(
                    "author-opening",
                    persona=persona,
                    story=story,
                    facts=_yaml(story.facts.model_dump(exclude_none=True)),
                    resolved=_yaml(_resolved(ctx)),
                    setup=json.dumps(tools.setup, indent=1),
                )
            )
        parts.append(
            render_prompt(
                "author-level",
                revision=level in written,
                level=level,
                level_name=LEVEL_NAMES[LEVELS[level]],
                task_id=tools.task_id,
                story=story,
                persona=persona,
                dial=prompt_data("author-dials.yaml")[level],
                feedback=list(feedback),
                written=[
                    {
                        "level": lv,
                        "certified": d.get("certified", False),
                        "task": json.dumps(d["task"], ensure_ascii=False),
                    }
                    for lv, d in sorted(written.items())
                ],
            )
        )
        new.append({"role": "user", "content": "\n\n".join(parts)})
        system = {"role": "system", "content": self.endpoint.skill("task-author")}
        rounds = nudges = 0
        force = False
        said = ""

        def record() -> None:
            history.extend(new)
            history.append(
                {
                    "draft": {
                        "level": level,
                        "task": tools.certified or tools.last,
                        "certified": tools.certified is not None,
                        "rounds": rounds,
                        "submissions": tools.submissions,
                    }
                }
            )

        while rounds < cfg.max_tool_rounds and tools.certified is None:
            rounds += 1
            choice = SUBMIT if force or rounds == cfg.max_tool_rounds else "auto"
            try:
                completion = self.endpoint.complete(
                    "author",
                    tools.task_id,
                    [system, *earlier, *new],
                    evidence=said,
                    tools=TOOLS,
                    tool_choice=choice,
                )
            except RoleFailure:
                record()
                raise
            said = _said(completion)
            calls = completion.tool_calls
            assistant: dict[str, Any] = {"role": "assistant", "content": completion.message.content}
            if not calls:
                nudges += 1
                new += [
                    assistant,
                    {
                        "role": "user",
                        "content": render_prompt("author-nudge", level=level, task_id=tools.task_id),
                    },
                ]
                if nudges > cfg.max_nudges:
                    break
                force = True
                continue
            force = False
            assistant["tool_calls"] = [
                {
                    "id": c.id or f"call_{rounds}_{n}",
                    "type": "function",
                    "function": {"name": c.function.name, "arguments": c.function.arguments},
                }
                for n, c in enumerate(calls)
            ]
            new.append(assistant)
            for record_, call in zip(assistant["tool_calls"], calls, strict=True):
                action = parse_arguments(call.function.name, call.function.arguments, "lenient").action
                result: dict[str, Any] = (
                    {"error": action.parse_error}
                    if action.parse_error
                    else tools.run(action.tool, action.args)
                )
                if action.tool == SUBMIT:
                    failed = ", ".join(k for k, g in (result.get("gates") or {}).items() if not g["ok"])
                    verdict = (
                        "certified"
                        if result.get("certified")
                        else f"not certified ({failed or 'invalid task'})"
                    )
                    self.endpoint.progress(f"llm author {tools.task_id}: round {rounds}: {verdict}")
                new.append(
                    {
                        "role": "tool",
                        "tool_call_id": record_["id"],
                        "content": clip(
                            json.dumps(result, ensure_ascii=False, separators=(",", ":"), default=str),
                            MAX_RESULT_CHARS,
                        ),
                    }
                )
        record()
        task = tools.certified or tools.last
        if task is None:
            why = (
                f"{nudges} replies without a tool call"
                if nudges > cfg.max_nudges
                else f"{rounds} model request(s)"
            )
            raise RoleFailure("author", f"{tools.task_id}: no level was submitted ({why})", evidence=said)
        note = f"{rounds} model round(s), {tools.submissions} submission(s), " + (
            "certified"
            if tools.certified is not None
            else "not certified: the pipeline's gate feedback takes over"
        )
        return Draft(task, [note])
