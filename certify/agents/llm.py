"""`openai:<model>`: a model behind any OpenAI-compatible chat endpoint (OpenAI, Ollama, vLLM, llama.cpp).

Two ways to act. `json` is the plain loop of the source benchmark: the tools and their schemas are listed in the
system prompt, the model answers each turn with one JSON action as text, and the envelope comes back as the next
user message; it works with any chat endpoint and measures format discipline (strict vs lenient parsing).
`tools` uses the endpoint's native tool calling. Either way the system prompt says only how to act, the same for
every task of a tool set, so that it and the tool schemas are a prefix a provider's cache keeps across trials; the
first user message is the request, then the episode's rules (its turn and invalid-call budgets and standing
checks, never the eval block). In `tools` mode a reply that calls no
tool does not end the episode: it is a turn, and the model is told to continue or call final_answer; after
`max_idle_replies` such replies in a row the session stops.

Requests go through the one model client (certify/model_client.py): the SDK's retries and Retry-After, the
per-model quirks (no temperature for reasoning models, the output cap's name, a refused parameter dropped and
remembered). Only failures that say something about the model become part of its score: infrastructure that
still fails after the retries raises AgentUnavailable (the trial is invalid, not failed); a refusal that is the
model's own limit — its context window overflowed, a parameter it will not take — raises AgentRefused (a failure
with that reason); any other refused request is the harness's fault (invalid).
"""

from __future__ import annotations

import json
from collections import deque
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..episode import NO_ACTION
from ..model_client import (
    DEFAULT_MAX_TOKENS,
    PLACEHOLDER_KEY,
    Completion,
    ModelClient,
    ModelConfig,
    ModelRefused,
    ModelRequestError,
    ModelUnavailable,
    resolve_endpoint,
)
from ..pricing import PriceTable
from ..rules import task_text
from ..task import Task
from .base import Action, AgentRefused, AgentUnavailable, TaskView, Usage, register_agent
from .compact import TABLE_NOTE, compact_schema
from .compact import dumps as compact_dumps
from .parsing import ParseKind, ParseMode, parse_arguments, parse_reply

if TYPE_CHECKING:
    import httpx2
    import openai

__all__ = [
    "PLACEHOLDER_KEY",
    "LLMConfig",
    "OpenAIAgent",
    "OpenAISession",
    "check_agents",
    "first_message",
    "resolve_endpoint",
    "system_prompt",
]

FINAL_ANSWER = "final_answer"
TRUNCATED = "…[truncated: {shown} of {total} characters shown]"
# Retry settings of older run records, now the SDK's: max_attempts becomes max_retries, the rest is dropped.
_OBSOLETE = ("timeout_attempts", "backoff_base_s", "backoff_max_s", "max_retry_after_s")

JSON_SYSTEM_PROMPT = """\
You operate a financial analyst workspace through tools. Each tool is listed with its description and the JSON \
Schema of its arguments.

{tools}

How to act:
- Reply with exactly one JSON object per turn and nothing else: {{"tool": NAME, "args": {{...}}}}
- After each action you receive the tool's result envelope as JSON (ok, message, data, error).
- When the work is done, finish with {{"tool": "final_answer", "args": {{"text": "your answer"}}}}.
- {table_note}
"""

TOOLS_SYSTEM_PROMPT = """\
You operate a financial analyst workspace through the tools provided. Work with tool calls; each call returns \
the tool's result envelope as JSON (ok, message, data, error). A reply without a tool call does nothing and \
does not end the episode: call final_answer with your answer when the work is done. {table_note}
"""


