"""Checks on what the agent published: custom backends' widget and app definitions."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from simulator import Rect, overlaps

from ..task import RequiredWidgetDef, WidgetOnTab
from .core import CheckResult, GradeContext, check
from .state_checks import named


@dataclass
class PublishedBackend:
    id: str
    name: str
    widgets: dict[str, Any]
    apps: list[dict[str, Any]]
    warnings: list[str]


def published(ctx: GradeContext) -> list[PublishedBackend]:
    """Custom and agent-declared backends at the end, with their definitions."""
    cached = ctx.extras.get("published")
    if cached is not None:
        return cached
    out = []
    for conn in ctx.workspace.connections:
        custom = ctx.workspace.custom.get(conn.id)
        if custom is None:
            continue
        widgets = {wid: d.definition for wid, d in conn.catalog.widgets.items()}
        out.append(
            PublishedBackend(conn.id, conn.name, widgets, list(conn.catalog.apps), list(custom.warnings))
        )
    ctx.extras["published"] = out
    return out


def _backend(ctx: GradeContext, name: str) -> PublishedBackend | None:
    return next((b for b in published(ctx) if b.name == name), None)


def _path(obj: Any, dotted: str) -> tuple[bool, Any]:
    for part in dotted.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return False, None
        obj = obj[part]
    return True, obj


def _flat_params(params: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in params if isinstance(params, list) else []:
        if isinstance(item, list):
            out.extend(_flat_params(item))
        elif isinstance(item, dict):
            out.append(item)
            out.extend(_flat_params(item.get("inputParams")))
    return out


def _shallow_includes(spec: dict[str, Any], item: dict[str, Any]) -> bool:
    for key, value in spec.items():
        if key == "renderFn":
            raw = item.get(key)
            have = {s.strip() for s in (raw if isinstance(raw, list) else str(raw or "").split(","))}
            want = {s.strip() for s in (value if isinstance(value, list) else str(value).split(","))}
            if not want <= have:
                return False
        elif item.get(key) != value:
            return False
    return True


def _named_backends(ctx: GradeContext) -> list[str]:
    names = [d.backend_name for d in ctx.eval.required_widget_defs] + [
        d.backend_name for d in ctx.eval.required_app_defs
    ]
    return list(dict.fromkeys(names))


@check("missing_custom_backend", when=("required_widget_defs", "required_app_defs"))
def missing_custom_backend(ctx: GradeContext) -> Iterable[CheckResult]:
    for name in _named_backends(ctx):
        yield CheckResult(
            "missing_custom_backend",
            _backend(ctx, name) is not None,
            f"backend '{name}' published",
            ", ".join(b.name for b in published(ctx)) or "no custom backends",
            "definitions",
        )


@check(
    "backend_validation_warnings",
    when=("required_widget_defs", "required_app_defs", "workspace_checks.require_no_backend_warnings"),
)
def backend_validation_warnings(ctx: GradeContext) -> Iterable[CheckResult]:
    names = set(_named_backends(ctx))
    for backend in published(ctx):
        if backend.name in names or ctx.eval.workspace_checks.require_no_backend_warnings:
            yield CheckResult(
                "backend_validation_warnings",
                not backend.warnings,
                f"backend '{backend.name}' accepted without warnings",
                "; ".join(backend.warnings[:3]),
                "definitions",
            )


def _def_for(backend: PublishedBackend, req: RequiredWidgetDef) -> tuple[str, dict[str, Any]] | None:
    """The served widget a requirement names: by id, or by display name when the id is the agent's choice."""
    if req.widget_id is not None:
        definition = backend.widgets.get(req.widget_id)
        return (req.widget_id, definition) if isinstance(definition, dict) else None
    want = str(req.name).casefold()
    return next(
        (
            (wid, d)
            for wid, d in backend.widgets.items()
            if isinstance(d, dict) and str(d.get("name") or "").casefold() == want
        ),
        None,
    )


@check("missing_widget_def", when=("required_widget_defs",))
def missing_widget_def(ctx: GradeContext) -> Iterable[CheckResult]:
    for req in ctx.eval.required_widget_defs:
        backend = _backend(ctx, req.backend_name)
        if backend is not None:
            yield CheckResult(
                "missing_widget_def",
                _def_for(backend, req) is not None,
                f"'{req.backend_name}' serves widget '{req.widget_id or req.name}'",
                f"widgets: {sorted(backend.widgets)[:8]}",
                "definitions",
            )


