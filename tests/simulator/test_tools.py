"""Every tool: its happy path and each of its refusals, with the stable codes and messages agents see."""

from typing import ClassVar

import pytest

from simulator import TOOL_NAMES, Workspace, tool_schemas

DESK = {
    "workspace_baseline": "lived",
    "default_selected_dashboard": "Task Board",
    "initial_state": {
        "dashboard": {
            "name": "Task Board",
            "tabs": [{"id": "review", "name": "Review"}, {"id": "archive", "name": "Archive"}],
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
                    "widget_id": "desk_overview_positions",
                    "widget_uuid": "w_twin",
                    "tab_id": "review",
                    "data_args": {"fund": "Beta", "period": "QTD"},
                    "layout": {"x": 20, "y": 0, "w": 20, "h": 10},
                },
                {
                    "origin": "Acme Data",
                    "widget_id": "desk_overview_alerts",
                    "widget_uuid": "w_alert",
                    "tab_id": "review",
                    "layout": {"x": 0, "y": 10, "w": 20, "h": 8},
                },
            ],
            "generated_widgets": [
                {
                    "widget_type": "note",
                    "widget_uuid": "w_note",
                    "name": "Old Note",
                    "data": "keep me",
                    "tab_id": "review",
                    "layout": {"x": 20, "y": 10, "w": 20, "h": 8},
                }
            ],
        }
    },
}


@pytest.fixture
def ws(mini_world):
    return Workspace.start(mini_world, DESK)


def refused(env, code, message=None):
    assert env.ok is False
    assert env.error.code == code
    assert env.data is None
    if message is not None:
        assert env.message == message and env.error.message == message
    return env


def test_twenty_tools_with_schemas():
    assert len(TOOL_NAMES) == 20
    assert "final_answer" not in TOOL_NAMES
    schemas = {s["name"]: s for s in tool_schemas()}
    assert set(schemas) == set(TOOL_NAMES)
    assert schemas["create_widget"]["parameters"]["required"] == ["origin", "widget_id"]
    assert schemas["manage_dashboard"]["parameters"]["properties"]["operation"]["enum"] == [
        "create",
        "read",
        "update",
    ]
    assert schemas["manage_dashboard"]["parameters"]["additionalProperties"] is False
    assert all(s["description"] for s in schemas.values())


def test_envelope_shape(ws):
    env = ws.call("get_workspace_snapshot", {}).to_dict()
    assert set(env) == {"ok", "command", "request_id", "message", "data", "error"}
    assert env["ok"] and env["command"] == "get_workspace_snapshot" and env["error"] is None
    assert env["request_id"] == "req_0001"


def test_snapshot_describes_the_open_dashboard(ws):
    data = ws.call("get_workspace_snapshot").data
    assert data["workspace_state"] == {"current_dashboard_uuid": "dash_003", "current_tab_id": "review"}
    assert [d["name"] for d in data["dashboards"]] == ["Home", "Desk Board", "Task Board"]
    assert data["dashboard_composition"]["name"] == "Task Board"
    assert [w["widget_uuid"] for w in data["dashboard_composition"]["widgets"]] == [
        "w_pos",
        "w_twin",
        "w_alert",
        "w_note",
    ]
    assert [b["name"] for b in data["backends"]] == ["Acme Data", "Extra Source"]
    assert data["skills"] == []


