"""Evaluation runs: many trials of one agent over a taskset, concurrently, recorded as they finish.

A run is a folder `<runs_dir>/<run_id>/`: `run.json` (who, what, when, with which options; written first and
rewritten with the outcome), `trials.jsonl` (one Trial per line, appended and flushed the moment it finishes,
so a killed run keeps every finished transcript) and `report.json` (the aggregate). Stored trials carry their
full trace, so `load_run` + `regrade_trial` re-grade a run after a grader change without calling any model.

Aggregation follows the rule that a trial which does not describe the agent (invalid) never counts: it is
excluded from every rate and from the agent's behaviour figures (turns, tool calls, parse counts) and counted
apart. Tokens and cost include invalid trials, because that money was spent. What judging answers cost is
reported apart from the agent's (`judge`: calls, tokens, cost, verdicts), since a judge can be a large share of
a run's real cost.

Reliability across repeats is reported as tau2-bench does: pass^k, the chance that k attempts at a task all
pass, estimated per task from its n valid trials as C(c, k) / C(n, k) and averaged over tasks; and as
consistency, the share of tasks whose valid trials all agree (all pass or all fail).

A retry (`plan_retry`, then `retry_invalid`) re-runs the invalid (or never finished) trials of a run into the
same folder with the run's own agent, taskset, world and model settings: the new trial is appended, and the
latest trial of each (task, repeat) is the one counted (`current`). Valid trials, passes and failures alike,
are never re-run: a retry repairs what did not measure the agent, it does not give the agent another chance.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import secrets
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from simulator import World

from .agents import Agent
from .calibration.stats import distribution, pass_hat_k, wilson
from .judge import Judge, JudgeSummary
from .task import LEVELS, Task, TaskFileError, TaskSet, load_task
from .trial import Trial, run_trial

DEFAULT_RUNS_DIR = Path(".taskforge") / "runs"
RUN_FILE, TRIALS_FILE, REPORT_FILE = "run.json", "trials.jsonl", "report.json"

Progress = Callable[[Trial, int, int], None]


class RunRecord(BaseModel):
    """run.json: enough to know what a folder of trials measured and whether it finished."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    agent: str
    taskset: str | None = None
    world: str | None = None
    tasks: int
    task_ids: list[str] = Field(default_factory=list)
    repeats: int
    planned_trials: int
    started_at: str
    finished_at: str | None = None
    status: str = "running"
    completed_trials: int = 0
    options: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    retries: list[dict[str, Any]] = Field(default_factory=list)


@dataclass
class EvalRun:
    run_dir: Path
    record: RunRecord
    trials: list[Trial] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def select_tasks(taskset_dir: Path, persona: str | None = None) -> list[Task]:
    """The tasks of a taskset folder, optionally one persona's: those under DIR/<persona>/ or whose metadata
    names the persona. A task file that does not parse stops the selection with its file and field."""
    taskset = TaskSet.load(taskset_dir)
    tasks = []
    personas = set()
    for path in taskset.task_files():
        task = load_task(path, taskset)
        rel = path.relative_to(taskset.root)
        folder = rel.parts[0] if len(rel.parts) > 1 else None
        declared = {p for p in (task.persona, task.meta.persona if task.meta else None) if p}
        personas.update(declared | ({folder} if folder else set()))
        if persona is None or persona == folder or persona in declared:
            tasks.append(task)
    if persona is not None and not tasks:
        known = ", ".join(sorted(personas)) or "none"
        raise TaskFileError(
            str(taskset_dir), "--persona", f"no task belongs to persona '{persona}' (personas found: {known})"
        )
    return tasks


def choose_tasks(tasks: list[Task], ids: list[str] | None = None, limit: int | None = None) -> list[Task]:
    """The tasks named by `ids` (in the order given) or all, then the first `limit` of them."""
    if ids:
        by_id = {t.id: t for t in tasks}
        unknown = [i for i in ids if i not in by_id]
        if unknown:
            close = difflib.get_close_matches(unknown[0], list(by_id), n=3)
            hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
            raise ValueError(f"--task: no task '{unknown[0]}' in the selection{hint}")
        tasks = [by_id[i] for i in dict.fromkeys(ids)]
    return tasks[:limit] if limit is not None else tasks


def current(trials: Iterable[Trial]) -> list[Trial]:
    """The latest trial of each (task, repeat): a retried trial replaces the invalid one before it."""
    latest: dict[tuple[str, int], Trial] = {}
    for t in trials:
        latest.pop((t.task_id, t.repeat), None)
        latest[(t.task_id, t.repeat)] = t
    return list(latest.values())


