"""The LLM author: one model session per story, writing each level through tool calls against the simulator.

The model inspects the catalog, reads rows, skills and resources in fresh episodes of the story's setup, and
hands a level in with `submit_level`, which runs the same parse and gates the pipeline runs, so it sees
every gate's verdict and can fix the task before the pipeline ever does. The draft ends when a submission
certifies, or after `max_tool_rounds` model requests with the last submission (the pipeline's gate feedback
then takes over). The conversation is appended to `history` as plain message dicts, so the next level and
every feedback round continue the same session, across a checkpoint and a resume.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from certify.agents.llm import _dump
from certify.agents.parsing import parse_arguments
from certify.gates import certify_task
from certify.task import LEVEL_NAMES, LEVELS, TaskFileError, parse_task
from simulator import SetupError, Workspace

from ..pipeline import STANDARD_DEFAULTS
from .author import AuthorContext, AuthoringError, Draft, render
from .llm import Endpoint, clip

MAX_RESULT_CHARS = 12000
OLD_TOOL_CHARS = 1500
MAX_MATCHES = 25

LEVEL_DIALS = {
    0: "Execute: nothing is withheld. The prompt states the dashboard, each widget's display name, app and "
       "origin, and every parameter key and value as the catalog spells it. meta.hidden is empty.",
    1: "Find: exactly one target is described through the story's find_hint and never named (no word of its "
       "catalog name; when other targets are the same catalog widget with other parameters, they are described "
       "the same way); everything else as at Execute. meta.hidden = [{kind: target, value: <its catalog name>}].",
    2: "Derive: the policy phrase stands in for exactly one graded value (the policy's `carries` key), which the "
       "prompt never states in any spelling; the widget is named again. meta.hidden = [{kind: carried, value}].",
    3: "Ground: a lived-in dashboard (a twin of the target, other widgets of the same app and a prior note, all "
       "pinned and untouched) and a graded read of the governing source; a named note records its distinctive "
       "phrase. meta.hidden = [{kind: planted, value: <phrase>, source: skill:<slug> | resource:<uri> | "
       "prompt:<name>}].",
    4: "Compose: level 3 plus a build: add a custom backend serving the story's table (manage_backends add with "
       "widgets_json and apps_json), publish and instantiate its app, and put the built widget on the dashboard. "
       "meta.hidden as at level 3.",
}


def _fn(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": required, "additionalProperties": False}}}


_STR = {"type": "string"}
TOOLS = [
    _fn("search_catalog", "Find catalog widgets of the backends the story's tasks connect, by words of their name, "
        "description, category, app or id (an empty query lists them all). Returns origin, widget_id, name, "
        "description, app and category.", {"query": _STR, "origin": {**_STR, "description": "origin display name"}},
        ["query"]),
    _fn("get_widget_schema", "The full definition of one catalog widget: params with types, defaults and options, "
        "grid size.", {"origin": _STR, "widget_id": _STR}, ["origin", "widget_id"]),
    _fn("get_widget_rows", "The rows get_widget_data serves for data_args in a fresh episode of the story's setup "
        "(unset params take their defaults). Take every graded note value from here.",
        {"origin": _STR, "widget_id": _STR, "data_args": {"type": "object"}}, ["origin", "widget_id", "data_args"]),
    _fn("read_skill", "The full text of a workspace skill by slug.", {"slug": _STR}, ["slug"]),
    _fn("read_resource", "A workspace documentation resource by URI.", {"uri": _STR}, ["uri"]),
    _fn("read_prompt", "A workspace prompt by name.", {"name": _STR}, ["name"]),
    _fn("submit_level", "Hand in the complete task object of the level. It is parsed with the taskset defaults "
        "merged and certified by the gates (schema, grounding, oracle, noop, load_bearing, leak, determinism); "
        "the result says whether it certified and what each gate found. Fix and resubmit until it certifies.",
        {"task": {"type": "object", "description": "{id, difficulty, prompt, setup, eval, meta}"}}, ["task"]),
]
TOOL_NAMES = [t["function"]["name"] for t in TOOLS]

OPENING_PROMPT = """\
This session writes the five levels of one story for one persona, level by level, and any revision the
gates or reviewers ask for later. Each level is certified before the next one starts.

## Persona: {{ persona_title }} ({{ persona_slug }})
{{ persona_text }}

## Story: {{ story_title }} ({{ story_slug }})
{{ story_prose }}

### Facts (the story's front matter)
```yaml
{{ facts }}```

### The facts resolved against the world
```yaml
{{ resolved }}```