class TestManageDashboard:
    def test_create_read_update(self, ws):
        created = ws.call("manage_dashboard", {"operation": "create", "name": "Fresh"}).data
        assert created["dashboard_id"] == "dash_004" and ws.current == "dash_004"
        assert created["dashboard_composition"]["tabs"] == [{"id": "", "name": "", "layout": []}]
        read = ws.call("manage_dashboard", {"operation": "read", "dashboard_id": "dash_003"}).data
        assert read["name"] == "Task Board"
        updated = ws.call(
            "manage_dashboard", {"operation": "update", "dashboard_id": "dash_003", "name": "Renamed"}
        )
        assert updated.ok and ws.dashboards["dash_003"].name == "Renamed"

    def test_create_without_activation(self, ws):
        ws.call("manage_dashboard", {"operation": "create", "name": "Later", "activate": False})
        assert ws.current == "dash_003"

    def test_update_requires_dashboard_id(self, ws):
        refused(
            ws.call("manage_dashboard", {"operation": "update", "name": "X"}),
            "invalid_request",
            "manage_dashboard operation='update' requires dashboard_id and name.",
        )
        refused(
            ws.call("manage_dashboard", {"operation": "update", "dashboard_id": "dash_003"}),
            "invalid_request",
        )
        assert ws.dashboards["dash_003"].name == "Task Board"

    def test_create_requires_name(self, ws):
        refused(
            ws.call("manage_dashboard", {"operation": "create"}),
            "invalid_request",
            "manage_dashboard operation='create' requires name.",
        )

    def test_no_delete(self, ws):
        env = refused(
            ws.call("manage_dashboard", {"operation": "delete", "dashboard_id": "dash_003"}),
            "invalid_arguments",
        )
        assert "must be one of create, read, update" in env.message
        assert "dash_003" in ws.dashboards

    def test_unknown_dashboard(self, ws):
        refused(
            ws.call("manage_dashboard", {"operation": "read", "dashboard_id": "dash_999"}),
            "not_found",
            "Unknown dashboard_id 'dash_999'.",
        )

    def test_explicit_existing_id_is_refused(self, ws):
        refused(
            ws.call("manage_dashboard", {"operation": "create", "name": "X", "dashboard_id": "dash_002"}),
            "conflict",
        )
        assert ws.dashboards["dash_002"].name == "Desk Board"


class TestNavigationBar:
    def test_tab_lifecycle_keeps_ids(self, ws):
        env = ws.call("manage_navigation_bar", {"operation": "add_tabs", "tabs": [{"name": "Q3 Risk & P/L"}]})
        assert env.ok
        assert ws.current_dashboard.tab_ids() == ["review", "archive", "q3-risk-p-l"]
        ws.call(
            "manage_navigation_bar", {"operation": "rename_tabs", "rename_map": {"q3-risk-p-l": "Q4 Risk"}}
        )
        tab = ws.current_dashboard.tab("q3-risk-p-l")
        assert tab.name == "Q4 Risk"
        ws.call("manage_navigation_bar", {"operation": "remove_tabs", "tabs": [{"name": "Q4 Risk"}]})
        assert ws.current_dashboard.tab_ids() == ["review", "archive"]
        assert ws.current_dashboard.navigation_bar is True

    def test_create_replaces_tabs_and_orphans_widgets(self, ws):
        ws.call("manage_navigation_bar", {"operation": "create", "tabs": [{"name": "One"}, {"name": "Two"}]})
        dash = ws.current_dashboard
        assert dash.tab_ids() == ["one", "two"] and dash.active_tab == "one"
        assert len(dash.widgets) == 4 and {w.tab_id for w in dash.widgets} == {"review"}
        comp = dash.composition()
        assert all(t["layout"] == [] for t in comp["tabs"])

    def test_requires_tabs_and_shapes(self, ws):
        refused(
            ws.call("manage_navigation_bar", {"operation": "add_tabs"}),
            "invalid_request",
            "manage_navigation_bar operation='add_tabs' requires tabs.",
        )
        refused(
            ws.call("manage_navigation_bar", {"operation": "add_tabs", "tabs": [{"name": "A", "id": "a"}]}),
            "invalid_arguments",
            "tabs must be objects with only the key name.",
        )
        refused(
            ws.call("manage_navigation_bar", {"operation": "rename_tabs"}),
            "invalid_request",
            "rename_tabs requires rename_map.",
        )
        refused(
            ws.call("manage_navigation_bar", {"operation": "rename_tabs", "rename_map": {"ghost": "X"}}),
            "not_found",
        )
        refused(
            ws.call("manage_navigation_bar", {"operation": "remove_tabs", "tabs": [{"name": "Ghost"}]}),
            "not_found",
        )

    def test_removing_the_active_tab_moves_to_the_first(self, ws):
        ws.call("navigate_workspace", {"operation": "tab", "tab_id": "archive"})
        ws.call("manage_navigation_bar", {"operation": "remove_tabs", "tabs": [{"name": "Archive"}]})
        assert ws.workspace_state()["current_tab_id"] == "review"


