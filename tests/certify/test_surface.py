"""Pinned surfaces and `taskforge surface diff`: the product's pin and the simulator's differ exactly as stated
here; our own serve shows no drift from its pin; served variants are reported and classified right."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install -e '.[mcp]')")

from mcp import Client
from typer.testing import CliRunner

from authoring.cli import app
from certify.evaluate import select_tasks
from certify.mcp_server import EpisodeHost
from certify.surface import (
    PinnedPrompt,
    Surface,
    compare_schemas,
    diff_surfaces,
    load_surface,
    normalise_schema,
    observe,
    simulator_surface,
    tool_kind,
)
from simulator import DEFAULT_WORLD, Workspace, World
from tests.certify.mcp_servers import in_thread, surface_server

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "tasksets" / "workspace_tasks"
TASK = "keel_europe_tilt_level0"  # allows every tool
PRODUCT_TOOLS = [
    "get_workspace_snapshot",
    "list_available_widgets",
    "get_widget_schema",
    "get_params_options",
    "get_widget_data",
    "read_widget",
    "create_widget",
    "update_widget",
    "update_widget_layout",
    "delete_widget",
    "manage_dashboard",
    "manage_navigation_bar",
    "navigate_workspace",
    "add_generative_widget",
    "manage_backends",
    "manage_apps",
    "assign_tasks_to_agents",
    "get_skill_content",
]
RESOURCES = [
    "app-builder/index",
    "overview/what-is-workspace",
    "overview/ai-agent-contract",
    "contract/backend",
    "specs/widgets-json",
    "specs/apps-json",
    "specs/widget-types",
    "specs/widget-parameters",
    "specs/layout-grid",
    "guides/build-an-app",
    "guides/review-app",
    "guides/debug-app",
    "guides/convert-endpoint-to-widget",
    "examples/generic-http/minimal",
    "examples/python-fastapi/minimal",
    "validation/common-errors",
]

# Every difference between the product's pin and the simulator's, as `diff_surfaces(product, simulator)` states
# it: (what, name, path, change, severity). Any other difference fails the test.
KNOWN = {
    # the knowledge the product serves as MCP resources and prompts, the simulator through two tools
    ("tool", "read_workspace_resource", None, "extra", "extra"),
    ("tool", "get_workspace_prompt", None, "extra", "extra"),
    *(("resource", f"openbb://workspace/{r}", None, "missing", "breaking") for r in RESOURCES),
    ("prompt", "workspace_tool_usage", None, "missing", "breaking"),
    ("prompt", "workspace_session_context", None, "missing", "breaking"),
    # the harness's own: the episode's end and its request
    ("tool", "final_answer", None, "extra", "extra"),
    ("prompt", "task", None, "extra", "extra"),
    # arguments the product takes and the simulator does not
    ("tool", "get_widget_data", "ssm_request", "argument_removed", "breaking"),
    ("tool", "create_widget", "dry_run", "argument_removed", "breaking"),
    ("tool", "update_widget", "dry_run", "argument_removed", "breaking"),
    ("tool", "manage_backends", "endpoint_headers", "argument_removed", "breaking"),
    ("tool", "manage_backends", "validate_widgets", "argument_removed", "breaking"),
    ("tool", "manage_backends", "is_openbb_platform", "argument_removed", "breaking"),
    ("tool", "manage_backends", "operation", "enum_narrowed", "breaking"),  # list add update refresh remove
    ("tool", "add_generative_widget", "data", "argument_became_required", "breaking"),
    (
        "tool",
        "add_generative_widget",
        "chart_params.angleKey",
        "argument_undeclared_but_accepted",
        "compatible",
    ),
    (
        "tool",
        "add_generative_widget",
        "chart_params.calloutLabelKey",
        "argument_undeclared_but_accepted",
        "compatible",
    ),
    ("tool", "add_generative_widget", "chart_params.yKey", "type_widened", "compatible"),  # a string too
    # arguments the simulator takes and the product does not
    ("tool", "manage_backends", "widgets_json", "new_optional_argument", "compatible"),
    ("tool", "manage_backends", "apps_json", "new_optional_argument", "compatible"),
    ("tool", "get_widget_data", "dashboard_id", "new_optional_argument", "compatible"),
    *(
        ("tool", t, "origin", "new_optional_argument", "compatible")
        for t in ("read_widget", "update_widget", "update_widget_layout", "delete_widget")
    ),
    # arguments the product requires and the simulator does not
    ("tool", "get_widget_data", "origin", "argument_no_longer_required", "compatible"),
    ("tool", "get_widget_data", "widget_id", "argument_no_longer_required", "compatible"),
    ("tool", "assign_tasks_to_agents", "task_requests", "argument_no_longer_required", "compatible"),
    *(
        (
            "tool",
            "assign_tasks_to_agents",
            f"task_requests[].{k}",
            "argument_no_longer_required",
            "compatible",
        )
        for k in ("id", "description", "assigned_holder_url", "assigned_agent_id")
    ),
}


def rows(diff) -> set[tuple]:
    return {(d.what, d.name, d.path, d.change, d.severity) for d in diff.differences}


def test_the_product_pin_holds_the_published_facts():
    product = load_surface("product")
    assert product.source == "hosted@3.4.2" and product.server.name == "OpenBB Workspace MCP"
    assert [t.name for t in product.tools] == PRODUCT_TOOLS
    assert [p.name for p in product.prompts] == ["workspace_tool_usage", "workspace_session_context"]
    assert [r.uri for r in product.resources] == [f"openbb://workspace/{r}" for r in RESOURCES]
    assert all(
        r.mime_type == "text/markdown" and r.name is None and r.hash is None for r in product.resources
    )
    kinds = {t.name: (t.kind, t.read_operations) for t in product.tools}
    assert kinds["manage_dashboard"] == ("write", ["read"]) and kinds["get_widget_data"] == ("read", [])
    assert kinds["manage_apps"] == ("write", ["list", "read"]) and kinds["navigate_workspace"] == (
        "write",
        [],
    )
    assert product.tool("manage_apps").input_schema["required"] == ["operation"]  # optional on hosted
    assert product.tool("create_widget").input_schema["properties"]["dry_run"] == {"type": "boolean"}


def test_the_simulator_pin_is_what_serve_lists():
    pinned, now = load_surface("simulator"), simulator_surface()
    assert (pinned.tools, pinned.prompts, pinned.resources) == (now.tools, now.prompts, now.resources), (
        "the simulator's tools changed: taskforge surface generate --out certify/surfaces/simulator.json"
    )
    assert len(pinned.tools) == 21 and {t.kind for t in pinned.tools} == {"read", "write", "harness"}


def test_the_pins_differ_exactly_as_stated():
    diff = diff_surfaces(load_surface("product"), load_surface("simulator"))
    assert rows(diff) - KNOWN == set(), "a new difference between the simulator and the product"
    assert KNOWN - rows(diff) == set(), "a difference listed here is gone: update KNOWN"
    # the knowledge difference made precise: what the product lists, the simulator's knowledge tools serve
    world = World.load(DEFAULT_WORLD)
    ws = Workspace.start(world)
    for r in load_surface("product").resources:
        assert ws.call("read_workspace_resource", {"uri": r.uri}).ok, r.uri
    prompt_names = (
        load_surface("simulator").tool("get_workspace_prompt").input_schema["properties"]["name"]["enum"]
    )
    assert sorted(prompt_names) == sorted(p.name for p in load_surface("product").prompts)


def test_schemas_are_compared_by_shape():
    pinned = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "description": "x"},
            "b": {"type": "string", "enum": ["x", "y"]},
            "c": {"type": "array", "items": {"$ref": "#/$defs/C"}},
            "gone": {"type": "number"},
        },
        "required": ["a"],
        "$defs": {"C": {"type": "object", "properties": {"k": {"type": "string"}}, "title": "C"}},
    }
    same = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "a": {"type": "string", "title": "A", "default": "q"},
            "b": {"anyOf": [{"type": "string", "enum": ["y", "x"]}, {"type": "null"}], "default": None},
            "c": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}},
            "gone": {"type": "number", "examples": [1]},
        },
        "required": ["a"],
    }
    assert compare_schemas(pinned, same) == []
    assert normalise_schema(same)["properties"]["b"] == {"type": "string", "enum": ["y", "x"]}
    changed = {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "string", "enum": ["x", "y", "z"]},
            "c": {
                "type": "array",
                "items": {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"]},
            },
            "new": {"type": "string"},
            "must": {"type": "string"},
        },
        "required": ["a", "must"],
    }
    got = {(p, c, s) for p, c, s, _, _ in compare_schemas(pinned, changed)}
    assert got == {
        ("a", "shape_changed", "breaking"),
        ("b", "enum_widened", "compatible"),
        ("c[].k", "argument_became_required", "breaking"),
        ("gone", "argument_removed", "breaking"),
        ("new", "new_optional_argument", "compatible"),
        ("must", "new_required_argument", "breaking"),
    }
    narrower = {**pinned, "properties": {**pinned["properties"], "b": {"type": "string", "enum": ["x"]}}}
    assert [(p, c) for p, c, *_ in compare_schemas(pinned, narrower)] == [("b", "enum_narrowed")]


def test_kinds_are_derived_in_one_place():
    assert tool_kind("get_widget_data") == ("read", ())
    assert tool_kind("manage_backends") == ("write", ("list",))
    assert tool_kind("final_answer") == ("harness", ())
    assert tool_kind("brand_new_tool") == ("unknown", ())


# --- served variants ------------------------------------------------------------------------------------------


def observed(surface: Surface) -> Surface:
    async def go():
        async with Client(surface_server(surface), mode="legacy") as client:
            return await observe(client)

    return asyncio.run(go())


def variant(change) -> Surface:
    base = load_surface("simulator").model_copy(deep=True)
    change(base)
    return base


def _remove(s: Surface) -> None:
    s.tools = [t for t in s.tools if t.name != "get_widget_schema"]


def _require(s: Surface) -> None:
    s.tool("list_available_widgets").input_schema["required"] = ["origin"]


def _optional(s: Surface) -> None:
    s.tool("create_widget").input_schema["properties"]["dry_run"] = {"type": "boolean"}


def _rename(s: Surface) -> None:
    s.prompts = [PinnedPrompt(name="the_task")]


@pytest.mark.parametrize(
    ("change", "expected", "drift"),
    [
        (_remove, {("tool", "get_widget_schema", None, "missing", "breaking")}, True),
        (
            _require,
            {("tool", "list_available_widgets", "origin", "argument_became_required", "breaking")},
            True,
        ),
        (_optional, {("tool", "create_widget", "dry_run", "new_optional_argument", "compatible")}, False),
        (
            _rename,
            {("prompt", "task", None, "missing", "breaking"), ("prompt", "the_task", None, "extra", "extra")},
            True,
        ),
    ],
    ids=["tool removed", "argument made required", "new optional argument", "prompt renamed"],
)
def test_served_variants_are_reported_and_classified(change, expected, drift):
    diff = diff_surfaces(load_surface("simulator"), observed(variant(change)))
    assert rows(diff) == expected and diff.drift is drift


# --- the command line, against our own serve ------------------------------------------------------------------


def serve_command(tmp_path: Path, *extra: str) -> str:
    return shlex.join(
        [
            sys.executable,
            "-m",
            "authoring",
            "serve",
            "--taskset",
            str(SHIPPED),
            "--task",
            TASK,
            "--runs-dir",
            str(tmp_path / "runs"),
            *extra,
        ]
    )


def test_our_serve_shows_no_drift_from_the_simulator_pin(tmp_path):
    result = CliRunner().invoke(
        app, ["surface", "diff", "--against", "simulator", "--command", serve_command(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    assert "21 tools, 1 prompts, 0 resources" in result.output
    assert "no drift: 0 breaking, 0 compatible, 0 extra" in result.output


def test_serve_in_the_product_shape_has_no_breaking_difference_from_the_product_pin(tmp_path):
    task = next(t for t in select_tasks(SHIPPED) if t.id == TASK)
    host = EpisodeHost(
        World.load(DEFAULT_WORLD), [task], runs_dir=tmp_path, transport="http", surface="product"
    )
    with in_thread(host) as base:
        result = CliRunner().invoke(app, ["surface", "diff", "--json", "--url", f"{base}/tasks/{TASK}/mcp"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["drift"] is False and report["breaking"] == 0
    extra = {(d["what"], d["name"]) for d in report["differences"] if d["severity"] == "extra"}
    assert ("tool", "final_answer") in extra and ("prompt", "task") in extra
    assert all(what == "resource" for what, name in extra - {("tool", "final_answer"), ("prompt", "task")})
    compatible = {(d["name"], d["path"]) for d in report["differences"] if d["severity"] == "compatible"}
    assert ("manage_backends", "widgets_json") in compatible and (
        "manage_backends",
        "operation",
    ) in compatible


@pytest.fixture(scope="module")
def served_task(tmp_path_factory):
    """The shipped task served over HTTP (in a thread), at its /tasks/<id>/mcp URL."""
    task = next(t for t in select_tasks(SHIPPED) if t.id == TASK)
    host = EpisodeHost(
        World.load(DEFAULT_WORLD), [task], runs_dir=tmp_path_factory.mktemp("runs"), transport="http"
    )
    with in_thread(host) as base:
        yield f"{base}/tasks/{TASK}/mcp"


def test_a_drifted_server_exits_1_and_update_writes_the_new_pin(tmp_path, served_task):
    pin = tmp_path / "pin.json"
    stale = variant(_optional)  # a pin claiming an argument the server no longer has
    stale.source = "hosted@1.0"
    pin.write_text(stale.to_json())
    runner = CliRunner()
    drifted = runner.invoke(app, ["surface", "diff", "--against", str(pin), "--url", served_task])
    assert drifted.exit_code == 1, drifted.output
    assert "tool create_widget dry_run: argument removed" in drifted.output
    updated = runner.invoke(
        app,
        [
            "surface",
            "diff",
            "--against",
            str(pin),
            "--update",
            "--url",
            served_task,
            "--header",
            "X-Probe: 1",
        ],
    )
    assert updated.exit_code == 0, updated.output
    new = load_surface(pin)
    assert (
        new.source.startswith("hosted@")
        and "dry_run" not in new.tool("create_widget").input_schema["properties"]
    )
    assert new.tool("manage_apps").read_operations == ["list", "read"]
    again = runner.invoke(app, ["surface", "diff", "--against", str(pin), "--url", served_task])
    assert again.exit_code == 0 and "no drift" in again.output


def test_surface_diff_bad_input_and_no_server_exit_2(tmp_path):
    runner = CliRunner()
    cases = [
        (["surface", "diff"], "give --url URL or --command CMD"),
        (["surface", "diff", "--url", "http://127.0.0.1:9/mcp"], "cannot reach http://127.0.0.1:9/mcp"),
        (["surface", "diff", "--url", "ftp://x", "--header", "A:b"], "is not an http(s) URL"),
        (["surface", "diff", "--command", "x", "--header", "A:b"], "--header goes with --url"),
        (["surface", "diff", "--url", "http://x/mcp", "--header", "nocolon"], "is not KEY:VALUE"),
        (
            ["surface", "diff", "--url", "http://x/mcp", "--against", str(tmp_path / "none.json")],
            "no such surface file",
        ),
        (["surface", "diff", "--command", f"{sys.executable} -c pass"], "cannot reach"),
    ]
    (tmp_path / "bad.json").write_text('{"source": "x", "tools": [{"name": "t"}]}')
    cases.append(
        (
            ["surface", "diff", "--url", "http://x/mcp", "--against", str(tmp_path / "bad.json")],
            "tools.0.kind",
        )
    )
    for args, said in cases:
        result = runner.invoke(app, args)
        assert result.exit_code == 2 and said in result.output, (args, result.output)
        assert "Traceback" not in result.output
