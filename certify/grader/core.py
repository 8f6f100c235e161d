"""The grader's frame: what a check sees, what it returns, and the registry of checks by issue code.

Grading is pure: the same final workspace and trace always give the same result. Outcome comes first — state
checks read the workspace the agent left behind — and trace checks exist for reads, which leave no state. The
dashboard state checks judge is the one the task names (`eval.judged_dashboard`), else, as in the source
benchmark, the one active when the episode ended.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

from simulator import Dashboard, Workspace

from ..episode import Episode, TraceEvent
from ..task import Eval, Task


class CheckResult(NamedTuple):
    """One check's outcome. A named tuple, immutable and hashable as a frozen dataclass is, and made several
    times faster: a certification makes some seventy thousand (every check of every grade), and a frozen
    dataclass's `__init__` sets each field through `object.__setattr__`."""

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
_WHEN = "__check_when__"


def check(code: str, *, when: tuple[str, ...] = ()) -> Callable[[CheckFn], CheckFn]:
    """Register the function producing checks with issue code `code` (one function, one entry).

    `when` names the eval fields (dotted; through a list, any element's) whose being set makes the check apply
    to a task; empty, it applies to every task. Grading never runs a check none of whose fields the task sets,
    so that check's code cannot touch the task's verdict: this is what lets a task's certificate depend only on
    the check families it uses (`certify.lock.family_fingerprints`), soundly, whatever a check's body does."""
    for path in when:
        _valid_path(path)

    def register(fn: CheckFn) -> CheckFn:
        if code in CHECKS:
            raise ValueError(f"check '{code}' is already registered")
        setattr(fn, _WHEN, tuple(when))
        CHECKS[code] = fn
        return fn

    return register


def check_when(fn: CheckFn) -> tuple[str, ...]:
    """The eval fields a check is conditional on (empty: unconditional, as is any function registered by hand)."""
    return tuple(getattr(fn, _WHEN, ()))


def applies(fn: CheckFn, ev: Eval) -> bool:
    """Does the check run for a task with this eval (one of its `when` fields set, or it has none)?"""
    when = check_when(fn)
    return not when or any(_is_set(ev, path.split(".")) for path in when)


def _is_set(value: Any, path: list[str]) -> bool:
    if isinstance(value, list | tuple):
        return any(_is_set(v, path) for v in value)
    if path:
        return _is_set(getattr(value, path[0]), path[1:])
    if value is None or value is False:
        return False
    return not (isinstance(value, str | list | tuple | dict | set) and not value)


def _valid_path(path: str) -> None:
    """A `when` path names real Eval fields (a typo would make a check silently never run)."""
    import typing

    from pydantic import BaseModel

    model: Any = Eval
    for part in path.split("."):
        if model is None:
            raise ValueError(f"check condition '{path}': '{part}' is below a field that holds no model")
        field_info = model.model_fields.get(part)
        if field_info is None:
            if isinstance(getattr(model, part, None), property):
                model = None
                continue
            raise ValueError(f"check condition '{path}': {model.__name__} has no field '{part}'")
        stack, model = [field_info.annotation], None
        while stack:
            ann = stack.pop()
            if isinstance(ann, type) and issubclass(ann, BaseModel):
                model = ann
            stack.extend(typing.get_args(ann))


# The checks that apply to an eval, by the eval object: (a weak reference to it, the registry's functions,
# those of them that apply). Which checks apply is a function of the eval's fields and the functions alone,
# and a task is graded many times over in a certification (every replay, variant and shortcut of it).
_APPLYING: dict[int, tuple[weakref.ref[Eval], tuple[CheckFn, ...], list[CheckFn]]] = {}
_APPLYING_SIZE = 4096


def applying(ev: Eval, registry: dict[str, CheckFn] | None = None) -> list[CheckFn]:
    """The registry's checks that apply to `ev`, in registry order (`applies` for each, remembered per eval
    object; evals are never edited in place — a changed task is a new model)."""
    fns = tuple((registry or CHECKS).values())
    held = _APPLYING.get(id(ev))
    if held is not None and held[0]() is ev and held[1] == fns:
        return held[2]
    chosen = [fn for fn in fns if applies(fn, ev)]
    if len(_APPLYING) >= _APPLYING_SIZE:
        _APPLYING.clear()
    _APPLYING[id(ev)] = (weakref.ref(ev), fns, chosen)
    return chosen


def grade_context(ctx: GradeContext, registry: dict[str, CheckFn] | None = None) -> GradeResult:
    results: list[CheckResult] = []
    for fn in applying(ctx.eval, registry):
        results.extend(fn(ctx))
    return GradeResult(results)


def passes(task: Task, episode: Episode, registry: dict[str, CheckFn] | None = None) -> bool:
    """`grade(...).passed`, stopping at the first check that fails: for a caller that asks only whether an
    episode passes (a counterfactual copy expects most of its episodes to fail, and which checks fail there is
    not reported)."""
    ctx = GradeContext(task, episode.workspace, episode.events, episode.final_answer)
    for fn in applying(ctx.eval, registry):
        for result in fn(ctx):
            if not result.passed:
                return False
    return True


def grade(task: Task, episode: Episode, registry: dict[str, CheckFn] | None = None) -> GradeResult:
    return grade_context(
        GradeContext(task, episode.workspace, episode.events, episode.final_answer), registry
    )