class TestNavigate:
    def test_dashboard_and_tab(self, ws):
        data = ws.call("navigate_workspace", {"operation": "dashboard", "dashboard_id": "dash_002"}).data
        assert data["workspace_state"] == {"current_dashboard_uuid": "dash_002", "current_tab_id": "main"}
        ws.call("navigate_workspace", {"operation": "tab", "dashboard_id": "dash_003", "tab_id": "archive"})
        assert ws.workspace_state() == {"current_dashboard_uuid": "dash_003", "current_tab_id": "archive"}

    def test_each_dashboard_remembers_its_own_tab(self, ws):
        ws.call("navigate_workspace", {"operation": "tab", "tab_id": "archive"})
        ws.call("navigate_workspace", {"operation": "dashboard", "dashboard_id": "dash_002"})
        assert ws.workspace_state()["current_tab_id"] == "main"

    def test_refusals_do_not_half_switch(self, ws):
        refused(
            ws.call("navigate_workspace", {"operation": "dashboard", "dashboard_id": "dash_404"}),
            "not_found",
            "Unknown dashboard_id 'dash_404'.",
        )
        refused(
            ws.call(
                "navigate_workspace", {"operation": "dashboard", "dashboard_id": "dash_002", "tab_id": "nope"}
            ),
            "not_found",
        )
        assert ws.current == "dash_003"
        refused(ws.call("navigate_workspace", {"operation": "tab"}), "invalid_request")


class TestCatalog:
    def test_list_filters(self, ws):
        everything = ws.call("list_available_widgets").data["widgets"]
        assert len(everything) == 7 and everything[0]["backend_id"] == "backend_001"
        assert set(everything[0]) == {
            "origin",
            "widget_id",
            "name",
            "description",
            "type",
            "category",
            "grid_data",
            "backend_id",
        }
        extra = ws.call("list_available_widgets", {"origin": "Extra Source"}).data["widgets"]
        assert [w["widget_id"] for w in extra] == ["extra_table"]
        assert ws.call("list_available_widgets", {"origin": "Nobody"}).data["widgets"] == []
        assert len(ws.call("list_available_widgets", {"backend_id": "backend_002"}).data["widgets"]) == 1
        refused(ws.call("list_available_widgets", {"backend_id": "backend_404"}), "not_found")

    def test_schema_and_options(self, ws):
        schema = ws.call("get_widget_schema", {"origin": "Acme Data", "widget_id": "desk_overview_alerts"})
        assert schema.data["schema"]["grid_data"] == {"w": 20, "h": 8}
        assert "data" not in schema.data["schema"]
        options = ws.call(
            "get_params_options",
            {"origin": "Acme Data", "widget_id": "desk_overview_alerts", "param_name": "status"},
        ).data["options"]
        assert [o["value"] for o in options] == ["Open", "Closed"]
        refused(
            ws.call(
                "get_params_options",
                {"origin": "Acme Data", "widget_id": "desk_overview_alerts", "param_name": "nope"},
            ),
            "not_found",
        )
        refused(ws.call("get_widget_schema", {"origin": "Nope", "widget_id": "x"}), "not_found")
        refused(
            ws.call("get_widget_schema", {"origin": "Acme Data", "widget_id": "x"}),
            "not_found",
            "Unknown widget_id 'x' for backend 'Acme Data'.",
        )
        refused(
            ws.call("get_widget_schema", {"origin": "Acme Data"}),
            "invalid_arguments",
            "get_widget_schema: missing required argument 'widget_id'.",
        )

    def test_widget_data_is_bare_and_filtered(self, ws):
        rows = ws.call(
            "get_widget_data",
            {
                "origin": "Acme Data",
                "widget_id": "desk_overview_positions",
                "data_args": {"fund": "Beta", "period": "QTD"},
            },
        ).data["data"]
        assert rows == [{"fund": "Beta", "period": "QTD", "ticker": "BBB", "weight": 0.0524}]
        defaults = ws.call("get_widget_data", {"origin": "Acme Data", "widget_id": "desk_overview_positions"})
        assert defaults.data["data"] == [{"fund": "Alpha", "period": "YTD", "ticker": "AAA", "weight": 0.10}]
        placed = ws.call("get_widget_data", {"widget_uuid": "w_twin"}).data["data"]
        assert placed == rows
        for env in (defaults, ws.call("get_widget_data", {"widget_uuid": "w_pos"})):
            for row in env.data["data"]:
                assert "widget_id" not in row and "desk_overview_positions" not in str(row)
        refused(ws.call("get_widget_data", {"widget_id": "desk_overview_positions"}), "invalid_request")
        refused(ws.call("get_widget_data", {"widget_uuid": "ghost"}), "not_found")


