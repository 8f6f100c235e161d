"""Shared fixtures: a small world built in code, and the compatibility corpus vendored under compat/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The external corpus is vendored with its licence (compat/workspacebench/LICENSE), so a clone tests against it.
COMPAT = ROOT / "compat" / "workspacebench"
COMPAT_WORLD = COMPAT / "world"
COMPAT_TASKS = COMPAT / "tasksets" / "workspace_tasks"

# A test that reads the corpus: the corpus is part of the repository, so its absence fails the test (a broken
# checkout), never a silent skip.
needs_compat = pytest.mark.usefixtures("compat_corpus")


@pytest.fixture
def compat_corpus() -> Path:
    assert (COMPAT_TASKS / "taskset.json").is_file() and (COMPAT_WORLD / "world.json").is_file(), (
        f"the vendored compatibility corpus is missing at {COMPAT} (it is part of the repository: "
        "`git checkout -- compat` restores it)"
    )
    return COMPAT


def _options(*values: str) -> list[dict[str, str]]:
    return [{"label": v, "value": v} for v in values]


MINI_WIDGETS: dict[str, Any] = {
    "desk_overview_positions": {
        "name": "Positions",
        "description": "Open positions by fund.",
        "category": "Desk",
        "type": "table",
        "endpoint": "/positions",
        "gridData": {"w": 20, "h": 10},
        "params": [
            {
                "paramName": "fund",
                "type": "text",
                "value": "Alpha",
                "label": "Fund",
                "options": _options("Alpha", "Beta", "Gamma"),
            },
            {
                "paramName": "period",
                "type": "text",
                "value": "YTD",
                "label": "Period",
                "options": _options("MTD", "QTD", "YTD"),
            },
        ],
        "data": [
            {"fund": "Alpha", "period": "QTD", "ticker": "AAA", "weight": 0.12},
            {"fund": "Alpha", "period": "YTD", "ticker": "AAA", "weight": 0.10},
            {"fund": "Beta", "period": "QTD", "ticker": "BBB", "weight": 0.0524},
        ],
    },
    "desk_overview_alerts": {
        "name": "Alerts",
        "description": "Risk alerts.",
        "category": "Desk",
        "type": "table",
        "endpoint": "/alerts",
        "gridData": {"w": 20, "h": 8},
        "params": [
            {
                "paramName": "severity",
                "type": "text",
                "value": "High",
                "label": "Severity",
                # three options: the desk_head repair's Derive carries severity, and of two a reader of the
                # policy note's first or last rule (the source and tail skimmers) takes the value either way
                "options": _options("Low", "Medium", "High"),
            },
            {
                "paramName": "status",
                "type": "text",
                "value": "Open",
                "label": "Status",
                "options": _options("Open", "Closed"),
            },
        ],
        "data": [{"severity": "High", "status": "Open", "count": 3}],
    },
    # Two look-alikes: each takes the same parameters as a widget above and shares more words with the desk's
    # loose descriptions, so a task that describes Positions or Alerts needs more than a word match to find it.
    "desk_overview_book_summary": {
        "name": "Book Summary",
        "description": "The book's daily P&L and turnover summary, by fund and period.",
        "category": "Desk",
        "type": "table",
        "endpoint": "/book",
        "gridData": {"w": 20, "h": 10},
        "params": [
            {
                "paramName": "fund",
                "type": "text",
                "value": "Alpha",
                "label": "Fund",
                "options": _options("Alpha", "Beta", "Gamma"),
            },
            {
                "paramName": "period",
                "type": "text",
                "value": "YTD",
                "label": "Period",
                "options": _options("MTD", "QTD", "YTD"),
            },
        ],
        "data": [{"fund": "Gamma", "period": "QTD", "pnl": 1.5, "turnover": 0.31}],
    },
    "desk_overview_limit_breaches": {
        "name": "Limit Breaches",
        "description": "Risk limit breaches the risk engine has flagged, by severity.",
        "category": "Desk",
        "type": "table",
        "endpoint": "/breaches",
        "gridData": {"w": 20, "h": 8},
        "params": [
            {
                "paramName": "severity",
                "type": "text",
                "value": "High",
                "label": "Severity",
                "options": _options("Low", "High"),
            },
            {
                "paramName": "status",
                "type": "text",
                "value": "Open",
                "label": "Status",
                "options": _options("Open", "Closed"),
            },
        ],
        "data": [{"severity": "Low", "status": "Closed", "limit": "VaR", "count": 1}],
    },
    "desk_notes_memo": {
        "name": "Memo",
        "description": "Desk memo.",
        "category": "Desk",
        "type": "markdown",
        "endpoint": "/memo",
        "gridData": {"w": 40, "h": 6},
        "params": [],
        "data": [{"content": "Morning memo."}],
    },
    "desk_notes_wide": {
        "name": "Wide Chart",
        "description": "A chart.",
        "category": "Desk",
        "type": "chart",
        "endpoint": "/wide",
        "gridData": {"w": 40, "h": 12},
        "params": [{"paramName": "ticker", "type": "text", "value": "AAA", "label": "Ticker"}],
        "data": [{"ticker": "AAA", "close": 10.5}],
    },
}

MINI_APPS = [
    {
        "name": "Desk App",
        "description": "The desk.",
        "template_id": "desk-app",
        "prompts": ["What is open?"],
        "tabs": {
            "overview": {
                "id": "overview",
                "name": "Overview",
                "layout": [
                    {
                        "i": "desk_overview_positions",
                        "x": 0,
                        "y": 0,
                        "w": 20,
                        "h": 10,
                        "state": {"params": {"fund": "Beta", "period": "QTD"}},
                    },
                    {"i": "desk_overview_alerts", "x": 20, "y": 0, "w": 20, "h": 8, "state": {"params": {}}},
                ],
            },
            "notes": {
                "id": "notes",
                "name": "Notes",
                "layout": [
                    {"i": "desk_notes_memo", "x": 0, "y": 0, "w": 40, "h": 6},
                ],
            },
        },
    }
]


def write_world(root: Path) -> Path:
    """A small but complete world: two backends, an app, skills, resources, prompts and two baselines."""
    (root / "backends").mkdir(parents=True)
    (root / "initial_states").mkdir()
    (root / "skills").mkdir()
    (root / "resources").mkdir()
    (root / "prompts").mkdir()
    (root / "backends" / "acme.json").write_text(json.dumps({"widgets": MINI_WIDGETS, "apps": MINI_APPS}))
    (root / "backends" / "extra.json").write_text(
        json.dumps(
            {
                "widgets": {
                    "extra_table": {
                        "name": "Extra Table",
                        "description": "More.",
                        "type": "table",
                        "endpoint": "/x",
                        "params": [],
                        "data": [{"a": 1}],
                    }
                },
                "apps": [],
            }
        )
    )
    (root / "backends" / "acme_y.json").write_text(json.dumps({"widgets": MINI_WIDGETS, "apps": MINI_APPS}))
    (root / "skills" / "close.json").write_text(
        json.dumps(
            {
                "slug": "close-checklist",
                "name": "Close Checklist",
                "description": "Closing the books.",
                "content": "1. Tie out cash.\n2. Sign off with the amber ledger stamp.",
                "planted": [{"phrase": "amber ledger stamp", "where": "the last step of its workflow"}],
            }
        )
    )
    (root / "skills" / "brief.json").write_text(
        json.dumps(
            {
                "slug": "morning-brief",
                "name": "Morning Brief",
                "description": "Briefing.",
                "content": "1. Read positions.\n2. Cite every figure via brief_ref.",
            }
        )
    )
    (root / "resources" / "index.md").write_text(
        "---\nuri: openbb://workspace/app-builder/index\ntitle: Index\ndescription: Start here.\n---\nStart here.\n"
    )
    (root / "resources" / "grid.md").write_text(
        "---\nuri: openbb://workspace/specs/layout-grid\ntitle: Grid\ndescription: The grid.\n---\n"
        "The grid has 40 columns.\n"
    )
    (root / "prompts" / "usage.md").write_text(
        "---\nname: workspace_tool_usage\ndescription: Usage.\n---\nSnapshot first.\n"
    )
    (root / "prompts" / "context.md").write_text(
        "---\nname: workspace_session_context\ndescription: Context.\n---\nWork on the open dashboard.\n"
    )
    (root / "initial_states" / "lived.json").write_text(
        json.dumps(
            {
                "initial_state": {
                    "dashboards": [
                        {"name": "Home", "activate": True, "tabs": [{"id": "", "name": ""}], "widgets": []},
                        {
                            "name": "Desk Board",
                            "activate": False,
                            "tabs": [{"id": "main", "name": "Main"}],
                            "widgets": [
                                {
                                    "origin": "Acme Data",
                                    "widget_id": "desk_overview_positions",
                                    "tab_id": "main",
                                    "data_args": {"fund": "Alpha"},
                                    "layout": {"x": 0, "y": 0, "w": 20, "h": 10},
                                },
                                {
                                    "origin": "Acme Data",
                                    "widget_id": "desk_overview_alerts",
                                    "tab_id": "main",
                                    "layout": {"x": 20, "y": 30, "w": 20, "h": 8},
                                },
                            ],
                        },
                    ]
                }
            }
        )
    )
    (root / "world.json").write_text(
        json.dumps(
            {
                "name": "mini",
                "backends": {
                    "acme-x": {"file": "backends/acme.json", "origin": "Acme Data"},
                    "acme-y": {"file": "backends/acme_y.json", "origin": "Acme Data"},
                    "extra": {"file": "backends/extra.json", "origin": "Extra Source"},
                },
                "aliases": {"acme": "acme-x"},
                "default_backends": ["acme-x", "extra"],
                "baselines": {
                    "lived": "initial_states/lived.json",
                    "all-apps": {"home": True, "open_all_apps_of": "acme-x"},
                },
            }
        )
    )
    return root


@pytest.fixture
def mini_world_path(tmp_path: Path) -> Path:
    return write_world(tmp_path / "world")


@pytest.fixture
def mini_world(mini_world_path: Path):
    from simulator import World

    return World.load(mini_world_path)


@pytest.fixture(autouse=True)
def _fresh_certifications():
    """Each test gates (and drafts with the rule author) from scratch: a test may patch the simulator, the
    grader or the author under the memos."""
    from authoring.memo import forget as forget_drafts
    from certify.gates import forget

    forget()
    forget_drafts()
    yield
    forget()
    forget_drafts()


@pytest.fixture(autouse=True)
def _registries_keep_their_order():
    """A test that takes an entry out of a registry (`monkeypatch.delitem(GATES, "prose")`, to replay code that
    predates it) gets it back at the end of the dict: the gates, checks and shortcut agents are then run and
    reported in another order by every later test. Each registry's order is put back after the test (this
    fixture is torn down after the test's own monkeypatch)."""
    from certify.gates import GATES
    from certify.grader.core import CHECKS
    from certify.shortcuts.battery import PROBES, SHORTCUTS

    registries: list[dict] = [GATES, CHECKS, SHORTCUTS, PROBES]
    orders = [list(r) for r in registries]
    yield
    for registry, order in zip(registries, orders, strict=True):
        if list(registry) != order and set(registry) == set(order):
            entries = {k: registry[k] for k in order}
            registry.clear()
            registry.update(entries)
