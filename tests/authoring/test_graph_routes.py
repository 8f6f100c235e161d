"""Every route of the authoring graph, each driven by a scripted role and checked by its outcome."""

from __future__ import annotations

import copy
import threading
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from authoring.failures import RoleFailure
from authoring.flags import make_flag
from authoring.graph import RunContext, build_graph, node_names, serializer
from authoring.roles.author import RuleAuthor
from authoring.roles.fairness import RuleFairness
from authoring.roles.fixer import FixResult
from authoring.roles.validator import RuleValidator
from authoring.run import invoke
from certify.agents.base import AGENTS, register_agent
from certify.agents.oracle import OracleAgent, _ListSession
from tests.authoring.conftest import git
from tests.authoring.test_pipeline import drivers, options

ROOT = Path(__file__).resolve().parents[2]


def start(d, opts, thread: str = "t"):
    graph = build_graph(InMemorySaver(serde=serializer()))
    config = {"configurable": {"thread_id": thread}, "recursion_limit": 500}
    invoke(graph, {"options": opts}, config, RunContext(opts, d))
    return graph, config, graph.get_state(config)


class ValidatorOnce(RuleValidator):
    """Blocks one task the first time it sees it."""

    def __init__(self, target: str) -> None:
        self.target, self.seen = target, 0

    def review(self, task, world, persona):
        flags = super().review(task, world, persona)
        if task.id == self.target:
            self.seen += 1
            if self.seen == 1:
                flags.append(
                    make_flag(
                        role="validator",
                        kind="validator",
                        persona=persona,
                        story=task.meta.story,
                        task_id=task.id,
                        level=task.level,
                        check="clarity",
                        severity="blocker",
                        reason="the prompt does not say when it is needed",
                    )
                )
        return flags


class ListeningAuthor(RuleAuthor):
    """The rule author, which also answers a flag by adding the sentence it asks for."""

    def __init__(self) -> None:
        self.feedback: list[tuple[str, int, list[str]]] = []

    def draft(self, ctx, level, feedback, history):
        self.feedback.append((ctx.story.story.slug, level, list(feedback)))
        out = super().draft(ctx, level, feedback, history)
        if any("flag" in f for f in feedback):
            out.task["prompt"] += " Needed before the open."
        return out


def test_validator_blocker_goes_back_to_the_author(sources, repo, mini_world_path):
    author = ListeningAuthor()
    _, _, snap = start(
        drivers(author=author, validator=ValidatorOnce("risk_repair_level2")),
        options(sources, repo, mini_world_path),
    )
    assert snap.values["result"].status == "committed"
    task = snap.values["tasks"]["risk_repair_level2"]
    assert task.raw["prompt"].endswith("Needed before the open.")
    flag = next(f for f in snap.values["flags"].values() if f.check == "clarity")
    assert flag.status == "resolved"
    assert any(
        s == "risk_repair" and lv == 2 and any("validator flag clarity" in f for f in fb)
        for s, lv, fb in author.feedback
    )


class FairnessOnce(RuleFairness):
    def __init__(self) -> None:
        self.calls = 0

    def review(self, story, levels, persona_tasks, persona):
        flags = super().review(story, levels, persona_tasks, persona)
        if story == "morning_positions":
            self.calls += 1
            if self.calls == 1:
                flags.append(
                    make_flag(
                        role="fairness",
                        kind="fairness",
                        persona=persona,
                        story=story,
                        task_id="morning_positions_level3",
                        level=3,
                        check="copy_paste",
                        severity="blocker",
                        reason="level3 reads like level2",
                    )
                )
        return flags


def test_fairness_blocker_goes_back_to_the_author_then_the_set_is_rechecked(sources, repo, mini_world_path):
    author, fairness = ListeningAuthor(), FairnessOnce()
    _, _, snap = start(drivers(author=author, fairness=fairness), options(sources, repo, mini_world_path))
    assert snap.values["result"].status == "committed"
    assert fairness.calls == 2, "the ladder is reviewed again after the revision"
    assert snap.values["tasks"]["morning_positions_level3"].raw["prompt"].endswith("Needed before the open.")
    assert next(f for f in snap.values["flags"].values() if f.check == "copy_paste").status == "resolved"


