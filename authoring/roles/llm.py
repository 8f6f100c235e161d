"""What the LLM drivers of the four roles share: their configuration, their budgets and their endpoint.

Every request goes through certify's model client (certify/model_client.py), the one client that the agents
under test use too: the SDK's retries, structured outputs, per-model quirks, the context budget and the
response cache live there. This module adds what only the roles need:

- budgets: caps on model calls, tokens and cost per level (a task id, or a story for the ladder reviewer) and
  per run, checked before every request;
- role failures: a role that exhausts its budget, whose replies never validate, or whose endpoint keeps
  failing raises `RoleFailure` with the last reply as evidence, and the graph turns it into a review item;
- `ask`: one JSON reply validated by a pydantic model, re-asked with the validation error a bounded number of
  times;
- the skills: each role's instructions are its skills/*.md file, read at call time, so a lesson the fixer
  appended earlier in the run is already in force for the next call;
- the preflight: an unreachable endpoint, a refused key or an unknown model is an `EndpointError` before any
  work.

Nothing falls back to the rule drivers: a missing model or endpoint is an error that names what to set.
"""

from __future__ import annotations

import functools
import json
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from certify import (
    BlockingClient,
    Completion,
    EndpointUnusable,
    ModelClient,
    ModelConfig,
    ModelError,
    ModelUnavailable,
    Task,
    Usage,
    resolve_endpoint,
    top_level_objects,
)

from ..failures import EndpointError, RoleFailure, RoleUnavailable
from .prompts import render_prompt

if TYPE_CHECKING:
    import httpx2
    import openai

DEFAULT_SKILLS_DIR = Path(__file__).resolve().parents[2] / "skills"
DEFAULT_CACHE_DIR = Path(".taskforge") / "model-cache"
SKILLS = ("task-author", "task-validator", "task-level-fairness", "task-fixer")
TRIM = 600
EVIDENCE = 2000

M = TypeVar("M", bound=BaseModel)


class LLMConfig(ModelConfig):
    """How the authoring roles reach their model (the model client's generation config, with the roles'
    defaults), how they work, and what they may spend. `api_key` stays out of reprs."""

    timeout_s: float = Field(default=180.0, gt=0, description="seconds per HTTP attempt")
    max_retries: int = Field(
        default=3, ge=0, description="the SDK's retries of one request (429, 5xx, timeouts)"
    )
    context_tokens: int | None = Field(
        default=120_000, gt=0, description="old tool results are trimmed beyond it"
    )
    cache_dir: Path | None = Field(default=DEFAULT_CACHE_DIR, description="response cache; None disables it")
    max_tool_rounds: int = Field(default=12, ge=1, description="model requests per author draft")
    max_nudges: int = Field(
        default=2,
        ge=0,
        description="replies without a tool call the author may give in a draft before it is a role failure",
    )
    max_repairs: int = Field(default=2, ge=0, description="re-asks after a reply that does not validate")
    skills_dir: Path = DEFAULT_SKILLS_DIR
    max_concurrency: int = Field(
        default=32,
        ge=1,
        description="model requests in flight at once across every role and story (--concurrency; default the "
        "graph's own 32): four stories' long author prompts at once can exceed a small server's timeout",
    )
    max_calls_per_level: int = Field(default=40, ge=1)
    max_tokens_per_level: int | None = Field(default=1_500_000, ge=1)
    max_cost_per_level: float | None = Field(default=3.0, gt=0, description="USD")
    max_calls_per_run: int = Field(default=600, ge=1)
    max_tokens_per_run: int | None = Field(default=15_000_000, ge=1)
    max_cost_per_run: float | None = Field(default=30.0, gt=0, description="USD")

    @classmethod
    def from_env(
        cls,
        model: str | None = None,
        base_url: str | None = None,
        *,
        env: Mapping[str, str] | None = None,
        **settings: Any,
    ) -> LLMConfig:
        """Arguments win over the environment: TASKFORGE_MODEL or OPENAI_MODEL, OPENAI_BASE_URL,
        OPENAI_API_KEY (a local server needs no key; a placeholder is sent). `settings` are further fields."""
        env = os.environ if env is None else env
        name = (model or env.get("TASKFORGE_MODEL") or env.get("OPENAI_MODEL") or "").strip()
        problems = []
        if not name:
            problems.append(
                "no model: pass --model or set TASKFORGE_MODEL (or OPENAI_MODEL), e.g. "
                "TASKFORGE_MODEL=gpt-4.1"
            )
        base: str | None = None
        key: str | None = None
        try:
            base, key = resolve_endpoint(base_url, None, env)
        except ValueError:
            problems.append(
                "no endpoint: set OPENAI_API_KEY for api.openai.com, or OPENAI_BASE_URL (or "
                "--base-url) for an OpenAI-compatible server such as Ollama "
                "(http://localhost:11434/v1), vLLM or llama.cpp"
            )
        if problems:
            raise ValueError("the LLM authoring drivers are not configured: " + "; ".join(problems))
        return cls(model=name, base_url=base, api_key=key, **settings)


