"""The grader's frame: what a check sees, what it returns, and the registry of checks by issue code.

Grading is pure: the same final workspace and trace always give the same result. Outcome comes first — state
checks read the workspace the agent left behind — and trace checks exist for reads, which leave no state. The
dashboard state checks judge is the one the task names (`eval.judged_dashboard`), else, as in the source
benchmark, the one active when the episode ended.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from simulator import Dashboard, Workspace

from ..episode import Episode, TraceEvent
from ..task import Eval, Task


@dataclass(frozen=True, slots=True)
class CheckResult:
    code: str
    passed: bool
    label: str
    evidence: str = ""
    group: str = "state"

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "passed": self.passed,
            "label": self.label,
            "evidence": self.evidence,
            "group": self.group,
        }


@dataclass
class GradeResult:
    checks: list[CheckResult]

    @property
    def passed(self) -> bool:
        """The strict verdict: every check holds."""
        return all(c.passed for c in self.checks)

    @property
    def share(self) -> float:
        return sum(c.passed for c in self.checks) / len(self.checks) if self.checks else 1.0

    @property
    def failures(self) -> list[CheckResult]:
        return [c for c in self.checks if not c.passed]

    @property
    def failure_codes(self) -> list[str]:
        return sorted({c.code for c in self.failures})

    def fingerprint(self) -> tuple[str, ...]:
        """Which checks failed, by code and label: equal fingerprints mean the same failure."""
        return tuple(sorted(f"{c.code}:{c.label}" for c in self.failures))

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "share": round(self.share, 4),
            "failure_codes": self.failure_codes,
            "checks": [c.to_dict() for c in self.checks],
        }


@dataclass
class GradeContext:
    task: Task
    workspace: Workspace
    events: list[TraceEvent]
    final_answer: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def eval(self) -> Eval:
        return self.task.eval

    @property
    def active(self) -> Dashboard:
        return self.workspace.current_dashboard

    @cached_property
    def _judged(self) -> tuple[Dashboard, bool]:
        name = self.eval.judged_dashboard
        if name is None:
            return self.active, True
        ws = self.workspace
        for dash_id, dash in ws.initial_dashboards.items():
            if dash.name == name and dash_id in ws.dashboards:
                return ws.dashboards[dash_id], True
        named = [d for d in ws.dashboards.values() if d.name == name]
        return (named[-1], True) if named else (self.active, False)

    @property
    def judged(self) -> Dashboard:
        """The dashboard the state checks read: the named one — the dashboard of that name the episode started
        with (kept even if renamed), else the last one created under that name — or the active one."""
        return self._judged[0]

    @property
    def judged_found(self) -> bool:
        return self._judged[1]

    def initial_uuids(self, dash: Dashboard) -> set[str]:
        """Uuids of the widgets `dash` held when the episode started."""
        before = self.workspace.initial_dashboards.get(dash.id)
        return {w.uuid for w in before.widgets} if before is not None else set()

    @cached_property
    def ok_events(self) -> list[TraceEvent]:
        return [e for e in self.events if e.ok]

    def ok_calls(self, tool: str) -> list[TraceEvent]:
        return [e for e in self.ok_events if e.tool == tool]


CheckFn = Callable[[GradeContext], Iterable[CheckResult]]
CHECKS: dict[str, CheckFn] = {}


def check(code: str) -> Callable[[CheckFn], CheckFn]:
    """Register the function producing checks with issue code `code` (one function, one entry)."""

    def register(fn: CheckFn) -> CheckFn:
        if code in CHECKS:
            raise ValueError(f"check '{code}' is already registered")
        CHECKS[code] = fn
        return fn

    return register


def grade_context(ctx: GradeContext, registry: dict[str, CheckFn] | None = None) -> GradeResult:
    results: list[CheckResult] = []
    for fn in (registry or CHECKS).values():
        results.extend(fn(ctx))
    return GradeResult(results)


def grade(task: Task, episode: Episode, registry: dict[str, CheckFn] | None = None) -> GradeResult:
    return grade_context(
        GradeContext(task, episode.workspace, episode.events, episode.final_answer), registry
    )
