"""The judge audit: a judge is a grader only once it has been certified like one, task by task.

For every judged task of a taskset, the judge is asked about four answers on the reference's own trace: the
exemplar (must PASS) and the three mutants (must FAIL; see mutants.py). A case whose first verdict is the
expected one is calibrated. One that disagrees goes to a majority of `repeats` votes (three by default): rescued
by the majority, it is a *boundary* case — reported, accepted, worth a look; not rescued, it is MISCALIBRATED,
and the task cannot be certified with that judge. A deterministic judge is asked once: a second vote could only
repeat the first. A case that could get no verdict (endpoint down, budget spent, replies never in protocol) is
*unsettled*: the audit is incomplete, never passed.

The result is recorded beside the manifest, in `<taskset>/judge-audit.json`, one entry per judge identity,
with the template's version and hash and, per task, the hash of the judge's input (`case_sha256`). `certify`'s
judge gate accepts a judged task only when the taskset's judge has an entry under the current template whose
record of the task matches the task as it is now and is calibrated or boundary.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from simulator import World

from ..episode import FINAL_ANSWER, Episode, reference_calls, replay
from ..task import JUDGE_AUDIT_FILE, Task, TaskFileError, TaskSet, load_task, read_json
from .case import DataBlock, JudgeCase, build_case, case_of, reference_data
from .mutants import CASES, EXEMPLAR, EXPECTED, answer_for
from .registry import DEFAULT_JUDGE, Judge, judge_identity
from .template import TEMPLATE_SHA256, TEMPLATE_VERSION
from .verdict import JudgeSpend, JudgeUnavailable, PointLabel, Verdict

CaseStatus = Literal["calibrated", "boundary", "miscalibrated", "unsettled"]
AuditStatus = Literal["calibrated", "miscalibrated", "incomplete", "empty"]
AUDITED = ("calibrated", "boundary")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CaseAudit(_Strict):
    case: str
    expected: Verdict
    verdict: Verdict | None = None
    votes: list[Verdict] = Field(default_factory=list)
    status: CaseStatus
    labels: list[PointLabel] = Field(default_factory=list)
    error: str | None = None


class TaskAudit(_Strict):
    task_id: str
    path: str
    case_sha256: str
    status: CaseStatus
    cases: list[CaseAudit]


class JudgeAudit(_Strict):
    judge: str
    label: str
    deterministic: bool
    template_version: str
    template_sha256: str
    repeats: int
    created_at: str
    status: AuditStatus
    tasks: dict[str, TaskAudit] = Field(default_factory=dict)
    spend: JudgeSpend = Field(default_factory=JudgeSpend)

    def count(self, status: CaseStatus) -> int:
        return sum(1 for t in self.tasks.values() if t.status == status)

    @property
    def passed(self) -> bool:
        return self.status in ("calibrated", "empty")


class AuditFile(_Strict):
    format: Literal[1] = 1
    audits: dict[str, JudgeAudit] = Field(default_factory=dict)


def judged_tasks(taskset: TaskSet) -> list[tuple[Path, Task]]:
    """The taskset's judged tasks with their files; a file that does not parse stops with its file and field."""
    out = []
    for path in taskset.task_files():
        task = load_task(path, taskset)
        if task.eval.judged is not None:
            out.append((path, task))
    return out


async def audit_case(judge: Judge, case: JudgeCase, name: str, repeats: int) -> tuple[CaseAudit, JudgeSpend]:
    """One audit case: a vote, and on a disagreement with the expected verdict the majority of `repeats` votes
    (unless the judge is deterministic). Transport failures are never votes: a case that gets no verdict is
    unsettled."""
    expected: Verdict = EXPECTED[name]  # type: ignore[assignment]
    spend = JudgeSpend()
    votes: list[Verdict] = []
    labels: list[PointLabel] = []
    need = repeats // 2 + 1
    while len(votes) < repeats:
        try:
            judgment = await judge.judge(case, len(votes))
        except JudgeUnavailable as exc:
            spend.add(exc.spend)
            audit = CaseAudit(case=name, expected=expected, votes=votes, status="unsettled", error=str(exc))
            return audit, spend
        spend.add(judgment.spend)
        if judgment.verdict is None:
            raise ValueError(f"{judge.identity} returned a judgment without a verdict")
        votes.append(judgment.verdict)
        labels = labels or judgment.labels
        if votes == [expected]:
            return CaseAudit(
                case=name,
                expected=expected,
                verdict=expected,
                votes=votes,
                status="calibrated",
                labels=labels,
            ), spend
        if judge.deterministic or max(votes.count("PASS"), votes.count("FAIL")) >= need:
            break
    majority: Verdict = "PASS" if votes.count("PASS") > votes.count("FAIL") else "FAIL"
    rescued = not judge.deterministic and votes.count(expected) >= need
    status: CaseStatus = "boundary" if rescued else "miscalibrated"
    return CaseAudit(
        case=name, expected=expected, verdict=majority, votes=votes, status=status, labels=labels
    ), spend