class TestWidgets:
    def test_create_lands_on_active_tab_below_lowest(self, ws):
        w = ws.call("create_widget", {"origin": "Acme Data", "widget_id": "desk_notes_memo"}).data["widget"]
        assert w["layout"]["tab_id"] == "review"
        assert (w["layout"]["x"], w["layout"]["y"], w["layout"]["w"], w["layout"]["h"]) == (0, 18, 40, 6)
        ws.call("navigate_workspace", {"operation": "tab", "tab_id": "archive"})
        w2 = ws.call("create_widget", {"origin": "Acme Data", "widget_id": "desk_notes_memo"}).data["widget"]
        assert (w2["layout"]["tab_id"], w2["layout"]["y"]) == ("archive", 0)

    def test_create_keeps_declared_drops_undeclared_fills_defaults(self, ws):
        w = ws.call(
            "create_widget",
            {
                "origin": "Acme Data",
                "widget_id": "desk_overview_positions",
                "data_args": {"fund": "Not A Fund", "colour": "red"},
            },
        ).data["widget"]
        assert w["data_args"] == {"fund": "Not A Fund", "period": "YTD"}

    def test_update_drops_out_of_options_and_undeclared(self, ws):
        w = ws.call(
            "update_widget",
            {"widget_uuid": "w_pos", "data_args": {"fund": "Gamma", "period": "Decade", "colour": "red"}},
        ).data["widget"]
        assert w["data_args"] == {"fund": "Gamma", "period": "MTD"}
        env = ws.call("update_widget", {"widget_uuid": "w_pos", "data_args": {"period": "bogus"}})
        assert env.ok and env.data["widget"]["data_args"]["period"] == "MTD"

    def test_update_rejects_layout_fields(self, ws):
        msg = "Use update_widget_layout for layout fields."
        refused(ws.call("update_widget", {"widget_uuid": "w_pos", "x": 3}), "invalid_request", msg)
        refused(
            ws.call("update_widget", {"widget_uuid": "w_pos", "ui_args": {"h": 3}}), "invalid_request", msg
        )

    def test_widget_id_must_be_unambiguous(self, ws):
        refused(
            ws.call("read_widget", {"widget_id": "desk_overview_positions"}),
            "invalid_request",
            "widget_id 'desk_overview_positions' matched 2 widgets on dashboard 'dash_003'; use widget_uuid.",
        )
        assert (
            ws.call("read_widget", {"widget_id": "desk_overview_alerts"}).data["widget"]["widget_uuid"]
            == "w_alert"
        )
        refused(
            ws.call("read_widget", {"widget_uuid": "ghost"}),
            "not_found",
            "Unknown widget_uuid 'ghost' on dashboard 'dash_003'.",
        )
        refused(ws.call("read_widget", {}), "invalid_request")

    def test_delete_moves_nothing_else(self, ws):
        before = {w.uuid: (w.x, w.y) for w in ws.current_dashboard.widgets}
        assert ws.call("delete_widget", {"widget_uuid": "w_pos"}).data == {"deleted_widget_uuid": "w_pos"}
        after = {w.uuid: (w.x, w.y) for w in ws.current_dashboard.widgets}
        assert after == {k: v for k, v in before.items() if k != "w_pos"}

    def test_generative_widgets(self, ws):
        note = ws.call("add_generative_widget", {"widget_type": "note", "data": "Hello"}).data["widget"]
        assert note["name"] == "Note" and note["generated"] and note["layout"]["w"] == 20
        chart = ws.call(
            "add_generative_widget",
            {
                "widget_type": "chart",
                "data": [{"d": 1, "v": 2}],
                "name": "C",
                "inner_tab": "Archive",
                "chart_params": {"chartType": "line", "xKey": "d", "yKey": "v"},
            },
        ).data["widget"]
        assert (chart["layout"]["tab_id"], chart["layout"]["w"], chart["layout"]["h"]) == ("archive", 24, 12)
        refused(
            ws.call("add_generative_widget", {"widget_type": "note", "data": [{"a": 1}]}),
            "invalid_request",
            "note and html widgets require string data.",
        )
        refused(
            ws.call("add_generative_widget", {"widget_type": "table", "data": "x"}),
            "invalid_request",
            "table and chart widgets require array data.",
        )
        refused(
            ws.call("add_generative_widget", {"widget_type": "chart", "data": []}),
            "invalid_request",
            "chart_params must include chartType, xKey, and yKey.",
        )
        refused(
            ws.call("add_generative_widget", {"widget_type": "note", "data": "x", "inner_tab": "Nowhere"}),
            "not_found",
        )
        refused(ws.call("add_generative_widget", {"widget_type": "video", "data": "x"}), "invalid_arguments")