class FlakyAuthor(RuleAuthor):
    """Writes a level-1 draft with an unknown key first; fixes it when the gates say so."""

    def __init__(self) -> None:
        self.rounds: list[list[str]] = []

    def draft(self, ctx, level, feedback, history):
        out = super().draft(ctx, level, feedback, history)
        if ctx.story.story.slug == "risk_repair" and level == 1:
            self.rounds.append(list(feedback))
            if not feedback:
                out.task["surprise"] = True
        return out


def test_gate_feedback_goes_back_to_the_same_author_session(sources, repo, mini_world_path):
    author, messages = FlakyAuthor(), []
    _, _, snap = start(drivers(messages, author=author), options(sources, repo, mini_world_path))
    assert len(author.rounds) == 2 and author.rounds[0] == []
    assert any(f.startswith("gate schema") and "surprise" in f for f in author.rounds[1])
    assert snap.values["tasks"]["risk_repair_level1"].rounds == 2
    assert any("gates failed, another round" in m for m in messages)
    assert snap.values["result"].status == "committed"


class GarbledAuthor(RuleAuthor):
    """Splits a phrasal verb in one level's request ("point back it") until the gates' feedback names the fault;
    `stubborn` never repairs it."""

    def __init__(self, stubborn: bool = False) -> None:
        self.rounds: list[list[str]] = []
        self.stubborn = stubborn

    def draft(self, ctx, level, feedback, history):
        out = super().draft(ctx, level, feedback, history)
        if ctx.story.story.slug == "risk_repair" and level == 0:
            self.rounds.append(list(feedback))
            if self.stubborn or not any("split_phrasal_verb" in f for f in feedback):
                out.task["prompt"] += " If it drifts, point back it."
        return out


def test_a_prose_fault_goes_back_to_the_author_as_feedback(sources, repo, mini_world_path):
    author = GarbledAuthor()
    _, _, snap = start(drivers(author=author), options(sources, repo, mini_world_path))
    assert len(author.rounds) == 2 and author.rounds[0] == []
    (said,) = [f for f in author.rounds[1] if f.startswith("gate prose")]
    assert "split_phrasal_verb" in said and "point back it" in said
    assert snap.values["result"].status == "committed"


def test_a_prose_fault_the_author_keeps_blocks_the_level(sources, repo, mini_world_path):
    _, _, snap = start(drivers(author=GarbledAuthor(stubborn=True)), options(sources, repo, mini_world_path))
    items = snap.tasks[0].interrupts[0].value["items"]
    blocked = next(i for i in items if i["kind"] == "gate_failure" and i["task_id"] == "risk_repair_level0")
    assert "did not certify" in blocked["reason"] and "gate prose" in blocked["evidence"]
    assert not (repo / "tasksets").exists()


class SilentAuthor(RuleAuthor):
    """A model that never submits level 2 of one story."""

    def draft(self, ctx, level, feedback, history):
        if ctx.story.story.slug == "morning_positions" and level == 2:
            raise RoleFailure(
                "author", "no submit_level call in 12 model rounds", evidence="last reply: 'Sure!'"
            )
        return super().draft(ctx, level, feedback, history)


def test_a_role_failure_becomes_a_review_item_and_the_other_stories_go_on(sources, repo, mini_world_path):
    _, _, snap = start(drivers(author=SilentAuthor()), options(sources, repo, mini_world_path))
    assert snap.next == ("review",)
    items = snap.tasks[0].interrupts[0].value["items"]
    failure = next(i for i in items if i["kind"] == "role_failure")
    assert failure["story"] == "morning_positions" and failure["level"] == 2
    assert "no submit_level" in failure["reason"] and failure["evidence"] == "last reply: 'Sure!'"
    tasks = snap.values["tasks"]
    assert {t for t in tasks if t.startswith("risk_repair")} == {f"risk_repair_level{n}" for n in range(5)}
    assert "morning_positions_level3" not in tasks
    assert not (repo / "tasksets").exists()


