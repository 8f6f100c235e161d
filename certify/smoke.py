"""`taskforge smoke`: a small certified task for every tool of the surface and every rung of it, as the parity
sweep's input.

The rungs come from the surface itself: a tool's operations (the enum of its `operation`, add_generative_widget's
`widget_type`, get_workspace_prompt's `name`), and for the behaviours the product is known to have and a naive
simulator gets wrong (DESIGN §2.3), one rung each: create_widget drops undeclared parameters and backfills the
rest, update_widget drops values outside a parameter's options, a moved widget floats up its column,
manage_dashboard refuses an update without dashboard_id, a renamed tab keeps its id. Every rung has a recipe
(`RECIPES`); a tool or an operation without one is an error naming it, so the taskset follows the surface.

Each task is level 0 (Execute: everything stated) on a small board, graded outcome first: a write by the state
it leaves, a read by the call (trace checks exist for reads). Widgets, parameters, apps, skills and documents
are drawn from the world deterministically, so the same world always gives the same taskset. Every task goes
through the nine gates; the level-1-and-up validity gates (leak, shortcuts) are not applicable, since a smoke
task hides nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from simulator import BackendFixture, WidgetDef, Workspace, World, tool_schemas

from .gates import Certification, Subject, certify_subject
from .lock import CertificateLock, TaskCertificate, code_prints, now, task_content_hash
from .task import Task, parse_task

TASKSET_ID = "smoke"
FOLDER = "smoke"
BOARD, BOARD_ID, TAB = "Smoke Board", "smoke-board", "main"
OTHER, OTHER_ID = "Smoke Other", "smoke-other"
W1, W2 = "smoke-w1", "smoke-w2"
CUSTOM = "Smoke Backend"
CUSTOM_URL = "http://127.0.0.1:7779"
DEFAULTS: dict[str, Any] = {
    "category": "smoke",
    "eval": {
        "layout": {"within_grid": True, "no_overlaps": True, "grid_width": 40},
        "trace_checks": {
            "max_invalid_tool_calls": 2,
            "forbid_invented_widget_ids": True,
            "ids_known_from": "any_result",
        },
        "workspace_checks": {"preserve_other_dashboards": True},
    },
}
# Behaviour rungs, beside the operations the schemas enumerate.
BEHAVIOURS: dict[str, tuple[str, ...]] = {
    "create_widget": ("drops_undeclared",),
    "update_widget": ("drops_out_of_options",),
    "update_widget_layout": ("floats_up",),
}
_RUNG_KEYS = ("operation", "widget_type", "name")


class SmokeError(Exception):
    """The world lacks what a recipe needs, or the surface has a rung no recipe covers."""


def rungs(schemas: list[dict[str, Any]] | None = None) -> list[tuple[str, str]]:
    """(tool, rung) for every tool of the surface: its enumerated operations, else `call`, then its behaviours."""
    out = []
    for schema in schemas or tool_schemas():
        name, props = schema["name"], schema["parameters"].get("properties", {})
        ops: list[str] = []
        for key in _RUNG_KEYS:
            enum = (props.get(key) or {}).get("enum")
            if isinstance(enum, list):
                ops = [str(v) for v in enum]
                break
        out += [(name, op) for op in ops or ["call"]]
        out += [(name, b) for b in BEHAVIOURS.get(name, ())]
    return out


# --- what the world offers ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pick:
    """A catalog widget and two of its option parameters: `param` set to `value` (not its default), `other`
    left at its default `other_default`, and `other_value` another option of it."""

    widget: WidgetDef
    param: str
    value: Any
    default: Any
    other: str
    other_default: Any
    other_value: Any


@dataclass(frozen=True)
class Kit:
    world: World
    backends: list[str]
    origin: str
    first: Pick  # a widget to add or read
    second: Pick  # another widget, seeded on the board
    app: dict[str, Any]
    app_origin: str
    skill: str
    resource: str
    prompts: list[str]


def _options(param: dict[str, Any]) -> list[Any]:
    return [o.get("value") for o in param.get("options") or [] if isinstance(o, dict)]


def _picks(world: World, definition: WidgetDef) -> Pick | None:
    params = [p for p in definition.option_params if len(_options(p)) >= 2 and p.get("value") in _options(p)]
    if len(params) < 2:
        return None
    first, other = params[0], params[1]
    value = next(v for v in _options(first) if v != first.get("value"))
    other_value = next(v for v in _options(other) if v != other.get("value"))
    return Pick(
        definition,
        first["paramName"],
        value,
        first.get("value"),
        other["paramName"],
        other.get("value"),
        other_value,
    )


def kit(world: World) -> Kit:
    """The world's first default backend with two widgets of two option parameters each (rows served for the
    first's chosen value), its first app, the first skill, a document and the prompts."""
    backends = list(world.default_backends)
    for slug in backends:
        fixture = world.backend(slug)
        if fixture is None:
            continue
        picks = [p for d in fixture.catalog.widgets.values() if (p := _picks(world, d)) is not None]
        picks = [p for p in picks if p.widget.grid_size()[0] <= 20 and _rows(world, backends, p)]
        if len(picks) >= 2:
            break
    else:
        raise SmokeError(f"{world.path}: no default backend has two widgets with two option parameters each")
    apps = [(f, a) for s in backends if (f := world.backend(s)) for a in f.catalog.apps]
    if not apps:
        raise SmokeError(f"{world.path}: no default backend serves an app")
    app_fixture, app = apps[0]
    if not world.skills or not world.resources or not world.prompts:
        raise SmokeError(f"{world.path}: a smoke taskset needs a skill, a resource and the workspace prompts")
    preferred = "openbb://workspace/overview/ai-agent-contract"
    resource = preferred if preferred in world.resources else sorted(world.resources)[0]
    return Kit(
        world,
        backends,
        cast(BackendFixture, fixture).origin,  # the loop above breaks only on a fixture
        picks[0],
        picks[1],
        app,
        app_fixture.origin,
        sorted(world.skills)[0],
        resource,
        sorted(world.prompts),
    )


