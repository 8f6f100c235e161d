"""Fingerprints per check family: a task's certificate depends on the shared grader core and on the check
families its eval uses, so an edit to one family re-certifies only the tasks that use it.

Soundness rests on grading: a check runs for a task only when the task sets one of the eval fields it is
conditional on. These tests pin that grading with the conditions gives what grading every check gives (on every
shipped task, for the reference, doing nothing and every shortcut agent), that a condition cannot name a field
that does not exist, that a family's code follows its imports, and — through `taskforge recertify` on a copy of
the code and a separate destination repository — which tasks an edit makes stale.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from certify import lock
from certify.episode import replay
from certify.grader import CHECKS, GradeContext, GradeResult, check, grade
from certify.lock import CertificateLock, family_fingerprints
from certify.shortcuts import run_battery
from certify.task import TaskSet, load_task
from simulator import DEFAULT_WORLD, World

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "tasksets" / "workspace_tasks"
PERSONA = "portfolio_manager"
JUDGED = "keel_europe_tilt"  # the persona's analyze story: its tasks alone use the answer checks


@pytest.fixture(scope="module")
def world() -> World:
    return World.load(DEFAULT_WORLD)


def _shipped_tasks():
    taskset = TaskSet.load(SHIPPED)
    for path in sorted(SHIPPED.glob("*/*.json")):
        if path.parent.name not in ("calibration", "reviews"):
            yield load_task(path, taskset)


def _every_check(task, episode) -> GradeResult:
    ctx = GradeContext(task, episode.workspace, episode.events, episode.final_answer)
    return GradeResult([r for fn in CHECKS.values() for r in fn(ctx)])


def test_grading_skips_only_checks_that_would_say_nothing(world):
    """The conditions are exact enough to be sound: on every shipped task, for the reference, doing nothing and
    every shortcut agent, a check left out for the task would have yielded no result at all."""
    tasks = list(_shipped_tasks())
    assert len(tasks) == 120
    graded = 0
    for task in tasks:
        steps = [(s.tool, s.args) for s in task.eval.reference_steps()]
        episodes = [replay(world, task, steps, task.eval.reference_answer), replay(world, task, [])]
        episodes += [run.episode for run in run_battery(world, task)]
        for episode in episodes:
            assert grade(task, episode).to_dict() == _every_check(task, episode).to_dict(), task.id
            graded += 1
    assert graded == 120 * (2 + len(run_battery(world, tasks[0])))


def test_a_condition_must_name_an_eval_field():
    with pytest.raises(ValueError, match="Eval has no field 'required_widgetz'"):
        check("never_registered", when=("required_widgetz",))
    with pytest.raises(ValueError, match="RequiredWidget has no field 'max_cnt'"):
        check("never_registered", when=("required_widgets.max_cnt",))
    assert "never_registered" not in CHECKS


def test_which_families_a_task_uses_follows_its_eval():
    by_id = {t.id: t for t in _shipped_tasks()}
    judged = family_fingerprints(by_id[f"{JUDGED}_level0"].eval)
    plain = family_fingerprints(by_id["pre_open_movers_level0"].eval)
    assert "answer_checks" in judged and "answer_checks" not in plain
    assert {"state_checks", "trace_checks"} <= set(plain)  # unconditional checks live there
    assert judged["state_checks"] == plain["state_checks"]  # a family's code, not the task's


def test_a_family_counts_the_check_modules_it_imports():
    files = {p.name for p in lock._family_files("certify.grader.negative_checks")}
    assert files == {"negative_checks.py", "state_checks.py"}  # it borrows state_checks' matchers
    assert {p.name for p in lock._family_files("certify.grader.answer_checks")} == {"answer_checks.py"}


def test_a_family_module_is_parsed_once_while_unchanged_and_again_when_it_changes(tmp_path, monkeypatch):
    package = tmp_path / "pkg"
    package.mkdir()
    for name in ("a", "b", "c"):
        (package / f"{name}.py").write_text("X = 1\n")
    monkeypatch.setattr(lock, "_PACKAGES", tmp_path)
    a = package / "a.py"
    a.write_text("from .b import X\n")
    assert [p.name for p in lock._imported_files(a)] == ["b.py"]
    assert lock._imported_files(a) == lock._imported_files(a)  # the same answer, from the cache
    a.write_text("from .c import X  # another import, another size\n")
    assert [p.name for p in lock._imported_files(a)] == ["c.py"]


# --------------------------------------------------------------------- through the CLI, on a copy of the code
def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _destination(tmp_path: Path) -> Path:
    """A destination repository holding one shipped persona cut to two stories (one of them judged), with its
    lock entries, calibration transcripts and judge audit, committed."""
    repo = tmp_path / "dest"
    root = repo / "workspace_tasks"
    stories = (JUDGED, "pre_open_movers")
    (root / PERSONA).mkdir(parents=True)
    shutil.copy(SHIPPED / "taskset.json", root / "taskset.json")
    for story in stories:
        for path in sorted((SHIPPED / PERSONA).glob(f"{story}_level*.json")):
            shutil.copy(path, root / PERSONA / path.name)
    shipped = CertificateLock.load(SHIPPED)
    assert shipped is not None
    shipped.tasks = {k: v for k, v in shipped.tasks.items() if k.startswith(stories)}
    record = shipped.personas[PERSONA]
    record.tasks = sorted(shipped.tasks)
    shipped.personas = {PERSONA: record}
    shipped.write(root)
    calibration = root / "calibration" / PERSONA
    calibration.mkdir(parents=True)
    for name in ("calibration.json", "calibration.md"):
        shutil.copy(SHIPPED / "calibration" / PERSONA / name, calibration / name)
    lines = (SHIPPED / "calibration" / PERSONA / "trials.jsonl").read_text().splitlines()
    kept = [line for line in lines if json.loads(line)["task_id"].startswith(stories)]
    (calibration / "trials.jsonl").write_text("".join(line + "\n" for line in kept))
    audits = json.loads((SHIPPED / "judge-audit.json").read_text())
    for audit in audits["audits"].values():
        audit["tasks"] = {k: v for k, v in audit["tasks"].items() if k.startswith(JUDGED)}
    (root / "judge-audit.json").write_text(json.dumps(audits))
    _git(repo, "init", "-q")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "tasks")
    return repo


def _recertify(code: Path, dest: Path, *extra: str) -> dict:
    env = {
        **os.environ,
        "PYTHONPATH": str(code),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from authoring.cli import app; app()",
            "recertify",
            "--tasksets-dir",
            str(dest),
            "--json",
            *extra,
        ],
        cwd=code,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode in (0, 1), out.stderr[-2000:]
    report = json.loads(out.stdout)
    assert not report["verdicts"].get("broken"), report
    return report


def _edit(path: Path) -> None:
    """A change to the code that moves no verdict: a private helper added."""
    text = path.read_text()
    at = text.index("\ndef ") + 1
    path.write_text(text[:at] + "def _edited_helper() -> None:\n    return None\n\n\n" + text[at:])


def test_an_edit_to_one_check_family_recertifies_only_the_tasks_that_use_it(tmp_path):
    code = tmp_path / "code"
    for package in ("authoring", "certify", "simulator"):
        shutil.copytree(ROOT / package, code / package, ignore=shutil.ignore_patterns("__pycache__"))
    dest = _destination(tmp_path)
    # the code under test is the copy: it must be the one imported
    probe = subprocess.run(
        [sys.executable, "-c", "import certify; print(certify.__file__)"],
        env={**os.environ, "PYTHONPATH": str(code)},
        cwd=code,
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stdout.strip().startswith(str(code))
    _recertify(code, dest, "--commit")  # current with this code, whatever the shipped lock was issued under
    assert _recertify(code, dest)["stale"] == 0

    _edit(code / "certify" / "grader" / "answer_checks.py")
    report = _recertify(code, dest, "--commit")
    assert sorted(t["task_id"] for t in report["tasks"]) == [f"{JUDGED}_level{n}" for n in range(5)]
    assert {tuple(t["stale_because"]) for t in report["tasks"]} == {("checks (answer_checks)",)}
    assert _recertify(code, dest)["stale"] == 0

    _edit(code / "certify" / "grader" / "state_checks.py")  # negative and definition checks import it
    report = _recertify(code, dest, "--commit")
    assert report["stale"] == 10
    assert {tuple(t["stale_because"]) for t in report["tasks"]} == {
        ("checks (definition_checks, negative_checks, state_checks)",)
    }

    _edit(code / "certify" / "grader" / "core.py")  # the shared core counts for every task
    report = _recertify(code, dest)
    assert report["stale"] == 10 and {tuple(t["stale_because"]) for t in report["tasks"]} == {("grader",)}
