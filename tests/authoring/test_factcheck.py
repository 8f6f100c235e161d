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
        story(
            tmp_path,
            ADD_STORY.replace(
                "{skill: close-checklist}", "{skill: close-checklist, prompt: workspace_tool_usage}"
            ),
        )
    assert info.value.key == "facts.governance" and "skill, resource or prompt" in info.value.message


def test_a_workspace_prompt_is_checked_against_the_worlds_prompts(mini_world, tmp_path):
    errors = errors_of(mini_world, tmp_path, prompt_governed(ADD_STORY, "workspace_morning_brief"))
    assert errors == {
        "facts.governance.prompt": "unknown workspace prompt 'workspace_morning_brief' (world has: "
        "workspace_session_context, workspace_tool_usage)"
    }
    errors = errors_of(mini_world, tmp_path, prompt_governed(ADD_STORY, "workspace_tool_usage"))
    assert errors == {
        "facts.governance.prompt": "prompt 'workspace_tool_usage' has no closing phrase that occurs "
        "nowhere else in the world"
    }


def test_an_unplanted_prompt_grounds_on_its_closing_phrase(mini_world_path, tmp_path):
    from simulator import World

    (mini_world_path / "prompts" / "usage.md").write_text(
        "---\nname: workspace_tool_usage\ndescription: Usage.\n---\n1. Snapshot first.\n"
        "2. Close every session with the harbour-light checklist.\n"
    )
    gov = resolve(
        World.load(mini_world_path),
        story(tmp_path, prompt_governed(ADD_STORY, "workspace_tool_usage")),
        BACKENDS,
    ).governance
    assert (gov.kind, gov.ref, gov.phrase) == (
        "prompt",
        "workspace_tool_usage",
        "session with the harbour-light checklist",
    )
    assert gov.read_call() == ("get_workspace_prompt", {"name": "workspace_tool_usage"})
    assert gov.mention == "the workspace tool usage prompt"


TWO_TARGETS = ADD_STORY.replace(
    "    - {widget: Positions, app: Desk App, origin: Acme Data}\n",
    "    - {widget: Positions, app: Desk App, origin: Acme Data, params: {fund: Gamma, period: QTD}}\n"
    "    - {widget: Positions, app: Desk App, origin: Acme Data, params: SECOND}\n",
)


@pytest.mark.parametrize(
    ("second", "refused"),
    [("{fund: Beta, period: QTD}", False), ("{fund: Gamma, period: QTD}", True), ("{fund: Gamma}", True)],
)
def test_two_targets_of_one_widget_need_parameters_that_tell_them_apart(
    mini_world, tmp_path, second, refused
):
    text = TWO_TARGETS.replace("SECOND", second)
    if not refused:
        resolved = resolve(mini_world, story(tmp_path, text), BACKENDS)
        assert [t.params["fund"] for t in resolved.targets] == ["Gamma", "Beta"]
        return
    assert errors_of(mini_world, tmp_path, text) == {
        "facts.targets[1].params": "repeats facts.targets[0] "
        "('Positions') with parameters that do not tell the two apart; "
        "give each its own values"
    }


@pytest.mark.parametrize(
    ("meaning", "refused"),
    [
        ("the Gamma book", True),
        ("only the High alerts", False),
        ('"the Gamma book, quarter to date - QTD"', False),
        ("qtd for the Gamma book", False),
        ("quarter-to-date", False),
        ("the Delta book", False),
    ],
)
def test_a_policy_meaning_about_another_parameter_is_refused(mini_world, tmp_path, meaning, refused):
    text = ADD_STORY.replace("meaning: quarter-to-date", f"meaning: {meaning}")
    if not refused:
        resolve(mini_world, story(tmp_path, text), BACKENDS)
        return
    assert errors_of(mini_world, tmp_path, text) == {
        "facts.policy.carries": "the policy carries 'period' ('QTD') but its meaning names 'Gamma', a value of "
        "'fund'; carry 'fund', or say the period in the meaning"
    }


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ("dashboard: Desk Morning", "dashboard: Desk QTD Morning", "facts.dashboard"),
        ("  find_hint:", "  note: QTD Book Note\n  find_hint:", "facts.note"),
    ],
)
def test_a_carried_value_in_a_dashboard_or_note_name_is_refused(mini_world, tmp_path, old, new, key):
    errors = errors_of(mini_world, tmp_path, ADD_STORY.replace(old, new))
    assert list(errors) == [key] and "states 'QTD', the value the policy carries" in errors[key]
    resolve(mini_world, story(tmp_path, ADD_STORY.replace(old, new.replace("QTD", "Thursday"))), BACKENDS)