Progress = Callable[[str, str, CaseAudit], None]


async def run_audit(
    world: World,
    tasks: list[tuple[Path, Task]],
    judge: Judge,
    *,
    repeats: int = 3,
    concurrency: int = 4,
    progress: Progress | None = None,
) -> JudgeAudit:
    """Audit `judge` on every judged task of `tasks`: the exemplar and the three mutants, on the reference's
    trace, `concurrency` cases at once."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    semaphore = asyncio.Semaphore(max(concurrency, 1))
    judged = [(p, t) for p, t in tasks if t.eval.judged is not None]
    prepared: list[tuple[Path, Task, dict[str, JudgeCase]]] = []
    for path, task in judged:
        available = reference_data(world, task)
        prepared.append((path, task, {c: audit_input(world, task, c, available) for c in CASES}))

    async def one(task: Task, name: str, case: JudgeCase) -> tuple[CaseAudit, JudgeSpend]:
        async with semaphore:
            result, spend = await audit_case(judge, case, name, repeats)
        if progress is not None:
            progress(task.id, name, result)
        return result, spend

    outcomes = await asyncio.gather(*(one(t, n, c) for _, t, cases in prepared for n, c in cases.items()))
    spend = JudgeSpend()
    entries: dict[str, TaskAudit] = {}
    it = iter(outcomes)
    for path, task, cases in prepared:
        results = []
        for _ in cases:
            result, cost = next(it)
            spend.add(cost)
            results.append(result)
        entries[task.id] = TaskAudit(
            task_id=task.id,
            path=str(path),
            case_sha256=cases[EXEMPLAR].sha256(),
            status=_worst(r.status for r in results),
            cases=results,
        )
    status = _status(entries)
    return JudgeAudit(
        judge=judge.identity,
        label=judge.label,
        deterministic=judge.deterministic,
        template_version=TEMPLATE_VERSION,
        template_sha256=TEMPLATE_SHA256,
        repeats=1 if judge.deterministic else repeats,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        status=status,
        tasks=entries,
        spend=spend,
    )


def audit_now(world: World, tasks: list[tuple[Path, Task]], judge: Judge | None = None) -> JudgeAudit:
    """`run_audit` from synchronous code (an author gating its drafts, `recertify`): the rubric by default. Runs
    on a thread of its own when the caller is inside an event loop."""
    from .registry import default_judge

    coroutine = run_audit(world, tasks, judge or default_judge(), concurrency=1)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def merge_audit(current: JudgeAudit | None, audit: JudgeAudit) -> JudgeAudit:
    """`audit` with the entries of `current` it does not cover, when both are the same judge under the same
    template: one persona's run records its own tasks without dropping the others'."""
    if current is None or (current.judge, current.template_sha256) != (audit.judge, audit.template_sha256):
        return audit
    return restrict(audit, {**current.tasks, **audit.tasks})


def restrict(audit: JudgeAudit, tasks: dict[str, TaskAudit]) -> JudgeAudit:
    """`audit` over `tasks` (sorted by id), its status recomputed from them."""
    return audit.model_copy(update={"tasks": dict(sorted(tasks.items())), "status": _status(tasks)})


def _status(entries: dict[str, TaskAudit]) -> AuditStatus:
    statuses = {e.status for e in entries.values()}
    if not entries:
        return "empty"
    if "miscalibrated" in statuses:
        return "miscalibrated"
    return "incomplete" if "unsettled" in statuses else "calibrated"


def audit_input(world: World, task: Task, case: str, available: list[DataBlock] | None = None) -> JudgeCase:
    """The judge's input for one audit case: the reference's calls, then the case's answer."""
    steps = [(tool, args) for tool, args in reference_calls(task) if tool != FINAL_ANSWER]
    episode = replay(world, task, steps, answer_for(task, case))
    return build_case(world, task, episode.events, episode.final_answer, available)


def _worst(statuses) -> CaseStatus:
    order: tuple[CaseStatus, ...] = ("miscalibrated", "unsettled", "boundary", "calibrated")
    found = set(statuses)
    return next((s for s in order if s in found), "calibrated")


def audit_path(root: Path) -> Path:
    return Path(root) / JUDGE_AUDIT_FILE


def load_audits(root: Path) -> AuditFile | None:
    """The taskset's audit record, None when there is none; a damaged one is a TaskFileError naming the field."""
    path = audit_path(root)
    if not path.is_file():
        return None
    raw = read_json(path)
    try:
        return AuditFile.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        raise TaskFileError(str(path), loc, msg) from exc


# The record `standing` holds each judged task against, by the file's path and exact bytes: every judged task of a
# taskset reads the same record, so it is parsed and validated once while the file says the same. Read-only: the
# model is shared by those reads (a writer loads its own with `load_audits`).
_ON_RECORD: dict[Path, tuple[bytes, AuditFile]] = {}


