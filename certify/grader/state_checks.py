"""Checks on the final state of the judged dashboard (the one the task names, else the one active at the end)."""

from __future__ import annotations

import weakref
from collections.abc import Iterable

from simulator import Rect, Widget, overlaps

from ..task import Eval, RequiredGeneratedWidget, RequiredWidget
from .core import CheckResult, GradeContext, check
from .match import json_blob, name_matches, numbers_in, subset, text_contains


def widget_matches(widget: Widget, req: RequiredWidget) -> bool:
    return (
        not widget.generated
        and widget.origin == req.origin
        and (req.widget_id is None or widget.widget_id == req.widget_id)
        and (req.name is None or widget.name.casefold() == req.name.casefold())
        and (req.tab_id is None or widget.tab_id == req.tab_id)
        and subset(req.data_args, widget.data_args)
    )


def named(ev: Eval, want: str, actual: str) -> bool:
    """A title or name the agent wrote, graded as the task says (`names_graded`)."""
    return name_matches(
        want, actual, exact=ev.names_graded == "exact", accepted=ev.accepted_names.get(want, ())
    )


def generated_matches(widget: Widget, req: RequiredGeneratedWidget, ev: Eval) -> bool:
    return (
        widget.generated
        and widget.type == req.widget_type
        and (req.tab_id is None or widget.tab_id == req.tab_id)
        and (
            not req.name_contains
            or (
                named(ev, req.name_contains, widget.name)
                if ev.names_graded == "exact"
                else req.name_contains.casefold() in widget.name.casefold()
            )
        )
    )


# A requirement's label, by the requirement object (evals are never edited in place — a changed task is a new
# model): every grade of a task labels the same requirements, and their values are serialised for it.
_DESCRIBED: dict[int, tuple[weakref.ref[RequiredWidget], str]] = {}
_DESCRIBED_SIZE = 4096


def _describe(req: RequiredWidget) -> str:
    held = _DESCRIBED.get(id(req))
    if held is not None and held[0]() is req:
        return held[1]
    tab = f" on tab '{req.tab_id}'" if req.tab_id is not None else ""
    text = f"{req.origin}/{req.widget_id or repr(req.name)} {json_blob(req.data_args)}{tab}"
    if len(_DESCRIBED) >= _DESCRIBED_SIZE:
        _DESCRIBED.clear()
    _DESCRIBED[id(req)] = (weakref.ref(req), text)
    return text


@check("missing_dashboard", when=("judged_dashboard",))
def judged_dashboard(ctx: GradeContext) -> Iterable[CheckResult]:
    name = ctx.eval.judged_dashboard
    if name is not None:
        yield CheckResult(
            "missing_dashboard",
            ctx.judged_found,
            f"dashboard '{name}' present",
            f"judging '{ctx.judged.name}' ({ctx.judged.id})",
        )


@check("dashboard_name", when=("required_dashboard_name_contains",))
def dashboard_name(ctx: GradeContext) -> Iterable[CheckResult]:
    want = ctx.eval.required_dashboard_name_contains
    if want:
        name = ctx.judged.name
        yield CheckResult(
            "dashboard_name",
            named(ctx.eval, want, name),
            f"active dashboard named like '{want}'",
            f"active dashboard is '{name}' ({ctx.judged.id})",
        )


@check("missing_tab", when=("required_tabs",))
def required_tabs(ctx: GradeContext) -> Iterable[CheckResult]:
    ids = ctx.judged.tab_ids()
    for tab_id in ctx.eval.required_tabs:
        yield CheckResult("missing_tab", tab_id in ids, f"tab '{tab_id}'", f"tabs: {ids}")


@check("missing_tab_name", when=("required_tab_names",))
def required_tab_names(ctx: GradeContext) -> Iterable[CheckResult]:
    names = [t.name for t in ctx.judged.tabs]
    for want in ctx.eval.required_tab_names:
        ok = any(named(ctx.eval, want, n) for n in names)
        yield CheckResult("missing_tab_name", ok, f"tab named like '{want}'", f"tab names: {names}")


def _counts(ctx: GradeContext) -> list[int]:
    """How many widgets of the judged dashboard match each required widget, in order (the floor and the cap
    checks both count them: counted once per grade)."""
    held = ctx.extras.get("required_counts")
    if held is None:
        widgets = ctx.judged.widgets
        held = ctx.extras["required_counts"] = [
            sum(1 for w in widgets if widget_matches(w, req)) for req in ctx.eval.required_widgets
        ]
    return held


