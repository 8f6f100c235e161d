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


def test_a_level_out_of_rounds_says_its_cause_and_every_printed_id_is_shown_and_decided(
    sources, repo, mini_world_path, tmp_path, monkeypatch
):
    """A story whose level never certifies (its author keeps a split phrasal verb in the Execute request, so the
    prose gate fails every round) blocks the run. The item `author` prints says why in the writer's terms — the
    gate, its finding with the grader's codes in words, the facts field — not only that the rounds ran out; its
    flag id is the same for an identical run; and every id printed can be shown and then decided."""
    import re

    from authoring.roles.author.rules import RuleAuthor
    from tests.authoring.conftest import author_args, init_repo

    plain = RuleAuthor.draft

    def garbled(self, ctx, level, feedback, history):
        out = plain(self, ctx, level, feedback, history)
        if ctx.story.story.slug == "risk_repair" and level == 0:
            out.task["prompt"] += " If it drifts, point back it."
        return out

    monkeypatch.setattr(RuleAuthor, "draft", garbled)
    runner = CliRunner()

    def author(into):
        """`author` run from `into` (its checkpoints there), the printed items and the flags it recorded."""
        monkeypatch.chdir(into)
        done = runner.invoke(app, author_args(sources, into, mini_world_path), env={"COLUMNS": "400"})
        assert done.exit_code == 1, done.output
        printed = re.findall(r"^\s*review (f[0-9a-f]{9}) (\w+) (\S+): (.*)$", done.stdout, re.M)
        listed = runner.invoke(app, ["review", "list", "--json", "--tasksets-dir", str(into / "tasksets")])
        return done.stdout, printed, sorted(i["flag"] for i in json.loads(listed.stdout)["items"])

    _, twin_printed, twin_flags = author(init_repo(tmp_path / "twin"))
    out, printed, flags = author(repo)
    blocked = [reason for _, kind, _, reason in printed if kind == "gate_failure"]
    assert blocked, out
    assert blocked[0].startswith("level0 (Execute) did not certify in 3 rounds: "), blocked[0]
    cause = blocked[0].split(" rounds: ", 1)[1]
    assert "gate prose" in cause and "split phrasal verb" in cause and "split_phrasal_verb" not in cause
    assert flags == twin_flags, "an identical run raises the same flags"
    assert [kind for _, kind, *_ in printed] == [kind for _, kind, *_ in twin_printed]
    tasksets = ["--tasksets-dir", str(repo / "tasksets")]
    for n, (item, kind, _, _) in enumerate(printed):
        shown = runner.invoke(app, ["review", "show", item, *tasksets])
        assert shown.exit_code == 0, (item, kind, shown.output)
        assert item in shown.output
        verdict = ["approve"] if n % 2 == 0 else ["reject", "--reason", "not this way"]
        decided = runner.invoke(app, ["review", *verdict, item, "--by", "ana", *tasksets])
        assert "no review item" not in decided.output and "superseded" not in decided.output, decided.output
        assert decided.exit_code in (0, 1), (item, kind, decided.output)
    listed = runner.invoke(app, ["review", "list", "--all", "--json", *tasksets])
    statuses = {i["id"]: i["status"] for i in json.loads(listed.stdout)["items"]}
    assert all(statuses[item] in ("approved", "rejected") for item, *_ in printed), statuses
