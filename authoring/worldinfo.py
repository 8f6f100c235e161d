"""What a story writer needs to know about a world, as plain data: backends, apps, widgets with their
parameters and options, skills, resources and prompts, and any of them looked up by name.

`taskforge world show` renders it (or prints it as JSON) and `taskforge new story --widget` prefills a
scaffold from it, so nobody reads a world's JSON by hand. Rows are sampled through the workspace's own
get_widget_data tool, so what is shown is what an agent is served.
"""

from __future__ import annotations

from typing import Any

from simulator import BackendFixture, WidgetDef, Workspace, World, option_values

from .suggest import nearest

SAMPLE_ROWS = 3


def _twins(world: World, fixture: BackendFixture) -> list[str]:
    return [slug for slug, f in world.backends.items() if f.origin == fixture.origin and slug != fixture.slug]


def param_info(param: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": param.get("paramName"),
        "label": param.get("label"),
        "type": param.get("type"),
        "default": param.get("value"),
        "options": [str(v) for v in option_values(param)],
    }


def overview(world: World) -> dict[str, Any]:
    backends = []
    for slug, fixture in world.backends.items():
        backends.append(
            {
                "slug": slug,
                "origin": fixture.origin,
                "file": fixture.file,
                "connected": slug in world.default_backends,
                "twins": _twins(world, fixture),
                "widgets": len(fixture.catalog.widgets),
                "widget_types": sorted({d.type for d in fixture.catalog.widgets.values()}),
                "apps": [
                    {
                        "name": a.get("name"),
                        "template_id": a.get("template_id"),
                        "tabs": [
                            t.get("name") for t in (a.get("tabs") or {}).values() if isinstance(t, dict)
                        ],
                    }
                    for a in fixture.catalog.apps
                ],
            }
        )
    return {
        "kind": "world",
        "world": str(world.path),
        "name": world.name,
        "description": world.description,
        "default_backends": list(world.default_backends),
        "backends": backends,
        "skills": [
            {"slug": s.slug, "name": s.name, "description": s.description}
            for s in sorted(world.skills.values(), key=lambda s: s.slug)
        ],
        "resources": [
            {"uri": r.uri, "title": r.title, "description": r.description}
            for r in sorted(world.resources.values(), key=lambda r: r.uri)
        ],
        "prompts": [
            {"name": p.name, "description": p.description}
            for p in sorted(world.prompts.values(), key=lambda p: p.name)
        ],
        "initial_states": sorted(world.baselines),
    }


def sample_rows(
    world: World,
    fixture: BackendFixture,
    widget: WidgetDef,
    data_args: dict[str, Any] | None = None,
    limit: int = SAMPLE_ROWS,
) -> tuple[int, list[Any]]:
    """(rows served, the first `limit` of them) for the widget's default parameters."""
    ws = Workspace.start(world, {"workspace_backends": [fixture.slug], "workspace_baseline": ""})
    envelope = ws.call(
        "get_widget_data",
        {"origin": fixture.origin, "widget_id": widget.widget_id, "data_args": data_args or {}},
    )
    rows = (envelope.data or {}).get("data") if envelope.ok and isinstance(envelope.data, dict) else None
    rows = rows if isinstance(rows, list) else []
    return len(rows), rows[:limit]


def widget_info(
    world: World, fixture: BackendFixture, widget: WidgetDef, *, sample: int = SAMPLE_ROWS
) -> dict[str, Any]:
    apps = fixture.catalog.apps_of(widget.widget_id)
    count, rows = sample_rows(world, fixture, widget, limit=sample)
    columns = list(dict.fromkeys(k for r in rows if isinstance(r, dict) for k in r))
    return {
        "kind": "widget",
        "name": widget.name,
        "widget_id": widget.widget_id,
        "backend": fixture.slug,
        "origin": fixture.origin,
        "twins": _twins(world, fixture),
        "type": widget.type,
        "category": widget.definition.get("category"),
        "description": str(widget.definition.get("description") or ""),
        "apps": apps,
        "params": [param_info(p) for p in widget.params],
        "rows_served": count,
        "columns": columns,
        "sample_rows": rows,
        "target": {"widget": widget.name, **({"app": apps[0]} if apps else {}), "origin": fixture.origin},
    }


