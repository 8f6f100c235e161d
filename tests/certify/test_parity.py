"""`taskforge parity`: the smoke taskset's references in the simulator and on our own serve agree; on servers that
diverge on purpose the disagreement is reported on the right check, with both values."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install -e '.[mcp]')")

from typer.testing import CliRunner

from authoring.cli import app
from certify.evaluate import select_tasks
from certify.parity import FREE_NAME, ParityOptions, TaskParity, run_parity
from certify.smoke import write as write_smoke
from certify.workspace_server import WorkspaceHost, bare_setup
from simulator import DEFAULT_WORLD, Workspace, World
from tests.certify.mcp_servers import KeepsUndeclared, LateWrites, NoCompaction, UpdatesWithoutId, target_of

ROOT = Path(__file__).resolve().parents[2]
FAST = ParityOptions(poll_interval_s=0)
REFUSED = {
    "smoke_manage_backends_add_level0": "custom backend's widgets.json",
    "smoke_manage_backends_refresh_level0": "connects a custom backend",
    "smoke_manage_backends_delete_level0": "connects a custom backend",
}


@pytest.fixture(scope="module")
def world() -> World:
    return World.load(DEFAULT_WORLD)


@pytest.fixture(scope="module")
def smoke(world, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("smoke")
    result = write_smoke(world, root)
    assert result.certified == len(result.certifications) == 38
    return root


def tasks_of(root: Path, *ids: str):
    tasks = select_tasks(root)
    return [t for t in tasks if not ids or t.id in ids]


def shared(cls=Workspace):
    """A factory giving every session the same workspace, as the product keeps one: parity's boards stay."""
    held: dict[str, Workspace] = {}

    def factory(world, setup):
        if "ws" not in held:
            held["ws"] = cls.start(world, setup)
        return held["ws"]

    return factory, held


def run(world, root, host, *ids, options=FAST) -> dict[str, TaskParity]:
    records = asyncio.run(run_parity(world, tasks_of(root, *ids), target_of(host), options))
    return {r.task_id: r for r in records}


def test_the_smoke_taskset_agrees_with_our_serve_and_parity_cleans_up(world, smoke):
    factory, held = shared()
    host = WorkspaceHost(world, bare_setup(world), surface="product", factory=factory)
    records = run(world, smoke, host)
    assert len(records) == 38
    refused = {k: r.reason for k, r in records.items() if r.status == "refused"}
    assert set(refused) == set(REFUSED)
    assert all(REFUSED[k] in (why or "") for k, why in refused.items()), refused
    bad = {
        k: [d.model_dump() for d in r.disagreements()]
        for k, r in records.items()
        if r.status not in ("agree", "refused")
    }
    assert bad == {}
    agreed = [r for r in records.values() if r.status == "agree"]
    assert len(agreed) == 35 and all(r.on_server and r.on_server.passed for r in agreed)
    assert all(r.simulator == r.certified == r.on_server for r in agreed)
    # one workspace for every task, as on the product: the server's ids are not the task's, and were mapped
    moved = records["smoke_update_widget_layout_floats_up_level0"]
    assert moved.ids["widgets"]["smoke-w1"] != "smoke-w1" and moved.seed_calls["server"] >= 3
    assert records["smoke_manage_apps_instantiate_level0"].ids[
        "dashboards"
    ]  # instantiated board mapped by order
    ws = held["ws"]
    built = [d for d in ws.dashboards.values() if d.name != "Home"]
    assert built and {d.name for d in built} == {FREE_NAME} and not any(d.widgets for d in built)
    assert any(r.cleanup and "emptied and renamed" in r.cleanup[0] for r in agreed)


def test_keep_leaves_what_parity_built(world, smoke):
    factory, held = shared()
    host = WorkspaceHost(world, bare_setup(world), surface="product", factory=factory)
    (record,) = run(
        world, smoke, host, "smoke_delete_widget_level0", options=ParityOptions(poll_interval_s=0, keep=True)
    ).values()
    assert record.status == "agree" and record.cleanup == []
    boards = [d for d in held["ws"].dashboards.values() if d.name == "Smoke Board"]
    assert len(boards) == 1 and len(boards[0].widgets) == 1


