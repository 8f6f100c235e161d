"""Re-certification after a grader, simulator, world or defaults change.

A certificate is stale when a fingerprint it was issued under no longer matches (or its task file changed).
Stale tasks get their gates re-run; personas with a stale task get their stored calibration transcripts
re-graded by the current grader — no model is called — and their staircase re-checked. The report says which
tasks kept their verdicts, which kept them with different checks, and which now fail.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simulator import World

from .calibration import TRIALS_JSONL, analyse, load_record, load_trials, regrade
from .gates import certify_task
from .grader import CheckFn
from .judge import DEFAULT_JUDGE, Judge
from .judge.audit import JudgeAudit, audit_now, load_audits, merge_audit
from .lock import CertificateLock, CodePrints, Fingerprints, code_prints, now, task_content_hash
from .task import TaskFileError, TaskSet, load_task, read_json


@dataclass
class TaskOutcome:
    task_id: str
    persona: str | None
    reasons: list[str]
    was_certified: bool
    now_certified: bool
    changed_gates: list[str] = field(default_factory=list)
    detail: str = ""
    changes: list[str] = field(
        default_factory=list
    )  # per changed gate: what it said before → what it says now

    @property
    def verdict(self) -> str:
        if self.was_certified and not self.now_certified:
            return "broken"
        if not self.was_certified and self.now_certified:
            return "repaired"
        return "changed" if self.changed_gates else "kept"

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "persona": self.persona,
            "stale_because": self.reasons,
            "verdict": self.verdict,
            "was_certified": self.was_certified,
            "now_certified": self.now_certified,
            "changed_gates": self.changed_gates,
            "changes": self.changes,
            "detail": self.detail,
        }


@dataclass
class CalibrationOutcome:
    persona: str
    trials: int
    moved: list[dict[str, Any]]
    held_before: bool | None
    holds_now: bool | None
    note: str = ""
    rejudged: int = 0
    stale_judgments: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "persona": self.persona,
            "trials": self.trials,
            "moved": self.moved,
            "held_before": self.held_before,
            "holds_now": self.holds_now,
            "note": self.note,
            "rejudged": self.rejudged,
            "stale_judgments": self.stale_judgments,
        }


@dataclass
class RecertifyReport:
    taskset: str
    total: int
    tasks: list[TaskOutcome]
    calibration: list[CalibrationOutcome]
    lock: CertificateLock
    judge_audit: JudgeAudit | None = None

    @property
    def stale(self) -> int:
        return len(self.tasks)

    @property
    def broken(self) -> list[TaskOutcome]:
        return [t for t in self.tasks if t.verdict == "broken"]

    def to_dict(self) -> dict[str, Any]:
        counts: dict[str, int] = {}
        for t in self.tasks:
            counts[t.verdict] = counts.get(t.verdict, 0) + 1
        return {
            "taskset": self.taskset,
            "total": self.total,
            "stale": self.stale,
            "verdicts": counts,
            "tasks": [t.to_dict() for t in self.tasks],
            "calibration": [c.to_dict() for c in self.calibration],
        }


def gate_change(name: str, before: dict[str, Any] | None, after: dict[str, Any] | None) -> str:
    """What a gate said before and says now, so "changed" says what changed."""

    def said(gate: dict[str, Any] | None) -> str:
        if gate is None:
            return "absent"
        mark = "ok" if gate.get("ok") else "FAIL"
        detail = str(gate.get("detail") or "")
        return f"{mark} ({detail})" if detail else mark

    return f"{name}: {said(before)} → {said(after)}"


def stale_reasons(
    cert_prints: Fingerprints, current: Fingerprints, content_now: str | None, content_then: str
) -> list[str]:
    reasons = [
        name
        for name in ("grader", "simulator", "world", "defaults")
        if getattr(cert_prints, name) != getattr(current, name)
    ]
    then, now_ = cert_prints.checks, current.checks
    families = sorted(f for f in set(then) | set(now_) if then.get(f) != now_.get(f))
    if families:
        reasons.append(f"checks ({', '.join(families)})")
    if content_now is None:
        reasons.append("file missing")
    elif content_now != content_then:
        reasons.append("task file changed")
    return reasons


def recertify(
    taskset_root: Path, world: World, registry: dict[str, CheckFn] | None = None, judge: Judge | None = None
) -> RecertifyReport:
    """Re-check every stale certificate of a taskset; returns the report and the updated lock (not written).

    A judge template change is a grader change: every certificate goes stale, judged tasks are re-gated against
    an audit of the taskset's judge under the current template (the rubric's is run here, offline, and returned
    in the report to be recorded; a model judge's is `taskforge judge audit`'s to run), and judged calibration
    trials are re-judged from their stored answers, never re-run (a model's stale verdict by `judge`, that
    model; without it the trial is invalid until re-judged)."""
    lock = CertificateLock.load(taskset_root)
    if lock is None:
        raise TaskFileError(
            str(taskset_root / "certificates.json"),
            "(file)",
            "no certificate lock: nothing has been "
            "certified in this taskset yet (run taskforge author or certify first)",
        )
    taskset = TaskSet.load(taskset_root)
    defaults = taskset.defaults()
    code = code_prints(world, defaults, registry)
    outcomes: list[TaskOutcome] = []
    stale_personas: set[str] = set()
    audit = _rubric_audit(taskset_root, taskset, world, lock, code)
    for task_id, cert in sorted(lock.tasks.items()):
        path = taskset_root / cert.path
        raw = read_json(path) if path.is_file() else None
        content = task_content_hash(raw) if raw is not None else None
        current = code.of_raw(raw, str(path)) if raw is not None else code.shared
        reasons = stale_reasons(cert.fingerprints, current, content, cert.content_sha256)
        if not reasons:
            continue
        if cert.persona:
            stale_personas.add(cert.persona)
        if content is None:
            outcomes.append(
                TaskOutcome(
                    task_id,
                    cert.persona,
                    reasons,
                    cert.certified,
                    False,
                    ["schema"],
                    "the task file is missing",
                )
            )
            cert.certified = False
            continue
        try:
            task = load_task(path, taskset)
            held = audit if task.eval.judged is not None else None
            result = certify_task(world, task, str(path), registry, judge_audit=held)
            gates = {k: v.to_dict() for k, v in result.gates.items()}
            now_ok = result.certified
            current = code.of(task)
        except TaskFileError as exc:
            gates = {"schema": {"ok": False, "detail": str(exc)}}
            now_ok = False
        changed = sorted(
            name for name in set(gates) | set(cert.gates) if gates.get(name) != cert.gates.get(name)
        )
        failing = "; ".join(f"{k}: {v['detail']}" for k, v in gates.items() if not v["ok"])
        changes = [gate_change(name, cert.gates.get(name), gates.get(name)) for name in changed]
        outcomes.append(
            TaskOutcome(task_id, cert.persona, reasons, cert.certified, now_ok, changed, failing, changes)
        )
        cert.gates, cert.certified, cert.fingerprints = gates, now_ok, current
        cert.content_sha256, cert.certified_at = content, now()
    calibrations = []
    for persona in sorted(stale_personas):
        folder = taskset_root / "calibration" / persona
        if not (folder / TRIALS_JSONL).is_file():
            calibrations.append(
                CalibrationOutcome(persona, 0, [], None, None, "no stored calibration transcripts")
            )
            continue
        trials = load_trials(folder)
        tasks = {}
        for cert_id, cert in lock.tasks.items():
            if cert.persona == persona and (taskset_root / cert.path).is_file():
                try:
                    tasks[cert_id] = load_task(taskset_root / cert.path, taskset)
                except TaskFileError:
                    continue
        regraded, moved = regrade(world, tasks, trials, registry, judge)
        rejudged = sum(
            1
            for a, b in zip(trials, regraded, strict=True)
            if b.judge is not None and b.judge != a.judge and b.invalid_reason != "judge_stale"
        )
        stale_judgments = sum(1 for b in regraded if b.invalid_reason == "judge_stale")
        before = load_record(folder) if (folder / "calibration.json").is_file() else None
        after = analyse(
            regraded,
            persona=persona,
            taskset=lock.taskset,
            agent=before.agent if before else (trials[0].agent if trials else "unknown"),
            repeats=before.repeats if before else 1,
        )
        note = (
            f"{stale_judgments} judged trial(s) hold a stale model verdict: recertify with --judge to re-judge"
            if stale_judgments
            else ""
        )
        calibrations.append(
            CalibrationOutcome(
                persona,
                len(trials),
                moved,
                before.holds if before else None,
                after.holds,
                note,
                rejudged,
                stale_judgments,
            )
        )
        record = lock.personas.get(persona)
        if record is not None:
            record.calibration = {**record.calibration, **after.summary(), "regraded_at": now()}
    return RecertifyReport(lock.taskset, len(lock.tasks), outcomes, calibrations, lock, audit)


def _rubric_audit(
    root: Path, taskset: TaskSet, world: World, lock: CertificateLock, code: CodePrints
) -> JudgeAudit | None:
    """The rubric's audit of the taskset's judged tasks, run again when the taskset's judge is the rubric and one
    of its judged tasks is stale (merged onto the record's entries for the others); None when no audit is due."""
    if (taskset.manifest.judge or DEFAULT_JUDGE) != DEFAULT_JUDGE:
        return None
    judged = []
    for cert in lock.tasks.values():
        path = root / cert.path
        if not path.is_file():
            continue
        raw = read_json(path)
        content = task_content_hash(raw)
        if not stale_reasons(cert.fingerprints, code.of_raw(raw, str(path)), content, cert.content_sha256):
            continue
        try:
            task = load_task(path, taskset)
        except TaskFileError:
            continue
        if task.eval.judged is not None:
            judged.append((Path(cert.path), task))
    if not judged:
        return None
    record = load_audits(root)
    fresh = audit_now(world, judged)
    return merge_audit(record.audits.get(fresh.judge) if record is not None else None, fresh)