READ_STORY = ADD_STORY.replace("fund: Gamma", "fund: Beta").replace(
    "  find_hint:", "  kind: read\n  RECORD\n  find_hint:"
)


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ("record: [ticker, weight]", None),
        (
            "record: [ticker, colour]",
            "the rows 'Positions' serves for {'fund': 'Beta', 'period': 'QTD'} have no column "
            "'colour' (columns: fund, period, ticker, weight)",
        ),
    ],
)
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
        "record"
    }


# --- deeper levels: where a policy is defined, and the fact a Ground level sets ---------------------------

RULES = (
    "---\nuri: openbb://workspace/desk/rules\ntitle: Desk Rules\ndescription: The desk's rules.\n---\n"
    "# Desk rules\n\n- **The Thursday desk policy** sets the period to QTD: the quarter so far.\n"
    "- **The annual desk policy** sets the period to YTD: the year so far.\n"
)


def _world(path, *, rules=RULES, skill_steps=None, calendar=None):
    import json

    from simulator import World

    (path / "resources" / "rules.md").write_text(rules)
    if skill_steps is not None:
        (path / "skills" / "brief.json").write_text(
            json.dumps(
                {
                    "slug": "morning-brief",
                    "name": "Morning Brief",
                    "description": "Briefing.",
                    "content": skill_steps,
                    "planted": [
                        {
                            "phrase": "the desk reads the book over QTD",
                            "where": "the first step of its workflow (the window the book is read over)",
                        }
                    ],
                }
            )
        )
    if calendar is not None:
        (path / "resources" / "calendar.md").write_text(
            "---\nuri: openbb://workspace/desk/calendar\ntitle: Desk Calendar\ndescription: Windows.\n---\n"
            + calendar
        )
    return World.load(path)


# Another passage of the skill naming another option of the period, more often than the fact names its own: a
# Ground fact needs its passage, not only its document (an agent skimming the document must get it wrong).
RIVAL = "; the archive copy is read over MTD, and MTD copies go to audit."


def _policy(text, extra):
    return text.replace("meaning: quarter-to-date}", f"meaning: quarter-to-date, {extra}}}")


def _grounded(text, fact, sets="period", source="skill: morning-brief"):
    return text.replace(
        "governance: {skill: close-checklist}", f"governance: {{{source}, fact: '{fact}', sets: {sets}}}"
    )


def test_a_policy_resolves_in_the_resource_that_defines_it_next_to_a_rival(mini_world_path, tmp_path):
    world = _world(mini_world_path)
    resolved = resolve(
        world, story(tmp_path, _policy(ADD_STORY, "resource: openbb://workspace/desk/rules")), BACKENDS
    )
    doc = resolved.policy_doc
    assert (doc.kind, doc.ref, doc.title) == ("resource", "openbb://workspace/desk/rules", "Desk Rules")
    assert "annual desk policy" in doc.distractor


@pytest.mark.parametrize(
    "rules, message",
    [
        (
            RULES.replace("- **The annual desk policy** sets the period to YTD: the year so far.\n", ""),
            "no rival policy",
        ),
        (RULES.replace("sets the period to QTD", "sets the period to MTD"), "gives 'MTD' for 'period'"),
        (RULES.replace("Thursday desk policy", "Thursday book policy"), "is not defined in"),
    ],
)
def test_a_policy_resource_must_define_the_carried_value_next_to_a_rival(
    mini_world_path, tmp_path, rules, message
):
    world = _world(mini_world_path, rules=rules)
    errors = errors_of(world, tmp_path, _policy(ADD_STORY, "resource: openbb://workspace/desk/rules"))
    assert message in errors["facts.policy.resource"]