@pytest.mark.parametrize(
    ("cls", "task", "code", "on_sim", "on_server"),
    [
        (
            KeepsUndeclared,
            "smoke_create_widget_drops_undeclared_level0",
            "missing_widget",
            "1 matching",
            "0 matching",
        ),
        (
            NoCompaction,
            "smoke_update_widget_layout_floats_up_level0",
            "layout_mismatch",
            "main:20,0,20,12",
            "main:20,30,20,12",
        ),
        (
            UpdatesWithoutId,
            "smoke_manage_dashboard_update_level0",
            "too_many_invalid_calls",
            "#2 manage_dashboard (invalid_request)",
            "none",
        ),
    ],
)
def test_a_divergent_server_is_reported_on_the_right_check_with_both_values(
    world, smoke, cls, task, code, on_sim, on_server
):
    host = WorkspaceHost(world, bare_setup(world), surface="product", factory=cls.start)
    (record,) = run(world, smoke, host, task).values()
    assert record.status == "structural", record.model_dump()
    wrong = [c for c in record.checks if c.verdict != "agree"]
    assert wrong[0].code == code and all(c.verdict == "structural" for c in wrong), [
        c.model_dump() for c in wrong
    ]
    check = wrong[0]
    assert on_sim in check.simulator["evidence"] and on_server in check.server["evidence"], check.model_dump()
    assert {c.code for c in record.checks if c.verdict == "agree"} >= {"collateral_dashboard_change"}
    assert record.simulator == record.certified  # the simulator's side is the certified verdict


def test_a_refused_update_without_id_shows_as_the_step_that_succeeded_on_one_side_only(world, smoke):
    host = WorkspaceHost(world, bare_setup(world), surface="product", factory=UpdatesWithoutId.start)
    (record,) = run(world, smoke, host, "smoke_manage_dashboard_update_level0").values()
    (step,) = record.steps
    assert (step.index, step.tool, step.verdict) == (2, "manage_dashboard", "structural")
    assert (
        step.simulator.startswith("refused (invalid_request)") and "requires dashboard_id" in step.simulator
    )
    assert step.server.startswith("ok")


def test_late_writes_are_polled_until_two_snapshots_agree(world, smoke):
    ids = (
        "smoke_update_widget_level0",
        "smoke_manage_navigation_bar_rename_tabs_level0",
        "smoke_manage_apps_instantiate_level0",
    )
    late = WorkspaceHost(world, bare_setup(world), surface="product", factory=LateWrites.start)
    prompt = WorkspaceHost(world, bare_setup(world), surface="product")
    slow, quick = run(world, smoke, late, *ids), run(world, smoke, prompt, *ids)
    assert {k: r.status for k, r in slow.items()} == dict.fromkeys(ids, "agree")
    for k in ids:
        assert slow[k].polls["unstable"] == 0 and slow[k].polls["reads"] > quick[k].polls["reads"]
    once = run(world, smoke, late, *ids, options=ParityOptions(poll_interval_s=0, poll_rounds=1))
    assert any(r.status != "agree" or r.polls["unstable"] for r in once.values())


def test_the_twin_dataset_is_a_data_only_difference(world, smoke):
    twin = bare_setup(world, ["tidewell-enterprise-y", "plumbline-fundamentals", "widget-showcase"])
    host = WorkspaceHost(world, twin, surface="product")
    (record,) = run(world, smoke, host, "smoke_get_widget_data_level0").values()
    assert record.status == "data_only"
    assert {(c.code, c.verdict) for c in record.checks if c.verdict != "agree"} == {
        ("missing_tool_result", "data_only")
    }
    (step,) = record.steps
    assert step.verdict == "data_only" and step.tool == "get_widget_data" and step.simulator != step.server
    assert record.certified.passed and not record.on_server.passed


def test_eligibility_refuses_what_the_server_lacks(world, smoke):
    class NoLayoutMoves(WorkspaceHost):
        def tools_of(self, task):
            return [t for t in super().tools_of(task) if t["name"] != "update_widget_layout"]

    host = NoLayoutMoves(world, bare_setup(world), surface="product")
    records = run(world, smoke, host, "smoke_read_widget_level0", "smoke_get_workspace_snapshot_level0")
    assert records["smoke_read_widget_level0"].reason == "the server has no tool update_widget_layout"
    assert records["smoke_get_workspace_snapshot_level0"].status == "agree"
    plumbline_only = WorkspaceHost(world, bare_setup(world, ["plumbline-fundamentals"]), surface="product")
    (record,) = run(world, smoke, plumbline_only, "smoke_read_widget_level0").values()
    assert record.status == "refused" and "no backend 'Tidewell Enterprise'" in (record.reason or "")
    assert "--origin-map 'Tidewell Enterprise=NAME'" in record.reason


