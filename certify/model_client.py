"""One client for every model call: the authoring roles and the agents under test.

It is built on the official openai SDK, and the SDK does the HTTP work: its retries (rate limits, server
errors, timeouts, dropped connections) with its backoff and its reading of Retry-After, its timeouts, its error
types. Nothing here loops over HTTP attempts. What the SDK does not know about is kept here, in one place:

- per-model quirks: reasoning models (o1, o3, o4, gpt-5 families) get no temperature; a server that refuses the
  temperature, the output cap's name, a JSON-schema response format or a named `tool_choice` gets the request
  again without it, and the client remembers that for its later requests;
- structured replies: a pydantic model becomes a strict JSON-schema response format (non-strict when the model
  has free-form parts strict mode cannot express), falling back to `json_object`, then to a plain reply, on a
  server without structured outputs; the caller still validates every reply;
- a context budget: once a request would exceed it, the oldest tool results are replaced by a marker;
- a response cache on disk keyed by the request, so a resumed run does not pay again for a reply it has.

Failures are sorted by whose fault they are: `ModelUnavailable` (infrastructure, once the SDK's retries are
spent), `ModelRefused` (the model's own limit: its context overflowed, it will not take a parameter),
`ModelRequestError` (the request was refused: a bad key, an unknown model, a malformed request). `check()` is
the preflight: reachable, key accepted, model known, before any work.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import os
import re
import threading
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from .pricing import PriceTable

if TYPE_CHECKING:
    import httpx2
    import openai

PLACEHOLDER_KEY = "sk-no-key-required"
DEFAULT_ENDPOINT = "https://api.openai.com/v1"
CHARS_PER_TOKEN = 4
# The output cap sent on every request unless configured: without one a local server (llama.cpp) generates until
# its context is full and the request runs into the client timeout.
DEFAULT_MAX_TOKENS = 4096
TRIMMED = "[trimmed to fit the context budget: an earlier tool result of {n} characters]"

# Model families that accept only their default temperature (OpenAI's reasoning models).
FIXED_TEMPERATURE = re.compile(r"^(?:openai/)?(?:o\d|gpt-5)", re.I)
TOKEN_CAPS = ("max_completion_tokens", "max_tokens")
_CONTEXT = re.compile(
    r"context (?:length|window)|maximum context|too many tokens|prompt is too long|"
    r"context_length_exceeded|exceeds? the (?:available |max(?:imum)? )?context|exceed_context_size|"
    r"larger than the max context size|input length exceeds",
    re.I,
)
# Codes and types servers use for an overflow: OpenAI's code, llama.cpp's type (its `code` is the number 400).
_CONTEXT_CODES = ("context_length_exceeded", "exceed_context_size_error", "string_above_max_length")
_UNSUPPORTED = re.compile(
    r"unsupported (?:parameter|value)|is not supported|not supported|unrecognized|"
    r"unknown (?:parameter|field|argument)|extra (?:fields|inputs)|not permitted|"
    r"does not support|invalid (?:value|type) for|requires --[\w-]+|must be one of",
    re.I,
)
_NOT_FOUND = re.compile(
    r"model_not_found|model .*(?:does not exist|not found)|no such model|unknown model", re.I
)

T = TypeVar("T")


class ModelConfig(BaseModel):
    """How one model is reached and driven: one generation config for every caller of the client."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=1)
    base_url: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    timeout_s: float = Field(default=60.0, gt=0, description="seconds per HTTP attempt")
    max_retries: int = Field(
        default=2, ge=0, description="the SDK's retries of one request (429, 5xx, timeouts)"
    )
    temperature: float | None = Field(
        default=0.0, description="None leaves it to the server; never sent to reasoning models"
    )
    max_completion_tokens: int | None = Field(
        default=DEFAULT_MAX_TOKENS, gt=0, description="output cap per reply; None sends none"
    )
    context_tokens: int | None = Field(
        default=None,
        gt=0,
        description="request size (estimated at 4 characters "
        "a token) beyond which old tool results "
        "are trimmed; None keeps everything",
    )
    keep_tool_results: int = Field(default=2, ge=0, description="the latest tool results are never trimmed")
    cache_dir: Path | None = Field(default=None, description="response cache; None disables it")

    @property
    def endpoint(self) -> str:
        return self.base_url or DEFAULT_ENDPOINT


