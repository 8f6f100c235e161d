"""`openai:<model>`: a model behind any OpenAI-compatible chat endpoint (OpenAI, Ollama, vLLM, llama.cpp).

Two ways to act. `json` is the plain loop of the source benchmark: the tools and their schemas are listed in the
system prompt, the model answers each turn with one JSON action as text, and the envelope comes back as the next
user message; it works with any chat endpoint and measures format discipline (strict vs lenient parsing).
`tools` uses the endpoint's native tool calling; a reply without tool calls ends the episode with its text as
the final answer.

Only failures that say something about the model become part of its score. Rate limits, server errors,
connection failures and timeouts are retried here (the client's own retries are disabled so the bound and the
waits are ours and visible in Usage), and when the retries run out the session raises AgentUnavailable, which
makes the trial invalid instead of failed. A 400 that is the model's own limit — its context window overflowed,
or it refuses a parameter the episode needs — raises AgentRefused: a failure with its reason.

Reasoning models refuse a temperature other than their default and the old `max_tokens`: temperature is left
out for the model families known to refuse it, the output cap is sent as `max_completion_tokens`, and a 400
naming either parameter adapts the request once (dropping temperature, or switching the cap's name for servers
that only know `max_tokens`) instead of ending the trial.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..pricing import PriceTable
from ..task import Task
from .base import Action, AgentRefused, AgentUnavailable, TaskView, Usage, register_agent
from .parsing import ParseKind, ParseMode, parse_arguments, parse_reply

if TYPE_CHECKING:
    import httpx2
    import openai

FINAL_ANSWER = "final_answer"
PLACEHOLDER_KEY = "sk-no-key-required"
# Model families that accept only their default temperature (OpenAI's reasoning models).
FIXED_TEMPERATURE = re.compile(r"^(?:openai/)?(?:o\d|gpt-5)", re.I)
_CONTEXT = re.compile(r"context (?:length|window)|maximum context|too many tokens|prompt is too long|"
                      r"context_length_exceeded", re.I)
TOKEN_CAPS = ("max_completion_tokens", "max_tokens")
_UNKNOWN_PARAM = re.compile(r"unrecognized|unknown (?:parameter|field|argument)|extra (?:fields|inputs)|"
                            r"not permitted", re.I)

JSON_SYSTEM_PROMPT = """\
You operate a financial analyst workspace through tools. Each tool is listed with its description and the JSON \
Schema of its arguments.

{tools}

Rules:
- Reply with exactly one JSON object per turn and nothing else: {{"tool": NAME, "args": {{...}}}}
- After each action you receive the tool's result envelope as JSON (ok, message, data, error).
- When the work is done, finish with {{"tool": "final_answer", "args": {{"text": "your answer"}}}}.
"""

TOOLS_SYSTEM_PROMPT = """\
You operate a financial analyst workspace through the tools provided. Work with tool calls; each call returns \
the tool's result envelope as JSON (ok, message, data, error). When the work is done, call final_answer with \
your answer, or reply with plain text, which is taken as your final answer and ends the session.
"""


class LLMConfig(BaseModel):
    """How to reach and drive the model. `api_key` is never written to run records (see `public`)."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=1)
    mode: Literal["json", "tools"] = "json"
    parse: ParseMode = "lenient"
    base_url: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    temperature: float | None = Field(default=0.0, description="None leaves it out (models that accept only "
                                                                  "their default); left out anyway for models "
                                                                  "known to refuse it")
    max_tokens: int | None = Field(default=None, gt=0, description="output cap, sent as max_completion_tokens")
    request_timeout_s: float = Field(default=60.0, gt=0)
    max_attempts: int = Field(default=4, ge=1, description="HTTP attempts per model request, retries included")
    timeout_attempts: int = Field(default=2, ge=1, description="of which at most this many may time out")
    backoff_base_s: float = Field(default=1.0, ge=0)
    backoff_max_s: float = Field(default=30.0, ge=0)
    max_retry_after_s: float = Field(default=120.0, ge=0,
                                     description="a server asking for a longer wait ends the trial instead")
    max_requests: int = Field(default=200, ge=1,
                              description="model requests per episode; a safety stop when a task sets no budget")

    def public(self) -> dict[str, Any]:
        return self.model_dump(exclude={"api_key"})


