import pytest

from simulator import SetupError, Workspace
from tests.conftest import COMPAT_WORLD, needs_compat


def test_bare_workspace_gets_a_home_dashboard(mini_world):
    ws = Workspace.start(mini_world, {"workspace_baseline": ""})
    assert [d.name for d in ws.dashboards.values()] == ["Home"]
    assert ws.current == "dash_001"
    assert [c.id for c in ws.connections] == ["backend_001", "backend_002"]


def test_ids_follow_connection_and_seeding_order(mini_world):
    setup = {
        "workspace_baseline": "lived",
        "workspace_backends": ["acme-x", "extra"],
        "default_selected_dashboard": "Task Board",
        "initial_state": {
            "dashboard": {
                "name": "Task Board",
                "tabs": [{"id": "t1", "name": "T1"}],
                "widgets": [
                    {"origin": "Acme Data", "widget_id": "desk_overview_alerts", "widget_uuid": "w_fixed"},
                    {"origin": "Acme Data", "widget_id": "desk_notes_memo"},
                ],
            },
            "custom_backends": [{"name": "Seeded", "widgets_json": {}, "apps_json": []}],
        },
    }
    ws = Workspace.start(mini_world, setup)
    assert [c.id for c in ws.connections] == ["backend_001", "backend_002", "backend_003"]
    assert list(ws.dashboards) == ["dash_001", "dash_002", "dash_003"]
    board = ws.dashboards["dash_003"]
    # explicit uuids are kept and still advance the counter (the baseline used widget_001, widget_002)
    assert [w.uuid for w in board.widgets] == ["w_fixed", "widget_004"]
    assert ws.current == "dash_003" and ws.workspace_state()["current_tab_id"] == "t1"
    env = ws.call(
        "manage_backends", {"operation": "add", "name": "Built", "url": "http://x", "widgets_json": {}}
    )
    assert env.data["backend_id"] == "backend_004"
    env = ws.call("create_widget", {"origin": "Acme Data", "widget_id": "desk_overview_alerts"})
    assert env.data["widget"]["widget_uuid"] == "widget_005"


def test_seeded_widgets_get_defaults_and_next_free_y(mini_world):
    ws = Workspace.start(
        mini_world,
        {
            "initial_state": {
                "dashboard": {
                    "name": "B",
                    "widgets": [
                        {
                            "origin": "Acme Data",
                            "widget_id": "desk_overview_positions",
                            "data_args": {"fund": "Beta", "junk": 1},
                        },
                        {"origin": "Acme Data", "widget_id": "desk_overview_alerts"},
                    ],
                }
            }
        },
    )
    a, b = ws.current_dashboard.widgets
    assert a.data_args == {"fund": "Beta", "period": "YTD"}
    assert (a.x, a.y, a.w, a.h) == (0, 0, 20, 10)
    assert (b.x, b.y) == (0, 10)


@pytest.mark.parametrize(
    ("setup", "field"),
    [
        ({"workspace_baseline": "nope"}, "workspace_baseline"),
        ({"workspace_backends": ["ghost"]}, "workspace_backends[0]"),
        ({"workspace_backends": ["acme-x", "acme-y"]}, "workspace_backends[1]"),
        ({"workspace_skills": ["ghost"]}, "workspace_skills[0]"),
        ({"default_selected_dashboard": "Nowhere"}, "default_selected_dashboard"),
        (
            {
                "initial_state": {
                    "dashboard": {"name": "B", "widgets": [{"origin": "Nope", "widget_id": "x"}]}
                }
            },
            "initial_state.dashboards[0].widgets[0].origin",
        ),
        (
            {
                "initial_state": {
                    "dashboard": {"name": "B", "widgets": [{"origin": "Acme Data", "widget_id": "x"}]}
                }
            },
            "initial_state.dashboards[0].widgets[0].widget_id",
        ),
        (
            {
                "initial_state": {
                    "dashboard": {
                        "name": "B",
                        "widgets": [
                            {"origin": "Acme Data", "widget_id": "desk_notes_memo", "widget_uuid": "u"},
                            {"origin": "Acme Data", "widget_id": "desk_notes_memo", "widget_uuid": "u"},
                        ],
                    }
                }
            },
            "initial_state.dashboards[0].widgets[1].widget_uuid",
        ),
        ({"initial_state": {"dashboard": {"name": "B", "bogus": 1}}}, "initial_state.dashboard.bogus"),
    ],
)
def test_bad_setups_name_the_field(mini_world, setup, field):
    with pytest.raises(SetupError) as info:
        Workspace.start(mini_world, setup)
    assert info.value.field == field


def test_baseline_is_shared_and_copy_on_write(mini_world):
    first = Workspace.start(mini_world, {"workspace_baseline": "lived"})
    second = Workspace.start(mini_world, {"workspace_baseline": "lived"})
    assert first.dashboards["dash_002"] is second.dashboards["dash_002"]
    env = first.call(
        "update_widget",
        {"dashboard_id": "dash_002", "widget_uuid": "widget_001", "data_args": {"fund": "Gamma"}},
    )
    assert env.ok
    assert first.dashboards["dash_002"] is not second.dashboards["dash_002"]
    assert second.dashboards["dash_002"].widgets[0].data_args["fund"] == "Alpha"
    third = Workspace.start(mini_world, {"workspace_baseline": "lived"})
    assert third.dashboards["dash_002"].widgets[0].data_args["fund"] == "Alpha"
    assert first.initial_dashboards["dash_002"].widgets[0].data_args["fund"] == "Alpha"