def test_a_policy_defined_in_a_note_carries_its_distractor(mini_world, tmp_path):
    extra = "note: Desk Shorthand, distractor: {phrase: the annual desk policy, value: YTD}"
    doc = resolve(mini_world, story(tmp_path, _policy(ADD_STORY, extra)), BACKENDS).policy_doc
    assert (doc.kind, doc.ref) == ("note", "Desk Shorthand")
    # the story's distractor sets the period's default (YTD), which a second view added without the period shows
    # unread: Derive's second view takes a rule the pipeline coins beside it, in the same note; the three rules
    # stand in an order the story draws (a note whose order follows the rules' names would tell them apart). The
    # period has three options, fewer than a note's NOTE_RULES, so one more coined rule sets an option already
    # there (not the story's), and the story's own rule is neither the note's first line nor its last
    lines = doc.text.splitlines()
    assert len(lines) == 4 and {
        "The Thursday desk policy sets the period to QTD.",
        "The annual desk policy sets the period to YTD.",
        "The interim policy sets the period to MTD.",
    } < set(lines)
    assert "The Thursday desk policy sets the period to QTD." in lines[1:-1]
    assert sum(line.endswith("to QTD.") for line in lines) == 1
    assert doc.rival == ("the interim policy", "MTD")
    errors = errors_of(
        mini_world, tmp_path, _policy(ADD_STORY, extra.replace("Desk Shorthand", "QTD Shorthand"))
    )
    assert "states 'QTD'" in errors["facts.policy.note"]
    errors = errors_of(mini_world, tmp_path, _policy(ADD_STORY, extra.replace("value: YTD", "value: QTD")))
    assert "equals the value" in errors["facts.policy.distractor.value"]
    with pytest.raises(SourceError) as info:
        story(tmp_path, _policy(ADD_STORY, "note: Desk Shorthand"))
    assert info.value.key == "facts.policy" and "needs a distractor" in info.value.message


def test_a_ground_fact_sets_a_parameter_from_the_passage_that_holds_it(mini_world_path, tmp_path):
    world = _world(
        mini_world_path, skill_steps="1. Open the book; the desk reads the book over QTD.\n2. Sign." + RIVAL
    )
    gov = resolve(
        world, story(tmp_path, _grounded(ADD_STORY, "the desk reads the book over QTD")), BACKENDS
    ).governance
    assert (gov.sets, gov.value, gov.source) == ("period", "QTD", "skill:morning-brief")
    assert (gov.position, gov.topic) == ("the first step of its workflow", "the window the book is read over")


def test_a_ground_fact_is_followed_through_the_document_the_source_refers_to(mini_world_path, tmp_path):
    world = _world(
        mini_world_path,
        skill_steps="1. Read the book over its window (see openbb://workspace/desk/calendar).\n2. Sign."
        + RIVAL,
        calendar="| Desk | Window |\n|---|---|\n| Gamma | the Gamma book is read on QTD |\n",
    )
    gov = resolve(
        world, story(tmp_path, _grounded(ADD_STORY, "the Gamma book is read on QTD")), BACKENDS
    ).governance
    assert gov.read_call() == ("get_skill_content", {"slug": "morning-brief"})
    assert gov.hop.uri == "openbb://workspace/desk/calendar" and gov.position == "step 1 of its workflow"
    assert gov.source == "resource:openbb://workspace/desk/calendar" and gov.value == "QTD"


@pytest.mark.parametrize(
    "steps, fact, change, key, message",
    [
        (
            "1. The desk reads the book over QTD.",
            "the desk reads the book over YTD",
            None,
            "facts.governance.fact",
            "neither in skill:morning-brief",
        ),
        (
            "1. The desk reads the book over MTD.",
            "the desk reads the book over MTD",
            None,
            "facts.governance.fact",
            "states 'MTD', but the story sets period='QTD'",
        ),
        (
            "1. The desk reads the book over YTD.",
            "the desk reads the book over YTD",
            ("period: QTD", "period: YTD"),
            "facts.governance.sets",
            "is the default of 'period'",
        ),
        (
            "1. The desk reads the book over QTD.",
            "the desk reads the book over QTD",
            ("sets: period", "sets: fund"),
            "facts.governance.fact",
            "states no option of it",
        ),
        (
            "1. The desk reads the book over QTD.",
            "the desk reads the book over QTD",
            ("sets: period", "sets: colour"),
            "facts.governance.sets",
            "neither 'tab' nor a graded parameter",
        ),
    ],
)
def test_a_ground_fact_that_would_not_need_reading_is_refused(
    mini_world_path, tmp_path, steps, fact, change, key, message
):
    world = _world(mini_world_path, skill_steps=steps + "\n2. Sign.")
    text = _grounded(ADD_STORY, fact)
    if change is not None:
        text = text.replace(*change)
    errors = errors_of(world, tmp_path, text)
    assert message in errors[key], errors