def params_alone(fixture: BackendFixture, widget: WidgetDef) -> bool:
    """Whether no other widget of `widget`'s app takes every one of its parameters: then the values a story
    states for all of them single it out (a signature matcher finds it without the description), and `check`
    refuses it as a first target (`factcheck.findability._signature_errors`). Said up front, in `world show APP`,
    so a writer picks a first target another widget could be mistaken for."""
    app = widget.definition.get("category")
    names = [str(p.get("paramName")) for p in widget.params if p.get("paramName")]
    if not app or not names:
        return False
    return not any(
        other.widget_id != widget.widget_id
        and other.definition.get("category") == app
        and all(other.param(n) is not None for n in names)
        for other in fixture.catalog.widgets.values()
    )


def listed_among(fixture: BackendFixture, widget: WidgetDef, values: dict[str, Any]) -> tuple[int, list[str]]:
    """Where `widget` sits, in the catalog's listing order, among the widgets of its app that take every one of
    `values` (parameter name -> value): (its index, their names), by `factcheck.fitting_listed`, the rule check's
    place warning (`checks.listed_place`) applies too. At either end of that list a reader of catalog places
    (the `catalog_first` / `catalog_last` probes) finds it without reading what it serves."""
    from .factcheck import fitting_listed

    fits = fitting_listed(fixture, widget, values)
    names = [fixture.catalog.widgets[w].name for w in fits]
    return next((i for i, w in enumerate(fits) if w == widget.widget_id), 0), names


def own_values(widget: WidgetDef) -> dict[str, Any]:
    """A value for each parameter of `widget`: its default, else its first option (what a story stating all of
    them could state, for the marks of `world show APP`)."""
    out: dict[str, Any] = {}
    for p in widget.params:
        name = p.get("paramName")
        if not name:
            continue
        options = option_values(p)
        default = p.get("value")
        out[str(name)] = default if default not in (None, "") else (options[0] if options else "")
    return out


def listed_end(fixture: BackendFixture, widget: WidgetDef, shown: dict[str, Any] | None = None) -> bool:
    """Whether `widget` is the first or the last listed of the widgets of its app that take its parameters'
    values — those `shown` beside it (an app's layout), the others `own_values` — while another widget of the
    app takes all its parameters (else `params_alone` says more): a story whose Find target it is, stating
    these values, gets check's "a reader of places" warning (`checks.listed_place`, the same rule)."""
    if not widget.definition.get("category") or params_alone(fixture, widget):
        return False
    values = {**own_values(widget), **{k: v for k, v in (shown or {}).items() if widget.param(k) is not None}}
    if not values:
        return False
    at, names = listed_among(fixture, widget, values)
    return at in (0, len(names) - 1)


def app_info(fixture: BackendFixture, app: dict[str, Any]) -> dict[str, Any]:
    tabs = []
    for tab in (app.get("tabs") or {}).values():
        if not isinstance(tab, dict):
            continue
        widgets = []
        for item in tab.get("layout") or []:
            if not isinstance(item, dict):
                continue
            definition = fixture.catalog.widgets.get(str(item.get("i")))
            widgets.append(
                {
                    "widget_id": item.get("i"),
                    "name": definition.name if definition else None,
                    "type": definition.type if definition else None,
                    "params": (item.get("state") or {}).get("params") or {},
                    "params_alone": params_alone(fixture, definition) if definition else False,
                    "listed_end": (
                        listed_end(fixture, definition, (item.get("state") or {}).get("params") or {})
                        if definition
                        else False
                    ),
                }
            )
        tabs.append({"id": tab.get("id"), "name": tab.get("name"), "widgets": widgets})
    return {
        "kind": "app",
        "name": app.get("name"),
        "template_id": app.get("template_id"),
        "backend": fixture.slug,
        "origin": fixture.origin,
        "description": app.get("description"),
        "prompts": app.get("prompts") or [],
        "tabs": tabs,
    }


