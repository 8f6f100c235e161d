"""LLM drivers for the authoring roles, behind the same protocols as the rule drivers.

Each role's instructions are its skills/*.md file, read at call time, so a lesson the fixer appended earlier
in the run is already in force for the next call. The author works through native tool calls against the
simulator (authoring/llm_author.py). The validator, the ladder-fairness reviewer and the fixer answer with one
JSON object validated by a small pydantic model; a reply that does not validate goes back to the model with
the validation error, a bounded number of times, and then the run stops with an error that says so. Nothing
falls back to the rule drivers: a missing model or endpoint is an error that names what to set.

Requests go through certify.agents.llm, the agent-under-test client: the same client construction, the same
bounded retries honouring Retry-After, the same usage types. That client is asynchronous while the roles are
called synchronously from graph nodes (validators in parallel threads), so every request runs on one private
event loop in a daemon thread: all threads share one client and its connection pool, which a fresh
`asyncio.run` per request could not do safely.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from certify.agents.base import AgentUnavailable, Usage
from certify.agents.llm import LLMConfig as AgentConfig
from certify.agents.llm import OpenAIAgent, _dump, resolve_endpoint
from certify.agents.parsing import _balanced_objects
from certify.calibrate import Defect
from certify.task import LEVEL_NAMES, Task, TaskFileError, parse_task
from certify.trial import Trial
from simulator import SetupError, Workspace, World

from ..flags import Flag, make_flag
from ..pipeline import STANDARD_DEFAULTS, Drivers
from ..variety import jaccard
from .author import render
from .fixer import FixResult

if TYPE_CHECKING:
    import openai

DEFAULT_SKILLS_DIR = Path(__file__).resolve().parents[2] / "skills"
SKILLS = ("task-author", "task-validator", "task-level-fairness", "task-fixer")
TRIM = 600
MAX_ROWS = 8
MAX_NEIGHBOURS = 25
MAX_TRIALS = 3
MAX_EVENTS = 40

M = TypeVar("M", bound=BaseModel)


class LLMConfig(BaseModel):
    """How the authoring roles reach their model. `api_key` stays out of reprs and run records."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=1)
    base_url: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    timeout: float = Field(default=180.0, gt=0, description="seconds per model request")
    max_attempts: int = Field(default=4, ge=1, description="HTTP attempts per model request, retries included")
    max_tool_rounds: int = Field(default=12, ge=1, description="model requests per author draft")
    max_repairs: int = Field(default=2, ge=0, description="re-asks after a reply that does not validate")
    skills_dir: Path = DEFAULT_SKILLS_DIR
    temperature: float | None = Field(default=0.0, description="None leaves it to the server (some models "
                                                               "accept only their default)")

    @classmethod
    def from_env(cls, model: str | None = None, base_url: str | None = None, *,
                 skills_dir: Path | str | None = None, env: Mapping[str, str] | None = None) -> LLMConfig:
        """Arguments win over the environment: TASKFORGE_MODEL or OPENAI_MODEL, OPENAI_BASE_URL,
        OPENAI_API_KEY (a local server needs no key; a placeholder is sent)."""
        env = os.environ if env is None else env
        name = (model or env.get("TASKFORGE_MODEL") or env.get("OPENAI_MODEL") or "").strip()
        problems = []
        if not name:
            problems.append("no model: pass --model or set TASKFORGE_MODEL (or OPENAI_MODEL), e.g. "
                            "TASKFORGE_MODEL=gpt-4.1")
        base: str | None = None
        key: str | None = None
        try:
            base, key = resolve_endpoint(base_url, None, env)
        except ValueError:
            problems.append("no endpoint: set OPENAI_API_KEY for api.openai.com, or OPENAI_BASE_URL (or "
                            "--base-url) for an OpenAI-compatible server such as Ollama "
                            "(http://localhost:11434/v1), vLLM or llama.cpp")
        if problems:
            raise ValueError("the LLM authoring drivers are not configured: " + "; ".join(problems))
        return cls(model=name, base_url=base, api_key=key,
                   skills_dir=Path(skills_dir) if skills_dir is not None else DEFAULT_SKILLS_DIR)


class LLMReplyError(Exception):
    """The model's reply stayed unusable after every repair. `well_formed` is true when the last reply did
    validate as JSON but was rejected on its content (a fixer patch that changes the task id, say)."""

    def __init__(self, message: str, *, well_formed: bool = False) -> None:
        super().__init__(message)
        self.well_formed = well_formed


