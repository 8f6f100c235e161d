"""The deeper levels the rule author writes for the shipped stories on the default world: Derive resolves in the
document that defines its policy, Ground sets a parameter or the tab's title from its fact (through a reference
when the source points elsewhere) and repairs a second view only when the story names it, Compose uses what it builds, and the requests read
well, carry the persona's own words and vary."""

from __future__ import annotations

import dataclasses
import functools

import pytest

from authoring.checks import check_persona
from authoring.factcheck import owned_sentences
from authoring.judged import draft_audit
from authoring.roles.author import AuthorContext, RuleAuthor, own_deadlines
from authoring.taskset import STANDARD_DEFAULTS
from authoring.variety import masks_for, rotation
from certify.gates import certify_task, prompt_faults
from certify.task import Task, parse_task
from simulator import DEFAULT_WORLD, World
from tests.conftest import ROOT

PERSONAS = sorted(p.stem for p in (ROOT / "personas").glob("*.md"))


@functools.lru_cache(maxsize=1)
def _world() -> World:
    return World.load(DEFAULT_WORLD)


@functools.lru_cache(maxsize=8)
def _persona(persona: str):
    return check_persona(ROOT, persona, _world())


@functools.lru_cache(maxsize=256)
def draft(persona: str, story: str, level: int) -> Task:
    world = _world()
    report = _persona(persona)
    resolved = next(r for r in report.resolved if r.story.slug == story)
    baseline = next(b for b in sorted(world.baselines) if b.endswith("workspace-a"))
    ctx = AuthorContext(
        world,
        report.source,
        resolved,
        baseline,
        list(world.default_backends),
        sorted(world.skills),
        tuple(r.story.slug for r in report.resolved),
        STANDARD_DEFAULTS,
        own_deadlines(report.resolved),
    )
    raw = RuleAuthor().draft(ctx, level, [], []).task
    return parse_task(raw, f"{raw['id']}.json", STANDARD_DEFAULTS)


def failed_gates(task: Task) -> dict[str, str]:
    cert = certify_task(
        _world(), task, f"{task.id}.json", judge_audit=draft_audit(_world(), task, f"{task.id}.json")
    )
    return {name: g.detail for name, g in cert.gates.items() if not g.ok}


def tools(task: Task, name: str):
    return [s for s in task.eval.required_tools if s.tool == name]


def test_derive_seeds_the_note_that_defines_the_policy_next_to_its_rival():
    task = draft("trading_desk", "flow_credit_liquidity_limit", 2)
    (note,) = task.setup.initial_state.dashboard.generated_widgets
    lines = note.data.splitlines()
    assert note.name == "Desk Shorthand" and {
        "The exit-horizon limit sets the limit type to Liquidity.",
        "The gross-book limit sets the limit type to Leverage.",
    } < set(lines)
    # two further coined rules on other options of the limit type (NOTE_RULES), none of them asked for
    assert len(lines) == 4 and all(" limit sets the limit type to " in line for line in lines)
    assert "exit-horizon limit" in task.prompt and "Liquidity" not in task.prompt
    assert failed_gates(task) == {}


def test_derive_reads_the_glossary_that_defines_the_policy():
    task = draft("trading_desk", "listed_pulled_orders", 2)
    reads = [s.args["uri"] for s in tools(task, "read_workspace_resource")]
    assert reads == ["openbb://workspace/app-builder/index", "openbb://workspace/conventions/execution-desks"]
    assert all(s.optional for s in tools(task, "read_workspace_resource"))


def test_ground_hides_the_value_its_fact_sets_and_adds_no_side_repair_the_story_does_not_ask_for():
    task = draft("trading_desk", "basket_desk_shortfall", 3)
    assert "Program Trading" not in task.prompt and "basket cost is always booked" not in task.prompt
    assert [(h.kind, h.value) for h in task.meta.hidden] == [
        ("planted", "basket cost is always booked to Program Trading"),
        ("carried", "Program Trading"),
    ]
    (read,) = tools(task, "get_skill_content")
    assert read.args == {"slug": "execution-quality-review"} and read.graded_args == ["slug"]
    assert tools(task, "update_widget") == [], "a read story's Ground repairs nothing the story does not name"
    notes = [g.name_contains for g in task.eval.required_generated_widgets]
    assert not any("Governance" in n for n in notes), "a fact that sets a value is not copied into a note"
    widgets = {(w.widget_id, w.data_args.get("desk")) for w in task.eval.required_widgets if w.widget_id}
    assert ("cost_liquidity_lab_cost_shortfall_by_order", "Program Trading") in widgets
    assert (
        "cost_liquidity_lab_cost_shortfall_by_order",
        "Cash Equities",
    ) in widgets  # the twin, on another desk
    assert failed_gates(task) == {}