def _rows(world: World, backends: list[str], pick: Pick) -> list[Any]:
    ws = Workspace.start(world, {"workspace_backends": backends})
    served = ws.call(
        "get_widget_data",
        {
            "origin": pick.widget.origin,
            "widget_id": pick.widget.widget_id,
            "data_args": {pick.param: pick.value},
        },
    )
    rows = (served.data or {}).get("data") if served.ok else None
    return [r for r in rows or [] if isinstance(r, dict)]


def _first_value(kit_: Kit) -> str:
    row = _rows(kit_.world, kit_.backends, kit_.first)[0]
    for key, value in row.items():
        if isinstance(value, str) and key != kit_.first.param and len(value) >= 3:
            return value
    return str(next(iter(row.values())))


# --- recipes --------------------------------------------------------------------------------------------------


@dataclass
class Draft:
    """What a recipe says: the request, the board, the reference and how it is graded."""

    prompt: str
    steps: list[dict[str, Any]]
    grade: dict[str, Any]
    board: dict[str, Any] | None = None
    others: list[dict[str, Any]] | None = None
    custom: list[dict[str, Any]] | None = None
    judged: str | None = BOARD


Recipe = Callable[[Kit], Draft]
RECIPES: dict[tuple[str, str], Recipe] = {}


def recipe(tool: str, rung: str = "call") -> Callable[[Recipe], Recipe]:
    def register(fn: Recipe) -> Recipe:
        RECIPES[(tool, rung)] = fn
        return fn

    return register


def step(tool: str, args: dict[str, Any] | None = None, **flags: Any) -> dict[str, Any]:
    return {"tool": tool, "args": args or {}, **flags}


def board(
    *widgets: dict[str, Any],
    tabs: list[dict[str, str]] | None = None,
    generated: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": BOARD,
        "dashboard_id": BOARD_ID,
        "tabs": tabs or [{"id": TAB, "name": "Main"}],
        "widgets": list(widgets),
    }
    if tabs is not None and len(tabs) > 1:
        out["navigation_bar"] = True  # more than one tab: the board has a navigation bar
    if generated:
        out["generated_widgets"] = generated
    return out