class ReplyRejected(ValueError):
    """A well-formed reply whose content a role cannot accept; the message goes back to the model."""


class Endpoint:
    """The one model connection the roles share: client, retries, usage and the skills they read."""

    def __init__(self, config: LLMConfig, *, client: openai.AsyncOpenAI | None = None,
                 progress: Callable[[str], None] | None = None) -> None:
        self.config = config
        self.agent = OpenAIAgent(AgentConfig(model=config.model, base_url=config.base_url, api_key=config.api_key,
                                             request_timeout_s=config.timeout, max_attempts=config.max_attempts),
                                 client=client)
        self.usage = Usage()
        self.progress = progress or (lambda message: None)
        self._rng = random.Random(config.model)
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # -- the event loop ------------------------------------------------------------------------------------
    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="taskforge-llm", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def close(self) -> None:
        """Close a client this endpoint created and stop its loop (idempotent)."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None:
            return
        asyncio.run_coroutine_threadsafe(self.agent.aclose(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join()
        loop.close()

    async def _request(self, body: dict[str, Any]) -> Any:
        response = await self.agent.request(body, self.usage, self._rng)
        usage = getattr(response, "usage", None)
        tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0)
        tokens_out = int(getattr(usage, "completion_tokens", 0) or 0)
        self.usage.tokens_in += tokens_in
        self.usage.tokens_out += tokens_out
        self.usage.cost += self.agent.prices.cost(self.config.model, tokens_in, tokens_out)
        return response

    # -- requests ------------------------------------------------------------------------------------------
    def complete(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None,
                 json_reply: bool = False) -> Any:
        """One chat completion's message; AgentUnavailable when the endpoint stays unreachable."""
        body: dict[str, Any] = {"model": self.config.model, "messages": messages}
        if self.config.temperature is not None:
            body["temperature"] = self.config.temperature
        if tools:
            body["tools"] = tools
        if json_reply:
            body["response_format"] = {"type": "json_object"}
        future = asyncio.run_coroutine_threadsafe(self._request(body), self._running_loop())
        response = future.result()
        if not getattr(response, "choices", None):
            raise AgentUnavailable("api_error", f"{self.agent.name}: the endpoint returned a reply with no choices")
        return response.choices[0].message

    def skill(self, name: str) -> str:
        path = Path(self.config.skills_dir) / f"{name}.md"
        try:
            return path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"cannot read the {name} skill at {path} ({exc.strerror or exc}); the LLM drivers "
                             "use it as instructions: point skills_dir (--skills-dir) at the skills folder") from exc

    def ask(self, role: str, system: str, user: str, reply_model: type[M],
            check: Callable[[M], None] | None = None) -> M:
        """One JSON object validated by `reply_model` (and `check`), re-asking with the error when it fails."""
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        problem, well_formed = "", False
        for _attempt in range(self.config.max_repairs + 1):
            text = self.complete(messages, json_reply=True).content or ""
            well_formed = False
            try:
                reply = reply_model.model_validate(_json_object(text))
                well_formed = True
                if check is not None:
                    check(reply)
                return reply
            except ValidationError as exc:
                problem = _validation_problem(exc)
            except ValueError as exc:
                problem = str(exc)
            messages += [{"role": "assistant", "content": text},
                         {"role": "user", "content": render(REPAIR_PROMPT, problem=problem,
                                                            schema=_dump(reply_model.model_json_schema()))}]
        raise LLMReplyError(f"{role} ({self.config.model}): no usable reply after {self.config.max_repairs + 1} "
                            f"attempt(s); last problem: {problem}", well_formed=well_formed)


def _json_object(text: str) -> Any:
    """The reply's JSON object: the whole text, else the first balanced object in it (fences, prose)."""
    stripped = text.strip()
    if not stripped:
        raise ValueError("the reply is empty; reply with one JSON object")
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as exc:
        found = next((obj for obj in _balanced_objects(stripped) if isinstance(obj, dict)), None)
        if found is None:
            raise ValueError(f"the reply is not a JSON object ({exc.msg} at line {exc.lineno} column "
                             f"{exc.colno})") from exc
        return found


def _validation_problem(exc: ValidationError) -> str:
    lines = []
    for err in exc.errors()[:6]:
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        lines.append(f"{loc}: {err['msg']}")
    return "; ".join(lines)


