"""Calibration: the reference agent over the persona's tasks, and what it finds (noise, dead rungs, shortcuts,
too little measured, the ladder's criterion) as flags."""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.runtime import Runtime

from certify import LEVELS, CalibrationRecord, Task, Trial, compact, configurable, repeats_for
from certify import calibrate as run_calibration

from ...flags import Flag, make_flag
from ..context import RunContext
from ..state import PipelineState

VERDICTS = {"holds": "staircase holds", "inverted": "INVERTED", "insufficient": "INSUFFICIENT"}


def calibration(
    run: RunContext, tasks: list[Task], frontier: Any = None
) -> tuple[CalibrationRecord, list[Trial]]:
    """The run's reference over `tasks`, reading the trials its rehearsals left in the run's memo."""
    options = run.options
    return asyncio.run(
        run_calibration(
            run.world,
            tasks,
            options.reference_agent,
            persona=options.persona,
            taskset=options.taskset,
            repeats=options.repeats,
            frontier=frontier,
            concurrency=8,
            min_attempts=options.min_attempts,
            memo=run.env.trials,
            built=run.reference(),
        )
    )


def runs_label(run: RunContext) -> str:
    """How many times each task will run, as the finished record will say it: a deterministic reference runs
    once (its repeats would be copies), so announcing x3 and reporting x1 would contradict itself."""
    options = run.options
    if configurable(options.reference_agent):
        return f"x{options.repeats}"
    runs = repeats_for(run.reference(), options.repeats)
    return f"x{runs}" + (
        f" (deterministic: --repeats {options.repeats} would be copies)" if runs != options.repeats else ""
    )


def calibrate(state: PipelineState, runtime: Runtime[RunContext]) -> PipelineState:
    """The staircase measured; its findings become flags, and the earlier ones it no longer finds resolve
    (a person's decision on a finding stands)."""
    run = runtime.context
    options = run.options
    tasks = [run.parse(t.raw) for t in state["tasks"].values()]
    known = state.get("flags", {})
    # Levels with no task because their author failed: calibration cannot measure them, and saying so would
    # only echo the author's items (issue 24: "insufficient" of zero tasks); those items are the causes.
    caused = any(f.kind == "role_failure" and f.status == "open" for f in known.values())
    if tasks:
        run.emit("calibration", "running", f"calibrating with {options.reference_agent} {runs_label(run)}")
    else:
        run.emit("calibration", "skipped", "nothing to calibrate: no task was certified")
    record, trials = calibration(run, tasks, run.frontier())
    found = findings(record, options.persona)
    if caused:
        authored = {t.level for t in tasks}
        found = [
            f for f in found if not (f.kind == "insufficient" and (not tasks or len(authored) < len(LEVELS)))
        ]
    flags = {f.id: f for f in found if f.id not in known or not known[f.id].decision}
    for fid, old in known.items():
        if old.role == "calibration" and old.status == "open" and fid not in flags:
            flags[fid] = old.model_copy(update={"status": "resolved"})
    rates = ", ".join(f"{s.level[-1]}:{(s.pass_rate or 0):.0%}" for s in record.levels)
    if tasks:  # of no task, "nothing to calibrate" was the line
        run.emit(
            "calibration",
            record.verdict,
            f"calibration with {record.agent} x{record.repeats}: {rates} — {VERDICTS[record.verdict]}",
        )
    return {"calibration": record, "calibration_trials": [evidence(t) for t in trials], "flags": flags}


def findings(record: CalibrationRecord, persona: str) -> list[Flag]:
    """What a calibration record asks of a person, as calibration flags (noise, dead rungs, shortcuts, too
    little measured, the ladder's criterion, in that order)."""

    def flag(
        kind: str,
        level: str | None,
        check: str,
        severity: str,
        reason: str,
        task_id: str | None = None,
        evidence: str = "",
    ) -> Flag:
        return make_flag(
            role="calibration",
            persona=persona,
            kind=kind,
            task_id=task_id,
            level=None if level is None else LEVELS.index(level),
            check=check,
            severity=severity,
            reason=reason,
            evidence=evidence,
        )

    scattered = "scattered failures at an inverted level: "
    out = [
        flag("noise", n.level, "staircase", "minor", scattered + n.detail, n.task_id) for n in record.noise
    ]
    for p in record.probes:
        reason = f"{p.level} was never passed by {record.agent}; frontier probe: {p.status}"
        probed = f"{p.agent or 'no frontier agent'} on {p.task_id or '-'}: {p.failure_codes}"
        severity = "blocker" if p.status == "flagged" else "minor"
        out.append(flag("dead_rung", p.level, "frontier_probe", severity, reason, evidence=probed))
    out += [flag("shortcut", s.level, "staircase", "minor", s.detail, s.task_id) for s in record.shortcuts]
    if record.verdict == "insufficient":
        reason = (
            f"calibration measured too little: fewer than {record.min_attempts} valid attempts per agent at "
            f"{', '.join(record.insufficient) or 'every level'}"
        )
        counted = f"{record.trials} trials, {record.invalid} invalid"
        out.append(flag("insufficient", None, "staircase", "blocker", reason, evidence=counted))
    for f in record.ladder.findings if record.ladder else []:
        path = " → ".join(str(e["tool"]) + ("" if e.get("ok") else " (failed)") for e in f.events)
        out.append(flag("ladder", f.level, "ladder_criterion", "blocker", f.detail, f.task_id, path))
    return out


def evidence(trial: Trial) -> Trial:
    """A calibration trial as the run keeps it: compact, as its record file keeps it (each failed call keeps its
    error, which is what a reviewer and the fixer read), and a failing trial keeps its model transcript. The
    state is checkpointed at every later step; whole envelopes of every episode made each checkpoint megabytes."""
    small = compact(trial)
    return small if trial.passed else small.model_copy(update={"transcript": trial.transcript})
