"""Facts the rule author would misread are refused before authoring, naming the story file and the field."""

from __future__ import annotations

import pytest

from authoring.factcheck import FactErrors, resolve
from authoring.sources import SourceError, load_story
from tests.authoring.conftest import ADD_STORY

BACKENDS = ["acme-x", "extra"]


def story(tmp_path, text, name="morning.md"):
    path = tmp_path / name
    path.write_text(text)
    return load_story(path, "desk_head")


def errors_of(world, tmp_path, text) -> dict[str, str]:
    loaded = story(tmp_path, text)
    with pytest.raises(FactErrors) as info:
        resolve(world, loaded, BACKENDS)
    assert all(e.file == loaded.file for e in info.value.errors)
    return {e.key: e.message for e in info.value.errors}


def prompt_governed(text: str, name: str) -> str:
    return text.replace("governance: {skill: close-checklist}", f"governance: {{prompt: {name}}}")


def test_governance_names_exactly_one_source(tmp_path):
    with pytest.raises(SourceError) as info:
        story(tmp_path, ADD_STORY.replace("{skill: close-checklist}",
                                          "{skill: close-checklist, prompt: workspace_tool_usage}"))
    assert info.value.key == "facts.governance" and "skill, resource or prompt" in info.value.message


def test_a_workspace_prompt_is_checked_against_the_worlds_prompts(mini_world, tmp_path):
    errors = errors_of(mini_world, tmp_path, prompt_governed(ADD_STORY, "workspace_morning_brief"))
    assert errors == {"facts.governance.prompt": "unknown workspace prompt 'workspace_morning_brief' (world has: "
                      "workspace_session_context, workspace_tool_usage)"}
    errors = errors_of(mini_world, tmp_path, prompt_governed(ADD_STORY, "workspace_tool_usage"))
    assert errors == {"facts.governance.prompt": "prompt 'workspace_tool_usage' has no closing phrase that occurs "
                      "nowhere else in the world"}


def test_an_unplanted_prompt_grounds_on_its_closing_phrase(mini_world_path, tmp_path):
    from simulator import World

    (mini_world_path / "prompts" / "usage.md").write_text(
        "---\nname: workspace_tool_usage\ndescription: Usage.\n---\n1. Snapshot first.\n"
        "2. Close every session with the harbour-light checklist.\n")
    gov = resolve(World.load(mini_world_path), story(tmp_path, prompt_governed(ADD_STORY, "workspace_tool_usage")),
                  BACKENDS).governance
    assert (gov.kind, gov.ref, gov.phrase) == ("prompt", "workspace_tool_usage",
                                               "session with the harbour-light checklist")
    assert gov.read_call() == ("get_workspace_prompt", {"name": "workspace_tool_usage"})
    assert gov.mention == "the workspace tool usage prompt"


TWO_TARGETS = ADD_STORY.replace(
    "    - {widget: Positions, app: Desk App, origin: Acme Data}\n",
    "    - {widget: Positions, app: Desk App, origin: Acme Data, params: {fund: Gamma, period: QTD}}\n"
    "    - {widget: Positions, app: Desk App, origin: Acme Data, params: SECOND}\n")


@pytest.mark.parametrize(("second", "refused"), [("{fund: Beta, period: QTD}", False),
                                                 ("{fund: Gamma, period: QTD}", True),
                                                 ("{fund: Gamma}", True)])
def test_two_targets_of_one_widget_need_parameters_that_tell_them_apart(mini_world, tmp_path, second, refused):
    text = TWO_TARGETS.replace("SECOND", second)
    if not refused:
        resolved = resolve(mini_world, story(tmp_path, text), BACKENDS)
        assert [t.params["fund"] for t in resolved.targets] == ["Gamma", "Beta"]
        return
    assert errors_of(mini_world, tmp_path, text) == {"facts.targets[1].params": "repeats facts.targets[0] "
                                                     "('Positions') with parameters that do not tell the two apart; "
                                                     "give each its own values"}


@pytest.mark.parametrize(("meaning", "refused"), [
    ("the Gamma book", True),
    ("only the High alerts", False),
    ('"the Gamma book, quarter to date - QTD"', False),
    ("qtd for the Gamma book", False),
    ("quarter-to-date", False),
    ("the Delta book", False),
])
def test_a_policy_meaning_about_another_parameter_is_refused(mini_world, tmp_path, meaning, refused):
    text = ADD_STORY.replace("meaning: quarter-to-date", f"meaning: {meaning}")
    if not refused:
        resolve(mini_world, story(tmp_path, text), BACKENDS)
        return
    assert errors_of(mini_world, tmp_path, text) == {
        "facts.policy.carries": "the policy carries 'period' ('QTD') but its meaning names 'Gamma', a value of "
                                "'fund'; carry 'fund', or say the period in the meaning"}


@pytest.mark.parametrize(("old", "new", "key"), [
    ("dashboard: Desk Morning", "dashboard: Desk QTD Morning", "facts.dashboard"),
    ("  find_hint:", "  note: QTD Book Note\n  find_hint:", "facts.note"),
])
def test_a_carried_value_in_a_dashboard_or_note_name_is_refused(mini_world, tmp_path, old, new, key):
    errors = errors_of(mini_world, tmp_path, ADD_STORY.replace(old, new))
    assert list(errors) == [key] and "states 'QTD', the value the policy carries" in errors[key]
    resolve(mini_world, story(tmp_path, ADD_STORY.replace(old, new.replace("QTD", "Quarterly"))), BACKENDS)


READ_STORY = ADD_STORY.replace("fund: Gamma", "fund: Beta").replace("  find_hint:", "  kind: read\n  RECORD\n"
                                                                                    "  find_hint:")


@pytest.mark.parametrize(("record", "message"), [
    ("record: [ticker, weight]", None),
    ("record: [ticker, colour]", "the rows 'Positions' serves for {'fund': 'Beta', 'period': 'QTD'} have no column "
                                 "'colour' (columns: fund, period, ticker, weight)"),
])
def test_record_columns_are_checked_against_the_served_rows(mini_world, tmp_path, record, message):
    text = READ_STORY.replace("RECORD", record)
    if message is None:
        assert resolve(mini_world, story(tmp_path, text), BACKENDS).facts.record == ["ticker", "weight"]
        return
    assert errors_of(mini_world, tmp_path, text) == {"facts.record": message}


def test_a_record_of_a_cut_that_serves_nothing_is_refused(mini_world, tmp_path):
    text = READ_STORY.replace("RECORD", "record: [ticker]").replace("fund: Beta", "fund: Gamma")
    assert errors_of(mini_world, tmp_path, text) == {
        "facts.record": "'Positions' serves no rows for {'fund': 'Gamma', 'period': 'QTD'}: there is nothing to "
                        "record"}