def test_ground_follows_the_reference_of_its_source():
    task = draft("client_advisor", "brennan_calendar_year_returns", 3)
    reads = [
        (s.tool, s.args, s.graded_args)
        for s in task.eval.required_tools
        if s.tool in ("get_skill_content", "read_workspace_resource") and not s.optional
    ]
    assert reads == [
        ("get_skill_content", {"slug": "client-review-prep"}, ["slug"]),
        (
            "read_workspace_resource",
            {"uri": "openbb://workspace/handbooks/client-reporting-calendar"},
            ["uri"],
        ),
    ]
    assert task.meta.hidden[0].source == "resource:openbb://workspace/handbooks/client-reporting-calendar"
    assert (
        "step 2 of the Client Review Prep skill's workflow" in task.prompt
        or "step 2 of its workflow" in task.prompt
    )


def test_ground_retitles_the_tab_and_compose_titles_its_app_tab_alike():
    three = draft("trading_desk", "listed_pulled_orders", 3)
    (rename,) = tools(three, "manage_navigation_bar")
    assert (
        rename.args == {"operation": "rename_tabs", "rename_map": {"orders": "Pulled Clips"}}
        and rename.outcome
    )
    assert three.eval.required_tab_names == ["Pulled Clips"] and "Pulled Clips" not in three.prompt
    assert "Orders tab" in three.prompt
    four = draft("trading_desk", "listed_pulled_orders", 4)
    (app,) = four.eval.required_app_defs
    assert app.tab_names_include == ["Pulled Clips"]
    # the retitle is asked before the build that titles the app's tab the same way (no forward reference)
    retitle = four.prompt.index("Orders tab")
    alike = max(
        four.prompt.find("titled like the board's tab"), four.prompt.find("named after the board's tab")
    )
    assert 0 <= retitle < alike
    assert failed_gates(four) == {}


def test_compose_keys_the_table_it_builds_on_the_grounded_value():
    task = draft("trading_desk", "basket_desk_shortfall", 4)
    (backend,) = tools(task, "manage_backends")
    (table,) = backend.args["widgets_json"].values()
    assert table["params"][0]["paramName"] == "desk"
    built = next(w for w in task.eval.required_widgets if w.origin == "Best Ex Service")
    assert built.data_args == {"desk": "Program Trading"}
    assert task.eval.required_widget_defs[0].params_include == [{"paramName": "desk"}]
    assert "keyed" in task.prompt and "Program Trading" not in task.prompt


def test_a_lived_repair_names_every_value_left_wrong():
    task = draft("trading_desk", "flow_credit_liquidity_limit", 3)
    assert "Program Trading" in task.prompt and "Leverage" in task.prompt
    (repair,) = tools(task, "update_widget")
    assert repair.args["data_args"] == {"desk": "Credit Flow", "limit_type": "Liquidity"}


def _with_facts(persona: str, story: str, level: int, **facts) -> Task:
    """The level of a shipped story with some facts changed (not cached: the story differs)."""
    world = _world()
    report = _persona(persona)
    resolved = next(r for r in report.resolved if r.story.slug == story)
    changed = resolved.story.model_copy(update={"facts": resolved.story.facts.model_copy(update=facts)})
    ctx = AuthorContext(
        world,
        report.source,
        dataclasses.replace(resolved, story=changed),
        next(b for b in sorted(world.baselines) if b.endswith("workspace-a")),
        list(world.default_backends),
        sorted(world.skills),
        tuple(r.story.slug for r in report.resolved),
        STANDARD_DEFAULTS,
        own_deadlines(report.resolved),
    )
    raw = RuleAuthor().draft(ctx, level, [], []).task
    return parse_task(raw, f"{raw['id']}.json", STANDARD_DEFAULTS)