BOOK_WIDGETS = {
    "book": {
        "name": "Book",
        "description": "The book.",
        "endpoint": "/book",
        "type": "table",
        "gridData": {"w": 40, "h": 10},
    }
}
BOOK_APPS = [
    {
        "name": "Book App",
        "description": "d",
        "tabs": {
            "main": {
                "id": "main",
                "name": "Main",
                "layout": [{"i": "book", "x": 0, "y": 0, "w": 40, "h": 10, "state": {"params": {}}}],
            }
        },
    }
]


class TestBackendsAndApps:
    WIDGETS: ClassVar = BOOK_WIDGETS
    APPS: ClassVar = BOOK_APPS

    def add(self, ws, **extra):
        args = {
            "operation": "add",
            "name": "Book Service",
            "url": "http://127.0.0.1:9000/",
            "widgets_json": self.WIDGETS,
            "apps_json": self.APPS,
            **extra,
        }
        return ws.call("manage_backends", args)

    def test_add_list_refresh_delete(self, ws):
        added = self.add(ws).data
        assert added["backend_id"] == "backend_003" and added["message"] == "Backend added."
        assert added["backend"] == {
            "id": "backend_003",
            "name": "Book Service",
            "url": "http://127.0.0.1:9000",
            "widget_count": 1,
            "app_count": 1,
        }
        assert added["validation_warnings"] == []
        names = [b["name"] for b in ws.call("manage_backends", {"operation": "list"}).data["backends"]]
        assert names == ["Acme Data", "Extra Source", "Book Service"]
        refreshed = ws.call(
            "manage_backends",
            {
                "operation": "refresh",
                "backend_id": "backend_003",
                "widgets_json": {
                    **self.WIDGETS,
                    "extra": {"name": "E", "description": "e", "endpoint": "/e"},
                },
            },
        )
        assert refreshed.data["backend"]["widget_count"] == 2
        assert ws.call("manage_backends", {"operation": "delete", "backend_id": "backend_003"}).ok
        refused(
            ws.call("manage_backends", {"operation": "delete", "backend_id": "backend_001"}),
            "invalid_request",
            "manage_backends delete requires a custom backend_id.",
        )

    def test_add_validation(self, ws):
        refused(
            ws.call("manage_backends", {"operation": "add", "name": "X", "widgets_json": {}}),
            "invalid_request",
            "manage_backends operation='add' requires name and url.",
        )
        refused(
            ws.call(
                "manage_backends",
                {"operation": "add", "name": "Acme Data", "url": "http://x", "widgets_json": {}},
            ),
            "conflict",
            'A backend with the name "Acme Data" already exists.',
        )
        env = refused(
            ws.call(
                "manage_backends",
                {"operation": "add", "name": "X", "url": "http://x", "widgets_json": [self.WIDGETS]},
            ),
            "validation_failed",
        )
        assert env.message.startswith("Widget validation failed: [widgets.json]: Invalid format")
        env = refused(
            ws.call(
                "manage_backends",
                {"operation": "add", "name": "X", "url": "http://x", "widgets_json": {"a": {}, "b": {}}},
            ),
            "validation_failed",
        )
        assert env.message.count("|") == 2 and env.message.endswith("(+3 more)")
        env = refused(
            ws.call(
                "manage_backends",
                {
                    "operation": "add",
                    "name": "X",
                    "url": "http://x",
                    "widgets_json": self.WIDGETS,
                    "apps_json": [
                        {"name": "A", "tabs": {"t": {"id": "t", "name": "T", "layout": [{"x": 0}]}}}
                    ],
                },
            ),
            "validation_failed",
        )
        assert "App validation failed" in env.message and "'i'" in env.message
        refused(
            ws.call("manage_backends", {"operation": "add", "name": "X", "url": "http://x", "apps_json": []}),
            "invalid_request",
        )
        assert len(ws.connections) == 2

    def test_app_warnings_are_kept(self, ws):
        apps = [
            {
                "name": "A",
                "tabs": {
                    "t": {
                        "id": "t",
                        "name": "T",
                        "layout": [
                            {"i": "ghost", "x": 0, "y": 0, "w": 10, "h": 4},
                            {"i": "book", "x": 35, "y": 0, "w": 10, "h": 4},
                        ],
                    }
                },
            }
        ]
        env = self.add(ws, apps_json=apps)
        assert env.ok and len(env.data["validation_warnings"]) == 2

    def test_fixture_add_is_declared(self, ws):
        env = ws.call("manage_backends", {"operation": "add", "name": "Extra Source"})
        refused(env, "conflict")
        ws2 = Workspace.start(ws.world, {"workspace_backends": ["acme-x"]})
        env = ws2.call("manage_backends", {"operation": "add", "name": "extra"})
        assert env.ok and env.data["backend_id"] == "backend_002"
        assert "backend_002" in ws2.custom
        refused(ws2.call("manage_backends", {"operation": "add", "name": "ghost"}), "not_found")

    def test_instantiate_builds_a_dashboard(self, ws):
        self.add(ws)
        apps = ws.call("manage_apps", {"operation": "list", "backend_id": "backend_003"}).data["apps"]
        assert apps[0]["template_id"] == "book-app" and apps[0]["tab_count"] == 1
        env = ws.call(
            "manage_apps",
            {
                "operation": "instantiate",
                "backend_id": "backend_003",
                "app_name": "Book App",
                "activate": False,
            },
        )
        assert env.ok and env.data["name"] == "Book App"
        dash = ws.dashboards[env.data["dashboard_id"]]
        assert dash.tab_ids() == ["main"] and dash.widgets[0].origin == "Book Service"
        assert (dash.widgets[0].x, dash.widgets[0].w) == (0, 40)
        assert ws.current == "dash_003" and ws.workspace_state()["current_tab_id"] == "review"
        read = ws.call(
            "manage_apps", {"operation": "read", "backend_id": "backend_003", "template_id": "book-app"}
        )
        assert read.data["app"]["name"] == "Book App"
        refused(
            ws.call("manage_apps", {"operation": "read", "backend_id": "backend_003", "app_name": "Nope"}),
            "not_found",
            "App 'Nope' not found. Apps served by this backend: Book App.",
        )
        refused(ws.call("manage_apps", {"operation": "list", "backend_id": "backend_404"}), "not_found")
        refused(
            ws.call("manage_apps", {"operation": "list", "backend_id": "backend_003", "apps_json": []}),
            "invalid_request",
        )

    def test_instantiate_refuses_missing_widgets_without_a_partial_dashboard(self, ws):
        self.add(
            ws,
            apps_json=[
                {
                    "name": "Broken",
                    "tabs": {
                        "t": {
                            "id": "t",
                            "name": "T",
                            "layout": [{"i": "ghost", "x": 0, "y": 0, "w": 10, "h": 4}],
                        }
                    },
                }
            ],
        )
        before = len(ws.dashboards)
        refused(
            ws.call(
                "manage_apps", {"operation": "instantiate", "backend_id": "backend_003", "app_name": "Broken"}
            ),
            "invalid_request",
            "Unable to create app because these widgets are unavailable: ghost",
        )
        assert len(ws.dashboards) == before

    def test_instantiate_a_fixture_app(self, ws):
        env = ws.call(
            "manage_apps",
            {
                "operation": "instantiate",
                "backend_id": "backend_001",
                "app_name": "Desk App",
                "dashboard_name": "My Desk",
            },
        )
        assert env.data["name"] == "My Desk" and ws.current == env.data["dashboard_id"]
        assert ws.workspace_state()["current_tab_id"] == "overview"