def resolve_endpoint(base_url: str | None, api_key: str | None,
                     env: Mapping[str, str] | None = None) -> tuple[str | None, str]:
    """The base URL (None = api.openai.com) and key to use; local servers accept any key."""
    env = os.environ if env is None else env
    base = base_url or env.get("OPENAI_BASE_URL") or None
    key = api_key or env.get("OPENAI_API_KEY") or None
    if key is None and base is None:
        raise ValueError("openai:<model> has no endpoint configured: set OPENAI_API_KEY for api.openai.com, or "
                         "OPENAI_BASE_URL (or --base-url) for an OpenAI-compatible server such as Ollama "
                         "(http://localhost:11434/v1), vLLM or llama.cpp")
    return base, key or PLACEHOLDER_KEY


def retry_after(headers: Mapping[str, str] | None, now: float) -> float | None:
    """Seconds the server asked us to wait: retry-after-ms, or Retry-After in seconds or as an HTTP date."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now)


def _error_detail(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
    return str(exc) or type(exc).__name__


def _error_code(exc: Exception) -> str | None:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return inner.get("code") or inner.get("type")
    return None


def _error_param(exc: Exception) -> str | None:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("param"), str):
            return inner["param"]
    return None


def refusal(exc: Exception) -> str | None:
    """Why a 400 is the model's own limit ("context_overflow", "parameter_refused"), or None when it is not
    (a malformed request is the harness's fault)."""
    code, detail = _error_code(exc) or "", _error_detail(exc)
    if code == "context_length_exceeded" or _CONTEXT.search(detail):
        return "context_overflow"
    if code in ("unsupported_parameter", "unsupported_value") or re.search(r"unsupported (?:parameter|value)|"
                                                                          r"is not supported", detail, re.I):
        return "parameter_refused"
    return None


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str)


def _tool_catalogue(tools: list[dict[str, Any]]) -> str:
    return "\n".join(f"- {t['name']}: {t.get('description', '').strip()}\n  args: {_dump(t['parameters'])}"
                     for t in tools)


