"""Calibration: the staircase gate of a persona's tasks.

A reference agent runs the persona's tasks N times; the pooled failure rate must not decrease from one level
to the next (FAIL(L0) ≤ … ≤ FAIL(L4), ties allowed). On an inversion the lower level — the one failing more than
a harder one — is examined task by task: the same failure fingerprint on every attempt of a task is a defect
(for the fixer, with its transcripts); scattered failures are noise (a note for review). A level above Execute
the reference never passes must prove it is feasible: one episode of a frontier agent on its most promising
task (pass: an honest floor; fail: flagged), or it stays "unprobed", a visible review item. The record is kept as
JSON and markdown with a staircase plot, beside compact transcripts that let a grader change re-grade it without
calling any model.

Honesty: a deterministic agent runs once per task (its repeats would be copies, not attempts), and every
Wilson interval counts unique tasks. A level with fewer valid attempts per agent than the minimum (default 3) is
"insufficient": the verdict is then "insufficient" — a blocker, never "holds" — and so is a calibration whose
trials were all invalid. The reference may be a family: `ladder` runs ladder-0 … ladder-4, pools them into the
staircase and reports the agent × level matrix, where level k must be passed by ladder-k and failed by
ladder-(k-1); each violation is a finding with its transcript.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from simulator import World

from .agents.base import Agent
from .grader import CheckFn
from .judge import JudgeSummary
from .plot import png
from .stats import wilson
from .task import LEVEL_NAMES, LEVELS, Task
from .trial import UNPARSEABLE, Trial, regrade_trial, run_trial

RECORD_JSON, RECORD_MD, PLOT_PNG, TRIALS_JSONL = (
    "calibration.json",
    "calibration.md",
    "staircase.png",
    "trials.jsonl",
)
# A rung measured on fewer valid attempts (per agent) than this says nothing: it is "insufficient".
MIN_ATTEMPTS = 3


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


Verdict = Literal["holds", "inverted", "insufficient"]


class LevelStat(_Strict):
    """One rung. `attempts` are valid trials (a deterministic agent's repeats collapsed to one), `tasks` the
    unique tasks among them; the Wilson interval counts tasks, each credited with the share of its attempts
    that passed. A rung with fewer than the minimum attempts per agent is "insufficient": not measured."""

    level: str
    attempts: int
    tasks: int = 0
    passes: int
    pass_rate: float | None
    fail_rate: float | None
    ci: list[float]
    per_repeat: list[float | None] = Field(default_factory=list)
    status: Literal["measured", "insufficient"] = "measured"


class Inversion(_Strict):
    lower: str
    upper: str
    fail_lower: float
    fail_upper: float


class Defect(_Strict):
    task_id: str
    level: str
    fingerprint: list[str]
    attempts: int
    repeats: list[int]


class Noise(_Strict):
    level: str
    task_id: str
    detail: str


class Probe(_Strict):
    """A rung above Execute that the reference never passed: a frontier episode settles it (an honest floor
    when it passes, flagged when it fails); without one it stays "unprobed", a visible review item."""

    level: str
    status: Literal["honest_floor", "flagged", "unprobed"]
    task_id: str | None = None
    agent: str | None = None
    passed: bool | None = None
    failure_codes: list[str] = Field(default_factory=list)


class Shortcut(_Strict):
    task_id: str
    level: str
    detail: str


class LadderCell(_Strict):
    agent: str
    level: str
    tasks: int
    passes: int


class LadderFinding(_Strict):
    """A task that breaks the ladder criterion, with the episode that shows it: solved by the rung below its
    level (solvable without the level's capability), or not solved by its own rung (not solvable with it)."""

    task_id: str
    level: str
    agent: str
    kind: Literal["solved_below", "unsolved_at"]
    detail: str
    failure_codes: list[str] = Field(default_factory=list)
    events: list[dict[str, Any]] = Field(default_factory=list)


class LadderReport(_Strict):
    """The capability ladder's matrix (agent × level) and the fairness findings of its criterion: level k is
    passed by ladder-k and failed by ladder-(k-1)."""

    agents: list[str]
    levels: list[str]
    cells: list[LadderCell]
    findings: list[LadderFinding] = Field(default_factory=list)
    fair: dict[str, bool] = Field(default_factory=dict)

    def cell(self, agent: str, level: str) -> LadderCell | None:
        return next((c for c in self.cells if c.agent == agent and c.level == level), None)


class CalibrationRecord(_Strict):
    persona: str
    taskset: str
    agent: str
    repeats: int
    created_at: str
    trials: int
    invalid: int
    levels: list[LevelStat]
    holds: bool
    verdict: Verdict = "holds"
    deterministic: bool = False
    min_attempts: int = 1
    inversions: list[Inversion] = Field(default_factory=list)
    defects: list[Defect] = Field(default_factory=list)
    noise: list[Noise] = Field(default_factory=list)
    probes: list[Probe] = Field(default_factory=list)
    shortcuts: list[Shortcut] = Field(default_factory=list)
    ladder: LadderReport | None = None
    judge: JudgeSummary | None = Field(
        None,
        description="What judging the trials' answers took, apart from the agent's cost; absent when no task "
        "of the calibration is judged.",
    )

    @model_serializer(mode="wrap")
    def _without_absent_judge(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A calibration without judged tasks is recorded as before judges existed, byte for byte."""
        data = handler(self)
        if self.judge is None:
            data.pop("judge", None)
        return data

    @model_validator(mode="before")
    @classmethod
    def _verdict_of_older_records(cls, data: Any) -> Any:
        """Records written before verdicts existed said only whether the staircase held."""
        if isinstance(data, dict) and "verdict" not in data and "holds" in data:
            return {**data, "verdict": "holds" if data["holds"] else "inverted"}
        return data

    @property
    def insufficient(self) -> list[str]:
        return [s.level for s in self.levels if s.status == "insufficient"]

    def summary(self) -> dict[str, Any]:
        out = {
            "agent": self.agent,
            "repeats": self.repeats,
            "holds": self.holds,
            "verdict": self.verdict,
            "pass_rates": {s.level: s.pass_rate for s in self.levels},
            "insufficient": self.insufficient,
            "defects": len(self.defects),
            "noise": len(self.noise),
            "probes": {p.level: p.status for p in self.probes},
            "shortcuts": len(self.shortcuts),
        }
        if self.judge is not None:
            out["judge"] = self.judge.model_dump()
        if self.ladder is not None:
            out["ladder"] = {
                "fair": self.ladder.fair,
                "findings": len(self.ladder.findings),
                "matrix": {
                    a: {
                        c.level: round(c.passes / c.tasks, 4) if c.tasks else None
                        for c in self.ladder.cells
                        if c.agent == a
                    }
                    for a in self.ladder.agents
                },
            }
        return out


def _order(level: str) -> int:
    return LEVELS.index(level) if level in LEVELS else len(LEVELS)


def is_deterministic(agent: str) -> bool:
    """Whether trials recorded under an agent name come from a deterministic agent (unknown names are not)."""
    from .agents import family, make_agent

    members = family(agent) or (agent,)
    if any(m.startswith("openai:") for m in members):
        return False
    try:
        return all_deterministic([make_agent(m) for m in members])
    except ValueError:
        return False


def _collapse(trials: list[Trial]) -> list[Trial]:
    """One trial per (agent, task): the first valid repeat. A deterministic agent's repeats are copies of one
    observation, never new attempts."""
    kept: dict[tuple[str, str], Trial] = {}
    for t in sorted(trials, key=lambda t: t.repeat):
        key = (t.agent, t.task_id)
        if key not in kept or (t.valid and not kept[key].valid):
            kept[key] = t
    return list(kept.values())


def analyse(
    trials: list[Trial],
    *,
    persona: str,
    taskset: str,
    agent: str,
    repeats: int,
    shortcut_agent: bool | None = None,
    deterministic: bool | None = None,
    min_attempts: int = MIN_ATTEMPTS,
) -> CalibrationRecord:
    """The staircase verdict of a set of trials (pure: no episode is run).

    `agent` may name a family (`ladder`): its members' trials are pooled into the staircase and the ladder
    matrix is reported beside it. The verdict is "inverted" when measured rungs invert, else "insufficient"
    when any rung has fewer than `min_attempts` valid attempts of some agent (or nothing was measured), else
    "holds"."""
    deterministic = is_deterministic(agent) if deterministic is None else deterministic
    judged = JudgeSummary.of([t.judge for t in trials if t.judge is not None])
    if deterministic:
        trials = _collapse(trials)
        repeats = 1
    valid = [t for t in trials if t.valid]
    agents = sorted({t.agent for t in trials}) or [agent]
    levels: list[LevelStat] = []
    for level in sorted({t.level for t in trials}, key=_order):
        attempts = [t for t in valid if t.level == level]
        passes = sum(1 for t in attempts if t.passed)
        per_task: dict[str, list[bool]] = defaultdict(list)
        for t in attempts:
            per_task[t.task_id].append(bool(t.passed))
        credit = sum(sum(v) / len(v) for v in per_task.values())
        lo, hi = wilson(credit, len(per_task))
        per_repeat = []
        for r in range(repeats):
            of_repeat = [t for t in attempts if t.repeat == r]
            per_repeat.append(
                round(sum(1 for t in of_repeat if t.passed) / len(of_repeat), 4) if of_repeat else None
            )
        rate = passes / len(attempts) if attempts else None
        fewest = min(sum(1 for t in attempts if t.agent == a) for a in agents)
        levels.append(
            LevelStat(
                level=level,
                attempts=len(attempts),
                tasks=len(per_task),
                passes=passes,
                pass_rate=None if rate is None else round(rate, 4),
                fail_rate=None if rate is None else round(1 - rate, 4),
                ci=[round(lo, 4), round(hi, 4)],
                per_repeat=per_repeat,
                status="measured" if attempts and fewest >= min_attempts else "insufficient",
            )
        )
    measured = [s for s in levels if s.status == "measured" and s.fail_rate is not None]
    inversions = [
        Inversion(lower=a.level, upper=b.level, fail_lower=a.fail_rate, fail_upper=b.fail_rate)
        for a, b in itertools.pairwise(measured)
        if a.fail_rate is not None and b.fail_rate is not None and a.fail_rate > b.fail_rate + 1e-9
    ]
    defects: list[Defect] = []
    noise: list[Noise] = []
    by_task: dict[str, list[Trial]] = defaultdict(list)
    for t in valid:
        by_task[t.task_id].append(t)
    for level in dict.fromkeys(inv.lower for inv in inversions):
        for task_id, attempts in sorted(by_task.items()):
            if attempts[0].level != level:
                continue
            failed = [t for t in attempts if not t.passed]
            if not failed:
                continue
            prints = {tuple(t.fingerprint) for t in failed}
            if len(failed) == len(attempts) and len(prints) == 1:
                defects.append(
                    Defect(
                        task_id=task_id,
                        level=level,
                        fingerprint=list(next(iter(prints))),
                        attempts=len(attempts),
                        repeats=sorted(t.repeat for t in failed),
                    )
                )
            else:
                noise.append(
                    Noise(
                        level=level,
                        task_id=task_id,
                        detail=f"{len(failed)}/{len(attempts)} attempts "
                        f"failed with {len(prints)} different fingerprint(s)",
                    )
                )
    shortcuts = []
    if shortcut_agent if shortcut_agent is not None else agent == "heuristic":
        for t in valid:
            if t.passed and _order(t.level) >= 1 and t.level in LEVEL_NAMES:
                shortcuts.append(
                    Shortcut(
                        task_id=t.task_id,
                        level=t.level,
                        detail=(
                            f"the {agent} baseline solved a {LEVEL_NAMES[t.level]} task: its hidden value is probably "
                            "reachable without the capability the level asks for"
                        ),
                    )
                )
        shortcuts = list({s.task_id: s for s in shortcuts}.values())
    probes = [
        Probe(level=s.level, status="unprobed")
        for s in levels
        if _order(s.level) >= 1 and s.attempts and s.passes == 0
    ]
    if inversions:
        verdict: Verdict = "inverted"
    elif not measured or len(measured) < len(levels):
        verdict = "insufficient"
    else:
        verdict = "holds"
    return CalibrationRecord(
        persona=persona,
        taskset=taskset,
        agent=agent,
        repeats=repeats,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        trials=len(trials),
        invalid=len(trials) - len(valid),
        levels=levels,
        holds=verdict == "holds",
        verdict=verdict,
        deterministic=deterministic,
        min_attempts=min_attempts,
        inversions=inversions,
        defects=defects,
        noise=noise,
        probes=probes,
        shortcuts=shortcuts,
        ladder=ladder_report(trials, agent),
        judge=judged,
    )


def ladder_report(trials: list[Trial], agent: str) -> LadderReport | None:
    """The matrix and the criterion's findings when `agent` names the capability ladder; None otherwise."""
    from .agents import family
    from .agents.ladder import CAPABILITIES as CAPABILITY

    members = family(agent)
    if not members or not all(m.rsplit("-", 1)[-1].isdigit() for m in members):
        return None
    rung = {m: int(m.rsplit("-", 1)[-1]) for m in members}
    valid = [t for t in trials if t.valid and t.agent in rung]
    levels = sorted({t.level for t in valid}, key=_order)
    cells = []
    for m in members:
        for level in levels:
            mine = {t.task_id: t for t in valid if t.agent == m and t.level == level}
            cells.append(
                LadderCell(
                    agent=m, level=level, tasks=len(mine), passes=sum(1 for t in mine.values() if t.passed)
                )
            )
    findings = []
    for t in sorted(valid, key=lambda t: (_order(t.level), t.task_id, rung[t.agent])):
        k = _order(t.level)
        if rung[t.agent] == k - 1 and t.passed:
            findings.append(
                LadderFinding(
                    task_id=t.task_id,
                    level=t.level,
                    agent=t.agent,
                    kind="solved_below",
                    events=_trace(t),
                    detail=f"{t.agent} ({CAPABILITY[k - 1]}) solved this {LEVEL_NAMES.get(t.level, t.level)} task: "
                    f"it does not need the capability its level adds ({CAPABILITY[k]})",
                )
            )
        elif rung[t.agent] == k and not t.passed:
            findings.append(
                LadderFinding(
                    task_id=t.task_id,
                    level=t.level,
                    agent=t.agent,
                    kind="unsolved_at",
                    events=_trace(t),
                    failure_codes=t.failure_codes,
                    detail=f"{t.agent} ({CAPABILITY[k]}) failed this {LEVEL_NAMES.get(t.level, t.level)} task: it is "
                    f"not solvable with the capabilities its level allows ({'; '.join(t.fingerprint[:3])})",
                )
            )
    fair = {level: not any(f.level == level for f in findings) for level in levels}
    return LadderReport(agents=list(members), levels=levels, cells=cells, findings=findings, fair=fair)


def _trace(trial: Trial) -> list[dict[str, Any]]:
    return [
        {
            "tool": e.get("tool"),
            "args": e.get("args"),
            "ok": e.get("ok"),
            "error": (e.get("envelope") or {}).get("error"),
        }
        for e in trial.events
    ]


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


def reference_agents(name: str) -> list[Agent]:
    """The agents a reference name stands for: the members of a family (`ladder`), else the one agent."""
    from .agents import family
    from .evaluate import build_agent

    members = family(name)
    return [build_agent(m) for m in members] if members else [build_agent(name)]


def all_deterministic(agents: list[Agent]) -> bool:
    return all(getattr(a, "deterministic", False) for a in agents)


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

    agents = built or (reference_agents(agent) if isinstance(agent, str) else [agent])
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
    world: World, tasks: dict[str, Task], trials: list[Trial], registry: dict[str, CheckFn] | None = None
) -> tuple[list[Trial], list[dict[str, Any]]]:
    """Every stored trial graded again by the current grader; returns the new trials and the verdicts (pass or
    fail) that moved."""
    out, moved = [], []
    for trial in trials:
        task = tasks.get(trial.task_id)
        if task is None:
            out.append(trial)
            continue
        again = regrade_trial(world, task, trial, registry)
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


def record_files(record: CalibrationRecord, trials: list[Trial]) -> dict[str, bytes]:
    """The record's files by name, rendered in memory: the same record and trials give the same bytes, so a
    writer can tell its own output from someone else's edit before it touches the disk."""
    lines = [compact(t).model_dump_json() + "\n" for t in sorted(trials, key=lambda t: (t.task_id, t.repeat))]
    return {
        RECORD_JSON: (json.dumps(record.model_dump(), indent=2) + "\n").encode(),
        RECORD_MD: render_markdown(record).encode(),
        TRIALS_JSONL: "".join(lines).encode(),
        PLOT_PNG: png(record),
    }


def write_record(folder: Path, record: CalibrationRecord, trials: list[Trial]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, data in record_files(record, trials).items():
        (folder / name).write_bytes(data)
        paths.append(folder / name)
    return paths


def load_trials(folder: Path) -> list[Trial]:
    path = folder / TRIALS_JSONL if folder.is_dir() else folder
    return [
        Trial.model_validate_json(line)
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def load_record(folder: Path) -> CalibrationRecord:
    return CalibrationRecord.model_validate_json((folder / RECORD_JSON).read_text(encoding="utf-8"))


def render_matrix(ladder: LadderReport) -> list[str]:
    """The ladder's agent × level matrix as markdown rows: passes/tasks per cell; a level passes the criterion
    when its own rung passes every task and the rung below passes none."""
    head = "| agent | " + " | ".join(f"{lv} {LEVEL_NAMES.get(lv, '')}".strip() for lv in ladder.levels) + " |"
    lines = [head, "|---|" + "---|" * len(ladder.levels)]
    for agent in ladder.agents:
        row = []
        for level in ladder.levels:
            c = ladder.cell(agent, level)
            row.append(
                "—" if c is None or not c.tasks else f"{c.passes}/{c.tasks} ({c.passes / c.tasks:.0%})"
            )
        lines.append(f"| {agent} | " + " | ".join(row) + " |")
    lines.append(
        "| criterion | "
        + " | ".join("fair" if ladder.fair.get(lv) else "VIOLATED" for lv in ladder.levels)
        + " |"
    )
    return lines


def _finding_line(f: LadderFinding) -> str:
    calls = " → ".join(str(e["tool"]) + ("" if e.get("ok") else "✗") for e in f.events) or "no call"
    return f"{f.task_id} [{f.kind}, {f.agent}]: {f.detail}. Trace: {calls}"


def render_markdown(record: CalibrationRecord) -> str:
    verdict = {"holds": "holds", "inverted": "INVERTED", "insufficient": "INSUFFICIENT"}[record.verdict]
    lines = [
        f"# Calibration — {record.persona} ({record.taskset})",
        "",
        f"Reference agent `{record.agent}`, {record.repeats} repeat(s)"
        + (" (deterministic: one run per task)" if record.deterministic else "")
        + f", {record.trials} trials ({record.invalid} invalid, excluded). Staircase: **{verdict}**"
        + (
            f" (rungs with fewer than {record.min_attempts} valid attempts per agent: "
            f"{', '.join(record.insufficient)})"
            if record.insufficient
            else ""
        )
        + ".",
        *(["", f"Judged answers: {record.judge.line()}."] if record.judge is not None else []),
        "",
        "| level | name | attempts | tasks | passes | pass rate | fail rate | Wilson 95% (tasks) | per repeat |"
        " status |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in record.levels:
        rate = "—" if s.pass_rate is None else f"{s.pass_rate:.0%}"
        fail = "—" if s.fail_rate is None else f"{s.fail_rate:.0%}"
        reps = " ".join("—" if r is None else f"{r:.0%}" for r in s.per_repeat)
        lines.append(
            f"| {s.level} | {LEVEL_NAMES.get(s.level, '')} | {s.attempts} | {s.tasks} | {s.passes} | {rate} "
            f"| {fail} | {s.ci[0]:.2f}–{s.ci[1]:.2f} | {reps} | {s.status} |"
        )
    if record.ladder is not None:
        lines += ["", "## Capability ladder", "", *render_matrix(record.ladder)]
    for title, items in (
        (
            "Inversions",
            [f"{i.lower} fails {i.fail_lower:.0%} > {i.upper} {i.fail_upper:.0%}" for i in record.inversions],
        ),
        (
            "Defects (same fingerprint on every attempt)",
            [f"{d.task_id}: {'; '.join(d.fingerprint)}" for d in record.defects],
        ),
        ("Noise", [f"{n.task_id}: {n.detail}" for n in record.noise]),
        (
            "Dead rungs",
            [
                f"{p.level}: {p.status}" + (f" ({p.agent} on {p.task_id})" if p.agent else "")
                for p in record.probes
            ],
        ),
        ("Shortcuts", [f"{s.task_id}: {s.detail}" for s in record.shortcuts]),
        ("Ladder findings", [_finding_line(f) for f in record.ladder.findings] if record.ladder else []),
    ):
        if items:
            lines += ["", f"## {title}", "", *[f"- {x}" for x in items]]
    return "\n".join(lines) + "\n"
