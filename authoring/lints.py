"""Mechanical lints the rule validator applies to one task: what a Find level must not give away, and whether the
request points only at what the episode has. (Whether it reads as a reviewer would sign it is the prose gate's,
certify/prose.py: a fault there stops certification, so it never reaches a validator.)

Find measures finding a widget from its description. It measures nothing when the target is the only widget of
its app that accepts the values the request states (an agent matching parameter signatures finds it without
reading the description), or when a repair's target is the only widget on the board (there is nothing to tell it
from). A request is incoherent when it points at a tab or a dashboard the episode does not have.
"""

from __future__ import annotations

import re
from typing import Any

from certify import Task
from simulator import WidgetDef, World, value_allowed

_TAB_MENTION = re.compile(r"\bthe ((?:[A-Z][\w&'-]*\s+){1,4})tab\b")


def _target(task: Task, world: World) -> tuple[WidgetDef, dict[str, Any], list[WidgetDef]] | None:
    """The Find target (its definition, the values the level grades on it) and the widgets of its app."""
    name = next((h.value for h in (task.meta.hidden if task.meta else []) if h.kind == "target"), None)
    if name is None:
        return None
    for req in task.eval.required_widgets:
        fixture = world.fixture_of(req.origin)
        widget = (
            fixture.catalog.widgets.get(req.widget_id or "")
            if fixture is not None and req.widget_id
            else None
        )
        if widget is not None and fixture is not None and widget.name == name:
            app = widget.definition.get("category")
            siblings = [w for w in fixture.catalog.widgets.values() if w.definition.get("category") == app]
            return widget, {k: v for k, v in (req.data_args or {}).items() if v is not None}, siblings
    return None


def find_giveaways(task: Task, world: World) -> list[str]:
    """Why a Find level's target can be found without its description (empty when it cannot)."""
    if task.level != 1:
        return []
    found = _target(task, world)
    if found is None:
        return []
    widget, values, siblings = found
    out = []
    fits = [
        w
        for w in siblings
        if values and all((p := w.param(k)) is not None and value_allowed(p, v) for k, v in values.items())
    ]
    if values and [w.widget_id for w in fits] == [widget.widget_id]:
        out.append(
            f"'{widget.name}' is the only widget of its app that takes {values}: those values alone single it "
            "out, without the description (whether the shortcuts battery's own matcher also finds it is the gate's "
            "verdict, not this lint's)"
        )
    seeded = [
        w
        for d in task.setup.initial_state.seeded_dashboards()
        if d.name == task.setup.default_selected_dashboard
        for w in d.widgets
    ]
    if seeded and all(w.widget_id == widget.widget_id for w in seeded):
        out.append(f"'{widget.name}' is the only widget on the dashboard: there is nothing to tell it from")
    return out


def incoherences(task: Task) -> list[str]:
    """References the request makes that the episode cannot honour: a tab the open dashboard does not have."""
    out = []
    tabs = {t.name for d in task.setup.initial_state.seeded_dashboards() for t in d.tabs or []}
    for m in _TAB_MENTION.finditer(task.prompt):
        name = m.group(1).strip()
        if tabs and name not in tabs and not name.lower().startswith(("a ", "its ")):
            out.append(
                f"the request names the '{name}' tab, which the dashboard does not have (tabs: "
                # seeded tabs are named in practice; an unnamed one would fail here as it always has
                f"{', '.join(sorted(tabs))})"  # type: ignore[arg-type]
            )
    return out