class OpenAIAgent:
    """One configured model. It owns its client (created on first use, inside the running event loop) and is
    shared by all the sessions of a run; tests inject `client` or `http_client`."""

    privileged = False
    deterministic = False

    def __init__(self, config: LLMConfig, *, client: openai.AsyncOpenAI | None = None,
                 http_client: httpx2.AsyncClient | None = None, prices: PriceTable | None = None,
                 sleep: Callable[[float], Awaitable[Any]] | None = None,
                 clock: Callable[[], float] | None = None) -> None:
        self.config = config
        self.name = f"openai:{config.model}"
        self._client = client
        self._owns_client = client is None
        self._http_client = http_client
        self._base_url: str | None = None
        self._api_key = ""
        if client is None:
            self._base_url, self._api_key = resolve_endpoint(config.base_url, config.api_key)
        self.prices = prices if prices is not None else PriceTable.load()
        note = self.prices.note(config.model)
        self.notes: list[str] = [note] if note else []
        self.send_temperature = config.temperature is not None and not FIXED_TEMPERATURE.search(config.model)
        self.token_cap = TOKEN_CAPS[0]
        self._sleep = sleep or asyncio.sleep
        self._clock = clock or time.time

    @classmethod
    def from_name(cls, name: str, **config: Any) -> OpenAIAgent:
        prefix, _, model = name.partition(":")
        if prefix != "openai" or not model.strip():
            raise ValueError(f"'{name}' names no model: use openai:<model>, e.g. openai:gpt-4.1-mini or "
                             "openai:llama3.1:8b with OPENAI_BASE_URL pointing at Ollama")
        return cls(LLMConfig(model=model.strip(), **config))

    @property
    def endpoint(self) -> str:
        return self._base_url or "https://api.openai.com/v1"

    @property
    def client(self) -> openai.AsyncOpenAI:
        if self._client is None:
            import openai

            self._client = openai.AsyncOpenAI(api_key=self._api_key, base_url=self._base_url, max_retries=0,
                                              timeout=self.config.request_timeout_s, http_client=self._http_client)
        return self._client

    async def aclose(self) -> None:
        """Close a client this agent created (an injected one belongs to the caller)."""
        if self._owns_client and self._client is not None:
            if self._http_client is None:
                await self._client.close()
            self._client = None

    def session(self, view: TaskView, task: Task | None = None) -> OpenAISession:
        return OpenAISession(self, view)

    def _backoff(self, attempt: int, rng: random.Random) -> float:
        cfg = self.config
        return min(cfg.backoff_max_s, cfg.backoff_base_s * 2 ** (attempt - 1)) * (0.5 + rng.random() / 2)

    async def request(self, body: dict[str, Any], usage: Usage, rng: random.Random) -> Any:
        """One chat completion, with our retries; AgentUnavailable when they are exhausted.

        The body goes through the client's raw `post` rather than `chat.completions.create`: it is plain JSON
        already, and create() re-walks every message and tool schema on each request (about 8 ms of CPU per
        request here), which caps how many episodes one process can keep in flight. Auth, error types and
        timeouts are the same.
        """
        import openai
        from openai.types.chat import ChatCompletion

        cfg = self.config
        attempts = timeouts = 0
        tried: set[str] = set()
        while True:
            attempts += 1
            usage.requests += 1
            wait: float | None = None
            give_up = False
            try:
                async with asyncio.timeout(cfg.request_timeout_s):
                    return await self.client.post("/chat/completions", cast_to=ChatCompletion, body=body,
                                                  options={"timeout": cfg.request_timeout_s})
            except (TimeoutError, openai.APITimeoutError):
                timeouts += 1
                reason, detail = "timeout", f"no reply within {cfg.request_timeout_s:g} s"
                give_up = timeouts >= cfg.timeout_attempts
            except openai.APIStatusError as exc:
                status = exc.status_code
                detail = f"HTTP {status}: {_error_detail(exc)}"
                if status == 429:
                    reason = "rate_limited"
                    give_up = _error_code(exc) == "insufficient_quota"
                elif status >= 500 or status in (408, 409):
                    reason = "api_error"
                elif status == 400 and (adapted := self._adapt(body, exc, tried)) is not None:
                    body = adapted
                    usage.retries += 1
                    continue
                elif status == 400 and (why := refusal(exc)) is not None:
                    raise AgentRefused(why, f"{self.name}: the model refused the request ({detail})") from exc
                else:
                    raise AgentUnavailable("api_error", f"{self.name} at {self.endpoint}: the request was refused "
                                                        f"({detail}); not retried") from exc
                wait = retry_after(exc.response.headers, self._clock())
            except openai.APIConnectionError as exc:
                reason, detail = "api_error", f"cannot reach {self.endpoint}: {_error_detail(exc)}"
            except openai.APIError as exc:
                reason, detail = "api_error", f"unusable reply from {self.endpoint}: {_error_detail(exc)}"
            if give_up or attempts >= cfg.max_attempts:
                raise AgentUnavailable(reason, f"{self.name}: {detail} (gave up after {attempts} attempt(s))")
            if wait is not None and wait > cfg.max_retry_after_s:
                raise AgentUnavailable(reason, f"{self.name}: {detail}; the server asked to wait {wait:g} s, more "
                                               f"than max_retry_after_s={cfg.max_retry_after_s:g}")
            usage.retries += 1
            await self._sleep(wait if wait is not None else self._backoff(attempts, rng))


    def _adapt(self, body: dict[str, Any], exc: Exception, tried: set[str]) -> dict[str, Any] | None:
        """The request again without what the model refused: its temperature, or the output cap under the
        other name (each at most once per request). The change holds for the rest of the agent's sessions;
        None when the 400 is not such a refusal."""
        param, detail = _error_param(exc) or "", _error_detail(exc)
        if refusal(exc) != "parameter_refused" and not _UNKNOWN_PARAM.search(detail):
            return None
        if "temperature" in body and "temperature" not in tried and (param == "temperature"
                                                                     or "temperature" in detail.lower()):
            tried.add("temperature")
            self.send_temperature = False
            self.notes.append(f"{self.config.model} refuses temperature; it is left out")
            return {k: v for k, v in body.items() if k != "temperature"}
        for cap, other in (TOKEN_CAPS, TOKEN_CAPS[::-1]):
            if cap in body and "cap" not in tried and (param == cap or cap in detail) and other not in body:
                tried.add("cap")
                self.token_cap = other
                self.notes.append(f"{self.endpoint} refuses {cap}; the output cap is sent as {other}")
                return {**{k: v for k, v in body.items() if k != cap}, other: body[cap]}
        return None