### The episode setup every level starts from (add seeded widgets and notes to initial_state as the level needs)
```json
{{ setup }}
```
"""

LEVEL_PROMPT = """\
## {{ 'Revise' if revision else 'Write' }} level {{ level }} ({{ level_name }})
Task id `{{ task_id }}`, difficulty `level{{ level }}`, meta.story `{{ story_slug }}`, meta.persona `{{ persona_slug }}`.
Dial: {{ dial }}
{% if written %}
### Levels already written for this story
{% for item in written %}
level{{ item.level }} ({{ 'certified' if item.certified else 'not certified' }}):
```json
{{ item.task }}
```
{% endfor %}{% endif %}{% if feedback %}
### Feedback to address
{% for line in feedback %}- {{ line }}
{% endfor %}{% endif %}
Inspect the catalog and plan against the served rows with the tools, then call submit_level with the complete
task object; resubmit until it certifies."""

NUDGE = ("No level was submitted. Call submit_level with the complete task object of level {level} (id "
         "{task_id}); the tools are the only way to hand it in.")


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


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


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
        handler = getattr(self, f"tool_{name}", None) if name in TOOL_NAMES else None
        if handler is None:
            return {"error": f"unknown tool '{name}'; the tools are {', '.join(TOOL_NAMES)}"}
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
            apps = {str(a.get("name")): {str(i.get("i")) for t in (a.get("tabs") or {}).values() if isinstance(t, dict)
                                         for i in t.get("layout") or [] if isinstance(i, dict)}
                    for a in conn.catalog.apps}
            for w in conn.catalog.widgets.values():
                in_apps = [name for name, ids in apps.items() if w.widget_id in ids]
                entry = {"origin": conn.name, "widget_id": w.widget_id, "name": w.name,
                         "description": str(w.definition.get("description") or ""), "app": in_apps,
                         "category": w.definition.get("category")}
                score = len(wanted & _words(" ".join([w.name, entry["description"], str(entry["category"] or ""),
                                                       w.widget_id, *in_apps])))
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
        return self._envelope("get_widget_data", {"origin": origin, "widget_id": widget_id, "data_args": data_args})

    def tool_read_skill(self, slug: str) -> dict[str, Any]:
        skill = self.ctx.world.skills.get(slug)
        if skill is None:
            return {"error": f"unknown skill '{slug}'; the world has {sorted(self.ctx.world.skills)}"}
        return skill.public()

    def tool_read_resource(self, uri: str) -> dict[str, Any]:
        resource = self.ctx.world.resources.get(uri)
        if resource is None:
            return {"error": f"unknown resource '{uri}'; the world has {sorted(self.ctx.world.resources)}"}
        return {"uri": resource.uri, "title": resource.title, "description": resource.description,
                "text": resource.text}

    def tool_read_prompt(self, name: str) -> dict[str, Any]:
        prompt = self.ctx.world.prompts.get(name)
        if prompt is None:
            return {"error": f"unknown prompt '{name}'; the world has {sorted(self.ctx.world.prompts)}"}
        return {"name": prompt.name, "description": prompt.description, "text": prompt.text}

    def tool_submit_level(self, task: Any) -> dict[str, Any]:
        if isinstance(task, str):
            try:
                task = json.loads(task)
            except json.JSONDecodeError as exc:
                return {"certified": False, "error": f"task is not a JSON object ({exc.msg})"}
        if not isinstance(task, dict):
            return {"certified": False, "error": "task must be a JSON object {id, difficulty, prompt, setup, eval, "
                                                 "meta}"}
        self.submissions += 1
        self.last = task
        if task.get("id") != self.task_id or task.get("difficulty") != LEVELS[self.level]:
            return {"certified": False, "error": f"this level's task has id '{self.task_id}' and difficulty "
                                                 f"'{LEVELS[self.level]}' (got {task.get('id')!r}, "
                                                 f"{task.get('difficulty')!r})"}
        try:
            parsed = parse_task(task, f"{self.task_id}.json", self.ctx.defaults or STANDARD_DEFAULTS)
        except TaskFileError as exc:
            return {"certified": False, "error": f"the task does not validate: {exc.field}: {exc.message}"}
        try:
            cert = certify_task(self.ctx.world, parsed, f"{parsed.id}.json")
        except Exception as exc:  # a draft the gates cannot even run on is feedback for the model, not a crash
            return {"certified": False, "error": f"the gates could not run on this task: {exc}"}
        if cert.certified:
            self.certified = task
        return {"certified": cert.certified, "gates": {k: v.to_dict() for k, v in cert.gates.items()}}


def story_setup(ctx: AuthorContext) -> dict[str, Any]:
    """The episode every level of the story starts from, before the level seeds its own widgets."""
    s = ctx.story
    return {"workspace_baseline": ctx.baseline, "workspace_backends": list(ctx.backends),
            "workspace_skills": list(ctx.skills), "default_selected_dashboard": s.facts.dashboard,
            "initial_state": {"dashboard": {"name": s.facts.dashboard, "activate": False,
                                            "tabs": [{"id": s.tab_id, "name": s.tab_name}], "widgets": []}}}


def _resolved(ctx: AuthorContext) -> dict[str, Any]:
    s = ctx.story
    gov = s.governance
    return {
        "kind": s.kind,
        "targets": [{"name": t.name, "origin": t.origin, "app": t.app, "widget_id": t.widget_id, "params": t.params}
                    for t in s.targets],
        "carried": {"key": s.carried_key, "value": s.carried_value, "target": s.carried_target},
        "seeded_wrong": s.seeded_wrong,
        "governance": {"kind": gov.kind, "ref": gov.ref, "name": gov.name, "phrase": gov.phrase, "where": gov.where,
                       "source": gov.source},
        "tab": {"id": s.tab_id, "name": s.tab_name},
        "warnings": list(s.warnings),
    }


def _yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)


def _compact(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Earlier drafts' tool results, shortened: the session keeps its thread without resending every row."""
    out = []
    for m in messages:
        if m.get("role") == "tool" and isinstance(m.get("content"), str) and len(m["content"]) > OLD_TOOL_CHARS:
            m = {**m, "content": m["content"][:OLD_TOOL_CHARS] + "… (trimmed: an earlier draft)"}
        out.append(m)
    return out