# -- calibration routes: a scripted reference agent that fails every level-0 task until the fixer marks it --------
MARK = " (checked)"


class MarkedOracle:
    """Replays the reference, except on level-0 tasks whose prompt lacks the fixer's mark (a defect)."""

    name = "marked-oracle"
    privileged = True

    def session(self, view, task=None):
        if task is not None and task.difficulty == "level0" and not task.prompt.endswith(MARK):
            return _ListSession([])
        return OracleAgent().session(view, task)


class MarkingFixer:
    name = "marking"

    def __init__(self) -> None:
        self.repaired: list[str] = []

    def repair(self, task, defect, trials, world):
        patched = copy.deepcopy(task)
        patched["prompt"] += MARK
        self.repaired.append(defect.task_id)
        return FixResult(
            patched, repaired="marked the prompt", lesson="mark level-0 prompts", skill="task-author"
        )


class RefusingFixer:
    name = "refusing"

    def repair(self, task, defect, trials, world):
        return FixResult(None, escalate="no known repair")


@pytest.fixture
def marked_oracle():
    register_agent("marked-oracle")(lambda name: MarkedOracle())
    yield
    AGENTS.pop("marked-oracle")


def test_calibration_defects_go_to_the_fixer_and_back_through_the_whole_path(
    sources, repo, mini_world_path, marked_oracle
):
    fixer, messages = MarkingFixer(), []
    validator = CountingValidator()
    _, _, snap = start(
        drivers(messages, fixer=fixer, validator=validator),
        options(sources, repo, mini_world_path, reference_agent="marked-oracle"),
    )
    assert sorted(fixer.repaired) == ["morning_positions_level0", "risk_repair_level0"]
    assert snap.values["result"].status == "committed"
    assert snap.values["calibration"].holds is True
    assert all(snap.values["tasks"][t].raw["prompt"].endswith(MARK) for t in fixer.repaired)
    assert validator.seen["risk_repair_level0"] == 2, "the repaired task was validated again"
    assert [m for m in messages if m.startswith("calibration with")][-1].endswith("staircase holds")
    assert sum(1 for m in messages if m.startswith("ladder fairness")) == 2, "fairness reviewed the set again"
    skill = (repo / "skills" / "task-author.md").read_text()
    assert "mark level-0 prompts" in skill
    assert "mark level-0 prompts" in git(repo, "show", "HEAD:skills/task-author.md")


class CountingValidator(RuleValidator):
    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def review(self, task, world, persona):
        self.seen[task.id] = self.seen.get(task.id, 0) + 1
        return super().review(task, world, persona)


def test_an_inverted_staircase_the_fixer_cannot_repair_is_a_blocker(
    sources, repo, mini_world_path, marked_oracle
):
    _, _, snap = start(
        drivers(fixer=RefusingFixer()),
        options(sources, repo, mini_world_path, reference_agent="marked-oracle"),
    )
    assert snap.next == ("review",)
    items = snap.tasks[0].interrupts[0].value["items"]
    kinds = sorted(i["kind"] for i in items)
    assert kinds == ["defect", "defect", "staircase"]
    staircase = next(i for i in items if i["kind"] == "staircase")
    assert "inverted" in staircase["reason"] and "level0" in staircase["evidence"]
    assert not (repo / "tasksets").exists()


def test_a_fix_decision_takes_the_repair_path(sources, repo, mini_world_path, marked_oracle):
    from langgraph.types import Command

    opts = options(sources, repo, mini_world_path, reference_agent="marked-oracle")
    d = drivers(fixer=RefusingFixer())
    graph, config, snap = start(d, opts)
    defect = next(
        i for i in snap.tasks[0].interrupts[0].value["items"] if i["task_id"] == "risk_repair_level0"
    )
    d.fixer = MarkingFixer()
    decision = {defect["id"]: {"verdict": "fix", "by": "ana", "note": ""}}
    invoke(graph, Command(resume=decision), config, RunContext(opts, d))
    after = graph.get_state(config)
    flag = after.values["flags"][defect["id"]]
    assert flag.status == "fixed" and flag.decision["result"] == "marked the prompt"
    assert after.values["tasks"]["risk_repair_level0"].raw["prompt"].endswith(MARK)
    assert after.next == ("review",), "the other defect and the staircase still wait"


