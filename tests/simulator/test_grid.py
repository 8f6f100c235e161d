"""Grid physics: 40 columns, a moved widget floats up, nobody else is displaced, seeded gaps stay."""

from simulator import Workspace
from simulator.grid import Rect, clamp_to_grid, next_free_y, overlaps, settle

BOARD = {
    "initial_state": {
        "dashboard": {
            "name": "Grid",
            "tabs": [{"id": "g", "name": "G"}],
            "widgets": [
                {
                    "origin": "Acme Data",
                    "widget_id": "desk_overview_positions",
                    "widget_uuid": "a",
                    "layout": {"x": 0, "y": 0, "w": 20, "h": 10},
                },
                {
                    "origin": "Acme Data",
                    "widget_id": "desk_overview_alerts",
                    "widget_uuid": "gap",
                    "layout": {"x": 20, "y": 30, "w": 20, "h": 8},
                },
                {
                    "origin": "Acme Data",
                    "widget_id": "desk_notes_memo",
                    "widget_uuid": "c",
                    "layout": {"x": 0, "y": 50, "w": 10, "h": 5},
                },
            ],
        }
    }
}


def layout(ws, uuid):
    w = next(w for w in ws.current_dashboard.widgets if w.uuid == uuid)
    return (w.x, w.y, w.w, w.h)


def test_seeded_layouts_keep_their_gaps(mini_world):
    ws = Workspace.start(mini_world, BOARD)
    assert layout(ws, "gap") == (20, 30, 20, 8)
    assert layout(ws, "c") == (0, 50, 10, 5)


def test_a_moved_widget_parked_far_down_an_empty_column_rises_to_the_top(mini_world):
    ws = Workspace.start(mini_world, BOARD)
    env = ws.call("update_widget_layout", {"widget_uuid": "gap", "x": 20, "y": 90, "w": 20, "h": 8})
    assert env.data["widget"]["layout"]["y"] == 0
    assert layout(ws, "gap") == (20, 0, 20, 8)
    assert layout(ws, "c") == (0, 50, 10, 5)
    ws.call("update_widget_layout", {"widget_uuid": "c", "x": 30, "y": 90, "w": 10, "h": 5})
    assert layout(ws, "c") == (30, 8, 10, 5)


def test_a_moved_widget_stops_under_whoever_holds_the_spot(mini_world):
    ws = Workspace.start(mini_world, BOARD)
    ws.call("update_widget_layout", {"widget_uuid": "c", "x": 5, "y": 40, "w": 10, "h": 5})
    assert layout(ws, "c") == (5, 10, 10, 5)
    ws.call("update_widget_layout", {"widget_uuid": "c", "x": 0, "y": 3, "w": 10, "h": 5})
    assert layout(ws, "c") == (0, 10, 10, 5)
    assert layout(ws, "a") == (0, 0, 20, 10)


def test_moves_are_clamped_into_the_grid(mini_world):
    ws = Workspace.start(mini_world, BOARD)
    ws.call("update_widget_layout", {"widget_uuid": "c", "x": 35, "y": 0, "w": 10, "h": 5})
    assert layout(ws, "c") == (30, 0, 10, 5)
    ws.call("update_widget_layout", {"widget_uuid": "c", "x": 0, "y": 0, "w": 55, "h": 5})
    assert layout(ws, "c")[0] == 0 and layout(ws, "c")[2] == 40
    env = ws.call("update_widget_layout", {"widget_uuid": "c", "x": 0, "y": 0, "w": 0, "h": 5})
    assert not env.ok and env.error.code == "invalid_request"
    env = ws.call("update_widget_layout", {"widget_uuid": "c", "x": 0, "y": 0, "w": 10})
    assert env.message == "update_widget_layout: missing required argument 'h'."


def test_move_to_another_tab(mini_world):
    ws = Workspace.start(mini_world, BOARD)
    ws.call("manage_navigation_bar", {"operation": "add_tabs", "tabs": [{"name": "Other"}]})
    ws.call(
        "update_widget_layout", {"widget_uuid": "gap", "x": 0, "y": 20, "w": 20, "h": 8, "tab_id": "other"}
    )
    w = next(w for w in ws.current_dashboard.widgets if w.uuid == "gap")
    assert (w.tab_id, w.y) == ("other", 2)  # the navigation bar takes the top two rows
    env = ws.call(
        "update_widget_layout", {"widget_uuid": "gap", "x": 0, "y": 0, "w": 20, "h": 8, "tab_id": "x"}
    )
    assert env.error.code == "not_found"


def test_new_widgets_land_below_the_lowest_widget_of_the_tab(mini_world):
    ws = Workspace.start(mini_world, BOARD)
    w = ws.call("create_widget", {"origin": "Acme Data", "widget_id": "desk_overview_alerts"}).data["widget"]
    assert (w["layout"]["x"], w["layout"]["y"], w["layout"]["w"], w["layout"]["h"]) == (0, 55, 20, 8)


def test_pure_functions():
    others = [Rect(0, 0, 20, 10), Rect(20, 30, 20, 8)]
    assert next_free_y(others) == 38
    assert next_free_y([], floor=2) == 2
    assert settle(Rect(25, 60, 10, 5), others) == Rect(25, 38, 10, 5)
    assert settle(Rect(25, 20, 10, 5), others) == Rect(25, 0, 10, 5)
    assert not overlaps(Rect(0, 0, 20, 10), Rect(20, 0, 20, 10))
    assert overlaps(Rect(0, 0, 21, 10), Rect(20, 0, 20, 10))
    assert clamp_to_grid(Rect(-3, -1, 10, 4)) == Rect(0, 0, 10, 4)