@dataclass
class Spend:
    calls: int = 0
    tokens: int = 0
    cost: float = 0.0

    def over(self, calls: int, tokens: int | None, cost: float | None) -> str | None:
        """What cap this spend has reached, or None."""
        if self.calls >= calls:
            return f"{self.calls} model calls (cap {calls})"
        if tokens is not None and self.tokens >= tokens:
            return f"{self.tokens} tokens (cap {tokens})"
        if cost is not None and self.cost >= cost:
            return f"${self.cost:.2f} (cap ${cost:.2f})"
        return None


class Budget:
    """Model calls, tokens and cost spent, per level and per run; shared by threads (validators and stories run
    in parallel). Cached replies cost nothing and count for nothing.

    A call is reserved before it is sent (`reserve`: the caps checked and the call counted in one step, under
    the lock), so calls in flight at once cannot all pass a check that only one of them fits: the call caps
    hold exactly under any concurrency. Tokens and cost are only known from the reply (`settle`), so those
    caps stop the next call once reached, and calls already in flight may carry a run past them."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.run = Spend()
        self.levels: dict[str, Spend] = {}
        self._lock = threading.Lock()

    def _spent(self, scope: str) -> str | None:
        cfg = self.config
        run = self.run.over(cfg.max_calls_per_run, cfg.max_tokens_per_run, cfg.max_cost_per_run)
        if run is not None:
            return f"the run's budget is spent: {run}"
        level = self.levels.get(scope, Spend()).over(
            cfg.max_calls_per_level, cfg.max_tokens_per_level, cfg.max_cost_per_level
        )
        return f"the budget of {scope} is spent: {level}" if level is not None else None

    def exhausted(self, scope: str) -> str | None:
        with self._lock:
            return self._spent(scope)

    def reserve(self, scope: str) -> str | None:
        """Count one call against the run and `scope` if every cap allows it; else what is spent (nothing is
        counted then). A reserved call is settled by `settle`, or given back by `release` if it was never
        charged (a cached reply)."""
        with self._lock:
            spent = self._spent(scope)
            if spent is None:
                for spend in (self.run, self.levels.setdefault(scope, Spend())):
                    spend.calls += 1
            return spent

    def settle(self, scope: str, completion: Completion) -> None:
        """The reply of a reserved call: its tokens and cost; a cached reply gives its call back."""
        if completion.cached:
            self.release(scope)
            return
        with self._lock:
            for spend in (self.run, self.levels.setdefault(scope, Spend())):
                spend.tokens += completion.tokens_in + completion.tokens_out
                spend.cost += completion.cost

    def release(self, scope: str) -> None:
        with self._lock:
            for spend in (self.run, self.levels.setdefault(scope, Spend())):
                spend.calls -= 1


class Endpoint:
    """The one model connection the roles share: client, budgets, usage and the skills they read."""

    def __init__(
        self,
        config: LLMConfig,
        *,
        client: openai.AsyncOpenAI | None = None,
        http_client: httpx2.AsyncClient | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        self.config = config
        self.client = BlockingClient(ModelClient(config, client=client, http_client=http_client))
        self.budget = Budget(config)
        self.usage = Usage()
        self._usage_lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(config.max_concurrency)
        self.progress = progress or (lambda message: None)

    def close(self) -> None:
        self.client.close()

    def check(self) -> None:
        """The preflight: EndpointError when the endpoint cannot be used at all."""
        try:
            self.client.check()
        except EndpointUnusable as exc:
            raise EndpointError(str(exc)) from exc

    def complete(
        self, role: str, scope: str, messages: list[dict[str, Any]], *, evidence: str = "", **request: Any
    ) -> Completion:
        """One model call charged to `scope`; RoleFailure when the budget is spent or the call fails."""
        spent = self.budget.reserve(scope)  # counted before it is sent: parallel stories share the cap
        if spent is not None:
            raise RoleFailure(role, f"{scope}: {spent}", evidence=evidence)
        try:
            with self._slots:
                completion = self.client.complete(messages, **request)
        except ModelUnavailable as exc:
            with self._usage_lock:
                self.usage.requests += 1 + self.config.max_retries
                self.usage.retries += self.config.max_retries
            self.progress(
                f"{role} {scope}: the request failed after {self.config.max_retries} retries ({exc.reason})"
            )
            raise RoleUnavailable(
                role,
                f"{scope}: the model endpoint failed ({exc.reason}): {exc}",
                evidence=evidence or str(exc),
            ) from exc
        except ModelError as exc:
            raise RoleFailure(
                role, f"{scope}: the request was refused ({exc.reason}): {exc}", evidence=evidence or str(exc)
            ) from exc
        self.budget.settle(scope, completion)
        if completion.retries:
            self.progress(
                f"{role} {scope}: the request was retried {completion.retries} time(s) before it was answered"
            )
        with self._usage_lock:
            self.usage.requests += 0 if completion.cached else 1 + completion.retries
            self.usage.retries += completion.retries
            self.usage.tokens_in += completion.tokens_in
            self.usage.tokens_out += completion.tokens_out
            self.usage.cost += completion.cost
        return completion

    def skill(self, name: str) -> str:
        path = Path(self.config.skills_dir) / f"{name}.md"
        try:
            return path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(
                f"cannot read the {name} skill at {path} ({exc.strerror or exc}); the LLM drivers "
                "use it as instructions: point skills_dir (--skills-dir) at the skills folder"
            ) from exc

    def ask(
        self,
        role: str,
        scope: str,
        system: str,
        user: str,
        reply_model: type[M],
        check: Callable[[M], None] | None = None,
    ) -> M:
        """One JSON object validated by `reply_model` (and by `check`, which raises ValueError to reject it),
        re-asked with the problem when it fails. RoleFailure when no reply was usable; RejectedReply when the
        last one validated but `check` rejected its content."""
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ]
        schema = schema_text(reply_model)
        problem, text, well_formed = "", "", False
        for _attempt in range(self.config.max_repairs + 1):
            text = self.complete(role, scope, messages, evidence=clip(text, EVIDENCE), reply=reply_model).text
            well_formed = False
            try:
                reply = reply_model.model_validate(json_object(text))
                well_formed = True
                if check is not None:
                    check(reply)
                return reply
            except ValidationError as exc:
                problem = validation_problem(exc)
            except ValueError as exc:
                problem = str(exc)
            messages += [
                {"role": "assistant", "content": text},
                {"role": "user", "content": render_prompt("reply-repair", problem=problem, schema=schema)},
            ]
        failure = RejectedReply if well_formed else RoleFailure
        raise failure(
            role,
            f"{scope}: no usable reply after {self.config.max_repairs + 1} attempt(s); last "
            f"problem: {problem}",
            evidence=clip(text, EVIDENCE),
        )


class RejectedReply(RoleFailure):
    """The last reply was well-formed but its content was rejected (a fixer patch that weakens the task)."""


def standard_defaults() -> dict[str, Any]:
    """The taskset defaults a role parses a task with when its context names none (the LLM author's
    submissions, the fixer's patches). Imported when asked for: the graph that owns them imports the roles."""
    from ..taskset import STANDARD_DEFAULTS

    return STANDARD_DEFAULTS


def json_object(text: str) -> Any:
    """The reply's JSON object: the whole text, else the first top-level object in it (fences, prose)."""
    stripped = text.strip()
    if not stripped:
        raise ValueError("the reply is empty; reply with one JSON object")
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as exc:
        found = next((obj for obj in top_level_objects(stripped) if isinstance(obj, dict)), None)
        if found is None:
            raise ValueError(
                f"the reply is not a JSON object ({exc.msg} at line {exc.lineno} column {exc.colno})"
            ) from exc
        return found


def validation_problem(exc: ValidationError) -> str:
    lines = []
    for err in exc.errors()[:6]:
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        lines.append(f"{loc}: {err['msg']}")
    return "; ".join(lines)


def clip(value: Any, limit: int = TRIM) -> str:
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    )
    return text if len(text) <= limit else text[:limit] + "…"


