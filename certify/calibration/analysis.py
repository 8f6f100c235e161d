"""The staircase read from trials: per-level pass rates with Wilson intervals over unique tasks, inversions
examined task by task (a defect or noise), and a family's agent × level matrix."""

from __future__ import annotations

import itertools
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

from ..agents.base import Agent
from ..judge import JudgeSummary
from ..task import LEVEL_NAMES, LEVELS
from ..trial import Trial
from . import records
from .stats import wilson


def _order(level: str) -> int:
    return LEVELS.index(level) if level in LEVELS else len(LEVELS)


def is_deterministic(agent: str) -> bool:
    """Whether trials recorded under an agent name come from a deterministic agent (unknown names are not)."""
    from ..agents import resolve_agents

    try:
        return all_deterministic(resolve_agents(agent))
    except ValueError:
        return False


def all_deterministic(agents: list[Agent]) -> bool:
    return all(getattr(a, "deterministic", False) for a in agents)


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
    min_attempts: int = records.MIN_ATTEMPTS,
) -> records.CalibrationRecord:
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
    levels: list[records.LevelStat] = []
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
            records.LevelStat(
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
        records.Inversion(lower=a.level, upper=b.level, fail_lower=a.fail_rate, fail_upper=b.fail_rate)
        for a, b in itertools.pairwise(measured)
        if a.fail_rate is not None and b.fail_rate is not None and a.fail_rate > b.fail_rate + 1e-9
    ]
    defects: list[records.Defect] = []
    noise: list[records.Noise] = []
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
                    records.Defect(
                        task_id=task_id,
                        level=level,
                        fingerprint=list(next(iter(prints))),
                        attempts=len(attempts),
                        repeats=sorted(t.repeat for t in failed),
                    )
                )
            else:
                noise.append(
                    records.Noise(
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
                    records.Shortcut(
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
        records.Probe(level=s.level, status="unprobed")
        for s in levels
        if _order(s.level) >= 1 and s.attempts and s.passes == 0
    ]
    if inversions:
        verdict: records.Verdict = "inverted"
    elif not measured or len(measured) < len(levels):
        verdict = "insufficient"
    else:
        verdict = "holds"
    return records.CalibrationRecord(
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


def ladder_report(trials: list[Trial], agent: str) -> records.LadderReport | None:
    """The matrix and the criterion's findings when `agent` names the capability ladder; None otherwise."""
    from ..agents import family
    from ..agents.ladder import CAPABILITIES as CAPABILITY

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
                records.LadderCell(
                    agent=m, level=level, tasks=len(mine), passes=sum(1 for t in mine.values() if t.passed)
                )
            )
    findings = []
    for t in sorted(valid, key=lambda t: (_order(t.level), t.task_id, rung[t.agent])):
        k = _order(t.level)
        if rung[t.agent] == k - 1 and t.passed:
            findings.append(
                records.LadderFinding(
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
                records.LadderFinding(
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
    return records.LadderReport(
        agents=list(members), levels=levels, cells=cells, findings=findings, fair=fair
    )


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