def backend_info(world: World, fixture: BackendFixture) -> dict[str, Any]:
    return {
        "kind": "backend",
        "slug": fixture.slug,
        "origin": fixture.origin,
        "file": fixture.file,
        "connected": fixture.slug in world.default_backends,
        "twins": _twins(world, fixture),
        "apps": [a.get("name") for a in fixture.catalog.apps],
        "widgets": [
            {
                "widget_id": w.widget_id,
                "name": w.name,
                "type": w.type,
                "apps": fixture.catalog.apps_of(w.widget_id),
            }
            for w in fixture.catalog.widgets.values()
        ],
    }


def _same(a: Any, b: str) -> bool:
    return isinstance(a, str) and a.casefold() == b.casefold()


def _fixtures(world: World, backend: str | None) -> list[BackendFixture]:
    """Connected backends first, so a twin's default copy is the one shown."""
    if backend is not None:
        fixture = world.backend(backend)
        return [fixture] if fixture is not None else []
    ordered = [world.backends[s] for s in world.default_backends if s in world.backends]
    return ordered + [f for f in world.backends.values() if f not in ordered]


def lookup(
    world: World, name: str, *, backend: str | None = None, sample: int = SAMPLE_ROWS
) -> list[dict[str, Any]]:
    """Everything called `name` (case-insensitive): a backend (slug, alias or origin), an app (name or template
    id), a widget (name or id), a skill (slug or name), a resource (uri or title) or a prompt. A widget served
    by twin backends is shown once, from the connected twin."""
    found: list[dict[str, Any]] = []
    fixtures = _fixtures(world, backend)
    direct = world.backend(name)
    for fixture in fixtures:
        if fixture is direct or _same(fixture.slug, name) or _same(fixture.origin, name):
            found.append(backend_info(world, fixture))
    seen_widgets: set[tuple[str, str]] = set()
    seen_apps: set[tuple[str, str]] = set()
    for fixture in fixtures:
        for app in fixture.catalog.apps:
            if (_same(app.get("name"), name) or _same(app.get("template_id"), name)) and (
                fixture.origin,
                str(app.get("name")),
            ) not in seen_apps:
                seen_apps.add((fixture.origin, str(app.get("name"))))
                found.append(app_info(fixture, app))
        for widget in fixture.catalog.widgets.values():
            if (_same(widget.name, name) or _same(widget.widget_id, name)) and (
                fixture.origin,
                widget.widget_id,
            ) not in seen_widgets:
                seen_widgets.add((fixture.origin, widget.widget_id))
                found.append(widget_info(world, fixture, widget, sample=sample))
    for skill in world.skills.values():
        if _same(skill.slug, name) or _same(skill.name, name):
            found.append({"kind": "skill", **skill.public()})
    for resource in world.resources.values():
        if _same(resource.uri, name) or _same(resource.title, name):
            found.append({"kind": "resource", **resource.public()})
    for prompt in world.prompts.values():
        if _same(prompt.name, name):
            found.append({"kind": "prompt", **prompt.public()})
    return found


def all_names(world: World) -> list[str]:
    names: list[str] = []
    for fixture in world.backends.values():
        names += [fixture.slug, fixture.origin]
        names += [str(a.get("name")) for a in fixture.catalog.apps]
        names += [w.name for w in fixture.catalog.widgets.values()]
    names += [s.slug for s in world.skills.values()] + [r.uri for r in world.resources.values()]
    names += [r.title for r in world.resources.values()] + list(world.prompts)
    return list(dict.fromkeys(n for n in names if n))


def suggestions(world: World, name: str) -> list[str]:
    return nearest(name, all_names(world), limit=5)
