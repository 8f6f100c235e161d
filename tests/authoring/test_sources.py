"""Sources at the edge: personas, stories and facts are checked before anything is authored."""

from __future__ import annotations

import pytest

from authoring.factcheck import FactErrors, resolve
from authoring.roles.fixer import FixResult, RuleFixer, append_lesson
from authoring.sources import SourceError, load_persona, load_sources, load_story
from authoring.variety import jaccard, same_level_similarity
from certify.calibration import Defect
from certify.trial import Trial
from tests.authoring.conftest import ADD_STORY


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_persona_voice_and_title(sources):
    persona, stories = load_sources(sources, "desk_head")
    assert persona.title == "Desk head" and persona.voice.tone == "terse"
    assert [s.slug for s in stories] == ["morning_positions", "risk_repair"]


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("---\nvoice:\n  openers: [a]\n  shouting: yes\n---\n# Persona: X\nbody", "voice.shouting"),
        ("---\nmood: calm\n---\n# Persona: X\nbody", "mood"),
        ("---\nvoice: [\n---\n# X", "front matter"),
    ],
)
def test_bad_personas_name_the_key(tmp_path, text, key):
    write(tmp_path / "personas" / "p.md", text)
    with pytest.raises(SourceError) as info:
        load_persona(tmp_path, "p")
    assert info.value.key == key and info.value.file.endswith("p.md")


def test_unsafe_names_are_refused(tmp_path):
    with pytest.raises(SourceError, match="must be lower-case"):
        load_persona(tmp_path, "../etc")
    bad = write(tmp_path / "stories" / "p" / "Bad Name.md", ADD_STORY)
    with pytest.raises(SourceError, match="story file name"):
        load_story(bad, "p")


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ("dashboard: Desk Morning", "dashbord: Desk Morning", "facts.dashboard"),
        ("  find_hint: the holdings book\n", "", "facts.find_hint"),
        (
            "  find_hint: the holdings book\n",
            "  find_hint: the holdings book\n  colour: red\n",
            "facts.colour",
        ),
        ("governance: {skill: close-checklist}", "governance: {skill: a, resource: b}", "facts.governance"),
        (
            "  find_hint: the holdings book\n",
            "  find_hint: the holdings book\n  why: the desk asks.\n",
            "facts.why",
        ),
        (
            "  find_hint: the holdings book\n",
            "  find_hint: the holdings book\n  why: The desk asks\n",
            "facts.why",
        ),
        (
            "  find_hint: the holdings book\n",
            '  find_hint: the holdings book\n  deadline: " "\n',
            "facts.deadline",
        ),
    ],
)
def test_bad_story_front_matter(tmp_path, old, new, key):
    path = write(tmp_path / "s.md", ADD_STORY.replace(old, new))
    with pytest.raises(SourceError) as info:
        load_story(path, "p")
    assert info.value.key == key


@pytest.mark.parametrize(
    ("old", "new", "key", "message"),
    [
        (
            "{widget: Positions, app: Desk App",
            "{widget: Positions, app: Other App",
            "facts.targets[0].app",
            "no app named 'Other App'",
        ),
        (
            "{widget: Positions,",
            "{widget: Holdings,",
            "facts.targets[0].widget",
            "no widget named 'Holdings'",
        ),
        ("fund: Gamma", "fund: Omega", "facts.params.fund", "not among the declared options"),
        ("skill: close-checklist", "skill: ghost-skill", "facts.governance.skill", "unknown skill"),
        ("carries: period", "carries: colour", "facts.policy.carries", "not a graded parameter"),
        ("origin: Acme Data}", "origin: Nobody}", "facts.targets[0].origin", "no connected backend"),
        (
            "  find_hint: the holdings book\n",
            "  find_hint: the holdings book\n  why: The desk wants it QTD.\n",
            "facts.why",
            "says 'QTD', which a level hides",
        ),
        (
            "  find_hint: the holdings book\n",
            "  find_hint: the holdings book\n  why: The desk reads Positions first.\n",
            "facts.why",
            "names 'Positions', which the Find level hides",
        ),
        (
            "  find_hint: the holdings book\n",
            "  find_hint: the holdings book\n  board: [Positons]\n",
            "facts.board[0]",
            "serves no widget named 'Positons'",
        ),
    ],
)
def test_facts_are_checked_against_the_world(mini_world, tmp_path, old, new, key, message):
    path = write(tmp_path / "morning.md", ADD_STORY.replace(old, new))
    with pytest.raises(FactErrors) as info:
        resolve(mini_world, load_story(path, "p"), ["acme-x", "extra"])
    errors = {e.key: e.message for e in info.value.errors}
    assert key in errors and message in errors[key]
    assert all(e.file == str(path) for e in info.value.errors)