@pytest.mark.parametrize(
    "steps, fact, sets, message",
    [
        (
            "1. Open the book; the desk reads the book over QTD.\n2. Sign.",
            "the desk reads the book over QTD",
            "period",
            "names no option of 'period' but 'QTD'",
        ),
        (
            "1. Open the book; the desk reads the book over QTD.\n2. Sign; the archive reads QTD too, and MTD.",
            "the desk reads the book over QTD",
            "period",
            "'QTD' is the option of 'period' skill:morning-brief names most",
        ),
        (
            '1. Open the book; the board keeps a tab titled "Book Check".\n2. Go; the archive tab is "Archive".',
            'the board keeps a tab titled "Book Check"',
            "tab",
            "the first tab title skill:morning-brief quotes is 'Book Check'",
        ),
    ],
)
def test_a_ground_fact_its_document_gives_away_is_refused(
    mini_world_path, tmp_path, steps, fact, sets, message
):
    """An agent that reads the named document but never the passage the request points to (the battery's
    source skimmer: the option the text names most, the first tab title it quotes) must get the fact wrong.
    `check` says so as an error; authoring goes on, and its shortcuts gate refuses the level the skimmer
    passes."""
    world = _world(mini_world_path, skill_steps=steps)
    resolved = resolve(world, story(tmp_path, _grounded(ADD_STORY, fact, sets)), BACKENDS)
    errors = {e.key: e.message for e in resolved.ladder_errors}
    assert message in errors["facts.governance.fact"], errors
    assert "source skimmer passes it" in errors["facts.governance.fact"]


def test_a_ground_fact_found_elsewhere_in_the_world_is_refused(mini_world_path, tmp_path):
    world = _world(
        mini_world_path,
        skill_steps="1. The desk reads the book over QTD.\n2. Sign.",
        calendar="Note: the desk reads the book over QTD.\n",
    )
    errors = errors_of(world, tmp_path, _grounded(ADD_STORY, "the desk reads the book over QTD"))
    assert "also occurs in resources/calendar.md" in errors["facts.governance.fact"]


def test_a_repair_grounds_only_a_parameter_it_seeds_wrong(mini_world_path, tmp_path):
    from tests.authoring.conftest import REPAIR_STORY

    world = _world(
        mini_world_path,
        skill_steps="1. Triage alerts; the desk only works Low alerts.\n2. Sign; High alerts go to the head, "
        "and each High one is logged.",
    )
    text = REPAIR_STORY.replace(
        "governance: {skill: morning-brief}",
        "governance: {skill: morning-brief, fact: 'the desk only works Low alerts', sets: severity}",
    )
    errors = errors_of(world, tmp_path, text)
    assert "seed it wrong" in errors["facts.governance.sets"]
    fixed = text.replace("seeded_wrong: {status: Open}", "seeded_wrong: {status: Open, severity: High}")
    assert resolve(world, story(tmp_path, fixed), BACKENDS).governance.value == "Low"


def test_a_ground_fact_can_name_the_tab(mini_world_path, tmp_path):
    world = _world(
        mini_world_path,
        skill_steps='The archive keeps a tab titled "Archive".\n'
        '1. Open the book; the board keeps a tab titled "Book Check".\n2. Go.',
    )
    gov = resolve(
        world,
        story(tmp_path, _grounded(ADD_STORY, 'the board keeps a tab titled "Book Check"', "tab")),
        BACKENDS,
    ).governance
    assert (gov.sets, gov.value) == ("tab", "Book Check")


def test_two_stories_of_a_persona_never_ground_in_the_same_fact(tmp_path):
    from authoring.sources import identical_facts

    one = story(tmp_path, _grounded(ADD_STORY, "the desk reads the book over QTD"), "one.md")
    two = story(
        tmp_path, _grounded(ADD_STORY.replace("Gamma", "Beta"), "the desk reads the book over QTD"), "two.md"
    )
    (error,) = identical_facts([one, two])
    assert error.key == "facts.governance.fact" and "same fact" in error.message