class OpenAISession:
    """One episode's conversation. The system prompt is sent once; the transcript is the messages exchanged."""

    def __init__(self, agent: OpenAIAgent, view: TaskView) -> None:
        self.agent = agent
        self.usage = Usage()
        self._mode = agent.config.mode
        self._parse: ParseMode = agent.config.parse
        self._rng = random.Random(view.task_id)
        self._replies = 0
        if self._mode == "json":
            system = JSON_SYSTEM_PROMPT.format(tools=_tool_catalogue(view.tools))
            self._tools: list[dict[str, Any]] | None = None
        else:
            system = TOOLS_SYSTEM_PROMPT
            self._tools = [{"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                                             "parameters": t["parameters"]}} for t in view.tools]
        self._messages: list[dict[str, Any]] = [{"role": "system", "content": system},
                                                {"role": "user", "content": view.prompt}]
        self._queue: deque[tuple[str, Action]] = deque()
        self._awaiting: str | None = None

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

    async def _complete(self) -> Any:
        cfg = self.agent.config
        body: dict[str, Any] = {"model": cfg.model, "messages": list(self._messages)}
        if cfg.temperature is not None and self.agent.send_temperature:
            body["temperature"] = cfg.temperature
        if cfg.max_tokens is not None:
            body[self.agent.token_cap] = cfg.max_tokens
        if self._tools is not None:
            body["tools"] = self._tools
        response = await self.agent.request(body, self.usage, self._rng)
        self._replies += 1
        usage = getattr(response, "usage", None)
        tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0)
        tokens_out = int(getattr(usage, "completion_tokens", 0) or 0)
        self.usage.tokens_in += tokens_in
        self.usage.tokens_out += tokens_out
        self.usage.cost += self.agent.prices.cost(cfg.model, tokens_in, tokens_out)
        if not getattr(response, "choices", None):
            raise AgentUnavailable("api_error", f"{self.agent.name}: the endpoint returned a reply with no choices")
        return response.choices[0].message

    async def _next_json(self, observation: dict[str, Any] | None) -> Action | None:
        if observation is not None:
            self._messages.append({"role": "user", "content": _dump(observation)})
        if self._replies >= self.agent.config.max_requests:
            return None
        message = await self._complete()
        text = message.content or message.refusal or ""
        self._messages.append({"role": "assistant", "content": text})
        parsed = parse_reply(text, self._parse)
        self._count(parsed.kind)
        return parsed.action

    async def _next_tools(self, observation: dict[str, Any] | None) -> Action | None:
        if observation is not None and self._awaiting is not None:
            self._messages.append({"role": "tool", "tool_call_id": self._awaiting, "content": _dump(observation)})
            self._awaiting = None
        if not self._queue:
            if self._replies >= self.agent.config.max_requests:
                return None
            message = await self._complete()
            calls = [c for c in (message.tool_calls or []) if getattr(c, "type", None) == "function"]
            assistant: dict[str, Any] = {"role": "assistant", "content": message.content}
            if not calls:
                self._messages.append(assistant)
                text = (message.content or "").strip()
                return Action(FINAL_ANSWER, {"text": text}) if text else None
            records = []
            for n, call in enumerate(calls):
                call_id = call.id or f"call_{self._replies}_{n}"
                records.append({"id": call_id, "type": "function",
                                "function": {"name": call.function.name, "arguments": call.function.arguments}})
                parsed = parse_arguments(call.function.name, call.function.arguments, self._parse)
                self._count(parsed.kind)
                self._queue.append((call_id, parsed.action))
            assistant["tool_calls"] = records
            self._messages.append(assistant)
        self._awaiting, action = self._queue.popleft()
        return action


@register_agent("openai")
def _openai(name: str) -> OpenAIAgent:
    return OpenAIAgent.from_name(name)
