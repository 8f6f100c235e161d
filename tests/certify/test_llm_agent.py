"""The openai:<model> agent against a scripted fake model behind the real openai client (httpx2.MockTransport):
both action modes, parsing, the episode's rules in the first message, replies without a tool call, the tool-output
cap, the SDK's retries, and which failures make a trial invalid rather than failed."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import pytest

from certify.agents import resolve_agent
from certify.agents.llm import PLACEHOLDER_KEY, LLMConfig, OpenAIAgent
from certify.episode import NO_ACTION, NUDGE
from certify.evaluate import aggregate
from certify.pricing import PriceTable
from certify.trial import UNPARSEABLE, Trial, run_trial
from tests.certify.helpers import task

UPDATE = ("update_widget", {"widget_uuid": "w_pos", "data_args": {"fund": "Gamma", "period": "QTD"}})
NOTE = (
    "add_generative_widget",
    {"widget_type": "note", "name": "Desk Note", "data": "Gamma QTD weight 5.24%"},
)
FINAL = ("final_answer", {"text": "Positions set to Gamma QTD; the note records 5.24%."})


def action_json(tool: str, args: dict[str, Any]) -> str:
    return json.dumps({"tool": tool, "args": args})


class FakeModel:
    """A scripted chat endpoint. Each script item is one reply: a string (assistant text), a list of
    (tool, args) tool calls, an httpx2.Response, an exception to raise, or an async callable taking the
    request. The last item repeats once the script runs out."""

    def __init__(
        self, script: list[Any], usage: tuple[int, int] = (100, 20), cached: list[int] | None = None
    ) -> None:
        self.script = list(script)
        self.usage = usage
        # per reply, the prompt tokens reported as served from the prefix cache (None: not reported)
        self.cached = cached
        self.requests: list[dict[str, Any]] = []
        self._calls = 0

    def completion(self, item: Any) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if isinstance(item, str):
            message["content"] = item
        else:
            calls = []
            for tool, args in item:
                self._calls += 1
                calls.append(
                    {
                        "id": f"call_{self._calls}",
                        "type": "function",
                        "function": {"name": tool, "arguments": json.dumps(args)},
                    }
                )
            message["tool_calls"] = calls
        tokens_in, tokens_out = self.usage
        usage: dict[str, Any] = {
            "prompt_tokens": tokens_in,
            "completion_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
        }
        if self.cached is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": self.cached[len(self.requests) - 1]}
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": "fake-model",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "stop" if isinstance(item, str) else "tool_calls",
                }
            ],
            "usage": usage,
        }

    async def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(json.loads(request.content))
        item = self.script[min(len(self.requests), len(self.script)) - 1]
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, httpx2.Response):
            return item
        if callable(item):
            return await item(request)
        return httpx2.Response(200, json=self.completion(item))

    def agent(self, **config: Any) -> OpenAIAgent:
        cfg = LLMConfig(model="fake-model", api_key="test-key", base_url="http://fake.test/v1", **config)
        http = httpx2.AsyncClient(transport=httpx2.MockTransport(self.handler))
        prices = PriceTable.load({"fake-model": {"input": 1.0, "output": 2.0, "cached_input": 0.5}})
        return OpenAIAgent(cfg, http_client=http, prices=prices)


def run(world, agent, t=None):
    return asyncio.run(run_trial(world, t or task(), agent))


def test_a_trial_records_the_prompt_tokens_the_server_served_from_its_cache_and_prices_them(mini_world):
    # the server reports no cache on the first request (nothing before it) and a growing one after
    model = FakeModel([[("get_workspace_snapshot", {})], [UPDATE, NOTE], [FINAL]], cached=[0, 60, 90])
    trial = run(mini_world, model.agent(mode="tools"))
    assert trial.valid and trial.passed
    assert (trial.tokens_in, trial.tokens_cached, trial.tokens_out) == (300, 150, 60)
    assert trial.cost == pytest.approx((150 * 1.0 + 150 * 0.5 + 60 * 2.0) / 1e6)
    assert aggregate([trial])["tokens"] == {"in": 300, "out": 60, "cached": 150}
    again = Trial.model_validate_json(trial.model_dump_json())  # kept in trials.jsonl as it was
    assert again.tokens_cached == 150


def test_tool_mode_solves_the_mini_task(mini_world):
    model = FakeModel([[("get_workspace_snapshot", {})], [UPDATE, NOTE], [FINAL]])
    trial = run(mini_world, model.agent(mode="tools"))
    assert trial.valid and trial.passed, (trial.failure_codes, trial.events)
    assert [e["tool"] for e in trial.events] == [
        "get_workspace_snapshot",
        "update_widget",
        "add_generative_widget",
        "final_answer",
    ]
    assert trial.final_answer == FINAL[1]["text"]
    assert (trial.turns, trial.tool_calls, trial.invalid_calls) == (4, 3, 0)
    assert (trial.tokens_in, trial.tokens_out) == (300, 60)
    assert trial.cost == pytest.approx((300 * 1.0 + 60 * 2.0) / 1e6)
    assert trial.strict_parses == 4

    first, _, third = model.requests
    assert first["temperature"] == 0
    assert {t["function"]["name"] for t in first["tools"]} >= {"update_widget", "final_answer"}
    assert all(t["type"] == "function" and "parameters" in t["function"] for t in first["tools"])
    assert "update_widget" not in first["messages"][0]["content"]
    answers = [m for m in third["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in answers] == ["call_1", "call_2", "call_3"]
    assert all(json.loads(m["content"])["ok"] is True for m in answers)
    assert all(sum(m["role"] == "system" for m in r["messages"]) == 1 for r in model.requests)
    roles = [m["role"] for m in trial.transcript]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "tool", "assistant"]
    json.dumps(trial.transcript)


def test_tool_mode_replies_without_a_tool_call_are_nudged_turns_then_the_session_stops(mini_world):
    model = FakeModel(["Let me think about the positions first.", ""])
    trial = run(mini_world, model.agent(mode="tools", max_idle_replies=2))
    assert trial.valid and trial.ended_by == "agent_stopped" and trial.final_answer is None
    # every request the model answered is a turn: three silent replies are three turns (issue 24)
    assert [e["tool"] for e in trial.events] == [NO_ACTION, NO_ACTION, NO_ACTION]
    assert (trial.turns, trial.tool_calls, trial.invalid_calls, len(model.requests)) == (3, 0, 0, 3)
    assert trial.events[0]["args"] == {"text": "Let me think about the positions first."}
    second = model.requests[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": "Let me think about the positions first."}
    assert second[-1] == {"role": "user", "content": NUDGE}


def test_a_nudged_model_can_still_finish_the_task(mini_world):
    model = FakeModel([[("get_workspace_snapshot", {})], "I have what I need.", [UPDATE, NOTE], [FINAL]])
    trial = run(mini_world, model.agent(mode="tools"))
    assert trial.valid and trial.passed, trial.failure_codes
    assert [e["tool"] for e in trial.events] == [
        "get_workspace_snapshot",
        NO_ACTION,
        "update_widget",
        "add_generative_widget",
        "final_answer",
    ]
    assert trial.turns == 5 and trial.tool_calls == 3 and trial.final_answer == FINAL[1]["text"]
    from certify.trial import regrade_trial

    assert regrade_trial(mini_world, task(), trial).passed is True


def test_a_nudge_counts_against_the_turn_budget(mini_world):
    trial = run(
        mini_world,
        FakeModel(["thinking"]).agent(mode="tools", max_idle_replies=10),
        task(**{"eval.max_turns": 3}),
    )
    assert trial.ended_by == "max_turns" and trial.turns == 3 and trial.invalid_calls == 0


@pytest.mark.parametrize("mode", ["json", "tools"])
def test_the_first_message_states_the_episode_rules_and_nothing_of_the_eval_block(mini_world, mode):
    t = task(
        **{
            "eval.max_turns": 7,
            "eval.trace_checks": {
                "max_invalid_tool_calls": 2,
                "forbid_invented_widget_ids": True,
                "must_call_schema_before_create": True,
            },
            "eval.workspace_checks": {"preserve_other_dashboards": True},
        }
    )
    model = FakeModel([action_json(*FINAL) if mode == "json" else [FINAL]])
    run(mini_world, model.agent(mode=mode), t)
    system, first = (m["content"] for m in model.requests[0]["messages"][:2])
    # the system prompt (and the tool schemas) are the same whatever the task: a prefix a cache keeps across
    # trials (issue 24); the task's rules follow the request in the first user message
    other = FakeModel([action_json(*FINAL) if mode == "json" else [FINAL]])
    run(mini_world, other.agent(mode=mode), task())
    assert other.requests[0]["messages"][0]["content"] == system and "Rules of this episode" not in system
    assert other.requests[0].get("tools") == model.requests[0].get("tools")
    assert first.startswith(t.prompt) and first != other.requests[0]["messages"][1]["content"]
    for rule in (
        "at most 7 turns",
        "At most 2 of your calls may fail",
        "never guess an id",
        "get_widget_schema) before you create it",
        "Leave every other dashboard",
        "call final_answer",
    ):
        assert rule in first, rule
    evaluation = t.eval.model_dump(mode="json")
    for secret in ("required_widgets", "Gamma", "5.24", "data_contains", str(evaluation["required_widgets"])):
        assert secret not in system + first.removeprefix(t.prompt), secret
    strict = run(
        mini_world,
        FakeModel([action_json(*FINAL)]).agent(),
        task(**{"eval.trace_checks": {"max_invalid_tool_calls": 0}}),
    )
    assert strict.valid


def test_the_cap_on_unrequested_widgets_and_the_kept_layouts_are_stated_as_rules_when_graded(mini_world):
    """The requests no longer repeat them (issue 22 item 5): the harness must say them, and only when graded."""
    from certify.episode import episode_rules

    layout = {"widget_uuid": "w_1", "tab_id": "main", "x": 0, "y": 0, "w": 20, "h": 14}
    capped = episode_rules(task(**{"eval.max_unrequested_widgets": 0, "eval.required_layouts": [layout]}))
    assert "Add no widget to the dashboard that the request does not ask for." in capped
    assert any(r.startswith("Widgets and notes already on the dashboard keep their place") for r in capped)
    assert "Add at most 2 widgets" in " ".join(episode_rules(task(**{"eval.max_unrequested_widgets": 2})))
    plain = " ".join(
        episode_rules(task(**{"eval.max_unrequested_widgets": None, "eval.required_layouts": []}))
    )
    assert "Add no widget" not in plain and "keep their place" not in plain
    model = FakeModel([[FINAL]])
    run(mini_world, model.agent(mode="tools"), task(**{"eval.max_unrequested_widgets": 0}))
    assert "Add no widget to the dashboard" in model.requests[0]["messages"][1]["content"]


def test_tool_results_are_whole_by_default_and_capped_with_a_marker_when_asked(mini_world):
    model = FakeModel([[("list_available_widgets", {})], [FINAL]])
    run(mini_world, model.agent(mode="tools"))
    whole = json.loads(model.requests[1]["messages"][-1]["content"])
    assert whole["ok"] is True
    capped = FakeModel([[("list_available_widgets", {})], [FINAL]])
    run(mini_world, capped.agent(mode="tools", max_tool_output_chars=200))
    content = capped.requests[1]["messages"][-1]["content"]
    total = len(json.dumps(whole, ensure_ascii=False, separators=(",", ":")))
    assert content.startswith(model.requests[1]["messages"][-1]["content"][:200])
    assert content.endswith(f"…[truncated: 200 of {total} characters shown]")


def test_json_mode_lenient_reads_prose_and_fences(mini_world):
    wrapped = [
        f"Sure! I will do that now.\n```json\n{action_json(*step)}\n```\nLet me know."
        for step in (UPDATE, NOTE, FINAL)
    ]
    model = FakeModel(wrapped)
    trial = run(mini_world, model.agent(mode="json", parse="lenient"))
    assert trial.valid and trial.passed, trial.failure_codes
    assert (trial.lenient_parses, trial.strict_parses, trial.failed_parses, trial.invalid_calls) == (
        3,
        0,
        0,
        0,
    )
    system = model.requests[0]["messages"][0]
    assert (
        system["role"] == "system"
        and "update_widget" in system["content"]
        and "final_answer" in system["content"]
    )
    assert '{"tool": NAME, "args": {...}}' in system["content"]
    assert "tools" not in model.requests[0]
    first = model.requests[0]["messages"][1]
    assert first["role"] == "user" and first["content"].startswith(
        task().prompt + "\n\nRules of this episode:"
    )
    envelope = json.loads(model.requests[1]["messages"][-1]["content"])
    assert model.requests[1]["messages"][-1]["role"] == "user" and envelope["command"] == "update_widget"


def test_json_mode_strict_counts_wrapped_replies_as_invalid_calls(mini_world):
    wrapped = [f"Here you go: {action_json(*step)}" for step in (UPDATE, NOTE, FINAL)]
    model = FakeModel(wrapped)
    trial = run(mini_world, model.agent(mode="json", parse="strict"))
    assert trial.valid and trial.passed is False
    # the task allows one invalid call: the second fails it, and the episode ends there instead of asking the
    # model again until the turn budget (issue 24)
    assert trial.ended_by == "invalid_call_budget" and trial.turns == 2 and len(model.requests) == 2
    assert trial.invalid_calls == 2 and all(e["tool"] == UNPARSEABLE for e in trial.events)
    assert (trial.lenient_parses, trial.strict_parses) == (2, 0)
    assert "too_many_invalid_calls" in trial.failure_codes
    feedback = json.loads(model.requests[1]["messages"][-1]["content"])
    assert (
        feedback["error"]["code"] == "unparseable_action" and "exactly one JSON object" in feedback["message"]
    )


def test_garbage_reply_is_an_invalid_call_against_the_budget(mini_world):
    model = FakeModel(["I would rather look around first.", action_json(*FINAL)])
    trial = run(mini_world, model.agent())
    assert trial.valid
    assert [e["tool"] for e in trial.events] == [UNPARSEABLE, "final_answer"]
    assert (trial.invalid_calls, trial.failed_parses, trial.strict_parses, trial.turns) == (1, 1, 1, 2)
    roomy = {"eval.trace_checks.max_invalid_tool_calls": 10}
    budget = task(**{"eval.max_turns": 3, **roomy})
    trial = run(mini_world, FakeModel(["no idea"]).agent(), budget)
    assert trial.turns == 3 and trial.invalid_calls == 3 and trial.ended_by == "max_turns"
    # with the task's own allowance (one invalid call) the second one loses it and ends the episode
    model = FakeModel(["no idea"])
    trial = run(mini_world, model.agent(), task(**{"eval.max_turns": 3}))
    assert (trial.turns, trial.ended_by, len(model.requests)) == (2, "invalid_call_budget", 2)
    assert trial.valid and trial.passed is False and "too_many_invalid_calls" in trial.failure_codes


def test_temperature_can_be_left_out(mini_world):
    model = FakeModel([action_json(*FINAL)])
    run(mini_world, model.agent(temperature=None))
    assert "temperature" not in model.requests[0]


def test_safety_stop_when_the_task_sets_no_budget(mini_world):
    trial = run(
        mini_world,
        FakeModel(["still thinking"]).agent(max_requests=5),
        task(**{"eval.max_turns": None, "eval.trace_checks.max_invalid_tool_calls": 10}),
    )
    assert trial.valid and trial.turns == 5 and trial.ended_by == "agent_stopped"


def test_429_is_retried_by_the_sdk_honouring_retry_after_then_success(mini_world):
    limited = httpx2.Response(
        429, headers={"retry-after-ms": "120"}, json={"error": {"message": "slow down"}}
    )
    model = FakeModel([limited, action_json(*FINAL)])
    trial = run(mini_world, model.agent())
    assert trial.valid and trial.final_answer == FINAL[1]["text"]
    assert len(model.requests) == 2 and (trial.requests, trial.retries) == (2, 1)
    assert trial.duration_s >= 0.12


def test_retry_after_beyond_two_minutes_gives_up_at_once(mini_world):
    limited = httpx2.Response(429, headers={"Retry-After": "3600"}, json={"error": {"message": "later"}})
    model = FakeModel([limited])
    trial = run(mini_world, model.agent())
    assert not trial.valid and trial.invalid_reason == "rate_limited" and len(model.requests) == 1
    assert "later" in trial.error


def test_persistent_500_makes_the_trial_invalid_not_failed(mini_world):
    model = FakeModel(
        [httpx2.Response(500, headers={"retry-after-ms": "1"}, json={"error": {"message": "boom"}})]
    )
    trial = run(mini_world, model.agent(max_retries=3))
    assert trial.valid is False and trial.invalid_reason == "api_error" and trial.passed is None
    assert trial.failure_codes == []
    assert len(model.requests) == 4 and "HTTP 500: boom" in trial.error and "after 3 retries" in trial.error


def test_client_error_is_not_retried(mini_world):
    model = FakeModel([httpx2.Response(401, json={"error": {"message": "bad key"}})])
    trial = run(mini_world, model.agent())
    assert (trial.valid, trial.invalid_reason, len(model.requests)) == (False, "auth", 1)
    assert "bad key" in trial.error


def test_a_hanging_endpoint_times_out(mini_world):
    from tests.model_server import ModelServer, Reply, completion

    hanging = Reply(**{**completion("too late").__dict__, "delay": 3.0})
    with ModelServer([hanging]) as server:
        agent = OpenAIAgent(
            LLMConfig(
                model="stub-model",
                base_url=server.base_url,
                api_key="k",
                request_timeout_s=0.1,
                max_retries=1,
            )
        )
        trial = run(mini_world, agent)
    assert trial.valid is False and trial.invalid_reason == "timeout"
    assert len(server.requests) == 2 and trial.duration_s < 2.5


def test_connection_error_then_recovery(mini_world):
    model = FakeModel([httpx2.ConnectError("refused"), action_json(*FINAL)])
    trial = run(mini_world, model.agent())
    assert trial.valid and len(model.requests) == 2 and trial.retries == 1


def test_older_run_records_with_hand_written_retry_settings_still_load():
    config = LLMConfig(
        model="m", max_attempts=4, timeout_attempts=2, backoff_base_s=1.0, max_retry_after_s=120
    )
    assert config.max_retries == 3 and "max_attempts" not in config.public()


def test_malformed_tool_arguments_are_an_invalid_call(mini_world):
    async def bad_args(request):
        body = {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": "fake-model",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "c1",
                                "type": "function",
                                "function": {"name": "update_widget", "arguments": "{widget_uuid: w_pos"},
                            }
                        ],
                    },
                }
            ],
        }
        return httpx2.Response(200, json=body)

    model = FakeModel([bad_args, "Finished."])
    trial = run(mini_world, model.agent(mode="tools"))
    assert trial.valid and trial.events[0]["tool"] == UNPARSEABLE and trial.failed_parses == 1
    answer = [m for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert answer[0]["tool_call_id"] == "c1"
    assert json.loads(answer[0]["content"])["error"]["code"] == "unparseable_action"


def test_endpoint_configuration(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match=r"OPENAI_API_KEY.*OPENAI_BASE_URL"):
        resolve_agent("openai:gpt-4.1-mini")
    with pytest.raises(ValueError, match="openai:<model>"):
        OpenAIAgent.from_name("openai:", base_url="http://localhost:11434/v1")
    local = OpenAIAgent.from_name("openai:llama3.1:8b", base_url="http://localhost:11434/v1")
    assert local.config.model == "llama3.1:8b" and local.model._api_key == PLACEHOLDER_KEY
    assert local.notes and "no price" in local.notes[0]
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    agent = resolve_agent("openai:gpt-4o-mini")
    assert agent.name == "openai:gpt-4o-mini" and agent.endpoint == "http://127.0.0.1:8000/v1"
    assert agent.notes == [] and agent.config.mode == "json" and agent.config.temperature == 0
    assert "api_key" not in agent.config.public()


def test_price_table_overrides(tmp_path, monkeypatch):
    table = PriceTable.load()
    assert table.cost("gpt-4o-2024-08-06", 1_000_000, 0) == table.cost("gpt-4o", 1_000_000, 0) > 0
    assert table.cost("my-local-model", 10, 10) == 0 and "my-local-model" in table.note("my-local-model")
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"my-local-model": {"input": 3, "output": 4}}))
    monkeypatch.setenv("TASKFORGE_PRICES", str(prices))
    assert PriceTable.load().cost("my-local-model", 1_000_000, 1_000_000) == 7
    assert (
        PriceTable.load({"my-local-model": {"input": 1, "output": 1}}).cost("my-local-model", 10**6, 0) == 1
    )
    prices.write_text(json.dumps({"m": {"input": 1, "outptu": 2}}))
    with pytest.raises(ValueError, match=r"prices.json: m\.outptu: unknown key"):
        PriceTable.load()


# ---------------------------------------------------------------------------------------------- reasoning models
def error(status: int, message: str, code: str | None = None, param: str | None = None) -> httpx2.Response:
    return httpx2.Response(
        status,
        json={"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}},
    )


def model_agent(model: FakeModel, name: str, **config: Any) -> OpenAIAgent:
    cfg = LLMConfig(model=name, api_key="test-key", base_url="http://fake.test/v1", **config)
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(model.handler))
    return OpenAIAgent(cfg, http_client=http, prices=PriceTable.load({name: {"input": 1.0, "output": 2.0}}))


def test_reasoning_models_get_no_temperature_and_a_completion_token_cap(mini_world):
    model = FakeModel([action_json(*FINAL)])
    trial = run(mini_world, model_agent(model, "o4-mini", max_tokens=512))
    assert trial.valid
    body = model.requests[0]
    assert "temperature" not in body and body["max_completion_tokens"] == 512 and "max_tokens" not in body


def test_a_refused_temperature_is_left_out_from_then_on(mini_world):
    refused = error(
        400,
        "Unsupported value: 'temperature' does not support 0.0 with this model. Only the default "
        "(1) value is supported.",
        code="unsupported_value",
        param="temperature",
    )
    model = FakeModel([refused, action_json(*UPDATE), action_json(*NOTE), action_json(*FINAL)])
    agent = model.agent()
    trial = run(mini_world, agent)
    assert trial.valid and trial.passed, trial.failure_codes
    assert model.requests[0]["temperature"] == 0
    assert all("temperature" not in r for r in model.requests[1:]) and len(model.requests) == 4
    assert trial.retries == 1
    assert any("refuses temperature" in n for n in agent.notes)


def test_a_server_that_only_knows_max_tokens_gets_it(mini_world):
    refused = error(400, "Unrecognized request argument supplied: max_completion_tokens")
    model = FakeModel([refused, action_json(*FINAL)])
    trial = run(mini_world, model.agent(max_tokens=256))
    assert trial.valid
    assert model.requests[0]["max_completion_tokens"] == 256
    assert model.requests[1]["max_tokens"] == 256 and "max_completion_tokens" not in model.requests[1]


def test_an_overflowing_context_is_a_failure_with_its_reason(mini_world):
    overflow = error(
        400,
        "This model's maximum context length is 128000 tokens. However, your messages resulted "
        "in 131072 tokens.",
        code="context_length_exceeded",
        param="messages",
    )
    model = FakeModel([action_json(*UPDATE), overflow])
    t = task()
    trial = run(mini_world, model.agent(), t)
    assert trial.valid and trial.passed is False and trial.invalid_reason is None
    assert trial.ended_by == "context_overflow" and trial.failure_codes[0] == "context_overflow"
    assert "maximum context length" in trial.error and trial.fingerprint[0].startswith("context_overflow:")
    assert [e["tool"] for e in trial.events] == ["update_widget"]
    from certify.trial import regrade_trial

    assert regrade_trial(mini_world, t, trial).passed is False


def test_a_refused_parameter_is_a_failure_not_an_invalid_trial(mini_world):
    refused = error(
        400,
        "Unsupported parameter: 'tools' is not supported with this model.",
        code="unsupported_parameter",
        param="tools",
    )
    trial = run(mini_world, FakeModel([refused]).agent(mode="tools"))
    assert trial.valid and trial.passed is False and trial.failure_codes[0] == "parameter_refused"


def test_a_malformed_request_is_still_the_harness_fault(mini_world):
    trial = run(
        mini_world, FakeModel([error(400, "We could not parse the JSON body of your request.")]).agent()
    )
    assert (trial.valid, trial.invalid_reason) == (False, "bad_request")
