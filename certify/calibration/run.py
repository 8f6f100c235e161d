"""Running a calibration: the reference's trials (remembered for deterministic agents, so rehearsed levels are
not run again), the frontier's probe of dead rungs, and re-grading stored trials without a model."""

from __future__ import annotations

import threading
from collections import defaultdict
from typing import Any

from simulator import World

from ..agents import Agent, resolve_agents
from ..grader import CheckFn
from ..judge import Judge
from ..task import Task
from ..trial import UNPARSEABLE, Trial, regrade_trial, run_trial
from .analysis import all_deterministic, analyse
from .records import MIN_ATTEMPTS, CalibrationRecord


async def probe_dead_rungs(
    world: World,
    record: CalibrationRecord,
    tasks: list[Task],
    trials: list[Trial],
    frontier: Agent,
    registry: dict[str, CheckFn] | None = None,
) -> list[Trial]:
    """One frontier episode per dead rung, on the rung's task that came closest to passing."""
    probe_trials = []
    for probe in record.probes:
        candidates = [t for t in tasks if t.difficulty == probe.level]
        if not candidates:
            continue
        share: dict[str, list[float]] = defaultdict(list)
        for t in trials:
            if t.valid and t.level == probe.level and t.share is not None:
                share[t.task_id].append(t.share)
        best = max(
            candidates, key=lambda t: (sum(share[t.id]) / len(share[t.id]) if share[t.id] else 0.0, t.id)
        )
        trial = await run_trial(world, best, frontier, registry=registry)
        probe_trials.append(trial)
        probe.task_id, probe.agent = best.id, frontier.name
        if not trial.valid:
            probe.status = "unprobed"
        else:
            probe.passed = bool(trial.passed)
            probe.status = "honest_floor" if trial.passed else "flagged"
            probe.failure_codes = trial.failure_codes
    return probe_trials


def repeats_for(agents: list[Agent], repeats: int) -> int:
    """How many times each task is run: once for deterministic agents (their repeats would be copies)."""
    return 1 if all_deterministic(agents) else repeats


class TrialMemo:
    """Trials of deterministic agents, remembered by agent, world and task content. Such a trial is a pure
    function of them, so a run can rehearse each level as soon as it certifies (while its models are busy
    elsewhere) and calibration finds the work done. Only the default grader's trials are remembered."""

    def __init__(self) -> None:
        self._trials: dict[tuple[str, str, str, int], Trial] = {}
        self._lock = threading.Lock()

    @staticmethod
    def key(world: World, task: Task, agent: Agent, repeat: int) -> tuple[str, str, str, int]:
        return (agent.name, world.fingerprint, task.model_dump_json(), repeat)

    def get(self, key: tuple[str, str, str, int]) -> Trial | None:
        """The remembered trial itself, not a copy (a copy of its envelopes cost more than the episode):
        calibration only reads trials and builds new ones from them."""
        with self._lock:
            return self._trials.get(key)

    def put(self, key: tuple[str, str, str, int], trial: Trial) -> None:
        with self._lock:
            self._trials[key] = trial


async def rehearse(world: World, task: Task, agents: list[Agent], memo: TrialMemo) -> int:
    """The reference's trials on one task, into `memo`, when every one of its `agents` is deterministic (their
    trials will not change before calibration). Returns how many trials ran."""
    if not all_deterministic(agents):
        return 0
    ran = 0
    for member in agents:
        key = TrialMemo.key(world, task, member, 0)
        if memo.get(key) is None:
            trial = await run_trial(world, task, member, 0)
            ran += 1
            if trial.valid:
                memo.put(key, trial)
    return ran


async def calibrate(
    world: World,
    tasks: list[Task],
    agent: Agent | str,
    *,
    persona: str,
    taskset: str,
    repeats: int = 3,
    frontier: Agent | None = None,
    concurrency: int = 4,
    registry: dict[str, CheckFn] | None = None,
    min_attempts: int = MIN_ATTEMPTS,
    memo: TrialMemo | None = None,
    built: list[Agent] | None = None,
) -> tuple[CalibrationRecord, list[Trial]]:
    """Run the reference (an agent, or a name that may stand for a family) over the tasks and analyse the
    trials; probe dead rungs with `frontier` when given. A deterministic agent's trial found in `memo` is not
    run again; `built` are the agents a reference name stands for, when the caller built them already."""
    import asyncio

    agents = built or (resolve_agents(agent) if isinstance(agent, str) else [agent])
    name = agent if isinstance(agent, str) else agent.name
    runs = repeats_for(agents, repeats)
    semaphore = asyncio.Semaphore(concurrency)

    async def one(member: Agent, task: Task, repeat: int) -> Trial:
        remembered = memo is not None and registry is None and getattr(member, "deterministic", False)
        key = TrialMemo.key(world, task, member, repeat) if remembered else None
        if key is not None and memo is not None and (hit := memo.get(key)) is not None:
            return hit
        async with semaphore:
            trial = await run_trial(world, task, member, repeat, registry=registry)
        if key is not None and memo is not None and trial.valid:
            memo.put(key, trial)
        return trial

    trials = list(await asyncio.gather(*(one(a, t, r) for a in agents for r in range(runs) for t in tasks)))
    record = analyse(
        trials,
        persona=persona,
        taskset=taskset,
        agent=name,
        repeats=runs,
        deterministic=all_deterministic(agents),
        min_attempts=min_attempts,
    )
    if frontier is not None and record.probes:
        await probe_dead_rungs(world, record, tasks, trials, frontier, registry)
    return record, trials


def compact(trial: Trial) -> Trial:
    """A trial stripped to what re-grading needs: calls, their outcome, the final answer (no envelopes or model
    messages), so calibration transcripts are small enough to keep beside the tasks."""
    events = []
    for e in trial.events:
        envelope = e.get("envelope") or {}
        kept = {"ok": envelope.get("ok"), "error": envelope.get("error")}
        if e.get("tool") == UNPARSEABLE:
            kept["message"] = envelope.get("message")
        events.append({**e, "envelope": kept})
    return trial.model_copy(update={"events": events, "transcript": []})


def regrade(
    world: World,
    tasks: dict[str, Task],
    trials: list[Trial],
    registry: dict[str, CheckFn] | None = None,
    judge: Judge | None = None,
) -> tuple[list[Trial], list[dict[str, Any]]]:
    """Every stored trial graded again by the current grader (judged answers re-judged where their verdict went
    stale, never re-run; see `regrade_trial`); returns the new trials and the verdicts (pass or fail) that
    moved."""
    out, moved = [], []
    for trial in trials:
        task = tasks.get(trial.task_id)
        if task is None:
            out.append(trial)
            continue
        again = regrade_trial(world, task, trial, registry, judge)
        if again.passed != trial.passed:
            moved.append(
                {
                    "task_id": trial.task_id,
                    "repeat": trial.repeat,
                    "was": trial.passed,
                    "now": again.passed,
                    "was_codes": trial.failure_codes,
                    "now_codes": again.failure_codes,
                }
            )
        out.append(again)
    return out, moved