def clip(value: Any, limit: int = TRIM) -> str:
    text = value if isinstance(value, str) else _dump(value)
    return text if len(text) <= limit else text[:limit] + "…"


def task_json(task: Task) -> str:
    """A task as a reviewer reads it: the effective file, defaults merged, default-valued noise left out."""
    return json.dumps(task.model_dump(mode="json", exclude_defaults=True), indent=1, ensure_ascii=False)


REPAIR_PROMPT = """\
Your reply could not be used: {{ problem }}
Reply again with one JSON object and nothing else, matching this JSON Schema:
{{ schema }}"""


# ================================================================================================ validator
Check = Literal["reachability", "findability", "possibility", "budget", "single_ask"]


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ValidatorFinding(_Reply):
    check: Check
    severity: Literal["blocker", "minor"]
    reason: str = Field(min_length=1)
    evidence: str = ""
    suggestion: str = ""

    @field_validator("check", mode="before")
    @classmethod
    def _spelling(cls, value: Any) -> Any:
        return value.strip().lower().replace("-", "_").replace(" ", "_") if isinstance(value, str) else value


def _verdict_matches_flags(verdict: str, flags: list[Any], clean: str) -> None:
    """A reply's verdict and its flags must say the same thing."""
    if verdict == "flag" and not flags:
        raise ValueError("verdict 'flag' needs at least one flag")
    if verdict == clean and flags:
        raise ValueError(f"verdict '{clean}' carries no flags; use 'flag' to report them")


class ValidatorReply(_Reply):
    verdict: Literal["approve", "flag"]
    flags: list[ValidatorFinding] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> ValidatorReply:
        _verdict_matches_flags(self.verdict, self.flags, "approve")
        return self


VALIDATOR_PROMPT = """\
## The task file
```json
{{ task }}
```

## What the world serves for it
The widgets this task grades, as the connected backends declare them, with the rows served for each graded
parameter set (at most {{ max_rows }} rows each), their app neighbours, and the knowledge sources its reference
reads.
```json
{{ digest }}
```

## Reply format (replaces the Output section of your instructions)
Reply with one JSON object and nothing else:
{"verdict": "approve" | "flag", "flags": [{"check": "reachability" | "findability" | "possibility" | "budget" |
"single_ask", "severity": "blocker" | "minor", "reason": "...", "evidence": "...", "suggestion": "..."}]}
"approve" carries an empty flags list; "flag" carries one entry per problem."""


def _widget_refs(task: Task) -> list[tuple[str, str, dict[str, Any] | None]]:
    """(origin, widget_id, data_args) the task grades or reads, in first-seen order."""
    refs: list[tuple[str, str, dict[str, Any] | None]] = []
    for req in task.eval.required_widgets:
        refs.append((req.origin, req.widget_id, dict(req.data_args)))
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


def _app_members(app: dict[str, Any]) -> set[str]:
    return {str(item.get("i")) for tab in (app.get("tabs") or {}).values() if isinstance(tab, dict)
            for item in tab.get("layout") or [] if isinstance(item, dict)}


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
            conn = next((c for c in ws.connections if c.name == origin and widget_id in c.catalog.widgets), None)
            if conn is None:
                widgets[key] = {"origin": origin, "widget_id": widget_id, "served": False,
                                "note": "no backend of the setup serves it (one the task builds is defined in its "
                                        "manage_backends step)"}
                continue
            w = conn.catalog.widgets[widget_id]
            members = {str(a.get("name")): _app_members(a) for a in conn.catalog.apps}
            apps = [name for name, ids in members.items() if widget_id in ids]
            near = set().union(*(members[a] for a in apps)) if apps else set()
            neighbours = [{"name": o.name, "description": str(o.definition.get("description") or "")}
                          for o in conn.catalog.widgets.values() if o.widget_id != widget_id
                          and (o.widget_id in near or (not apps and o.definition.get("category")
                                                       == w.definition.get("category")))]
            widgets[key] = {"origin": origin, "widget_id": widget_id, "name": w.name,
                            "description": str(w.definition.get("description") or ""),
                            "category": w.definition.get("category"), "apps": apps,
                            "params": [{"name": p.get("paramName"), "default": p.get("value"),
                                        "options": [o.get("value") if isinstance(o, dict) else o
                                                    for o in p.get("options") or []]} for p in w.option_params],
                            "same_app_widgets": neighbours[:MAX_NEIGHBOURS], "rows": []}
        entry = widgets[key]
        if entry.get("served") is False or data_args is None:
            continue
        if any(r["data_args"] == data_args for r in entry["rows"]):
            continue
        envelope = ws.call("get_widget_data", {"origin": origin, "widget_id": widget_id, "data_args": data_args})
        rows = envelope.data.get("data", []) if envelope.ok and isinstance(envelope.data, dict) else []
        entry["rows"].append({"data_args": data_args, "ok": envelope.ok,
                              "served": rows[:MAX_ROWS] if envelope.ok else envelope.message})
    sources = []
    for step in task.eval.required_tools:
        if step.tool == "get_skill_content" and step.args.get("slug") in world.skills:
            skill = world.skills[step.args["slug"]]
            sources.append({"skill": skill.slug, "name": skill.name, "content": clip(skill.content, 2000),
                            "listed_in_setup": skill.slug in (task.setup.workspace_skills or [])})
        elif step.tool == "read_workspace_resource" and step.args.get("uri") in world.resources:
            resource = world.resources[step.args["uri"]]
            sources.append({"resource": resource.uri, "title": resource.title, "text": clip(resource.text, 2000)})
        elif step.tool == "get_workspace_prompt" and step.args.get("name") in world.prompts:
            prompt = world.prompts[step.args["name"]]
            sources.append({"prompt": prompt.name, "description": prompt.description, "text": clip(prompt.text, 2000)})
    return {"widgets": list(widgets.values()), "knowledge_sources": sources,
            "skills_in_setup": list(ws.skills), "dashboards": [d.name for d in ws.dashboards.values()]}


