"""Review decisions: they resume the paused run, land in the lock and the committed review file, survive a lost
checkpoint store, are taken once, and never apply to a superseded run."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from authoring.decisions import NoRepair, decide
from authoring.flags import make_flag
from authoring.review import AlreadyDecided, Claims, ReviewError, all_items, find_item
from authoring.run import checkpointer, run_persona
from tests.authoring.conftest import git
from tests.authoring.test_pipeline import FlaggingFairness, RuleFairness, RuleValidator, drivers, options

LOCK = Path("tasksets") / "workspace_tasks" / "certificates.json"
REVIEWS = Path("tasksets") / "workspace_tasks" / "reviews" / "desk_head.json"


class TwoBlockers(RuleFairness):
    """Raises one blocker on each story's level 1."""

    def review(self, story, levels, persona_tasks, persona):
        return [
            *super().review(story, levels, persona_tasks, persona),
            make_flag(
                role="fairness",
                kind="fairness",
                persona=persona,
                story=story,
                task_id=f"{story}_level1",
                level=1,
                check="constant_core",
                severity="blocker",
                reason=f"{story} level1 reads oddly",
            ),
        ]


def flagged_run(sources, repo, world, db: Path, fairness=None):
    """A persona run that stops for review, in its own process-like session."""
    outcome = run_persona(
        options(sources, repo, world),
        drivers(fairness=fairness or FlaggingFairness()),
        driver_name="rules",
        checkpoint_path=db,
    )
    assert outcome.status == "needs_review"
    return outcome


def decide_now(repo: Path, db: Path, item_id: str, verdict: str, fairness=None, **kw):
    with checkpointer(None, db) as saver:
        return decide(
            repo / "tasksets",
            saver,
            drivers(fairness=fairness or FlaggingFairness()),
            item_id,
            verdict,
            by=kw.pop("by", "ana"),
            **kw,
        )


def test_items_printed_by_author_are_decidable_at_once_and_the_approval_commits(
    sources, repo, mini_world_path, tmp_path
):
    db = tmp_path / "cp.sqlite"
    outcome = flagged_run(sources, repo, mini_world_path, db)
    printed = outcome.items[0]["id"]
    # no `review list` first: the id author printed is found in the committed review file
    item = find_item(repo / "tasksets", printed)
    assert item.blocking and item.task_id == "risk_repair_level1"
    assert "waits for review" in git(repo, "log", "-1", "--format=%s")
    assert git(repo, "show", "HEAD:" + str(REVIEWS))
    result = decide_now(repo, db, printed, "approve", note="the ladder reads fine")
    assert result["run"] == "committed" and result["commit"]
    lock = json.loads((repo / LOCK).read_text())
    review = lock["tasks"]["risk_repair_level1"]["reviews"][0]
    assert (
        review["verdict"] == "approve" and review["by"] == "ana" and review["note"] == "the ladder reads fine"
    )
    committed = json.loads(git(repo, "show", f"HEAD:{REVIEWS}"))
    decided = next(i for i in committed["items"] if i["id"] == printed)
    assert decided["status"] == "approved" and decided["decision"]["by"] == "ana"
    # after the run finished, its minor notes are open, non-blocking items of the same committed file
    assert {i["kind"] for i in committed["items"] if i["status"] == "open"} >= {"dead_rung"}
    with pytest.raises(AlreadyDecided, match="already approved"):
        decide_now(repo, db, printed, "approve")
    with checkpointer(None, db) as saver:
        assert not list(saver.list(None)), "a finished run is pruned from the checkpoint store"


def test_after_one_rejection_the_other_blockers_stay_decidable(sources, repo, mini_world_path, tmp_path):
    db = tmp_path / "cp.sqlite"
    outcome = flagged_run(sources, repo, mini_world_path, db, TwoBlockers())
    first, second = sorted(i["id"] for i in outcome.items)
    rejected = decide_now(repo, db, first, "reject", TwoBlockers(), note="wrong story")
    assert rejected["run"] == "waiting" and rejected["waiting"] == [second]
    last = decide_now(repo, db, second, "approve", TwoBlockers())
    assert last["run"] == "rejected"
    assert not (repo / "tasksets" / "workspace_tasks" / "desk_head").exists(), (
        "a rejected run commits no task"
    )
    statuses = {i.id: i.status for i in all_items(repo / "tasksets")}
    assert statuses[first] == "rejected" and statuses[second] == "approved"
    assert "rejected in review" in git(repo, "log", "-1", "--format=%s")


def test_fix_without_a_repair_records_nothing_and_keeps_the_item_open(
    sources, repo, mini_world_path, tmp_path
):
    db = tmp_path / "cp.sqlite"
    outcome = flagged_run(sources, repo, mini_world_path, db)
    item_id = outcome.items[0]["id"]
    before = (repo / REVIEWS).read_bytes()
    with pytest.raises(NoRepair, match="stays open"):
        decide_now(repo, db, item_id, "fix")
    item = find_item(repo / "tasksets", item_id)
    assert item.status == "open" and item.decision is None
    assert (repo / REVIEWS).read_bytes() == before