def renamed_world(tmp: Path) -> World:
    """The default world whose Tidewell backends serve under another display name."""
    tmp = tmp / "world"
    shutil.copytree(DEFAULT_WORLD, tmp)
    manifest = json.loads((DEFAULT_WORLD / "world.json").read_text())
    for spec in manifest["backends"].values():
        if spec["origin"] == "Tidewell Enterprise":
            spec["origin"] = "OpenBB Tidewell"
    manifest["baselines"] = {}
    (tmp / "world.json").write_text(json.dumps(manifest))
    return World.load(tmp)


def test_origins_are_mapped_through_the_origin_map(world, smoke, tmp_path):
    other = renamed_world(tmp_path)
    host = WorkspaceHost(other, bare_setup(other), surface="product")
    ids = ("smoke_create_widget_level0", "smoke_delete_widget_level0")
    refused = run(world, smoke, host, *ids)
    assert all("--origin-map" in (r.reason or "") for r in refused.values())
    mapped = run(
        world,
        smoke,
        host,
        *ids,
        options=ParityOptions(poll_interval_s=0, origin_map={"Tidewell Enterprise": "OpenBB Tidewell"}),
    )
    assert {k: r.status for k, r in mapped.items()} == dict.fromkeys(ids, "agree")
    assert mapped["smoke_create_widget_level0"].ids["origins"] == {"Tidewell Enterprise": "OpenBB Tidewell"}


def test_shipped_tasks_agree_in_the_product_shape_and_compose_is_refused(world):
    shipped = ROOT / "tasksets" / "workspace_tasks"
    tasks = [t for t in select_tasks(shipped) if t.id.startswith("keel_europe_tilt")]
    host = WorkspaceHost(world, bare_setup(world), surface="product")
    records = asyncio.run(run_parity(world, tasks, target_of(host), FAST))
    status = {r.task_id: r.status for r in records}
    assert status == {
        **{f"keel_europe_tilt_level{i}": "agree" for i in range(4)},
        "keel_europe_tilt_level4": "refused",
    }


# --- the command line, as a user types it ---------------------------------------------------------------------


@pytest.fixture
def served_workspace(tmp_path):
    """`taskforge serve --workspace --surface product --transport http --port 0`, its URL read from what it says."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "authoring",
            "serve",
            "--workspace",
            "--surface",
            "product",
            "--transport",
            "http",
            "--port",
            "0",
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stderr.readline()
        assert "serving a bare workspace" in line, line
        yield line.split(" at ", 1)[1].split(";", 1)[0]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_parity_from_the_command_line_writes_a_record_per_task(smoke, served_workspace, tmp_path):
    out = tmp_path / "records"
    ids = ["smoke_create_widget_level0", "smoke_manage_backends_add_level0"]
    args = [
        "parity",
        "--url",
        served_workspace,
        "--taskset",
        str(smoke),
        "--out",
        str(out),
        "--poll-interval",
        "0",
    ]
    result = CliRunner().invoke(app, [*args, *(x for i in ids for x in ("--task", i))])
    assert result.exit_code == 0, result.output
    assert "= smoke_create_widget_level0: agree" in result.output
    assert "- smoke_manage_backends_add_level0: refused" in result.output
    (run_dir,) = out.iterdir()
    assert sorted(p.name for p in run_dir.iterdir()) == sorted([*(f"{i}.json" for i in ids), "summary.json"])
    record = TaskParity.model_validate_json((run_dir / f"{ids[0]}.json").read_text())
    assert record.status == "agree" and record.server == served_workspace and record.checks
    summary = json.loads((run_dir / "summary.json").read_text())
    assert (summary["agree"], summary["refused"], summary["structural"]) == (1, 1, 0)


def test_parity_usage_errors_are_one_line_exit_2(smoke, tmp_path):
    runner = CliRunner()
    unreachable = runner.invoke(
        app,
        [
            "parity",
            "--url",
            "http://127.0.0.1:9/mcp",
            "--taskset",
            str(smoke),
            "--task",
            "smoke_create_widget_level0",
        ],
    )
    assert unreachable.exit_code == 2 and "cannot reach http://127.0.0.1:9/mcp" in unreachable.output
    unknown = runner.invoke(
        app, ["parity", "--url", "http://127.0.0.1:9/mcp", "--taskset", str(smoke), "--task", "nope"]
    )
    assert unknown.exit_code == 2 and "--task nope: no such task" in unknown.output
    bad_map = runner.invoke(
        app, ["parity", "--url", "http://x/mcp", "--taskset", str(smoke), "--origin-map", "nothing"]
    )
    assert bad_map.exit_code == 2 and "SIMULATOR_ORIGIN=SERVER_ORIGIN" in bad_map.output
    neither = runner.invoke(app, ["parity", "--taskset", str(smoke)])
    assert neither.exit_code == 2 and "give --url URL or --command CMD" in neither.output