class LLMValidator:
    """Fresh eyes: the model sees the task file and a digest of the world, never the story or the author."""

    name = "llm"

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    def review(self, task: Task, world: World, persona: str) -> list[Flag]:
        user = render(VALIDATOR_PROMPT, task=task_json(task), max_rows=MAX_ROWS,
                      digest=json.dumps(world_digest(task, world), indent=1, ensure_ascii=False, default=str))
        reply = self.endpoint.ask("validator", self.endpoint.skill("task-validator"), user, ValidatorReply)
        story = task.meta.story if task.meta else None
        flags = [make_flag(role="validator", kind="validator", persona=persona, story=story, task_id=task.id,
                           level=task.level, check=f.check, severity=f.severity, reason=f.reason,
                           evidence=f.evidence, suggestion=f.suggestion) for f in reply.flags]
        self.endpoint.progress(f"llm validator {task.id}: {reply.verdict}"
                               + (f" ({len(flags)} flag(s))" if flags else ""))
        return flags


# ================================================================================================ fairness
Rule = Literal["constant-core", "signature-present", "signature-absent-below", "budget", "copy-paste", "skeleton",
               "voice"]


class FairnessFinding(_Reply):
    level: int | None = Field(default=None, ge=0, le=4, description="the level that must change; null for "
                                                                     "the whole ladder")
    rule: Rule
    severity: Literal["blocker", "minor"]
    reason: str = Field(min_length=1)
    evidence: str = ""

    @field_validator("level", mode="before")
    @classmethod
    def _level(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower().removeprefix("level").isdigit():
            return int(value.strip().lower().removeprefix("level"))
        return value

    @field_validator("rule", mode="before")
    @classmethod
    def _spelling(cls, value: Any) -> Any:
        return value.strip().lower().replace("_", "-").replace(" ", "-") if isinstance(value, str) else value


class FairnessReply(_Reply):
    verdict: Literal["pass", "flag"]
    flags: list[FairnessFinding] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> FairnessReply:
        _verdict_matches_flags(self.verdict, self.flags, "pass")
        return self


FAIRNESS_PROMPT = """\
## Story {{ story }}: its levels side by side
{% for level in levels %}
### {{ level.id }} ({{ level.name }})
```json
{{ level.json }}
```
{% endfor %}
## The persona's other stories, same-level prompts
Word-trigram Jaccard against this story's prompt at the same level is computed for you (the skeleton rule).
```json
{{ others }}
```

## Reply format (replaces the Output section of your instructions)
Reply with one JSON object and nothing else:
{"verdict": "pass" | "flag", "flags": [{"level": 0-4 or null for the whole ladder, "rule": "constant-core" |
"signature-present" | "signature-absent-below" | "budget" | "copy-paste" | "skeleton" | "voice",
"severity": "blocker" | "minor", "reason": "...", "evidence": "..."}]}
"pass" carries an empty flags list; "flag" carries one entry per violation, naming the level that must change."""


class LLMFairness:
    """The ladder read as a set, by a model holding the fairness skill."""

    name = "llm"

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    def review(self, story: str, levels: list[Task], persona_tasks: list[Task], persona: str) -> list[Flag]:
        ordered = sorted(levels, key=lambda t: t.level)
        others = []
        for task in ordered:
            for other in persona_tasks:
                other_story = other.meta.story if other.meta else None
                if other.difficulty == task.difficulty and other_story != story and other.id != task.id:
                    others.append({"level": task.level, "task_id": other.id, "prompt": other.prompt,
                                   "jaccard": round(jaccard(task.prompt, other.prompt), 3), "against": task.id})
        user = render(FAIRNESS_PROMPT, story=story, others=json.dumps(others, indent=1, ensure_ascii=False),
                      levels=[{"id": t.id, "name": LEVEL_NAMES[t.difficulty], "json": task_json(t)} for t in ordered])
        reply = self.endpoint.ask("fairness", self.endpoint.skill("task-level-fairness"), user, FairnessReply)
        by_level = {t.level: t for t in ordered}
        flags = []
        for f in reply.flags:
            task = by_level.get(f.level) if f.level is not None else None
            flags.append(make_flag(role="fairness", kind="fairness", persona=persona, story=story,
                                   task_id=task.id if task else None, level=f.level, check=f.rule,
                                   severity=f.severity, reason=f.reason, evidence=f.evidence))
        self.endpoint.progress(f"llm fairness {story}: {reply.verdict}" + (f" ({len(flags)} flag(s))" if flags else ""))
        return flags


# ================================================================================================ fixer
SkillName = Literal["task-author", "task-validator", "task-level-fairness", "task-fixer"]


class FixerReply(_Reply):
    action: Literal["patch", "escalate"]
    task: dict[str, Any] | None = None
    repaired: str | None = None
    lesson: str | None = None
    skill: SkillName | None = None
    reason: str | None = None

    @model_validator(mode="after")
    def _complete(self) -> FixerReply:
        if self.action == "patch":
            missing = [k for k in ("task", "repaired", "lesson", "skill") if not getattr(self, k)]
            if missing:
                raise ValueError(f"a patch needs {', '.join(missing)}")
        elif not self.reason:
            raise ValueError("an escalation needs a reason")
        return self


FIXER_PROMPT = """\
## The task (the only thing you may change)
```json
{{ task }}
```

## The defect
```json
{{ defect }}
```

## The failing attempts (trimmed: tool, args, ok, error message)
```json
{{ trials }}
```

## Reply format (replaces the Report section of your instructions)
Reply with one JSON object and nothing else, either a patch:
{"action": "patch", "task": {the complete repaired task, same id}, "repaired": "what changed, one line",
 "lesson": "<defect> → <rule for future authors>", "skill": "task-author" | "task-validator" |
 "task-level-fairness" | "task-fixer"}
or an escalation: {"action": "escalate", "reason": "why it is out of scope or unclear, and what a person could
change"}.
The lesson is appended for you with the date, story and level; do not repeat them."""


def _graded_strength(task: Task) -> dict[str, int]:
    """Counts a repair may not lower: removing any of these weakens what the task checks."""
    ev = task.eval
    return {
        "graded (non-optional) required_tools steps": sum(1 for s in ev.required_tools if not s.optional),
        "required_widgets entries": len(ev.required_widgets),
        "required_widgets with max_count": sum(1 for r in ev.required_widgets if r.max_count is not None),
        "required_generated_widgets entries": len(ev.required_generated_widgets),
        "data_contains values": sum(len(r.data_contains) for r in ev.required_generated_widgets),
        "required_layouts entries": len(ev.required_layouts),
        "required_widget_defs entries": len(ev.required_widget_defs),
        "required_app_defs entries": len(ev.required_app_defs),
        "required_tool_results entries": len(ev.required_tool_results),
        "hidden values": len(task.meta.hidden) if task.meta else 0,
    }


def check_patch(before: dict[str, Any], after: dict[str, Any], defaults: dict[str, Any]) -> Task:
    """The patched task, or ReplyRejected saying why it is not an acceptable repair of `before`."""
    if after.get("id") != before.get("id"):
        raise ReplyRejected(f"the patch changes the task id to {after.get('id')!r}; keep {before.get('id')!r}")
    if after.get("difficulty") != before.get("difficulty"):
        raise ReplyRejected(f"the patch changes difficulty to {after.get('difficulty')!r}; keep "
                            f"{before.get('difficulty')!r} (never lower the level's dial)")
    file = f"{before.get('id')}.json"
    try:
        patched = parse_task(after, file, defaults)
    except TaskFileError as exc:
        raise ReplyRejected(f"the patched task does not parse: {exc.field}: {exc.message}") from exc
    try:
        original = parse_task(before, file, defaults)
    except TaskFileError:
        return patched
    if patched.eval.trace_checks.max_invalid_tool_calls > original.eval.trace_checks.max_invalid_tool_calls:
        raise ReplyRejected("the patch raises the invalid-call budget; never weaken a check")
    old, new = _graded_strength(original), _graded_strength(patched)
    weaker = [f"{k} {old[k]} -> {new[k]}" for k in old if new[k] < old[k]]
    if weaker:
        raise ReplyRejected(f"the patch weakens the task ({'; '.join(weaker)}); repair the cause without removing "
                            "checks, or escalate")
    return patched


def trial_digest(trial: Trial) -> dict[str, Any]:
    events = []
    for event in trial.events[:MAX_EVENTS]:
        envelope = event.get("envelope") or {}
        error = envelope.get("error") if isinstance(envelope, dict) else None
        item: dict[str, Any] = {"tool": event.get("tool"), "args": clip(event.get("args"), 300),
                                "ok": event.get("ok")}
        if not event.get("ok"):
            item["error"] = clip((error or {}).get("message") or envelope.get("message") or "", 300)
        events.append(item)
    return {"repeat": trial.repeat, "ended_by": trial.ended_by, "failure_codes": trial.failure_codes,
            "fingerprint": trial.fingerprint, "turns": trial.turns, "events": events,
            "events_omitted": max(0, len(trial.events) - MAX_EVENTS),
            "final_answer": clip(trial.final_answer or "", 300)}


class LLMFixer:
    """Repairs a defect by editing the task alone; the pipeline re-certifies and appends the lesson."""

    name = "llm"

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    def repair(self, task: dict[str, Any], defect: Defect, trials: list[Trial], world: World) -> FixResult:
        failing = [t for t in trials if t.task_id == defect.task_id and t.valid and not t.passed][:MAX_TRIALS]
        user = render(FIXER_PROMPT, task=json.dumps(task, indent=1, ensure_ascii=False),
                      defect=json.dumps(defect.model_dump(mode="json"), indent=1, ensure_ascii=False),
                      trials=json.dumps([trial_digest(t) for t in failing], indent=1, ensure_ascii=False))

        def check(reply: FixerReply) -> None:
            if reply.action == "patch" and reply.task is not None:
                check_patch(task, reply.task, STANDARD_DEFAULTS)

        try:
            reply = self.endpoint.ask("fixer", self.endpoint.skill("task-fixer"), user, FixerReply, check)
        except LLMReplyError as exc:
            if not exc.well_formed:
                raise
            self.endpoint.progress(f"llm fixer {defect.task_id}: patch rejected, escalating")
            return FixResult(None, escalate=f"the LLM fixer's patch was rejected: {exc}")
        if reply.action == "escalate":
            self.endpoint.progress(f"llm fixer {defect.task_id}: escalated")
            return FixResult(None, escalate=reply.reason)
        self.endpoint.progress(f"llm fixer {defect.task_id}: {reply.repaired}")
        return FixResult(reply.task, repaired=reply.repaired, lesson=reply.lesson, skill=reply.skill)


# ================================================================================================ wiring
def llm_drivers(config: LLMConfig, progress: Callable[[str], None], *,
                client: openai.AsyncOpenAI | None = None) -> Drivers:
    """The four LLM drivers over one shared endpoint (and client); `client` is injectable for tests."""
    from .llm_author import LLMAuthor

    missing = [s for s in SKILLS if not (Path(config.skills_dir) / f"{s}.md").is_file()]
    if missing:
        raise ValueError(f"the LLM drivers read their instructions from {config.skills_dir}, which has no "
                         f"{', '.join(m + '.md' for m in missing)}: point skills_dir (--skills-dir) at the skills "
                         "folder")
    endpoint = Endpoint(config, client=client, progress=progress)
    return Drivers(LLMAuthor(endpoint), LLMValidator(endpoint), LLMFairness(endpoint), LLMFixer(endpoint), progress)