def test_resolution_and_warnings(mini_world, tmp_path):
    story = load_story(write(tmp_path / "m.md", ADD_STORY), "p")
    resolved = resolve(mini_world, story, ["acme-x", "extra"])
    assert resolved.kind == "add" and resolved.carried_value == "QTD"
    # 'the holdings book' is not a description by content in the mini world (nothing Positions serves tells it
    # apart from Book Summary): what was a `check` error before Find by pointer is now the pipeline's own way
    # out, said as the one warning (the note it plants, and how the request refers to its entry)
    pointer = resolved.find_pointer
    assert pointer is not None and resolved.ladder_errors == []
    [warning] = resolved.warnings
    assert warning.startswith("the find hint 'the holdings book' is not a description by content")
    assert f"plants a note '{pointer.note}'" in warning and f"'{pointer.references()[0]}'" in warning
    assert (
        resolved.governance.phrase == "amber ledger stamp"
        and resolved.governance.source == "skill:close-checklist"
    )
    lazy = load_story(write(tmp_path / "l.md", ADD_STORY.replace("period: QTD", "period: YTD")), "p")
    assert any("default" in w for w in resolve(mini_world, lazy, ["acme-x", "extra"]).warnings)


def test_variety_metric():
    assert jaccard("add the book view now please", "add the book view now please") == 1.0
    assert jaccard("one two three four", "five six seven eight") == 0.0
    scores = same_level_similarity(
        [
            ("a", "level0", "put the alpha view up now"),
            ("b", "level0", "put the alpha view up later"),
            ("a", "level1", "x y z"),
        ]
    )
    assert 0 < scores["level0"] < 1 and scores["all"] == scores["level0"]


def test_rule_fixer_repairs_a_short_budget_and_escalates_the_rest(tmp_path):
    task = {"id": "s_level0", "difficulty": "level0", "eval": {"required_tools": [{}] * 4, "max_turns": 3}}
    defect = Defect(
        task_id="s_level0", level="level0", fingerprint=["missing_widget:x"], attempts=2, repeats=[0, 1]
    )
    ran_out = [
        Trial(task_id="s_level0", level="level0", agent="h", repeat=r, passed=False, ended_by="max_turns")
        for r in range(2)
    ]
    fixed = RuleFixer().repair(task, defect, ran_out, None)
    assert (
        fixed.task["eval"]["max_turns"] == 7
        and fixed.skill == "task-author"
        and task["eval"]["max_turns"] == 3
    )
    stopped = [t.model_copy(update={"ended_by": "agent_stopped"}) for t in ran_out]
    escalated = RuleFixer().repair(task, defect, stopped, None)
    assert (
        isinstance(escalated, FixResult)
        and escalated.task is None
        and "no known repair" in escalated.escalate
    )
    path = append_lesson(tmp_path, "task-author", "s", "level0", fixed.lesson)
    text = path.read_text()
    assert "## Lessons" in text and "s/level0: a turn budget below" in text
    append_lesson(tmp_path, "task-author", "s", "level0", fixed.lesson)
    assert path.read_text().count("a turn budget below") == 1


def test_a_voice_verb_the_agents_would_misread_is_an_error_naming_it(tmp_path):
    """ "put right" reads as "put" (an addition) and "take down" as nothing: the ladder agents would add a
    widget instead of repairing one, so the persona is refused before authoring, naming the verb."""
    from authoring.sources import SourceError, load_persona

    (tmp_path / "personas").mkdir()
    path = tmp_path / "personas" / "treasurer.md"
    for verbs, key, meaning in (
        ('repair_verbs: ["fix", "put right"]', "voice.repair_verbs[1]", "'put right' reads as an addition"),
        ('read_verbs: ["take down"]', "voice.read_verbs[0]", "'take down' reads as no action"),
        ('add_verbs: ["add", "correct"]', "voice.add_verbs[1]", "'correct' reads as a repair"),
    ):
        path.write_text(f"---\nvoice:\n  {verbs}\n---\n# Persona: Treasurer\n\nRuns the cash ladder.\n")
        with pytest.raises(SourceError) as info:
            load_persona(tmp_path, "treasurer")
        assert info.value.key == key and meaning in info.value.message
        assert "use a verb they act on" in info.value.message


def test_a_rival_value_every_request_says_gets_no_second_view(tmp_path):
    """Derive's second view hides the rival rule's value: a story whose why ("The credit PM …") or another
    stated value (the fund "Breakwater Credit") says it as a word leaves nothing hidden there, so `rival_said`
    names the field and Derive asks for no second view (the leak gate would refuse every draw)."""
    from pathlib import Path

    from authoring.factcheck import rival_said

    path = (
        Path(__file__).parent
        / "fixtures"
        / "outsider_round3_revised"
        / "stories"
        / "rebalance_analyst"
        / "breakwater_risk_budget.md"
    )
    story = load_story(path, "rebalance_analyst")
    assert rival_said(story, "Credit", "asset_class") == "facts.why"
    quiet = load_story(
        write(tmp_path / "b.md", path.read_text().replace("The credit PM wants", "The PM wants")),
        "rebalance_analyst",
    )
    assert rival_said(quiet, "Credit", "asset_class") == "facts.params.fund"  # "Breakwater Credit"
    assert rival_said(quiet, "Equity", "asset_class") is None
    assert rival_said(quiet, "Breakwater Credit", "fund") is None  # the carried parameter's own value