def resolve_endpoint(
    base_url: str | None, api_key: str | None, env: Mapping[str, str] | None = None
) -> tuple[str | None, str]:
    """The base URL (None = api.openai.com) and key to use; local servers accept any key."""
    env = os.environ if env is None else env
    base = base_url or env.get("OPENAI_BASE_URL") or None
    key = api_key or env.get("OPENAI_API_KEY") or None
    if key is None and base is None:
        raise ValueError(
            "no model endpoint is configured: set OPENAI_API_KEY for api.openai.com, or "
            "OPENAI_BASE_URL (or --base-url) for an OpenAI-compatible server such as Ollama "
            "(http://localhost:11434/v1), vLLM or llama.cpp"
        )
    return base, key or PLACEHOLDER_KEY


class ModelError(Exception):
    """A request that produced no reply; `reason` is a stable code, the message says what happened."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class ModelUnavailable(ModelError):
    """Infrastructure failed after the SDK's retries: rate_limited, api_error, timeout, unreachable."""


class ModelRefused(ModelError):
    """The model's own limit: context_overflow or parameter_refused. It describes the model, not the harness."""


class ModelRequestError(ModelError):
    """The request was refused as such: auth, unknown_model, bad_request."""


class EndpointUnusable(Exception):
    """The preflight found the endpoint unusable (unreachable, refused key, unknown model)."""


@dataclass
class Completion:
    """One reply and what it cost. `cached` replies were read from disk: nothing was paid for them.
    `tokens_cached` is the part of `tokens_in` the server says it read from its prefix cache (0 where it does
    not say), priced as cached input."""

    message: Any
    finish_reason: str | None
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    retries: int = 0
    cached: bool = False
    tokens_cached: int = 0

    @property
    def text(self) -> str:
        return self.message.content or getattr(self.message, "refusal", None) or ""

    @property
    def tool_calls(self) -> list[Any]:
        return [c for c in (self.message.tool_calls or []) if getattr(c, "type", None) == "function"]

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


@dataclass
class _Quirks:
    """What this endpoint and model turned out to refuse; learned once, kept for the client's life."""

    temperature: bool = True
    token_cap: str = TOKEN_CAPS[0]
    response_format: Literal["json_schema", "json_object", "none"] = "json_schema"
    tool_choice: Literal["named", "required", "auto"] = "named"
    notes: list[str] = field(default_factory=list)


def cached_prompt_tokens(usage: Any, tokens_in: int) -> int:
    """The prompt tokens a server says it served from its prefix cache: `usage.prompt_tokens_details
    .cached_tokens` as OpenAI, vLLM (with prefix caching on) and llama.cpp's server report it; 0 where the
    server says nothing (Ollama). Never more than the prompt, whatever a server claims."""
    details = getattr(usage, "prompt_tokens_details", None)
    if isinstance(details, Mapping):  # a reply read back from the disk cache, or a server's extra field
        value = details.get("cached_tokens")
    else:
        value = getattr(details, "cached_tokens", None)
    try:
        cached = int(value or 0)
    except (TypeError, ValueError):
        return 0
    return min(max(cached, 0), tokens_in)


def _error_body(exc: Exception) -> dict[str, Any]:
    """The error object a server sent: OpenAI, llama.cpp and Ollama's /v1 nest it under "error" (the SDK
    unwraps that), vLLM's older releases send it flat ({"object": "error", "message": ..., "code": 400}),
    Ollama's native routes send {"error": "text"}."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return inner
        if isinstance(inner, str):
            return {"message": inner}
    if isinstance(body, str) and body.strip():
        return {"message": body.strip()}
    return {}


def error_detail(exc: Exception) -> str:
    message = _error_body(exc).get("message")
    return message if isinstance(message, str) else (str(exc) or type(exc).__name__)


def refusal(exc: Exception) -> str | None:
    """Why a 400 is the model's own limit ("context_overflow", "parameter_refused"), or None when it is not.
    Both `code` and `type` are read: llama.cpp's `code` is the HTTP status and its `type` says what happened."""
    inner = _error_body(exc)
    codes = {str(inner.get(k) or "") for k in ("code", "type")}
    detail = error_detail(exc)
    if codes & set(_CONTEXT_CODES) or _CONTEXT.search(detail):
        return "context_overflow"
    if codes & {"unsupported_parameter", "unsupported_value"} or _UNSUPPORTED.search(detail):
        return "parameter_refused"
    return None


