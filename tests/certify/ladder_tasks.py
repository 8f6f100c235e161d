"""Five small tasks on the mini world, one per capability, and the world additions they need (a resource that
defines two desk policies, listed by the resource index). Level k is built so that ladder-k passes it and
ladder-(k-1) lacks exactly the capability it needs."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from certify.task import Task
from tests.certify.helpers import SEEDED_BOARD, bend
from tests.conftest import write_world

CONVENTIONS = """---
uri: openbb://workspace/desk/conventions
title: Desk Conventions
description: The rules the desk applies to its views.
---
# Desk conventions

Under the quarter-end book rule, positions views use period QTD.
Under the year-end book rule, positions views use period YTD.
"""

INDEX = """---
uri: openbb://workspace/app-builder/index
title: Index
description: Start here.
---
| Need | Read |
|---|---|
| The desk's policies and conventions | openbb://workspace/desk/conventions |
| Placing widgets | openbb://workspace/specs/layout-grid |
"""

TOOLS = [
    "get_workspace_snapshot",
    "list_available_widgets",
    "get_widget_schema",
    "get_params_options",
    "get_widget_data",
    "create_widget",
    "update_widget",
    "add_generative_widget",
    "get_skill_content",
    "read_workspace_resource",
    "manage_backends",
    "manage_apps",
    "update_widget_layout",
    "read_widget",
]

NOTE_ASK = "then leave a Desk Note recording the weight exactly as served."
PROMPTS = {
    0: f"On the open Task Board, set Positions from Acme Data to fund Beta and period QTD, {NOTE_ASK}",
    1: f"On the open Task Board, repoint the holdings book of each fund from Acme Data to fund Beta and period QTD, "
    f"{NOTE_ASK}",
    2: f"On the open Task Board, set Positions from Acme Data to fund Beta and the period the quarter-end book rule "
    f"calls for, {NOTE_ASK}",
    3: "On the open Task Board, set Positions from Acme Data to fund Beta and period QTD. Read the Close Checklist "
    "skill and leave a Desk Note recording what the last step of its workflow says about how the books are "
    "signed off.",
    4: "Add a Desk Watch Service backend serving a Watch Register table, publish Desk Watch App with Watch Register "
    "on its Watch tab, and instantiate the app. On the open Task Board, add the built Watch Register and set "
    "Positions from Acme Data to fund Beta and period QTD.",
}

WATCH = {
    "watch_register": {
        "name": "Watch Register",
        "description": "The desk's watch list.",
        "endpoint": "/watch-register",
        "type": "table",
        "gridData": {"w": 40, "h": 10},
    }
}
WATCH_APP = [
    {
        "name": "Desk Watch App",
        "description": "Watch list.",
        "tabs": {
            "watch": {
                "id": "watch",
                "name": "Watch",
                "layout": [{"i": "watch_register", "x": 0, "y": 0, "w": 40, "h": 10}],
            }
        },
    }
]


def ladder_world(root: Path) -> Path:
    world = write_world(root)
    (world / "resources" / "index.md").write_text(INDEX)
    (world / "resources" / "conventions.md").write_text(CONVENTIONS)
    return world


def _steps(level: int) -> list[dict[str, Any]]:
    update = {
        "tool": "update_widget",
        "args": {"widget_uuid": "w_pos", "data_args": {"fund": "Beta", "period": "QTD"}},
        "graded_args": ["widget_uuid", "data_args"],
    }
    steps: list[dict[str, Any]] = [{"tool": "get_workspace_snapshot", "args": {}, "optional": True}]
    if level == 2:
        steps.append(
            {
                "tool": "read_workspace_resource",
                "args": {"uri": "openbb://workspace/desk/conventions"},
                "optional": True,
            }
        )
    if level == 3:
        steps.append(
            {"tool": "get_skill_content", "args": {"slug": "close-checklist"}, "graded_args": ["slug"]}
        )
    if level == 4:
        steps += [
            {
                "tool": "manage_backends",
                "args": {
                    "operation": "add",
                    "name": "Desk Watch Service",
                    "url": "http://127.0.0.1:9999",
                    "widgets_json": WATCH,
                    "apps_json": WATCH_APP,
                },
                "graded_args": ["operation", "name"],
            },
            {
                "tool": "manage_apps",
                "args": {
                    "operation": "instantiate",
                    "backend_id": "backend_003",
                    "app_name": "Desk Watch App",
                    "activate": False,
                },
                "graded_args": ["operation"],
            },
            {
                "tool": "create_widget",
                "args": {"origin": "Desk Watch Service", "widget_id": "watch_register"},
                "graded_args": ["origin", "widget_id"],
            },
        ]
    steps.append(update)
    if level <= 2:
        steps.append(
            {
                "tool": "get_widget_data",
                "args": {
                    "origin": "Acme Data",
                    "widget_id": "desk_overview_positions",
                    "data_args": {"fund": "Beta", "period": "QTD"},
                },
                "optional": True,
            }
        )
        steps.append(
            {
                "tool": "add_generative_widget",
                "args": {"widget_type": "note", "name": "Desk Note", "data": "Beta QTD weight 0.0524"},
                "graded_args": ["widget_type"],
            }
        )
    if level == 3:
        steps.append(
            {
                "tool": "add_generative_widget",
                "args": {
                    "widget_type": "note",
                    "name": "Desk Note",
                    "data": "Sign off with the amber ledger stamp.",
                },
                "graded_args": ["widget_type"],
            }
        )
    return steps


def ladder_raw(level: int, **extra: Any) -> dict[str, Any]:
    """The level-`level` task as a dict (so a test can bend it)."""
    notes = []
    if level <= 2:
        notes = [{"widget_type": "note", "name_contains": "Desk Note", "data_contains": ["0.0524"]}]
    elif level == 3:
        notes = [
            {"widget_type": "note", "name_contains": "Desk Note", "data_contains": ["amber ledger stamp"]}
        ]
    widgets: list[dict[str, Any]] = [
        {
            "origin": "Acme Data",
            "widget_id": "desk_overview_positions",
            "data_args": {"fund": "Beta", "period": "QTD"},
            "tab_id": "review",
            "max_count": 1,
        }
    ]
    ev: dict[str, Any] = {
        "required_tools": _steps(level),
        "required_widgets": widgets,
        "required_generated_widgets": notes,
        "required_dashboard_name_contains": "Task Board",
        "required_layouts": [
            {"widget_uuid": "w_alert", "tab_id": "review", "x": 20, "y": 0, "w": 20, "h": 8}
        ],
        "layout": {"within_grid": True, "no_overlaps": True},
        "trace_checks": {"max_invalid_tool_calls": 1},
        "workspace_checks": {"preserve_other_dashboards": True},
        "max_turns": 14,
    }
    if level == 4:
        widgets.append({"origin": "Desk Watch Service", "widget_id": "watch_register", "tab_id": "review"})
        ev["required_app_defs"] = [
            {
                "backend_name": "Desk Watch Service",
                "name_contains": "Desk Watch App",
                "tabs_include": ["watch"],
                "widgets_on_tab": [{"tab_id": "watch", "widget_id": "watch_register"}],
            }
        ]
        ev["required_tool_results"] = [{"tool": "manage_apps", "data_contains": ["Desk Watch App", "Watch"]}]
    task = {
        "id": f"desk_ladder_level{level}",
        "difficulty": f"level{level}",
        "prompt": PROMPTS[level],
        "setup": {
            "workspace_baseline": "lived",
            "workspace_skills": ["close-checklist", "morning-brief"],
            "default_selected_dashboard": "Task Board",
            "allowed_tools": TOOLS,
            "initial_state": {"dashboard": copy.deepcopy(SEEDED_BOARD)},
        },
        "eval": ev,
    }
    return copy.deepcopy(bend(task, extra))


def ladder_task(level: int, **extra: Any) -> Task:
    return Task.model_validate(ladder_raw(level, **extra))
