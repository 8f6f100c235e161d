"""Re-certification: stale exactly when what certification depends on changed; reports the moved verdicts."""

from __future__ import annotations

import json
import shutil

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from typer.testing import CliRunner

from authoring.cli import app
from authoring.graph import RunContext, build_graph, serializer
from authoring.review import all_items
from certify import lock
from certify.grader import CHECKS, CheckResult
from certify.recertify import recertify
from simulator import World
from tests.authoring.test_pipeline import drivers, options


@pytest.fixture
def certified(sources, repo, mini_world_path):
    """A taskset on disk, authored and calibrated (lock, tasks, transcripts), not committed."""
    graph = build_graph(InMemorySaver(serde=serializer()))
    config = {"configurable": {"thread_id": "r"}, "recursion_limit": 300}
    opts = options(sources, repo, mini_world_path, commit=False)
    graph.invoke({"options": opts}, config, context=RunContext(opts, drivers()))
    assert graph.get_state(config).values["result"].status == "certified"
    return repo / "tasksets" / "workspace_tasks"


def stricter(code: str, applies):
    """A changed check: wherever the task uses it, the new rule rejects the result."""

    def check(ctx):
        if applies(ctx.eval):
            yield CheckResult(code, False, f"{code} (changed)", "the new rule rejects it")

    return check


def test_nothing_stale_and_unrelated_changes(certified, mini_world_path, repo):
    world = World.load(mini_world_path)
    assert recertify(certified, world).stale == 0
    (repo / "README.md").write_text("an unrelated change\n")
    (certified / "calibration" / "desk_head" / "calibration.md").write_text("edited record\n")
    assert recertify(certified, world).stale == 0


def test_a_swapped_check_reports_exactly_the_moved_verdicts(certified, mini_world_path, monkeypatch):
    world = World.load(mini_world_path)
    monkeypatch.setitem(CHECKS, "missing_tab", stricter("missing_tab", lambda ev: ev.required_tabs))
    report = recertify(certified, world)
    assert report.stale == 10
    broken = {t.task_id for t in report.broken}
    assert broken == {
        "morning_positions_level3",
        "morning_positions_level4",
        "risk_repair_level3",
        "risk_repair_level4",
    }
    assert {t.verdict for t in report.tasks if t.task_id not in broken} == {"kept"}
    assert [c.moved for c in report.calibration] == [[]]  # the reference never passed those levels anyway


def test_a_check_that_moves_calibration_verdicts(certified, mini_world_path, monkeypatch):
    world = World.load(mini_world_path)
    before = [
        json.loads(line)
        for line in (certified / "calibration" / "desk_head" / "trials.jsonl").read_text().splitlines()
    ]
    passing = sorted((t["task_id"], t["repeat"]) for t in before if t["passed"])
    monkeypatch.setitem(
        CHECKS, "missing_dashboard", stricter("missing_dashboard", lambda ev: ev.judged_dashboard)
    )
    report = recertify(certified, world)
    assert len(report.broken) == 10
    moved = report.calibration[0].moved
    assert sorted((m["task_id"], m["repeat"]) for m in moved) == passing
    assert all(m["was"] is True and m["now"] is False for m in moved)


def test_a_task_file_edited_by_hand_is_stale(certified, mini_world_path):
    path = certified / "desk_head" / "risk_repair_level0.json"
    raw = json.loads(path.read_text())
    raw["eval"]["max_turns"] = 1
    path.write_text(json.dumps(raw))
    report = recertify(certified, World.load(mini_world_path))
    assert [(t.task_id, t.reasons, t.verdict) for t in report.tasks] == [
        ("risk_repair_level0", ["task file changed"], "broken")
    ]


def test_cli_opens_review_items_for_broken_tasks_and_commits_only_the_lock(
    certified, mini_world_path, repo, monkeypatch, tmp_path
):
    from tests.authoring.conftest import git

    manifest = json.loads((certified / "taskset.json").read_text())
    manifest["world"] = str(mini_world_path)
    (certified / "taskset.json").write_text(json.dumps(manifest))
    git(repo, "add", "tasksets")
    git(repo, "commit", "-q", "-m", "tasks")
    runner = CliRunner()
    args = ["recertify", "--tasksets-dir", str(repo / "tasksets"), "--json"]
    clean = runner.invoke(app, args)
    assert clean.exit_code == 0 and json.loads(clean.stdout)["stale"] == 0
    monkeypatch.setitem(CHECKS, "missing_tab", stricter("missing_tab", lambda ev: ev.required_tabs))
    (repo / "scratch.txt").write_text("someone else's work in progress\n")
    result = runner.invoke(app, [*args, "--commit"])
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert data["verdicts"] == {"kept": 6, "broken": 4} and data["commit"]
    items = [i for i in all_items(repo / "tasksets") if i.source == "recertify"]
    assert sorted(i.task_id for i in items) == [
        "morning_positions_level3",
        "morning_positions_level4",
        "risk_repair_level3",
        "risk_repair_level4",
    ]
    assert all(i.status == "open" and i.blocking is False for i in items)
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == [
        "tasksets/workspace_tasks/certificates.json",
        "tasksets/workspace_tasks/reviews/desk_head.json",
    ]
    assert "?? scratch.txt" in git(repo, "status", "--porcelain")


@pytest.mark.parametrize(
    "helper",
    [
        "certify/grader/match.py",
        "certify/shortcuts/reading.py",
        "certify/equivalence.py",
        "certify/calibration/analysis.py",
    ],
)
def test_a_changed_private_helper_makes_every_certificate_stale(
    certified, mini_world_path, tmp_path, monkeypatch, helper
):
    """Provenance: the grader fingerprint covers code no registered check names directly — a private helper
    of the grader package, the shortcut agents, the equivalence variants, the calibration analysis."""
    code = tmp_path / "code"
    for package in ("certify", "simulator"):
        shutil.copytree(
            lock._PACKAGES / package, code / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    monkeypatch.setattr(lock, "_PACKAGES", code)
    world = World.load(mini_world_path)
    assert recertify(certified, world).stale == 0
    source = code / helper
    text = source.read_text()
    private = text.index("\ndef _") + 1
    source.write_text(
        text[:private] + "def _changed_helper() -> None:\n    return None\n\n\n" + text[private:]
    )
    report = recertify(certified, world)
    assert report.stale == 10
    assert {tuple(t.reasons) for t in report.tasks} == {("grader",)}