# -- stories in parallel; levels of one story in order -------------------------------------------------------------
class BarrierAuthor(RuleAuthor):
    """Each level of each story waits for the same level of the other story: only parallel stories get through."""

    def __init__(self) -> None:
        self.barrier = threading.Barrier(2, timeout=20)
        self.order: list[tuple[str, int]] = []

    def draft(self, ctx, level, feedback, history):
        self.barrier.wait()
        self.order.append((ctx.story.story.slug, level))
        return super().draft(ctx, level, feedback, history)


def test_stories_are_authored_in_parallel_and_levels_in_order(sources, repo, mini_world_path):
    author = BarrierAuthor()
    _, _, snap = start(drivers(author=author), options(sources, repo, mini_world_path))
    assert snap.values["result"].status == "committed"
    for story in ("morning_positions", "risk_repair"):
        assert [lv for s, lv in author.order if s == story] == [0, 1, 2, 3, 4]


def test_each_reference_trial_runs_once_and_the_staircase_is_drawn_once(
    sources, repo, mini_world_path, monkeypatch
):
    """Levels are rehearsed by the (deterministic) reference as they certify; calibration, and the picture drawn
    while the fairness reviewers work, find that work done instead of doing it again."""
    import certify.calibration.plot as plot_module
    import certify.calibration.run as cal

    trials, drawn = [], []
    real_trial, real_draw = cal.run_trial, plot_module._draw

    async def counted(world, task, agent, *args, **kwargs):
        trials.append((task.id, agent.name))
        return await real_trial(world, task, agent, *args, **kwargs)

    monkeypatch.setattr(cal, "run_trial", counted)
    monkeypatch.setattr(plot_module, "_PNGS", type(plot_module._PNGS)())
    monkeypatch.setattr(plot_module, "_draw", lambda r, out: (drawn.append(r.persona), real_draw(r, out)))
    _, _, snap = start(drivers(), options(sources, repo, mini_world_path))
    assert snap.values["result"].status == "committed"
    tasks = snap.values["tasks"]
    assert sorted(trials) == sorted((t, "heuristic") for t in tasks), "one trial per task, never two"
    assert drawn == ["desk_head"]
    png = repo / "tasksets" / "workspace_tasks" / "calibration" / "desk_head" / "staircase.png"
    assert png.read_bytes() == plot_module.png(snap.values["calibration"])


def test_a_story_removed_from_the_persona_deletes_its_tasks_in_the_commit(
    sources, repo, mini_world_path, tmp_path
):
    from authoring.run import run_persona

    db = tmp_path / "cp.sqlite"
    assert (
        run_persona(
            options(sources, repo, mini_world_path), drivers(), driver_name="rules", checkpoint_path=db
        ).status
        == "committed"
    )
    (sources / "stories" / "desk_head" / "morning_positions.md").unlink()
    assert (
        run_persona(
            options(sources, repo, mini_world_path, min_attempts=1),
            drivers(),
            driver_name="rules",
            checkpoint_path=db,
        ).status
        == "committed"
    )
    shown = git(repo, "show", "--name-status", "--format=", "HEAD")
    assert "D\ttasksets/workspace_tasks/desk_head/morning_positions_level0.json" in shown
    assert git(repo, "status", "--porcelain", "--", "tasksets") == ""


def test_the_orchestrator_skill_describes_the_graph_as_built():
    """Node by node, in the module that holds it, and no node the graph does not have."""
    import re

    text = (ROOT / "skills" / "orchestrator.md").read_text()
    section = text.split("## The nodes", 1)[1].split("\n## ", 1)[0]
    described = dict(re.findall(r"^\d+\. `(\w+)` \(`nodes/(\w+)\.py`\) —", section, flags=re.M))
    graph = build_graph()
    built = {
        name: graph.builder.nodes[name].runnable.func.__module__.rsplit(".", 1)[1]
        for name in node_names(graph)
    }
    assert described == built, "skills/orchestrator.md's nodes (and their modules) are not the graph's"