@check("missing_widget", when=("required_widgets",))
def required_widgets(ctx: GradeContext) -> Iterable[CheckResult]:
    for req, count in zip(ctx.eval.required_widgets, _counts(ctx), strict=True):
        yield CheckResult(
            "missing_widget",
            count >= req.min_count,
            f"at least {req.min_count} x {_describe(req)}",
            f"{count} matching on '{ctx.judged.name}'",
        )


@check("too_many_widgets", when=("required_widgets.max_count",))
def widget_caps(ctx: GradeContext) -> Iterable[CheckResult]:
    for req, count in zip(ctx.eval.required_widgets, _counts(ctx), strict=True):
        if req.max_count is not None:
            yield CheckResult(
                "too_many_widgets",
                count <= req.max_count,
                f"at most {req.max_count} x {_describe(req)}",
                f"{count} matching on '{ctx.judged.name}'",
            )


def generated_blob(widget: Widget) -> str:
    """What a generated widget says. A note's text as written: JSON-escaped, a line break would glue its `n` to
    the figure after it, which would then not read as a number."""
    data = widget.generated_data
    text = data if isinstance(data, str) else json_blob(data)
    return " ".join([text, widget.name, widget.description or "", widget.tab_id])


@check("missing_generated_widget", when=("required_generated_widgets",))
def required_generated_widgets(ctx: GradeContext) -> Iterable[CheckResult]:
    for req in ctx.eval.required_generated_widgets:
        candidates = [w for w in ctx.judged.widgets if generated_matches(w, req, ctx.eval)]
        missing: list[str] = list(req.data_contains)
        for w in candidates:
            blob = generated_blob(w)
            nums = numbers_in(blob)
            absent = [s for s in req.data_contains if not text_contains(blob, s, blob_numbers=nums)]
            if not absent:
                missing = []
                break
            if len(absent) < len(missing):
                missing = absent
        ok = bool(candidates) and not missing
        label = f"{req.widget_type} named like '{req.name_contains or ''}' containing {req.data_contains}"
        if not candidates:
            evidence = f"no {req.widget_type} with that name on '{ctx.judged.name}'"
        elif missing:
            evidence = f"closest candidate lacks {missing}"
        else:
            evidence = "found"
        yield CheckResult("missing_generated_widget", ok, label, evidence)


@check("layout_mismatch", when=("required_layouts",))
def required_layouts(ctx: GradeContext) -> Iterable[CheckResult]:
    for req in ctx.eval.required_layouts:
        want = {k: getattr(req, k) for k in ("x", "y", "w", "h") if getattr(req, k) is not None}
        candidates = [
            w
            for w in ctx.judged.widgets
            if (req.widget_uuid is None or w.uuid == req.widget_uuid)
            and (req.widget_id is None or w.widget_id == req.widget_id)
            and (req.tab_id is None or w.tab_id == req.tab_id)
        ]
        ok = any(all(float(getattr(w, k)) == float(v) for k, v in want.items()) for w in candidates)
        ref = req.widget_uuid or req.widget_id or "widget"
        seen = [f"{w.uuid}@{w.tab_id}:{w.x:g},{w.y:g},{w.w:g},{w.h:g}" for w in candidates][:3]
        yield CheckResult(
            "layout_mismatch",
            ok,
            f"{ref} at {want} on tab '{req.tab_id}'",
            f"found {seen}" if seen else "no such widget",
        )


@check("layout_out_of_grid", when=("layout.within_grid",))
def within_grid(ctx: GradeContext) -> Iterable[CheckResult]:
    rules = ctx.eval.layout
    if not rules.within_grid:
        return
    for w in ctx.judged.widgets:
        ok = w.x >= 0 and w.y >= 0 and w.w > 0 and w.h > 0 and w.x + w.w <= rules.grid_width
        yield CheckResult(
            "layout_out_of_grid",
            ok,
            f"{w.uuid} inside the {rules.grid_width}-column grid",
            f"x={w.x:g} y={w.y:g} w={w.w:g} h={w.h:g}",
        )


@check("layout_overlap", when=("layout.no_overlaps",))
def no_overlaps(ctx: GradeContext) -> Iterable[CheckResult]:
    if not ctx.eval.layout.no_overlaps:
        return
    tabs: dict[str, list[Widget]] = {}
    for w in ctx.judged.widgets:
        tabs.setdefault(w.tab_id, []).append(w)
    for tab_id, widgets in tabs.items():
        clashes = []
        for i, a in enumerate(widgets):
            for b in widgets[:i]:
                if overlaps(Rect(a.x, a.y, a.w, a.h), Rect(b.x, b.y, b.w, b.h)):
                    clashes.append(f"{a.uuid}/{b.uuid}")
        yield CheckResult(
            "layout_overlap",
            not clashes,
            f"no overlapping widgets on tab '{tab_id}'",
            f"overlaps: {clashes}" if clashes else "none",
        )