def seeded(pick: Pick, uuid: str, *, x: float = 0, y: float = 0, tab: str = TAB) -> dict[str, Any]:
    w, h = pick.widget.grid_size()
    return {
        "origin": pick.widget.origin,
        "widget_id": pick.widget.widget_id,
        "widget_uuid": uuid,
        "tab_id": tab,
        "data_args": {},
        "layout": {"x": x, "y": y, "w": w, "h": h},
    }


def _listed(k: Kit, pick: Pick) -> list[dict[str, Any]]:
    return [step("list_available_widgets", {"origin": pick.widget.origin}, optional=True)]


def _named(pick: Pick) -> str:
    return f"{pick.widget.name} ({pick.widget.widget_id}) from {pick.widget.origin}"


def _read(tool: str, args: dict[str, Any], graded: list[str]) -> dict[str, Any]:
    return step(tool, args, graded_args=graded)


@recipe("get_workspace_snapshot")
def _snapshot(k: Kit) -> Draft:
    return Draft(
        "Take a snapshot of the workspace: which dashboard is open and what is on it?",
        [_read("get_workspace_snapshot", {}, [])],
        {},
    )


@recipe("list_available_widgets")
def _list(k: Kit) -> Draft:
    return Draft(
        f"List the widgets the {k.origin} backend serves.",
        [_read("list_available_widgets", {"origin": k.origin}, [])],
        {},
    )


@recipe("get_widget_schema")
def _schema(k: Kit) -> Draft:
    p = k.first
    return Draft(
        f"Read the schema of the widget {_named(p)}.",
        [
            *_listed(k, p),
            _read(
                "get_widget_schema",
                {"origin": p.widget.origin, "widget_id": p.widget.widget_id},
                ["origin", "widget_id"],
            ),
        ],
        {},
    )


@recipe("get_params_options")
def _params(k: Kit) -> Draft:
    p = k.first
    args = {"origin": p.widget.origin, "widget_id": p.widget.widget_id, "param_name": p.param}
    return Draft(
        f"Which options does the parameter {p.param} of {_named(p)} take?",
        [*_listed(k, p), _read("get_params_options", args, list(args))],
        {},
    )


@recipe("get_widget_data")
def _data(k: Kit) -> Draft:
    p = k.first
    args = {"origin": p.widget.origin, "widget_id": p.widget.widget_id, "data_args": {p.param: p.value}}
    return Draft(
        f"Fetch the rows {_named(p)} serves with {p.param} set to {p.value}.",
        [*_listed(k, p), _read("get_widget_data", args, ["origin", "widget_id", "data_args"])],
        {"required_tool_results": [{"tool": "get_widget_data", "data_contains": [_first_value(k)]}]},
    )


@recipe("read_widget")
def _read_widget(k: Kit) -> Draft:
    return Draft(
        f"Read the {k.second.widget.name} widget placed on {BOARD} (the open dashboard): its parameters and layout.",
        [step("get_workspace_snapshot", optional=True), _read("read_widget", {"widget_uuid": W1}, [])],
        {"required_tool_results": [{"tool": "read_widget", "data_contains": [k.second.widget.widget_id]}]},
        board=board(seeded(k.second, W1)),
    )


def _placed(p: Pick, data_args: dict[str, Any], *, most: int | None = 1, least: int = 1) -> dict[str, Any]:
    out = {
        "origin": p.widget.origin,
        "widget_id": p.widget.widget_id,
        "data_args": data_args,
        "tab_id": TAB,
        "min_count": least,
    }
    if most is not None:
        out["max_count"] = most
    return out


@recipe("create_widget")
def _create(k: Kit) -> Draft:
    p = k.first
    args = {"origin": p.widget.origin, "widget_id": p.widget.widget_id, "data_args": {p.param: p.value}}
    return Draft(
        f"On {BOARD} (open), add {_named(p)} with {p.param} set to {p.value}.",
        [
            *_listed(k, p),
            step(
                "get_widget_schema",
                {"origin": p.widget.origin, "widget_id": p.widget.widget_id},
                optional=True,
            ),
            step("create_widget", args, outcome=True),
        ],
        {"required_widgets": [_placed(p, {p.param: p.value})], "max_unrequested_widgets": 0},
        board=board(),
    )