class TestKnowledge:
    def test_skills_only_when_declared(self, mini_world):
        ws = Workspace.start(mini_world, {"workspace_skills": ["close-checklist"]})
        skill = ws.call("get_skill_content", {"slug": "close-checklist"}).data
        assert set(skill) == {"slug", "name", "description", "content"}
        assert "planted" not in skill
        refused(
            ws.call("get_skill_content", {"slug": "morning-brief"}),
            "not_found",
            "Unknown skill slug 'morning-brief'.",
        )
        assert ws.call("get_workspace_snapshot").data["skills"][0]["slug"] == "close-checklist"
        res = ws.call("read_workspace_resource", {"uri": "openbb://workspace/skills/close-checklist"}).data
        assert "amber ledger stamp" in res["text"]

    def test_resources_and_index(self, ws):
        grid = ws.call("read_workspace_resource", {"uri": "openbb://workspace/specs/layout-grid"}).data
        assert grid["mime_type"] == "text/markdown" and "40 columns" in grid["text"]
        index = ws.call("read_workspace_resource", {"uri": "openbb://workspace/app-builder/index"}).data
        assert index["apps"][0]["name"] == "Desk App" and "Desk App" in index["text"]
        env = refused(ws.call("read_workspace_resource", {"uri": "openbb://nope"}), "not_found")
        assert "Valid URIs: openbb://workspace/app-builder/index" in env.message

    def test_prompts(self, ws):
        data = ws.call("get_workspace_prompt", {"name": "workspace_tool_usage"}).data
        assert data["messages"] == [{"role": "user", "content": "Snapshot first."}]
        refused(ws.call("get_workspace_prompt", {"name": "other"}), "invalid_arguments")

    def test_assign_tasks_echoes(self, ws):
        requests = [{"id": "t1", "description": "Check the book", "assigned_agent_id": "ops"}]
        assert ws.call("assign_tasks_to_agents", {"task_requests": requests}).data == {
            "task_requests": requests
        }