@functools.lru_cache(maxsize=32)
def schema_text(model: type[BaseModel]) -> str:
    """A reply model's JSON Schema as the repair prompt quotes it (generated once per model, not per request)."""
    return json.dumps(model.model_json_schema(), ensure_ascii=False)


def task_json(task: Task) -> str:
    """A task as a reviewer reads it: the effective file, defaults merged, default-valued noise left out."""
    return json.dumps(task.model_dump(mode="json", exclude_defaults=True), indent=1, ensure_ascii=False)


class RoleReply(BaseModel):
    """A role's structured reply: closed, so a misspelt field is a validation error sent back to the model."""

    model_config = ConfigDict(extra="forbid")


def spelled(joiner: str) -> Callable[[Any], Any]:
    """A before-validator reading a literal the way a model may spell it: any case, words joined by '-', '_' or a
    space (`joiner` is the literal's own)."""
    other = "_" if joiner == "-" else "-"

    def canonical(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        return value.strip().lower().replace(other, joiner).replace(" ", joiner)

    return canonical


class VerdictReply(RoleReply):
    """A reviewer's reply: a verdict and the flags it raises, which must say the same thing. `clean` is the
    verdict that carries no flags."""

    clean: ClassVar[str]
    verdict: str
    flags: list[Any]

    @model_validator(mode="after")
    def _consistent(self) -> VerdictReply:
        if self.verdict == "flag" and not self.flags:
            raise ValueError("verdict 'flag' needs at least one flag")
        if self.verdict == self.clean and self.flags:
            raise ValueError(f"verdict '{self.clean}' carries no flags; use 'flag' to report them")
        return self
