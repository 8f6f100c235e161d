import json
import shutil

import pytest

from simulator import World, WorldError
from tests.conftest import COMPAT_WORLD, needs_compat


def test_mini_world_loads_every_piece(mini_world):
    assert set(mini_world.backends) == {"acme-x", "acme-y", "extra"}
    assert mini_world.backend("acme").slug == "acme-x"
    assert mini_world.backend("Extra Source").slug == "extra"
    assert set(mini_world.skills) == {"close-checklist", "morning-brief"}
    assert mini_world.skills["close-checklist"].planted[0].phrase == "amber ledger stamp"
    assert "openbb://workspace/specs/layout-grid" in mini_world.resources
    assert set(mini_world.prompts) == {"workspace_tool_usage", "workspace_session_context"}
    assert [d.name for d in mini_world.baselines["all-apps"].dashboards] == ["Home", "Desk App"]


def test_load_is_cached_until_a_file_changes(mini_world_path):
    first = World.load(mini_world_path)
    assert World.load(mini_world_path) is first
    skill = mini_world_path / "skills" / "brief.json"
    data = json.loads(skill.read_text())
    data["content"] += "\n3. New step."
    skill.write_text(json.dumps(data))
    second = World.load(mini_world_path)
    assert second is not first
    assert "New step" in second.skills["morning-brief"].content
    assert second.fingerprint != first.fingerprint


def test_rows_are_kept_out_of_the_definition(mini_world):
    widget = mini_world.backend("acme-x").catalog.widgets["desk_overview_positions"]
    assert "data" not in widget.definition
    assert len(widget.rows) == 3
    assert "data" not in widget.schema()


@pytest.mark.parametrize(
    ("mutate", "file", "field"),
    [
        (
            lambda root: (root / "backends" / "extra.json").write_text("{not json"),
            "backends/extra.json",
            "line 1",
        ),
        (
            lambda root: (root / "backends" / "extra.json").write_text('{"widgets": []}'),
            "backends/extra.json",
            "widgets",
        ),
        (
            lambda root: (root / "skills" / "brief.json").write_text('{"slug": "x"}'),
            "skills/brief.json",
            "name",
        ),
        (lambda root: (root / "backends" / "acme.json").unlink(), "backends/acme.json", "(file)"),
        (
            lambda root: (root / "resources" / "grid.md").write_text("---\ntitle: x\n---\nbody"),
            "resources/grid.md",
            "uri",
        ),
    ],
)
def test_broken_worlds_name_the_file_and_field(mini_world_path, mutate, file, field):
    mutate(mini_world_path)
    with pytest.raises(WorldError) as info:
        World.load(mini_world_path)
    assert info.value.file == file
    assert info.value.field.startswith(field)


def test_alias_to_unknown_backend_is_rejected(mini_world_path):
    manifest = json.loads((mini_world_path / "world.json").read_text())
    manifest["aliases"]["ghost"] = "nowhere"
    (mini_world_path / "world.json").write_text(json.dumps(manifest))
    with pytest.raises(WorldError, match=r"aliases\.ghost"):
        World.load(mini_world_path)


def test_missing_world_directory(tmp_path):
    with pytest.raises(WorldError, match="does not exist"):
        World.load(tmp_path / "nope")


@needs_compat
def test_compat_world_loads_unchanged(tmp_path):
    world = World.load(COMPAT_WORLD)
    assert world.backend("stark-enterprise-x").origin == "Bench Stark Enterprise"
    assert len(world.backend("stark-enterprise-x").catalog.widgets) == 318
    assert len(world.backend("stark-enterprise-x").catalog.apps) == 23
    assert len(world.skills) == 10
    assert len(world.resources) == 16
    assert set(world.baselines) >= {
        "stark-workspace-a",
        "stark-onboard-a",
        "stark-onboard-b",
        "all-stark-enterprise-apps",
    }
    assert len(world.baselines["stark-workspace-a"].dashboards) == 27
    # The loader reads the directory as published: a copy loads to the same catalog.
    copy = tmp_path / "compat"
    shutil.copytree(COMPAT_WORLD, copy)
    assert World.load(copy).fingerprint == world.fingerprint


def test_the_fixture_of_an_origin_is_the_first_backend_that_serves_it(mini_world):
    # two backends serve "Acme Data": the one the setup lists first wins, by slug, alias or display name
    assert mini_world.fixture_of("Acme Data").slug == "acme-x"
    assert mini_world.fixture_of("Acme Data", ["extra", "acme-y", "acme-x"]).slug == "acme-y"
    assert mini_world.fixture_of("Acme Data", ["acme"]).slug == "acme-x"
    assert mini_world.fixture_of("Acme Data", ["extra"]) is None
    assert mini_world.fixture_of("Nobody") is None


def test_the_widgets_of_an_app_are_its_layout_in_order(mini_world):
    catalog = mini_world.backend("acme-x").catalog
    assert catalog.app_names == ("Desk App",)
    assert catalog.app_widgets("Desk App") == (
        "desk_overview_positions",
        "desk_overview_alerts",
        "desk_notes_memo",
    )
    assert catalog.app_widgets("No Such App") == ()
    assert catalog.apps_of("desk_overview_alerts") == ["Desk App"]
    assert catalog.apps_of("desk_overview_book_summary") == []


def test_the_options_of_a_parameter_are_their_values(mini_world):
    positions = mini_world.backend("acme-x").catalog.widgets["desk_overview_positions"]
    assert positions.options("fund") == ["Alpha", "Beta", "Gamma"]
    assert positions.options("no_such_param") == []
    from simulator.world import option_values

    # an option is a bare value or a {label, value} object; a parameter may declare none
    assert option_values({"options": ["a", {"label": "B", "value": "b"}]}) == ["a", "b"]
    assert option_values({"paramName": "ticker"}) == []
    assert option_values(None) == []
