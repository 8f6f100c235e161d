"""What a task's eval grades, in words a reviewer reads next to the prompt.

A reviewer signs a task when the request asks for what the grader checks and nothing else. The prompt is prose and
the eval block is JSON; this module says the eval block in prose, derived from the task's own models
(certify/task.py) and, for names, the world's catalog, so it is true for every task: each required widget (added,
repaired from what the board seeds, or kept as seeded), each note and the figures it must hold and must not, tabs
and layouts, built backends and apps, the graded calls and reads, the answer and its judge, and the caps ("nothing
else added"). `taskforge report` prints it beside each prompt.
"""

from __future__ import annotations

from typing import Any

from simulator import World

from .task import RequiredWidget, Task

# Graded calls said as the work they stand for (any other tool: "a <tool> call with ...").
_CALL_WORDS = {
    "get_skill_content": lambda a: f"the {a.get('slug')} skill read",
    "read_workspace_resource": lambda a: f"{a.get('uri')} read",
    "get_workspace_prompt": lambda a: f"the {a.get('name')} prompt read",
    "manage_backends": lambda a: (
        f"backend {a.get('name')} {'added' if a.get('operation') == 'add' else a.get('operation')}"
    ),
    "manage_apps": lambda a: (
        f"app {a.get('app_name')} {a.get('operation')}d"
        if str(a.get("operation", "")).endswith("e")
        else f"app {a.get('app_name')} {a.get('operation')}"
    ),
}
# Steps whose outcome the board-state items below already say.
_STATE_TOOLS = {
    "create_widget",
    "update_widget",
    "add_generative_widget",
    "update_widget_layout",
    "delete_widget",
}


def _listing(items: list[str]) -> str:
    items = [i for i in items if i]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _value(v: Any) -> str:
    return ", ".join(map(str, v)) if isinstance(v, list) else str(v)


class _Names:
    """Display names from the world (catalog widgets, parameter labels) and the task (tabs), falling back to ids."""

    def __init__(self, task: Task, world: World | None) -> None:
        self.world = world
        self.tabs = {
            t.id: t.name or t.id
            for d in task.setup.initial_state.seeded_dashboards()
            for t in d.tabs or []
            if t.id
        }

    def _widget(self, origin: str | None, widget_id: str | None) -> Any:
        if self.world is None or not origin or not widget_id:
            return None
        fixture = self.world.fixture_of(origin)
        return fixture.catalog.widgets.get(widget_id) if fixture is not None else None

    def widget(self, origin: str | None, widget_id: str | None, name: str | None = None) -> str:
        found = self._widget(origin, widget_id)
        return found.name if found is not None else name or widget_id or "a widget"

    def values(self, origin: str | None, widget_id: str | None, args: dict[str, Any]) -> str:
        found = self._widget(origin, widget_id)
        pairs = []
        for key, value in args.items():
            if value is None:
                continue
            param = found.param(key) if found is not None else None
            label = str((param or {}).get("label") or key).strip()
            said = " ".join(w if w.isupper() else w.lower() for w in label.split())
            pairs.append(f"{said} {_value(value)}")
        return _listing(pairs)

    def tab(self, tab_id: str | None) -> str:
        return self.tabs.get(tab_id or "", tab_id or "")


def _count(req: RequiredWidget) -> str:
    if req.min_count == 0 and req.max_count is not None:
        return "at most one" if req.max_count == 1 else f"at most {req.max_count}"
    if req.max_count is not None and req.max_count == req.min_count:
        return "one" if req.min_count == 1 else str(req.min_count)
    return "a" if req.min_count == 1 else f"at least {req.min_count}"