@check("widget_def_mismatch", when=("required_widget_defs",))
def widget_def_mismatch(ctx: GradeContext) -> Iterable[CheckResult]:
    for req in ctx.eval.required_widget_defs:
        backend = _backend(ctx, req.backend_name)
        found_def = _def_for(backend, req) if backend else None
        if found_def is None:
            continue
        wid, definition = found_def
        for dotted, value in req.expect.items():
            found, actual = _path(definition, dotted)
            yield CheckResult(
                "widget_def_mismatch",
                found and actual == value,
                f"{req.widget_id or req.name}.{dotted} == {value!r}",
                f"is {actual!r}" if found else "absent",
                "definitions",
            )
        params = _flat_params(definition.get("params"))
        for spec in req.params_include:
            yield CheckResult(
                "widget_def_mismatch",
                any(_shallow_includes(spec, p) for p in params),
                f"{wid} has a param like {spec}",
                f"{len(params)} param(s)",
                "definitions",
            )
        columns = ((definition.get("data") or {}).get("table") or {}).get("columnsDefs") or []
        for spec in req.columns_include:
            ok = any(isinstance(c, dict) and _shallow_includes(spec, c) for c in columns)
            yield CheckResult(
                "widget_def_mismatch",
                ok,
                f"{wid} has a column like {spec}",
                f"{len(columns)} column(s)",
                "definitions",
            )


def _find_app(
    ctx: GradeContext, backend: PublishedBackend, template_id: str | None, name_contains: str | None
) -> dict | None:
    for app in backend.apps:
        if template_id and app.get("template_id") == template_id:
            return app
        name = str(app.get("name") or "")
        if name_contains and (
            named(ctx.eval, name_contains, name)
            if ctx.eval.names_graded == "exact"
            else name_contains.casefold() in name.casefold()
        ):
            return app
    return None


def _required_apps(ctx: GradeContext) -> Iterable[tuple[Any, dict | None]]:
    for req in ctx.eval.required_app_defs:
        backend = _backend(ctx, req.backend_name)
        if backend is not None:
            yield req, _find_app(ctx, backend, req.template_id, req.name_contains)


@check("missing_app_def", when=("required_app_defs",))
def missing_app_def(ctx: GradeContext) -> Iterable[CheckResult]:
    for req, app in _required_apps(ctx):
        yield CheckResult(
            "missing_app_def",
            app is not None,
            f"'{req.backend_name}' publishes app '{req.template_id or req.name_contains}'",
            "found" if app else "not found",
            "definitions",
        )


@check("app_def_mismatch", when=("required_app_defs",))
def app_def_mismatch(ctx: GradeContext) -> Iterable[CheckResult]:
    for req, app in _required_apps(ctx):
        if app is None:
            continue
        name = app.get("name")
        tabs = _dict_or_empty(app.get("tabs"))
        for dotted, value in req.expect.items():
            found, actual = _path(app, dotted)
            yield CheckResult(
                "app_def_mismatch",
                found and actual == value,
                f"app '{name}'.{dotted} == {value!r}",
                f"is {actual!r}" if found else "absent",
                "definitions",
            )
        for tab in req.tabs_include:
            yield CheckResult(
                "app_def_mismatch",
                tab in tabs,
                f"app '{name}' has tab '{tab}'",
                f"tabs: {sorted(tabs)}",
                "definitions",
            )
        names = {k: str(t.get("name") or "") for k, t in tabs.items() if isinstance(t, dict)}
        for want in req.tab_names_include:
            yield CheckResult(
                "app_def_mismatch",
                any(n.casefold() == want.casefold() for n in names.values()),
                f"app '{name}' has a tab named '{want}'",
                f"tab names: {sorted(names.values())}",
                "definitions",
            )
        if req.tab_count is not None:
            yield CheckResult(
                "app_def_mismatch",
                len(tabs) == req.tab_count,
                f"app '{name}' has {req.tab_count} tabs",
                f"{len(tabs)} tab(s)",
                "definitions",
            )
        if req.prompts_min_count is not None:
            count = len(app.get("prompts") or [])
            yield CheckResult(
                "app_def_mismatch",
                count >= req.prompts_min_count,
                f"app '{name}' has at least {req.prompts_min_count} prompts",
                f"{count}",
                "definitions",
            )
        backend = _backend(ctx, req.backend_name)
        for item in req.widgets_on_tab:
            tab = _tab_of(tabs, item)
            refs = [x.get("i") for x in tab.get("layout") or [] if isinstance(x, dict)]
            wanted = (
                {item.widget_id}
                if item.widget_id is not None
                else {
                    wid
                    for wid, d in (backend.widgets.items() if backend else ())
                    if isinstance(d, dict)
                    and str(d.get("name") or "").casefold() == str(item.widget_name).casefold()
                }
            )
            where, what = item.tab_id or item.tab_name, item.widget_id or item.widget_name
            yield CheckResult(
                "app_def_mismatch",
                bool(wanted & set(refs)),
                f"app '{name}' tab '{where}' shows '{what}'",
                f"layout: {refs}",
                "definitions",
            )
        for spec in req.groups_include:
            want = spec.model_dump(exclude={"widgetIds_include"})
            ok = any(
                isinstance(g, dict)
                and all(g.get(k) == v for k, v in want.items())
                and set(spec.widgetIds_include) <= set(g.get("widgetIds") or [])
                for g in app.get("groups") or []
            )
            yield CheckResult(
                "app_def_mismatch", ok, f"app '{name}' has a group like {want}", "", "definitions"
            )


