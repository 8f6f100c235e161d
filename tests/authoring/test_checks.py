"""Checking sources without authoring: nearest-name suggestions, allowed options, no cascading errors, folder
problems, and the scaffolds, which pass the facts check once their placeholders are filled."""

from __future__ import annotations

import re

import pytest

from authoring.checks import check_persona, folder_warnings, persona_warnings
from authoring.factcheck import FactErrors, resolve
from authoring.scaffold import persona_text, story_text
from authoring.sources import MAX_SOURCE_BYTES, PLACEHOLDER, SourceError, load_sources, load_story
from authoring.suggest import did_you_mean, nearest
from authoring.worldinfo import lookup
from tests.authoring.conftest import ADD_STORY, PERSONA, REPAIR_STORY

BACKENDS = ["acme-x", "extra"]


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def errors_of(world, tmp_path, text):
    path = write(tmp_path / "s.md", text)
    with pytest.raises(FactErrors) as info:
        resolve(world, load_story(path, "p"), BACKENDS)
    return {e.key: e.message for e in info.value.errors}


def test_nearest_names_ignore_case_and_spelling():
    assert nearest("optimizer constraints", ["Optimiser Constraints", "Top Positions"]) == [
        "Optimiser Constraints"
    ]
    assert did_you_mean("perod", ["fund", "period"]) == " (did you mean 'period'?)"
    assert did_you_mean("zzz", ["fund", "period"]) == ""


@pytest.mark.parametrize(
    ("old", "new", "key", "expected"),
    [
        (
            "{widget: Positions,",
            "{widget: positons,",
            "facts.targets[0].widget",
            "(did you mean 'Positions'?)",
        ),
        ("app: Desk App", "app: Desk Ap", "facts.targets[0].app", "(did you mean 'Desk App'?)"),
        (
            "origin: Acme Data}",
            "origin: Acme data}",
            "facts.targets[0].origin",
            "(did you mean 'Acme Data'?)",
        ),
        (
            "fund: Gamma",
            "fund: Gama",
            "facts.params.fund",
            "(did you mean 'Gamma'?) (allowed: 'Alpha', 'Beta', 'Gamma')",
        ),
        (
            "skill: close-checklist",
            "skill: close-checklst",
            "facts.governance.skill",
            "(did you mean 'close-checklist'?)",
        ),
        ("carries: period", "carries: perod", "facts.policy.carries", "(did you mean 'period'?)"),
    ],
)
def test_facts_errors_suggest_the_nearest_name(mini_world, tmp_path, old, new, key, expected):
    errors = errors_of(mini_world, tmp_path, ADD_STORY.replace(old, new))
    assert list(errors) == [key], errors
    assert expected in errors[key]


def test_a_misspelt_parameter_is_reported_itself_and_nothing_else(mini_world, tmp_path):
    errors = errors_of(mini_world, tmp_path, ADD_STORY.replace("period: QTD", "perod: QTD"))
    assert list(errors) == ["facts.params.perod"]
    assert "no target has a parameter 'perod' (did you mean 'period'?)" in errors["facts.params.perod"]
    own = ADD_STORY.replace(
        "{widget: Positions, app: Desk App, origin: Acme Data}",
        "{widget: Positions, app: Desk App, origin: Acme Data, params: {fund: Gamma, perod: QTD}}",
    )
    errors = errors_of(mini_world, tmp_path, own)
    assert list(errors) == ["facts.targets[0].params.perod"]
    assert "(its parameters: 'fund', 'period')" in errors["facts.targets[0].params.perod"]


def test_an_unresolved_target_does_not_cascade(mini_world, tmp_path):
    errors = errors_of(mini_world, tmp_path, REPAIR_STORY.replace("{widget: Alerts,", "{widget: Alertz,"))
    assert list(errors) == ["facts.targets[0].widget"]


def test_unknown_and_misspelt_keys(tmp_path):
    with pytest.raises(SourceError) as info:
        load_story(write(tmp_path / "a.md", ADD_STORY.replace("  find_hint:", "  find_hnt:")), "p")
    assert info.value.key == "facts.find_hint" and "'find_hnt' a misspelling" in info.value.message
    with pytest.raises(SourceError) as info:
        load_story(
            write(
                tmp_path / "b.md",
                ADD_STORY.replace(
                    "  find_hint: the holdings book\n", "  find_hint: the holdings book\n  kidn: add\n"
                ),
            ),
            "p",
        )
    assert info.value.key == "facts.kidn" and "did you mean 'kind'" in info.value.message


