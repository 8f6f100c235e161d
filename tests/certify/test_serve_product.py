"""`taskforge serve --surface product`: the episode in the product's shape (its 18 tools, knowledge as MCP resources
and prompts, read like the knowledge tools in the trace); `--workspace`: a bare workspace, no task; both state
what an agent must know, as our own harness does."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install -e '.[mcp]')")

from mcp import Client
from mcp.shared.exceptions import MCPError

from certify.agents.base import TaskView
from certify.episode import reference_calls
from certify.evaluate import load_run, select_tasks
from certify.mcp_server import EpisodeHost
from certify.rules import rules_text
from certify.surface import load_surface
from certify.workspace_server import WorkspaceHost, bare_setup
from simulator import DEFAULT_WORLD, World
from tests.certify.helpers import task as make_task
from tests.certify.mcp_servers import inproc, running

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "tasksets" / "workspace_tasks"
PRODUCT_TOOLS = [t.name for t in load_surface("product").tools]


def shipped(*ids: str):
    tasks = {t.id: t for t in select_tasks(SHIPPED)}
    return [tasks[i] for i in ids]


async def replay_in_product_shape(client: Client, task) -> dict:
    """The reference as an MCP-native agent does it: knowledge through resources and prompts, the rest as tools."""
    for tool, args in reference_calls(task):
        if tool == "read_workspace_resource":
            await client.read_resource(args["uri"])
        elif tool == "get_workspace_prompt":
            await client.get_prompt(args["name"])
        else:
            await client.call_tool(tool, args)
    done = await client.call_tool("final_answer", {"text": task.eval.reference_answer or "Done."})
    return done.structured_content


def test_the_product_shape_lists_the_products_tools_and_the_worlds_knowledge(tmp_path):
    world = World.load(DEFAULT_WORLD)
    (task,) = shipped("orrin_money_movements_level3")
    host = EpisodeHost(world, [task], runs_dir=tmp_path, transport="http", surface="product")

    async def go():
        async with running(host) as base, Client(f"{base}/tasks/{task.id}/mcp", mode="legacy") as client:
            tools = (await client.list_tools()).tools
            resources = (await client.list_resources()).resources
            prompts = (await client.list_prompts()).prompts
            prompt = await client.get_prompt("task")
            return tools, resources, prompts, prompt, client.instructions

    tools, resources, prompts, prompt, instructions = asyncio.run(go())
    assert [t.name for t in tools] == [*PRODUCT_TOOLS, "final_answer"]
    assert {str(r.uri) for r in resources} == set(world.resources)
    assert all(
        str(r.uri).startswith("openbb://workspace/") and r.mime_type == "text/markdown" for r in resources
    )
    index = next(r for r in resources if str(r.uri) == "openbb://workspace/app-builder/index")
    assert index.name == world.resources[str(index.uri)].title
    assert [p.name for p in prompts] == ["workspace_session_context", "workspace_tool_usage", "task"]
    rules = rules_text(TaskView.of(task).rules)
    assert prompt.messages[0].content.text == f"{task.prompt}\n\n{rules}"
    assert instructions is not None and instructions.endswith(rules)
    assert f"at most {task.eval.max_turns} turns" in rules


@pytest.mark.parametrize("task_id", ["orrin_money_movements_level3", "quarry_trustee_pack_level3"])
def test_a_ground_task_passes_when_its_source_is_read_as_an_mcp_resource_or_prompt(tmp_path, task_id):
    world = World.load(DEFAULT_WORLD)
    (task,) = shipped(task_id)
    host = EpisodeHost(world, [task], runs_dir=tmp_path, reveal=True, surface="product")

    async def go():
        async with inproc(host, task.id) as client:
            return await replay_in_product_shape(client, task)

    verdict = asyncio.run(go())
    assert verdict["data"]["passed"], verdict
    (trial,) = load_run(host.run_dir)
    reads = [e for e in trial.events if e["tool"] in ("read_workspace_resource", "get_workspace_prompt")]
    wanted = [
        (t, a) for t, a in reference_calls(task) if t in ("read_workspace_resource", "get_workspace_prompt")
    ]
    assert [(e["tool"], e["args"]) for e in reads] == wanted and all(e["ok"] for e in reads)
    assert trial.turns == len(reference_calls(task)) + 1  # each read is a turn, like the knowledge tool


def test_in_the_product_shape_the_knowledge_tools_are_unknown_and_bad_reads_count(tmp_path, mini_world):
    task = make_task(**{"setup.allowed_tools": None, "eval.max_turns": 4})
    host = EpisodeHost(mini_world, [task], runs_dir=tmp_path, surface="product")

    async def go():
        async with inproc(host, task.id) as client:
            tool = await client.call_tool(
                "read_workspace_resource", {"uri": "openbb://workspace/app-builder/index"}
            )
            try:
                await client.read_resource("openbb://workspace/no-such-page")
            except MCPError as exc:
                missing = str(exc)
            first = await client.read_resource(sorted(mini_world.resources)[0])
            try:  # the fourth turn ends the episode; a fifth is refused
                await client.get_prompt(sorted(mini_world.prompts)[0])
                await client.read_resource(sorted(mini_world.resources)[0])
            except MCPError as exc:
                late = str(exc)
            return tool.structured_content, missing, first, late

    tool, missing, first, late = asyncio.run(go())
    assert (
        tool["error"]["code"] == "unknown_tool"
        and tool["message"] == "Unknown tool 'read_workspace_resource'."
    )
    assert "Unknown workspace resource URI 'openbb://workspace/no-such-page'" in missing
    assert first.contents[0].text
    assert "episode is complete" in late
    (trial,) = load_run(host.run_dir)
    assert trial.invalid_calls == 2 and trial.turns == 4 and trial.ended_by == "max_turns"


def test_http_instructions_name_each_tasks_own_rules(tmp_path, mini_world):
    tight = make_task(id="tight_level0", **{"eval.max_turns": 3})
    loose = make_task(
        id="loose_level0", **{"eval.max_turns": 30, "eval.trace_checks.max_invalid_tool_calls": 0}
    )
    host = EpisodeHost(mini_world, [tight, loose], runs_dir=tmp_path, transport="http")

    async def go():
        async with running(host) as base:
            said = {}
            for t in (tight, loose):
                async with Client(f"{base}/tasks/{t.id}/mcp", mode="legacy") as client:
                    said[t.id] = client.instructions
            return said

    said = asyncio.run(go())
    assert "at most 3 turns" in said["tight_level0"] and "at most 30 turns" in said["loose_level0"]
    assert "Every call must succeed" in said["loose_level0"]
    assert "required_" not in "".join(said.values())  # the eval block is never shown


def test_a_bare_workspace_has_no_task_and_every_session_its_own(tmp_path):
    world = World.load(DEFAULT_WORLD)
    host = WorkspaceHost(world, bare_setup(world), surface="product")

    async def go():
        async with inproc(host) as one, inproc(host) as two:
            made = await one.call_tool("manage_dashboard", {"operation": "create", "name": "Only In One"})
            names = []
            for client in (one, two):
                snap = (await client.call_tool("get_workspace_snapshot", {})).structured_content
                names.append({d["name"] for d in snap["data"]["dashboards"]})
            prompts = [p.name for p in (await one.list_prompts()).prompts]
            answer = (await one.call_tool("final_answer", {"text": "x"})).structured_content
            tools = [t.name for t in (await one.list_tools()).tools]
            return made.structured_content, names, prompts, answer, tools, one.instructions

    made, (first, second), prompts, answer, tools, instructions = asyncio.run(go())
    assert made["ok"] and "Only In One" in first and "Only In One" not in second
    assert prompts == ["workspace_session_context", "workspace_tool_usage"]
    assert answer["error"]["code"] == "unknown_tool" and tools == PRODUCT_TOOLS
    assert "Nothing is graded here" in instructions
    assert not any(tmp_path.iterdir())
