"""The one model client, over real HTTP against a scripted server: the SDK's retries, structured outputs and their
fallbacks, forced tool calls, per-model quirks, the context budget, the response cache, failures sorted by whose
fault they are, and the preflight."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from certify.model_client import (
    TRIMMED,
    BlockingClient,
    EndpointUnusable,
    ModelClient,
    ModelConfig,
    ModelRefused,
    ModelRequestError,
    ModelUnavailable,
    fit_context,
)
from certify.pricing import PriceTable
from tests.model_server import ModelServer, Reply, closed_port_url, completion, error

PRICES = PriceTable.load(
    {"stub-model": {"input": 1.0, "output": 2.0}, "o3-mini": {"input": 1.0, "output": 1.0}}
)
HELLO = [{"role": "user", "content": "hello"}]


class Verdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    verdict: str
    reasons: list[str]


@pytest.fixture
def client():
    made: list[BlockingClient] = []

    def build(server: ModelServer | str, **config: Any) -> BlockingClient:
        base = server if isinstance(server, str) else server.base_url
        cfg = ModelConfig(
            model=config.pop("model", "stub-model"),
            base_url=base,
            api_key="k",
            **{"max_retries": 2, "timeout_s": 5.0, **config},
        )
        made.append(BlockingClient(ModelClient(cfg, prices=PRICES)))
        return made[-1]

    yield build
    for c in made:
        c.close()


def test_a_completion_with_its_usage_and_cost(client):
    with ModelServer(["hi there"]) as server:
        reply = client(server).complete(HELLO)
    assert reply.text == "hi there" and reply.finish_reason == "stop" and not reply.cached
    assert (reply.tokens_in, reply.tokens_out, reply.retries) == (100, 20, 0)
    assert reply.cost == pytest.approx((100 * 1.0 + 20 * 2.0) / 1e6)
    sent = server.requests[0]
    assert sent["model"] == "stub-model" and sent["messages"] == HELLO and sent["temperature"] == 0


def test_prompt_tokens_the_server_served_from_its_prefix_cache_are_recorded_and_priced_as_cached(client):
    prices = {"cached-model": {"input": 1.0, "output": 2.0, "cached_input": 0.25}}
    script = [
        completion("first", usage=(1000, 10)),  # a server that says nothing about its cache (Ollama)
        completion("second", usage=(1200, 10), cached_tokens=900),
        completion("third", usage=(50, 10), cached_tokens=80),  # more than the prompt: held to the prompt
    ]
    with ModelServer(script) as server:
        cfg = ModelConfig(model="cached-model", base_url=server.base_url, api_key="k", timeout_s=5.0)
        blocking = BlockingClient(ModelClient(cfg, prices=PriceTable.load(prices)))
        try:
            first, second, third = (blocking.complete(HELLO) for _ in range(3))
        finally:
            blocking.close()
    assert (first.tokens_cached, second.tokens_cached, third.tokens_cached) == (0, 900, 50)
    assert first.cost == pytest.approx((1000 * 1.0 + 10 * 2.0) / 1e6)
    assert second.cost == pytest.approx((300 * 1.0 + 900 * 0.25 + 10 * 2.0) / 1e6)
    assert third.cost == pytest.approx((50 * 0.25 + 10 * 2.0) / 1e6)
    # a price without a cached rate charges cached tokens as input
    with ModelServer([completion("x", usage=(1000, 0), cached_tokens=600)]) as server:
        reply = client(server).complete(HELLO)
    assert reply.tokens_cached == 600 and reply.cost == pytest.approx(1000 * 1.0 / 1e6)


def test_rate_limits_and_server_errors_are_retried_by_the_sdk_honouring_retry_after(client):
    script = [
        error(429, "slow down", headers={"retry-after-ms": "150"}),
        error(503, "busy", headers={"retry-after-ms": "1"}),
        "done",
    ]
    with ModelServer(script) as server:
        start = time.perf_counter()
        reply = client(server).complete(HELLO)
        elapsed = time.perf_counter() - start
    assert reply.text == "done" and reply.retries == 2 and len(server.requests) == 3
    assert elapsed >= 0.15


def test_persistent_failures_are_infrastructure_after_the_retries(client):
    with (
        ModelServer([error(500, "boom", headers={"retry-after-ms": "1"})]) as server,
        pytest.raises(ModelUnavailable, match=r"HTTP 500: boom \(after 2 retries\)") as caught,
    ):
        client(server).complete(HELLO)
    assert caught.value.reason == "api_error" and len(server.requests) == 3
    with (
        ModelServer([error(429, "later", headers={"retry-after": "3600"})]) as server,
        pytest.raises(ModelUnavailable) as caught,
    ):
        client(server).complete(HELLO)
    assert caught.value.reason == "rate_limited" and len(server.requests) == 1


def test_a_slow_reply_within_the_timeout_arrives_and_a_hanging_one_times_out(client):
    with ModelServer([Reply(**{**completion("late").__dict__, "delay": 0.3})]) as server:
        assert client(server, timeout_s=3.0).complete(HELLO).text == "late"
    with ModelServer([Reply(**{**completion("never").__dict__, "delay": 2.0})]) as server:
        start = time.perf_counter()
        with pytest.raises(ModelUnavailable) as caught:
            client(server, timeout_s=0.2, max_retries=0).complete(HELLO)
        assert time.perf_counter() - start < 1.5
    assert caught.value.reason == "timeout"


def test_requests_the_model_refuses_are_sorted_by_whose_fault_they_are(client):
    overflow = error(
        400, "This model's maximum context length is 8192 tokens", code="context_length_exceeded"
    )
    with ModelServer([overflow]) as server, pytest.raises(ModelRefused) as caught:
        client(server).complete(HELLO)
    assert caught.value.reason == "context_overflow" and len(server.requests) == 1
    with (
        ModelServer([error(401, "bad key")]) as server,
        pytest.raises(ModelRequestError, match="the key was refused") as caught,
    ):
        client(server).complete(HELLO)
    assert caught.value.reason == "auth"
    with (
        ModelServer([error(400, "messages[0].role is required")]) as server,
        pytest.raises(ModelRequestError) as caught,
    ):
        client(server).complete(HELLO)
    assert caught.value.reason == "bad_request"


def test_structured_replies_are_strict_json_schema_with_fallbacks_learned_once(client):
    def script(body: dict[str, Any], index: int) -> Any:
        kind = body.get("response_format", {}).get("type")
        if kind == "json_schema":
            return error(
                400, "response_format json_schema is not supported by this server", param="response_format"
            )
        if kind == "json_object":
            return '{"verdict": "ok", "reasons": []}'
        return "plain"

    with ModelServer(script) as server:
        c = client(server)
        assert json.loads(c.complete(HELLO, reply=Verdict).text) == {"verdict": "ok", "reasons": []}
        c.complete(HELLO, reply=Verdict)
    first, second, third = server.requests
    schema = first["response_format"]["json_schema"]
    assert schema["name"] == "Verdict" and schema["strict"] is True
    assert schema["schema"]["additionalProperties"] is False and schema["schema"]["required"] == [
        "verdict",
        "reasons",
    ]
    assert second["response_format"] == third["response_format"] == {"type": "json_object"}
    assert any("falling back to json_object" in n for n in c.client.notes)

    with ModelServer(
        [error(400, "unknown field: response_format", param="response_format"), "plain"]
    ) as server:
        c = client(server)
        c.client.quirks.response_format = "json_object"
        assert c.complete(HELLO, reply=Verdict).text == "plain"
    assert "response_format" not in server.requests[1]


def test_free_form_reply_models_are_sent_non_strict():
    from certify.model_client import reply_format

    class Loose(BaseModel):
        value: Any
        extra: dict[str, Any]

    assert reply_format(Loose)["json_schema"]["strict"] is False
    assert reply_format(Verdict)["json_schema"]["strict"] is True


def test_a_forced_tool_call_falls_back_where_the_server_refuses_it(client):
    tools = [{"type": "function", "function": {"name": "submit", "parameters": {"type": "object"}}}]

    def script(body: dict[str, Any], index: int) -> Any:
        if isinstance(body.get("tool_choice"), dict):
            return error(400, "tool_choice of type function is not supported", param="tool_choice")
        return [("submit", {"x": 1})]

    with ModelServer(script) as server:
        c = client(server)
        assert c.complete(HELLO, tools=tools, tool_choice="submit").tool_calls[0].function.name == "submit"
        c.complete(HELLO, tools=tools, tool_choice="submit")
        c.complete(HELLO, tools=tools)
    named, required, again, auto = server.requests
    assert named["tool_choice"] == {"type": "function", "function": {"name": "submit"}}
    assert required["tool_choice"] == again["tool_choice"] == "required" and "tool_choice" not in auto


def test_reasoning_models_get_no_temperature_and_refusals_adapt_the_request(client):
    with ModelServer(["ok"], models=("o3-mini",)) as server:
        client(server, model="o3-mini", max_completion_tokens=50).complete(HELLO)
    assert "temperature" not in server.requests[0] and server.requests[0]["max_completion_tokens"] == 50

    refusals = [
        error(
            400,
            "Unsupported value: 'temperature' does not support 0 with this model.",
            code="unsupported_value",
            param="temperature",
        ),
        error(400, "Unrecognized request argument supplied: max_completion_tokens"),
        "ok",
    ]
    with ModelServer(refusals) as server:
        c = client(server, max_completion_tokens=50)
        assert c.complete(HELLO).text == "ok"
        c.complete(HELLO)
    first, second, third, fourth = server.requests
    assert first["temperature"] == 0 and "temperature" not in second
    assert "max_completion_tokens" not in third and third["max_tokens"] == 50
    assert "temperature" not in fourth and fourth["max_tokens"] == 50


def test_the_context_budget_trims_the_oldest_tool_results_only():
    big = "x" * 4000
    messages = [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "go"},
        {"role": "tool", "tool_call_id": "a", "content": big},
        {"role": "tool", "tool_call_id": "b", "content": big},
        {"role": "tool", "tool_call_id": "c", "content": big},
    ]
    assert fit_context(messages, None, 1) is messages
    assert fit_context(messages, 10_000, 1) is messages
    fitted = fit_context(messages, 2200, 1)
    assert fitted[2]["content"] == TRIMMED.format(n=4000) and fitted[3]["content"] == big
    assert fitted[4]["content"] == big and messages[2]["content"] == big
    assert [m["content"] for m in fit_context(messages, 10, 1)[2:4]] == [TRIMMED.format(n=4000)] * 2
    assert fit_context(messages, 10, 1)[4]["content"] == big


def test_the_client_sends_the_trimmed_context(client):
    history = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "a", "type": "function", "function": {"name": "read", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "a", "content": "y" * 8000},
        {"role": "user", "content": "next"},
    ]
    with ModelServer(["ok"]) as server:
        client(server, context_tokens=500, keep_tool_results=0).complete(history)
    assert server.requests[0]["messages"][2]["content"] == TRIMMED.format(n=8000)
    assert history[2]["content"] == "y" * 8000


def test_the_response_cache_answers_a_repeated_request_without_paying(client, tmp_path):
    with ModelServer(["first", "second"]) as server:
        c = client(server, cache_dir=tmp_path / "cache")
        one = c.complete(HELLO)
        again = c.complete(HELLO)
        other = c.complete([{"role": "user", "content": "something else"}])
        resumed = client(server, cache_dir=tmp_path / "cache").complete(HELLO)
    assert len(server.requests) == 2 and (one.text, other.text) == ("first", "second")
    assert again.cached and again.text == "first" and again.cost == 0 and not one.cached
    assert resumed.cached and resumed.text == "first"
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 2


def test_failures_are_not_cached(client, tmp_path):
    with ModelServer([error(400, "bad input"), "fine"]) as server:
        c = client(server, cache_dir=tmp_path / "cache")
        with pytest.raises(ModelRequestError):
            c.complete(HELLO)
        assert c.complete(HELLO).text == "fine"
    assert len(server.requests) == 2


def test_threads_share_one_client(client):
    with ModelServer(["ok"], latency=0.2) as server:
        c = client(server)
        results: list[str] = []
        threads = [threading.Thread(target=lambda: results.append(c.complete(HELLO).text)) for _ in range(4)]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - start
    assert results == ["ok"] * 4 and elapsed < 0.7


# ------------------------------------------------------------------------------------------------ preflight
def test_preflight_passes_for_a_listed_model_without_spending_a_completion(client):
    with ModelServer(["unused"]) as server:
        client(server).check()
    assert server.requests == [] and server.paths == ["/v1/models"]


def test_preflight_accepts_a_server_that_serves_any_name(client):
    with ModelServer(["pong"], models=("some-file.gguf",)) as server:
        client(server).check()
    assert len(server.requests) == 1 and server.requests[0]["max_completion_tokens"] == 1


def test_preflight_names_what_is_wrong(client):
    with pytest.raises(EndpointUnusable, match=r"cannot reach the model endpoint http://127\.0\.0\.1:\d+/v1"):
        client(closed_port_url(), max_retries=0).check()
    with (
        ModelServer(["unused"], models_status=401) as server,
        pytest.raises(EndpointUnusable, match="refused the API key"),
    ):
        client(server).check()
    with (
        ModelServer(
            [error(404, "The model `gpt-9` does not exist", code="model_not_found")], models=("gpt-4.1",)
        ) as server,
        pytest.raises(EndpointUnusable, match=r"does not know the model 'gpt-9' \(it serves: gpt-4\.1\)"),
    ):
        client(server, model="gpt-9").check()
