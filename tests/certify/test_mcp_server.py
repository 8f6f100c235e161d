"""`taskforge serve`: the simulator over MCP, exercised with the SDK's own client over stdio and HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install -e '.[mcp]')")

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from typer.testing import CliRunner

from authoring.cli import app
from certify.agents.base import TaskView
from certify.episode import reference_calls
from certify.evaluate import load_record, load_run, select_tasks
from certify.mcp_server import EpisodeHost, serve_http
from certify.rules import rules_text
from certify.task import TaskSet
from tests.certify.helpers import task as make_task

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "tasksets" / "workspace_tasks"


def shipped():
    return TaskSet.load(SHIPPED).world(), select_tasks(SHIPPED)


@asynccontextmanager
async def running(host: EpisodeHost):
    """serve_http on a free port, stopped (gracefully) on exit."""
    stop, urls = asyncio.Event(), []
    server = asyncio.create_task(serve_http(host, port=0, announce=urls.append, stop=stop))
    while not urls:
        if server.done():
            server.result()
        await asyncio.sleep(0.01)
    try:
        yield urls[0]
    finally:
        stop.set()
        await asyncio.wait_for(server, 20)


def over(http: httpx2.AsyncClient, url: str, **options) -> Client:
    """An SDK client on a shared HTTP client: one per session would rebuild its SSL context every time (40 ms,
    half this file's run time), which is the client's cost, not the server's."""
    return Client(streamable_http_client(url, http_client=http), **options)


async def replay(client: Client, task) -> dict:
    for tool, args in reference_calls(task):
        await client.call_tool(tool, args)
    result = await client.call_tool("final_answer", {"text": task.eval.reference_answer or "Done."})
    return result.structured_content


# --- the host, without a transport ---------------------------------------------------------------------------


def test_the_turn_budget_ends_the_episode_and_it_is_graded_once(mini_world, tmp_path):
    task = make_task(**{"eval.max_turns": 2})
    host = EpisodeHost(mini_world, [task], runs_dir=tmp_path)
    host.start()
    live = host.open(task.id, "mcp:test")
    assert host.act(live, "get_workspace_snapshot", {})["ok"]
    assert live.trial is None
    assert host.act(live, "get_workspace_snapshot", {})["ok"]
    assert live.trial is not None and live.trial.ended_by == "max_turns" and live.trial.passed is False
    late = host.act(live, "get_workspace_snapshot", {})
    assert late["error"]["code"] == "episode_completed"
    assert host.finish(live, "session_closed") is live.trial
    run = host.close()
    assert [t.task_id for t in load_run(run.run_dir)] == [task.id]
    assert load_record(run.run_dir).status == "complete" and run.report["trials"] == 1


def test_invalid_calls_are_envelopes_and_counted(mini_world, tmp_path):
    task = make_task()
    host = EpisodeHost(mini_world, [task], runs_dir=tmp_path)
    host.start()
    live = host.open(task.id, "mcp:test")
    unknown = host.act(live, "no_such_tool", {})
    not_allowed = host.act(live, "manage_dashboard", {"operation": "read"})
    bad_args = host.act(live, "update_widget", {"widget_uuid": 3})
    assert [e["ok"] for e in (unknown, not_allowed, bad_args)] == [False, False, False]
    trial = host.finish(live, "session_closed")
    assert trial.invalid_calls == 3 and "too_many_invalid_calls" in trial.failure_codes
    host.close()


# --- stdio: the CLI launched by the client -------------------------------------------------------------------


def stdio_params(tmp_path: Path, task_id: str, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "authoring",
            "serve",
            "--taskset",
            str(SHIPPED),
            "--task",
            task_id,
            "--runs-dir",
            str(tmp_path / "runs"),
            *extra,
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=str(tmp_path),
    )


def only_run(tmp_path: Path) -> Path:
    (run_dir,) = (tmp_path / "runs").iterdir()
    return run_dir


def test_stdio_shows_the_harness_view_and_the_reference_passes_with_reveal(tmp_path):
    _, tasks = shipped()
    task = next(t for t in tasks if t.difficulty == "level3")

    async def go():
        async with Client(stdio_params(tmp_path, task.id, "--reveal")) as client:
            assert client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
            tools = (await client.list_tools()).tools
            prompts = (await client.list_prompts()).prompts
            prompt = await client.get_prompt("task")
            instructions = client.instructions
            result = await replay(client, task)
        return tools, prompts, prompt, instructions, result

    tools, prompts, prompt, instructions, result = asyncio.run(go())
    view = TaskView.of(task)
    assert [
        {"name": t.name, "description": t.description, "parameters": t.input_schema} for t in tools
    ] == view.tools
    assert [p.name for p in prompts] == ["task"]
    rules = rules_text(view.rules)
    assert [m.content.text for m in prompt.messages] == [f"{task.prompt}\n\n{rules}"]
    assert instructions.endswith(rules) and "turns" in rules and "other dashboard" in rules
    shown = json.dumps([t.model_dump() for t in tools]) + prompt.model_dump_json()
    assert task.eval.reference_answer is None or task.eval.reference_answer not in shown
    assert "required_widgets" not in shown and "max_turns" not in shown
    assert result["ok"] and result["data"] == {
        "verdict": "pass",
        "passed": True,
        "share": 1.0,
        "failure_codes": [],
    }
    (trial,) = load_run(only_run(tmp_path))
    assert trial.task_id == task.id and trial.passed and trial.ended_by == "final_answer"
    assert trial.agent == "mcp:mcp" and trial.tool_calls == len(reference_calls(task))
    record = load_record(only_run(tmp_path))
    assert (
        record.status == "complete"
        and record.options["transport"] == "stdio"
        and record.completed_trials == 1
    )


def test_stdio_without_reveal_keeps_the_verdict_and_a_bare_answer_fails(tmp_path):
    _, tasks = shipped()
    task = tasks[0]

    async def go():
        async with Client(stdio_params(tmp_path, task.id)) as client:
            return (await client.call_tool("final_answer", {"text": "All done."})).structured_content

    result = asyncio.run(go())
    assert result["ok"] and result["data"] is None and "pass" not in json.dumps(result)
    (trial,) = load_run(only_run(tmp_path))
    assert trial.passed is False and trial.failure_codes


# --- HTTP ----------------------------------------------------------------------------------------------------


def test_over_http_the_reference_passes_every_shipped_task_and_doing_nothing_fails(tmp_path):
    world, tasks = shipped()
    idle = list({t.difficulty: t for t in tasks}.values())
    host = EpisodeHost(world, tasks, runs_dir=tmp_path, reveal=True, transport="http")

    async def go():
        async with running(host) as base, httpx2.AsyncClient() as http:
            gate = asyncio.Semaphore(4)

            async def reference(task) -> dict:
                async with gate, over(http, f"{base}/tasks/{task.id}/mcp", mode="legacy") as client:
                    return await replay(client, task)

            async def nothing(task) -> None:
                async with gate, over(http, f"{base}/tasks/{task.id}/mcp", mode="legacy") as client:
                    await client.get_prompt("task")

            verdicts = await asyncio.gather(*(reference(t) for t in tasks))
            await asyncio.gather(*(nothing(t) for t in idle))
            return verdicts

    verdicts = asyncio.run(go())
    assert all(v["data"]["passed"] for v in verdicts)
    trials = load_run(host.run_dir)
    assert len(trials) == len(tasks) + len(idle) and len(tasks) >= 120 and len(idle) == 5
    by_end: dict[str, set[str]] = {}
    for t in trials:
        by_end.setdefault(t.ended_by or "", set()).add(f"{t.task_id}:{t.passed}")
    assert by_end["final_answer"] == {f"{t.id}:True" for t in tasks}
    assert by_end["session_closed"] == {f"{t.id}:False" for t in idle}
    report = json.loads((host.run_dir / "report.json").read_text())
    assert report["trials"] == len(trials) and report["invalid"] == 0


def test_concurrent_http_sessions_are_isolated_episodes(tmp_path, mini_world):
    task = make_task(**{"setup.allowed_tools": None})
    host = EpisodeHost(mini_world, [task], runs_dir=tmp_path, transport="http")

    async def snapshot_names(client: Client) -> set[str]:
        data = (await client.call_tool("get_workspace_snapshot", {})).structured_content["data"]
        return {d["name"] for d in data["dashboards"]}

    async def go():
        async with running(host) as base:
            url = f"{base}/tasks/{task.id}/mcp"
            async with Client(url) as first, Client(url, mode="legacy") as second:
                assert (
                    first.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
                )  # auto mode fell back to sessions
                made = await first.call_tool("manage_dashboard", {"operation": "create", "name": "Only Mine"})
                assert made.structured_content["ok"], made.structured_content
                seen = await asyncio.gather(snapshot_names(first), snapshot_names(second))
                await second.call_tool("final_answer", {"text": "done"})
                still = await first.call_tool("get_workspace_snapshot", {})
            return seen, still.structured_content

    (mine, theirs), still = asyncio.run(go())
    assert "Only Mine" in mine and "Only Mine" not in theirs
    assert still["ok"], "the other session's final answer does not end this one"
    trials = {t.turns: t for t in load_run(host.run_dir)}
    assert (
        set(trials) == {2, 3}
        and trials[2].ended_by == "final_answer"
        and trials[3].ended_by == "session_closed"
    )


def test_http_index_unknown_tasks_and_sessions_open_at_shutdown(tmp_path, mini_world):
    task = make_task()
    host = EpisodeHost(mini_world, [task], runs_dir=tmp_path, transport="http")

    async def go():
        async with running(host) as base:
            async with httpx2.AsyncClient() as http:
                index = (await http.get(f"{base}/tasks")).json()
                missing = await http.post(f"{base}/tasks/nope/mcp", json={})
            client = Client(f"{base}/tasks/{task.id}/mcp", mode="legacy")
            await client.__aenter__()
            await client.call_tool("get_workspace_snapshot", {})
        return index, missing

    index, missing = asyncio.run(go())
    assert index == [{"id": task.id, "level": "level0", "url": index[0]["url"]}]
    assert index[0]["url"].endswith(f"/tasks/{task.id}/mcp")
    assert missing.status_code == 404 and "unknown task 'nope'" in missing.text
    (trial,) = load_run(host.run_dir)
    assert trial.ended_by == "session_closed" and trial.turns == 1


def test_clients_of_the_sessionless_protocol_are_told_to_use_the_handshake(tmp_path, mini_world):
    task = make_task()
    host = EpisodeHost(mini_world, [task], runs_dir=tmp_path, transport="http")

    async def go():
        async with running(host) as base:
            try:
                async with Client(f"{base}/tasks/{task.id}/mcp", mode=MODERN_PROTOCOL_VERSIONS[-1]) as client:
                    await client.call_tool("get_workspace_snapshot", {})
            except BaseException as exc:  # the client reports it from its task group
                while isinstance(exc, BaseExceptionGroup):
                    exc = exc.exceptions[0]
                return str(exc)
        return None

    refusal = asyncio.run(go())
    assert refusal is not None and "connect with the initialize handshake" in refusal
    assert load_run(host.run_dir) == [], "no episode without a session"


def test_cli_usage_errors():
    runner = CliRunner()
    no_task = runner.invoke(app, ["serve", "--taskset", str(SHIPPED)])
    assert no_task.exit_code == 2 and "--task is required" in no_task.output
    unknown = runner.invoke(app, ["serve", "--taskset", str(SHIPPED), "--task", "nope"])
    assert unknown.exit_code == 2 and "no such task" in unknown.output
    missing = runner.invoke(app, ["serve", "--taskset", "/nonexistent", "--task", "x"])
    assert missing.exit_code == 2 and "no such folder" in missing.output


def test_a_served_taskset_needs_unique_ids(mini_world, tmp_path):
    host = EpisodeHost(mini_world, [make_task(), make_task(id="other_level0")], runs_dir=tmp_path)
    assert set(host.tasks) == {"desk_fix_level0", "other_level0"}
    with pytest.raises(ValueError, match="share the id"):
        EpisodeHost(mini_world, [make_task(), make_task()], runs_dir=tmp_path)
