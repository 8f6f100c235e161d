"""The authoring graph end to end on the mini world: certify, calibrate, commit — and what must not happen."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from authoring.flags import make_flag
from authoring.graph import Drivers, RunContext, build_graph, serializer
from authoring.options import RunOptions
from authoring.roles.author import RuleAuthor
from authoring.roles.fairness import RuleFairness
from authoring.roles.fixer import RuleFixer
from authoring.roles.validator import RuleValidator
from authoring.run import RunError, run_persona
from tests.authoring.conftest import git


def options(sources: Path, repo: Path, world: Path, **kw) -> RunOptions:
    """The fixture persona has two stories, so each level has two tasks: calibration measures a level on two."""
    kw = {"baseline": "lived", "repeats": 1, "min_attempts": 2, **kw}
    return RunOptions(
        persona="desk_head",
        tasksets_dir=str(repo / "tasksets"),
        sources_root=str(sources),
        skills_dir=str(repo / "skills"),
        world=str(world),
        **kw,
    )


def drivers(messages: list[str] | None = None, **replace) -> Drivers:
    d = Drivers(
        RuleAuthor(),
        RuleValidator(),
        RuleFairness(),
        RuleFixer(),
        (messages.append if messages is not None else (lambda m: None)),
    )
    for k, v in replace.items():
        setattr(d, k, v)
    return d


def test_persona_is_certified_calibrated_and_committed(sources, repo, mini_world_path, tmp_path):
    messages: list[str] = []
    git(repo, "checkout", "-q", "-b", "work")
    (repo / "unrelated.txt").write_text("someone else's work\n")
    git(repo, "add", "unrelated.txt")
    outcome = run_persona(
        options(sources, repo, mini_world_path),
        drivers(messages),
        driver_name="rules",
        checkpoint_path=tmp_path / "cp.sqlite",
    )
    assert outcome.status == "committed", outcome.summary
    files = sorted(p.name for p in (repo / "tasksets" / "workspace_tasks" / "desk_head").glob("*.json"))
    assert len(files) == 10 and files[0] == "morning_positions_level0.json"
    shown = git(repo, "show", "--stat", "--format=%s", "HEAD")
    assert "unrelated.txt" not in shown and "certificates.json" in shown
    assert "A  unrelated.txt" in git(repo, "status", "--porcelain")
    lock = json.loads((repo / "tasksets" / "workspace_tasks" / "certificates.json").read_text())
    assert len(lock["tasks"]) == 10 and all(t["certified"] for t in lock["tasks"].values())
    assert lock["personas"]["desk_head"]["calibration"]["holds"] is True
    assert (repo / "tasksets" / "workspace_tasks" / "calibration" / "desk_head" / "staircase.png").is_file()
    assert any("staircase holds" in m for m in messages)

    again = run_persona(
        options(sources, repo, mini_world_path),
        drivers(),
        driver_name="rules",
        checkpoint_path=tmp_path / "cp.sqlite",
    )
    assert again.status == "up_to_date"


def test_dirty_persona_paths_stop_the_run(sources, repo, mini_world_path, tmp_path):
    run_persona(
        options(sources, repo, mini_world_path),
        drivers(),
        driver_name="rules",
        checkpoint_path=tmp_path / "cp.sqlite",
    )
    target = repo / "tasksets" / "workspace_tasks" / "desk_head" / "risk_repair_level0.json"
    target.write_text(target.read_text().replace("Risk Board", "Risk Board!"))
    (sources / "stories" / "desk_head" / "risk_repair.md").write_text(
        (sources / "stories" / "desk_head" / "risk_repair.md").read_text() + "\nMore prose.\n"
    )
    with pytest.raises(RunError, match="uncommitted changes"):
        run_persona(
            options(sources, repo, mini_world_path),
            drivers(),
            driver_name="rules",
            checkpoint_path=tmp_path / "cp.sqlite",
        )
    assert "Risk Board!" in target.read_text()


def test_no_commit_writes_but_does_not_commit(sources, repo, mini_world_path, tmp_path):
    head = git(repo, "rev-parse", "HEAD")
    outcome = run_persona(
        options(sources, repo, mini_world_path, commit=False),
        drivers(),
        driver_name="rules",
        checkpoint_path=tmp_path / "cp.sqlite",
    )
    assert outcome.status == "certified"
    assert git(repo, "rev-parse", "HEAD") == head


class FlaggingFairness(RuleFairness):
    """A reviewer that always raises one blocker, so the run must stop for a person."""

    def review(self, story, levels, persona_tasks, persona):
        flags = super().review(story, levels, persona_tasks, persona)
        if story == "risk_repair":
            flags.append(
                make_flag(
                    role="fairness",
                    kind="fairness",
                    persona=persona,
                    story=story,
                    task_id="risk_repair_level1",
                    level=1,
                    check="constant_core",
                    severity="blocker",
                    reason="level1 reads differently from its ladder",
                )
            )
        return flags


def test_blockers_interrupt_and_an_approval_resumes_to_commit(sources, repo, mini_world_path):
    graph = build_graph(InMemorySaver(serde=serializer()))
    config = {"configurable": {"thread_id": "t1"}, "recursion_limit": 200}
    opts = options(sources, repo, mini_world_path)
    context = RunContext(opts, drivers(fairness=FlaggingFairness()))
    graph.invoke({"options": opts}, config, context=context)
    snapshot = graph.get_state(config)
    assert snapshot.next == ("review",)
    items = snapshot.tasks[0].interrupts[0].value["items"]
    assert [i["check"] for i in items] == ["constant_core"]
    assert not (repo / "tasksets" / "workspace_tasks" / "desk_head").exists()
    graph.invoke(
        Command(resume={items[0]["id"]: {"verdict": "approve", "by": "ana", "note": "reads fine"}}),
        config,
        context=context,
    )
    result = graph.get_state(config).values["result"]
    assert result.status == "committed"
    lock = json.loads((repo / "tasksets" / "workspace_tasks" / "certificates.json").read_text())
    reviews = lock["tasks"]["risk_repair_level1"]["reviews"]
    assert (
        reviews[0]["verdict"] == "approve"
        and reviews[0]["by"] == "ana"
        and reviews[0]["note"] == "reads fine"
    )


def test_rejection_ends_without_commit(sources, repo, mini_world_path):
    graph = build_graph(InMemorySaver(serde=serializer()))
    config = {"configurable": {"thread_id": "t2"}, "recursion_limit": 200}
    opts = options(sources, repo, mini_world_path)
    context = RunContext(opts, drivers(fairness=FlaggingFairness()))
    graph.invoke({"options": opts}, config, context=context)
    item = graph.get_state(config).tasks[0].interrupts[0].value["items"][0]
    graph.invoke(
        Command(resume={item["id"]: {"verdict": "reject", "by": "ana", "note": "wrong story"}}),
        config,
        context=context,
    )
    assert graph.get_state(config).values["result"].status == "rejected"
    assert not (repo / "tasksets").exists()


def test_bad_facts_stop_before_authoring(sources, repo, mini_world_path, tmp_path):
    from authoring.factcheck import FactErrors

    story = sources / "stories" / "desk_head" / "risk_repair.md"
    story.write_text(story.read_text().replace("status: Closed}", "status: Pending}"))
    with pytest.raises(FactErrors) as info:
        run_persona(
            options(sources, repo, mini_world_path),
            drivers(),
            driver_name="rules",
            checkpoint_path=tmp_path / "cp.sqlite",
        )
    assert "risk_repair.md: facts.params.status" in str(info.value)
    assert not (repo / "tasksets").exists()


def test_the_ladder_family_calibrates_a_persona_and_its_findings_wait_for_review(
    sources, repo, mini_world_path, tmp_path, monkeypatch
):
    from authoring.decisions import decide
    from authoring.factcheck import story
    from authoring.run import checkpointer
    from certify.calibration import load_record

    # The mini world's Find targets are told apart by nothing they serve; with a rival of the same app to stand
    # beside them the pipeline plants a pointer and every level is fair. Where an app offers no such rival (as
    # here, with the pointer taken away), its Find levels stay described by the stories' own hints, which rank
    # another widget first: the ladder's findings. (Patched where `resolve` reads the name: its module.)
    monkeypatch.setattr(story, "find_pointers", lambda *args: [])
    db = tmp_path / "cp.sqlite"
    outcome = run_persona(
        options(sources, repo, mini_world_path, reference_agent="ladder"),
        drivers(),
        driver_name="rules",
        checkpoint_path=db,
    )
    record = outcome.state["calibration"].model_dump()
    assert record["agent"] == "ladder" and record["deterministic"] and record["repeats"] == 1
    assert [row for row in record["ladder"]["agents"]] == [
        "ladder-0",
        "ladder-1",
        "ladder-2",
        "ladder-3",
        "ladder-4",
    ]
    findings = record["ladder"]["findings"]
    ladder_items = [i for i in outcome.items if i["kind"] == "ladder"]
    assert len(ladder_items) == len(findings) > 0 and outcome.status == "needs_review"
    for item in outcome.items:
        with checkpointer(None, db) as saver:
            result = decide(
                repo / "tasksets",
                saver,
                drivers(),
                item["id"],
                "approve",
                by="ana",
                note="the world does not define this level's knowledge yet",
            )
    assert result["run"] == "committed"
    stored = load_record(repo / "tasksets" / "workspace_tasks" / "calibration" / "desk_head")
    assert stored.ladder is not None and len(stored.ladder.cells) == 25
    lock = json.loads((repo / "tasksets" / "workspace_tasks" / "certificates.json").read_text())
    assert set(lock["personas"]["desk_head"]["calibration"]["ladder"]["matrix"]) == set(stored.ladder.agents)


def test_the_run_keeps_calibration_trials_compact_but_a_failure_keeps_its_evidence():
    from authoring.graph.nodes.calibration import evidence as _evidence
    from certify.trial import Trial

    events = [
        {
            "index": 1,
            "tool": "get_widget_data",
            "args": {},
            "ok": True,
            "envelope": {"ok": True, "data": [1] * 50},
        },
        {
            "index": 2,
            "tool": "create_widget",
            "args": {"widget_id": "x"},
            "ok": False,
            "envelope": {"ok": False, "data": None, "error": {"code": "unknown_widget", "message": "No x."}},
        },
    ]
    said = [{"role": "assistant", "content": "I will add x"}]
    passed = Trial(task_id="a_level1", level="level1", agent="m", passed=True, events=events, transcript=said)
    failed = passed.model_copy(update={"passed": False, "failure_codes": ["missing_widget"]})
    small, kept = _evidence(passed), _evidence(failed)
    assert small.transcript == [] and "data" not in small.events[0]["envelope"]
    assert kept.transcript == said, "a failing trial keeps what the model said"
    assert kept.events[1]["envelope"]["error"]["message"] == "No x.", "and each failed call keeps its error"


def test_the_run_reads_the_taskset_defaults_again_only_when_the_manifest_changes(
    sources, repo, mini_world_path
):
    from authoring.graph import Env

    opts = options(sources, repo, mini_world_path)
    env = Env()
    created = env.defaults(opts)
    assert env.defaults(opts) is created, "asked per draft, built once"
    root = opts.taskset_root
    root.mkdir(parents=True, exist_ok=True)
    (root / "taskset.json").write_text(
        json.dumps({"taskset_id": "workspace_tasks", "task_defaults": {"eval": {"max_turns": 7}}})
    )
    assert env.defaults(opts)["eval"]["max_turns"] == 7, "a manifest written meanwhile is read"