class LLMAuthor:
    name = "llm"

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    def draft(self, ctx: AuthorContext, level: int, feedback: list[str], history: list[dict[str, Any]]) -> Draft:
        cfg = self.endpoint.config
        tools = _Tools(ctx, level)
        story, persona = ctx.story.story, ctx.persona
        earlier = [m for m in history if _is_message(m)]
        written = _written(history)
        new: list[dict[str, Any]] = []
        parts = []
        if not earlier:
            parts.append(render(OPENING_PROMPT, persona_title=persona.title, persona_slug=persona.slug,
                                persona_text=persona.text, story_title=story.title, story_slug=story.slug,
                                story_prose=story.prose, facts=_yaml(story.facts.model_dump(exclude_none=True)),
                                resolved=_yaml(_resolved(ctx)), setup=json.dumps(tools.setup, indent=1)))
        parts.append(render(LEVEL_PROMPT, revision=level in written, level=level,
                            level_name=LEVEL_NAMES[LEVELS[level]], task_id=tools.task_id, story_slug=story.slug,
                            persona_slug=persona.slug, dial=LEVEL_DIALS[level], feedback=list(feedback),
                            written=[{"level": lv, "certified": d.get("certified", False),
                                      "task": json.dumps(d["task"], ensure_ascii=False)}
                                     for lv, d in sorted(written.items())]))
        new.append({"role": "user", "content": "\n\n".join(parts)})
        system = {"role": "system", "content": self.endpoint.skill("task-author")}
        rounds = 0
        while rounds < cfg.max_tool_rounds and tools.certified is None:
            rounds += 1
            message = self.endpoint.complete([system, *_compact(earlier), *new], tools=TOOLS)
            calls = [c for c in (message.tool_calls or []) if getattr(c, "type", None) == "function"]
            assistant: dict[str, Any] = {"role": "assistant", "content": message.content}
            if not calls:
                new += [assistant, {"role": "user", "content": NUDGE.format(level=level, task_id=tools.task_id)}]
                continue
            assistant["tool_calls"] = [{"id": c.id or f"call_{rounds}_{n}", "type": "function",
                                        "function": {"name": c.function.name, "arguments": c.function.arguments}}
                                       for n, c in enumerate(calls)]
            new.append(assistant)
            for record, call in zip(assistant["tool_calls"], calls, strict=True):
                action = parse_arguments(call.function.name, call.function.arguments, "lenient").action
                result = {"error": action.parse_error} if action.parse_error else tools.run(action.tool, action.args)
                if action.tool == "submit_level":
                    failed = ", ".join(k for k, g in (result.get("gates") or {}).items() if not g["ok"])
                    verdict = "certified" if result.get("certified") else f"not certified ({failed or 'invalid task'})"
                    self.endpoint.progress(f"llm author {tools.task_id}: round {rounds}: {verdict}")
                new.append({"role": "tool", "tool_call_id": record["id"],
                            "content": clip(_dump(result), MAX_RESULT_CHARS)})
        task = tools.certified or tools.last
        history.extend(new)
        history.append({"draft": {"level": level, "task": task, "certified": tools.certified is not None,
                                  "rounds": rounds, "submissions": tools.submissions}})
        if task is None:
            raise AuthoringError(f"{tools.task_id}: the LLM author submitted no task in {rounds} model round(s)")
        note = f"{rounds} model round(s), {tools.submissions} submission(s), " + (
            "certified" if tools.certified is not None else "not certified: the pipeline's gate feedback takes over")
        return Draft(task, [note])