def reply_format(model: type[BaseModel]) -> dict[str, Any]:
    """A pydantic model as a JSON-schema response format: strict when strict mode can express it. Built once
    per model (schema generation cost more than the rest of a request); each caller gets its own copy."""
    return json.loads(_reply_format(model))


@functools.lru_cache(maxsize=64)
def _reply_format(model: type[BaseModel]) -> str:
    import openai

    strict_schema = openai.pydantic_function_tool(model)["function"]["parameters"]
    strict = _strict_compatible(strict_schema)
    return json.dumps(
        {
            "type": "json_schema",
            "json_schema": {
                "name": model.__name__,
                "strict": strict,
                "schema": strict_schema if strict else model.model_json_schema(),
            },
        }
    )


def _strict_compatible(node: Any) -> bool:
    """Whether a schema only uses what strict structured outputs accept: every value typed, every object closed."""
    if not isinstance(node, dict):
        return True
    if not any(k in node for k in ("type", "anyOf", "$ref", "enum", "const")):
        return False
    if node.get("type") == "object" and node.get("additionalProperties") is not False:
        return False
    children = [
        *(node.get("properties") or {}).values(),
        *(node.get("$defs") or {}).values(),
        *(node.get("anyOf") or []),
    ]
    if isinstance(node.get("items"), dict):
        children.append(node["items"])
    return all(_strict_compatible(child) for child in children)


def fit_context(messages: list[dict[str, Any]], budget_tokens: int | None, keep: int) -> list[dict[str, Any]]:
    """The messages within the budget: the oldest tool results (all but the latest `keep`) replaced by a marker
    until the estimate fits. The caller's list is never changed; what cannot be trimmed is sent as it is."""
    if budget_tokens is None:
        return messages
    size = sum(_size(m) for m in messages) / CHARS_PER_TOKEN
    if size <= budget_tokens:
        return messages
    out = list(messages)
    tools = [i for i, m in enumerate(out) if m.get("role") == "tool" and isinstance(m.get("content"), str)]
    for i in tools[: len(tools) - keep] if keep else tools:
        content = out[i]["content"]
        marker = TRIMMED.format(n=len(content))
        if len(content) <= len(marker):
            continue
        out[i] = {**out[i], "content": marker}
        size -= (len(content) - len(marker)) / CHARS_PER_TOKEN
        if size <= budget_tokens:
            break
    return out


def _size(message: dict[str, Any]) -> int:
    content = message.get("content")
    n = len(content) if isinstance(content, str) else len(json.dumps(content, default=str)) if content else 0
    for call in message.get("tool_calls") or ():
        n += len(str((call.get("function") or {}).get("arguments") or ""))
    return n