def graded(task: Task, world: World | None = None) -> list[str]:
    """The things the eval grades, each said as a phrase (in the order a reviewer checks them)."""
    ev = task.eval
    names = _Names(task, world)
    seeded = [w for d in task.setup.initial_state.seeded_dashboards() for w in d.widgets]
    seeded_notes = {
        g.name for d in task.setup.initial_state.seeded_dashboards() for g in d.generated_widgets if g.name
    }
    steps = ev.graded_steps()
    out: list[str] = []

    def matches(w: Any, req: RequiredWidget) -> bool:
        return w.widget_id == req.widget_id and all(
            (w.data_args or {}).get(k) == v for k, v in req.data_args.items()
        )

    # a seeded widget a requirement finds as it is seeded is kept; one of the same widget that no requirement
    # finds as seeded is the one a requirement wants changed (a repair)
    kept = {id(w) for req in ev.required_widgets if req.min_count >= 1 for w in seeded if matches(w, req)}
    for req in ev.required_widgets:
        name = names.widget(req.origin, req.widget_id, req.name)
        values = names.values(req.origin, req.widget_id, req.data_args)
        on = f" on {values}" if values else ""
        tab = f" on tab {names.tab(req.tab_id)}" if req.tab_id else ""
        wrong = [w for w in seeded if w.widget_id == req.widget_id and id(w) not in kept]
        if any(matches(w, req) for w in seeded) and req.min_count >= 1:
            out.append(f"the {name}{on} kept as seeded{tab}")
        elif wrong and req.min_count >= 1:
            was = {k: v for k, v in (wrong[0].data_args or {}).items() if req.data_args.get(k) != v}
            seeded_on = names.values(req.origin, req.widget_id, was)
            out.append(f"the {name} back{on}" + (f" (seeded on {seeded_on})" if seeded_on else "") + tab)
        else:
            out.append(f"{_count(req)} {name}{on}{tab}")
    for note in ev.required_generated_widgets:
        what = "a note" if note.widget_type == "note" else f"a {note.widget_type} widget"
        called = f" named {note.name_contains}" if note.name_contains else ""
        if note.name_contains in seeded_notes and note.data_contains:
            out.append(f"the {note.widget_type}{called} kept as seeded")
            continue
        holds = (
            " holding " + _listing([f"'{x}'" if " " in x else x for x in note.data_contains])
            if note.data_contains
            else ""
        )
        spared = (
            f" and none of {len(note.must_not_contain)} other value(s) it must leave out"
            if note.must_not_contain
            else ""
        )
        tab = f" on tab {names.tab(note.tab_id)}" if note.tab_id else ""
        out.append(f"{what}{called}{holds}{spared}{tab}")
    seeded_tab_names = set(names.tabs.values())
    new_titles = [t for t in ev.required_tab_names if t not in seeded_tab_names]
    if new_titles:
        out.append(f"tab(s) titled {_listing(new_titles)}")
    kept_tabs = [names.tab(t) for t in ev.required_tabs] + [
        t for t in ev.required_tab_names if t in seeded_tab_names
    ]
    if kept_tabs:
        out.append(f"tab(s) {_listing(sorted(set(kept_tabs)))} still there")
    if ev.required_layouts:
        placed = {w.widget_uuid: w.layout for w in seeded if w.widget_uuid and w.layout is not None}
        unmoved = all(
            (seed := placed.get(r.widget_uuid or "")) is not None
            and all(getattr(r, k) in (None, getattr(seed, k)) for k in ("x", "y", "w", "h"))
            for r in ev.required_layouts
        )
        where = "at their seeded places" if unmoved else "at the places the eval sets"
        out.append(f"{len(ev.required_layouts)} widget(s) {where}")
    if ev.required_dashboard_name_contains:
        out.append(f"a dashboard named {ev.required_dashboard_name_contains}")
    for d in ev.required_widget_defs:
        params = [str(p.get("paramName")) for p in d.params_include if p.get("paramName")]
        kind = d.expect.get("type")
        out.append(
            f"backend {d.backend_name} serving {'a ' + str(kind) + ' ' if kind else ''}{d.name or d.widget_id}"
            + (f" with parameter(s) {_listing(params)}" if params else "")
        )
    for a in ev.required_app_defs:
        tabs = a.tab_names_include or a.tabs_include
        on_tabs = [
            f"{w.widget_name or w.widget_id} on tab {w.tab_name or w.tab_id}" for w in a.widgets_on_tab
        ]
        out.append(
            f"app {a.name_contains or a.template_id or '?'} on backend {a.backend_name}"
            + (f" with tab(s) {_listing(tabs)}" if tabs and not on_tabs else "")
            + (f" showing {_listing(on_tabs)}" if on_tabs else "")
        )
    for s in steps:
        if s.tool in _STATE_TOOLS:
            continue
        args = s.graded()
        said = _CALL_WORDS.get(s.tool)
        out.append(
            said(args)
            if said is not None
            else f"a {s.tool} call"
            + (
                f" with {_listing([f'{k} {_value(v)}' for k, v in args.items() if not isinstance(v, dict)])}"
                if args
                else ""
            )
        )
    for c in ev.required_tool_calls:
        out.append(
            f"a {c.tool} call with {_listing([f'{k} {_value(v)}' for k, v in c.args_contains.items()])}"
        )
    for r in ev.required_tool_results:
        out.append(f"a {r.tool} result mentioning {_listing(r.data_contains)}")
    for read in ev.required_resource_reads:
        out.append(f"{read.uri} read")
    if ev.required_values_in_answer:
        out.append(f"an answer stating {_listing(ev.required_values_in_answer)}")
    if ev.judged is not None:
        points = ev.judged.key_points
        out.append(
            f"an answer judged on {len(points)} key point(s)"
            + (f" after the {ev.judged.skill} skill" if ev.judged.skill else "")
        )
    if ev.answer_must_not_contain:
        out.append(f"the answer without {len(ev.answer_must_not_contain)} value(s) it must leave out")
    if ev.max_unrequested_widgets is not None:
        out.append(
            "nothing else added"
            if ev.max_unrequested_widgets == 0
            else f"at most {ev.max_unrequested_widgets} other widget(s) added"
        )
    if ev.workspace_checks.preserve_other_dashboards:
        out.append("the other dashboards untouched")
    return out


def graded_words(task: Task, world: World | None = None) -> str:
    """One line: "graded: <item>; <item>; …" (or "graded: nothing" for an eval that checks nothing)."""
    items = graded(task, world)
    return "graded: " + ("; ".join(items) if items else "nothing")