@recipe("create_widget", "drops_undeclared")
def _create_undeclared(k: Kit) -> Draft:
    p = k.first
    args = {
        "origin": p.widget.origin,
        "widget_id": p.widget.widget_id,
        "data_args": {p.param: p.value, "smoke_note": "draft"},
    }
    return Draft(
        f"On {BOARD} (open), add {_named(p)} with {p.param} set to {p.value}, and pass smoke_note set to draft "
        f"with it too (the widget declares no such parameter: the workspace drops it and fills {p.other} with its "
        "default).",
        [
            *_listed(k, p),
            step(
                "get_widget_schema",
                {"origin": p.widget.origin, "widget_id": p.widget.widget_id},
                optional=True,
            ),
            step("create_widget", args, outcome=True, graded_args=["origin", "widget_id"]),
        ],
        {
            # an expected null matches a missing key: the widget must carry no smoke_note
            "required_widgets": [
                _placed(p, {p.param: p.value, p.other: p.other_default, "smoke_note": None})
            ],
            "max_unrequested_widgets": 0,
        },
        board=board(),
    )


@recipe("update_widget")
def _update(k: Kit) -> Draft:
    p = k.second
    return Draft(
        f"On {BOARD} (open), set {p.param} of the {p.widget.name} widget to {p.value}.",
        [
            step("get_workspace_snapshot", optional=True),
            step("update_widget", {"widget_uuid": W1, "data_args": {p.param: p.value}}, outcome=True),
        ],
        {"required_widgets": [_placed(p, {p.param: p.value})], "max_unrequested_widgets": 0},
        board=board(seeded(p, W1)),
    )


@recipe("update_widget", "drops_out_of_options")
def _update_options(k: Kit) -> Draft:
    p = k.second
    bogus = "not-an-option"
    args = {"widget_uuid": W1, "data_args": {p.param: p.value, p.other: bogus}}
    return Draft(
        f"On {BOARD} (open), in one update of the {p.widget.name} widget set {p.param} to {p.value} and {p.other} to "
        f"{bogus} (not one of its options: the workspace drops it and {p.other} keeps {p.other_default}).",
        [
            step("get_workspace_snapshot", optional=True),
            step("update_widget", args, outcome=True, graded_args=["widget_uuid"]),
        ],
        {
            "required_widgets": [_placed(p, {p.param: p.value, p.other: p.other_default})],
            "max_unrequested_widgets": 0,
        },
        board=board(seeded(p, W1)),
    )


def _moved(k: Kit, y_asked: float, y_lands: float, why: str) -> Draft:
    p = k.second
    w, h = p.widget.grid_size()
    x = 40 - w
    return Draft(
        f"On {BOARD} (open), move the {p.widget.name} widget to x={x:g}, y={y_asked:g}, keeping its size "
        f"(w={w:g}, h={h:g}){why}.",
        [
            step("get_workspace_snapshot", optional=True),
            step(
                "update_widget_layout",
                {"widget_uuid": W1, "x": x, "y": y_asked, "w": w, "h": h},
                outcome=True,
            ),
        ],
        {
            "required_layouts": [{"widget_uuid": W1, "tab_id": TAB, "x": x, "y": y_lands, "w": w, "h": h}],
            "required_widgets": [_placed(p, {})],
            "max_unrequested_widgets": 0,
        },
        board=board(seeded(p, W1)),
    )


@recipe("update_widget_layout")
def _layout(k: Kit) -> Draft:
    return _moved(k, 0, 0, "")


@recipe("update_widget_layout", "floats_up")
def _layout_float(k: Kit) -> Draft:
    return _moved(k, 30, 0, ": its column is free, so it floats up to the top")


@recipe("delete_widget")
def _delete(k: Kit) -> Draft:
    keep, gone = k.first, k.second
    w, _ = keep.widget.grid_size()
    return Draft(
        f"On {BOARD} (open), remove the {gone.widget.name} widget; leave {keep.widget.name} where it is.",
        [
            step("get_workspace_snapshot", optional=True),
            step("delete_widget", {"widget_uuid": W1}, outcome=True),
        ],
        {"required_widgets": [_placed(gone, {}, most=0, least=0), _placed(keep, {})]},
        board=board(seeded(gone, W1), seeded(keep, W2, x=min(w, 40 - w))),
    )


