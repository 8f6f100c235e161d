"""The voice as the persona declares it (issue 22, item 3): every declared phrase is said somewhere in the
persona's requests or `check` says which one never is and why; an alias stands for its name at a later mention,
never inside or beside it; a story's own deadline takes its levels and the persona's deadlines move to the other
stories' requests."""

from __future__ import annotations

from authoring.checks import check_persona
from authoring.roles.author import rule_drafts
from authoring.roles.author.phrasebook import LEVELS_PER_STORY, VoiceSlots
from authoring.sources import Voice
from authoring.voicecheck import said_alone, unsaid_phrases
from certify import prompt_faults
from simulator import DEFAULT_WORLD, World
from tests.authoring.conftest import PERSONA
from tests.conftest import ROOT

BACKENDS = ["acme-x", "extra"]


def _persona_with(sources, voice_lines: str) -> None:
    text = PERSONA.replace("  tone: terse\n", voice_lines + "  tone: terse\n")
    (sources / "personas" / "desk_head.md").write_text(text)


def test_a_declared_phrase_no_request_says_is_a_check_warning_naming_its_field(sources, mini_world):
    # every request names the origin Acme Data once; Gamma the add story's twin shows again (its alias is said
    # there); YTD no story sets, MTD only a twin shows, QTD the add story sets
    _persona_with(
        sources,
        '  aliases: {Acme Data: "Acme", Gamma: "the gamma book", Nowhere Fund: "nowhere"}\n'
        '  period_names: {MTD: "the month", YTD: "the year", QTD: "the quarter so far"}\n',
    )
    report = check_persona(sources, "desk_head", mini_world, BACKENDS, ladder=False)
    voiced = {w.message.split(":")[0]: w for w in report.warnings if w.message.startswith("voice.")}
    assert set(voiced) == {
        "voice.aliases.Acme Data",
        "voice.aliases.Nowhere Fund",
        "voice.period_names.MTD",
        "voice.period_names.YTD",
    }
    assert all(w.file.endswith("personas/desk_head.md") for w in voiced.values())
    assert "no request mentions it a second time" in voiced["voice.aliases.Acme Data"].message
    assert "no request names it" in voiced["voice.aliases.Nowhere Fund"].message
    assert "no story of the persona sets YTD" in voiced["voice.period_names.YTD"].message
    assert "only ever hidden or described" in voiced["voice.period_names.MTD"].message
    # the period a story sets is glossed at the story's Execute level; the twin's Gamma goes by its alias
    prompts = {t.id: t.prompt for t in rule_drafts(mini_world, report)}
    assert "QTD (the quarter so far)" in prompts["morning_positions_level0"]
    assert "fund the gamma book" in prompts["morning_positions_level3"]


def test_a_persona_that_opted_out_draws_no_phrase_warning(sources, mini_world):
    _persona_with(sources, '  aliases: {Nowhere Fund: "nowhere"}\n  every_phrase: false\n')
    report = check_persona(sources, "desk_head", mini_world, BACKENDS, ladder=False)
    assert [w for w in report.warnings if w.message.startswith("voice.")] == []


def test_an_alias_is_said_on_its_own_not_as_a_piece_of_its_name():
    assert not said_alone("Keel", "Keel Core Equity", "Put it on fund Keel Core Equity.")
    assert said_alone("Keel", "Keel Core Equity", "Keel Core Equity first; the other one on Keel stays.")
    # a dashboard's name holding the alias's words is not the alias; a sentence opening with it is
    assert not said_alone("flow credit", "Credit Flow", "On the Flow Credit Limits board.")
    assert said_alone("flow credit", "Credit Flow", "Flow credit went over a limit.")
    voice = Voice(aliases={"Keel Core Equity": "Keel"})
    assert [
        k for k, _ in unsaid_phrases(voice, ["fund Keel Core Equity", "Keel Core Equity twice: Keel"])
    ] == []
    assert [k for k, _ in unsaid_phrases(voice, ["fund Keel Core Equity"])] == [
        "voice.aliases.Keel Core Equity"
    ]


def test_a_storys_own_deadline_takes_its_levels_and_the_personas_move_to_the_other_stories():
    voice = Voice(deadlines=["D1.", "D2.", "D3.", "D4.", "D5."], openers=["O1.", "O2."], signoffs=["S1."])
    own = {1: "Before the 07:00 handover."}  # the second story names its own deadline
    others = [s for s in range(4) if s not in own]
    said = []
    for story in range(4):
        for level in range(LEVELS_PER_STORY):
            slot = (
                (others.index(story) * LEVELS_PER_STORY + level, len(others) * LEVELS_PER_STORY)
                if story in others
                else None
            )
            slots = VoiceSlots.rotation(voice, story * LEVELS_PER_STORY + level, own.get(story), slot)
            said.append((story, slots.deadline))
    assert {d for s, d in said if s == 1} == {"Before the 07:00 handover."}
    persona_deadlines = [d for s, d in said if s != 1 and d]
    assert sorted(persona_deadlines) == voice.deadlines, "each of the persona's deadlines said once"


def test_the_rotation_spreads_over_the_personas_own_number_of_requests():
    voice = Voice(openers=["O1.", "O2.", "O3."], signoffs=["S1.", "S2."], deadlines=["D1.", "D2."])
    slots = [VoiceSlots.rotation(voice, p, requests=10) for p in range(10)]  # a persona of two stories
    said = {x for s in slots for x in (s.opener, s.signoff, s.deadline) if x}
    assert said == {"O1.", "O2.", "O3.", "S1.", "S2.", "D1.", "D2."}


def test_a_twin_from_an_aliased_app_is_said_by_the_alias_and_reads_well():
    world = World.load(DEFAULT_WORLD)
    report = check_persona(ROOT, "compliance_officer", world)
    tasks = {t.id: t for t in rule_drafts(world, report)}
    for level in (3, 4):
        task = tasks[f"escalated_surveillance_cases_level{level}"]
        # (the level works on a stand-in of the target Find hides, Case Files: its twin is the stand-in's)
        worked = task.meta.stands_in.name if task.meta and task.meta.stands_in else "Case Files"
        assert "Surveillance Watchtower" in task.prompt and f"{worked} from the watchtower" in task.prompt
        assert prompt_faults(world, task) == []


def test_a_deadline_whose_slot_is_a_derive_request_is_said_at_the_storys_execute_instead():
    # Derive names two rules and is held to the source's length: the persona's deadline moves two requests back,
    # to the same story's Execute (which says none of its own), and every deadline is still said once
    for count in range(1, 9):
        voice = Voice(deadlines=[f"D{i}." for i in range(count)], openers=["O1."], signoffs=["S1."])
        slots = [VoiceSlots.rotation(voice, p) for p in range(4 * LEVELS_PER_STORY)]
        said = [s.deadline for s in slots if s.deadline]
        assert sorted(said) == sorted(voice.deadlines), count
        # (only where the Execute request already says one: seven deadlines or more over twenty requests)
        derive = [p for p, s in enumerate(slots) if p % LEVELS_PER_STORY == 2 and s.deadline]
        assert all(slots[p - 2].deadline for p in derive), count
        assert derive == [] or count >= 7, count
