"""The story writer's commands: world show, new persona / new story, check."""

from __future__ import annotations

import json
import re

from typer.testing import CliRunner

from authoring.cli import app
from tests.authoring.conftest import ADD_STORY

runner = CliRunner()
WIDE = {"COLUMNS": "80"}


# the mini world's desk is authored with the heuristic reference (tests/authoring/conftest.py author_argv): its
# stories are not built to pass the ladder, which `check` holds them to by default
HEURISTIC = ("--reference-agent", "heuristic")


def invoke(*args):
    return runner.invoke(app, list(args), env=WIDE)


def test_world_show_overview_and_json(mini_world_path):
    result = invoke("world", "show", "--world", str(mini_world_path))
    assert result.exit_code == 0, result.output
    for expected in (
        "acme-x *",
        "acme-y",
        "apps of acme-x: Desk App",
        "apps and widgets of acme-y: as acme-x",
        "close-checklist",
        "openbb://workspace/specs/layout-grid",
        "workspace_tool_usage",
    ):
        assert expected in result.stdout
    data = json.loads(invoke("world", "show", "--world", str(mini_world_path), "--json").stdout)
    assert {b["slug"] for b in data["backends"]} == {"acme-x", "acme-y", "extra"}
    assert data["backends"][0]["twins"] == ["acme-y"]


def test_world_show_a_widget_with_params_options_and_served_rows(mini_world_path):
    result = invoke("world", "show", "Positions", "--world", str(mini_world_path))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "desk_overview_positions (table) from Acme Data via acme-x" in out
    assert "options: Alpha, Beta, Gamma" in out and "options: MTD, QTD, YTD" in out
    assert "Sample (1 of 1 rows served with the defaults)" in out
    assert "fund: Alpha, period: YTD, ticker: AAA, weight: 0.1" in out
    assert "    - widget: Positions\n      app: Desk App\n      origin: Acme Data" in out
    data = json.loads(
        invoke("world", "show", "desk_overview_positions", "--world", str(mini_world_path), "--json").stdout
    )
    (widget,) = data["matches"]
    assert widget["params"][0] == {
        "name": "fund",
        "label": "Fund",
        "type": "text",
        "default": "Alpha",
        "options": ["Alpha", "Beta", "Gamma"],
    }
    assert widget["rows_served"] == 1 and widget["twins"] == ["acme-y"]


def test_world_show_other_kinds_and_a_miss(mini_world_path):
    app_out = invoke("world", "show", "desk app", "--world", str(mini_world_path)).stdout
    assert (
        "tab Overview (id overview)" in app_out
        and "Positions (desk_overview_positions, table) with {fund: Beta" in app_out
    )
    skill = invoke("world", "show", "close-checklist", "--world", str(mini_world_path)).stdout
    assert "Sign off with the amber ledger stamp." in skill
    backend = invoke("world", "show", "extra", "--world", str(mini_world_path)).stdout
    assert "Backend extra: origin Extra Source" in backend and "(in no app): Extra Table" in backend
    miss = invoke("world", "show", "Positons", "--world", str(mini_world_path))
    assert miss.exit_code == 2
    assert "did you mean 'Positions'" in " ".join(miss.stderr.split())


def test_new_then_check(tmp_path, mini_world_path):
    src = str(tmp_path)
    assert invoke("new", "persona", "desk_head", "--sources", src).exit_code == 0
    made = invoke(
        "new",
        "story",
        "desk_head",
        "morning",
        "--sources",
        src,
        "--widget",
        "Positions",
        "--world",
        str(mini_world_path),
    )
    assert made.exit_code == 0, made.output
    assert (tmp_path / "stories" / "desk_head" / "morning.md").is_file()
    again = invoke("new", "story", "desk_head", "morning", "--sources", src)
    assert again.exit_code == 2 and "already exists" in again.stderr
    bad = invoke(
        "new",
        "story",
        "desk_head",
        "x",
        "--sources",
        src,
        "--widget",
        "Nope",
        "--world",
        str(mini_world_path),
    )
    assert bad.exit_code == 2 and "no widget called 'Nope'" in bad.stderr
    check = invoke("check", "desk_head", "--sources", src, "--world", str(mini_world_path), *HEURISTIC)
    assert check.exit_code == 2
    assert (
        "personas/desk_head.md: voice.openers[0]: still holds the scaffold's FILL-ME placeholder"
        in " ".join(check.stderr.split())
    )