_GENERATED: dict[str, tuple[Any, dict[str, Any] | None, list[str]]] = {
    "note": ("Smoke test passed on the board.", None, ["Smoke test passed"]),
    "html": ("<p>Smoke test passed</p>", None, ["Smoke test passed"]),
    "table": ([{"check": "smoke", "status": "passed"}], None, ["passed"]),
    "chart": (
        [{"label": "smoke", "value": 3}, {"label": "parity", "value": 5}],
        {"chartType": "bar", "xKey": "label", "yKey": ["value"]},
        ["parity"],
    ),
}


def _generated(kind: str) -> Recipe:
    def make(k: Kit) -> Draft:
        data, chart, contains = _GENERATED[kind]
        name = f"Smoke {kind.title()}"
        args: dict[str, Any] = {"widget_type": kind, "name": name, "data": data}
        if chart is not None:
            args["chart_params"] = chart
        shown = json.dumps(data) if not isinstance(data, str) else f"'{data}'"
        extra = f" with chart_params {json.dumps(chart)}" if chart else ""
        return Draft(
            f"On {BOARD} (open), add a {kind} widget named '{name}' holding {shown}{extra}.",
            [step("add_generative_widget", args, outcome=True)],
            {
                "required_generated_widgets": [
                    {"widget_type": kind, "name_contains": name, "data_contains": contains, "tab_id": TAB}
                ]
            },
            board=board(),
        )

    return make


for _kind in _GENERATED:
    recipe("add_generative_widget", _kind)(_generated(_kind))


@recipe("manage_dashboard", "create")
def _dash_create(k: Kit) -> Draft:
    name = "Smoke Created"
    return Draft(
        f"Create a dashboard named '{name}' with the dashboard_id smoke-created, and open it.",
        [
            step(
                "manage_dashboard",
                {"operation": "create", "name": name, "dashboard_id": "smoke-created"},
                outcome=True,
            )
        ],
        {
            "required_dashboard_name_contains": name,
            "workspace_checks": {"preserve_other_dashboards": True, "max_dashboard_delta": 1},
        },
        board=board(),
        judged=name,
    )


@recipe("manage_dashboard", "read")
def _dash_read(k: Kit) -> Draft:
    return Draft(
        f"Read the dashboard {BOARD} (its id is in the snapshot) with manage_dashboard.",
        [
            step("get_workspace_snapshot", optional=True),
            _read("manage_dashboard", {"operation": "read", "dashboard_id": BOARD_ID}, ["operation"]),
        ],
        {},
        board=board(seeded(k.second, W1)),
    )


@recipe("manage_dashboard", "update")
def _dash_update(k: Kit) -> Draft:
    name = "Smoke Renamed"
    return Draft(
        f"Rename the open dashboard {BOARD} to '{name}'. The workspace refuses a rename without the dashboard's "
        "id: give its dashboard_id (it is in the snapshot).",
        [
            step("get_workspace_snapshot", optional=True),
            step(
                "manage_dashboard",
                {"operation": "update", "name": name},
                optional=True,
                note="probe: refused without dashboard_id",
            ),
            step(
                "manage_dashboard",
                {"operation": "update", "dashboard_id": BOARD_ID, "name": name},
                outcome=True,
            ),
        ],
        {"required_dashboard_name_contains": name},
        board=board(),
    )


@recipe("manage_navigation_bar", "create")
def _nav_create(k: Kit) -> Draft:
    return Draft(
        f"Give {BOARD} (open) a navigation bar with two tabs, Alpha and Beta (it replaces the current tab).",
        [
            step(
                "manage_navigation_bar",
                {"operation": "create", "tabs": [{"name": "Alpha"}, {"name": "Beta"}]},
                outcome=True,
            )
        ],
        {"required_tabs": ["alpha", "beta"], "required_tab_names": ["Alpha", "Beta"]},
        board=board(),
    )