def audits_on_record(root: Path) -> AuditFile | None:
    """`load_audits(root)`, shared by the reads of an unchanged file (do not edit what it returns)."""
    path = audit_path(root)
    try:
        data = path.read_bytes()
    except OSError:
        return load_audits(root)
    held = _ON_RECORD.get(path)
    if held is not None and held[0] == data:
        return held[1]
    record = load_audits(root)
    if record is not None:
        _ON_RECORD.clear()  # one taskset's record at a time: a certification reads one or a few
        _ON_RECORD[path] = (data, record)
    return record


def render_audit(root: Path, audit: JudgeAudit) -> tuple[Path, bytes]:
    """The taskset's audit record with `audit` in it (other judges' entries are kept; task paths relative to
    the taskset, so the record can be committed): where it goes and its bytes, for a caller that journals what
    it writes before writing it."""
    current = load_audits(root) or AuditFile()
    audit = audit.model_copy(deep=True)
    for entry in audit.tasks.values():
        path = Path(entry.path)
        if path.is_absolute() and path.is_relative_to(Path(root).resolve()):
            entry.path = str(path.relative_to(Path(root).resolve()))
        elif not path.is_absolute() and path.is_relative_to(Path(root)):
            entry.path = str(path.relative_to(Path(root)))
    current.audits[audit.judge] = audit
    text = json.dumps(current.model_dump(), indent=2, ensure_ascii=False) + "\n"
    return audit_path(root), text.encode("utf-8")


def record_audit(root: Path, audit: JudgeAudit) -> Path:
    """Write `audit` into the taskset's record (see `render_audit`), atomically."""
    path, data = render_audit(root, audit)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return path


def standing(task_path: str, task: Task, world: World, exemplar: Episode) -> tuple[bool, str]:
    """Whether a judged task may be certified: its taskset's judge has a current audit on record that covers
    the task as it is now (the same judge input) and found the judge calibrated on it. `exemplar` is the
    reference's episode with the exemplar answer (the oracle replay)."""
    spec = task.eval.judged
    assert spec is not None
    if spec.skill is not None and spec.skill not in world.skills:
        return False, f"eval.judge_evaluation.skill: '{spec.skill}' is not a skill of the world"
    path = Path(task_path)
    taskset = TaskSet.find(path) if path.exists() else None
    if taskset is None:
        return False, (
            "a judged task is certified against its taskset's judge audit, and this file belongs to no taskset "
            "(no taskset.json at or above it)"
        )
    name = taskset.manifest.judge or DEFAULT_JUDGE
    try:
        identity = judge_identity(name)
    except ValueError as exc:
        return False, f"{taskset.root / 'taskset.json'}: judge: {exc}"
    run = f"run taskforge judge audit --taskset {taskset.root}" + (
        "" if name == DEFAULT_JUDGE else f" --judge {name}"
    )
    try:
        record = audits_on_record(taskset.root)
    except TaskFileError as exc:
        return False, str(exc)
    audit = record.audits.get(identity) if record is not None else None
    if audit is None:
        return False, f"no audit of the judge {identity} on record in {audit_path(taskset.root)}; {run}"
    return standing_in(audit, task, world, exemplar, run)


def standing_in(audit: JudgeAudit, task: Task, world: World, exemplar: Episode, run: str) -> tuple[bool, str]:
    """Whether `audit` (on record, or just run in memory by an author gating its own draft) admits the task as
    it is now; `run` says how to audit again."""
    identity = audit.judge
    if audit.template_sha256 != TEMPLATE_SHA256:
        return False, (
            f"the audit of {identity} ran under judge template v{audit.template_version} "
            f"({audit.template_sha256[:12]}), not the current v{TEMPLATE_VERSION} ({TEMPLATE_SHA256[:12]}); {run}"
        )
    entry = audit.tasks.get(task.id)
    if entry is None:
        return False, f"the audit of {identity} ({audit.created_at}) does not cover this task; {run}"
    if entry.case_sha256 != case_of(world, task, exemplar).sha256():
        return False, (
            f"the task, its reference or the world changed since the audit of {identity} ({audit.created_at}); {run}"
        )
    if entry.status not in AUDITED:
        bad = [
            f"{c.case}: {c.status} ({'/'.join(c.votes) or c.error or 'no verdict'})"
            for c in entry.cases
            if c.status not in AUDITED
        ]
        return False, f"the judge {identity} is {entry.status.upper()} on this task: {'; '.join(bad)}"
    boundary = [c.case for c in entry.cases if c.status == "boundary"]
    return True, (
        f"judge {identity} audited under template v{TEMPLATE_VERSION}: the exemplar passes and the three mutants fail"
        + (f" (boundary, rescued by a majority: {', '.join(boundary)})" if boundary else "")
    )