class LLMConfig(BaseModel):
    """How to reach and drive the model. `api_key` is never written to run records (see `public`)."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=1)
    mode: Literal["json", "tools"] = "json"
    parse: ParseMode = "lenient"
    base_url: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    temperature: float | None = Field(
        default=0.0,
        description="None leaves it out (models that accept only "
        "their default); left out anyway for models "
        "known to refuse it",
    )
    max_tokens: int | None = Field(
        default=DEFAULT_MAX_TOKENS,
        gt=0,
        description="output cap per reply, sent as max_completion_tokens (or the server's spelling)",
    )
    request_timeout_s: float = Field(default=60.0, gt=0, description="seconds per HTTP attempt")
    max_retries: int = Field(
        default=3,
        ge=0,
        description="the SDK's retries of a request (429, 5xx, timeouts, "
        "connection errors), honouring Retry-After",
    )
    max_requests: int = Field(
        default=200, ge=1, description="model requests per episode; a safety stop when a task sets no budget"
    )
    max_idle_replies: int = Field(
        default=2,
        ge=0,
        description="replies without a tool call in a row that are "
        "nudged; one more stops the session (tools mode)",
    )
    max_tool_output_chars: int | None = Field(
        default=None,
        gt=0,
        description="cap on each result the model is "
        "sent, with a truncation marker; "
        "None sends results whole",
    )
    context_tokens: int | None = Field(
        default=None,
        gt=0,
        description="trim old tool results beyond this request size; None keeps everything",
    )

    @model_validator(mode="before")
    @classmethod
    def _older_records(cls, data: Any) -> Any:
        if isinstance(data, dict) and any(k in data for k in ("max_attempts", *_OBSOLETE)):
            data = {k: v for k, v in data.items() if k not in _OBSOLETE}
            if "max_attempts" in data:
                attempts = data.pop("max_attempts")
                data.setdefault("max_retries", max(0, int(attempts) - 1))
        return data

    def public(self) -> dict[str, Any]:
        return self.model_dump(exclude={"api_key"})

    def client_config(self) -> ModelConfig:
        return ModelConfig(
            model=self.model,
            base_url=self.base_url,
            api_key=self.api_key,
            timeout_s=self.request_timeout_s,
            max_retries=self.max_retries,
            temperature=self.temperature,
            max_completion_tokens=self.max_tokens,
            context_tokens=self.context_tokens,
        )


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str)


def _tool_catalogue(tools: list[dict[str, Any]]) -> str:
    return "\n".join(
        f"- {t['name']}: {t.get('description', '').strip()}\n  args: {_dump(compact_schema(t['parameters']))}"
        for t in tools
    )


def system_prompt(view: TaskView, mode: Literal["json", "tools"] = "tools") -> str:
    """The system prompt of an episode: how to act in `mode` (in json mode with the tool catalogue). Nothing of
    the task: it is byte-identical for every task with the same tools, so with the tool schemas it is a prefix a
    provider's cache serves to every trial of a run; the task's request and rules come after it
    (`first_message`)."""
    if mode == "json":
        return JSON_SYSTEM_PROMPT.format(tools=_tool_catalogue(view.tools), table_note=TABLE_NOTE)
    return TOOLS_SYSTEM_PROMPT.format(table_note=TABLE_NOTE)


def first_message(view: TaskView) -> str:
    """The first user message of an episode: the request, then the episode's rules."""
    return task_text(view.prompt, view.rules)


