"""Review decisions resume the paused graph, land in the lock, survive a restart, and are taken once."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from authoring.review import AlreadyDecided, ReviewQueue, decide
from authoring.run import checkpointer, run_persona
from tests.authoring.test_pipeline import FlaggingFairness, drivers, options


def flagged_run(sources, repo, world, db: Path):
    """A persona run that stops for review (one blocker), in its own process-like session."""
    outcome = run_persona(options(sources, repo, world), drivers(fairness=FlaggingFairness()), driver_name="rules",
                          checkpoint_path=db)
    assert outcome.status == "needs_review"
    return outcome


def open_items(db: Path):
    queue = ReviewQueue(db)
    with checkpointer(None, db) as saver:
        queue.sync_threads(saver, drivers())
    return queue, queue.items()


def test_restart_between_flag_and_decision_then_approve(sources, repo, mini_world_path, tmp_path):
    db = tmp_path / "cp.sqlite"
    flagged_run(sources, repo, mini_world_path, db)
    # a new process: a fresh queue and saver on the same file
    queue, items = open_items(db)
    blocking = [i for i in items if i.blocking]
    assert len(blocking) == 1 and blocking[0].task_id == "risk_repair_level1"
    assert any(i.kind == "dead_rung" for i in items) is False  # minor items of an unfinished run wait for its end
    with checkpointer(None, db) as saver:
        outcome = decide(queue, saver, drivers(fairness=FlaggingFairness()), blocking[0].id, "approve", by="ana",
                         note="the ladder reads fine")
    assert outcome["run"] == "committed" and outcome["commit"]
    lock = json.loads((repo / "tasksets" / "workspace_tasks" / "certificates.json").read_text())
    review = lock["tasks"]["risk_repair_level1"]["reviews"][0]
    assert review["verdict"] == "approve" and review["by"] == "ana" and review["note"] == "the ladder reads fine"
    assert queue.get(blocking[0].id).status == "decided"
    # after the run finished, its minor notes (unprobed dead rungs) are in the queue too
    _, later = open_items(db)
    assert {i.kind for i in later} >= {"dead_rung"} and all(not i.blocking for i in later)


def test_reject_stops_the_commit(sources, repo, mini_world_path, tmp_path):
    db = tmp_path / "cp.sqlite"
    flagged_run(sources, repo, mini_world_path, db)
    queue, items = open_items(db)
    with checkpointer(None, db) as saver:
        outcome = decide(queue, saver, drivers(fairness=FlaggingFairness()), items[0].id, "reject", by="ana",
                         note="not this story")
    assert outcome["run"] == "rejected"
    assert not (repo / "tasksets").exists()


def test_fix_sends_the_item_to_the_fixer_and_keeps_it_open_when_unrepaired(sources, repo, mini_world_path, tmp_path):
    db = tmp_path / "cp.sqlite"
    flagged_run(sources, repo, mini_world_path, db)
    queue, items = open_items(db)
    with checkpointer(None, db) as saver:
        outcome = decide(queue, saver, drivers(fairness=FlaggingFairness()), items[0].id, "fix", by="ana")
    assert outcome["flag_status"] == "open" and outcome["run"] == "waiting"
    assert queue.get(items[0].id).status == "open"
    assert "no repair" in outcome["result"]
    assert queue.get(items[0].id).decision["verdict"] == "fix"


def test_two_reviewers_cannot_both_decide_one_item(tmp_path):
    queue = ReviewQueue(tmp_path / "q.sqlite")
    queue.add(item_id="x1", source="recertify", kind="recertify_broken", severity="blocker", reason="broken")
    results: list[str] = []

    def claim(who: str) -> None:
        try:
            queue.claim("x1", who)
            results.append(f"won:{who}")
        except AlreadyDecided:
            results.append(f"lost:{who}")

    threads = [threading.Thread(target=claim, args=(f"r{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(r.startswith("won") for r in results) == 1
    with pytest.raises(AlreadyDecided, match="already deciding"):
        queue.claim("x1", "late")