def test_bom_size_and_placeholders_name_the_file(tmp_path):
    bom = tmp_path / "bom.md"
    bom.write_bytes(b"\xef\xbb\xbf" + ADD_STORY.encode())
    with pytest.raises(SourceError, match="byte-order mark") as info:
        load_story(bom, "p")
    assert info.value.file == str(bom)
    big = write(tmp_path / "big.md", ADD_STORY + "x" * MAX_SOURCE_BYTES)
    with pytest.raises(SourceError, match="byte limit"):
        load_story(big, "p")
    held = write(
        tmp_path / "held.md", ADD_STORY.replace("find_hint: the holdings book", f"find_hint: {PLACEHOLDER}")
    )
    with pytest.raises(SourceError) as info:
        load_story(held, "p")
    assert info.value.key == "facts.find_hint" and "placeholder" in info.value.message


def test_identical_facts_are_an_error(sources):
    write(sources / "stories" / "desk_head" / "copy.md", ADD_STORY.replace("# Morning positions", "# Copy"))
    with pytest.raises(SourceError, match="identical to the facts of") as info:
        load_sources(sources, "desk_head")
    assert info.value.file.endswith("morning_positions.md")


def test_folder_warnings_name_the_files(sources):
    write(sources / "stories" / "desk_head" / "notes.txt", "scratch")
    warnings = [str(w) for w in folder_warnings(sources, "desk_head")]
    assert any("2 stories; a persona has 4" in w for w in warnings)
    assert any(
        w.endswith("notes.txt: not a story: only .md files are read (rename it or move it out)")
        for w in warnings
    )


def test_check_persona_collects_every_story_and_the_author_warnings(sources, mini_world):
    write(
        sources / "stories" / "desk_head" / "morning_positions.md",
        ADD_STORY.replace("period: QTD", "period: YTD").replace("{widget: Positions,", "{widget: Positions,"),
    )
    write(
        sources / "stories" / "desk_head" / "risk_repair.md",
        REPAIR_STORY.replace("severity: Low", "severity: Lo"),
    )
    write(sources / "stories" / "desk_head" / "broken.md", "---\nfacts: [\n---\n")
    report = check_persona(sources, "desk_head", mini_world, BACKENDS)
    keys = sorted((e.file.rsplit("/", 1)[-1], e.key) for e in report.errors)
    assert keys == [("broken.md", "front matter"), ("risk_repair.md", "facts.params.severity")]
    assert [r.story.slug for r in report.resolved] == ["morning_positions"]
    default_warning = [w for w in report.warnings if "also the parameter's default" in w.message]
    assert len(default_warning) == 1 and default_warning[0].file.endswith("morning_positions.md")
    assert [str(w) for w in report.warnings] == [
        str(w) for w in persona_warnings(sources, "desk_head", report.resolved)
    ]


def test_every_schema_mistake_of_a_story_is_said_in_one_check(sources, mini_world):
    """A story's facts block with three mistakes says all three in one run (it used to say the first): a
    misspelt key once, as the missing key it stands for, and an unknown key beside it."""
    write(
        sources / "stories" / "desk_head" / "morning_positions.md",
        ADD_STORY.replace("  find_hint:", "  find_hnt:")
        .replace("  dashboard: Desk Morning", "  colour: blue\n  dashboard: Desk Morning")
        .replace("    - {widget: Positions, app: Desk App, origin: Acme Data}\n", ""),
    )
    report = check_persona(sources, "desk_head", mini_world, BACKENDS)
    said = {e.key: e.message for e in report.errors if e.file.endswith("morning_positions.md")}
    assert said["facts.find_hint"] == "required key is missing (is 'find_hnt' a misspelling of it?)"
    assert said["facts.colour"].startswith("unknown key") and "facts.find_hnt" not in said
    assert "facts.targets" in said and len(said) == 3, said


def test_unsafe_persona_name_is_refused_before_reading(tmp_path, mini_world):
    report = check_persona(tmp_path, "../etc", mini_world)
    assert not report.ok and "must be lower-case" in report.errors[0].message


