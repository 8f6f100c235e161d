"""`taskforge openenv`: the simulator as an OpenEnv environment, driven by openenv-core's own clients over its
own server (WebSocket sessions). The reference of one task per level and a no-op are checked here; the sweep over
all 120 shipped tasks is `python scripts/sweep_engines.py openenv` (measured once, figures in the README)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import yaml

pytest.importorskip("openenv.core", reason="openenv-core is not installed (pip install -e '.[openenv]')")

from openenv.cli._validation import validate_running_environment
from openenv.core.env_server.mcp_types import CallToolAction, ListToolsAction
from openenv.core.generic_client import GenericEnvClient
from openenv.core.mcp_client import MCPToolClient
from typer.testing import CliRunner

from authoring.cli import app as cli
from certify import openenv_env
from certify.episode import reference_calls, replay
from certify.evaluate import load_record, load_run, select_tasks
from certify.grader import grade
from certify.mcp_server import EpisodeHost
from certify.openenv_env import WorkspaceEnv, create_workspace_app, serve_app
from certify.rewards import RewardMode
from certify.task import TaskSet

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "tasksets" / "workspace_tasks"


@pytest.fixture(scope="module")
def shipped():
    return TaskSet.load(SHIPPED).world(), select_tasks(SHIPPED)


def one_per_level(tasks):
    return list({t.difficulty: t for t in tasks}.values())


@asynccontextmanager
async def running(host: EpisodeHost, reward: RewardMode = RewardMode.shaped, max_sessions: int = 8):
    """The OpenEnv app over `host` on a free port, stopped gracefully on exit."""
    stop, urls = asyncio.Event(), []
    server = asyncio.create_task(
        serve_app(
            create_workspace_app(host, reward=reward, max_sessions=max_sessions),
            port=0,
            announce=urls.append,
            stop=stop,
        )
    )
    while not urls:
        if server.done():
            server.result()
        await asyncio.sleep(0.01)
    try:
        yield urls[0]
    finally:
        stop.set()
        await asyncio.wait_for(server, 30)


def answer(task) -> str:
    return task.eval.reference_answer or "Done."


async def play(env, task, steps, *, reward: str | None = None):
    """Reset to `task`, make `steps` then the final answer through `env.step`; the last StepResult."""
    options = {"reward": reward} if reward else {}
    await env.reset(task_id=task.id, **options)
    for tool, args in steps:
        result = await env.step(CallToolAction(tool_name=tool, arguments=args))
        assert result.reward in (0.0, None) and not result.done
    return await env.step(CallToolAction(tool_name="final_answer", arguments={"text": answer(task)}))


def test_the_reference_earns_at_least_0_9_and_a_no_op_0_through_openenvs_tool_client(shipped, tmp_path):
    world, tasks = shipped
    chosen = one_per_level(tasks)
    host = EpisodeHost(world, tasks, runs_dir=tmp_path, transport="openenv", run_agent="openenv")

    async def go():
        out = []
        async with running(host) as base, MCPToolClient(base_url=base) as env:
            for task in chosen:
                reference = await play(env, task, reference_calls(task))
                nothing = await play(env, task, [])
                strict = await play(env, task, reference_calls(task), reward="strict")
                out.append((task, reference, nothing, strict))
        return out

    for task, reference, nothing, strict in asyncio.run(go()):
        assert reference.done and reference.reward >= 0.9, task.id
        assert nothing.done and nothing.reward == 0.0, task.id
        assert strict.reward == 1.0, task.id
    trials = load_run(host.run_dir)
    assert len(trials) == 3 * len(chosen) and {t.agent for t in trials} == {"openenv"}
    assert [t.passed for t in trials] == [True, False, True] * len(chosen)


def half_done(world, task):
    """A prefix of the reference that does some of the task's outstanding checks but not all, and the reward
    the card gives it, computed here from the grader: 0.5 × the share of the checks an untouched workspace
    fails that now pass."""
    untouched = {f"{c.code}:{c.label}" for c in grade(task, replay(world, task, [])).failures}
    steps = reference_calls(task)
    for cut in range(len(steps) - 1, 0, -1):
        result = grade(task, replay(world, task, steps[:cut], final_answer=answer(task)))
        todo = [c for c in result.checks if f"{c.code}:{c.label}" in untouched]
        done = sum(c.passed for c in todo)
        if not result.passed and 0 < done < len(todo):
            return steps[:cut], 0.5 * done / len(todo)
    return None


def test_a_half_done_episode_gets_the_partial_value_through_the_generic_client(shipped, tmp_path):
    world, tasks = shipped
    task, (steps, expected) = next(
        (t, found) for t in tasks if t.difficulty == "level4" for found in [half_done(world, t)] if found
    )
    host = EpisodeHost(world, tasks, runs_dir=tmp_path, transport="openenv")

    async def go():
        async with running(host, reward=RewardMode.shaped) as base, GenericEnvClient(base_url=base) as env:
            first = await env.reset(task_id=task.id)
            for tool, args in steps:
                await env.step({"type": "call_tool", "tool_name": tool, "arguments": args})
            last = await env.step(
                {"type": "call_tool", "tool_name": "final_answer", "arguments": {"text": answer(task)}}
            )
            return first, last, await env.state()

    first, last, state = asyncio.run(go())
    assert (
        first.observation["prompt"] == task.prompt
        and first.observation["turns_left"] == task.eval.turn_budget
    )
    assert "You have at most" in first.observation["rules"][0]
    assert "eval" not in str(first.observation) and "required_widgets" not in str(first.observation)
    assert last.done and last.reward == pytest.approx(expected, abs=1e-6) and 0 < last.reward < 0.5
    assert last.observation["grade"]["strict"] == 0.0 and last.observation["grade"]["shaped"] == last.reward
    assert state["task_id"] == task.id and state["done"] and state["ended_by"] == "final_answer"
    assert [c["tool"] for c in state["calls"]] == [tool for tool, _ in steps] + ["final_answer"]


def test_concurrent_sessions_are_isolated_and_listing_tools_takes_no_turn(shipped, tmp_path):
    world, tasks = shipped
    task = next(t for t in tasks if t.difficulty == "level0")
    note = {"widget_type": "note", "name": "Only Mine", "data": "private"}
    host = EpisodeHost(world, tasks, runs_dir=tmp_path, transport="openenv")

    async def go():
        async with running(host) as base, WorkspaceEnv(base_url=base) as a, WorkspaceEnv(base_url=base) as b:
            await asyncio.gather(a.reset(task_id=task.id), b.reset(task_id=task.id))
            listed = await a.step(ListToolsAction())
            made = await a.call("add_generative_widget", **note)
            seen_a, seen_b = await asyncio.gather(
                a.call("get_workspace_snapshot"), b.call("get_workspace_snapshot")
            )
            return listed, made, seen_a, seen_b, await a.state(), await b.state()

    listed, made, seen_a, seen_b, state_a, state_b = asyncio.run(go())
    assert [t.name for t in listed.observation.tools][-1] == "final_answer" and not listed.done
    assert made.observation.result["ok"] and made.observation.turns == 1
    assert "Only Mine" in str(seen_a.observation.result) and "Only Mine" not in str(seen_b.observation.result)
    assert (state_a.turns, state_b.turns) == (2, 1)
    assert [c["tool"] for c in state_b.calls] == ["get_workspace_snapshot"]


def test_episodes_become_trials_and_an_episode_without_a_step_does_not(shipped, tmp_path):
    world, tasks = shipped
    task = tasks[0]
    host = EpisodeHost(world, tasks, runs_dir=tmp_path, transport="openenv", run_agent="openenv")

    async def go():
        async with running(host) as base:
            async with WorkspaceEnv(base_url=base) as env:
                await env.reset(task_id=task.id)  # no step: not an episode worth a trial
                await env.reset(seed=0)
                await env.call("get_workspace_snapshot")
                await env.reset(task_id=task.id)  # abandons the seeded episode, graded as reset
                await env.call("get_workspace_snapshot")
            # the session closing grades the last one
            with pytest.raises(RuntimeError, match="call reset"):
                async with WorkspaceEnv(base_url=base) as fresh:
                    await fresh.call("get_workspace_snapshot")
            with pytest.raises(RuntimeError, match="unknown task 'nope'"):
                async with WorkspaceEnv(base_url=base) as fresh:
                    await fresh.reset(task_id="nope")
            return await asyncio.to_thread(validate_running_environment, base)

    report = asyncio.run(go())
    assert report["passed"], [c for c in report["criteria"] if not c["passed"]]
    trials = load_run(host.run_dir)
    assert [(t.task_id, t.ended_by, t.turns) for t in trials] == [
        (tasks[0].id, "reset", 1),
        (task.id, "session_closed", 1),
    ]
    record = load_record(host.run_dir)
    assert (
        record.status == "complete" and record.agent == "openenv" and record.options["transport"] == "openenv"
    )


def test_openenv_yaml_names_an_app_that_serves_the_environment(tmp_path, monkeypatch):
    manifest = yaml.safe_load((ROOT / "openenv.yaml").read_text(encoding="utf-8"))
    module, _, attribute = manifest["app"].partition(":")
    assert manifest["runtime"] == "fastapi" and module == "certify.openenv_env" and attribute == "app"
    from starlette.testclient import TestClient

    monkeypatch.setenv("TASKFORGE_TASKSET", str(SHIPPED))
    monkeypatch.setenv("TASKFORGE_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("TASKFORGE_REWARD", "shaped")
    openenv_env._app.cache_clear()
    try:
        with TestClient(getattr(openenv_env, attribute)) as client:
            health = client.get("/health").json()
            metadata = client.get("/metadata").json()
            with client.websocket_connect("/ws") as ws:
                ws.send_json({"type": "reset", "data": {"seed": 3}})
                reset = ws.receive_json()
    finally:
        openenv_env._app.cache_clear()
    assert health["status"] == "healthy" and metadata["name"] == openenv_env.ENV_NAME
    assert reset["type"] == "observation" and reset["data"]["observation"]["reward_mode"] == "shaped"
    assert (tmp_path / "runs").is_dir()


def test_the_cli_serves_an_episode_and_refuses_bad_input(shipped, tmp_path):
    _, tasks = shipped
    task = one_per_level(tasks)[2]
    runner = CliRunner()
    bad = runner.invoke(cli, ["openenv", "--taskset", str(SHIPPED), "--reward", "dense"])
    assert bad.exit_code == 2 and "--reward dense: strict or shaped" in " ".join(bad.output.split())
    missing = runner.invoke(cli, ["openenv", "--taskset", str(tmp_path)])
    assert missing.exit_code == 2 and "no taskset.json" in " ".join(missing.output.split())
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "authoring",
            "openenv",
            "--taskset",
            str(SHIPPED),
            "--task",
            task.id,
            "--port",
            "0",
            "--reward",
            "shaped",
            "--runs-dir",
            str(tmp_path / "runs"),
        ],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "300"},
    )
    try:
        base = None
        for line in server.stderr:
            found = re.search(r"at (http://\S+) \(", line)
            if found:
                base = found.group(1)
                break
        assert base, "the server announced no address"

        async def go():
            async with WorkspaceEnv(base_url=base) as env:
                return await play(env, task, reference_calls(task))

        result = asyncio.run(go())
    finally:
        server.send_signal(signal.SIGINT)
        rest = server.communicate(timeout=60)[1]
    assert result.done and result.reward >= 0.9
    assert server.returncode == 0 and "run folder:" in rest
    ((run_dir,),) = [list((tmp_path / "runs").iterdir())]
    (trial,) = load_run(run_dir)
    assert trial.task_id == task.id and trial.passed and load_record(run_dir).options["reward"] == "shaped"