@recipe("manage_navigation_bar", "add_tabs")
def _nav_add(k: Kit) -> Draft:
    return Draft(
        f"Add a tab named Gamma to {BOARD} (open), next to Main.",
        [step("manage_navigation_bar", {"operation": "add_tabs", "tabs": [{"name": "Gamma"}]}, outcome=True)],
        {"required_tabs": [TAB, "gamma"], "required_tab_names": ["Gamma"]},
        board=board(),
    )


@recipe("manage_navigation_bar", "remove_tabs")
def _nav_remove(k: Kit) -> Draft:
    return Draft(
        f"Remove the Extra tab from {BOARD} (open); keep Main.",
        [
            _read(
                "manage_navigation_bar",
                {"operation": "remove_tabs", "tabs": [{"name": "Extra"}]},
                ["operation"],
            )
        ],
        {"required_tabs": [TAB]},
        board=board(tabs=[{"id": TAB, "name": "Main"}, {"id": "extra", "name": "Extra"}]),
    )


@recipe("manage_navigation_bar", "rename_tabs")
def _nav_rename(k: Kit) -> Draft:
    name = "Renamed Main"
    return Draft(
        f"Rename the Main tab of {BOARD} (open) to '{name}'; a renamed tab keeps its id ({TAB}).",
        [
            step(
                "manage_navigation_bar", {"operation": "rename_tabs", "rename_map": {TAB: name}}, outcome=True
            )
        ],
        {"required_tabs": [TAB], "required_tab_names": [name]},
        board=board(),
    )


def _other() -> dict[str, Any]:
    return {
        "name": OTHER,
        "dashboard_id": OTHER_ID,
        "activate": False,
        "tabs": [{"id": TAB, "name": "Main"}],
        "widgets": [],
    }


@recipe("navigate_workspace", "dashboard")
def _nav_dashboard(k: Kit) -> Draft:
    return Draft(
        f"Open the dashboard {OTHER} (its id is in the snapshot).",
        [
            step("get_workspace_snapshot", optional=True),
            step("navigate_workspace", {"operation": "dashboard", "dashboard_id": OTHER_ID}, outcome=True),
        ],
        {"required_dashboard_name_contains": OTHER},
        board=board(),
        others=[_other()],
        judged=None,
    )


@recipe("navigate_workspace", "tab")
def _nav_tab(k: Kit) -> Draft:
    return Draft(
        f"On {BOARD} (open), switch to its Second tab (id second).",
        [_read("navigate_workspace", {"operation": "tab", "tab_id": "second"}, ["operation", "tab_id"])],
        {},
        board=board(tabs=[{"id": TAB, "name": "Main"}, {"id": "second", "name": "Second"}]),
    )


def _custom_widgets(*ids: str) -> dict[str, Any]:
    return {
        wid: {
            "name": f"Smoke {wid.split('_')[-1].title()}",
            "description": "A widget the smoke backend serves.",
            "category": "Smoke",
            "type": "table",
            "endpoint": wid,
            "gridData": {"w": 20, "h": 8},
            "params": [],
        }
        for wid in ids
    }


@recipe("manage_backends", "list")
def _backends_list(k: Kit) -> Draft:
    return Draft(
        "List the backends connected to the workspace.",
        [_read("manage_backends", {"operation": "list"}, ["operation"])],
        {},
    )


@recipe("manage_backends", "add")
def _backends_add(k: Kit) -> Draft:
    widgets = _custom_widgets("smoke_table")
    return Draft(
        f"Connect a custom backend named '{CUSTOM}' at {CUSTOM_URL} with this widgets.json: {json.dumps(widgets)}.",
        [
            step(
                "manage_backends",
                {"operation": "add", "name": CUSTOM, "url": CUSTOM_URL, "widgets_json": widgets},
                outcome=True,
            )
        ],
        {
            "required_widget_defs": [{"backend_name": CUSTOM, "widget_id": "smoke_table"}],
            "workspace_checks": {"preserve_other_dashboards": True, "max_custom_backend_delta": 1},
        },
    )


