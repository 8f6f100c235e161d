"""Every way a real server says no, classified as DESIGN.md section 6 says (issue 24): the error bodies of OpenAI,
vLLM, llama.cpp and Ollama (tests/certify/fixtures/server_errors.json) served over real HTTP to the real client,
each ending the trial as a failure with its reason (the model's own limit) or as an invalid trial with its
reason (nothing about the agent was measured)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from certify.agents.llm import LLMConfig, OpenAIAgent
from certify.model_client import ModelClient, ModelConfig, ModelRefused, refusal
from certify.trial import run_trial
from tests.certify.helpers import task
from tests.certify.test_llm_agent import FINAL, NOTE, UPDATE, action_json
from tests.model_server import ModelServer, Reply, completion

CASES = json.loads((Path(__file__).parent / "fixtures" / "server_errors.json").read_text())["cases"]


def the_play(mode: str) -> list[Reply]:
    """The mini task solved, in the format of `mode`: what a server says after a refusal the client adapts to."""
    if mode == "tools":
        return [completion(tool_calls=[step]) for step in (UPDATE, NOTE, FINAL)]
    return [completion(action_json(*step)) for step in (UPDATE, NOTE, FINAL)]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['server']}: {c['case']}" for c in CASES])
def test_a_server_refusal_ends_the_trial_as_section_6_says(case, mini_world):
    mode = case.get("mode", "json")
    first = (
        completion("late", finish_reason="stop")
        if case["body"] is None
        else Reply(case["status"], case["body"], delay=case.get("delay", 0.0))
    )
    if case["reason"] == "timeout":
        first.delay = case["delay"]
    with ModelServer([first, *the_play(mode)]) as server:
        config = LLMConfig(
            model="stub-model",
            base_url=server.base_url,
            api_key="k",
            mode=mode,
            max_retries=0,
            request_timeout_s=0.5 if case["reason"] == "timeout" else 30,
        )
        trial = asyncio.run(run_trial(mini_world, task(), OpenAIAgent(config)))
    if case["outcome"] == "invalid":
        assert not trial.valid, trial
        assert trial.invalid_reason == case["reason"], (trial.invalid_reason, trial.error)
        assert trial.error, "an invalid trial says what happened"
    elif case["outcome"] == "failure":
        assert trial.valid and trial.passed is False, (trial.invalid_reason, trial.error)
        assert trial.ended_by == case["reason"] and trial.failure_codes[0] == case["reason"]
        assert trial.error
        # a refusal that follows a reply (one cut at the cap) counts that reply as the turn it was
        assert trial.turns == (1 if case["reason"] == "output_truncated" else 0), trial.events
        assert trial.requests == 1
    else:
        assert trial.valid and trial.passed, (trial.invalid_reason, trial.error, trial.failure_codes)


def test_a_timeout_says_what_to_try(mini_world):
    with ModelServer([Reply(200, completion("late").body, delay=1.5)]) as server:
        config = LLMConfig(
            model="m",
            base_url=server.base_url,
            api_key="k",
            max_retries=0,
            request_timeout_s=0.3,
            max_tokens=900,
        )
        trial = asyncio.run(run_trial(mini_world, task(), OpenAIAgent(config)))
    assert trial.invalid_reason == "timeout"
    assert "no reply in 0.3 s" in trial.error and "--max-tokens" in trial.error and "--timeout" in trial.error


def test_the_llama_cpp_overflow_is_recognised_by_its_type_not_its_numeric_code():
    body = next(c for c in CASES if c["server"] == "llama.cpp" and c["case"] == "context overflow")["body"]

    class Refused(Exception):
        pass

    exc = Refused()
    exc.body = body["error"]  # type: ignore[attr-defined]  # the SDK unwraps "error"
    assert refusal(exc) == "context_overflow"
    exc.body = {"code": 400, "message": "something else", "type": "exceed_context_size_error"}  # type: ignore[attr-defined]
    assert refusal(exc) == "context_overflow"


def test_the_model_client_raises_a_refusal_for_the_roles_too():
    body = next(c for c in CASES if c["server"] == "llama.cpp" and c["case"] == "context overflow")["body"]
    with ModelServer([Reply(400, body)]) as server:
        client = ModelClient(ModelConfig(model="m", base_url=server.base_url, api_key="k", max_retries=0))

        async def go():
            try:
                await client.complete([{"role": "user", "content": "hi"}])
            finally:
                await client.aclose()

        with pytest.raises(ModelRefused) as caught:
            asyncio.run(go())
        assert server.requests[0]["max_completion_tokens"] == 4096, "the output cap goes on every request"
    assert caught.value.reason == "context_overflow"
