"""The review commands as a person uses them: list, show, approve — with ids straight from `author`."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from authoring.cli import app
from tests.authoring.conftest import git
from tests.authoring.test_review import flagged_run


def test_list_show_and_approve_from_the_command_line(sources, repo, mini_world_path, tmp_path, monkeypatch):
    db = tmp_path / "cp.sqlite"
    outcome = flagged_run(sources, repo, mini_world_path, db)
    runner = CliRunner()
    tasksets = ["--tasksets-dir", str(repo / "tasksets")]
    shown = runner.invoke(
        app,
        ["review", "show", outcome.items[0]["id"][:6], "--checkpoints", str(db), *tasksets],
        env={"COLUMNS": "240"},
    )
    assert shown.exit_code == 0, shown.output
    for expected in (
        "level1 reads differently",
        "prompt (level1)",
        "gate oracle: ok",
        "graded calls:",
        "the ladder side by side",
        "risk_repair_level4",
    ):
        assert expected in shown.output
    listed = runner.invoke(app, ["review", "list", "--json", *tasksets])
    assert listed.exit_code == 0, listed.output
    items = json.loads(listed.stdout)["items"]
    blocker = next(i for i in items if i["blocking"])
    assert blocker["task_id"] == "risk_repair_level1" and blocker["kind"] == "fairness" and blocker["age"]
    monkeypatch.chdir(repo)
    approved = runner.invoke(
        app, ["review", "approve", blocker["id"], "--note", "fine", "--by", "ana", "--checkpoints", str(db)]
    )
    assert approved.exit_code == 0, approved.output
    assert "run: committed" in approved.output
    assert git(repo, "log", "-1", "--format=%s").startswith("taskforge: certify persona desk_head")
    again = runner.invoke(app, ["review", "approve", blocker["id"], "--checkpoints", str(db)])
    assert again.exit_code == 1 and "already approved" in again.output
    missing = runner.invoke(app, ["review", "show", "nope", "--checkpoints", str(db)])
    assert missing.exit_code == 2 and "no review item 'nope'" in missing.output
    everything = runner.invoke(app, ["review", "list", "--all", "--json"])
    assert {i["status"] for i in json.loads(everything.stdout)["items"]} >= {"approved", "open"}
