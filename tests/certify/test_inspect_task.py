"""The inspect_ai task: scripted mock models (the reference, a no-op, a misbehaving one) through inspect's own
eval loop, and `inspect eval` on the command line against a local OpenAI-compatible stub."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai", reason="inspect_ai is not installed (pip install -e '.[inspect]')")

from inspect_ai import eval as inspect_eval
from inspect_ai import score as inspect_score
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelOutput, ModelUsage, get_model

from certify.agents.base import TaskView
from certify.agents.llm import first_message, system_prompt
from certify.episode import reference_calls
from certify.evaluate import select_tasks
from certify.inspect_task import (
    SHIPPED,
    inline_refs,
    message_limit,
    taskforge_taskset,
    tool_params,
    workspace_tasks,
)
from tests.certify.helpers import raw

ROOT = Path(__file__).resolve().parents[2]
PERSONA = "portfolio_manager"
TASKS = {first_message(TaskView.of(t)): t for t in select_tasks(SHIPPED)}


def usage(output: ModelOutput) -> ModelOutput:
    """Scripted outputs carry their usage: mockllm would otherwise count tokens with tiktoken, which downloads
    its encoding (no network here)."""
    output.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
    return output


def task_of(messages: list) -> Any:
    return TASKS[next(m.text for m in messages if isinstance(m, ChatMessageUser))]


def next_reference_move(task, turns_taken: int) -> tuple[str, dict] | str:
    """The reference's calls, then final_answer with its answer, as the system prompt asks (a plain reply is
    nudged, not taken as the answer)."""
    steps = reference_calls(task)
    if turns_taken < len(steps):
        return steps[turns_taken]
    return ("final_answer", {"text": task.eval.reference_answer or "Done: the workspace is set up as asked."})


def run(model_fn, **options):
    (log,) = inspect_eval(
        workspace_tasks(persona=PERSONA),
        model=get_model("mockllm/model", custom_outputs=model_fn),
        display="none",
        log_dir=options.pop("log_dir"),
        **options,
    )
    assert log.status == "success", log.error
    return log


def test_the_scripted_reference_passes_and_sees_only_the_prompt_and_the_tools(tmp_path):
    seen: list[tuple[list, list]] = []

    def reference(messages, tools, tool_choice, config):
        seen.append((messages, tools))
        task = task_of(messages)
        move = next_reference_move(task, sum(isinstance(m, ChatMessageAssistant) for m in messages))
        if isinstance(move, str):
            return usage(ModelOutput.from_content("mockllm/model", move))
        return usage(ModelOutput.for_tool_call("mockllm/model", move[0], move[1]))

    log = run(reference, log_dir=str(tmp_path))
    assert len(log.samples) == 20
    for sample in log.samples:
        (score,) = sample.scores.values()
        assert score.value == "C", (sample.id, score.explanation)
        assert score.metadata["share"] == 1.0 and score.metadata["failure_codes"] == []
        assert sample.metadata == {"level": sample.id.rsplit("_", 1)[1]}
    metrics = log.results.scores[0].metrics
    assert metrics["accuracy"].value == 1.0 and {f"level{n}" for n in range(5)} <= set(metrics)

    # scored again from the stored log alone (no live episode): the calls are replayed through the simulator
    before = [next(iter(s.scores.values())).model_dump(exclude={"history"}) for s in log.samples]
    rescored = inspect_score(log, workspace_tasks(persona=PERSONA).scorer, display="none", copy=False)
    assert [next(iter(s.scores.values())).model_dump(exclude={"history"}) for s in rescored.samples] == before

    for messages, tools in seen:
        task = task_of(messages)
        view = TaskView.of(task)
        assert messages[0].role == "system" and messages[0].text == system_prompt(view)
        assert messages[1].text == first_message(view) and [m.role for m in messages[2:]] == [
            "assistant",
            "tool",
        ] * ((len(messages) - 2) // 2)
        assert [(t.name, t.description) for t in tools] == [(t["name"], t["description"]) for t in view.tools]
        shown = json.dumps([m.model_dump() for m in messages[:2]] + [t.model_dump() for t in tools])
        for secret in ("required_widgets", "reference_answer", "hidden", task.eval.reference_answer):
            assert not secret or secret not in shown


def test_doing_nothing_fails_every_task(tmp_path):
    log = run(
        lambda *_: usage(ModelOutput.from_content("mockllm/model", "Nothing needed.")), log_dir=str(tmp_path)
    )
    scores = [next(iter(s.scores.values())) for s in log.samples]
    assert len(scores) == 20 and all(s.value == "I" and s.metadata["failure_codes"] for s in scores)
    assert log.results.scores[0].metrics["accuracy"].value == 0.0


def test_a_plain_reply_is_nudged_as_the_prompt_says_not_the_end(tmp_path):
    """The system prompt says a reply without a tool call does not end the episode; the loop does the same:
    the reply is a turn answered with the nudge, and the model may go on and finish."""
    from certify.episode import NUDGE

    def hesitant(messages, tools, tool_choice, config):
        turn = sum(isinstance(m, ChatMessageAssistant) for m in messages)
        if turn == 0:
            return usage(ModelOutput.from_content("mockllm/model", "Let me think first."))
        move = next_reference_move(task_of(messages), turn - 1)
        return usage(ModelOutput.for_tool_call("mockllm/model", move[0], move[1]))

    log = run(hesitant, log_dir=str(tmp_path), limit=1)
    (sample,) = log.samples
    (score,) = sample.scores.values()
    assert score.value == "C", score.explanation
    assert sample.messages[3].role == "user" and sample.messages[3].text == NUDGE
    assert score.metadata["ended_by"] == "final_answer"

    silent = run(
        lambda *_: usage(ModelOutput.from_content("mockllm/model", "Hmm.")), log_dir=str(tmp_path), limit=1
    )
    (sample,) = silent.samples
    (score,) = sample.scores.values()
    assert (
        score.value == "I" and score.metadata["turns"] == 3 and score.metadata["ended_by"] == "agent_stopped"
    )
    assert sample.output.message.text == "Hmm." and score.answer is None


def test_calls_inspect_refuses_count_as_invalid_and_the_turn_budget_holds(tmp_path):
    def misbehave(messages, tools, tool_choice, config):
        turn = sum(isinstance(m, ChatMessageAssistant) for m in messages)
        if turn == 0:
            return usage(ModelOutput.for_tool_call("mockllm/model", "update_widget", {"widget_uuid": 3}))
        if turn == 1:
            return usage(ModelOutput.for_tool_call("mockllm/model", "no_such_tool", {}))
        return usage(ModelOutput.for_tool_call("mockllm/model", "get_workspace_snapshot", {}))

    log = run(misbehave, log_dir=str(tmp_path), limit=1)
    (sample,) = log.samples
    (score,) = sample.scores.values()
    task = TASKS[sample.input]
    budget = task.eval.turn_budget
    assert score.value == "I" and score.metadata["invalid_calls"] == 2
    assert score.metadata["ended_by"] == "max_turns" and score.metadata["turns"] == budget
    assert sample.limit is None, "the episode's own budget ends it, before inspect's message limit"
    assert len(sample.messages) == message_limit(budget)


def test_any_taskset_with_its_world(tmp_path, mini_world_path):
    folder = tmp_path / "mini_tasks"
    folder.mkdir()
    (folder / "taskset.json").write_text(json.dumps({"taskset_id": "mini"}))
    task = raw()
    (folder / f"{task['id']}.json").write_text(json.dumps(task))
    steps = [(s["tool"], s["args"]) for s in task["eval"]["required_tools"]]

    def solve(messages, tools, tool_choice, config):
        turn = sum(isinstance(m, ChatMessageAssistant) for m in messages)
        if turn < len(steps):
            return usage(ModelOutput.for_tool_call("mockllm/model", *steps[turn]))
        return usage(ModelOutput.from_content("mockllm/model", "Gamma QTD set; the note records 5.24%."))

    (log,) = inspect_eval(
        taskforge_taskset(path=str(folder), world=str(mini_world_path)),
        model=get_model("mockllm/model", custom_outputs=solve),
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    (sample,) = log.samples
    assert next(iter(sample.scores.values())).value == "C"


def test_schemas_are_ours_with_refs_inlined():
    for tool in TaskView.of(next(iter(TASKS.values()))).tools:
        params = tool_params(tool["parameters"]).model_dump(exclude_none=True)
        ours = inline_refs(tool["parameters"])
        assert set(params["properties"]) == set(ours["properties"]) and params["required"] == ours.get(
            "required", []
        )
        assert "$ref" not in json.dumps(params) and "$defs" not in json.dumps(params)
        for name, prop in ours["properties"].items():
            assert params["properties"][name]["description"] == prop.get(
                "description", name.replace("_", " ")
            )


# --- the command line, against a local OpenAI-compatible endpoint -------------------------------------------


class _ReferenceEndpoint(BaseHTTPRequestHandler):
    """/v1/chat/completions answering like a model that knows each task's reference (found by its prompt)."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/v1/chat/completions":
            self.send_error(404, f"this stub serves /v1/chat/completions only, not {self.path}")
            return
        messages = body["messages"]
        task = TASKS[next(m["content"] for m in messages if m["role"] == "user")]
        move = next_reference_move(task, sum(m["role"] == "assistant" for m in messages))
        if isinstance(move, str):
            message = {"role": "assistant", "content": move}
        else:
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{len(messages)}",
                        "type": "function",
                        "function": {"name": move[0], "arguments": json.dumps(move[1])},
                    }
                ],
            }
        payload = json.dumps(
            {
                "id": "stub",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
            }
        )
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload.encode())

    def log_message(self, *args: Any) -> None:
        pass


def test_inspect_eval_on_the_command_line(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ReferenceEndpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env = {
            **os.environ,
            "OPENAI_BASE_URL": f"http://127.0.0.1:{server.server_port}/v1",
            "OPENAI_API_KEY": "stub",
            "PYTHONPATH": str(ROOT),
        }
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "inspect_ai",
                "eval",
                str(ROOT / "certify" / "inspect_task.py@workspace_tasks"),
                "--model",
                "openai/stub-model",
                "-M",
                "responses_api=false",
                "--limit",
                "5",
                "--max-retries",
                "0",
                "--log-dir",
                str(tmp_path),
                "--display",
                "none",
                "--log-format",
                "json",
            ],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stdout + done.stderr
    (log_file,) = tmp_path.glob("*.json")
    log = read_eval_log(str(log_file))
    assert log.status == "success" and len(log.samples) == 5
    assert all(next(iter(s.scores.values())).value == "C" for s in log.samples)