def _tab_of(tabs: dict[str, Any], item: WidgetOnTab) -> dict[str, Any]:
    if item.tab_id is not None:
        tab = tabs.get(item.tab_id)
        return tab if isinstance(tab, dict) else {}
    want = str(item.tab_name).casefold()
    return next(
        (t for t in tabs.values() if isinstance(t, dict) and str(t.get("name") or "").casefold() == want), {}
    )


def _app_structure_targets(ctx: GradeContext, flag: str) -> Iterable[tuple[PublishedBackend, dict]]:
    """Apps to check: every published app when the task's app_structure asks, plus required apps with the flag."""
    default_on = getattr(ctx.eval.app_structure, flag)
    seen: set[int] = set()
    for backend in published(ctx):
        for app in backend.apps:
            if default_on:
                seen.add(id(app))
                yield backend, app
    for req, req_app in _required_apps(ctx):
        if req_app is not None and getattr(req, flag) and id(req_app) not in seen:
            req_backend = _backend(ctx, req.backend_name)
            if req_backend is not None:
                seen.add(id(req_app))
                yield req_backend, req_app


def _dict_or_empty(value: Any) -> dict[str, Any]:
    """`value` when the app's JSON held an object there, else `{}`: a malformed section grades as empty."""
    return value if isinstance(value, dict) else {}


@check(
    "app_layout_ref_invalid", when=("app_structure.layout_refs_valid", "required_app_defs.layout_refs_valid")
)
def app_layout_refs(ctx: GradeContext) -> Iterable[CheckResult]:
    for backend, app in _app_structure_targets(ctx, "layout_refs_valid"):
        tabs = _dict_or_empty(app.get("tabs"))
        bad = [
            str(x.get("i"))
            for t in tabs.values()
            if isinstance(t, dict)
            for x in t.get("layout") or []
            if isinstance(x, dict) and x.get("i") != "navigation_bar" and x.get("i") not in backend.widgets
        ]
        yield CheckResult(
            "app_layout_ref_invalid",
            not bad,
            f"app '{app.get('name')}' layout refers to served widgets",
            f"unknown: {bad}" if bad else "ok",
            "definitions",
        )


@check("app_layout_overlap", when=("app_structure.no_overlaps", "required_app_defs.no_overlaps"))
def app_layout_overlap(ctx: GradeContext) -> Iterable[CheckResult]:
    for _, app in _app_structure_targets(ctx, "no_overlaps"):
        tabs = _dict_or_empty(app.get("tabs"))
        for key, tab in tabs.items():
            rects = []
            for x in (tab.get("layout") or []) if isinstance(tab, dict) else []:
                try:
                    rects.append((x.get("i"), Rect(*(float(x[k]) for k in ("x", "y", "w", "h")))))
                except (KeyError, TypeError, ValueError, AttributeError):
                    continue
            clashes = [
                f"{a}/{b}" for i, (a, ra) in enumerate(rects) for b, rb in rects[:i] if overlaps(ra, rb)
            ]
            yield CheckResult(
                "app_layout_overlap",
                not clashes,
                f"app '{app.get('name')}' tab '{key}' has no overlaps",
                f"{clashes}" if clashes else "ok",
                "definitions",
            )
