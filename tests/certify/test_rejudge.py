"""After a judge-template change, judged trials are re-judged from their stored answers, never re-run, and
`recertify` handles it like a grader change: stale certificates re-gated against a fresh audit of the taskset's
judge, stored calibration transcripts re-graded with their answers re-judged."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from certify import recertify as recertify_module
from certify.judge import TEMPLATE_SHA256, StaleJudgment, rejudged, staleness
from certify.judge.audit import load_audits
from certify.lock import CertificateLock
from certify.recertify import recertify
from certify.task import TaskSet, load_task
from certify.trial import Trial, regrade_trial, replay_trial
from simulator import DEFAULT_WORLD, World
from tests.certify.test_judge import ScriptedJudge, model_judge
from tests.model_server import ModelServer

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "tasksets" / "workspace_tasks"
PERSONA, STORY = "portfolio_manager", "keel_europe_tilt"
NEW_TEMPLATE = "f" * 64


@pytest.fixture(scope="module")
def world() -> World:
    return World.load(DEFAULT_WORLD)


def _trials() -> list[Trial]:
    path = SHIPPED / "calibration" / PERSONA / "trials.jsonl"
    return [Trial.model_validate_json(line) for line in path.read_text().splitlines() if STORY in line]


def _task(task_id: str):
    return load_task(SHIPPED / PERSONA / f"{task_id}.json", TaskSet.load(SHIPPED))


@pytest.fixture
def new_template(monkeypatch):
    """The judge template changed: every judge now stamps, and every audit expects, another hash."""
    for module in (
        "certify.judge.grading",
        "certify.judge.rubric",
        "certify.judge.model",
        "certify.judge.audit",
    ):
        monkeypatch.setattr(f"{module}.TEMPLATE_SHA256", NEW_TEMPLATE)
    return NEW_TEMPLATE


def _judged_trials() -> list[Trial]:
    out = [t for t in _trials() if t.judge is not None and t.judge.verdict is not None]
    assert out, "the shipped calibration has judged trials of the analyze story"
    return out


def test_a_verdict_stands_while_its_judge_template_and_input_do(world):
    for trial in _judged_trials()[:3]:
        task = _task(trial.task_id)
        episode = replay_trial(world, task, trial)
        assert staleness(world, task, episode, trial.judge) is None
        again = regrade_trial(world, task, trial)
        assert again.judge == trial.judge and again.passed == trial.passed


def test_after_a_template_change_the_rubric_re_judges_the_stored_answer_without_running_the_agent(
    world, new_template, monkeypatch
):
    def no_agent(*args, **kwargs):
        raise AssertionError("a re-grade never runs an agent")

    monkeypatch.setattr("certify.trial.run_trial", no_agent)
    for trial in _judged_trials():
        task = _task(trial.task_id)
        episode = replay_trial(world, task, trial)
        assert "template" in staleness(world, task, episode, trial.judge)
        again = regrade_trial(world, task, trial)
        assert again.judge.template_sha256 == new_template != trial.judge.template_sha256
        assert again.judge.verdict == trial.judge.verdict and again.passed == trial.passed
        assert again.events == trial.events and again.final_answer == trial.final_answer


def test_a_stale_model_verdict_needs_its_model_and_is_re_judged_by_it(world, new_template):
    trial = next(t for t in _judged_trials() if t.passed)
    task = _task(trial.task_id)
    stored = trial.judge.model_copy(
        update={"judge": "openai:stub-model", "deterministic": False, "template_sha256": TEMPLATE_SHA256}
    )
    modelled = trial.model_copy(update={"judge": stored})
    episode = replay_trial(world, task, modelled)
    with pytest.raises(StaleJudgment, match="re-judge it with that judge"):
        rejudged(world, task, episode, stored)
    left = regrade_trial(world, task, modelled)
    assert not left.valid and left.invalid_reason == "judge_stale" and left.judge == stored

    with ModelServer(ScriptedJudge({task.eval.reference_answer, trial.final_answer})) as server:
        again = regrade_trial(world, task, modelled, judge=model_judge(server))
        calls = len(server.requests)
    assert calls == 1  # one judge call, and no agent turn: the answer is the stored one
    assert again.valid and again.passed and again.judge.judge == "openai:stub-model"
    assert again.judge.template_sha256 == new_template


def _one_story_taskset(tmp_path: Path) -> Path:
    """The shipped taskset cut down to the analyze story of one persona: its tasks, lock entries, calibration
    transcripts and judge audit."""
    root = tmp_path / "workspace_tasks"
    (root / PERSONA).mkdir(parents=True)
    shutil.copy(SHIPPED / "taskset.json", root / "taskset.json")
    for path in sorted((SHIPPED / PERSONA).glob(f"{STORY}_level*.json")):
        shutil.copy(path, root / PERSONA / path.name)
    lock = CertificateLock.load(SHIPPED)
    lock.tasks = {k: v for k, v in lock.tasks.items() if k.startswith(STORY)}
    lock.personas = {PERSONA: lock.personas[PERSONA]}
    lock.write(root)
    calibration = root / "calibration" / PERSONA
    calibration.mkdir(parents=True)
    for name in ("calibration.json", "calibration.md"):
        shutil.copy(SHIPPED / "calibration" / PERSONA / name, calibration / name)
    (calibration / "trials.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in _trials()))
    audits = json.loads((SHIPPED / "judge-audit.json").read_text())
    for audit in audits["audits"].values():
        audit["tasks"] = {k: v for k, v in audit["tasks"].items() if k.startswith(STORY)}
    (root / "judge-audit.json").write_text(json.dumps(audits))
    return root


def test_recertify_treats_a_template_change_like_a_grader_change(world, tmp_path, new_template, monkeypatch):
    root = _one_story_taskset(tmp_path)
    real = recertify_module.code_prints

    def changed(*args, **kwargs):  # the template is judge code: the grader's fingerprint moves with it
        code = real(*args, **kwargs)
        return dataclasses.replace(code, shared=code.shared.model_copy(update={"grader": "changed"}))

    monkeypatch.setattr(recertify_module, "code_prints", changed)
    report = recertify(root, world)
    assert report.stale == 5 and not report.broken
    assert {t.verdict for t in report.tasks} == {"kept"}
    assert all(t.now_certified for t in report.tasks)
    audit = report.judge_audit
    assert audit is not None and audit.template_sha256 == new_template and audit.status == "calibrated"
    assert sorted(audit.tasks) == [f"{STORY}_level{n}" for n in range(5)]
    on_record = load_audits(root).audits["rubric@1"]
    assert on_record.template_sha256 == TEMPLATE_SHA256  # nothing written: the CLI records it with --commit
    (calibration,) = report.calibration
    assert calibration.rejudged == len(_judged_trials()) and calibration.stale_judgments == 0
    assert calibration.moved == []  # re-judged under the new template, every verdict as before