def check_desk(sources, world_path, *extra):
    """`taskforge check desk_head` on the mini world, with `extra` options."""
    return invoke("check", "desk_head", "--sources", str(sources), "--world", str(world_path), *extra)


def test_check_reports_warnings_and_json(sources, mini_world_path):
    (sources / "stories" / "desk_head" / "morning_positions.md").write_text(
        ADD_STORY.replace("period: QTD", "period: YTD")
    )
    result = check_desk(sources, mini_world_path, "--static", *HEURISTIC)
    assert result.exit_code == 0, result.output
    flat = " ".join(result.stdout.split())
    assert "2 stories; a persona has 4" in flat and "also the parameter's default" in flat
    assert "(facts only: --static)" in flat and "draft" not in flat
    strict = check_desk(sources, mini_world_path, "--strict", "--static", *HEURISTIC)
    assert strict.exit_code == 1
    # plain check drafts: two stories give the calibration too few attempts, so the first author run would block,
    # and check says so as an error on the persona's file (the facts alone are clean)
    drafted = check_desk(sources, mini_world_path, *HEURISTIC)
    said = " ".join(drafted.stderr.split())
    assert drafted.exit_code == 2, drafted.output
    assert (
        "personas/desk_head.md: facts: the first `author` run blocks desk_head on it (insufficient:" in said
    )
    assert "the first `taskforge author` run would NOT certify" in " ".join(drafted.stdout.split())
    data = json.loads(check_desk(sources, mini_world_path, "--json", *HEURISTIC).stdout)
    # the JSON holds the draft's errors beside the facts' (here only the draft's), and what it drafted
    assert data["ok"] is False and {s["story"] for s in data["stories"]} == {
        "morning_positions",
        "risk_repair",
    }
    assert data["draft"]["ran"] and data["draft"]["tasks"] == 10
    assert [e["key"] for e in data["errors"]] == ["facts"] and "insufficient" in data["errors"][0]["message"]
    broken = ADD_STORY.replace("fund: Gamma", "fund: Gama")
    (sources / "stories" / "desk_head" / "morning_positions.md").write_text(broken)
    failed = check_desk(sources, mini_world_path, "--static", *HEURISTIC)
    assert failed.exit_code == 2
    assert (
        "facts.params.fund: 'Gama' is not among the declared options of 'Positions' (did you mean 'Gamma'?)"
        in " ".join(failed.stderr.split())
    )


def _review_items(text: str) -> list[str]:
    """The printed review items without their ids: an item's id is made unique per run (the draft is another
    run than the author run it predicts), what it is about is the same."""
    return sorted(re.findall(r"review [0-9a-f]{10} (\S+ \S+)", " ".join(text.split())))


def test_check_draft_prints_what_the_first_author_run_prints(sources, mini_world_path, tmp_path):
    """`check --draft` is the authoring run itself, in memory: the same gate table, the same blocking items
    (same ids) and the same verdict as the first `taskforge author` run, and nothing written."""
    result = check_desk(sources, mini_world_path, "--draft")
    said = " ".join(result.stdout.split())
    assert "morning_positions_level4" in result.stdout and "capability ladder ladder-0…ladder-4" in said
    assert "rotation-aware variety: skeleton nearest-neighbour" in said
    assert not list(sources.glob("**/*.json"))
    repo = tmp_path / "repo"
    repo.mkdir()
    authored = invoke(
        "author",
        "--persona",
        "desk_head",
        "--sources",
        str(sources),
        "--world",
        str(mini_world_path),
        "--tasksets-dir",
        str(repo / "tasksets"),
        "--skills-dir",
        str(repo / "skills"),
        "--no-commit",
    )
    predicted = _review_items(result.stdout)
    assert predicted == _review_items(authored.stdout)
    # this two-story mini world is fair at every level of the ladder (its Find targets, which no description by
    # content tells apart, are found by a planted pointer), but two stories give the calibration too few
    # attempts per agent: the draft says so, and why; what it would block on is an error (exit 2, with no facts
    # error), where author exits 1 (items block the commit)
    assert predicted == ["insufficient desk_head:"], predicted
    assert result.exit_code == 2 and authored.exit_code == 1, (result.exit_code, authored.exit_code)
    assert "desk_head.md: facts: the first `author` run blocks desk_head on it (insufficient:" in " ".join(
        result.stderr.split()
    )
    assert "the first `taskforge author` run would NOT certify" in said and "fair at every level" in said
    assert "fewer than 3 valid attempts per agent" in said
    # and plain check already warned of both: the persona's story count, and the pointer each Find is found by
    plain = " ".join(result.stdout.split())
    assert "2 stories; a persona has 4" in plain
    assert "morning_positions.md: the find hint 'the holdings book' is not a description by content" in plain
    assert "the pipeline plants a note" in plain