class ResponseCache:
    """Replies on disk, one JSON file per request hash; written atomically, so a kill never leaves half a file."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @staticmethod
    def key(endpoint: str, body: dict[str, Any]) -> str:
        canonical = json.dumps(
            {"endpoint": endpoint, "body": body},
            sort_keys=True,
            ensure_ascii=False,
            separators=(",", ":"),
            default=str,
        )
        return hashlib.sha256(canonical.encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def put(self, key: str, data: dict[str, Any]) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)


class ModelClient:
    """One configured model behind the SDK's async client, shared by every caller of a run.

    The SDK client is created on first use, inside the running event loop (its connection pool belongs to that
    loop); tests inject `client` or `http_client`. Synchronous callers use `BlockingClient`.
    """

    def __init__(
        self,
        config: ModelConfig,
        *,
        client: openai.AsyncOpenAI | None = None,
        http_client: httpx2.AsyncClient | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        self.config = config
        self._client = client
        self._owns_client = client is None
        self._http_client = http_client
        self._base_url, self._api_key = (
            (config.base_url, config.api_key or PLACEHOLDER_KEY)
            if client is not None
            else resolve_endpoint(config.base_url, config.api_key)
        )
        self.prices = prices if prices is not None else PriceTable.load()
        self.quirks = _Quirks(
            temperature=config.temperature is not None and not FIXED_TEMPERATURE.search(config.model)
        )
        self.cache = ResponseCache(config.cache_dir) if config.cache_dir is not None else None

    @property
    def endpoint(self) -> str:
        return self._base_url or DEFAULT_ENDPOINT

    @property
    def notes(self) -> list[str]:
        return self.quirks.notes

    @property
    def sdk(self) -> openai.AsyncOpenAI:
        if self._client is None:
            import openai

            self._client = openai.AsyncOpenAI(
                api_key=self._api_key,
                base_url=self._base_url,
                max_retries=self.config.max_retries,
                timeout=self.config.timeout_s,
                http_client=self._http_client,
            )
        return self._client

    async def aclose(self) -> None:
        """Close an SDK client this object created (an injected one belongs to the caller)."""
        if self._owns_client and self._client is not None:
            if self._http_client is None:
                await self._client.close()
            self._client = None

    # -- requests ------------------------------------------------------------------------------------------
    def body(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | None = None,
        reply: type[BaseModel] | None = None,
    ) -> dict[str, Any]:
        """The request as sent now: the generation config, the quirks learned so far, the context budget.
        `tool_choice` is "auto", "required" or the name of the one tool the model must call."""
        cfg, quirks = self.config, self.quirks
        body: dict[str, Any] = {
            "model": cfg.model,
            "messages": fit_context(messages, cfg.context_tokens, cfg.keep_tool_results),
        }
        if cfg.temperature is not None and quirks.temperature:
            body["temperature"] = cfg.temperature
        if cfg.max_completion_tokens is not None:
            body[quirks.token_cap] = cfg.max_completion_tokens
        if tools:
            body["tools"] = tools
            choice = self._tool_choice(tool_choice)
            if choice is not None:
                body["tool_choice"] = choice
        if reply is not None and quirks.response_format != "none":
            body["response_format"] = (
                reply_format(reply) if quirks.response_format == "json_schema" else {"type": "json_object"}
            )
        return body

    def _tool_choice(self, choice: str | None) -> Any:
        if choice in (None, "auto"):
            return None
        mode = self.quirks.tool_choice
        if choice == "required":
            return "required" if mode != "auto" else None
        if mode == "named":
            return {"type": "function", "function": {"name": choice}}
        return "required" if mode == "required" else None

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | None = None,
        reply: type[BaseModel] | None = None,
        cache_tag: str | None = None,
    ) -> Completion:
        """One chat completion (from the cache when this very request was answered before). `cache_tag` keeps
        replies to the same request apart in the cache (a judge's second and third votes are new replies, not
        the first one read back); it is never sent.

        The body is plain JSON already, so it goes through the SDK's `post` (its retries, timeouts, auth and error
        types) rather than `chat.completions.create`, which re-walks every message and tool schema on each request
        (milliseconds of CPU per request, which caps how many episodes one process keeps in flight). The raw
        response header asks the SDK for the response with the number of retries it took."""
        from openai.types.chat import ChatCompletion

        body = self.body(messages, tools=tools, tool_choice=tool_choice, reply=reply)
        cache = self.cache
        key = (
            cache.key(self.endpoint, body if cache_tag is None else {**body, "cache_tag": cache_tag})
            if cache is not None
            else None
        )
        if cache is not None and key is not None and (stored := cache.get(key)) is not None:
            return self._completion(ChatCompletion.model_validate(stored), retries=0, cached=True)
        tried: set[str] = set()
        while True:
            try:
                raw = await self.sdk.post(
                    "/chat/completions",
                    cast_to=ChatCompletion,
                    body=body,
                    options={"headers": {"X-Stainless-Raw-Response": "true"}},
                )
            except Exception as exc:
                adapted = self._adapt(body, exc, tried, tools=tools, tool_choice=tool_choice, reply=reply)
                if adapted is None:
                    raise self._failure(exc) from exc
                body = adapted
                continue
            try:
                # the raw-response header makes `post` return openai's LegacyAPIResponse, not `cast_to`
                response = raw.parse()  # type: ignore[attr-defined]
            except Exception as exc:
                raise ModelUnavailable("api_error", f"{self._who()}: unusable reply ({exc})") from exc
            if not getattr(response, "choices", None):
                raise ModelUnavailable(
                    "api_error", f"{self._who()}: the endpoint returned a reply with no choices"
                )
            if cache is not None and key is not None:
                cache.put(key, response.model_dump(mode="json", exclude_unset=True))
            retries = raw.retries_taken  # type: ignore[attr-defined]  # LegacyAPIResponse, as above
            return self._completion(response, retries=retries + len(tried), cached=False)

    def _completion(self, response: Any, *, retries: int, cached: bool) -> Completion:
        usage = getattr(response, "usage", None)
        tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0)
        tokens_out = int(getattr(usage, "completion_tokens", 0) or 0)
        tokens_cached = cached_prompt_tokens(usage, tokens_in)
        choice = response.choices[0]
        return Completion(
            choice.message,
            getattr(choice, "finish_reason", None),
            tokens_in,
            tokens_out,
            0.0 if cached else self.prices.cost(self.config.model, tokens_in, tokens_out, tokens_cached),
            retries,
            cached,
            tokens_cached,
        )

    def _who(self) -> str:
        return f"{self.config.model} at {self.endpoint}"

    def _adapt(
        self, body: dict[str, Any], exc: Exception, tried: set[str], **request: Any
    ) -> dict[str, Any] | None:
        """The request again without what the server refused, learned for later requests too; None when the
        error is not such a refusal. Each step is taken at most once per request, so this ends."""
        import openai

        if not isinstance(exc, openai.BadRequestError):
            return None
        param, detail = str(_error_body(exc).get("param") or ""), error_detail(exc)
        mentions = (param + " " + detail).lower()
        quirks = self.quirks
        step = None
        if "temperature" in body and "temperature" in mentions:
            step, quirks.temperature = "temperature", False
            note = f"{self.config.model} refuses temperature; it is left out"
        elif "response_format" in body and any(
            w in mentions for w in ("response_format", "json_schema", "json_object", "structured output")
        ):
            step = f"response_format:{quirks.response_format}"
            quirks.response_format = "json_object" if quirks.response_format == "json_schema" else "none"
            note = f"{self.endpoint} refuses that response format; falling back to {quirks.response_format}"
        elif "tool_choice" in body and "tool_choice" in mentions:
            step = f"tool_choice:{quirks.tool_choice}"
            quirks.tool_choice = "required" if body["tool_choice"] != "required" else "auto"
            note = f"{self.endpoint} refuses that tool_choice; falling back to {quirks.tool_choice}"
        else:
            for cap, other in (TOKEN_CAPS, TOKEN_CAPS[::-1]):
                if (
                    cap in body
                    and other not in body
                    and cap in mentions
                    and (refusal(exc) == "parameter_refused" or param == cap)
                ):
                    step, quirks.token_cap = f"cap:{cap}", other
                    note = f"{self.endpoint} refuses {cap}; the output cap is sent as {other}"
                    break
        if step is None or step in tried:
            return None
        tried.add(step)
        quirks.notes.append(note)
        return self.body(body["messages"], **request)

    def _failure(self, exc: Exception) -> ModelError:
        """The error a request ended in, sorted by whose fault it is (see the module docstring); the message
        says what to try where there is something to try."""
        import openai

        who = self._who()
        cfg = self.config
        if isinstance(exc, openai.APITimeoutError):
            cap = (
                f"the output cap is {cfg.max_completion_tokens} tokens: lower it with --max-tokens"
                if cfg.max_completion_tokens
                else "no output cap is set: cap the output with --max-tokens"
            )
            return ModelUnavailable(
                "timeout",
                f"{who}: no reply in {cfg.timeout_s:g} s (tried {cfg.max_retries + 1} times); {cap}, or raise "
                "--timeout (a small local server may also want --concurrency 1)",
            )
        if isinstance(exc, openai.APIConnectionError):
            return ModelUnavailable("unreachable", f"{who}: cannot connect ({error_detail(exc)})")
        if isinstance(exc, openai.APIStatusError):
            status, detail = exc.status_code, f"HTTP {exc.status_code}: {error_detail(exc)}"
            why = refusal(exc) if status in (400, 413, 422) else None
            if why is not None:
                return ModelRefused(why, f"{who}: the model refused the request ({detail})")
            if status == 429:
                return ModelUnavailable(
                    "rate_limited", f"{who}: {detail} (after {cfg.max_retries} retries); lower --concurrency"
                )
            if status in (401, 403):
                return ModelRequestError("auth", f"{who}: the key was refused ({detail})")
            if status == 404 or (status == 400 and _NOT_FOUND.search(detail)):
                return ModelRequestError(
                    "unknown_model", f"{who}: the server does not know the model ({detail}); check --model"
                )
            if status >= 500 or status in (408, 409):
                return ModelUnavailable("api_error", f"{who}: {detail} (after {cfg.max_retries} retries)")
            return ModelRequestError("bad_request", f"{who}: the request was refused ({detail})")
        if isinstance(exc, openai.APIError):
            return ModelUnavailable("api_error", f"{who}: unusable reply ({error_detail(exc)})")
        raise exc

    # -- preflight -----------------------------------------------------------------------------------------
    async def check(self) -> None:
        """Reachable, key accepted, model known: EndpointUnusable with a one-line reason otherwise. The model
        list settles it when it names the model; otherwise a one-token request does (servers that serve any
        name, such as llama.cpp, accept it)."""
        import openai

        sdk = self.sdk.with_options(
            max_retries=min(self.config.max_retries, 1), timeout=min(self.config.timeout_s, 30.0)
        )
        where = self.endpoint
        try:
            listed = {m.id async for m in sdk.models.list()}
        except openai.APIStatusError as exc:
            if exc.status_code in (401, 403):
                raise EndpointUnusable(
                    f"{where} refused the API key (HTTP {exc.status_code}: {error_detail(exc)}); "
                    "set OPENAI_API_KEY to a valid key"
                ) from exc
            listed = set()
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            raise EndpointUnusable(
                f"cannot reach the model endpoint {where} ({error_detail(exc)}); start the "
                "server or fix --base-url / OPENAI_BASE_URL"
            ) from exc
        if self.config.model in listed:
            return
        try:
            await sdk.chat.completions.create(
                model=self.config.model,
                max_completion_tokens=1,
                messages=[{"role": "user", "content": "ping"}],
            )
        except openai.APIStatusError as exc:
            detail = error_detail(exc)
            if exc.status_code in (401, 403):
                raise EndpointUnusable(
                    f"{where} refused the API key (HTTP {exc.status_code}: {detail}); set "
                    "OPENAI_API_KEY to a valid key"
                ) from exc
            if exc.status_code == 404 or _NOT_FOUND.search(detail):
                known = f" (it serves: {', '.join(sorted(listed)[:8])})" if listed else ""
                raise EndpointUnusable(
                    f"{where} does not know the model '{self.config.model}'{known}; pass "
                    "--model or set TASKFORGE_MODEL to one it serves"
                ) from exc
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            raise EndpointUnusable(
                f"cannot reach the model endpoint {where} ({error_detail(exc)}); start the "
                "server or fix --base-url / OPENAI_BASE_URL"
            ) from exc


class BlockingClient:
    """A ModelClient for synchronous callers (graph nodes, several threads at once).

    Every request runs on one private event loop in a daemon thread, so all threads share one SDK client and
    its connection pool, which a fresh `asyncio.run` per request could not do safely.
    """

    def __init__(self, client: ModelClient) -> None:
        self.client = client
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="taskforge-model", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._running_loop()).result()

    def complete(self, messages: list[dict[str, Any]], **request: Any) -> Completion:
        return self.run(self.client.complete(messages, **request))

    def check(self) -> None:
        self.run(self.client.check())

    def close(self) -> None:
        """Close the SDK client and stop the loop (idempotent)."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None:
            return
        asyncio.run_coroutine_threadsafe(self.client.aclose(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join()
        loop.close()