def test_a_derived_world_seeds_again_only_the_baseline_dashboards_it_changed():
    """A world with one catalog replaced (a counterfactual copy exchanging two widgets) reuses the baseline
    dashboards that place none of the replaced widgets and seeds the others again: every dashboard is what a
    build from nothing gives."""
    import dataclasses

    from simulator import DEFAULT_WORLD, World

    world = World.load(DEFAULT_WORLD)
    slug, baseline = max(world.baselines.items(), key=lambda kv: len(kv[1].dashboards))
    setup = {"workspace_baseline": slug}
    Workspace.start(world, setup)
    placed = {(w.origin, w.widget_id) for d in baseline.dashboards for w in d.widgets}
    fixture = next(f for f in world.backends.values() if any(o == f.origin for o, _ in placed))
    a, b = sorted(wid for o, wid in placed if o == fixture.origin)[:2]
    catalog = fixture.catalog
    widgets = dict(catalog.widgets)
    widgets[a] = dataclasses.replace(catalog.widgets[b], widget_id=a)
    widgets[b] = dataclasses.replace(catalog.widgets[a], widget_id=b)
    backends = {
        **world.backends,
        fixture.slug: dataclasses.replace(
            fixture, catalog=dataclasses.replace(catalog, widgets=widgets, _listings={})
        ),
    }
    derived = dataclasses.replace(
        world, fingerprint="derived", cache=Workspace.shared_builds(world), backends=backends
    )
    fresh = dataclasses.replace(world, fingerprint="fresh", cache={}, backends=backends)
    reused, built = Workspace.start(derived, setup), Workspace.start(fresh, setup)
    original = Workspace.start(world, setup)
    assert reused.state_hash() == built.state_hash() != original.state_hash()
    assert list(reused.dashboards) == list(built.dashboards) == list(original.dashboards)
    changed = [k for k, d in reused.dashboards.items() if any(w.widget_id in (a, b) for w in d.widgets)]
    assert changed and len(changed) < len(reused.dashboards)
    for k, dash in reused.dashboards.items():
        assert dash.digest() == built.dashboards[k].digest()
        assert (dash is original.dashboards[k]) == (k not in changed)


def test_state_hash_is_stable_and_sensitive(mini_world):
    a = Workspace.start(mini_world, {"workspace_baseline": "lived"})
    b = Workspace.start(mini_world, {"workspace_baseline": "lived"})
    assert a.state_hash() == b.state_hash()
    a.call("create_widget", {"origin": "Acme Data", "widget_id": "desk_notes_memo"})
    assert a.state_hash() != b.state_hash()
    b.call("create_widget", {"origin": "Acme Data", "widget_id": "desk_notes_memo"})
    assert a.state_hash() == b.state_hash()
    b.call("get_workspace_snapshot", {})
    assert a.state_hash() == b.state_hash()


def test_rule_baseline_opens_every_app(mini_world):
    ws = Workspace.start(mini_world, {"workspace_baseline": "all-apps"})
    desk = ws.dashboards["dash_002"]
    assert desk.name == "Desk App"
    assert [t.id for t in desk.tabs] == ["overview", "notes"]
    positions = desk.widgets[0]
    assert positions.data_args == {"fund": "Beta", "period": "QTD"}
    assert (positions.x, positions.y, positions.w, positions.h) == (0, 0, 20, 10)


@needs_compat
def test_compat_ids_match_the_published_references():
    import json

    from simulator import World

    world = World.load(COMPAT_WORLD)
    task = json.loads(
        (
            COMPAT_WORLD.parent / "tasksets/workspace_tasks/compliance_risk/breach_repair_level4.json"
        ).read_text()
    )
    ws = Workspace.start(world, task["setup"])
    assert len(ws.dashboards) == 28 and ws.current == "dash_028"
    assert [c.id for c in ws.connections] == ["backend_001", "backend_002", "backend_003", "backend_004"]
    env = ws.call("manage_backends", {"operation": "add", "name": "S", "url": "http://h", "widgets_json": {}})
    assert env.data["backend_id"] == "backend_005"


def test_older_setup_spellings(mini_world):
    ws = Workspace.start(
        mini_world,
        {
            "workspace_baseline": "lived",
            "initial_state": {
                "active_dashboard": "Desk Board",
                "custom_backends": [
                    {"name": "Old", "widgets_json": {}, "apps_json": [], "warnings": ["kept note"]}
                ],
                "dashboard": {
                    "name": "T",
                    "widgets": [
                        {
                            "origin": "Acme Data",
                            "widget_id": "desk_notes_memo",
                            "layout": {"x": 0, "y": 0, "w": 40, "h": 6, "min_h": 4},
                        }
                    ],
                },
            },
        },
    )
    assert ws.current_dashboard.name == "Desk Board"
    assert ws.custom["backend_003"].warnings == ["kept note"]
    assert ws.dashboards["dash_003"].widgets[0].layout()["min_h"] == 4
    with pytest.raises(SetupError, match="not both"):
        Workspace.start(
            mini_world, {"default_selected_dashboard": "Home", "initial_state": {"active_dashboard": "Home"}}
        )