def reliability(trials: Iterable[Trial]) -> dict[str, Any]:
    """Per-task results across repeats, pass^k for k = 1..max n, and consistency (valid trials only)."""
    by_task: dict[str, list[Trial]] = {}
    for t in sorted(trials, key=lambda t: (t.task_id, t.repeat)):
        by_task.setdefault(t.task_id, []).append(t)
    rows: list[dict[str, Any]] = []
    for task_id, attempts in by_task.items():
        valid = [t for t in attempts if t.valid]
        rows.append(
            {
                "task_id": task_id,
                "level": attempts[0].level,
                "trials": len(valid),
                "passes": sum(1 for t in valid if t.passed),
                "invalid": len(attempts) - len(valid),
                "results": ["invalid" if not t.valid else "pass" if t.passed else "fail" for t in attempts],
            }
        )
    pass_k = {}
    for k in range(1, max((r["trials"] for r in rows), default=0) + 1):
        eligible = [r for r in rows if r["trials"] >= k]
        pass_k[str(k)] = {
            "value": round(sum(pass_hat_k(r["passes"], r["trials"], k) for r in eligible) / len(eligible), 4),
            "tasks": len(eligible),
        }
    repeated = [r for r in rows if r["trials"] >= 2]
    agree = sum(1 for r in repeated if r["passes"] in (0, r["trials"]))
    return {
        "tasks": rows,
        "pass_k": pass_k,
        "consistency": {
            "value": round(agree / len(repeated), 4) if repeated else None,
            "agree": agree,
            "tasks": len(repeated),
        },
    }


def aggregate(trials: Iterable[Trial]) -> dict[str, Any]:
    """The report of a run: per-level pass rates with Wilson 95% intervals over valid trials, per-task results,
    pass^k and consistency across repeats, and the rest. A run's trials go through `current` first."""
    trials = list(trials)
    valid = [t for t in trials if t.valid]
    levels = []
    for level in sorted(
        {t.level for t in trials}, key=lambda lv: (LEVELS.index(lv) if lv in LEVELS else 99, lv)
    ):
        attempts = [t for t in valid if t.level == level]
        passes = sum(1 for t in attempts if t.passed)
        lo, hi = wilson(passes, len(attempts))
        levels.append(
            {
                "level": level,
                "attempts": len(attempts),
                "passes": passes,
                "rate": round(passes / len(attempts), 4) if attempts else None,
                "ci": [round(lo, 4), round(hi, 4)],
            }
        )
    codes = Counter(code for t in valid if not t.passed for code in dict.fromkeys(t.failure_codes))
    return {
        "levels": levels,
        "invalid": len(trials) - len(valid),
        "failure_codes": dict(sorted(codes.items(), key=lambda kv: (-kv[1], kv[0]))),
        "tokens": {
            "in": sum(t.tokens_in for t in trials),
            "out": sum(t.tokens_out for t in trials),
            "cached": sum(t.tokens_cached for t in trials),
        },
        "cost": round(sum(t.cost for t in trials), 6),
        "turns": distribution([t.turns for t in valid]),
        "tool_calls": distribution([t.tool_calls for t in valid]),
        "parse": {
            "strict": sum(t.strict_parses for t in valid),
            "lenient": sum(t.lenient_parses for t in valid),
            "failed": sum(t.failed_parses for t in valid),
        },
        "trials": len(trials),
        **reliability(trials),
        **judge_report(trials),
    }


def judge_report(trials: Iterable[Trial]) -> dict[str, Any]:
    """What judging the answers took, apart from the agent's tokens and cost: `{"judge": {...}}` when a judge
    saw any trial, else nothing (a run without judged tasks reports as before). Invalid trials count too: their
    judge calls were paid for."""
    summary = JudgeSummary.of([t.judge for t in trials if t.judge is not None])
    return {"judge": summary.model_dump()} if summary is not None else {}


def invalid_reasons(trials: Iterable[Trial]) -> dict[str, int]:
    return dict(Counter(t.invalid_reason or "unknown" for t in trials if not t.valid))