def test_a_superseded_run_cannot_be_resumed(sources, repo, mini_world_path, tmp_path):
    db = tmp_path / "cp.sqlite"
    outcome = flagged_run(sources, repo, mini_world_path, db, TwoBlockers())
    old = [i["id"] for i in outcome.items]
    story = sources / "stories" / "desk_head" / "risk_repair.md"
    story.write_text(story.read_text() + "\nThe story was fixed.\n")
    fixed = run_persona(
        options(sources, repo, mini_world_path), drivers(), driver_name="rules", checkpoint_path=db
    )
    assert fixed.status == "committed"
    head_lock = git(repo, "show", f"HEAD:{LOCK}")
    items = {(i.id, i.run): i for i in all_items(repo / "tasksets")}
    stale = [i for (iid, _run), i in items.items() if iid in old]
    assert stale and all(i.status == "superseded" and i.superseded_by == fixed.thread_id for i in stale)
    with pytest.raises(ReviewError, match="superseded by run"):
        decide_now(repo, db, old[0], "approve", TwoBlockers())
    assert git(repo, "show", f"HEAD:{LOCK}") == head_lock, "nothing was committed over the newer run"
    assert len(json.loads(head_lock)["personas"]["desk_head"]["tasks"]) == 10
    assert git(repo, "status", "--porcelain") == ""
    again = run_persona(
        options(sources, repo, mini_world_path), drivers(), driver_name="rules", checkpoint_path=db
    )
    assert again.status == "up_to_date"


def test_losing_the_checkpoint_store_loses_no_review_item(sources, repo, mini_world_path, tmp_path):
    db = tmp_path / "cp.sqlite"
    outcome = flagged_run(sources, repo, mini_world_path, db)
    db.unlink()
    items = [i for i in all_items(repo / "tasksets") if i.status == "open"]
    assert [i.id for i in items] == [outcome.items[0]["id"]]
    with pytest.raises(ReviewError, match="not in the checkpoint store"):
        decide_now(repo, db, items[0].id, "approve")
    rerun = run_persona(
        options(sources, repo, mini_world_path),
        drivers(fairness=FlaggingFairness()),
        driver_name="rules",
        checkpoint_path=db,
    )
    assert rerun.status == "needs_review", "a lost paused run is never reported up to date"
    assert decide_now(repo, db, rerun.items[0]["id"], "approve")["run"] == "committed"


def test_two_reviewers_cannot_both_claim_one_item(tmp_path):
    results: list[bool] = []
    with checkpointer(None, tmp_path / "cp.sqlite") as saver:
        claims = Claims(saver)

        def claim(who: str) -> None:
            results.append(claims.claim("item:x1", who))

        threads = [threading.Thread(target=claim, args=(f"r{i}",)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sum(results) == 1
        assert claims.claim("item:x1", "late") is False
        claims.release("item:x1")
        assert claims.claim("item:x1", "late") is True


class MinorRemark(RuleValidator):
    """Leaves one non-blocking remark on one task: an item of the finished run."""

    def review(self, task, world, persona):
        flags = super().review(task, world, persona)
        if task.id == "risk_repair_level0":
            flags.append(
                make_flag(
                    role="validator",
                    kind="validator",
                    persona=persona,
                    story="risk_repair",
                    task_id=task.id,
                    level=0,
                    check="deadline",
                    severity="minor",
                    reason="the prompt never says when it is needed",
                )
            )
        return flags


def test_fixing_an_item_of_a_finished_run_takes_the_whole_repair_path(
    sources, repo, mini_world_path, tmp_path
):
    from tests.authoring.test_graph_routes import MARK, CountingValidator, MarkingFixer

    db = tmp_path / "cp.sqlite"
    done = run_persona(
        options(sources, repo, mini_world_path),
        drivers(validator=MinorRemark()),
        driver_name="rules",
        checkpoint_path=db,
    )
    assert done.status == "committed"
    item = next(i for i in all_items(repo / "tasksets") if i.check == "deadline")
    assert item.source == "run" and item.status == "open"
    messages: list[str] = []
    validator = CountingValidator()
    with checkpointer(None, db) as saver:
        result = decide(
            repo / "tasksets",
            saver,
            drivers(messages, fixer=MarkingFixer(), validator=validator),
            item.id,
            "fix",
            by="ana",
            sources_root=sources,
            skills_dir=repo / "skills",
        )
    assert result["run"] == "committed" and result["flag_status"] == "fixed", (result, messages)
    task = json.loads(git(repo, "show", "HEAD:tasksets/workspace_tasks/desk_head/risk_repair_level0.json"))
    assert task["prompt"].endswith(MARK)
    assert validator.seen == {"risk_repair_level0": 1}, "the repaired task went back to a validator"
    assert any(m.startswith("ladder fairness") for m in messages) and any(
        m.startswith("calibration with") for m in messages
    )
    lock = json.loads(git(repo, "show", f"HEAD:{LOCK}"))
    assert lock["tasks"]["risk_repair_level0"]["reviews"][0]["verdict"] == "fix"
    fixed = find_item(repo / "tasksets", item.id)
    assert fixed.status == "fixed" and fixed.decision.result == "marked the prompt"
    assert "mark level-0 prompts" in git(repo, "show", "HEAD:skills/task-author.md")
    assert git(repo, "status", "--porcelain", "--", "tasksets") == ""