def test_version():
    from importlib.metadata import version

    result = invoke("--version")
    assert result.exit_code == 0 and result.stdout == f"taskforge {version('taskforge')}\n"


def test_world_show_app_marks_the_widgets_check_refuses_as_first_targets():
    """`world show APP` marks a widget whose parameters no other widget of its app takes, and the mark is what
    check's refusal says: with a value stated for each of its parameters, it is the one widget of the app that
    takes them (`factcheck.findability._signature_errors`), on every app of the default world."""
    from simulator import DEFAULT_WORLD, World, option_values, value_allowed

    world = World.load(DEFAULT_WORLD)
    marked = unmarked = 0
    for fixture in world.backends.values():
        for definition in fixture.catalog.widgets.values():
            from authoring.worldinfo import params_alone

            app = definition.definition.get("category")
            if not app or not definition.params:
                continue
            values = {}
            for p in definition.params:
                options = option_values(p)
                values[p["paramName"]] = options[0] if options else p.get("value") or "x"
            siblings = [w for w in fixture.catalog.widgets.values() if w.definition.get("category") == app]
            fits = [
                w.widget_id
                for w in siblings
                if all((q := w.param(k)) is not None and value_allowed(q, v) for k, v in values.items())
            ]
            if params_alone(fixture, definition):
                marked += 1
                assert fits == [definition.widget_id], (definition.name, fits)
            else:
                unmarked += 1
    assert marked and unmarked
    out = " ".join(invoke("world", "show", "Risk Radar").stdout.split())
    assert "[no other widget of the app takes all its parameters]" in out
    assert "check refuses it as a first target" in out


def test_world_show_app_marks_the_widgets_at_an_end_of_check_s_catalog_places():
    """`world show APP` marks a widget that is the first or the last listed, in the catalog's order, of the
    widgets of its app that take the values shown beside it (its defaults for the rest): the condition under
    which check warns "a reader of places" about a Find target (`checks.listed_place`), held on every widget of
    every app of the default world, and the fits counted here again without the shared function."""
    from types import SimpleNamespace

    from authoring.checks import listed_place
    from authoring.worldinfo import app_info, own_values, params_alone
    from simulator import DEFAULT_WORLD, World, value_allowed

    world = World.load(DEFAULT_WORLD)
    backends = list(world.default_backends)
    marked = unmarked = 0
    for slug in backends:
        fixture = world.backends[slug]
        for listed_app in fixture.catalog.apps:
            for tab in app_info(fixture, listed_app)["tabs"]:
                for item in tab["widgets"]:
                    definition = fixture.catalog.widgets.get(str(item["widget_id"]))
                    if (
                        definition is None
                        or not definition.definition.get("category")
                        or not definition.params
                    ):
                        assert not item["listed_end"]
                        continue
                    values = own_values(definition)
                    values.update(
                        {k: v for k, v in item["params"].items() if definition.param(k) is not None}
                    )
                    target = SimpleNamespace(
                        origin=fixture.origin,
                        widget=definition,
                        widget_id=definition.widget_id,
                        name=definition.name,
                        params=values,
                    )
                    at, names = listed_place(world, target, backends)
                    fits = [
                        w.name
                        for w in fixture.catalog.widgets.values()
                        if w.definition.get("category") == definition.definition.get("category")
                        and all(
                            (q := w.param(k)) is not None and value_allowed(q, v) for k, v in values.items()
                        )
                    ]
                    assert names == fits and fits[at] == definition.name
                    at_end = at in (0, len(names) - 1) and not params_alone(fixture, definition)
                    assert item["listed_end"] == at_end, (listed_app.get("name"), definition.name, names)
                    marked += at_end
                    unmarked += not at_end
    assert marked and unmarked
    out = " ".join(invoke("world", "show", "Risk Radar").stdout.split())
    assert "[first or last listed of the app's widgets that take its values]" in out
    assert 'gets check\'s "a reader of places" warning' in out