def _custom_seed() -> list[dict[str, Any]]:
    return [
        {
            "name": CUSTOM,
            "url": CUSTOM_URL,
            "backend_id": "smoke-backend",
            "widgets_json": _custom_widgets("smoke_table"),
        }
    ]


@recipe("manage_backends", "refresh")
def _backends_refresh(k: Kit) -> Draft:
    widgets = _custom_widgets("smoke_table", "smoke_chart")
    return Draft(
        f"Refresh the custom backend '{CUSTOM}' (id smoke-backend) with this widgets.json: {json.dumps(widgets)}.",
        [
            step(
                "manage_backends",
                {"operation": "refresh", "backend_id": "smoke-backend", "widgets_json": widgets},
                outcome=True,
            )
        ],
        {"required_widget_defs": [{"backend_name": CUSTOM, "widget_id": "smoke_chart"}]},
        custom=_custom_seed(),
    )


@recipe("manage_backends", "delete")
def _backends_delete(k: Kit) -> Draft:
    return Draft(
        f"Disconnect the custom backend '{CUSTOM}' (id smoke-backend).",
        [
            _read(
                "manage_backends",
                {"operation": "delete", "backend_id": "smoke-backend"},
                ["operation", "backend_id"],
            )
        ],
        {"workspace_checks": {"preserve_other_dashboards": True, "max_custom_backend_delta": -1}},
        custom=_custom_seed(),
    )


def _backend_id(k: Kit) -> str:
    ws = Workspace.start(k.world, {"workspace_backends": k.backends})
    return next(c.id for c in ws.connections if c.name == k.app_origin)


@recipe("manage_apps", "list")
def _apps_list(k: Kit) -> Draft:
    return Draft(
        f"List the apps the {k.app_origin} backend serves (its backend id is in the snapshot).",
        [
            step("get_workspace_snapshot", optional=True),
            _read("manage_apps", {"operation": "list", "backend_id": _backend_id(k)}, ["operation"]),
        ],
        {},
    )


@recipe("manage_apps", "read")
def _apps_read(k: Kit) -> Draft:
    name = str(k.app.get("name"))
    return Draft(
        f"Read the app '{name}' the {k.app_origin} backend serves (its backend id is in the snapshot).",
        [
            step("get_workspace_snapshot", optional=True),
            _read(
                "manage_apps",
                {"operation": "read", "backend_id": _backend_id(k), "app_name": name},
                ["operation", "app_name"],
            ),
        ],
        {},
    )


@recipe("manage_apps", "instantiate")
def _apps_instantiate(k: Kit) -> Draft:
    name = str(k.app.get("name"))
    opened = "Smoke App"
    tabs = [str(t) for t in (k.app.get("tabs") or {})]
    return Draft(
        f"Open the app '{name}' of the {k.app_origin} backend as a new dashboard named '{opened}' (the backend id "
        "is in the snapshot).",
        [
            step("get_workspace_snapshot", optional=True),
            step(
                "manage_apps",
                {
                    "operation": "instantiate",
                    "backend_id": _backend_id(k),
                    "app_name": name,
                    "dashboard_name": opened,
                },
                outcome=True,
            ),
        ],
        {
            "required_tabs": tabs,
            "required_dashboard_name_contains": opened,
            "workspace_checks": {"preserve_other_dashboards": True, "max_dashboard_delta": 1},
        },
        board=board(),
        judged=opened,
    )


@recipe("get_skill_content")
def _skill(k: Kit) -> Draft:
    return Draft(
        f"Read the workspace skill '{k.skill}'.",
        [_read("get_skill_content", {"slug": k.skill}, ["slug"])],
        {},
    )


@recipe("read_workspace_resource")
def _resource(k: Kit) -> Draft:
    return Draft(
        f"Read the workspace resource {k.resource}.",
        [_read("read_workspace_resource", {"uri": k.resource}, ["uri"])],
        {},
    )


def _prompt(name: str) -> Recipe:
    def make(k: Kit) -> Draft:
        if name not in k.prompts:
            raise SmokeError(f"{k.world.path}: the world has no workspace prompt {name}")
        return Draft(
            f"Get the workspace prompt {name}.", [_read("get_workspace_prompt", {"name": name}, ["name"])], {}
        )

    return make