def test_the_live_display_shows_each_story_level_role_and_round():
    from rich.console import Console

    from authoring.progress import LiveProgress

    live = LiveProgress()
    live.update(
        {
            "story": "risk_repair",
            "level": 1,
            "role": "author",
            "round": 2,
            "status": "drafting",
            "message": "risk_repair level1 (Find): round 2",
        }
    )
    live.update(
        {
            "story": "morning_positions",
            "level": 4,
            "role": "gates",
            "round": None,
            "status": "certified",
            "message": "morning_positions level4 (Compose): certified",
        }
    )
    live.update(
        {
            "role": "calibration",
            "status": "running",
            "message": "calibrating with heuristic x3",
            "story": None,
            "level": None,
            "round": None,
        }
    )
    console = Console(width=80, record=True)
    console.print(live.render())
    text = console.export_text()
    assert "risk_repair" in text and "1 Find" in text and "author" in text and "2" in text
    assert "morning_positions" in text and "4 Compose" in text and "certified" in text
    assert "calibration: calibrating with heuristic x3" in text


def test_a_calibration_that_measured_too_little_is_a_blocker_not_a_pass(sources, repo, mini_world_path):
    _, _, snap = start(drivers(), options(sources, repo, mini_world_path, min_attempts=3))
    assert snap.values["calibration"].verdict == "insufficient"
    assert snap.next == ("review",)
    items = snap.tasks[0].interrupts[0].value["items"]
    assert [i["kind"] for i in items] == ["insufficient"]
    assert "fewer than 3 valid attempts" in items[0]["reason"]
    assert not (repo / "tasksets").exists()


def test_publishing_the_same_outputs_twice_commits_once(sources, repo, mini_world_path):
    from authoring.outputs import commit_outputs

    _, _, snap = start(drivers(), options(sources, repo, mini_world_path))
    first = snap.values["result"]
    assert first.status == "committed"
    again = commit_outputs(snap.values["options"], snap.values, graph_world(mini_world_path))
    assert again.status == "committed" and again.commit == first.commit
    assert git(repo, "rev-parse", "HEAD").strip() == first.commit


def graph_world(path):
    from simulator import World

    return World.load(path)


class DownEndpoint(RuleAuthor):
    """An endpoint that stops answering on one story's level 1 until it is switched back on."""

    def __init__(self) -> None:
        self.down, self.attempts = True, 0

    def draft(self, ctx, level, feedback, history):
        from authoring.failures import RoleUnavailable

        if ctx.story.story.slug == "risk_repair" and level == 1 and self.down:
            self.attempts += 1
            raise RoleUnavailable("author", "the endpoint answered 503 after the SDK's retries")
        return super().draft(ctx, level, feedback, history)


def test_an_endpoint_that_stays_down_is_retried_then_stops_the_run_which_resumes(
    sources, repo, mini_world_path, tmp_path
):
    from authoring.run import RunError, run_persona

    author, db = DownEndpoint(), tmp_path / "cp.sqlite"
    with pytest.raises(RunError, match=r"kept failing .*run the same command again"):
        run_persona(
            options(sources, repo, mini_world_path),
            drivers(author=author),
            driver_name="rules",
            checkpoint_path=db,
        )
    assert author.attempts == 3, "the node was retried by its RetryPolicy"
    assert not (repo / "tasksets").exists()
    author.down = False
    messages: list[str] = []
    done = run_persona(
        options(sources, repo, mini_world_path),
        drivers(messages, author=author),
        driver_name="rules",
        checkpoint_path=db,
    )
    assert done.status == "committed" and any(m.startswith("resuming") for m in messages)
    assert not any("morning_positions level0" in m for m in messages), (
        "finished levels are not authored again"
    )