def _write_json(path: Path, obj: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


class RunWriter:
    """A run folder being written: each trial appended to trials.jsonl and flushed the moment it is added (a
    killed process keeps every finished trial), report.json and the final run.json on close. Shared by every
    producer of trials (`evaluate`, `retry_invalid`, the MCP server), so their runs read the same."""

    def __init__(self, run: EvalRun) -> None:
        self.run = run
        self._sink = (run.run_dir / TRIALS_FILE).open("a", encoding="utf-8")

    @classmethod
    def create(cls, runs_dir: Path, record: RunRecord) -> RunWriter:
        """A new run folder, with run.json written first."""
        run_dir = Path(runs_dir) / record.run_id
        run_dir.mkdir(parents=True, exist_ok=False)
        _write_json(run_dir / RUN_FILE, record.model_dump())
        return cls(EvalRun(run_dir, record))

    def add(self, trial: Trial) -> None:
        self._sink.write(trial.model_dump_json() + "\n")
        self._sink.flush()
        self.run.trials.append(trial)

    def close(self, status: str) -> EvalRun:
        self._sink.close()
        run, record = self.run, self.run.record
        run.report = aggregate(current(run.trials))
        record.status, record.finished_at, record.completed_trials = status, _now(), len(current(run.trials))
        _write_json(run.run_dir / REPORT_FILE, run.report)
        _write_json(run.run_dir / RUN_FILE, record.model_dump())
        return run


async def evaluate(
    world: World,
    tasks: list[Task],
    agent: Agent,
    *,
    repeats: int = 1,
    concurrency: int = 4,
    timeout_s: float | None = None,
    runs_dir: Path = DEFAULT_RUNS_DIR,
    run_id: str | None = None,
    taskset: str | None = None,
    world_label: str | None = None,
    options: dict[str, Any] | None = None,
    notes: list[str] | None = None,
    progress: Progress | None = None,
    judge: Judge | None = None,
) -> EvalRun:
    """Run every task `repeats` times, at most `concurrency` episodes at once; judged answers go to `judge`
    (default: the rubric).

    Each trial is appended to trials.jsonl as soon as it finishes. If the run is cancelled (Ctrl-C, a killed
    parent task), the finished trials stay on disk, run.json says "interrupted" and report.json covers what
    finished; the cancellation then propagates.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    planned = [(task, r) for r in range(repeats) for task in tasks]
    record = RunRecord(
        run_id=run_id or new_run_id(),
        agent=agent.name,
        taskset=taskset,
        world=world_label,
        tasks=len(tasks),
        task_ids=[t.id for t in tasks],
        repeats=repeats,
        planned_trials=len(planned),
        started_at=_now(),
        options={
            "concurrency": concurrency,
            "timeout_s": timeout_s,
            **(options or {}),
            **({"judge": judge.identity} if judge is not None else {}),
        },
        notes=list(notes or []),
    )
    writer = RunWriter.create(runs_dir, record)
    status = "interrupted"
    try:
        await _run_into(
            writer,
            world,
            planned,
            agent,
            concurrency=concurrency,
            timeout_s=timeout_s,
            progress=progress,
            judge=judge,
        )
        status = "complete"
    finally:
        run = writer.close(status)
    return run


async def _run_into(
    writer: RunWriter,
    world: World,
    planned: list[tuple[Task, int]],
    agent: Agent,
    *,
    concurrency: int,
    timeout_s: float | None,
    progress: Progress | None,
    judge: Judge | None = None,
) -> None:
    """Run `planned` trials at most `concurrency` at once, each written to the run the moment it finishes."""
    semaphore = asyncio.Semaphore(concurrency)
    before = len(writer.run.trials)

    async def one(task: Task, repeat: int) -> None:
        async with semaphore:
            trial = await run_trial(world, task, agent, repeat, timeout_s=timeout_s, judge=judge)
        writer.add(trial)
        if progress is not None:
            progress(trial, len(writer.run.trials) - before, len(planned))

    async with asyncio.TaskGroup() as group:
        for task, repeat in planned:
            group.create_task(one(task, repeat))


@dataclass(frozen=True)
class RetryPlan:
    """What a retry re-runs and with what: the run's folder and record, and the settings it measured under
    (its agent `record.agent`, taskset folder, world and model options), which the retry keeps."""

    run_dir: Path
    record: RunRecord
    taskset_dir: Path

    @property
    def world(self) -> Path | None:
        return Path(self.record.world) if self.record.world else None

    @property
    def llm(self) -> dict[str, Any]:
        """The run's model options (LLMConfig fields) but the model, which its agent's name carries."""
        stored = self.record.options.get("llm")
        return {k: v for k, v in stored.items() if k != "model"} if isinstance(stored, dict) else {}

    def pending(self) -> list[tuple[str, int]]:
        """(task, repeat) of the trials the retry re-runs, as the run's folder holds them now."""
        return to_retry(self.record, load_run(self.run_dir))


def plan_retry(
    run: str,
    runs_dir: Path,
    *,
    agent: str | None = None,
    taskset: Path | None = None,
    selection: bool = False,
) -> RetryPlan:
    """The retry of `run` (a run folder, or its id under `runs_dir`). `agent` and `taskset`, when given, must be
    the run's own (a taskset folder is needed when the run does not record it); `selection` says tasks, a limit,
    a persona or repeats were asked for, which a retry cannot honour (it re-runs the run's own trials).
    ValueError names what is wrong."""
    run_dir = Path(run) if Path(run).is_dir() else Path(runs_dir) / run
    try:
        record = load_record(run_dir)
    except (OSError, ValueError) as exc:
        raise ValueError(f"--retry {run}: not a run folder (no readable run.json)") from exc
    if selection:
        raise ValueError(
            "--retry re-runs a run's own trials: --task, --limit, --persona and --repeats do not apply"
        )
    if agent is not None and agent != record.agent:
        raise ValueError(f"--retry {run}: the run measured '{record.agent}', not '{agent}'")
    stored = record.options.get("taskset_dir")
    taskset = taskset or (Path(stored) if stored else None)
    if taskset is None:
        raise ValueError(f"--retry {run}: the run does not record its taskset folder; pass --taskset")
    return RetryPlan(run_dir, record, taskset)


def to_retry(record: RunRecord, trials: list[Trial]) -> list[tuple[str, int]]:
    """(task, repeat) of every trial of the run that is invalid or never finished, in the run's order."""
    latest = {(t.task_id, t.repeat): t for t in current(trials)}
    return [
        (task_id, r)
        for r in range(record.repeats)
        for task_id in record.task_ids
        if (task_id, r) not in latest or not latest[(task_id, r)].valid
    ]


async def retry_invalid(
    world: World,
    plan: RetryPlan,
    tasks: dict[str, Task],
    agent: Agent,
    *,
    concurrency: int = 4,
    timeout_s: float | None = None,
    progress: Progress | None = None,
    judge: Judge | None = None,
) -> EvalRun:
    """Re-run the pending trials of `plan` with `agent` (the run's own), appending them to its folder."""
    record = load_record(plan.run_dir)
    if agent.name != record.agent:
        raise ValueError(f"run {record.run_id} measured '{record.agent}', not '{agent.name}'")
    run = EvalRun(plan.run_dir, record, load_run(plan.run_dir))
    todo = to_retry(record, run.trials)
    missing = sorted({task_id for task_id, _ in todo if task_id not in tasks})
    if missing:
        raise ValueError(
            f"run {record.run_id} has trials of tasks not in this taskset: {', '.join(missing[:5])}"
        )
    planned = [(tasks[task_id], r) for task_id, r in todo]
    before, status = len(run.trials), "interrupted"
    writer = RunWriter(run)
    try:
        await _run_into(
            writer,
            world,
            planned,
            agent,
            concurrency=concurrency,
            timeout_s=timeout_s,
            progress=progress,
            judge=judge,
        )
        status = "complete"
    finally:
        fresh = run.trials[before:]
        record.retries.append(
            {
                "at": _now(),
                "planned": len(planned),
                "ran": len(fresh),
                "still_invalid": sum(1 for t in fresh if not t.valid),
            }
        )
        writer.close(status)
    return run


def load_run(path: Path) -> list[Trial]:
    """The trials of a run folder (or of a trials.jsonl file), for re-grading or re-reporting.

    A line cut short by a kill mid-write is the only damage a run can suffer; it is skipped only when it is the
    very last line, any other bad line is an error naming its line number.
    """
    path = Path(path)
    file = path / TRIALS_FILE if path.is_dir() else path
    if not file.is_file():
        raise FileNotFoundError(f"no {TRIALS_FILE} in {path}: not a run folder")
    lines = file.read_text(encoding="utf-8").splitlines()
    trials = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            trials.append(Trial.model_validate_json(line))
        except ValidationError as exc:
            if number == len(lines) and not line.rstrip().endswith("}"):
                break
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "(line)"
            raise ValueError(f"{file}:{number}: {where}: {err['msg']}") from exc
    return trials


def load_record(path: Path) -> RunRecord:
    return RunRecord.model_validate_json((Path(path) / RUN_FILE).read_text(encoding="utf-8"))