for _name in ("workspace_tool_usage", "workspace_session_context"):
    recipe("get_workspace_prompt", _name)(_prompt(_name))


@recipe("assign_tasks_to_agents")
def _assign(k: Kit) -> Draft:
    request = {
        "id": "smoke-1",
        "description": "Check the smoke board",
        "assigned_holder_url": "http://127.0.0.1:9000",
        "assigned_agent_id": "smoke-agent",
    }
    return Draft(
        f"Assign one task to another agent: {json.dumps(request)}.",
        [_read("assign_tasks_to_agents", {"task_requests": [request]}, ["task_requests"])],
        {},
    )


# --- the taskset ----------------------------------------------------------------------------------------------


def task_id(tool: str, rung: str) -> str:
    return f"smoke_{tool}_{rung}_level0" if rung != "call" else f"smoke_{tool}_level0"


def build(world: World) -> Iterator[dict[str, Any]]:
    """Every smoke task of the surface, as task files (raw JSON)."""
    k = kit(world)
    missing = [f"{t}/{r}" for t, r in rungs() if (t, r) not in RECIPES]
    if missing:
        raise SmokeError(f"no smoke recipe for {', '.join(missing)} (add one in certify/smoke.py)")
    for tool, rung in rungs():
        draft = RECIPES[(tool, rung)](k)
        dashboards = [draft.board] if draft.board is not None else []
        dashboards += draft.others or []
        initial: dict[str, Any] = {}
        if dashboards:
            initial["dashboards"] = [{**d, "activate": d.get("activate", True)} for d in dashboards]
        if draft.custom:
            initial["custom_backends"] = draft.custom
        setup: dict[str, Any] = {
            "workspace_backends": k.backends,
            "workspace_skills": sorted(world.skills),
            "initial_state": initial,
        }
        if draft.board is not None:
            setup["default_selected_dashboard"] = BOARD
        grade = dict(draft.grade)
        ev: dict[str, Any] = {"required_tools": draft.steps, **grade, "max_turns": len(draft.steps) + 6}
        if draft.judged is not None and draft.board is not None:
            ev["judged_dashboard"] = draft.judged
        yield {
            "id": task_id(tool, rung),
            "difficulty": "level0",
            "prompt": draft.prompt,
            "setup": setup,
            "eval": ev,
            "meta": {
                "persona": TASKSET_ID,
                "story": f"{tool}_{rung}",
                "level": 0,
                "level_name": "Execute",
                "hidden": [],
                "authored_by": "smoke",
            },
        }


@dataclass
class SmokeResult:
    root: Path
    certifications: list[Certification]

    @property
    def certified(self) -> int:
        return sum(c.certified for c in self.certifications)


def write(world: World, out: Path, *, world_label: str | None = None) -> SmokeResult:
    """Generate, certify and write the smoke taskset under `out` (its manifest, the tasks, their lock)."""
    raws = list(build(world))
    manifest = {
        "taskset_id": TASKSET_ID,
        "description": "One small task per tool and rung of the surface (taskforge smoke), the parity sweep's input.",
        "task_defaults": DEFAULTS,
    }
    if world_label:
        manifest["world"] = world_label
    folder = out / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    (out / "taskset.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    code = code_prints(world, DEFAULTS)
    lock = CertificateLock(taskset=TASKSET_ID)
    results = []
    stamp = now()
    for raw in raws:
        path = folder / f"{raw['id']}.json"
        path.write_text(json.dumps(raw, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        task: Task = parse_task(raw, str(path), DEFAULTS)
        cert = certify_subject(Subject(str(path), world, task))
        results.append(cert)
        lock.tasks[task.id] = TaskCertificate(
            path=f"{FOLDER}/{path.name}",
            persona=TASKSET_ID,
            story=raw["meta"]["story"],
            level="level0",
            content_sha256=task_content_hash(raw),
            fingerprints=code.of(task),
            certified=cert.certified,
            gates={name: g.to_dict() for name, g in cert.gates.items()},
            certified_at=stamp,
        )
    lock.write(out)
    return SmokeResult(out, results)