def test_a_view_the_story_lists_on_its_board_is_the_furniture_and_its_side_repair_is_asked_for():
    task = _with_facts("trading_desk", "basket_desk_shortfall", 3, board=["Venue Mix"])
    seeded = {w.widget_id for w in task.setup.initial_state.dashboard.widgets}
    assert "cost_liquidity_lab_venues_venue_mix" in seeded
    (fix,) = tools(task, "update_widget")
    assert fix.outcome and "Venue Mix" in task.prompt
    assert draft("trading_desk", "basket_desk_shortfall", 3).setup.initial_state.dashboard.widgets != (
        task.setup.initial_state.dashboard.widgets
    )


def test_every_level_says_the_storys_purpose_and_the_storys_own_deadline():
    own = "Before the 3:50 imbalance print."
    tasks = [_with_facts("trading_desk", "basket_desk_shortfall", lv, deadline=own) for lv in range(5)]
    why = _persona("trading_desk").resolved[0].story.facts.why
    for task in tasks:
        assert own in task.prompt
    for level in range(5):
        assert why in draft("trading_desk", _persona("trading_desk").resolved[0].story.slug, level).prompt


@pytest.mark.parametrize("persona", PERSONAS)
def test_the_shipped_requests_read_well_and_speak_in_the_persona(persona):
    report = _persona(persona)
    voice = report.source.voice
    tasks = [draft(persona, r.story.slug, level) for r in report.resolved for level in range(5)]
    faults = {t.id: [str(f) for f in prompt_faults(_world(), t)] for t in tasks}
    assert {k: v for k, v in faults.items() if v} == {}
    said = " ".join(t.prompt for t in tasks)
    declared = [p for p in [*voice.openers, *voice.signoffs, *voice.deadlines] if p.strip()]
    assert [p for p in declared if p not in said] == [], "every declared phrase is said in the persona's 20"
    for value, alias in voice.aliases.items():
        assert f"{value} ({alias})" not in said and f"{value} — {alias} —" not in said, "no alias bolted on"
    personal = [*voice.aliases.values(), *voice.period_names.values(), *voice.note_words]
    assert sum(said.count(w) for w in personal) >= 5
    verbs = [*voice.add_verbs, *voice.read_verbs, *voice.repair_verbs]
    assert sum(1 for t in tasks if any(v in t.prompt.lower() for v in verbs)) >= 0.75 * len(tasks)


def test_the_taskset_varies_by_skeleton_and_clause():
    tasks = [
        draft(p, r.story.slug, level) for p in PERSONAS for r in _persona(p).resolved for level in range(5)
    ]
    report = rotation(
        [(t.meta.story, t.difficulty, t.prompt) for t in tasks],
        masks_for(
            _world(),
            tasks,
            [_persona(p).source.voice for p in PERSONAS],
            owned_sentences(r for p in PERSONAS for r in _persona(p).resolved),
        ),
    )
    assert report.ok, report.summary()
    assert report.prompts == 120


def test_phrasing_is_deterministic():
    assert (
        draft.__wrapped__("research_analyst", "pellston_bear_case", 3).prompt
        == draft("research_analyst", "pellston_bear_case", 3).prompt
    )


def test_the_authors_default_reference_agent_is_the_capability_ladder():
    from typer.main import get_command

    from authoring.cli import app

    author_cmd = get_command(app).commands["author"]
    assert next(p for p in author_cmd.params if p.name == "reference_agent").default == "ladder"


@pytest.mark.parametrize("persona", PERSONAS)
def test_a_note_on_a_two_option_parameter_defines_each_option_as_often_and_hides_the_asked_rule_inside(
    persona,
):
    """A parameter with two options cannot fill the note with other values: the note defines further coined rules
    on the two options, as many of each, and the story's rule stands neither first nor last (a reader of the
    note's first or last line must not be right in both counterfactual copies)."""
    from authoring.factcheck.policy import NOTE_RULES, policy_line, ruled_note

    param = {
        "paramName": "scenario",
        "label": "Scenario",
        "options": [{"value": "Base"}, {"value": "Stress"}],
    }
    for resolved in _persona(persona).resolved:
        story = resolved.story
        own = ("the downside case", "Stress")
        lines = ruled_note(_world(), story, param, [own, ("the central case", "Base")]).splitlines()
        assert len(lines) == NOTE_RULES, (story.slug, lines)
        assert sum(line.endswith("to Stress.") for line in lines) == sum(
            line.endswith("to Base.") for line in lines
        )
        assert policy_line(own[0], "scenario", own[1]) in lines[1:-1], (story.slug, lines)
