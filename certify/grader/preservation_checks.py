"""Checks that what the agent was not asked to touch is as it was.

Every dashboard except the one opened at the start must end deeply equal to its initial composition. Initial
dashboards are shared frozen objects, so an untouched dashboard is recognised by identity without comparing.
"""

from __future__ import annotations

from collections.abc import Iterable

from .core import CheckResult, GradeContext, check


@check("collateral_dashboard_change", when=("workspace_checks.preserve_other_dashboards",))
def preserve_other_dashboards(ctx: GradeContext) -> Iterable[CheckResult]:
    if not ctx.eval.workspace_checks.preserve_other_dashboards:
        return
    ws = ctx.workspace
    changed = []
    for dash_id, before in ws.initial_dashboards.items():
        if dash_id == ws.initial_current:
            continue
        after = ws.dashboards.get(dash_id)
        if after is before:
            continue
        if after is None:
            changed.append(f"{before.name} ({dash_id}) missing")
        elif after.composition() != before.composition():
            changed.append(f"{before.name} ({dash_id}) changed")
    yield CheckResult(
        "collateral_dashboard_change",
        not changed,
        "every other dashboard unchanged",
        "; ".join(changed[:5]) if changed else "unchanged",
        "preservation",
    )


@check("custom_backend_replaced", when=("workspace_checks.preserve_custom_backend_ids",))
def preserve_custom_backend_ids(ctx: GradeContext) -> Iterable[CheckResult]:
    if not ctx.eval.workspace_checks.preserve_custom_backend_ids:
        return
    gone = [k for k in ctx.workspace.initial_custom if k not in ctx.workspace.custom]
    yield CheckResult(
        "custom_backend_replaced",
        not gone,
        "initial custom backends kept",
        f"missing: {gone}",
        "preservation",
    )


@check("duplicate_custom_backend_name", when=("workspace_checks.unique_custom_backend_names",))
def unique_custom_backend_names(ctx: GradeContext) -> Iterable[CheckResult]:
    if not ctx.eval.workspace_checks.unique_custom_backend_names:
        return
    names = [b.name for b in ctx.workspace.custom.values()]
    dupes = sorted({n for n in names if names.count(n) > 1})
    yield CheckResult(
        "duplicate_custom_backend_name",
        not dupes,
        "custom backend names unique",
        f"duplicates: {dupes}",
        "preservation",
    )


@check("unexpected_dashboard_created", when=("workspace_checks.max_dashboard_delta",))
def dashboard_delta(ctx: GradeContext) -> Iterable[CheckResult]:
    limit = ctx.eval.workspace_checks.max_dashboard_delta
    if limit is None:
        return
    delta = len(ctx.workspace.dashboards) - len(ctx.workspace.initial_dashboards)
    yield CheckResult(
        "unexpected_dashboard_created",
        delta <= limit,
        f"at most {limit} new dashboard(s)",
        f"{delta} created",
        "preservation",
    )


@check("unexpected_backend_created", when=("workspace_checks.max_custom_backend_delta",))
def backend_delta(ctx: GradeContext) -> Iterable[CheckResult]:
    limit = ctx.eval.workspace_checks.max_custom_backend_delta
    if limit is None:
        return
    delta = len(ctx.workspace.custom) - len(ctx.workspace.initial_custom)
    yield CheckResult(
        "unexpected_backend_created",
        delta <= limit,
        f"at most {limit} new backend(s)",
        f"{delta} added",
        "preservation",
    )
