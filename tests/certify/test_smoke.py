"""`taskforge smoke`: one small certified task per tool and rung of the surface, generated from the surface."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authoring.cli import app
from certify.lock import CertificateLock
from certify.smoke import RECIPES, SmokeError, build, rungs, task_id
from simulator import DEFAULT_WORLD, World, tool_schemas

ROOT = Path(__file__).resolve().parents[2]
COMPAT_WORLD = ROOT / "compat" / "workspacebench" / "world"


def test_the_rungs_follow_the_surface():
    got = rungs()
    assert len(got) == 38 and len(set(got)) == 38
    assert {t for t, _ in got} == {s["name"] for s in tool_schemas()}
    assert ("manage_backends", "delete") in got and ("add_generative_widget", "chart") in got
    assert ("get_workspace_prompt", "workspace_session_context") in got
    assert ("create_widget", "drops_undeclared") in got and ("get_skill_content", "call") in got
    assert set(got) == set(RECIPES)
    grown = [
        *tool_schemas(),
        {"name": "brand_new", "parameters": {"properties": {"operation": {"enum": ["a"]}}}},
    ]
    assert ("brand_new", "a") in rungs(grown)


def test_a_rung_without_a_recipe_is_named(monkeypatch):
    monkeypatch.delitem(RECIPES, ("navigate_workspace", "tab"))
    with pytest.raises(SmokeError, match="no smoke recipe for navigate_workspace/tab"):
        list(build(World.load(DEFAULT_WORLD)))


def test_the_same_world_gives_the_same_tasks():
    world = World.load(DEFAULT_WORLD)
    first, second = list(build(world)), list(build(world))
    assert first == second
    assert [t["id"] for t in first] == [task_id(t, r) for t, r in rungs()]
    assert all(t["difficulty"] == "level0" and t["meta"]["hidden"] == [] for t in first)


def test_smoke_from_the_command_line_certifies_every_task(tmp_path):
    out = tmp_path / "smoke"
    runner = CliRunner()
    made = runner.invoke(app, ["smoke", "--out", str(out), "--json"])
    assert made.exit_code == 0, made.output
    report = json.loads(made.output)
    assert report["certified"] == report["total"] == 38
    gates = report["tasks"][0]["gates"]
    assert gates["shortcuts"]["detail"].startswith("not applicable") and gates["leak"]["detail"].startswith(
        "skipped"
    )
    files = sorted((out / "smoke").glob("*.json"))
    assert len(files) == 38
    lock = CertificateLock.load(out)
    assert lock is not None and len(lock.tasks) == 38 and all(c.certified for c in lock.tasks.values())
    again = runner.invoke(app, ["certify", str(out)])
    assert again.exit_code == 0, again.output
    rerun = runner.invoke(app, ["smoke", "--out", str(out)])
    assert rerun.exit_code == 0 and sorted((out / "smoke").glob("*.json")) == files


def test_smoke_on_the_compatibility_world(tmp_path):
    made = CliRunner().invoke(
        app, ["smoke", "--out", str(tmp_path / "s"), "--world", str(COMPAT_WORLD), "--json"]
    )
    assert made.exit_code == 0, made.output
    assert json.loads(made.output)["certified"] == 38
    manifest = json.loads((tmp_path / "s" / "taskset.json").read_text())
    assert manifest["world"] == str(COMPAT_WORLD)


def test_smoke_refuses_a_folder_holding_another_taskset(tmp_path):
    (tmp_path / "taskset.json").write_text(json.dumps({"taskset_id": "workspace-tasks"}))
    result = CliRunner().invoke(app, ["smoke", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "holds another taskset" in " ".join(result.output.split())
    missing = CliRunner().invoke(
        app, ["smoke", "--out", str(tmp_path / "x"), "--world", str(tmp_path / "none")]
    )
    assert missing.exit_code == 2 and "Traceback" not in missing.output
