import json

from simulator import World
from simulator.worldcheck import check_world
from tests.conftest import COMPAT_WORLD, needs_compat


def test_clean_mini_world(mini_world):
    assert [p for p in check_world(mini_world) if p.severity == "error"] == []


def test_broken_world_is_reported_item_by_item(mini_world_path):
    backend = json.loads((mini_world_path / "backends" / "acme.json").read_text())
    tab = backend["apps"][0]["tabs"]["overview"]
    tab["layout"].append({"i": "ghost_widget", "x": 0, "y": 20, "w": 10, "h": 4})
    tab["layout"].append({"i": "desk_notes_memo", "x": 10, "y": 5, "w": 35, "h": 4})
    backend["widgets"]["desk_overview_alerts"]["params"][0]["value"] = "Extreme"
    (mini_world_path / "backends" / "acme.json").write_text(json.dumps(backend))
    lived = json.loads((mini_world_path / "initial_states" / "lived.json").read_text())
    lived["initial_state"]["dashboards"][1]["widgets"][0]["data_args"] = {"fund": "Omega"}
    (mini_world_path / "initial_states" / "lived.json").write_text(json.dumps(lived))
    skill = json.loads((mini_world_path / "skills" / "brief.json").read_text())
    skill["content"] += " Also stamp with the amber ledger stamp."
    (mini_world_path / "skills" / "brief.json").write_text(json.dumps(skill))

    problems = [str(p) for p in check_world(World.load(mini_world_path))]
    text = "\n".join(problems)
    assert (
        "backends/acme.json: apps[0] 'Desk App'.tabs.overview.layout[2]: references unknown widget 'ghost_widget'"
        in text
    )
    assert "outside the 40-column grid" in text
    assert "overlaps 'desk_overview_positions'" in text
    assert "widgets.desk_overview_alerts.params.severity: default 'Extreme' is not among its options" in text
    assert "initial_states/lived.json: dashboard 'Desk Board'" in text and "fund='Omega'" in text
    assert "skills/close.json: planted: 'amber ledger stamp' also occurs in skills/brief.json" in text


@needs_compat
def test_compat_world_has_no_errors():
    problems = check_world(World.load(COMPAT_WORLD))
    assert [p for p in problems if p.severity == "error"] == []