def _fill_story(text: str) -> str:
    for placeholder, value in (
        ('"FILL-ME a dashboard name"', "Desk Morning"),
        ('{"FILL-ME a parameter": "FILL-ME its value"}', "{fund: Gamma, period: QTD}"),
        ('"FILL-ME a noun phrase for the widget"', "the holdings book"),
        ('"FILL-ME the policy\'s name"', "the Thursday desk policy"),
        ('"FILL-ME a parameter name from params"', "period"),
        ('"FILL-ME what the policy means, ending in the value"', "quarter-to-date"),
        ('"FILL-ME a skill slug"', "close-checklist"),
        ('"FILL-ME a backend name, e.g. Tilt Watch Service"', "Book Service"),
        ('"FILL-ME a table name, e.g. Tilt Tracker"', "Book Register"),
    ):
        assert placeholder in text, placeholder
        text = text.replace(placeholder, value)
    body = text.index("FILL-ME: the storyline")
    return text[:body] + "The desk head wants the Gamma book quarter-to-date on the morning board.\n"


def test_scaffolds_pass_the_facts_check_once_filled(tmp_path, mini_world):
    persona = persona_text("desk_head")
    assert "# Persona: Desk head" in persona
    write(tmp_path / "personas" / "desk_head.md", persona)
    (widget,) = [m for m in lookup(mini_world, "Positions") if m["kind"] == "widget"]
    story = story_text("desk_head", "morning", widget)
    assert '{widget: "Positions", app: "Desk App", origin: "Acme Data"}' in story
    assert '#   fund (default "Alpha"): Alpha, Beta, Gamma' in story
    write(tmp_path / "stories" / "desk_head" / "morning.md", story)
    before = check_persona(tmp_path, "desk_head", mini_world, BACKENDS)
    assert {e.key for e in before.errors} == {"voice.openers[0]", "facts.dashboard"}
    write(tmp_path / "personas" / "desk_head.md", PERSONA)
    write(tmp_path / "stories" / "desk_head" / "morning.md", _fill_story(story))
    after = check_persona(tmp_path, "desk_head", mini_world, BACKENDS, ladder=False)
    assert after.ok, [str(e) for e in after.errors]
    assert after.resolved[0].carried_value == "QTD"
    plain = story_text("desk_head", "other")
    assert plain.count(PLACEHOLDER) > 5 and "kind: add | read | repair" in plain


def test_author_shows_the_same_warnings_as_check(sources, repo, mini_world_path, tmp_path):
    from authoring.run import run_persona
    from simulator import World
    from tests.authoring.test_pipeline import drivers, options

    write(
        sources / "stories" / "desk_head" / "morning_positions.md",
        ADD_STORY.replace("period: QTD", "period: YTD"),
    )
    write(sources / "stories" / "desk_head" / "draft.txt", "not yet")
    expected = [
        f"warning: {w}" for w in check_persona(sources, "desk_head", World.load(mini_world_path)).warnings
    ]
    # the story count, the lazy default, the stray file; and, in this mini world, the find pointer each of the
    # two stories is found by at Find (their hints are not descriptions by content: the pipeline plants a note),
    # and the catalog place a reader of places finds each Find target at (a two-widget app: first or last)
    placed = [w for w in expected if "a reader of places passes the level" in w]
    assert len(placed) == 2, expected
    assert len(expected) == 7, expected
    pointed = [w for w in expected if "the pipeline plants a note" in w]
    assert {w.split(": ")[1].rsplit("/", 1)[-1] for w in pointed} == {
        "morning_positions.md",
        "risk_repair.md",
    }
    assert any("draft.txt" in w for w in expected) and any("default" in w for w in expected)
    messages: list[str] = []
    run_persona(
        options(sources, repo, mini_world_path, commit=False),
        drivers(messages),
        driver_name="rules",
        checkpoint_path=tmp_path / "cp.sqlite",
    )
    assert [m for m in messages if m.startswith("warning: ")] == expected


def test_the_readme_documents_every_facts_key():
    from authoring.sources import BuildFact, Facts, GovernanceFact, PolicyFact, TargetFact
    from tests.conftest import ROOT

    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("| facts key |") :]
    for key in Facts.model_fields:
        assert f"| `{key}` |" in table, key
    for model in (TargetFact, PolicyFact, GovernanceFact, BuildFact):
        for key in model.model_fields:
            assert re.search(rf"\b{key}\b", table), (model.__name__, key)
