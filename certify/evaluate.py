"""Evaluation runs: many trials of one agent over a taskset, concurrently, recorded as they finish.

A run is a folder `<runs_dir>/<run_id>/`: `run.json` (who, what, when, with which options; written first and
rewritten with the outcome), `trials.jsonl` (one Trial per line, appended and flushed the moment it finishes,
so a killed run keeps every finished transcript) and `report.json` (the aggregate). Stored trials carry their
full trace, so `load_run` + `regrade_trial` re-grade a run after a grader change without calling any model.

Aggregation follows the rule that a trial which does not describe the agent (invalid) never counts: it is
excluded from every rate and from the agent's behaviour figures (turns, tool calls, parse counts) and counted
apart. Tokens and cost include invalid trials, because that money was spent.
"""

from __future__ import annotations

import asyncio
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

from .agents.base import Agent, make_agent
from .stats import distribution, wilson
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


def build_agent(name: str, llm: dict[str, Any] | None = None) -> Agent:
    """An agent by name; `llm` holds LLMConfig fields (mode, parse, base_url, ...) for openai:<model> and is
    refused for any other agent rather than ignored."""
    if name.split(":", 1)[0] == "openai":
        from .agents.llm import OpenAIAgent

        return OpenAIAgent.from_name(name, **(llm or {}))
    if llm:
        raise ValueError(f"{', '.join(sorted(llm))} only apply to openai:<model> agents, not to '{name}'")
    return make_agent(name)


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
        raise TaskFileError(str(taskset_dir), "--persona", f"no task belongs to persona '{persona}' (personas "
                                                           f"found: {known})")
    return tasks


def aggregate(trials: Iterable[Trial]) -> dict[str, Any]:
    """The report of a run: per-level pass rates with Wilson 95% intervals over valid trials, and the rest."""
    trials = list(trials)
    valid = [t for t in trials if t.valid]
    levels = []
    for level in sorted({t.level for t in trials}, key=lambda lv: (LEVELS.index(lv) if lv in LEVELS else 99, lv)):
        attempts = [t for t in valid if t.level == level]
        passes = sum(1 for t in attempts if t.passed)
        lo, hi = wilson(passes, len(attempts))
        levels.append({"level": level, "attempts": len(attempts), "passes": passes,
                       "rate": round(passes / len(attempts), 4) if attempts else None,
                       "ci": [round(lo, 4), round(hi, 4)]})
    codes = Counter(code for t in valid if not t.passed for code in dict.fromkeys(t.failure_codes))
    return {
        "levels": levels,
        "invalid": len(trials) - len(valid),
        "failure_codes": dict(sorted(codes.items(), key=lambda kv: (-kv[1], kv[0]))),
        "tokens": {"in": sum(t.tokens_in for t in trials), "out": sum(t.tokens_out for t in trials)},
        "cost": round(sum(t.cost for t in trials), 6),
        "turns": distribution([t.turns for t in valid]),
        "tool_calls": distribution([t.tool_calls for t in valid]),
        "parse": {"strict": sum(t.strict_parses for t in valid), "lenient": sum(t.lenient_parses for t in valid),
                  "failed": sum(t.failed_parses for t in valid)},
        "trials": len(trials),
    }


def invalid_reasons(trials: Iterable[Trial]) -> dict[str, int]:
    return dict(Counter(t.invalid_reason or "unknown" for t in trials if not t.valid))


def _write_json(path: Path, obj: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


class RunWriter:
    """One run folder being written: run.json first, each trial appended to trials.jsonl and flushed the moment
    it is added (a killed process keeps every finished trial), report.json and the final run.json on close.

    Shared by every way trials are produced (`evaluate`, the MCP server), so their runs read the same.
    """

    def __init__(self, runs_dir: Path, record: RunRecord) -> None:
        self.run = EvalRun(Path(runs_dir) / record.run_id, record)
        self.run.run_dir.mkdir(parents=True, exist_ok=False)
        _write_json(self.run.run_dir / RUN_FILE, record.model_dump())
        self._sink = (self.run.run_dir / TRIALS_FILE).open("a", encoding="utf-8")

    def add(self, trial: Trial) -> None:
        self._sink.write(trial.model_dump_json() + "\n")
        self._sink.flush()
        self.run.trials.append(trial)

    def close(self, status: str) -> EvalRun:
        run, record = self.run, self.run.record
        self._sink.close()
        run.report = aggregate(run.trials)
        record.status, record.finished_at, record.completed_trials = status, _now(), len(run.trials)
        _write_json(run.run_dir / REPORT_FILE, run.report)
        _write_json(run.run_dir / RUN_FILE, record.model_dump())
        return run


async def evaluate(world: World, tasks: list[Task], agent: Agent, *, repeats: int = 1, concurrency: int = 4,
                   timeout_s: float | None = None, runs_dir: Path = DEFAULT_RUNS_DIR, run_id: str | None = None,
                   taskset: str | None = None, world_label: str | None = None,
                   options: dict[str, Any] | None = None, notes: list[str] | None = None,
                   progress: Progress | None = None) -> EvalRun:
    """Run every task `repeats` times, at most `concurrency` episodes at once.

    Each trial is appended to trials.jsonl as soon as it finishes. If the run is cancelled (Ctrl-C, a killed
    parent task), the finished trials stay on disk, run.json says "interrupted" and report.json covers what
    finished; the cancellation then propagates.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    planned = [(task, r) for r in range(repeats) for task in tasks]
    record = RunRecord(run_id=run_id or new_run_id(), agent=agent.name, taskset=taskset, world=world_label,
                       tasks=len(tasks), task_ids=[t.id for t in tasks], repeats=repeats,
                       planned_trials=len(planned), started_at=_now(),
                       options={"concurrency": concurrency, "timeout_s": timeout_s, **(options or {})},
                       notes=list(notes or []))
    writer = RunWriter(runs_dir, record)
    semaphore = asyncio.Semaphore(concurrency)
    status = "interrupted"

    async def one(task: Task, repeat: int) -> None:
        async with semaphore:
            trial = await run_trial(world, task, agent, repeat, timeout_s=timeout_s)
        writer.add(trial)
        if progress is not None:
            progress(trial, len(writer.run.trials), len(planned))

    try:
        async with asyncio.TaskGroup() as group:
            for task, repeat in planned:
                group.create_task(one(task, repeat))
        status = "complete"
    finally:
        run = writer.close(status)
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