class OpenAIAgent:
    """One configured model over one ModelClient, shared by all the sessions of a run; tests inject `client`
    or `http_client`. The SDK client is created inside the running event loop on first use."""

    privileged = False
    deterministic = False

    def __init__(
        self,
        config: LLMConfig,
        *,
        client: openai.AsyncOpenAI | None = None,
        http_client: httpx2.AsyncClient | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        self.config = config
        self.name = f"openai:{config.model}"
        self.model = ModelClient(
            config.client_config(), client=client, http_client=http_client, prices=prices
        )
        note = self.model.prices.note(config.model)
        self._notes: list[str] = [note] if note else []

    @classmethod
    def from_name(cls, name: str, **config: Any) -> OpenAIAgent:
        prefix, _, model = name.partition(":")
        if prefix != "openai" or not model.strip():
            raise ValueError(
                f"'{name}' names no model: use openai:<model>, e.g. openai:gpt-4.1-mini or "
                "openai:llama3.1:8b with OPENAI_BASE_URL pointing at Ollama"
            )
        return cls(LLMConfig(model=model.strip(), **config))

    @property
    def endpoint(self) -> str:
        return self.model.endpoint

    @property
    def notes(self) -> list[str]:
        """What a run record should say about this agent: an unknown price, parameters the model refused."""
        return [*self._notes, *self.model.notes]

    async def check(self) -> None:
        """The preflight (EndpointUnusable when the endpoint cannot be used); leaves no client behind, so the
        run that follows opens its own in its own event loop."""
        try:
            await self.model.check()
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        """Close a client this agent created (an injected one belongs to the caller)."""
        await self.model.aclose()

    def session(self, view: TaskView, task: Task | None = None) -> OpenAISession:
        return OpenAISession(self, view)

    async def complete(
        self, messages: list[dict[str, Any]], usage: Usage, tools: list[dict[str, Any]] | None = None
    ) -> Completion:
        """One reply, its cost added to `usage`; failures sorted into AgentUnavailable and AgentRefused."""
        try:
            completion = await self.model.complete(messages, tools=tools)
        except ModelUnavailable as exc:
            usage.requests += 1 + self.config.max_retries
            usage.retries += self.config.max_retries
            raise AgentUnavailable(exc.reason, f"{self.name}: {exc}") from exc
        except ModelRefused as exc:
            usage.requests += 1
            raise AgentRefused(exc.reason, f"{self.name}: {exc}") from exc
        except ModelRequestError as exc:
            usage.requests += 1
            raise AgentUnavailable(exc.reason, f"{self.name}: {exc}; not retried") from exc
        usage.requests += 1 + completion.retries
        usage.retries += completion.retries
        usage.tokens_in += completion.tokens_in
        usage.tokens_out += completion.tokens_out
        usage.tokens_cached += completion.tokens_cached
        usage.cost += completion.cost
        return completion


class OpenAISession:
    """One episode's conversation. The system prompt is sent once; the transcript is the messages exchanged."""

    def __init__(self, agent: OpenAIAgent, view: TaskView) -> None:
        self.agent = agent
        self.usage = Usage()
        self._mode = agent.config.mode
        self._parse: ParseMode = agent.config.parse
        self._replies = 0
        self._idle = 0
        system = system_prompt(view, self._mode)
        if self._mode == "json":
            self._tools: list[dict[str, Any]] | None = None
        else:
            self._tools = [
                {
                    "type": "function",
                    "function": {
                        "name": t["name"],
                        "description": t.get("description", ""),
                        "parameters": compact_schema(t["parameters"]),
                    },
                }
                for t in view.tools
            ]
        self._messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": first_message(view)},
        ]
        self._queue: deque[tuple[str, Action]] = deque()
        self._awaiting: str | None = None
        self._nudged = False
        self._stopping = False

    def transcript(self) -> list[dict[str, Any]]:
        return [dict(m) for m in self._messages]

    async def next_action(self, observation: dict[str, Any] | None) -> Action | None:
        if self._mode == "json":
            return await self._next_json(observation)
        return await self._next_tools(observation)

    def _count(self, kind: ParseKind) -> None:
        if kind == "strict":
            self.usage.strict_parses += 1
        elif kind == "lenient":
            self.usage.lenient_parses += 1
        else:
            self.usage.failed_parses += 1

    def _observed(self, observation: dict[str, Any]) -> str:
        """A result as the model is sent it: whole, or cut at the configured cap with a marker saying so."""
        text = compact_dumps(observation)
        cap = self.agent.config.max_tool_output_chars
        if cap is None or len(text) <= cap:
            return text
        return text[:cap] + TRUNCATED.format(shown=cap, total=len(text))

    async def _complete(self) -> Completion:
        completion = await self.agent.complete(self._messages, self.usage, self._tools)
        self._replies += 1
        return completion

    def _cut(self, completion: Completion) -> AgentRefused:
        """A reply cut at the output cap with no usable action in it: the model's own failure to fit its
        answer in the cap, with what to try."""
        cap = self.agent.config.max_tokens
        return AgentRefused(
            "output_truncated",
            f"{self.agent.name}: the reply was cut at the output cap ({cap} tokens, finish_reason length) "
            "before it held an action; raise --max-tokens if the model needs longer replies",
            reply=completion.text or "",
        )

    async def _next_json(self, observation: dict[str, Any] | None) -> Action | None:
        if observation is not None:
            self._messages.append({"role": "user", "content": self._observed(observation)})
        if self._replies >= self.agent.config.max_requests:
            return None
        completion = await self._complete()
        text = completion.text
        self._messages.append({"role": "assistant", "content": text})
        parsed = parse_reply(text, self._parse)
        if completion.truncated and parsed.action.parse_error is not None:
            raise self._cut(completion)
        self._count(parsed.kind)
        return parsed.action

    async def _next_tools(self, observation: dict[str, Any] | None) -> Action | None:
        if observation is not None and self._awaiting is not None:
            self._messages.append(
                {"role": "tool", "tool_call_id": self._awaiting, "content": self._observed(observation)}
            )
            self._awaiting = None
        elif observation is not None and self._nudged:
            self._messages.append({"role": "user", "content": str(observation.get("message") or "")})
        self._nudged = False
        if self._stopping:
            return None
        if not self._queue:
            if self._replies >= self.agent.config.max_requests:
                return None
            completion = await self._complete()
            calls = completion.tool_calls
            assistant: dict[str, Any] = {"role": "assistant", "content": completion.message.content}
            if not calls:
                if completion.truncated:
                    raise self._cut(completion)
                self._messages.append(assistant)
                self._idle += 1
                # the reply that ends the session is a turn like the ones before it: every request the
                # model answered is one (3 silent replies are 3 turns, not 2)
                self._stopping = self._idle > self.agent.config.max_idle_replies
                self._nudged = not self._stopping
                return Action(NO_ACTION, raw=completion.text)
            self._idle = 0
            records = []
            for n, call in enumerate(calls):
                call_id = call.id or f"call_{self._replies}_{n}"
                records.append(
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": call.function.name, "arguments": call.function.arguments},
                    }
                )
                parsed = parse_arguments(call.function.name, call.function.arguments, self._parse)
                if completion.truncated and parsed.action.parse_error is not None:
                    raise self._cut(completion)
                self._count(parsed.kind)
                self._queue.append((call_id, parsed.action))
            assistant["tool_calls"] = records
            self._messages.append(assistant)
        self._awaiting, action = self._queue.popleft()
        return action


def check_agents(agents: Any) -> None:
    """The preflight of every model agent among `agents`, before any episode: EndpointUnusable (one line) when
    an endpoint is unreachable, refuses the key or does not know the model."""
    import asyncio

    for agent in agents:
        if isinstance(agent, OpenAIAgent):
            asyncio.run(agent.check())


@register_agent("openai", configurable=True)
def _openai(name: str, **config: Any) -> OpenAIAgent:
    return OpenAIAgent.from_name(name, **config)