class TestInvalidCalls:
    def test_every_refusal_is_counted(self, mini_world):
        ws = Workspace.start(
            mini_world, {**DESK, "allowed_tools": ["get_workspace_snapshot", "create_widget"]}
        )
        refused(ws.call("launch_rockets", {}), "unknown_tool", "Unknown tool 'launch_rockets'.")
        refused(
            ws.call("read_widget", {"widget_uuid": "w_pos"}),
            "tool_not_allowed",
            "Tool 'read_widget' is not allowed for this task.",
        )
        refused(
            ws.call("create_widget", "not an object"),
            "invalid_arguments",
            "create_widget: arguments must be a JSON object.",
        )
        refused(
            ws.call("create_widget", {"origin": 5, "widget_id": "x"}),
            "invalid_arguments",
            "create_widget: argument 'origin' must be a string.",
        )
        refused(
            ws.call(
                "create_widget",
                {"origin": "Acme Data", "widget_id": "desk_notes_memo", "dashboard_id": "dash_404"},
            ),
            "not_found",
        )
        assert ws.invalid_calls == 5
        assert ws.call("get_workspace_snapshot").ok
        assert ws.invalid_calls == 5
        assert [c.ok for c in ws.calls] == [False] * 5 + [True]


class TestArgumentsTheSourceAccepted:
    """The source ignored argument keys it did not know; we do too, and say so in the envelope's message."""

    def test_unknown_keys_are_ignored_and_named(self, ws):
        env = ws.call(
            "create_widget",
            {"origin": "Acme Data", "widget_id": "desk_notes_memo", "tab": "x", "colour": "red"},
        )
        assert env.ok and env.message == "ok. Ignored unknown argument(s): 'tab', 'colour'."
        assert env.data["widget"]["widget_id"] == "desk_notes_memo" and ws.invalid_calls == 0
        assert ws.calls[-1].args["tab"] == "x"
        assert ws.call("get_workspace_snapshot", {"verbose": True}).message == (
            "ok. Ignored unknown argument(s): 'verbose'."
        )
        assert ws.call("get_workspace_snapshot", {}).message == "ok"
        refused(
            ws.call("create_widget", {"widget_id": "desk_notes_memo", "tab": "x"}),
            "invalid_arguments",
            "create_widget: missing required argument 'origin'. Ignored unknown argument(s): 'tab'.",
        )
        refused(
            ws.call("read_widget", {"widget_uuid": "ghost", "colour": "red"}),
            "not_found",
            "Unknown widget_uuid 'ghost' on dashboard 'dash_003'. Ignored unknown argument(s): 'colour'.",
        )
        assert ws.invalid_calls == 2

    def test_keys_the_source_refused_stay_refused(self, ws):
        layout = "Use update_widget_layout for layout fields."
        refused(
            ws.call("update_widget", {"widget_uuid": "w_pos", "tab_id": "archive"}), "invalid_request", layout
        )
        refused(
            ws.call("update_widget", {"widget_uuid": "w_pos", "gridData": {"w": 3}}),
            "invalid_request",
            layout,
        )
        refused(
            ws.call("update_widget", {"widget_uuid": "w_pos", "config": {"ui_args": {"y": 3}}}),
            "invalid_request",
            layout,
        )
        env = refused(
            ws.call("manage_apps", {"operation": "list", "backend_id": "backend_001", "widgets_json": {}}),
            "invalid_request",
        )
        assert env.message.startswith("manage_apps does not publish apps or widgets")
        refused(
            ws.call("manage_navigation_bar", {"operation": "add_tabs", "tabs": [{"name": "A", "id": "a"}]}),
            "invalid_arguments",
            "tabs must be objects with only the key name.",
        )
        assert ws.invalid_calls == 5

    @pytest.mark.parametrize(
        ("tool", "extra"),
        [
            ("update_widget", {"data_args": {"severity": "Low"}}),
            ("update_widget_layout", {"x": 0, "y": 40, "w": 20, "h": 8}),
            ("read_widget", {}),
            ("delete_widget", {}),
        ],
    )
    def test_origin_next_to_widget_id_narrows_the_match(self, ws, tool, extra):
        for address in ({"widget_id": "desk_overview_alerts"}, {"widget_uuid": "w_alert"}):
            env = ws.call(tool, {**address, "origin": "Acme Data", **extra})
            assert env.ok and env.message == "ok", env.message
            if tool == "delete_widget":
                break
        refused(
            ws.call(tool, {"widget_id": "desk_overview_positions", "origin": "Extra Source", **extra}),
            "not_found",
            "widget_id 'desk_overview_positions' of origin 'Extra Source' matched 0 widgets on "
            "dashboard 'dash_003'; use widget_uuid.",
        )
        refused(
            ws.call(tool, {"widget_uuid": "w_pos", "origin": "Extra Source", **extra}),
            "not_found",
            "Widget 'w_pos' on dashboard 'dash_003' has origin 'Acme Data', not 'Extra Source'.",
        )
        refused(
            ws.call(tool, {"widget_id": "desk_overview_positions", "origin": "Acme Data", **extra}),
            "invalid_request",
            "widget_id 'desk_overview_positions' of origin 'Acme Data' matched 2 widgets on "
            "dashboard 'dash_003'; use widget_uuid.",
        )

    def test_origin_next_to_a_placed_widgets_uuid_in_get_widget_data(self, ws):
        plain = ws.call("get_widget_data", {"widget_uuid": "w_twin"}).data
        addressed = ws.call(
            "get_widget_data",
            {"widget_uuid": "w_twin", "origin": "Acme Data", "widget_id": "desk_overview_positions"},
        )
        assert addressed.ok and addressed.message == "ok" and addressed.data == plain
        assert ws.call("get_widget_data", {"widget_uuid": "w_note", "origin": "generated"}).ok
        refused(
            ws.call("get_widget_data", {"widget_uuid": "w_twin", "origin": "Extra Source"}),
            "not_found",
            "Widget 'w_twin' on dashboard 'dash_003' has origin 'Acme Data', not 'Extra Source'.",
        )

    def test_backend_name_and_config_are_the_sources_older_spellings(self, ws):
        env = ws.call(
            "create_widget",
            {
                "backend_name": "Acme Data",
                "widget_id": "desk_overview_positions",
                "config": {"data_args": {"fund": "Gamma"}, "ui_args": {"title": "G"}},
            },
        )
        assert env.ok and env.message == "ok"
        w = env.data["widget"]
        assert (w["origin"], w["data_args"], w["ui_args"]) == (
            "Acme Data",
            {"fund": "Gamma", "period": "YTD"},
            {"title": "G"},
        )
        top = ws.call(
            "create_widget",
            {
                "origin": "Acme Data",
                "widget_id": "desk_overview_positions",
                "data_args": {"fund": "Beta"},
                "config": {"data_args": {"fund": "Gamma"}},
            },
        )
        assert top.data["widget"]["data_args"]["fund"] == "Beta"
        upd = ws.call("update_widget", {"widget_uuid": "w_pos", "config": {"data_args": {"fund": "Gamma"}}})
        assert upd.ok and upd.data["widget"]["data_args"] == {"fund": "Gamma", "period": "MTD"}
        schema = next(s for s in tool_schemas(["create_widget"]))["parameters"]
        assert "backend_name" not in schema["properties"] and "config" not in schema["properties"]


def test_every_tool_declares_read_or_write_and_the_kinds_partition_the_surface():
    from simulator import TOOLS, reads_only, tools_of

    reads, writes = set(tools_of("read")), set(tools_of("write"))
    assert reads | writes == set(TOOLS) and not reads & writes
    assert set(tools_of("placing")) <= writes and set(tools_of("document")) <= reads
    assert reads_only("manage_apps", {"operation": "list"}) and not reads_only(
        "manage_apps", {"operation": "instantiate"}
    )
    assert reads_only("read_widget", {}) and not reads_only("final_answer", {}) and not reads_only("nope", {})


def test_a_tool_declared_neither_read_nor_write_is_refused():
    from simulator.toolspec import NoArgs, tool

    with pytest.raises(ValueError, match="either 'read' or 'write'"):
        tool(NoArgs, "placing")
    with pytest.raises(ValueError, match="read_operations"):
        tool(NoArgs, "read", read_operations=("list",))
