"""A small task on the mini world, built in code so each test can bend one thing."""

from __future__ import annotations

import copy
from typing import Any

from certify.task import Task

SEEDED_BOARD: dict[str, Any] = {
    "name": "Task Board",
    "tabs": [{"id": "review", "name": "Review"}],
    "widgets": [
        {
            "origin": "Acme Data",
            "widget_id": "desk_overview_positions",
            "widget_uuid": "w_pos",
            "tab_id": "review",
            "data_args": {"fund": "Alpha", "period": "MTD"},
            "layout": {"x": 0, "y": 0, "w": 20, "h": 10},
        },
        {
            "origin": "Acme Data",
            "widget_id": "desk_overview_alerts",
            "widget_uuid": "w_alert",
            "tab_id": "review",
            "layout": {"x": 20, "y": 0, "w": 20, "h": 8},
        },
    ],
}

BASE: dict[str, Any] = {
    "id": "desk_fix_level0",
    "difficulty": "level0",
    "prompt": "On the open Task Board, set the Positions view to fund Gamma and period QTD, then leave a Desk Note "
    "recording the weight served.",
    "setup": {
        "workspace_baseline": "lived",
        "workspace_skills": ["close-checklist"],
        "default_selected_dashboard": "Task Board",
        "allowed_tools": [
            "get_workspace_snapshot",
            "list_available_widgets",
            "get_widget_schema",
            "get_widget_data",
            "create_widget",
            "update_widget",
            "add_generative_widget",
            "get_skill_content",
            "update_widget_layout",
            "delete_widget",
            "manage_backends",
            "manage_apps",
            "read_widget",
        ],
        "initial_state": {"dashboard": SEEDED_BOARD},
    },
    "eval": {
        "required_tools": [
            {"tool": "get_workspace_snapshot", "args": {}, "optional": True},
            {
                "tool": "update_widget",
                "args": {"widget_uuid": "w_pos", "data_args": {"fund": "Gamma", "period": "QTD"}},
                "outcome": True,
            },
            {
                "tool": "add_generative_widget",
                "args": {"widget_type": "note", "name": "Desk Note", "data": "Gamma QTD weight 5.24%"},
                "outcome": True,
            },
        ],
        "required_widgets": [
            {
                "origin": "Acme Data",
                "widget_id": "desk_overview_positions",
                "data_args": {"fund": "Gamma", "period": "QTD"},
                "tab_id": "review",
                "max_count": 1,
            }
        ],
        "required_generated_widgets": [
            {"widget_type": "note", "name_contains": "Desk Note", "data_contains": ["0.0524"]}
        ],
        "required_dashboard_name_contains": "Task Board",
        "required_layouts": [
            {"widget_uuid": "w_alert", "tab_id": "review", "x": 20, "y": 0, "w": 20, "h": 8}
        ],
        "layout": {"within_grid": True, "no_overlaps": True},
        "trace_checks": {"max_invalid_tool_calls": 1, "ids_known_from": "any_result"},
        "workspace_checks": {"preserve_other_dashboards": True},
        "max_turns": 8,
    },
}


def raw(**changes: Any) -> dict[str, Any]:
    """A copy of the base task with dotted-path changes, e.g. raw(**{"eval.max_turns": 3})."""
    return bend(copy.deepcopy(BASE), changes)


def bend(out: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """`out` with dotted-path changes applied in place (DELETE removes the key)."""
    for dotted, value in changes.items():
        node = out
        parts = dotted.split(".")
        for part in parts[:-1]:
            node = node[part]
        if value is _DELETE:
            node.pop(parts[-1], None)
        else:
            node[parts[-1]] = value
    return out


_DELETE = object()
DELETE = _DELETE


def task(**changes: Any) -> Task:
    return Task.model_validate(raw(**changes))
